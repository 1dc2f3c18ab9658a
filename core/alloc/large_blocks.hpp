// Large blocks on huge pages (private; linked into shardflow's executables, not into its libraries).
//
// A simulation of 20,000 tasks writes about 4 MiB of records, mostly in arrays of 16 KiB and more. On 4 KiB
// pages a fresh process takes a page fault for each 4 KiB it first writes, ~3 us each on a virtual machine
// (Firecracker: 16 MiB written once costs 14 ms against 2.8 ms on 2 MiB pages). With the kernel's
// transparent huge pages in `madvise` mode (Debian's default) nothing gets huge pages unless it asks.
// Measured (CPU time of fresh processes alternating with the build before, `bench/ab_cpu`; the table is in
// reports/sim-benchmarks.md, "Huge pages"): `bench/sim_cold 20000 100` 0.76-0.79x, `sim_cold 20000 1000`
// 0.77-0.79x, `shardflow simulate` of 20,000 and 200,000 tasks 0.91-0.92x. The cost: a huge page the guest
// has never touched is faulted in by the hypervisor 4 KiB at a time, so a run that takes hundreds of MiB
// of fresh huge pages pays that in kernel time (`sim_bench --rss 1000000 10000` alternating with the
// 4 KiB build: 1.10x, kernel 0.13 -> 0.49 s); run after run, the freed huge pages are taken again and
// that run is faster (user 2.5 -> 2.2 s, kernel 0.15 -> 0.02 s).
//
// This replaces the global operator new and delete of the program it is linked into: a request of at least
// 16 KiB gets a block of the next power of two (aligned to its size, up to 2 MiB) carved from one reserved
// range of address space marked MADV_HUGEPAGE, so the kernel backs it with 2 MiB pages as it is first
// written; smaller requests go to malloc as before. Freed blocks are kept per size and reused (a sweep's
// simulations reuse the same blocks without faulting again); past 256 MiB of kept blocks, a freed block's
// memory is handed back to the kernel (its address range is kept for reuse). If the range cannot be
// reserved (an address-space limit, strict overcommit) or is used up, everything goes to malloc.
//
// Linked by: the `shardflow` command and the benchmark programs. Not by the libraries (a program that
// embeds shardflow keeps its own allocator) and not in sanitizer builds (AddressSanitizer would not see
// inside the blocks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardflow::alloc {

/// What the large-block allocator has done so far in this process.
struct LargeBlockStats {
  bool reserved = false;        ///< the address range is reserved (else everything went to malloc)
  std::uint64_t carved = 0;     ///< blocks carved from the range
  std::uint64_t reused = 0;     ///< blocks handed out again from the kept ones
  std::uint64_t to_malloc = 0;  ///< large requests that went to malloc (the range unusable or full)
  std::size_t range_used = 0;   ///< bytes of the range carved so far
  std::size_t kept_bytes = 0;   ///< bytes in freed blocks kept for reuse
  std::size_t live_bytes = 0;   ///< bytes in blocks handed out and not freed
};

[[nodiscard]] LargeBlockStats large_block_stats();

/// Whether the pointer is a block of the reserved range (for tests).
[[nodiscard]] bool is_large_block(const void* p);

/// The smallest request served from the range, and the reserved range's size.
inline constexpr std::size_t kMinLargeBlock = std::size_t{16} << 10;
inline constexpr std::size_t kLargeRange = std::size_t{64} << 30;

}  // namespace shardflow::alloc
