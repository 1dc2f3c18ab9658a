// The scheduler (private to sim/): pod classes, their queues and backoff, kube-scheduler's filter and
// score, and the decision's choice of pod and node. One decision at a time (kDecide, 1 /
// decisions_per_second each), FIFO by pod creation (a failed pod as of its failure); see
// include/shardflow/sim/simulator.hpp for the model.
//
// Pods with the same requirements (the tasks of one step, or all driver pods) form a class and share
// its scheduling state: once the oldest pod of a class does not fit, the younger ones are not tried
// until the cluster changes. Binding the chosen pod is the pod lifecycle's (pod_lifecycle.inl).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/ring.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "engine.hpp"
#include "nodes.hpp"
#include "pods.hpp"
#include "scoring.hpp"
#include "scoring_plugins.hpp"

namespace shardflow::sim {
namespace {

enum class ClassState : std::uint8_t { active, backoff, unschedulable };

constexpr Duration kUnschedulableFlush = Duration::from_s(300);  // podMaxInUnschedulablePodsDuration

// A memoized node-only score (Scheduler::node_part): the inputs it reads, and the score.
struct ScoreMemo {
  std::int64_t cpu_used = -1;  // -1: empty entry (usage is never negative)
  std::int64_t memory_used = 0;
  std::int64_t nz_cpu = 0;
  std::int64_t nz_memory = 0;
  std::int32_t gpu_used = 0;
  std::uint32_t pool = 0;
  std::int64_t score = 0;
};
constexpr std::uint32_t kScoreMemoBits = 7;  // 128 entries a class, direct-mapped

// Pods with the same requirements: the tasks of one step, or all driver pods.
struct PodClass {
  PodRequest request;
  CpuMem nonzero;           // the requests kube-scheduler scores with
  std::uint64_t pools = 0;  // pools whose selector and taints admit it
  bool never_fits = false;  // no eligible pool can ever hold it
  std::uint32_t image = 0;
  Duration pull;
  // Scoring (see score_node): the NodeResourcesFit shortcut applies, BalancedAllocation skips the pod,
  // and TaintToleration's and NodeAffinity's raw scores per pool (eligible pools only).
  bool fit_shortcut = false;
  bool balance_skips = false;
  bool pools_differ = false;   // some eligible pools' raw taint or affinity scores differ
  std::int32_t pool_part = 0;  // else: their weighted, normalized score, the same on every node
  std::vector<std::int64_t> taint_raw, affinity_raw;  // per pool
  // The node-only part of score_node (see node_part), memoized by the node's pool and usage when it is
  // costly (BalancedAllocation's divisions, or the general NodeResourcesFit): nodes of one shape with the
  // same pods score the same, and a cluster holds few distinct usages at once. Allocated on first use.
  bool memoize = false;
  mutable std::vector<ScoreMemo> memo;
  Ring queue;  // pending pods (attempt ids), oldest first
  ClassState state = ClassState::active;
  int fails = 0;  // consecutive failed scheduling attempts of the head pod
  // The queue order of the pods queued when the head last failed scheduling (Scheduler::order_of):
  // kube-scheduler gives a pod that failed a new queue timestamp, the time of the failure
  // (AddUnschedulableIfNotPresent), and the class's younger pods would fail in turn.
  std::uint32_t requeued = 0;
  SimTime backoff_until;
  std::uint32_t wake_gen = 0;
  SimTime blocked_since = kNever;  // when its backlog first found no node
  bool scale_check_pending = false;
  std::uint8_t tree = 0;    // the Scheduler's tree it is in: 0 none, 1 active, 2 backing off
  std::uint32_t index = 0;  // its place among the Scheduler's classes
};

std::uint64_t eligible_pools(const std::vector<NodePool>& pools,
                             const std::map<std::string, std::string>& selector,
                             const std::vector<Toleration>& tolerations) {
  std::uint64_t mask = 0;
  for (std::size_t p = 0; p < pools.size(); ++p)
    if (pool_admits(pools[p], selector, tolerations)) mask |= std::uint64_t{1} << p;
  return mask;
}

int initial_count(const NodePool& p) {
  if (!p.autoscaling.enabled()) return p.count;
  return std::clamp(p.count, p.autoscaling.min, p.autoscaling.max);
}

// How many pods of the class fit in the room, one after the other: the resource part of fits_on (the
// pool's eligibility aside), counted rather than tried pod by pod, as the class's pods are identical.
std::int64_t pods_fitting(const PodClass& c, const Room& r) {
  std::int64_t n = r.pods;
  if (c.request.cpu > 0) n = std::min<std::int64_t>(n, r.cpu / c.request.cpu);
  if (c.request.memory > 0) n = std::min<std::int64_t>(n, r.memory / c.request.memory);
  if (c.request.gpu > 0) n = std::min<std::int64_t>(n, r.gpu / c.request.gpu);
  return std::max<std::int64_t>(0, n);
}

// How many pods of the class an empty node of the pool holds, beside its DaemonSet pods. Out of line:
// the autoscaler's checks that call it are cold, and inlined they cost the decision's hot path registers.
[[gnu::noinline]] std::int64_t pods_per_node(const PodClass& c, const NodePool& p) {
  return pods_fitting(c, empty_room(p));
}

// A tournament tree over the classes: the best member class (by `Better`, a strict order) at the root, in
// O(log classes) a change. The decision's choice among classes: a WfCommons import has a class per task,
// and a scan of every class per decision made thousands of steps quadratic.
class ClassTree {
 public:
  void init(std::uint32_t classes) {
    leaves_ = 1;
    while (leaves_ < classes) leaves_ *= 2;
    node_.assign(2 * std::size_t{leaves_}, kNoSlot);
  }
  /// Class c is a member (`in`) or not; its key may have changed either way.
  template <class Better>
  [[gnu::always_inline]] void set(std::uint32_t c, bool in, Better better) {
    std::uint32_t i = leaves_ + c;
    node_[i] = in ? c : kNoSlot;
    for (i /= 2; i >= 1; i /= 2) {
      const std::uint32_t l = node_[2 * i], r = node_[2 * i + 1], was = node_[i];
      const std::uint32_t now = l == kNoSlot ? r : r == kNoSlot ? l : better(r, l) ? r : l;
      node_[i] = now;
      if (was != c && now != c) break;  // the same other class wins here: nothing above changes
    }
  }
  /// The best member, or kNoSlot.
  [[nodiscard]] std::uint32_t best() const { return node_[1]; }

