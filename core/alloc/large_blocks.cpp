// The global operator new and delete, with requests of 16 KiB and more served from a range of address space
// backed by transparent huge pages. What and why: large_blocks.hpp.
#include "large_blocks.hpp"

#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sys/mman.h>

namespace shardflow::alloc {
namespace {

constexpr std::size_t kUnit = kMinLargeBlock;                        // block sizes are kUnit << class
constexpr int kClasses = std::countr_zero(kLargeRange / kUnit) + 1;  // the largest is the whole range
static_assert((kUnit << (kClasses - 1)) == kLargeRange);
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kKeepLimit = std::size_t{256} << 20;  // kept freed bytes before memory goes back
constexpr std::size_t kPage = 4096;
constexpr std::uint8_t kReleased = 0x80;  // in class_of_: the block's memory went back to the kernel

// The class of the smallest block that holds n bytes (n >= 1), or kClasses if none does.
int class_for(std::size_t n) {
  const std::size_t units = (n + kUnit - 1) / kUnit;
  if (units > (std::size_t{1} << (kClasses - 1))) return kClasses;
  return units <= 1 ? 0 : 64 - __builtin_clzll(units - 1);
}

struct FreeBlock {
  FreeBlock* next;
};

class Range {
 public:
  [[nodiscard]] bool contains(const void* p) const {
    const auto b = base_.load(std::memory_order_relaxed);
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return b != 0 && a >= b && a - b < kLargeRange;
  }

  // A block of at least n bytes, or nullptr when the request goes to malloc.
  void* allocate(std::size_t n) {
    const int c = class_for(n);
    const std::lock_guard<std::mutex> lock(m_);
    if (!tried_) reserve();
    if (base_.load(std::memory_order_relaxed) == 0 || c == kClasses) {
      ++stats_.to_malloc;
      return nullptr;
    }
    const std::size_t size = kUnit << c;
    if (FreeBlock* f = free_[c]) {
      free_[c] = f->next;
      const std::size_t unit = offset(f) / kUnit;
      if ((class_of_[unit] & kReleased) == 0) stats_.kept_bytes -= size;
      class_of_[unit] = static_cast<std::uint8_t>(c);
      ++stats_.reused;
      stats_.live_bytes += size;
      return f;
    }
    // Carve at the next multiple of the size; the pieces skipped on the way are kept as free blocks of
    // their own sizes (each is aligned to its size: it starts where the lowest set bit of the top says).
    std::size_t top = stats_.range_used;
    while (top % size != 0 && top < kLargeRange) {
      const std::size_t piece = top & (~top + 1);
      const int pc = __builtin_ctzll(piece / kUnit);
      keep(top, pc, false);
      top += piece;
    }
    if (top + size > kLargeRange) {
      stats_.range_used = top;
      ++stats_.to_malloc;
      return nullptr;
    }
    stats_.range_used = top + size;
    class_of_[top / kUnit] = static_cast<std::uint8_t>(c);
    ++stats_.carved;
    stats_.live_bytes += size;
    return reinterpret_cast<void*>(base_.load(std::memory_order_relaxed) + top);
  }

  void free(void* p) {
    const std::lock_guard<std::mutex> lock(m_);
    const std::size_t off = offset(p);
    const int c = class_of_[off / kUnit] & ~kReleased;
    stats_.live_bytes -= kUnit << c;
    keep(off, c, true);
  }

  [[nodiscard]] LargeBlockStats stats() {
    const std::lock_guard<std::mutex> lock(m_);
    LargeBlockStats s = stats_;
    s.reserved = base_.load(std::memory_order_relaxed) != 0;
    return s;
  }

 private:
  [[nodiscard]] std::size_t offset(const void* p) const {
    return reinterpret_cast<std::uintptr_t>(p) - base_.load(std::memory_order_relaxed);
  }

  // Puts the block at `off` of class c on its free list. Past the keep limit a freed block's memory goes
  // back to the kernel, all but its first page, which holds the list's link.
  void keep(std::size_t off, int c, bool freed) {
    const std::size_t size = kUnit << c;
    auto* block = reinterpret_cast<char*>(base_.load(std::memory_order_relaxed) + off);
    std::uint8_t cls = static_cast<std::uint8_t>(c);
    if (!freed) {
      // A piece skipped while carving was never written: nothing to give back, nothing kept.
      cls |= kReleased;
    } else if (stats_.kept_bytes + size > kKeepLimit) {
      madvise(block + kPage, size - kPage, MADV_DONTNEED);
      cls |= kReleased;
    } else {
      stats_.kept_bytes += size;
    }
    class_of_[off / kUnit] = cls;
    auto* f = reinterpret_cast<FreeBlock*>(block);
    f->next = free_[c];
    free_[c] = f;
  }

  // A fork() while another thread holds the lock would leave the child's copy locked for good: the lock
  // is taken around fork(), as malloc does for its own.
  static void lock_for_fork();
  static void unlock_after_fork();

  void reserve() {
    tried_ = true;
    pthread_atfork(&Range::lock_for_fork, &Range::unlock_after_fork, &Range::unlock_after_fork);
    void* r = mmap(nullptr, kLargeRange + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return;
    const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(r) + kHugePage - 1) & ~(kHugePage - 1);
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void*>(b), kLargeRange, MADV_HUGEPAGE);  // a hint: fine if refused
#endif
    base_.store(b, std::memory_order_relaxed);
  }

  std::mutex m_;
  // Written once, under m_, before any pointer into the range exists; read without the lock only to tell
  // whether a pointer being freed is in the range, which it can only be if this thread saw the block.
  std::atomic<std::uintptr_t> base_{0};
  bool tried_ = false;
  LargeBlockStats stats_;
  FreeBlock* free_[kClasses] = {};
  std::uint8_t class_of_[kLargeRange / kUnit] = {};  // per unit: the class of the block starting there
};

constinit Range g_range;

void Range::lock_for_fork() {
  g_range.m_.lock();
}
void Range::unlock_after_fork() {
  g_range.m_.unlock();
}

void* malloc_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = std::malloc(n != 0 ? n : 1)) return p;
    const std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

}  // namespace

LargeBlockStats large_block_stats() {
  return g_range.stats();
}
bool is_large_block(const void* p) {
  return g_range.contains(p);
}

}  // namespace shardflow::alloc

// The replaceable global forms, every one that is not over-aligned (those keep the standard library's
// aligned_alloc and free, as a pair). The standard library's own array, nothrow and sized forms would call
// these two, but a runtime that replaces them all (AddressSanitizer's) would not: so each is here.
void* operator new(std::size_t n) {
  if (n >= shardflow::alloc::kMinLargeBlock)
    if (void* p = shardflow::alloc::g_range.allocate(n)) return p;
  return shardflow::alloc::malloc_or_throw(n);
}

void operator delete(void* p) noexcept {
  if (shardflow::alloc::g_range.contains(p))
    shardflow::alloc::g_range.free(p);
  else
    std::free(p);
}

void* operator new[](std::size_t n) {
  return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete[](void* p) noexcept {
  operator delete(p);
}
void operator delete(void* p, std::size_t) noexcept {
  operator delete(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  operator delete(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  operator delete(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  operator delete(p);
}
