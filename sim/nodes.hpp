// Node state and the score index (private to sim/): the slots that hold the nodes that are up, per-pool
// counts, the per-node image cache, and the search structures the scheduler asks (the NodeIndex, or one
// ScoreSearch per pod class: score buckets or a score tree; and the per-node score cache), kept up to
// date on every node change.
//
// A slot is reused when its node goes away; `gen` and `idle_gen` tell an event aimed at the old node
// (a failure, a scale-down) from one aimed at the new. Scoring a node for a class is the scheduler's
// (scheduler.hpp): update() and make_live() take it as `scorer.score_if_fits(class, slot, nodes) ->
// score, or -1 if the class's pod does not fit` (a template parameter, so that it inlines).
// score_if_fits takes the slot's index: ImageLocality asks which images the node has.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <shardflow/core/cluster.hpp>

#include "divisor.hpp"
#include "node_index.hpp"
#include "pods.hpp"
#include "score_buckets.hpp"

namespace shardflow::sim {
namespace {

constexpr std::size_t kMaxTreeClasses = 16;  // at most 32: live_mask_ has a bit per class

struct Slot {
  std::uint32_t pool = 0;
  std::uint32_t record = 0;
  bool alive = false;
  MilliCpu cpu_used = 0;
  ByteCount memory_used = 0;
  int gpu_used = 0;
  int pods = 0;  // the pipeline's (the loader took the DaemonSet pods off max_pods)
  MilliCpu nz_cpu = 0;
  ByteCount nz_memory = 0;
  SimTime pull_free;
  std::uint32_t head = kNoSlot;  // first pod on the node
  std::uint32_t gen = 0;         // bumped when the node goes away
  std::uint32_t idle_gen = 0;    // bumped when the node stops being idle
};

// What a node has left for more pods: its pool's allocatable less the requests of the pods bound to it
// (Slot's *_used), and its free pod slots (max_pods less its pods).
struct Room {
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
  int pods = 0;
};

// The room of an empty node of the pool, beside its DaemonSet pods.
inline Room empty_room(const NodePool& p) {
  return {p.pod_cpu(), p.pod_memory(), p.pod_gpu(), p.max_pods};
}

// A node's score for one class (cls = class + 1; 0 = nothing cached).
struct ScoreCache {
  std::uint32_t cls = 0;
  std::int32_t score = 0;
};

struct PoolState {
  int nodes = 0;    // up or booting
  int booting = 0;  // requested, not yet up
  int made = 0;     // nodes ever created, for names
};

struct CapacityDivisors {
  Divisor cpu, memory;
};

class Nodes {
 public:
  /// `initial` slots are made room for; with `use_trees`, one score tree per class (`classes`).
  Nodes(const std::vector<NodePool>& pools, std::uint32_t initial, bool use_trees, std::size_t classes,
        std::uint32_t images)
      : pools_(pools), use_trees_(use_trees), images_(images) {
    pool_.resize(pools.size());
    for (const NodePool& p : pools) capacity_div_.push_back({Divisor(p.cpu), Divisor(p.memory)});
    index_.resize(initial);
    // A class's tree is kept up to date only from its first pod until its step's last task is
    // resolved, so that node changes update the trees of the steps that are running, not of all.
    if (use_trees_) {
      trees_.assign(classes, ScoreSearch(initial));
      stale_.resize(classes);
      dirty_.reserve(initial);
    }
    slots_.reserve(initial);
    image_ready_.reserve(static_cast<std::size_t>(initial) * images_);
    image_present_.reserve(static_cast<std::size_t>(initial) * images_);
    image_nodes_.assign(images_, 0);
  }

