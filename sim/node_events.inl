// The Model's node events (part of simulator.cpp's one translation unit; see model.hpp): nodes are
// added (booting, or up at once), come up, go away; failures (MTBF) and spot reclaims evict their pods.
#pragma once

#include <cmath>

#include "model.hpp"

namespace shardflow::sim {
namespace {

// A node of the pool, usable from `up` (now: at once) and billed from `billed_from`.
inline void Model::add_node(std::uint32_t pool, SimTime up, SimTime billed_from) {
  const NodePool& p = sc_.cluster.node_pools[pool];
  NodeRecord r;
  r.name = p.name + "-" + std::to_string(nodes_.pool(pool).made++);
  r.pool = p.name;
  r.cpu = p.capacity_cpu();
  r.memory = p.capacity_memory();
  r.gpu = p.gpu;
  r.price_per_hour = node_price_per_hour(p);
  r.up = up;
  r.down = kNever;
  r.billed_from = billed_from;
  const auto record = static_cast<std::uint32_t>(trace_.nodes.size());
  trace_.nodes.push_back(std::move(r));
  if (trace_.nodes.size() == node_budget_) [[unlikely]]
    stop_for_churn();
  ++nodes_.pool(pool).nodes;
  nodes_.add_record(pool);
  if (up == engine_.now()) {
    const std::uint32_t slot = node_up(record, false);
    // Up at once (boot_time 0) during the run, for the autoscaler or as a replacement: the pods that wait
    // for room and fit it may take it, as they do a node that booted. (The nodes of the start need no
    // wake-up.)
    if (running_) sched_.on_cluster_change(engine_, &nodes_.slot(slot));
  } else {
    ++nodes_.pool(pool).booting;
    engine_.schedule_at(up, kNodeUp, record);
  }
}

// Returns the node's slot.
inline std::uint32_t Model::node_up(std::uint32_t record, bool booted) {
  const std::uint32_t pool = nodes_.pool_of_record(record);
  if (booted) --nodes_.pool(pool).booting;
  const std::uint32_t slot = nodes_.open_slot(pool, record);
  update_index(slot);
  refresh_images();
  const NodePool& p = sc_.cluster.node_pools[pool];
  if (p.mtbf > Duration::zero() || (p.spot && p.spot_mean_reclaim > Duration::zero())) {
    Rng rng = Rng::stream(opt_.seed, Stream::node, record);
    const double fail = p.mtbf > Duration::zero() ? rng.exponential(p.mtbf.seconds()) : HUGE_VAL;
    const double reclaim = p.spot && p.spot_mean_reclaim > Duration::zero()
                               ? rng.exponential(p.spot_mean_reclaim.seconds())
                               : HUGE_VAL;
    const double t = std::min(fail, reclaim);
    if (t < opt_.horizon.seconds())
      engine_.schedule(delay_from_seconds(t), kNodeFail, slot, nodes_.slot(slot).gen);
  }
  became_idle(slot);
  if (booted) sched_.on_cluster_change(engine_, &nodes_.slot(slot));
  return slot;
}

inline void Model::remove_node(std::uint32_t slot) {
  trace_.nodes[nodes_.slot(slot).record].down = engine_.now();
  nodes_.close_slot(slot);
  refresh_images();
}

inline void Model::on_node_fail(std::uint32_t slot, std::uint32_t gen) {
  Slot& s = nodes_.slot(slot);
  if (!s.alive || s.gen != gen) return;
  // Every pod on the node is evicted; its task runs again as a new attempt, a replacement (not a retry).
  evicted_.clear();
  for (std::uint32_t a = s.head; a != kNoSlot; a = att_[a].next) evicted_.push_back(a);
  for (std::uint32_t a : evicted_) {
    // A work-queue worker pod is gone: its in-flight item asks for a pod again below, and gets a new one.
    if (WorkQueue* wq = work_queue(att_[a].task)) --wq->live;
    cut_short(a, engine_.now());
    if (att_[a].phase == Phase::reading) storage_.stop(kRead, a, att_, engine_);
    if (att_[a].phase == Phase::writing) storage_.stop(kWrite, a, att_, engine_);
    att_[a].phase = Phase::evicted;
    att_[a].slot = att_[a].next = att_[a].prev = kNoSlot;
    ended(a, Outcome::evicted);
  }
  s.head = kNoSlot;
  const std::uint32_t pool = s.pool;
  remove_node(slot);
  // The pool replaces the node; the replacement is billed from now and usable after the boot time.
  add_node(pool, engine_.now() + sc_.cluster.node_pools[pool].autoscaling.boot_time, engine_.now());
  ++stats_.nodes_added;
  for (std::uint32_t a : evicted_) {
    if (!spec_tasks_.empty() && spec_evicted(a)) continue;  // another attempt of its task still runs
    exec_.attempt_evicted(att_[a].task);
    create_attempt(att_[a].task);
  }
}

}  // namespace
}  // namespace shardflow::sim
