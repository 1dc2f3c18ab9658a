// The Model's cluster autoscaler (part of simulator.cpp's one translation unit; see model.hpp): scale up
// a pool for a class's unschedulable pods, scale down nodes idle for scale_down_idle, but none within
// the cluster's scale_down_delay_after_add of a scale-up.
#pragma once

#include "model.hpp"

namespace shardflow::sim {
namespace {

// The node has no pods: it may be scaled down after the pool's idle time.
inline void Model::became_idle(std::uint32_t slot) {
  Slot& s = nodes_.slot(slot);
  const NodePool& p = sc_.cluster.node_pools[s.pool];
  if (!p.autoscaling.enabled()) return;
  engine_.schedule_at(scan_time(engine_.now() + p.autoscaling.scale_down_idle), kScaleDown, slot,
                      ++s.idle_gen);
}

// The first loop of the cluster autoscaler at or after `t` (cluster.autoscaler.scan_interval; 0: `t`).
inline SimTime Model::scan_time(SimTime t) const {
  const std::int64_t every = sc_.cluster.autoscaler.scan_interval.ns();
  if (every <= 0) return t;
  const std::int64_t late = t.ns() % every;  // t >= 0
  if (late == 0 || t.ns() > std::numeric_limits<std::int64_t>::max() - (every - late)) return t;
  return SimTime::from_ns(t.ns() + (every - late));
}

// Class c found no node: look at it after the first eligible autoscaling pool's scale-up delay.
inline void Model::arm_autoscaler(std::uint32_t c) {
  PodClass& pc = sched_.cls(c);
  if (pc.scale_check_pending) return;
  const auto& pools = sc_.cluster.node_pools;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (!(pc.pools >> p & 1) || !pools[p].autoscaling.enabled() || pods_per_node(pc, pools[p]) == 0) continue;
    pc.scale_check_pending = true;
    engine_.schedule(pools[p].autoscaling.scale_up_delay, kScaleUpCheck, c);
    return;
  }
}

// Cluster-autoscaler-like scale up: pods of the class unschedulable for at least the delay get enough
// new nodes (from the first eligible pool with room) to hold the ones that neither the free room of the
// nodes that are up nor the booting nodes will (pods_without_room: both, shared by every class).
inline void Model::on_scale_up_check(std::uint32_t c) {
  PodClass& pc = sched_.cls(c);
  pc.scale_check_pending = false;
  if (pc.queue.empty() || pc.blocked_since == kNever) return;
  const auto& pools = sc_.cluster.node_pools;
  std::int64_t unplaced = -1;  // pods_without_room(c), once a pool is past its delay
  for (std::uint32_t p = 0; p < pools.size(); ++p) {
    const NodePool& np = pools[p];
    const std::int64_t per_node = pods_per_node(pc, np);
    if (!(pc.pools >> p & 1) || !np.autoscaling.enabled() || per_node == 0) continue;
    if (engine_.now() - pc.blocked_since < np.autoscaling.scale_up_delay) {
      pc.scale_check_pending = true;
      engine_.schedule_at(pc.blocked_since + np.autoscaling.scale_up_delay, kScaleUpCheck, c);
      return;
    }
    if (unplaced < 0) unplaced = pods_without_room(c);  // the booting nodes' room counted in it
    const PoolState& ps = nodes_.pool(p);
    const std::int64_t room = np.autoscaling.max - ps.nodes;
    if (unplaced <= 0) break;
    if (room <= 0) continue;
    const std::int64_t add = std::min(room, (unplaced + per_node - 1) / per_node);
    for (std::int64_t i = 0; i < add; ++i) {
      add_node(p, engine_.now() + np.autoscaling.boot_time, engine_.now());
      ++stats_.nodes_added;
    }
    // A scale-up pauses every pool's scale-down (Cluster Autoscaler's --scale-down-delay-after-add); a
    // delay past the end of time (a file may give up to 292 years) saturates rather than overflows.
    const Duration delay = sc_.cluster.autoscaler.scale_down_delay_after_add;
    scale_down_from_ = delay > Duration::max() - engine_.now() ? Duration::max() : engine_.now() + delay;
    break;
  }
  // Look again later while the backlog lasts (the cluster autoscaler scans every 10 s).
  pc.scale_check_pending = true;
  engine_.schedule(Duration::from_s(10), kScaleUpCheck, c);
}

// How many of class c's pending pods find no room on the nodes that are up or booting: Cluster Autoscaler's
// "filter out schedulable" step before a scale-up (FilterOutSchedulablePodListProcessor,
// kubernetes/autoscaler cluster-autoscaler/core/podlistprocessor/filter_out_schedulable.go; the FAQ's "How
// does scale-up work?"). CA lists the pods the scheduler marked unschedulable (PodScheduled false, reason
// Unschedulable), packs them one by one onto the free capacity of the existing nodes with the
// scheduler's predicates, each node filled as it goes (filterOutSchedulableByPacking: the cluster
// snapshot takes every pod placed), and only the pods left over drive the scale-up. Without it, a check
// at the instant a node comes up, before the scheduler has bound the pods waiting for it, would see them
// pending with nothing booting and add a node nobody needs.
//
// Here: the pending pods of every class that found no node (blocked_since set: its pods are the ones
// marked unschedulable; a class not yet tried has none), in the scheduler's order (by creation across
// classes, Scheduler::for_each_pending_run), go first fit onto the nodes that are up in slot order,
// with the scheduler's fit test (an eligible pool, cpu, memory, gpu and pod slots free: fits_on). A
// class's pods are identical, so a run of them is placed by counts, pods_fitting per node, not pod by
// pod; and a node that cannot take one more pod of a class never can during the packing (room only
// shrinks), so each class keeps a cursor to the first node that may. The packing stops at class c's
// last pod (pods after it cannot take its room), or as soon as no node has room for c. Cost:
// O(nodes) to read the free room, plus O(nodes) cursor steps per class, plus O(classes + log pods) per
// run of one class in creation order (one run per class when the steps' pods are created together); not
// O(pods x nodes), and O(booting nodes) more. (CA orders the pods by priority alone, which is equal here.)
inline std::int64_t Model::pods_without_room(std::uint32_t c) {
  rooms_.clear();
  for (std::uint32_t slot = 0; slot < nodes_.slots().size(); ++slot)
    if (nodes_.slot(slot).alive) rooms_.push_back({nodes_.slot(slot).pool, nodes_.room(slot)});
  // Then the nodes still booting, empty (beside their DaemonSet pods): CA adds the upcoming nodes to its
  // cluster snapshot before this step (StaticAutoscaler::RunOnce, addUpcomingNodesToClusterSnapshot), so
  // every class's pods share them, in the same first-fit order.
  const auto& pools = sc_.cluster.node_pools;
  for (std::uint32_t p = 0; p < pools.size(); ++p)
    for (int i = 0; i < nodes_.pool(p).booting; ++i) rooms_.push_back({p, empty_room(pools[p])});
  room_from_.assign(sched_.size(), 0);
  const auto nodes = static_cast<std::uint32_t>(rooms_.size());
  std::int64_t left = sched_.cls(c).queue.size();  // c's pods not packed yet
  std::int64_t unplaced = 0;
  sched_.for_each_pending_run(
      att_, [&](std::uint32_t k) { return sched_.cls(k).blocked_since != kNever; },
      [&](std::uint32_t k, std::uint32_t n) {
        const PodClass& pk = sched_.cls(k);
        std::int64_t rest = n;
        std::uint32_t& at = room_from_[k];
        while (rest > 0 && at < nodes) {
          NodeRoom& r = rooms_[at];
          const std::int64_t fit = (pk.pools >> r.pool & 1) ? pods_fitting(pk, r.room) : 0;
          const std::int64_t put = std::min(fit, rest);
          r.room.cpu -= put * pk.request.cpu;
          r.room.memory -= put * pk.request.memory;
          r.room.gpu -= static_cast<int>(put * pk.request.gpu);
          r.room.pods -= static_cast<int>(put);
          rest -= put;
          if (put == fit) ++at;  // the node takes no more pods of the class
        }
        if (k != c) return true;
        unplaced += rest;
        left -= n;
        if (at == nodes) {  // no node has room for c's other pods
          unplaced += left;
          return false;
        }
        return left > 0;
      });
  return unplaced;
}

// The node has been idle for its pool's scale_down_idle (idle_gen says it has not been busy since).
// Within scale_down_delay_after_add of the last scale-up it is held back until that delay ends (a later
// scale-up moves the end further), as the cluster autoscaler keeps counting a node's unneeded time while
// scale-down is in cooldown and removes it at its first loop after. So a node idle since t goes at
// max(t + scale_down_idle, last scale-up + delay), or at the first scan loop at or after that time when
// cluster.autoscaler.scan_interval is set (scan_time), if still idle and its pool above min then.
// A node due at this instant is looked at after every other event of the instant: a pod created at the
// same instant (a task that became ready as another ended) that fits it keeps it, whichever of the two
// events came first (the node went under the pod, which then waited for a new one).
inline void Model::on_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
  late_scale_downs_.emplace_back(slot, idle_gen);
  schedule_late_scale_downs();
}

