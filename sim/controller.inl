// The Model's orchestrator controller (part of simulator.cpp's one translation unit; see model.hpp and
// controller.hpp). With overheads.control_plane.sync_period > 0, pods are created and their ends seen
// only when the controller syncs their key:
//   - the Job (Workflow) is created when its first task may start: it syncs at once;
//   - every pod event (running, ended) asks for a sync sync_period later; the earliest request wins;
//   - with follow_pods (shardflow's k8s controller, which watches the pods) a pod's success counts for
//     its task when the pod ends; the Job's sync still refills its slots and creates the pods;
//   - a sync sees the pods that ended since the last one (their tasks succeed, or fail and are retried
//     after the step's backoff or the controller's, whichever is longer; the controller's counts from
//     the end rounded down to timestamp_resolution, as the API stores it), creates the pods of the tasks
//     that may start (in slow-start batches, at most max_creates_per_sync), and, when anything changed,
//     writes the Job's status, whose update event asks for another sync sync_period later.
#pragma once

#include "controller.hpp"
#include "model.hpp"

namespace shardflow::sim {
namespace {

// The controller's API call asked for at `at`: when its client's rate limiter lets it go (client-go's
// token bucket, golang.org/x/time/rate: api_burst at once, then one every 1/api_qps; the calls served in
// the order asked). Without a limit, at once.
inline SimTime Model::api_call(SimTime at) {
  if (api_interval_ == Duration::zero()) return at;
  if (api_tat_ < at) api_tat_ = at;
  const SimTime granted = std::max(at, api_tat_ - api_tolerance_);
  api_tat_ = api_tat_ + api_interval_;
  return granted;
}

// client-go's record.EventSourceObjectSpamFilter: a burst of 25 events per source and object.
constexpr std::uint32_t kEventBurst = 25;

inline void Model::request_sync(std::uint32_t k, SimTime at) {
  ControllerKey& q = keys_[k];
  if (q.armed != kNever && q.armed <= at) return;
  q.armed = at;
  engine_.schedule_at(at, kSync, k, ++q.gen);
}

// A task may start (Execution's on_start, or its retry is due): its pod is created by a sync.
inline void Model::want_pod(TaskId t) {
  const std::uint32_t k = controller_key(t);
  ControllerKey& q = keys_[k];
  const ControlPlane& cp = sc_.overheads.control_plane;
  const bool room =
      cp.max_creates_per_sync == 0 || q.created < static_cast<std::uint32_t>(cp.max_creates_per_sync);
  if (q.last_sync == engine_.now() && room) {  // made possible by this instant's sync: it creates the pod
    const Duration delay = cp.create_batch * slow_start_batch(q.created++);
    // The create waits for its API token; its event (SuccessfulCreate) takes the next one, but only the
    // first kEventBurst of a Job's events are sent: client-go's event correlator drops the rest (its
    // EventSourceObjectSpamFilter: 25 per source and object, then one per 5 minutes, which no run here
    // waits for). So an Indexed Job of 200 pods sends 25, and 20 one-pod Jobs 20.
    const SimTime at = api_call(engine_.now() + delay);
    if (q.events < kEventBurst) {
      ++q.events;
      (void)api_call(at);
    }
    if (at == engine_.now())
      create_attempt(t);
    else
      engine_.schedule_at(at, kCreatePod, t);
    return;
  }
  q.to_create.push_back(t);
  if (!q.exists) {
    q.exists = true;
    request_sync(k, engine_.now());
  } else {
    request_sync(k, engine_.now() + cp.sync_period);
  }
}

inline void Model::pod_event(TaskId t) {
  const std::uint32_t k = controller_key(t);
  keys_[k].changed = true;
  request_sync(k, engine_.now() + sc_.overheads.control_plane.sync_period);
}

inline void Model::pod_ended(std::uint32_t a) {
  const Attempt& at = att_[a];
  const TaskId t = at.task;
  // follow_pods: the run's controller saw the pod end on its own watch; the Job's sync still counts it.
  const bool seen = sc_.overheads.control_plane.follow_pods && at.ended;
  keys_[controller_key(t)].ended.push_back(EndedPod{a, at.ended ? engine_.now() : kNever});
  if (seen && at.outcome == Outcome::succeeded) exec_.succeeded(t);
  pod_event(t);
}

inline void Model::on_sync(std::uint32_t k, std::uint32_t gen) {
  ControllerKey& q = keys_[k];
  if (gen != q.gen) return;
  const SimTime now = engine_.now();
  q.armed = kNever;
  const Duration latency = sc_.overheads.control_plane.sync_latency;
  if (latency == Duration::zero()) {
    const bool write = q.changed;
    q.changed = false;
    seen_.swap(q.ended);
    apply_sync(k, now, write);
    return;
  }
  // The sync reads the pods that ended by now; its writes (the pods it creates, the tasks it counts,
  // the Job's status) land sync_latency later. A sync that runs while an earlier one's write is still
  // pending joins that write.
  q.writing.insert(q.writing.end(), q.ended.begin(), q.ended.end());
  q.ended.clear();
  q.write_changed = q.write_changed || q.changed;
  q.changed = false;
  if (q.write_sync == kNever) {
    q.write_sync = now;
    engine_.schedule_at(now + latency, kSyncWrite, k, 0);
  }
}

inline void Model::on_sync_write(std::uint32_t k) {
  ControllerKey& q = keys_[k];
  const SimTime sync_time = q.write_sync;
  const bool write = q.write_changed;
  q.write_sync = kNever;
  q.write_changed = false;
  seen_.swap(q.writing);
  apply_sync(k, sync_time, write);
}

// A sync's effects, at the instant they land: seen_ holds the pods it saw end, in the order they ended.
// Its follow-up sync (the status update's event) counts from sync_time, when it read the state.
inline void Model::apply_sync(std::uint32_t k, SimTime sync_time, bool write) {
  ControllerKey& q = keys_[k];
  const SimTime now = engine_.now();
  const ControlPlane& cp = sc_.overheads.control_plane;
  q.last_sync = now;
  q.created = 0;
  std::uint32_t ended = 0;  // pods seen ended (a kfp-v2 driver pod's end is not one of the Job's)
  for (const auto [a, finished] : seen_) {
    write = true;
    ended += finished != kNever ? 1 : 0;
    // Copies: creating a pod may grow att_.
    const TaskId t = att_[a].task;
    const Outcome outcome = att_[a].outcome;
    const std::uint32_t number = att_[a].number;
    if (finished == kNever) {  // a kfp-v2 driver pod: now the executor pod
      enqueue(class_of_step(t), a);
    } else if (outcome == Outcome::succeeded) {
      if (!cp.follow_pods) exec_.succeeded(t);
    } else if (outcome == Outcome::cancelled) {
      // a speculative attempt whose sibling won (speculation.inl): nothing to do
    } else if (const auto delay = exec_.attempt_failed(t, finished, now)) {
      // follow_pods (shardflow's k8s backend): the retry is the Job controller's alone.
      const Duration backoff = controller_backoff(cp, static_cast<int>(number) + 1);
      // The controller's backoff counts from the end as the API stored it (controller_failure_time); the
      // step's own from the end itself.
      const SimTime failed_at = controller_failure_time(cp, finished);
      const SimTime at =
          cp.follow_pods ? failed_at + backoff : std::max(finished + *delay, failed_at + backoff);
      if (at <= now) {
        want_pod(t);
      } else {
        q.retries.push_back({t, at});
        request_sync(k, at);
      }
    }
  }
  seen_.clear();
  // Failed pods whose backoff is over, then the tasks waiting for their pod, lowest first.
  SimTime next_retry = kNever;
  std::erase_if(q.retries, [&](const ControllerKey::Retry& x) {
    if (x.at <= now) {
      q.to_create.push_back(x.task);
      return true;
    }
    if (next_retry == kNever || x.at < next_retry) next_retry = x.at;
    return false;
  });
  if (next_retry != kNever) request_sync(k, next_retry);
  if (!q.to_create.empty()) {
    write = true;
    creating_.swap(q.to_create);
    for (const TaskId t : creating_) want_pod(t);  // beyond max_creates_per_sync: back in to_create
    creating_.clear();
  }
  // The status writes and finalizer patches, after the creations (manageJob, then
  // trackJobStatusAndRemoveFinalizers): they take tokens the next creations wait for.
  if (cp.api_qps > 0) {
    if (ended > 0) {
      for (std::uint32_t i = 0; i < ended + 2; ++i) (void)api_call(now);  // status, a patch each, status
    } else if (write) {
      (void)api_call(now);
    }
  }
  if (write) request_sync(k, sync_time + cp.sync_period);
}

}  // namespace
}  // namespace shardflow::sim
