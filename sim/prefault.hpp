// Prefaulting (private to sim/): a run that will write a large array from start to end takes one page
// fault per 4 KiB page as it goes, about a microsecond each in a fresh process, which is as much as the
// simulation's own work on its records. One madvise(MADV_POPULATE_WRITE) maps the pages in one call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/mman.h>

namespace shardflow::sim {
namespace {

/// Maps the whole pages of [p, p + bytes) now (a hint: if the kernel cannot, nothing changes). Pages of
/// the heap that are already mapped are left as they are.
inline void prefault(const void* p, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t kPage = 4096;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace
}  // namespace shardflow::sim