 private:
  std::vector<std::uint32_t> node_;  // node_[leaves_ + c]: c or kNoSlot; node_[i]: the better of its two
  std::uint32_t leaves_ = 1;
};

class Scheduler {
 public:
  /// Classes: one per step, then one for driver pods.
  Scheduler(const Scenario& sc, const Plan& plan, Rng rng)
      : pools_(sc.cluster.node_pools), cfg_(sc.cluster.scheduler), rng_(rng) {
    const auto& pools = sc.cluster.node_pools;
    decision_cost_ = cfg_.decisions_per_second > 0 ? delay_from_seconds(1.0 / cfg_.decisions_per_second)
                                                   : Duration::zero();
    const Overheads& ov = sc.overheads;
    std::vector<std::string> images;
    for (const PlanStep& s : plan.steps()) {
      const Component& c = s.component;
      PodClass pc;
      pc.request = {c.resources.cpu, c.resources.memory, c.resources.gpu};
      pc.nonzero = {c.resources.cpu ? c.resources.cpu : kDefaultMilliCpuRequest,
                    c.resources.memory ? c.resources.memory : kDefaultMemoryRequest};
      pc.pools = eligible_pools(pools, c.node_selector, c.tolerations);
      // One image under both its names: an untagged name is its `:latest` (kube-scheduler's
      // normalizedImageName in ImageLocality; the kubelet pulls the same), `app` and `app:latest` alike.
      std::string image = c.image;
      const std::size_t colon = image.rfind(':'), slash = image.rfind('/');
      if (!image.empty() && (colon == std::string::npos || (slash != std::string::npos && colon < slash)))
        image += ":latest";  // no tag (a colon before the last '/' is a registry's port)
      auto it = std::find(images.begin(), images.end(), image);
      pc.image = static_cast<std::uint32_t>(it - images.begin());
      if (it == images.end()) images.push_back(image);
      const ByteCount size = c.image_size >= 0 ? c.image_size : ov.default_image_size;
      pc.pull = ov.image_pull_bytes_per_second > 0
                    ? delay_from_seconds(static_cast<double>(size) / ov.image_pull_bytes_per_second)
                    : Duration::zero();
      // A step's pods can all be pending at once (a fan-out admitted in one instant): make room up
      // front rather than grow the ring by doubling while they are created.
      pc.queue.reserve(static_cast<std::uint32_t>(std::min<std::uint64_t>(s.instances, 1u << 20)));
      classes_.push_back(std::move(pc));
    }
    {
      PodClass driver;
      driver.request = {ov.driver_cpu, ov.driver_memory, 0};
      driver.nonzero = {ov.driver_cpu ? ov.driver_cpu : kDefaultMilliCpuRequest,
                        ov.driver_memory ? ov.driver_memory : kDefaultMemoryRequest};
      driver.pools = eligible_pools(pools, {}, {});
      if (driver.pools == 0)
        driver.pools = pools.size() >= 64 ? ~0ull : (std::uint64_t{1} << pools.size()) - 1;
      driver.image = kNoSlot;
      classes_.push_back(std::move(driver));
    }
    driver_class_ = static_cast<std::uint32_t>(classes_.size() - 1);
    if (cfg_.policy == ScorePolicy::list) {
      // Driver pods rank first (rank 0), then the steps in the list's order (cfg_.list_order: the
      // steps it names, in its order, then the others), each part in the string order of their paths.
      list_ = true;
      std::unordered_map<std::string_view, std::uint32_t> given;
      for (std::uint32_t i = 0; i < cfg_.list_order.size(); ++i) given.emplace(cfg_.list_order[i], i);
      const auto key = [&](std::uint32_t s) {
        const auto it = given.find(plan.steps()[s].path);
        return it == given.end() ? std::uint32_t{0xFFFFFFFFu} : it->second;
      };
      std::vector<std::uint32_t> order(plan.steps().size());
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const std::uint32_t ka = key(a), kb = key(b);
        return ka != kb ? ka < kb : plan.steps()[a].path < plan.steps()[b].path;
      });
      list_rank_.assign(classes_.size(), 0);
      for (std::uint32_t i = 0; i < order.size(); ++i) list_rank_[order[i]] = i + 1;
    }
    images_ = static_cast<std::uint32_t>(images.size());
    init_scoring(sc, plan);
    for (std::uint32_t c = 0; c < classes_.size(); ++c) classes_[c].index = c;
    active_.init(static_cast<std::uint32_t>(classes_.size()));
    backing_off_.init(static_cast<std::uint32_t>(classes_.size()));
    unschedulable_at_.assign(classes_.size(), kNoSlot);
    for (PodClass& pc : classes_) {
      pc.never_fits = true;
      for (std::size_t p = 0; p < pools.size(); ++p)
        if ((pc.pools >> p & 1) && pods_per_node(pc, pools[p]) > 0 && pools[p].may_have_nodes())
          pc.never_fits = false;
    }
  }