// The one event that looks at late_scale_downs_, at this instant (if not already pending).
void Model::schedule_late_scale_downs() {
  if (late_pending_) return;
  late_pending_ = true;
  engine_.schedule_at(engine_.now(), kScaleDownResume, kLateScaleDowns);
}

void Model::on_late_scale_downs() {
  if (engine_.more_now()) {  // the instant is not over: behind what it still has
    engine_.schedule_at(engine_.now(), kScaleDownResume, kLateScaleDowns);
    return;
  }
  late_pending_ = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> due;
  due.swap(late_scale_downs_);
  for (const auto& [slot, idle_gen] : due) scale_down_now(slot, idle_gen);
  due.clear();
  if (late_scale_downs_.empty()) late_scale_downs_.swap(due);  // keep the capacity
}

void Model::scale_down_now(std::uint32_t slot, std::uint32_t idle_gen) {
  const Slot& s = nodes_.slot(slot);
  if (!s.alive || s.idle_gen != idle_gen || s.pods != 0) return;
  if (engine_.now() < scale_down_from_) [[unlikely]] {
    hold_scale_down(slot, idle_gen);
    return;
  }
  // Nodes held back became due before this one: they go first, as they would have without the delay.
  if (!held_.empty()) [[unlikely]]
    release_held_scale_downs();
  const NodePool& p = sc_.cluster.node_pools[s.pool];
  if (nodes_.pool(s.pool).nodes <= p.autoscaling.min) return;
  // Only an unneeded node goes: one that a pending pod fits is where the scheduler puts that pod before
  // the autoscaler's next loop (CA's filter-out-schedulable counts such pods as placed). It is looked at
  // again scale_down_idle later, at least a second (with scale_down_idle 0 the node went the instant
  // its pod ended, under the pods waiting for it, and the pool churned through new nodes).
  for (std::uint32_t c = 0; c < sched_.size(); ++c)
    if (!sched_.cls(c).queue.empty() && sched_.fits_on(sched_.cls(c), s)) {
      engine_.schedule_at(
          scan_time(engine_.now() + std::max(p.autoscaling.scale_down_idle, Duration::from_s(1))), kScaleDown,
          slot, idle_gen);
      return;
    }
  remove_node(slot);
}

