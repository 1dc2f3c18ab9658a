#include "score_tree.hpp"

#include <algorithm>
#include <cassert>

namespace shardflow::sim {

namespace {
constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
}

ScoreTree::Node ScoreTree::combine(const Node& a, const Node& b) {
  // Branch-free: an empty side has best -1 and ties 0, so it adds nothing either way.
  const std::int32_t best = std::max(a.best, b.best);
  const std::uint32_t ties = (a.ties & all_if(a.best == best)) + (b.ties & all_if(b.best == best));
  return Node{a.count + b.count, best, ties};
}

void ScoreTree::resize(std::uint32_t slots) {
  if (slots <= slots_ && !tree_.empty()) return;
  std::uint32_t size = 1;
  while (size < slots) size *= 2;
  if (size != size_ || tree_.empty()) {
    std::vector<Node> leaves(tree_.empty() ? 0 : slots_);
    for (std::uint32_t s = 0; s < leaves.size(); ++s) leaves[s] = tree_[size_ + s];
    size_ = size;
    tree_.assign(2 * static_cast<std::size_t>(size_), Node{});
    for (std::uint32_t s = 0; s < leaves.size(); ++s) tree_[size_ + s] = leaves[s];
    for (std::uint32_t i = size_ - 1; i >= 1; --i)
      tree_[i] = combine(tree_[2 * std::size_t{i}], tree_[2 * std::size_t{i} + 1]);
  }
  slots_ = std::max(slots_, slots);
}

void ScoreTree::set(std::uint32_t slot, std::int32_t score) {
  assert(slot < slots_);
  Node* const t = tree_.data();
  std::size_t i = size_ + std::size_t{slot};
  const Node leaf = score >= 0 ? Node{1, score, 1} : Node{};
  if (t[i].count == leaf.count && t[i].best == leaf.best) return;
  // Counts on the path change by the same +-1 (or 0), so they need no recomputing from the children.
  // Best and ties are carried up in registers, combined with the sibling's (combine is symmetric): each
  // level loads only the sibling, never the node just written, so there is no store-to-load dependency
  // from one level to the next. The walk always goes to the root: stopping at the first range left
  // unchanged needs a load and a compare at every level, which costs more than it saves when a node's
  // change usually reaches the root (it does while the tree is small or the node was among the best).
  const std::uint32_t delta = leaf.count - t[i].count;  // modulo 2^32: +1, -1 or 0
  t[i] = leaf;
  std::int32_t best = leaf.best;
  std::uint32_t ties = leaf.ties;
  for (; i > 1; i /= 2) {
    const Node& sib = t[i ^ 1];
    const std::int32_t b = std::max(best, sib.best);
    ties = (ties & all_if(best == b)) + (sib.ties & all_if(sib.best == b));
    best = b;
    Node& n = t[i / 2];
    n.count += delta;
    n.best = best;
    n.ties = ties;
  }
}

ScoreTree::Node ScoreTree::query(std::uint32_t lo, std::uint32_t hi) const {
  Node left, right;
  for (std::uint32_t l = lo + size_, r = hi + size_; l < r; l /= 2, r /= 2) {
    if (l & 1) left = combine(left, tree_[l++]);
    if (r & 1) right = combine(tree_[--r], right);
  }
  return combine(left, right);
}

std::uint32_t ScoreTree::count_before(std::uint32_t end) const {
  return query(0, end).count;
}

std::uint32_t ScoreTree::select(std::uint32_t k) const {
  assert(k >= 1 && k <= tree_[1].count);
  return descend(1, k - 1, [](const Node& n) { return n.count; });
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
    w.best = tree_[1].best;
    w.ties = tree_[1].ties;
    return w;
  }
  const std::uint32_t before = from == 0 ? 0 : count_before(from);
  const std::uint32_t after = total - before;
  Node n = tree_[1];  // a window of every feasible node needs no query
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
  w.best = n.best;
  w.ties = n.ties;
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
  const auto with_best = [best](const Node& n) { return n.ties & all_if(n.best == best); };
  std::uint32_t i = 0;
  for (int k = 0; k < nl + nr && i == 0; ++k) {
    const std::uint32_t c = k < nl ? left[k] : right[nr - 1 - (k - nl)];
    const std::uint32_t here = with_best(tree_[c]);
    if (j < here)
      i = c;
    else
      j -= here;
  }
  assert(i != 0 && "nth_with: fewer ties than asked for");
  if (i == 0) return kNoSlot;
  return descend(i, j, with_best);  // inside a range wholly in the window
}

std::uint32_t ScoreTree::ties_before(std::uint32_t end, std::int32_t best) const {
  // The canonical ranges of [0, end) are all right-hand cuts: only the right edge moves.
  // Branch-free, as in kth_with: `end` moves round the cluster, so whether a level counts is random.
  const Node* const t = tree_.data();
  std::uint32_t n = 0;
  for (std::uint32_t r = end + size_; r > 1; r /= 2) {
    const Node& c = t[r - 1];  // a range when r is odd; else unused (and in bounds, r >= 2)
    n += c.ties & all_if(c.best == best) & all_if((r & 1) != 0);
  }
  return n;
}

std::uint32_t ScoreTree::nth_best_in_part(const Window& w, std::uint32_t j) const {
  if (!w.wraps) return nth_with(w.from, w.end, w.best, j);
  const Node first = query(w.from, slots_);
  const std::uint32_t t1 = first.best == w.best ? first.ties : 0;
  return j < t1 ? nth_with(w.from, slots_, w.best, j) : nth_with(0, w.end, w.best, j - t1);
}

}  // namespace shardflow::sim