  [[nodiscard]] bool use_trees() const { return use_trees_; }
  [[nodiscard]] Slot& slot(std::uint32_t i) { return slots_[i]; }
  [[nodiscard]] const Slot& slot(std::uint32_t i) const { return slots_[i]; }
  [[nodiscard]] const std::vector<Slot>& slots() const { return slots_; }
  [[nodiscard]] PoolState& pool(std::uint32_t p) { return pool_[p]; }
  /// The free room of the node in the slot (which is alive: up).
  [[nodiscard]] Room room(std::uint32_t slot) const {
    const Slot& s = slots_[slot];
    const NodePool& p = pools_[s.pool];
    return {p.cpu - s.cpu_used, p.memory - s.memory_used, p.gpu - s.gpu_used, p.max_pods - s.pods};
  }
  [[nodiscard]] const CapacityDivisors& capacity_divisors(std::uint32_t p) const { return capacity_div_[p]; }
  [[nodiscard]] std::int64_t alive() const { return alive_nodes_; }
  /// The pool of a node, by its record (Trace::nodes index).
  [[nodiscard]] std::uint32_t pool_of_record(std::uint32_t record) const { return record_pool_[record]; }
  void add_record(std::uint32_t pool) { record_pool_.push_back(pool); }
  /// When the image is (or will be) on the node; kNever: not there and not being pulled.
  [[nodiscard]] SimTime& image_ready(std::uint32_t slot, std::uint32_t image) {
    return image_ready_[static_cast<std::size_t>(slot) * images_ + image];
  }
  /// Whether the node has the image as kube-scheduler sees it (its pull finished), for ImageLocality;
  /// kept only for the images the scheduler scores (Model::on_image_pulled).
  [[nodiscard]] bool has_image(std::uint32_t slot, std::uint32_t image) const {
    return image_present_[static_cast<std::size_t>(slot) * images_ + image] != 0;
  }
  void add_image(std::uint32_t slot, std::uint32_t image) {
    image_present_[static_cast<std::size_t>(slot) * images_ + image] = 1;
    ++image_nodes_[image];
  }
  /// On how many nodes that are up the image is.
  [[nodiscard]] std::int64_t nodes_with_image(std::uint32_t image) const { return image_nodes_[image]; }
  [[nodiscard]] std::uint32_t images() const { return images_; }

  // The scan's structures (node_index search), and a scratch array of one entry per slot.
  [[nodiscard]] const NodeIndex& index() const { return index_; }
  [[nodiscard]] ScoreCache* score_cache() { return score_cache_.data(); }
  [[nodiscard]] std::uint32_t* top() { return top_.data(); }
  // The class's score search (score_tree search: its buckets or its tree; ScoreSearch picks).
  [[nodiscard]] const ScoreSearch& tree(std::uint32_t c) const { return trees_[c]; }

  /// A slot for a node of `pool` that came up (its record: Trace::nodes index), reset and alive, every
  /// image absent. The caller then calls update().
  std::uint32_t open_slot(std::uint32_t pool, std::uint32_t record) {
    std::uint32_t slot = 0;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(Slot{});
      score_cache_.push_back({});
      top_.push_back(0);
      image_ready_.resize(image_ready_.size() + images_);
      image_present_.resize(image_present_.size() + images_);
      index_.resize(slot + 1);
      for (ScoreSearch& t : trees_) t.resize(slot + 1);
      if (use_trees_) dirty_.push_back(0);
    }
    Slot& s = slots_[slot];
    const std::uint32_t gen = s.gen;
    const std::uint32_t idle_gen = s.idle_gen;
    s = Slot{};
    s.gen = gen;
    s.idle_gen = idle_gen;
    s.pool = pool;
    s.record = record;
    s.alive = true;
    // DaemonSet pods run on the node from its start: kube-scheduler counts them as requested.
    const NodePool& p = pools_[pool];
    s.cpu_used = p.daemon_cpu;
    s.memory_used = p.daemon_memory;
    s.gpu_used = p.daemon_gpu;
    s.nz_cpu = p.daemon_nonzero_cpu;
    s.nz_memory = p.daemon_nonzero_memory;
    std::fill_n(image_ready_.begin() + static_cast<std::ptrdiff_t>(slot) * images_, images_, kNever);
    std::fill_n(image_present_.begin() + static_cast<std::ptrdiff_t>(slot) * images_, images_, 0);
    ++alive_nodes_;
    return slot;
  }

  /// The node went away: its slot is free for the next node, events aimed at it are stale.
  void close_slot(std::uint32_t slot) {
    Slot& s = slots_[slot];
    s.alive = false;
    ++s.gen;
    ++s.idle_gen;
    if (!use_trees_) index_.clear(slot);
    for (std::uint32_t live = live_mask_; live != 0; live &= live - 1)
      trees_[static_cast<std::uint32_t>(__builtin_ctz(live))].set(slot, -1);
    for (std::uint32_t i = 0; i < images_; ++i) image_nodes_[i] -= has_image(slot, i) ? 1 : 0;
    free_slots_.push_back(slot);
    --alive_nodes_;
    --pool_[s.pool].nodes;
  }

