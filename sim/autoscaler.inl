// The Model's cluster autoscaler (part of simulator.cpp's one translation unit; see model.hpp): scale up
// a pool for a class's unschedulable pods, scale down nodes idle for scale_down_idle.
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
    break;
  }
  // Look again later while the backlog lasts (the cluster autoscaler scans every 10 s).
  pc.scale_check_pending = true;
  engine_.schedule(Duration::from_s(10), kScaleUpCheck, c);
}

inline void Model::on_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
  const Slot& s = nodes_.slot(slot);
  if (!s.alive || s.idle_gen != idle_gen || s.pods != 0) return;
  const NodePool& p = sc_.cluster.node_pools[s.pool];
  if (nodes_.pool(s.pool).nodes <= p.autoscaling.min) return;
  remove_node(slot);
}

}  // namespace
}  // namespace shardflow::sim
