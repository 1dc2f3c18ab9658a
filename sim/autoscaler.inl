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
  engine_.schedule(p.autoscaling.scale_down_idle, kScaleDown, slot, ++s.idle_gen);
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
// new nodes (from the first eligible pool with room) to hold the ones the booting nodes will not.
inline void Model::on_scale_up_check(std::uint32_t c) {
  PodClass& pc = sched_.cls(c);
  pc.scale_check_pending = false;
  if (pc.queue.empty() || pc.blocked_since == kNever) return;
  const auto& pools = sc_.cluster.node_pools;
  for (std::uint32_t p = 0; p < pools.size(); ++p) {
    const NodePool& np = pools[p];
    const std::int64_t per_node = pods_per_node(pc, np);
    if (!(pc.pools >> p & 1) || !np.autoscaling.enabled() || per_node == 0) continue;
    if (engine_.now() - pc.blocked_since < np.autoscaling.scale_up_delay) {
      pc.scale_check_pending = true;
      engine_.schedule_at(pc.blocked_since + np.autoscaling.scale_up_delay, kScaleUpCheck, c);
      return;
    }
    const PoolState& ps = nodes_.pool(p);
    const std::int64_t uncovered = static_cast<std::int64_t>(pc.queue.size()) - ps.booting * per_node;
    const std::int64_t room = np.autoscaling.max - ps.nodes;
    if (uncovered <= 0) break;
    if (room <= 0) continue;
    const std::int64_t add = std::min(room, (uncovered + per_node - 1) / per_node);
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

// The node has been idle for its pool's scale_down_idle (idle_gen says it has not been busy since).
// Within scale_down_delay_after_add of the last scale-up it is held back until that delay ends (a later
// scale-up moves the end further), as the cluster autoscaler keeps counting a node's unneeded time while
// scale-down is in cooldown and removes it at its first loop after. So a node idle since t goes at
// max(t + scale_down_idle, last scale-up + delay), if still idle and its pool above min then.
inline void Model::on_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
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
  remove_node(slot);
}

void Model::hold_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
  held_.emplace_back(slot, idle_gen);  // events fire in time order: held_ stays in the order nodes were due
  if (resume_pending_) return;
  resume_pending_ = true;
  engine_.schedule_at(scale_down_from_, kScaleDownResume, 0);
}

// The held nodes, each as its own kScaleDown would have done; none is held again, as now is past
// scale_down_from_ and nothing here scales up.
void Model::release_held_scale_downs() {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held;
  held.swap(held_);
  for (const auto& [slot, idle_gen] : held) on_scale_down(slot, idle_gen);
  held.clear();
  if (held_.empty()) held_.swap(held);  // keep the capacity
}

void Model::on_scale_down_resume() {
  if (engine_.now() < scale_down_from_) {  // a scale-up since moved the end of the delay
    engine_.schedule_at(scale_down_from_, kScaleDownResume, 0);
    return;
  }
  resume_pending_ = false;
  release_held_scale_downs();
}

}  // namespace
}  // namespace shardflow::sim
