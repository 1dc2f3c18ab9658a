// A FIFO of 32-bit ids that can also put one back at the front: the queue behind a parallelism
// limiter, a pod class's pending pods. Grows by doubling, never shrinks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardflow {

class Ring {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::uint32_t size() const { return size_; }
  [[nodiscard]] std::uint32_t front() const { return buf_[head_]; }
  void push_back(std::uint32_t v) {
    grow();
    buf_[(head_ + size_) & (cap() - 1)] = v;
    ++size_;
  }
  void push_front(std::uint32_t v) {
    grow();
    head_ = (head_ + cap() - 1) & (cap() - 1);
    buf_[head_] = v;
    ++size_;
  }
  /// Room for n ids before any growth (call while empty).
  void reserve(std::uint32_t n) {
    std::size_t cap = 16;
    while (cap < n) cap *= 2;
    if (empty() && cap > buf_.size()) {
      buf_.assign(cap, 0);
      head_ = 0;
    }
  }
  std::uint32_t pop_front() {
    const std::uint32_t v = buf_[head_];
    head_ = (head_ + 1) & (cap() - 1);
    --size_;
    return v;
  }

 private:
  [[nodiscard]] std::uint32_t cap() const { return static_cast<std::uint32_t>(buf_.size()); }
  void grow() {
    if (size_ < cap()) return;
    std::vector<std::uint32_t> next(std::max<std::size_t>(16, buf_.size() * 2));
    for (std::uint32_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & (cap() - 1)];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<std::uint32_t> buf_;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace shardflow