void Model::hold_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
  held_.emplace_back(slot, idle_gen);  // events fire in time order: held_ stays in the order nodes were due
  if (resume_pending_) return;
  resume_pending_ = true;
  engine_.schedule_at(scan_time(scale_down_from_), kScaleDownResume, 0);
}

// The held nodes, each as its own kScaleDown would have done; none is held again, as now is past
// scale_down_from_ and nothing here scales up.
void Model::release_held_scale_downs() {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held;
  held.swap(held_);
  for (const auto& [slot, idle_gen] : held) scale_down_now(slot, idle_gen);
  held.clear();
  if (held_.empty()) held_.swap(held);  // keep the capacity
}

void Model::on_scale_down_resume() {
  if (engine_.now() < scale_down_from_) {  // a scale-up since moved the end of the delay
    engine_.schedule_at(scan_time(scale_down_from_), kScaleDownResume, 0);
    return;
  }
  resume_pending_ = false;
  // Due now: looked at after every other event of this instant, as a node due by its own idle time is,
  // and before the nodes that became due after them.
  if (held_.empty()) return;
  late_scale_downs_.insert(late_scale_downs_.begin(), held_.begin(), held_.end());
  held_.clear();
  schedule_late_scale_downs();
}

}  // namespace
}  // namespace shardflow::sim