  /// The node's state changed: update whichever search structure is in use.
  template <class Scorer>
  [[gnu::always_inline]] void update(std::uint32_t slot, const Scorer& scorer) {
    const Slot& s = slots_[slot];
    if (use_trees_) {
      for (std::uint32_t eager = live_mask_ & eager_mask_; eager != 0; eager &= eager - 1) {
        const auto c = static_cast<std::uint32_t>(__builtin_ctz(eager));
        trees_[c].set(slot, scorer.score_if_fits(c, slot, *this));
      }
      // The lazy trees only note the slot, once until their next flush.
      if (const std::uint32_t lazy = live_mask_ & ~eager_mask_; lazy != 0) {
        for (std::uint32_t fresh = lazy & ~dirty_[slot]; fresh != 0; fresh &= fresh - 1)
          stale_[static_cast<std::uint32_t>(__builtin_ctz(fresh))].push_back(slot);
        dirty_[slot] |= lazy;
      }
      return;
    }
    score_cache_[slot].cls = 0;  // its cached score is stale
    const NodePool& p = pools_[s.pool];
    index_.set(slot, {p.cpu - s.cpu_used, p.memory - s.memory_used, p.gpu - s.gpu_used, p.max_pods - s.pods},
               s.pool);
  }

  /// A class's tree is live (kept up to date) while its bit is set; a node change visits the live ones.
  [[nodiscard]] bool live(std::uint32_t c) const { return live_mask_ >> c & 1; }
  void set_live(std::uint32_t c, bool live) {
    if (live)
      live_mask_ |= 1u << c;
    else
      live_mask_ &= ~(1u << c);
  }
  /// Tasks that may still create pods of each class (score trees only): a class's tree stops being kept
  /// up to date once its count reaches zero.
  void set_class_tasks(std::vector<std::uint64_t> left) { class_left_ = std::move(left); }
  void class_task_resolved(std::uint32_t c) {
    if (--class_left_[c] == 0) set_live(c, false);
  }
  /// The class's tree becomes live, rebuilt from every slot, and eager.
  template <class Scorer>
  void make_live(std::uint32_t c, const Scorer& scorer) {
    set_live(c, true);
    drop_stale(c);
    eager_mask_ |= 1u << c;
    trees_[c].rebuild([&](std::uint32_t slot) { return scorer.score_if_fits(c, slot, *this); });
  }

  /// A live tree is eager (updated on every node change) or lazy (the changed slots are noted, and
  /// set by flush() before the tree is read). A class with no pending pods is not read until it has one
  /// again, and meanwhile its pods keep ending: its tree is lazy then, so that those ends cost a note
  /// per slot instead of a walk up the tree per end.
  void set_eager(std::uint32_t c, bool eager) {
    if (eager)
      eager_mask_ |= 1u << c;
    else
      eager_mask_ &= ~(1u << c);
  }
  /// Brings class c's tree up to date: the slots changed since it went lazy, each once.
  template <class Scorer>
  void flush(std::uint32_t c, const Scorer& scorer) {
    if (stale_[c].empty()) return;
    for (std::uint32_t slot : stale_[c]) trees_[c].set(slot, scorer.score_if_fits(c, slot, *this));
    drop_stale(c);
  }

 private:
  void drop_stale(std::uint32_t c) {
    for (std::uint32_t slot : stale_[c]) dirty_[slot] &= ~(1u << c);
    stale_[c].clear();
  }

  const std::vector<NodePool>& pools_;
  NodeIndex index_;
  bool use_trees_ = false;
  std::vector<ScoreSearch> trees_;  // per class, when use_trees_
  std::uint32_t live_mask_ = 0;     // bit c: class c's tree is kept (at most kMaxTreeClasses classes)
  std::uint32_t eager_mask_ = 0;    // bit c: class c's tree is updated on every change, else noted (lazy)
  std::vector<std::vector<std::uint32_t>> stale_;  // per class: slots changed while its tree was lazy
  std::vector<std::uint32_t> dirty_;               // per slot: bit c, the slot is in stale_[c]
  std::vector<std::uint64_t> class_left_;          // unresolved tasks that may still create pods of the class
  std::vector<Slot> slots_;
  std::vector<ScoreCache> score_cache_;  // per slot, reset when the node changes
  std::vector<std::uint32_t> top_;       // per slot: the top-scored nodes of the current decision
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> record_pool_;
  std::vector<PoolState> pool_;
  std::vector<CapacityDivisors> capacity_div_;  // per pool, for scoring without dividing
  std::uint32_t images_ = 0;
  std::vector<SimTime> image_ready_;         // per slot and image: when the image is (or will be) on the node
  std::vector<std::uint8_t> image_present_;  // per slot and image: has_image()
  std::vector<std::int64_t> image_nodes_;    // per image: nodes that are up and have it
  std::int64_t alive_nodes_ = 0;
};

}  // namespace
}  // namespace shardflow::sim