  [[nodiscard]] std::size_t size() const { return classes_.size(); }
  /// Policy list (find_node scans the nodes itself; no score trees).
  [[nodiscard]] bool list() const { return list_; }
  /// Decisions take no time (decisions_per_second 0).
  [[nodiscard]] bool free_decisions() const { return decision_cost_ == Duration::zero(); }
  [[nodiscard]] PodClass& cls(std::uint32_t c) { return classes_[c]; }
  [[nodiscard]] const PodClass& cls(std::uint32_t c) const { return classes_[c]; }
  [[nodiscard]] std::uint32_t driver_class() const { return driver_class_; }
  /// Distinct images of the steps' pods (driver pods have none).
  [[nodiscard]] std::uint32_t images() const { return images_; }
  /// The pods' attempts, whose queue order (order_of) the class trees compare, and how next_class finds
  /// its class. Set once, by the Model, before any pod is queued.
  void use_attempts(const Attempts* att, ClassChoice choice) {
    att_ = att;
    indexed_ = !list_ && (choice == ClassChoice::tree ||
                          (choice == ClassChoice::automatic && classes_.size() > kScannedClasses));
  }

  // ---- queue and backoff ------------------------------------------------------------------------------
  /// A pod of class c (attempt a) joins its class's queue.
  [[gnu::always_inline]] void enqueue(std::uint32_t c, std::uint32_t a, Attempts& att, Engine& engine) {
    att[a].seq = pod_seq_++;
    PodClass& pc = classes_[c];
    const bool first = pc.queue.empty();
    pc.queue.push_back(a);
    if (first) {
      pc.fails = 0;
      set_state(pc, ClassState::active);  // and into the trees, with its head
    }
    if (list_) list_ready_.emplace(list_rank_[c], c);
    kick(engine);
  }

  /// Where the pod at position i of class c's queue stands in the scheduler's queue order: by its
  /// creation (seq), or, if it was queued when its class last failed scheduling, by that failure
  /// (PodClass::requeued). Non-decreasing along a class's queue; never equal across classes.
  [[nodiscard]] std::uint32_t order_of(const PodClass& pc, const Attempts& att, std::uint32_t i) const {
    return std::max(att[pc.queue[i]].seq, pc.requeued);
  }

  /// The pod decided last (class c's head) was bound: a class left without pending pods leaves the list.
  void bound(std::uint32_t c) {
    if (list_ && classes_[c].queue.empty()) list_ready_.erase({list_rank_[c], c});
  }

  [[nodiscard]] bool has_candidate() const {
    if (list_) return !list_blocked_ && !list_ready_.empty();
    if (indexed_) return active_.best() != kNoSlot || backing_off_.best() != kNoSlot;
    for (const PodClass& c : classes_)
      if (!c.queue.empty() && c.state != ClassState::unschedulable) return true;
    return false;
  }

  /// Schedules the next decision unless one is pending or no pod can be tried.
  void kick(Engine& engine) {
    if (decide_pending_ || !has_candidate()) return;
    decide_pending_ = true;
    engine.schedule(decision_cost_, kDecide, 0);
  }
  /// The kDecide event fired.
  void decision_began() { decide_pending_ = false; }

  /// The class of the pod decided next: the oldest pod of the active queue, else
  /// (SchedulerPopFromBackoffQ) the pod whose backoff ends first; kNoSlot if none.
  [[nodiscard]] std::uint32_t next_class(const Attempts& att) const {
    if (list_) return list_blocked_ || list_ready_.empty() ? kNoSlot : list_ready_.begin()->second;
    if (indexed_) {
      const std::uint32_t best = active_.best();
      return best != kNoSlot ? best : backing_off_.best();
    }
    // Few classes (a pipeline's steps): a scan costs less than keeping the trees.
    std::uint32_t best = kNoSlot;
    for (std::uint32_t c = 0; c < classes_.size(); ++c) {
      const PodClass& pc = classes_[c];
      if (pc.queue.empty() || pc.state != ClassState::active) continue;
      if (best == kNoSlot || order_of(pc, att, 0) < order_of(classes_[best], att, 0)) best = c;
    }
    if (best == kNoSlot) {
      for (std::uint32_t c = 0; c < classes_.size(); ++c) {
        const PodClass& pc = classes_[c];
        if (pc.queue.empty() || pc.state != ClassState::backoff) continue;
        if (best == kNoSlot || pc.backoff_until < classes_[best].backoff_until ||
            (pc.backoff_until == classes_[best].backoff_until &&
             order_of(pc, att, 0) < order_of(classes_[best], att, 0)))
          best = c;
      }
    }
    return best;
  }

  /// Class c's head pod or state changed: its place in the trees of next_class.
  [[gnu::always_inline]] void refresh(std::uint32_t c) {
    if (indexed_) refresh_trees(c);
  }

