#include <cstdint>
#include <sys/mman.h>

#include <shardflow/core/big_alloc.hpp>

namespace shardflow::big_alloc {
namespace {
constexpr std::size_t kHuge = std::size_t{2} << 20;  // 2 MiB, x86-64's and arm64's (4 KiB base) PMD size
std::size_t rounded(std::size_t bytes) {
  return (bytes + kHuge - 1) & ~(kHuge - 1);
}
}  // namespace

void* map(std::size_t bytes) {
  const std::size_t size = rounded(bytes);
  if (size < bytes) throw std::bad_alloc();
  // Map one huge page more than needed, then give back the parts before and after the aligned range.
  void* raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
  if (aligned > base) munmap(raw, aligned - base);
  if (const std::uintptr_t tail = base + size + kHuge - (aligned + size); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + size), tail);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint: ordinary pages if refused
#endif
  return reinterpret_cast<void*>(aligned);
}

void unmap(void* p, std::size_t bytes) noexcept {
  munmap(p, rounded(bytes));
}

}  // namespace shardflow::big_alloc
