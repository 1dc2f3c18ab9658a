// The Model's pod lifecycle (part of simulator.cpp's one translation unit; see model.hpp):
// [driver pod, for kfp-v2] -> created -> queued -> decided -> bound -> image pull -> sandbox start ->
// input read -> run -> output write -> ended (succeeded, or failed and retried by the Execution).
#pragma once

#include "model.hpp"

namespace shardflow::sim {
namespace {

inline void Model::create_attempt(TaskId t) {
  if (!work_queues_.empty() && !take_worker(t)) return;  // queued for a work-queue worker pod
  if (!spec_tasks_.empty() && spec_won(t)) return;       // a backup its controller would make too late: none
  const auto a = static_cast<std::uint32_t>(att_.size());
  const auto [number, kind] = exec_.next_attempt(t, engine_.now());
  att_.push_back(new_attempt(t, number, kind));
  if (records_) new_record(t, number, kind, engine_.now(), kNever, -1, kNoPod);
  if (!spec_tasks_.empty()) spec_created(t, a);
  PodClass& c = sched_.cls(class_of_step(t));
  const bool driver = sc_.overheads.pods_per_task >= 2;
  if (c.never_fits || (driver && sched_.cls(sched_.driver_class()).never_fits)) {
    ended(a, Outcome::failed);
    rec(a).error =  // one text for all steps
        error_index(kFitsNoNode, 0, [] { return std::string("its pod fits no node it may use"); });
    att_[a].phase = Phase::finished;
    if (!work_queues_.empty()) give_back_worker(t);
    exec_.fail(t);
    return;
  }
  if (driver) {
    att_[a].phase = Phase::driver_queued;
    enqueue(sched_.driver_class(), a);
  } else {
    att_[a].phase = Phase::queued;
    enqueue(class_of_step(t), a);
  }
}

inline void Model::enqueue(std::uint32_t c, std::uint32_t a) {
  // A class's score tree is kept up to date from its first pod on.
  if (nodes_.use_trees() && !nodes_.live(c)) nodes_.make_live(c, sched_);
  sched_.enqueue(c, a, att_, engine_);
}

// One scheduling cycle: the scheduler's next pod; filter and score; bind or mark its class unschedulable.
inline void Model::on_decide() {
  if (sched_.list()) {
    // List scheduling, as workflow simulators do it: whenever a core frees, every ready task in id
    // order, each placed until the first that fits nowhere. The tasks that became ready at this instant
    // (the children of the task whose end freed the core) join first: their admission was queued after
    // this decision, since a pod's node is released before its task resolves. With free decisions the
    // whole list is placed in this one event, before any event the placements cause (a task of no run
    // time ends after the others are placed, as in WRENCH's scheduling pass).
    if (admit_pending_) on_admit();
    if (sched_.free_decisions()) {
      in_list_pass_ = true;
      do decide();
      while (sched_.has_candidate());
      in_list_pass_ = false;
      sched_.kick(engine_);
      return;
    }
  }
  decide();
}

// One scheduling cycle (a kDecide event, or one pass of the list).
inline void Model::decide() {
  sched_.decision_began();
  const std::uint32_t best = sched_.next_class(att_);
  if (best == kNoSlot) return;
  PodClass& pc = sched_.cls(best);
  const std::uint32_t a = pc.queue.pop_front();
  if (att_[a].cancelled) {  // a speculative attempt's sibling won while it was queued: dropped
    sched_.refresh(best);   // its next pod heads the class
    sched_.bound(best);     // it left the queue (the list policy's bookkeeping)
    if (!in_list_pass_) sched_.kick(engine_);
    return;
  }
  ++stats_.scheduling_attempts;
  const std::uint32_t slot = sched_.find_node(best, nodes_, stats_);
  if (slot != kNoSlot) {
    sched_.set_state(pc, ClassState::active);
    sched_.bound(best);
    bind(best, a, slot);
    if (pc.queue.empty()) {
      pc.fails = 0;
      pc.blocked_since = kNever;
    }
  } else {
    pc.queue.push_front(a);
    sched_.mark_unschedulable(best, engine_);
    arm_autoscaler(best);
  }
  if (!in_list_pass_) sched_.kick(engine_);
}

inline void Model::bind(std::uint32_t c, std::uint32_t a, std::uint32_t slot) {
  const PodClass& pc = sched_.cls(c);
  Slot& s = nodes_.slot(slot);
  if (s.pods == 0) ++s.idle_gen;
  s.cpu_used += pc.request.cpu;
  s.memory_used += pc.request.memory;
  s.gpu_used += pc.request.gpu;
  s.nz_cpu += pc.nonzero.cpu;
  s.nz_memory += pc.nonzero.memory;
  ++s.pods;
  update_index(slot);
  Attempt& at = att_[a];
  at.slot = slot;
  at.prev = kNoSlot;
  at.next = s.head;
  if (s.head != kNoSlot) att_[s.head].prev = a;
  s.head = a;
  const Duration bind_latency = sc_.cluster.scheduler.bind_latency;
  if (at.phase == Phase::driver_queued) {
    at.phase = Phase::driver_on_node;
  } else {
    at.phase = Phase::starting;
    rec(a).node = static_cast<std::int32_t>(s.record);
    rec(a).scheduled = engine_.now() + bind_latency;
  }
  schedule_start(a, engine_.now() + bind_latency);
}

// The pod (of class c) leaves its node.
inline void Model::release(std::uint32_t a, std::uint32_t c) {
  Attempt& at = att_[a];
  const std::uint32_t slot = at.slot;
  assert(slot != kNoSlot);
  const PodClass& pc = sched_.cls(c);
  Slot& s = nodes_.slot(slot);
  s.cpu_used -= pc.request.cpu;
  s.memory_used -= pc.request.memory;
  s.gpu_used -= pc.request.gpu;
  s.nz_cpu -= pc.nonzero.cpu;
  s.nz_memory -= pc.nonzero.memory;
  --s.pods;
  if (at.prev != kNoSlot)
    att_[at.prev].next = at.next;
  else
    s.head = at.next;
  if (at.next != kNoSlot) att_[at.next].prev = at.prev;
  at.slot = at.next = at.prev = kNoSlot;
  update_index(slot);
  if (s.pods == 0) became_idle(slot);
  sched_.on_cluster_change(engine_);
}

// What follows the binding (at `bound`), computed now: every bind has the same latency, so pods are
// bound in the order they were decided and the node's pull queue sees the same order either way; this
// saves an event per pod.
inline void Model::schedule_start(std::uint32_t a, SimTime bound) {
  Attempt& at = att_[a];
  const Overheads& ov = sc_.overheads;
  if (at.phase == Phase::driver_on_node) {
    engine_.schedule_at(bound + ov.sandbox_start + ov.driver_pod_duration, kDriverDone, a);
    return;
  }
  const PodClass& pc = sched_.cls(class_of_step(at.task));
  Slot& s = nodes_.slot(at.slot);
  SimTime& ready = nodes_.image_ready(at.slot, pc.image);
  if (ready == kNever) {
    // Not on the node and not being pulled: pull it, behind the node's other pulls when kubelet
    // serializes them (its default), else at once (each parallel pull at the full bandwidth).
    const SimTime start = sc_.overheads.serialize_image_pulls ? std::max(bound, s.pull_free) : bound;
    ready = start + pc.pull;
    s.pull_free = std::max(s.pull_free, ready);
    // kube-scheduler's ImageLocality sees the image once the pull is done (the node's status lists it).
    if (sched_.image_scored(pc.image)) {
      assert(std::uint64_t{at.slot} * nodes_.images() + pc.image <= 0xFFFFFFFFu);
      engine_.schedule_at(ready, kImagePulled, at.slot * nodes_.images() + pc.image, s.gen);
    }
  }
  const Duration wait = std::max(Duration::zero(), ready - bound);
  rec(a).image_pull = wait;
  const SimTime start = bound + wait + ov.sandbox_start;
  // Without input to read, the run's start is known now too: schedule its end directly.
  if (storage_.bandwidth(kRead) <= 0 || input_bytes(at.task) <= 0)
    start_run(a, start);
  else
    engine_.schedule_at(start, kReadStart, a);
}

inline void Model::on_read_start(std::uint32_t a) {
  if (att_[a].phase != Phase::starting) return;
  const double bytes = input_bytes(att_[a].task);
  if (bytes > 0 && storage_.bandwidth(kRead) > 0)
    storage_.start(kRead, a, bytes, att_, engine_);
  else
    start_run(a, engine_.now());
}

// A read ends: the run starts; a write ends: the pod ends.
inline void Model::on_storage(StorageDir dir, std::uint32_t gen) {
  storage_.on_event(dir, gen, att_, engine_, [this, dir](std::uint32_t a) {
    if (dir == kRead) {
      start_run(a, engine_.now());
      if (!work_queues_.empty()) correct_item_read(a);
    } else {
      AttemptRecord& r = rec(a);
      r.output_write = engine_.now() - r.output_write;
      end_attempt(a);
    }
  });
}

// The main container starts at `at` (now, or later when nothing can delay it): sample its run.
inline void Model::start_run(std::uint32_t a, SimTime at_time) {
  Attempt& at = att_[a];
  AttemptRecord& r = rec(a);
  at.phase = Phase::running;
  r.started = at_time;
  r.input_read = r.started - (r.scheduled + r.image_pull + sc_.overheads.sandbox_start);
  const TaskId t = at.task;
  const std::uint32_t key = at.kind == AttemptKind::backup
                                ? kBackupKey + at.number
                                : (sc_.overheads.repeat_first_attempt ? 0 : at.number);
  // Without draws made ahead (a sweep's), the call that draws them: sample_attempt inlines with `pre`
  // known to be null, as before there was a table to read.
  const AttemptDraws* pre = key == 0 && opt_.draws != nullptr ? opt_.draws->find(opt_.seed, t) : nullptr;
  const AttemptSample sample = pre == nullptr ? sample_attempt(component(t), plan_, t, key, opt_.seed)
                                              : sample_attempt(component(t), plan_, t, key, opt_.seed, pre);
  double ns = sample.run_ns;
  const double speed = sc_.cluster.node_pools[nodes_.slot(at.slot).pool].speed;
  if (speed > 0 && speed != 1) ns /= speed;  // a division is slow, and most nodes have speed 1
  at.will_fail = sample.fails;
  Duration run = delay_from_ns(ns);
  if (at.kind == AttemptKind::retry && exec_.has_retry_deadlines()) [[unlikely]]
    run = cut_at_deadline(a, at_time, run);
  engine_.schedule_at(at_time + run, kRunDone, a);
  if (!spec_.empty()) spec_started(a, at_time);
  if (controlled_) pod_event(t);  // Running (Ready): the Job's status.ready changes
}

inline void Model::on_run_done(std::uint32_t a) {
  Attempt& at = att_[a];
  if (at.phase != Phase::running) return;
  if (!spec_.empty()) spec_run_done(a);
  // A successful run writes its output, if any, before the pod ends; a failed one writes nothing.
  if (!at.will_fail && storage_.bandwidth(kWrite) > 0) {
    const double bytes = output_bytes(at.task);
    if (bytes > 0) {
      rec(a).output_write = engine_.now();  // when writing began, until it ends
      storage_.start(kWrite, a, bytes, att_, engine_);
      return;
    }
  }
  end_attempt(a);
}

// The pod's main container exited after its run (and output write): free the node, then the task is
// done, or retried, or failed for good.
inline void Model::end_attempt(std::uint32_t a) {
  if (!work_queues_.empty() && end_work_item(a)) return;
  if (!spec_tasks_.empty() && spec_end(a)) return;
  Attempt& at = att_[a];
  at.phase = Phase::finished;
  ended(a, at.will_fail ? Outcome::failed : Outcome::succeeded);
  const TaskId t = at.task;
  release(a, class_of_step(t));
  if (!at.will_fail) {
    if (controlled_)
      pod_ended(a);
    else
      exec_.succeeded(t);
    return;
  }
  failure_error(a);
  if (controlled_)
    pod_ended(a);
  else if (const auto delay = exec_.attempt_failed(t, engine_.now(), engine_.now()))
    engine_.schedule(*delay, kRetry, t);
}

// Task t wants a pod. Not a work-queue item: true. A work-queue item: true if it gets a new worker pod
// (counted now), false if it waits in the queue for one.
bool Model::take_worker(TaskId t) {
  WorkQueue* wq = work_queue(t);
  if (wq == nullptr) return true;
  if (wq->full()) {  // every worker pod exists, or one is taking the next item
    wq->pending.emplace_back(t, engine_.now());
    return false;
  }
  ++wq->live;
  return true;
}

// The worker pod taken for t will not exist (t fits no node).
void Model::give_back_worker(TaskId t) {
  if (WorkQueue* wq = work_queue(t)) --wq->live;
}

// A run started after a read (`a` read its input): an item a work-queue pod took after another (it has
// the pod's name already) had no sandbox start, which start_run took out of its read time.
void Model::correct_item_read(std::uint32_t a) {
  AttemptRecord& r = rec(a);
  if (r.pod != kNoPod && work_queue(att_[a].task) != nullptr) r.input_read += sc_.overheads.sandbox_start;
}

// A work-queue pod finished an item (false: `a` is not a work-queue item; nothing done). The queue, not the
// orchestrator, tracks items: the item succeeds, or fails and goes back to the queue (at once without a
// backoff, else when its backoff is over); then the pod takes the next waiting item, or exits if there is
// none.
bool Model::end_work_item(std::uint32_t a) {
  const TaskId t = att_[a].task;
  if (work_queue(t) == nullptr) return false;
  const bool failed = att_[a].will_fail;
  att_[a].phase = Phase::finished;
  ended(a, failed ? Outcome::failed : Outcome::succeeded);
  if (failed) failure_error(a);
  WorkQueue& wq = work_queues_[plan_.step_of(t)];
  wq.handing = true;  // items admitted by what follows queue for this pod
  if (!failed) {
    exec_.succeeded(t);
  } else if (const auto delay = exec_.attempt_failed(t, engine_.now(), engine_.now())) {
    if (*delay == Duration::zero())
      wq.pending.emplace_back(t, engine_.now());
    else
      engine_.schedule(*delay, kRetry, t);
  }
  wq.handing = false;
  if (wq.pending.empty()) {
    --wq.live;
    release(a, class_of_step(t));
    if (controlled_) pod_event(t);
    return true;
  }
  const auto [next, queued_at] = wq.pending.front();
  wq.pending.pop_front();
  hand_over(a, next, queued_at);
  // More items than this pod takes, and room for more workers: start them.
  while (!wq.pending.empty() && wq.live < wq.workers) {
    const TaskId more = wq.pending.front().first;
    wq.pending.pop_front();
    create_attempt(more);
  }
  return true;
}

// Pod attempt `a` (an item that just ended) takes item `next`: a new attempt record on the same node and
// pod, bound now, with no image pull or sandbox start; it reads its input and runs.
void Model::hand_over(std::uint32_t a, TaskId next, SimTime queued_at) {
  if (records_ && rec(a).pod == kNoPod) {  // the pod's name, kept for every item it runs
    const AttemptRecord& first = rec(a);
    trace_.pod_names.push_back(pod_name(first, pod_name_prefix(plan_.steps()[first.step].path)));
    rec(a).pod = static_cast<std::uint32_t>(trace_.pod_names.size() - 1);
  }
  const auto b = static_cast<std::uint32_t>(att_.size());
  const auto [number, kind] = exec_.next_attempt(next, engine_.now());
  att_.push_back(new_attempt(next, number, kind));
  if (records_) new_record(next, number, kind, queued_at, engine_.now(), rec(a).node, rec(a).pod);
  Attempt& from = att_[a];
  Attempt& to = att_[b];
  // `b` takes `a`'s place in the node's list of pods.
  to.slot = from.slot;
  to.prev = from.prev;
  to.next = from.next;
  if (from.prev != kNoSlot)
    att_[from.prev].next = b;
  else
    nodes_.slot(from.slot).head = b;
  if (from.next != kNoSlot) att_[from.next].prev = b;
  from.slot = from.next = from.prev = kNoSlot;
  to.phase = Phase::starting;
  if (storage_.bandwidth(kRead) <= 0 || input_bytes(next) <= 0) {
    start_run(b, engine_.now());
    rec(b).input_read = Duration::zero();  // start_run took a sandbox start out of it
  } else
    engine_.schedule_at(engine_.now(), kReadStart, b);
}

// An image ImageLocality scores finished pulling on a node: the node's key changes, and the image's
// score on every node holding it may too (its spread grew).
inline void Model::on_image_pulled(std::uint32_t target, std::uint32_t gen) {
  const std::uint32_t slot = target / nodes_.images(), image = target % nodes_.images();
  const Slot& s = nodes_.slot(slot);
  if (!s.alive || s.gen != gen) return;
  nodes_.add_image(slot, image);
  if (!refresh_image(image)) update_index(slot);
}

// ImageLocality's score of the image (its spread over the nodes that are up); if it changed, every node
// holding the image gets a new key: O(slots) to find them, at most once per change of the score (0 to
// 100), and per node added or removed only when the spread's change moves the truncated score.
inline bool Model::refresh_image(std::uint32_t image) {
  if (!sched_.refresh_image_score(image, nodes_.nodes_with_image(image), nodes_.alive())) return false;
  const auto slots = static_cast<std::uint32_t>(nodes_.slots().size());
  for (std::uint32_t slot = 0; slot < slots; ++slot)
    if (nodes_.slot(slot).alive && nodes_.has_image(slot, image)) update_index(slot);
  return true;
}

// The number of nodes changed: every scored image's spread did.
inline void Model::refresh_images() {
  if (!sched_.any_image_scored()) return;
  for (std::uint32_t i = 0; i < nodes_.images(); ++i)
    if (sched_.image_scored(i)) refresh_image(i);
}

inline void Model::on_driver_done(std::uint32_t a) {
  if (att_[a].phase != Phase::driver_on_node) return;
  att_[a].phase = Phase::queued;
  release(a, sched_.driver_class());
  if (controlled_)
    pod_ended(a);  // the executor pod is created by the controller's next sync
  else
    enqueue(class_of_step(att_[a].task), a);
}

}  // namespace
}  // namespace shardflow::sim