 private:
  // refresh with the trees kept: out of line, so that the decision's code is the same without them.
  [[gnu::noinline]] void refresh_trees(std::uint32_t c) {
    PodClass& pc = classes_[c];
    const Attempts& att = *att_;
    const std::uint8_t tree = pc.queue.empty()                  ? 0
                              : pc.state == ClassState::active  ? 1
                              : pc.state == ClassState::backoff ? 2
                                                                : 0;
    // Only the trees it leaves, joins or is in.
    if (tree == 1 || pc.tree == 1)
      active_.set(c, tree == 1, [&](std::uint32_t x, std::uint32_t y) {
        return order_of(classes_[x], att, 0) < order_of(classes_[y], att, 0);
      });
    if (tree == 2 || pc.tree == 2)
      backing_off_.set(c, tree == 2, [&](std::uint32_t x, std::uint32_t y) {
        const PodClass& px = classes_[x];
        const PodClass& py = classes_[y];
        return px.backoff_until != py.backoff_until ? px.backoff_until < py.backoff_until
                                                    : order_of(px, att, 0) < order_of(py, att, 0);
      });
    pc.tree = tree;
  }

 public:
  /// The pending pods of the classes that `counts` picks, in the order the scheduler takes them: by
  /// creation (seq) across classes, as next_class does (policy list: by the list's rank, a class's pods
  /// together). Calls run(c, n) for the next n pods, all of class c, until it returns false or no pod is
  /// left. A class's queue is in creation order, so the end of a run is a binary search: O(classes +
  /// log pods) a run, and a run per change of class in that order.
  template <class Counts, class Run>
  void for_each_pending_run(const Attempts& att, Counts counts, Run run) const {
    if (list_) {
      for (const auto& [rank, c] : list_ready_)
        if (!classes_[c].queue.empty() && counts(c) && !run(c, classes_[c].queue.size())) return;
      return;
    }
    std::vector<std::uint32_t> next(classes_.size(), 0);  // per class: its first pod not yet in a run
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (!counts(c)) next[c] = classes_[c].queue.size();
    const auto seq_at = [&](std::uint32_t c, std::uint32_t i) { return order_of(classes_[c], att, i); };
    for (;;) {
      std::uint32_t first = kNoSlot, second = kNoSlot;  // the classes whose next pods are the oldest two
      for (std::uint32_t c = 0; c < classes_.size(); ++c) {
        if (next[c] == classes_[c].queue.size()) continue;
        if (first == kNoSlot || seq_at(c, next[c]) < seq_at(first, next[first])) {
          second = first;
          first = c;
        } else if (second == kNoSlot || seq_at(c, next[c]) < seq_at(second, next[second])) {
          second = c;
        }
      }
      if (first == kNoSlot) return;
      // The run: first's pods older than second's next one.
      std::uint32_t lo = next[first] + 1, hi = classes_[first].queue.size();
      if (second != kNoSlot) {
        const std::uint64_t limit = seq_at(second, next[second]);
        while (lo < hi) {
          const std::uint32_t mid = lo + (hi - lo) / 2;
          if (seq_at(first, mid) < limit)
            lo = mid + 1;
          else
            hi = mid;
        }
      }
      const std::uint32_t n = hi - next[first];
      next[first] = hi;
      if (!run(first, n)) return;
    }
  }

  /// The head pod of class c found no node: the class waits for a cluster change, with backoff.
  void mark_unschedulable(std::uint32_t c, Engine& engine) {
    PodClass& pc = classes_[c];
    if (list_) {  // no backoff: the list waits for the next cluster change
      list_blocked_ = true;
      if (pc.blocked_since == kNever) pc.blocked_since = engine.now();
      return;
    }
    set_state(pc, ClassState::unschedulable);
    pc.requeued = pod_seq_++;
    ++pc.fails;
    Duration backoff = cfg_.initial_backoff;
    for (int i = 1; i < pc.fails && backoff < cfg_.max_backoff; ++i) backoff = backoff * 2;
    pc.backoff_until = backoff_end(engine.now(), std::min(backoff, cfg_.max_backoff));
    engine.schedule_at(flush_time(engine.now()), kClassWake, c, ++pc.wake_gen);
    if (pc.blocked_since == kNever) pc.blocked_since = engine.now();
  }

  /// When a pod found unschedulable at `t` leaves the unschedulable pods with no cluster change:
  /// kube-scheduler v1.36's flushUnschedulablePodsLeftover runs every 30 s from the scheduler's start (the
  /// run's) and moves the pods unschedulable for more than podMaxInUnschedulablePodsDuration (5 min): the
  /// first tick strictly past t + 5 min.
  [[nodiscard]] static SimTime flush_time(SimTime t) {
    constexpr std::int64_t kTick = Duration::from_s(30).ns();
    const std::int64_t due = (t + kUnschedulableFlush).ns();
    return SimTime::from_ns((due / kTick + 1) * kTick);
  }

  /// When a pod that failed at `now` with this backoff may be tried again: kube-scheduler v1.36's backoff
  /// queue (SchedulerPopFromBackoffQ) orders pods by windows of backoff_window (1 s), and a pod backs
  /// off until the window after the one its backoff ends in (backoffQueue.getBackoffTime, alignToWindow
  /// and isPodBackingoff), so even a zero backoff waits for the next window. No backoff at all with
  /// max_backoff 0, as getBackoffTime with podMaxBackoff 0.
  [[nodiscard]] SimTime backoff_end(SimTime now, Duration backoff) const {
    const SimTime end = now + backoff;
    const std::int64_t w = cfg_.backoff_window.ns();
    if (cfg_.max_backoff == Duration::zero() || w <= 0) return end;
    return SimTime::from_ns(end.ns() - end.ns() % w) + cfg_.backoff_window;
  }

