#include "score_tree.hpp"

#include <algorithm>
#include <cassert>

namespace shardflow::sim {

namespace {
constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
}

void ScoreTree::build_ranges() {
  for (std::uint32_t i = size_ - 1; i >= 1; --i) {
    count_[i] = count_[2 * std::size_t{i}] + count_[2 * std::size_t{i} + 1];
    key_[i] = combine_keys(key_[2 * std::size_t{i}], key_[2 * std::size_t{i} + 1]);
  }
}

void ScoreTree::resize(std::uint32_t slots) {
  if (slots <= slots_ && !key_.empty()) return;
  std::uint32_t size = 1;
  while (size < slots) size *= 2;
  if (size != size_ || key_.empty()) {
    const std::uint32_t kept = key_.empty() ? 0 : slots_;
    std::vector<Key> keys(key_.begin() + size_, key_.begin() + size_ + kept);
    std::vector<std::uint32_t> counts(count_.begin() + size_, count_.begin() + size_ + kept);
    size_ = size;
    key_.assign(2 * static_cast<std::size_t>(size_), 0);
    count_.assign(2 * static_cast<std::size_t>(size_), 0);
    std::copy(keys.begin(), keys.end(), key_.begin() + size_);
    std::copy(counts.begin(), counts.end(), count_.begin() + size_);
    build_ranges();
  }
  slots_ = std::max(slots_, slots);
}

void ScoreTree::set(std::uint32_t slot, std::int32_t score) {
  assert(slot < slots_);
  std::size_t i = size_ + std::size_t{slot};
  Key key = leaf_key(score);
  Key* const k = key_.data();
  if (k[i] == key) return;
  // A node that starts or stops fitting changes the counts on its path by the same +-1 (rare: most
  // changes move a score). The key is carried up in a register, combined with the sibling's
  // (combine_keys is symmetric): each level loads only the sibling, never the range just written, so
  // there is no store-to-load dependency from one level to the next. The walk always goes to the root:
  // stopping at the first range left unchanged needs a load and a compare at every level, which costs
  // more than it saves when a node's change usually reaches the root (it does while the tree is small
  // or the node was among the best).
  const std::uint32_t fits = score >= 0 ? 1u : 0u;
  if (std::uint32_t* const c = count_.data(); c[i] != fits) {
    const std::uint32_t delta = fits - c[i];  // modulo 2^32: +1 or -1
    for (std::size_t j = i; j >= 1; j /= 2) c[j] += delta;
  }
  k[i] = key;
  for (; i > 1; i /= 2) {
    key = combine_keys(key, k[i ^ 1]);
    k[i / 2] = key;
  }
}

ScoreTree::Node ScoreTree::query(std::uint32_t lo, std::uint32_t hi) const {
  Node left, right;
  for (std::uint32_t l = lo + size_, r = hi + size_; l < r; l /= 2, r /= 2) {
    if (l & 1) left = combine(left, node(l++));
    if (r & 1) right = combine(node(--r), right);
  }
  return combine(left, right);
}

std::uint32_t ScoreTree::count_before(std::uint32_t end) const {
  // As ties_before: the canonical ranges of [0, end) are right-hand cuts, counted without a branch and
  // without the keys a query would combine.
  const std::uint32_t* const count = count_.data();
  std::uint32_t n = 0;
  for (std::uint32_t r = end + size_; r > 1; r /= 2) n += count[r - 1] & all_if((r & 1) != 0);
  return n;
}

std::uint32_t ScoreTree::select(std::uint32_t k) const {
  assert(k >= 1 && k <= count_[1]);
  const std::uint32_t* const count = count_.data();
  return descend(1, k - 1, [count](std::size_t i) { return count[i]; });
}

ScoreTree::Window ScoreTree::window_counted(std::uint32_t from, std::uint32_t want) const {
  Window w;
  if (slots_ == 0) return w;
  if (from >= slots_) from = 0;
  w.from = from;
  const std::uint32_t total = feasible();
  if (want == 0) {
    w.end = from;
    return w;
  }
  if (want > total) {
    // The search goes all round (the usual case on a busy small cluster): no need to count.
    w.wraps = from > 0;
    w.end = from > 0 ? from : slots_;
    w.passed = slots_;
    w.found = total;
    w.best = best_of(key_[1]);
    w.ties = ties_of(key_[1]);
    return w;
  }
  const std::uint32_t before = from == 0 ? 0 : count_before(from);
  const std::uint32_t after = total - before;
  Node n = node(1);  // a window of every feasible node needs no query
  if (want <= after) {
    const std::uint32_t last = select(before + want);
    w.end = last + 1;
    w.passed = last + 1 - from;
    if (want != total) n = query(from, w.end);
  } else {
    const std::uint32_t last = select(want - after);
    w.wraps = true;
    w.end = last + 1;
    w.passed = (slots_ - from) + last + 1;
    if (want != total) n = combine(query(from, slots_), query(0, w.end));
  }
  w.found = n.count;
  w.best = best_of(n.key);
  w.ties = ties_of(n.key);
  return w;
}

std::uint32_t ScoreTree::nth_with(std::uint32_t lo, std::uint32_t hi, std::int32_t best,
                                  std::uint32_t j) const {
  // The canonical ranges of [lo, hi), bottom-up, in left-to-right order: left ones as met, right ones
  // reversed. Every one lies inside the window, so none holds a score above `best`.
  std::uint32_t left[32], right[32];
  int nl = 0, nr = 0;
  for (std::uint32_t l = lo + size_, r = hi + size_; l < r; l /= 2, r /= 2) {
    if (l & 1) left[nl++] = l++;
    if (r & 1) right[nr++] = --r;
  }
  std::uint32_t i = 0;
  for (int k = 0; k < nl + nr && i == 0; ++k) {
    const std::uint32_t c = k < nl ? left[k] : right[nr - 1 - (k - nl)];
    const std::uint32_t here = with_best(key_[c], best);
    if (j < here)
      i = c;
    else
      j -= here;
  }
  assert(i != 0 && "nth_with: fewer ties than asked for");
  if (i == 0) return kNoSlot;
  const Key* const key = key_.data();
  return descend(i, j, [key, best](std::size_t r) { return with_best(key[r], best); });  // wholly inside
}

std::uint32_t ScoreTree::ties_before(std::uint32_t end, std::int32_t best) const {
  // The canonical ranges of [0, end) are all right-hand cuts: only the right edge moves.
  // Branch-free, as in kth_with: `end` moves round the cluster, so whether a level counts is random.
  const Key* const key = key_.data();
  std::uint32_t n = 0;
  for (std::uint32_t r = end + size_; r > 1; r /= 2)  // r - 1: a range when r is odd; else unused
    n += with_best(key[r - 1], best) & all_if((r & 1) != 0);
  return n;
}

std::uint32_t ScoreTree::nth_best_in_part(const Window& w, std::uint32_t j) const {
  if (!w.wraps) return nth_with(w.from, w.end, w.best, j);
  const Node first = query(w.from, slots_);
  const std::uint32_t t1 = with_best(first.key, w.best);
  return j < t1 ? nth_with(w.from, slots_, w.best, j) : nth_with(0, w.end, w.best, j - t1);
}

}  // namespace shardflow::sim
