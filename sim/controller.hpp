// The orchestrator's controller (private to sim/): the state of overheads.control_plane's work queue,
// one key per Job (scope step) or one for the whole run (scope run, a Workflow). See
// include/shardflow/core/cluster.hpp (ControlPlane) for what it models and controller.inl for the
// Model's side.
#pragma once

#include <cstdint>
#include <vector>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::sim {
namespace {

/// A pod the controller saw end (or, finished kNever, a kfp-v2 driver pod that finished its work).
struct EndedPod {
  std::uint32_t attempt;
  SimTime finished;  // the attempt's end (AttemptRecord::finished): its failure's backoff counts from it
};

/// One key of the controller's work queue (client-go's delaying queue: a request to sync at time t
/// when one is already waiting keeps the earlier of the two).
struct ControllerKey {
  SimTime armed = kNever;         // the sync waiting in the queue, if any
  std::uint32_t gen = 0;          // bumped when `armed` moves earlier: the older event is stale
  SimTime last_sync = kNever;     // when the last sync's writes landed (pods wanted then join them)
  std::uint32_t created = 0;      // pods created by the last sync so far (their slow-start batch)
  std::uint32_t events = 0;       // events the Job's controller sent for it (its spam filter's burst)
  bool exists = false;            // the Job (or Workflow) was created: its first sync has been asked for
  bool changed = false;           // a pod event since the last sync: the sync writes the Job's status
  std::vector<TaskId> to_create;  // tasks whose pod the next sync creates
  std::vector<EndedPod> ended;    // pods that ended, not yet seen
  /// With sync_latency: the attempts a sync saw, whose effects its write (sync_latency later) applies,
  /// and that sync's time (kNever: no write pending; its follow-up sync counts from it).
  std::vector<EndedPod> writing;
  SimTime write_sync = kNever;
  bool write_changed = false;  // the pending write updates the Job's status
  struct Retry {
    TaskId task;
    SimTime at;  // the failed pod's end plus its backoff
  };
  std::vector<Retry> retries;
};

/// Pod k (from 0) of one sync's creations is in slow-start batch floor(log2(k + 1)): batches of 1, 2,
/// 4, ... pods, as controller.SlowStartInitialBatchSize (1) doubling in the Job controller's manageJob.
constexpr std::uint32_t slow_start_batch(std::uint32_t k) {
  std::uint32_t b = 0;
  for (std::uint64_t v = std::uint64_t{k} + 1; v > 1; v >>= 1) ++b;
  return b;
}

/// The Job controller's backoff before re-creating a pod after its n-th failure (n >= 1):
/// failure_backoff * 2^(n-1), at most max_failure_backoff (backoff_utils.go's
/// getRemainingTimeForFailuresCount); 0 when failure_backoff is 0.
inline Duration controller_backoff(const ControlPlane& c, int failures) {
  if (c.failure_backoff <= Duration::zero() || failures <= 0) return Duration::zero();
  Duration d = c.failure_backoff;
  for (int i = 1; i < failures; ++i) {
    d = d + d;
    if (c.max_failure_backoff > Duration::zero() && d >= c.max_failure_backoff) return c.max_failure_backoff;
  }
  return d;
}

/// When the Job controller counts a failed pod's backoff from: its end as the API stores it. With
/// timestamp_resolution R > 0 (a container's `finishedAt`, or the pod's Ready=False transition, is a
/// metav1.Time: whole seconds) that is the end rounded down to the wall clock's multiples of R, the wall
/// clock being clock_phase past one at simulated time 0: floor((end + phase) / R) * R - phase.
/// backoff_utils.go's getFinishedTime; the remaining backoff (and so the sync it requeues the Job for)
/// counts from it.
inline SimTime controller_failure_time(const ControlPlane& c, SimTime end) {
  const std::int64_t r = c.timestamp_resolution.ns();
  if (r <= 0) return end;
  const std::int64_t wall = end.ns() + c.clock_phase.ns();  // >= 0: end and the phase are
  return SimTime::from_ns(wall - wall % r - c.clock_phase.ns());
}

}  // namespace
}  // namespace shardflow::sim