  /// Every class state change goes through here, to keep count of the unschedulable classes.
  /// (And keeps the trees of next_class and the list of unschedulable classes.)
  [[gnu::always_inline]] void set_state(PodClass& pc, ClassState state) {
    if (state != pc.state) [[unlikely]]
      change_state(pc, state);
    refresh(pc.index);
  }

  /// A pod ended or a node came up: unschedulable pods move to the active or backoff queue. `added`: the
  /// slot of a node that came up, which wakes only the classes whose pods fit it (kube-scheduler's
  /// queueing hints: NodeResourcesFit and the other filters skip a new node the pod does not fit).
  void on_cluster_change(Engine& engine, const Slot* added = nullptr) {
    list_blocked_ = false;
    if (unschedulable_count_ == 0) {  // the usual case: nothing waits for a change
      kick(engine);
      return;
    }
    // The unschedulable classes only, in class order (the order their wake events are scheduled in).
    waking_.assign(unschedulable_.begin(), unschedulable_.end());
    std::sort(waking_.begin(), waking_.end());
    for (const std::uint32_t c : waking_) {
      PodClass& pc = classes_[c];
      if (pc.queue.empty() || pc.state != ClassState::unschedulable) continue;
      if (added != nullptr && !list_ && !fits_on(pc, *added)) continue;
      ++pc.wake_gen;
      if (pc.backoff_until <= engine.now()) {
        set_state(pc, ClassState::active);
      } else {
        set_state(pc, ClassState::backoff);
        engine.schedule_at(pc.backoff_until, kClassWake, c, pc.wake_gen);
      }
    }
    kick(engine);
  }

  void on_class_wake(std::uint32_t c, std::uint32_t gen, Engine& engine) {
    PodClass& pc = classes_[c];
    if (gen != pc.wake_gen || pc.queue.empty()) return;
    set_state(pc, ClassState::active);
    kick(engine);
  }

  // ---- filter and score ---------------------------------------------------------------------------
  [[nodiscard]] bool fits_on(const PodClass& pc, const Slot& s) const {
    const NodePool& p = pools_[s.pool];
    return s.alive && (pc.pools >> s.pool & 1) && s.pods < p.max_pods &&
           p.cpu - s.cpu_used >= pc.request.cpu && p.memory - s.memory_used >= pc.request.memory &&
           p.gpu - s.gpu_used >= pc.request.gpu;
  }

  /// The node's key for class c: kube-scheduler v1.36's weighted sum of the default profile's plugins
  /// (sim/scoring_plugins.hpp) that are a function of the node alone: NodeResourcesFit,
  /// BalancedAllocation, ImageLocality, plus TaintToleration's and NodeAffinity's normalized scores
  /// when they are the same on every eligible pool (pool_part). A class whose pools differ there gets
  /// those two at the decision, normalized over the nodes found (pick_normalized).
  [[nodiscard, gnu::always_inline]] std::int64_t score_node(const PodClass& pc, std::uint32_t slot,
                                                            const Nodes& nodes) const {
    const Slot& s = nodes.slot(slot);
    std::int64_t total = pc.memoize ? memoized_node_part(pc, s, nodes) : node_part(pc, s, nodes);
    if (pc.image != kNoSlot && image_score_[pc.image] > 0 && nodes.has_image(slot, pc.image))
      total += weights_.image_locality * image_score_[pc.image];
    return total;
  }

  /// score_node without ImageLocality: a function of the class, the node's pool and its usage alone.
  [[nodiscard, gnu::always_inline]] std::int64_t node_part(const PodClass& pc, const Slot& s,
                                                           const Nodes& nodes) const {
    const NodePool& p = pools_[s.pool];
    const plugins::NodeUsage usage{p.cpu,         p.memory,   p.gpu,    s.cpu_used,
                                   s.memory_used, s.gpu_used, s.nz_cpu, s.nz_memory};
    const plugins::PodRequests pod{pc.request.cpu, pc.request.memory, pc.request.gpu};
    std::int64_t total = pc.pool_part;
    if (weights_.node_resources_fit > 0)
      total += weights_.node_resources_fit * fit_score(pc, s, p, usage, pod, nodes);
    if (weights_.node_resources_balanced_allocation > 0 && !pc.balance_skips)
      total += weights_.node_resources_balanced_allocation *
               plugins::balanced_allocation_score_v136(plugins::balance_resources(usage, pod));
    return total;
  }

  /// node_part through the class's memo: the entry for the node's pool and usage, computed on a miss.
  [[nodiscard, gnu::always_inline]] std::int64_t memoized_node_part(const PodClass& pc, const Slot& s,
                                                                    const Nodes& nodes) const {
    if (pc.memo.empty()) pc.memo.resize(std::size_t{1} << kScoreMemoBits);
    std::uint64_t h = static_cast<std::uint64_t>(s.cpu_used) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(s.memory_used) + (h >> 29);
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= static_cast<std::uint64_t>(s.nz_cpu) ^ (static_cast<std::uint64_t>(s.nz_memory) >> 7) ^
         (static_cast<std::uint64_t>(s.gpu_used) << 40) ^ (std::uint64_t{s.pool} << 48);
    h *= 0x94D049BB133111EBull;
    ScoreMemo& e = pc.memo[h >> (64 - kScoreMemoBits)];
    if (e.cpu_used == s.cpu_used && e.memory_used == s.memory_used && e.nz_cpu == s.nz_cpu &&
        e.nz_memory == s.nz_memory && e.gpu_used == s.gpu_used && e.pool == s.pool)
      return e.score;
    e = {s.cpu_used, s.memory_used, s.nz_cpu, s.nz_memory, s.gpu_used, s.pool, node_part(pc, s, nodes)};
    return e.score;
  }

