// An index over the nodes of a cluster that answers "which nodes, from slot i on, could hold a pod
// asking for this much cpu, memory, GPUs and one pod slot, in one of these pools?" without scanning
// every node: a segment tree keeping, for each range of node slots, the largest free amount of each
// resource and the set of pools present. A query descends only into ranges whose maxima could fit,
// so finding the next fitting node costs O(log n), and "nothing fits anywhere" is known at the root.
// (Range maxima are taken per resource, so a range may pass while none of its nodes fits; leaves are
// exact, so results are.)
//
//   NodeIndex index(3);
//   index.set(0, {4000, 16 * kGiB, 0, 110}, /*pool=*/0);
//   index.for_each_fit(/*from=*/0, {1000, kGiB, 0}, /*pools=*/~0ull, [](std::uint32_t slot) {
//     return true;  // keep going; false stops the search
//   });
#pragma once

#include <cstdint>
#include <vector>

#include <shardflow/core/units.hpp>

namespace shardflow::sim {

/// Free resources of one node (or the per-resource maxima over a range of nodes).
struct NodeFree {
  MilliCpu cpu = -1;
  ByteCount memory = -1;
  std::int32_t gpu = -1;
  std::int32_t pods = -1;  // free pod slots (kubelet's maxPods minus pods on the node)
};

/// What one pod asks for.
struct PodRequest {
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  std::int32_t gpu = 0;
};

class NodeIndex {
 public:
  explicit NodeIndex(std::uint32_t slots = 0) { resize(slots); }

  /// Number of node slots; new slots are empty (nothing fits on them).
  [[nodiscard]] std::uint32_t slots() const { return slots_; }
  /// Grows to at least `slots` slots (existing contents are kept).
  void resize(std::uint32_t slots);

  /// Sets a node's free resources and pool (pool < 64).
  void set(std::uint32_t slot, NodeFree free, std::uint32_t pool);
  /// Marks a slot as holding no usable node.
  void clear(std::uint32_t slot);

  /// False only if no node in `pools` (a bit mask of pool indices) can hold the request; O(1).
  [[nodiscard]] bool may_fit(PodRequest r, std::uint64_t pools) const { return fits(tree_[1], r, pools); }

  /// Calls `visit(slot)` for every slot whose node fits the request, in the order from, from+1, ...,
  /// slots-1, 0, ..., from-1, until `visit` returns false. Returns the number of slots passed over,
  /// fitting or not, up to and including the one where `visit` stopped (slots() if it never did).
  template <class Visit>
  std::uint32_t for_each_fit(std::uint32_t from, PodRequest r, std::uint64_t pools, Visit&& visit) const {
    if (slots_ == 0) return 0;
    if (from >= slots_) from = 0;
    std::uint32_t stopped_at = kNoSlot;
    if (fits(tree_[1], r, pools) && walk(1, 0, size_, from, slots_, r, pools, visit, stopped_at) && from > 0)
      walk(1, 0, size_, 0, from, r, pools, visit, stopped_at);
    if (stopped_at == kNoSlot) return slots_;
    return (stopped_at >= from ? stopped_at - from : stopped_at + slots_ - from) + 1;
  }

 private:
  static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
  struct Entry {
    NodeFree free;            // per-resource maxima over the range
    NodeFree least;           // per-resource minima over the range
    std::uint64_t pools = 0;  // pools present in the range
  };
  static bool fits(const Entry& e, PodRequest r, std::uint64_t pools) {
    return (e.pools & pools) != 0 && e.free.pods >= 1 && e.free.cpu >= r.cpu && e.free.memory >= r.memory &&
           e.free.gpu >= r.gpu;
  }
  // Every node of the range fits (its minima fit and all its pools are allowed).
  static bool all_fit(const Entry& e, PodRequest r, std::uint64_t pools) {
    return (e.pools & ~pools) == 0 && e.least.pods >= 1 && e.least.cpu >= r.cpu &&
           e.least.memory >= r.memory && e.least.gpu >= r.gpu;
  }
  bool pull(std::uint32_t i);  // recomputes a range from its halves; true if it changed
  // Visits the fitting slots of [qlo, qhi) under node i, which covers [lo, hi), intersects the query
  // and passed fits(). Children are tested before descending so that pruned ranges cost no call.
  // Returns false when the visitor stopped the search.
  template <class Visit>
  bool walk(std::uint32_t i, std::uint32_t lo, std::uint32_t hi, std::uint32_t qlo, std::uint32_t qhi,
            PodRequest r, std::uint64_t pools, Visit& visit, std::uint32_t& stopped_at) const {
    if (hi - lo == 1 || (qlo <= lo && hi <= qhi && all_fit(tree_[i], r, pools))) {
      // A leaf, or a range where every node fits: visit them in order without descending.
      for (std::uint32_t slot = lo; slot < hi; ++slot) {
        if (visit(slot)) continue;
        stopped_at = slot;
        return false;
      }
      return true;
    }
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (qlo < mid && fits(tree_[2 * std::size_t{i}], r, pools) &&
        !walk(2 * i, lo, mid, qlo, qhi, r, pools, visit, stopped_at))
      return false;
    if (mid < qhi && fits(tree_[2 * std::size_t{i} + 1], r, pools))
      return walk(2 * i + 1, mid, hi, qlo, qhi, r, pools, visit, stopped_at);
    return true;
  }

  std::uint32_t slots_ = 0;
  std::uint32_t size_ = 1;   // leaves, a power of two
  std::vector<Entry> tree_;  // 1-based heap layout; leaves at size_ + slot
};

}  // namespace shardflow::sim
