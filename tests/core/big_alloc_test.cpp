#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/big_alloc.hpp>
#include <shardflow/core/trace.hpp>

using namespace shardflow;

namespace {
// The VmFlags line of the mapping that starts at p in /proc/self/smaps ("" if none starts there).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::ostringstream start;
  start << std::hex << reinterpret_cast<std::uintptr_t>(p) << '-';
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind(start.str(), 0) == 0) in = true;
    if (in && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}
}  // namespace

TEST_CASE("BigAllocator: a large array is its own 2 MiB-aligned mapping, huge pages advised", "[core]") {
  BigAllocator<std::uint64_t> alloc;
  const std::size_t n = (3 << 20) / sizeof(std::uint64_t);  // 3 MiB: two huge pages
  std::uint64_t* p = alloc.allocate(n);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % (2 << 20) == 0);
  for (std::size_t i = 0; i < n; ++i) p[i] = i * 3;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += p[i];
  CHECK(sum == 3 * (n * (n - 1) / 2));
#ifdef __linux__
  // (A kernel built without transparent huge pages refuses the advice: nothing to check there.)
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    const std::string flags = vm_flags_at(p);
    INFO(flags);
    CHECK(flags.find(" hg") != std::string::npos);  // MADV_HUGEPAGE
  }
#endif
  alloc.deallocate(p, n);
}

TEST_CASE("BigAllocator: small arrays come from operator new, aligned for their type", "[core]") {
  BigAllocator<long double> alloc;
  long double* p = alloc.allocate(100);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % alignof(long double) == 0);
  p[99] = 1.5L;
  CHECK(p[99] == 1.5L);
  alloc.deallocate(p, 100);
}

TEST_CASE("BigAllocator: a trace's records keep their values as the array grows past the threshold",
          "[core]") {
  AttemptRecords records;
  const std::uint32_t n = 3 * static_cast<std::uint32_t>(big_alloc::kHugeFrom / sizeof(AttemptRecord));
  for (std::uint32_t i = 0; i < n; ++i) {
    AttemptRecord r;
    r.task = i;
    r.finished = SimTime::from_ns(std::int64_t{i} * 7);
    records.push_back(r);
  }
  bool same = true;
  for (std::uint32_t i = 0; i < n; ++i)
    same = same && records[i].task == i && records[i].finished.ns() == std::int64_t{i} * 7;
  CHECK(same);
  AttemptRecords copy = records;  // copies through the allocator too
  CHECK(copy.size() == n);
  CHECK(copy.back().task == n - 1);
  records.clear();
  records.shrink_to_fit();
  CHECK(records.capacity() == 0);
}