  /// Class c's score on the node, or -1 if its pod does not fit there: what a score tree holds.
  [[nodiscard, gnu::always_inline]] std::int32_t score_if_fits(std::uint32_t c, std::uint32_t slot,
                                                               const Nodes& nodes) const {
    const PodClass& pc = classes_[c];
    return fits_on(pc, nodes.slot(slot)) ? static_cast<std::int32_t>(score_node(pc, slot, nodes)) : -1;
  }

  // ---- ImageLocality's global inputs ------------------------------------------------------------------
  /// Whether ImageLocality can score the image above 0 (enabled, and the image larger than its 23 MiB
  /// threshold): only then does the model track on which nodes it is.
  [[nodiscard]] bool image_scored(std::uint32_t image) const {
    return image != kNoSlot && image_scored_[image] != 0;
  }
  [[nodiscard]] bool any_image_scored() const { return any_image_scored_; }
  /// The image is on `with_image` of the cluster's `nodes` nodes: ImageLocality's score of a node that
  /// holds it. True if it changed (the nodes holding it need new keys).
  bool refresh_image_score(std::uint32_t image, std::int64_t with_image, std::int64_t nodes) {
    const plugins::ImageOnNode present[] = {{image_size_[image], with_image}};
    const auto score = static_cast<std::int32_t>(plugins::image_locality_score(present, nodes, 1));
    if (score == image_score_[image]) return false;
    image_score_[image] = score;
    return true;
  }

  // ---- the node for a pod -------------------------------------------------------------------------
  // kube-scheduler's findNodesThatFitPod + prioritizeNodes + selectHost. The search starts at
  // next_start_ and stops after numFeasibleNodesToFind fits; the start then moves past the nodes looked
  // at. Scores are cached per (node, class) until the node changes: with hundreds of nodes scored per
  // decision, nearly all of them are unchanged since the previous one. The winner is drawn uniformly
  // among the top-scored nodes, as selectHost's reservoir sampling does, with one draw per decision.
  std::uint32_t find_node(std::uint32_t c, Nodes& nodes, SimStats& stats) {
    if (list_) return find_node_list(c, nodes, stats);
    if (nodes.use_trees()) return find_node_tree(c, nodes, stats);
    const PodClass& pc = classes_[c];
    const NodeIndex& index = nodes.index();
    if (nodes.alive() == 0 || !index.may_fit(pc.request, pc.pools)) return kNoSlot;
    const std::int64_t want = num_feasible_nodes_to_find(cfg_.percentage_of_nodes_to_score, nodes.alive());
    const std::uint32_t tag = c + 1;
    // Plain pointers: the visitor runs for every feasible node, and vector members would be reloaded.
    ScoreCache* cache = nodes.score_cache();
    std::uint32_t* top = nodes.top();
    std::size_t tops = 0;
    std::int64_t found = 0, best_score = -1;
    const bool all = pc.pools_differ;  // keep every node found, for pick_normalized
    const std::uint32_t processed =
        index.for_each_fit(next_start_, pc.request, pc.pools, [&](std::uint32_t slot) {
          ScoreCache& entry = cache[slot];
          if (entry.cls != tag) entry = {tag, static_cast<std::int32_t>(score_node(pc, slot, nodes))};
          const std::int64_t score = entry.score;
          if (score > best_score && !all) {
            best_score = score;
            tops = 0;
          }
          if (score == best_score || all) top[tops++] = slot;
          return ++found < want;
        });
    stats.nodes_scored += static_cast<std::uint64_t>(found);
    if (index.slots() > 0) next_start_ = wrap(next_start_ + processed, index.slots());
    if (tops == 0) return kNoSlot;
    if (all)
      return pick_normalized(
          pc, top, tops, [cache](std::uint32_t slot) { return cache[slot].score; }, nodes);
    return tops == 1 ? top[0] : top[rng_.below(tops)];
  }

 private:
  // set_state's change of state: the list of unschedulable classes follows it.
  [[gnu::noinline]] void change_state(PodClass& pc, ClassState state) {
    unschedulable_count_ += (state == ClassState::unschedulable ? 1 : 0);
    unschedulable_count_ -= (pc.state == ClassState::unschedulable ? 1 : 0);
    const std::uint32_t c = pc.index;
    if (state == ClassState::unschedulable) {
      unschedulable_at_[c] = static_cast<std::uint32_t>(unschedulable_.size());
      unschedulable_.push_back(c);
    } else if (pc.state == ClassState::unschedulable) {
      const std::uint32_t at = unschedulable_at_[c], last = unschedulable_.back();
      unschedulable_[at] = last;
      unschedulable_at_[last] = at;
      unschedulable_.pop_back();
      unschedulable_at_[c] = kNoSlot;
    }
    pc.state = state;
  }

  // Policy list: the node with the most idle CPU among those the pod fits (ties: the lowest slot). A scan
  // of every node: list scheduling is for comparing with workflow simulators on their few hosts.
  std::uint32_t find_node_list(std::uint32_t c, const Nodes& nodes, SimStats& stats) const {
    const PodClass& pc = classes_[c];
    std::uint32_t best = kNoSlot;
    std::int64_t best_idle = -1;
    const auto& slots = nodes.slots();
    for (std::uint32_t i = 0; i < slots.size(); ++i) {
      if (!fits_on(pc, slots[i])) continue;
      ++stats.nodes_scored;
      const std::int64_t idle = pools_[slots[i].pool].cpu - slots[i].cpu_used;
      if (idle > best_idle) best_idle = idle, best = i;
    }
    return best;
  }

