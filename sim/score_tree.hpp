// Per pod class, which nodes are feasible and how they score, arranged so that one scheduling decision
// costs O(log n) whatever the number of nodes kube-scheduler would look at.
//
// A segment tree over node slots; leaf = the node's score for the class, or -1 if the pod does not fit
// there. Each range keeps the number of feasible nodes, the best score and how many feasible nodes have
// it. A decision then asks:
//   1. where does the search that starts at `from` and stops after `want` feasible nodes end
//      (kube-scheduler's findNodesThatPassFilters with numFeasibleNodesToFind and nextStartNodeIndex),
//   2. what is the best score in that window and how many nodes share it,
//   3. which is the j-th of those, in the order the search met them (selectHost's pick).
// The answers are exactly those of visiting the window node by node (NodeIndex::for_each_fit), which
// tests/sim/score_tree_test.cpp checks against a brute-force scan.
//
//   ScoreTree t(4);
//   t.set(0, 70); t.set(1, -1); t.set(2, 90); t.set(3, 90);
//   ScoreTree::Window w = t.window(/*from=*/1, /*want=*/2);  // nodes 2, 3: best 90, ties 2, passed 3
//   std::uint32_t second = t.nth_best(w, 1);                 // 3
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

namespace shardflow::sim {

class ScoreTree {
 public:
  explicit ScoreTree(std::uint32_t slots = 0) { resize(slots); }

  [[nodiscard]] std::uint32_t slots() const { return slots_; }
  /// Grows to at least `slots` slots; new slots are not feasible.
  void resize(std::uint32_t slots);
  /// A node's score for the class, or -1 if the pod cannot be placed there.
  void set(std::uint32_t slot, std::int32_t score);
  [[nodiscard]] std::int32_t score(std::uint32_t slot) const { return best_of(key_[size_ + slot]); }
  /// Sets every slot to `score_of(slot)` at once, in O(slots).
  template <class ScoreOf>
  void rebuild(ScoreOf&& score_of) {
    for (std::uint32_t s = 0; s < slots_; ++s) {
      const std::int32_t v = score_of(s);
      key_[size_ + s] = leaf_key(v);
      count_[size_ + s] = v >= 0 ? 1 : 0;
    }
    build_ranges();
  }
  /// Number of feasible nodes.
  [[nodiscard]] std::uint32_t feasible() const { return count_[1]; }

  /// The nodes a search from `from` meets until it has found `want` feasible ones (or went all round).
  struct Window {
    std::uint32_t from = 0;
    std::uint32_t end = 0;     // one past the last slot looked at, in circular order (may wrap)
    bool wraps = false;        // the window is [from, slots) + [0, end)
    std::uint32_t found = 0;   // feasible nodes in the window
    std::uint32_t passed = 0;  // slots looked at, feasible or not (for nextStartNodeIndex)
    std::int32_t best = -1;    // best score in the window
    std::uint32_t ties = 0;    // feasible nodes in the window with the best score
  };
  [[nodiscard]] Window window(std::uint32_t from, std::uint32_t want) const {
    // Inline, the usual case on a busy small cluster: the search goes all round, nothing to count.
    if (slots_ == 0 || want <= count_[1]) return window_counted(from, want);
    Window w;
    w.from = from < slots_ ? from : 0;
    w.wraps = w.from > 0;
    w.end = w.from > 0 ? w.from : slots_;
    w.passed = slots_;
    w.found = count_[1];
    w.best = best_of(key_[1]);
    w.ties = ties_of(key_[1]);
    return w;
  }
  /// The j-th (0-based) node with the window's best score, in the search's order.
  [[nodiscard]] std::uint32_t nth_best(const Window& w, std::uint32_t j) const {
    assert(j < w.ties);
    if (w.found != feasible()) return nth_best_in_part(w, j);
    // Inline, the usual case on small clusters: every feasible node is in the window, so its best is
    // the tree's and its order is slot order rotated to start at `from`; the j-th there is the k-th in
    // slot order, one descent from the root. A search from slot 0 has no ties before it.
    std::uint32_t k = (w.from == 0 ? 0 : ties_before(w.from, w.best)) + j;
    if (k >= w.ties) k -= w.ties;
    return kth_with(k, w.best);
  }

