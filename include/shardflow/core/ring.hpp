// A FIFO ring that can also put one back at the front, its capacity a power of two: the queue behind a
// parallelism limiter and a pod class's pending pods (Ring, of 32-bit ids), and the simulator's event
// lanes (sim/event_queue.hpp, of events). Grows by doubling, never shrinks.
//
//   Ring r;
//   r.push_back(7);
//   r.push_front(3);
//   std::uint32_t first = r.pop_front();  // 3
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardflow {

/// A ring of T (cheap to copy), at least kMinCapacity when it first grows. The capacity and its mask are
/// kept rather than derived from the vector's size, which for a T of 24 bytes is a division.
template <class T, std::uint32_t kMinCapacity = 16>
class BasicRing {
  static_assert((kMinCapacity & (kMinCapacity - 1)) == 0, "the capacity is a power of two");

 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::uint32_t size() const { return size_; }
  [[nodiscard]] const T& front() const { return buf_[head_]; }
  [[nodiscard]] const T& back() const { return buf_[(head_ + size_ - 1) & mask_]; }
  /// The i-th from the front (i < size()).
  [[nodiscard]] const T& operator[](std::uint32_t i) const { return buf_[(head_ + i) & mask_]; }
  // Always inlined: the simulator's event lanes push 24-byte events built in registers, and an out-of-line
  // call stores them to the stack only to reload them (GCC left it out of line in some callers).
  [[gnu::always_inline]] void push_back(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void push_front(const T& v) {
    if (size_ == cap_) grow();
    head_ = (head_ + mask_) & mask_;  // head - 1, wrapped
    buf_[head_] = v;
    ++size_;
  }
  T pop_front() {
    const T v = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
    return v;
  }
  /// Room for n elements before any growth (call while empty).
  void reserve(std::uint32_t n) {
    std::size_t cap = kMinCapacity;
    while (cap < n) cap *= 2;
    if (empty() && cap > buf_.size()) set_buffer(std::vector<T>(cap));
  }

 private:
  [[gnu::noinline]] void grow() {
    std::vector<T> bigger(std::max<std::size_t>(kMinCapacity, 2 * buf_.size()));
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & mask_];
    set_buffer(std::move(bigger));
  }
  void set_buffer(std::vector<T>&& b) {
    buf_.swap(b);
    cap_ = static_cast<std::uint32_t>(buf_.size());
    mask_ = cap_ - 1;
    head_ = 0;
  }
  std::vector<T> buf_;
  std::uint32_t cap_ = 0;   // buf_.size()
  std::uint32_t mask_ = 0;  // cap_ - 1 (once grown)
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

/// A FIFO of 32-bit ids.
using Ring = BasicRing<std::uint32_t>;

}  // namespace shardflow