  // The same decision as find_node's scan, from the class's score tree: the window of the first `want`
  // feasible nodes from next_start_, its best score, and the j-th of the nodes sharing it.
  std::uint32_t find_node_tree(std::uint32_t c, Nodes& nodes, SimStats& stats) {
    // The tree is read now: bring it up to date. If the pod decided was the class's last pending one,
    // the tree goes lazy until the next decision of the class (Nodes::set_eager).
    nodes.flush(c, *this);
    nodes.set_eager(c, !classes_[c].queue.empty());
    const ScoreSearch& tree = nodes.tree(c);
    if (nodes.alive() == 0 || tree.feasible() == 0) return kNoSlot;
    const std::int64_t want = num_feasible_nodes_to_find(cfg_.percentage_of_nodes_to_score, nodes.alive());
    const ScoreSearch::Window w = tree.window(next_start_, static_cast<std::uint32_t>(want));
    stats.nodes_scored += w.found;
    next_start_ = wrap(next_start_ + w.passed, tree.slots());
    if (classes_[c].pools_differ) {
      // The nodes of the window in the search's order, as the scan meets them: O(slots passed).
      std::uint32_t* found = nodes.top();
      std::size_t n = 0;
      for (std::uint32_t i = 0; i < w.passed; ++i) {
        const std::uint32_t slot = wrap(std::uint64_t{w.from} + i, tree.slots());
        if (tree.score(slot) >= 0) found[n++] = slot;
      }
      return pick_normalized(
          classes_[c], found, n, [&tree](std::uint32_t slot) { return tree.score(slot); }, nodes);
    }
    return tree.nth_best(w, w.ties == 1 ? 0 : static_cast<std::uint32_t>(rng_.below(w.ties)));
  }

