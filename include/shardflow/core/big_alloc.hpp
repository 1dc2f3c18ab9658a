// An allocator for the few arrays that grow with a run's size (a trace's attempt records, the simulator's
// pods). An array of at least kHugeFrom bytes is mapped on its own, 2 MiB-aligned and rounded up to 2 MiB,
// and marked for transparent huge pages (madvise MADV_HUGEPAGE: on Linux configured "madvise", the usual
// default, nothing else gets them). Filling such an array then takes one page fault per 2 MiB instead of
// one per 4 KiB (in a fresh process, a 20,000-task simulation spent over a quarter of its CPU time in the
// kernel, mapping the pages of its records: reports/sim-benchmarks.md). Where the kernel gives no huge page,
// the mapping is ordinary pages, as malloc's would be. Smaller arrays use operator new.
#pragma once

#include <cstddef>
#include <new>

namespace shardflow {

namespace big_alloc {
// Below about half a huge page, zeroing a whole 2 MiB page costs more than the 4 KiB faults it saves.
inline constexpr std::size_t kHugeFrom = std::size_t{512} << 10;  // 512 KiB
/// A mapping of at least `bytes` (rounded up to 2 MiB), 2 MiB-aligned, huge pages advised; throws
/// std::bad_alloc if the system has no memory for it.
void* map(std::size_t bytes);
/// Unmaps what map(bytes) returned.
void unmap(void* p, std::size_t bytes) noexcept;
}  // namespace big_alloc

template <class T>
struct BigAllocator {
  using value_type = T;
  BigAllocator() = default;
  template <class U>
  constexpr BigAllocator(const BigAllocator<U>& /*other*/) noexcept {}  // NOLINT: allocators convert

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= big_alloc::kHugeFrom) return static_cast<T*>(big_alloc::map(bytes));
    return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= big_alloc::kHugeFrom)
      big_alloc::unmap(p, bytes);
    else
      ::operator delete (p, std::align_val_t{alignof(T)});
  }
  template <class U>
  friend bool operator==(const BigAllocator& /*a*/, const BigAllocator<U>& /*b*/) noexcept {
    return true;
  }
};

}  // namespace shardflow
