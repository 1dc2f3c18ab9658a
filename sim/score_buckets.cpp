#include "score_buckets.hpp"

#include <algorithm>

namespace shardflow::sim {

void ScoreBuckets::resize(std::uint32_t slots) {
  if (slots <= slots_ && stride_ != 0) return;
  slots_ = std::max(slots_, slots);
  score_.resize(slots_, -1);
  const std::uint32_t stride = std::max<std::uint32_t>(1, (slots_ + 63) / 64);
  if (stride == stride_) return;
  // Every bitmap gets the new width; the bits already set keep their places.
  std::vector<bits::Word> grown(count_.size() * std::size_t{stride}, 0);
  for (std::size_t b = 0; b < count_.size(); ++b)
    std::copy_n(bits_.begin() + static_cast<std::ptrdiff_t>(b * stride_), stride_,
                grown.begin() + static_cast<std::ptrdiff_t>(b * stride));
  bits_ = std::move(grown);
  feasible_bits_.resize(stride, 0);
  stride_ = stride;
}

std::uint32_t ScoreBuckets::new_bucket(std::uint32_t score) {
  if (score >= bucket_of_.size()) {
    bucket_of_.resize(std::max<std::size_t>(score + 1, 2 * bucket_of_.size()), kNone);
    scores_used_.resize((bucket_of_.size() + 63) / 64, 0);
  }
  std::uint32_t b = 0;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    b = static_cast<std::uint32_t>(count_.size());
    count_.push_back(0);
    bits_.resize(bits_.size() + stride_, 0);
  }
  bucket_of_[score] = b;
  scores_used_[score / 64] |= bits::Word{1} << (score % 64);
  best_ = std::max(best_, static_cast<std::int32_t>(score));
  return b;
}

void ScoreBuckets::drop_bucket(std::int32_t score, std::uint32_t b) {
  // Its bitmap is all zeros again, ready for the next score.
  const auto s = static_cast<std::uint32_t>(score);
  bucket_of_[s] = kNone;
  scores_used_[s / 64] &= ~(bits::Word{1} << (s % 64));
  free_.push_back(b);
  if (score == best_) best_ = highest_below(s);
}

std::int32_t ScoreBuckets::highest_below(std::uint32_t below) const {
  if (below == 0) return -1;
  std::uint32_t w = (below - 1) / 64;
  bits::Word x = scores_used_[w] & (bits::kOnes >> (63 - (below - 1) % 64));
  while (x == 0) {
    if (w == 0) return -1;
    x = scores_used_[--w];
  }
  return static_cast<std::int32_t>(64 * w + 63 - static_cast<std::uint32_t>(__builtin_clzll(x)));
}

void ScoreBuckets::best_in(std::uint32_t lo1, std::uint32_t hi1, std::uint32_t lo2, std::uint32_t hi2,
                           Window& w) const {
  const bits::Word* const feasible = feasible_bits_.data();
  w.found = bits::count_range(feasible, lo1, hi1) + bits::count_range(feasible, lo2, hi2);
  if (w.found == 0) return;
  best_of(lo1, hi1, lo2, hi2, w);
}

void ScoreBuckets::best_of(std::uint32_t lo1, std::uint32_t hi1, std::uint32_t lo2, std::uint32_t hi2,
                           Window& w) const {
  // The scores in use from the highest down, until one has a node in the ranges.
  for (std::int32_t s = best_; s >= 0; s = highest_below(static_cast<std::uint32_t>(s))) {
    // Most scores have no node in the ranges: a test for any bit, counted only for the one that has.
    const bits::Word* const m = bucket_bits(s);
    if (bits::any_range(m, lo1, hi1) || bits::any_range(m, lo2, hi2)) {
      w.best = s;
      w.ties = bits::count_range(m, lo1, hi1) + bits::count_range(m, lo2, hi2);
      return;
    }
  }
}

ScoreBuckets::Window ScoreBuckets::window(std::uint32_t from, std::uint32_t want) const {
  // The same cases, in the same order, as ScoreTree::window and window_counted.
  Window w;
  if (slots_ == 0) return w;
  if (from >= slots_) from = 0;
  w.from = from;
  if (want == 0) {
    w.end = from;
    return w;
  }
  const std::uint32_t total = feasible_;
  if (want > total) {
    // The search goes all round.
    w.wraps = from > 0;
    w.end = from > 0 ? from : slots_;
    w.passed = slots_;
    root(w);
    return w;
  }
  if (total == slots_) {
    // Every slot feasible (a cluster with room): the window is the next `want` slots, nothing to count.
    w.passed = want;
    w.wraps = from + want > slots_;
    w.end = w.wraps ? from + want - slots_ : from + want;
    if (want == total) {
      root(w);
    } else {
      w.found = want;
      best_of(from, w.wraps ? slots_ : w.end, 0, w.wraps ? w.end : 0, w);
    }
    return w;
  }
  const bits::Word* const feasible = feasible_bits_.data();
  const std::uint32_t before = from == 0 ? 0 : bits::count_range(feasible, 0, from);
  const std::uint32_t after = total - before;
  if (want <= after) {
    const std::uint32_t last = bits::select_range(feasible, from, slots_, want - 1);
    w.end = last + 1;
    w.passed = last + 1 - from;
    if (want == total)
      root(w);
    else
      best_in(from, w.end, 0, 0, w);
  } else {
    const std::uint32_t last = bits::select_range(feasible, 0, slots_, want - after - 1);
    w.wraps = true;
    w.end = last + 1;
    w.passed = (slots_ - from) + last + 1;
    if (want == total)
      root(w);
    else
      best_in(from, slots_, 0, w.end, w);
  }
  return w;
}

}  // namespace shardflow::sim