  // For a class whose pools differ in TaintToleration's or NodeAffinity's raw score: kube-scheduler
  // normalizes those over the feasible nodes it found, so their share of the total depends on which
  // pools the search met. Adds them to each found node's key (key_of), then draws among the best in the
  // order found, one draw as selectHost. Costs O(nodes found) per decision, as kube-scheduler's own scoring.
  template <class KeyOf>
  std::uint32_t pick_normalized(const PodClass& pc, const std::uint32_t* found, std::size_t n, KeyOf key_of,
                                const Nodes& nodes) {
    std::int64_t max_taint = 0, max_affinity = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t pool = nodes.slot(found[i]).pool;
      max_taint = std::max(max_taint, pc.taint_raw[pool]);
      max_affinity = std::max(max_affinity, pc.affinity_raw[pool]);
    }
    const auto total = [&](std::uint32_t slot) {
      const std::uint32_t pool = nodes.slot(slot).pool;
      return std::int64_t{key_of(slot)} +
             weights_.taint_toleration * plugins::normalize_score(pc.taint_raw[pool], max_taint, true) +
             weights_.node_affinity * plugins::normalize_score(pc.affinity_raw[pool], max_affinity, false);
    };
    std::int64_t best = -1;
    std::size_t ties = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t t = total(found[i]);
      if (t > best) best = t, ties = 0;
      if (t == best) ++ties;
    }
    std::size_t j = ties == 1 ? 0 : rng_.below(ties);
    for (std::size_t i = 0; i < n; ++i)
      if (total(found[i]) == best && j-- == 0) return found[i];
    return kNoSlot;
  }

  // NodeResourcesFit with the configured strategy. LeastAllocated and MostAllocated over cpu and memory
  // with weights 1 (the default) use the pool's divisors (no divide instruction); the rest the plugin's
  // functions.
  [[nodiscard, gnu::always_inline]] std::int64_t fit_score(const PodClass& pc, const Slot& s,
                                                           const NodePool& p, const plugins::NodeUsage& usage,
                                                           const plugins::PodRequests& pod,
                                                           const Nodes& nodes) const {
    if (pc.fit_shortcut && p.cpu != 0 && p.memory != 0) {
      const CapacityDivisors& d = nodes.capacity_divisors(s.pool);
      const std::int64_t cpu = s.nz_cpu + pc.nonzero.cpu, memory = s.nz_memory + pc.nonzero.memory;
      if (fit_strategy_ == FitStrategy::least_allocated)
        return (least_requested(cpu, p.cpu, d.cpu) + least_requested(memory, p.memory, d.memory)) / 2;
      return (most_requested(cpu, p.cpu, d.cpu) + most_requested(memory, p.memory, d.memory)) / 2;
    }
    const auto r = plugins::fit_resources(cfg_.fit_resource_weights, usage, pod);
    return plugins::fit_score(fit_strategy_, r, cfg_.requested_to_capacity_ratio_shape);
  }

  // The effective plugin weights and strategy, and each class's and image's scoring inputs.
  void init_scoring(const Scenario& sc, const Plan& plan) {
    weights_ = cfg_.score_weights;
    // `policy: balanced-allocation` (from before the plugins) ranks by BalancedAllocation alone: no
    // NodeResourcesFit. Otherwise `policy` is NodeResourcesFit's strategy.
    if (cfg_.policy == ScorePolicy::balanced_allocation) weights_.node_resources_fit = 0;
    fit_strategy_ = cfg_.fit_strategy == FitStrategy::requested_to_capacity_ratio ? cfg_.fit_strategy
                    : cfg_.policy == ScorePolicy::most_allocated ? FitStrategy::most_allocated
                                                                 : FitStrategy::least_allocated;
    const FitResourceWeights& fw = cfg_.fit_resource_weights;
    const auto& pools = sc.cluster.node_pools;
    image_size_.assign(images_, 0);
    for (std::uint32_t c = 0; c < classes_.size(); ++c) {
      PodClass& pc = classes_[c];
      const bool driver = c == driver_class_;
      const Component* comp = driver ? nullptr : &plan.steps()[c].component;
      if (!driver && image_size_[pc.image] == 0)
        image_size_[pc.image] = comp->image_size >= 0 ? comp->image_size : sc.overheads.default_image_size;
      pc.fit_shortcut = fit_strategy_ != FitStrategy::requested_to_capacity_ratio && fw.cpu == 1 &&
                        fw.memory == 1 && (fw.gpu == 0 || pc.request.gpu == 0);
      pc.balance_skips =
          plugins::balanced_allocation_skips({pc.request.cpu, pc.request.memory, pc.request.gpu});
      // LeastAllocated or MostAllocated alone (the shortcut) costs less than a memo look-up.
      pc.memoize = (weights_.node_resources_balanced_allocation > 0 && !pc.balance_skips) ||
                   (weights_.node_resources_fit > 0 && !pc.fit_shortcut);
      static const std::vector<Toleration> kNone;
      const std::vector<Toleration>& tolerations = driver ? kNone : comp->tolerations;
      std::span<const PreferredSchedulingTerm> terms;
      if (!driver) terms = comp->preferred_node_affinity;
      pc.taint_raw.assign(pools.size(), 0);
      pc.affinity_raw.assign(pools.size(), 0);
      std::int64_t first = -1;
      for (std::size_t p = 0; p < pools.size(); ++p) {
        if (weights_.taint_toleration > 0)
          pc.taint_raw[p] = plugins::taint_toleration_raw(pools[p].taints, tolerations);
        if (weights_.node_affinity > 0)
          pc.affinity_raw[p] = plugins::node_affinity_raw(pools[p].labels, terms);
        if (!(pc.pools >> p & 1)) continue;
        if (first < 0)
          first = static_cast<std::int64_t>(p);
        else if (pc.taint_raw[p] != pc.taint_raw[static_cast<std::size_t>(first)] ||
                 pc.affinity_raw[p] != pc.affinity_raw[static_cast<std::size_t>(first)])
          pc.pools_differ = true;
      }
      if (!pc.pools_differ && first >= 0) {
        const std::int64_t t = pc.taint_raw[static_cast<std::size_t>(first)];
        const std::int64_t a = pc.affinity_raw[static_cast<std::size_t>(first)];
        pc.pool_part =
            static_cast<std::int32_t>(weights_.taint_toleration * plugins::normalize_score(t, t, true) +
                                      weights_.node_affinity * plugins::normalize_score(a, a, false));
      }
    }
    // An image can score above 0 only if its size alone (every node holding it) passes the 23 MiB floor.
    image_score_.assign(images_, 0);
    image_scored_.assign(images_, 0);
    for (std::uint32_t i = 0; i < images_; ++i) {
      const plugins::ImageOnNode everywhere[] = {{image_size_[i], 1}};
      image_scored_[i] = weights_.image_locality > 0 && plugins::image_locality_score(everywhere, 1, 1) > 0;
      any_image_scored_ = any_image_scored_ || image_scored_[i] != 0;
    }
  }

  const std::vector<NodePool>& pools_;
  const SchedulerConfig& cfg_;
  Rng rng_;  // selectHost's draws among the top-scored nodes
  Duration decision_cost_;
  std::vector<PodClass> classes_;
  std::uint32_t driver_class_ = 0;
  std::uint32_t images_ = 0;
  // Pods enqueued so far (a pod is enqueued once, a kfp-v2 task's twice): 32 bits hold any run whose
  // attempts fit in memory (Attempt is 40 bytes each).
  std::uint32_t pod_seq_ = 0;
  bool decide_pending_ = false;
  std::uint32_t next_start_ = 0;
  // policy list: the classes with pending pods by (rank of the step's path, class); while the first one
  // fits nowhere, no pod is decided until the cluster changes.
  bool list_ = false;
  bool list_blocked_ = false;
  std::vector<std::uint32_t> list_rank_;  // per class
  std::set<std::pair<std::uint32_t, std::uint32_t>> list_ready_;
  ScoreWeights weights_;  // cfg_'s, with NodeResourcesFit off for policy balanced-allocation
  FitStrategy fit_strategy_ = FitStrategy::least_allocated;
  std::vector<std::int64_t> image_size_;    // per image
  std::vector<std::int32_t> image_score_;   // per image: ImageLocality's score on a node that holds it
  std::vector<std::uint8_t> image_scored_;  // per image: image_scored()
  bool any_image_scored_ = false;
  // next_class's choice: the active classes with pods by their head's queue order, the backing-off ones by
  // (backoff end, queue order); and the unschedulable classes (with unschedulable_at_, each one's index).
  // (Kept only with more than kScannedClasses classes: below, next_class scans them.)
  static constexpr std::size_t kScannedClasses = 16;
  bool indexed_ = false;
  std::uint32_t unschedulable_count_ = 0;
  ClassTree active_, backing_off_;
  std::vector<std::uint32_t> unschedulable_, unschedulable_at_, waking_;
  const Attempts* att_ = nullptr;
};

}  // namespace
}  // namespace shardflow::sim