 private:
  // A range's best score and how many feasible nodes have it, packed in one word so that carrying them
  // up the tree is a max and an add: (best + 1) << 32 | ties. An empty range is 0 (best -1, ties 0).
  // Of two ranges, the larger key has the better best (or the same best and more ties); the sum of
  // the ties is added when the bests are equal. Feasible counts are kept apart (count_): they change
  // only when a node starts or stops fitting, so a score change walks up the keys alone.
  using Key = std::uint64_t;
  static constexpr Key leaf_key(std::int32_t score) {
    return score >= 0 ? (Key(static_cast<std::uint32_t>(score) + 1u) << 32) | 1u : 0;
  }
  static constexpr std::int32_t best_of(Key k) { return static_cast<std::int32_t>(k >> 32) - 1; }
  static constexpr std::uint32_t ties_of(Key k) { return static_cast<std::uint32_t>(k); }
  static constexpr Key combine_keys(Key a, Key b) {
    // Branch-free (a mask, not a conditional, which GCC -O3 compiles as a branch): whether two ranges
    // share their best is as good as random.
    const Key hi = a > b ? a : b, lo = a > b ? b : a;
    const Key same = Key{0} - static_cast<Key>(((hi ^ lo) >> 32) == 0);
    return hi + (lo & same & 0xFFFFFFFFu);
  }
  // A range as queries combine them.
  struct Node {
    std::uint32_t count = 0;  // feasible nodes
    Key key = 0;              // best and ties
  };
  static Node combine(const Node& a, const Node& b) {
    return {a.count + b.count, combine_keys(a.key, b.key)};
  }
  [[nodiscard]] Node node(std::size_t i) const { return {count_[i], key_[i]}; }
  // Every range from its two halves, leaves given.
  void build_ranges();
  // window() for every case, counting feasible nodes from `from` when the search may stop early.
  [[nodiscard]] Window window_counted(std::uint32_t from, std::uint32_t want) const;
  // Feasible nodes in [0, end).
  [[nodiscard]] std::uint32_t count_before(std::uint32_t end) const;
  // The slot of the k-th (1-based) feasible node overall.
  [[nodiscard]] std::uint32_t select(std::uint32_t k) const;
  [[nodiscard]] Node query(std::uint32_t lo, std::uint32_t hi) const;
  // In [lo, hi): the slot of the j-th node with score `best` (which no node of the range exceeds).
  [[nodiscard]] std::uint32_t nth_with(std::uint32_t lo, std::uint32_t hi, std::int32_t best,
                                       std::uint32_t j) const;

  // Nodes with score `best` (the tree's best) in [0, end).
  [[nodiscard]] std::uint32_t ties_before(std::uint32_t end, std::int32_t best) const;
  // The slot of the k-th (0-based) node with score `best` (the tree's best), in slot order.
  [[nodiscard]] std::uint32_t kth_with(std::uint32_t k, std::int32_t best) const {
    const Key* const key = key_.data();
    return descend(1, k, [key, best](std::size_t i) { return with_best(key[i], best); });
  }
  // The nodes of a range that have score `best`: its ties if its best is `best`, else 0.
  static std::uint32_t with_best(Key k, std::int32_t best) { return ties_of(k) & all_if(best_of(k) == best); }
  // From range i down to the leaf that holds the k-th (0-based) of the units below i, range r holding
  // weight(r) of them (feasible nodes, or nodes with some score). Branch-free: which way a descent
  // goes is as good as random, and a mispredicted branch per level cost more than the rest of the walk.
  template <class Weight>
  [[nodiscard]] std::uint32_t descend(std::uint32_t i, std::uint32_t k, Weight weight) const {
    while (i < size_) {
      const std::uint32_t here = weight(2 * std::size_t{i});
      const std::uint32_t right = k >= here ? 1u : 0u;
      k -= here & all_if(right != 0);
      i = 2 * i + right;
    }
    return i - size_;
  }
  // All ones if `c`, else zero: a mask that selects without a branch.
  static constexpr std::uint32_t all_if(bool c) { return 0u - static_cast<std::uint32_t>(c); }
  // nth_best when the window leaves some feasible nodes out.
  [[nodiscard]] std::uint32_t nth_best_in_part(const Window& w, std::uint32_t j) const;

  std::uint32_t slots_ = 0;
  std::uint32_t size_ = 1;            // leaves, a power of two
  std::vector<Key> key_;              // 1-based heap layout; leaves at size_ + slot
  std::vector<std::uint32_t> count_;  // the same layout: feasible nodes in each range
};

}  // namespace shardflow::sim
