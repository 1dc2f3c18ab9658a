// Progress from the threads of a sweep or a comparison (private to planner/): each finished run takes
// its count, and about every hundredth count is shown. A thread takes its count before it may show it,
// so a later count can be shown first; the one shown after it is then dropped, so that what the user
// sees only goes forward.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

namespace shardflow::planner {

class ProgressGate {
 public:
  /// `show` (may be empty: nothing is counted) gets done / total, from 0 to 1. An `estimated` total may
  /// be passed: the fraction then stops at 0.99 (the caller shows 1 when it is done).
  ProgressGate(std::function<void(double)> show, std::uint64_t total, bool estimated = false)
      : show_(std::move(show)), total_(std::max<std::uint64_t>(1, total)), estimated_(estimated) {}

  /// A run finished: counts it, and shows the fraction done at every hundredth of the total and at the
  /// end.
  void finished() {
    if (!show_) return;
    const std::uint64_t k = ++done_;
    if (k % std::max<std::uint64_t>(1, total_ / 100) == 0 || k == total_) show(k);
  }

  /// Shows k / total unless as much was shown (what finished() calls): a count taken earlier, or one past
  /// an estimate (held at 0.99).
  void show(std::uint64_t k) {
    const double f = std::min(estimated_ ? 0.99 : 1.0, static_cast<double>(k) / static_cast<double>(total_));
    const std::lock_guard<std::mutex> lock(mutex_);
    if (f <= shown_) return;
    shown_ = f;
    show_(f);
  }

 private:
  std::function<void(double)> show_;
  std::uint64_t total_;
  std::atomic<std::uint64_t> done_{0};
  bool estimated_;
  std::mutex mutex_;
  double shown_ = 0;  // the fraction shown last (under mutex_)
};

}  // namespace shardflow::planner
