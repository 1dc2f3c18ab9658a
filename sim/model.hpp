// The simulator's model (private to sim/; simulator.cpp is its one translation unit). The Model owns the
// engine and the trace and drives core's Execution (the Plan's rules) through its hooks; its state is in
// parts, each a small class with inline member functions so that the hot paths compile as one:
//   SharedStorage  storage.hpp    the two processor-sharing channels (reads, writes)
//   Scheduler      scheduler.hpp  pod classes, queue, backoff, filter and score, the decision
//   Nodes          nodes.hpp      node slots, pools, image cache, the NodeIndex / ScoreSearch upkeep
// and what moves a pod or a node from one part to another is the Model's, in one file per concern:
//   pod_lifecycle.inl  pods: created, decided, bound, image pull, sandbox, driver pods, read, run, write
//   node_events.inl    nodes: added, up, removed, failures and spot reclaims
//   autoscaler.inl     the cluster autoscaler: scale up for unschedulable pods, scale down idle nodes
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/execution.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/sim/simulator.hpp>

#include "controller.hpp"
#include "engine.hpp"
#include "nodes.hpp"
#include "pods.hpp"
#include "prefault.hpp"
#include "scheduler.hpp"
#include "storage.hpp"

namespace shardflow::sim {
namespace {

class Model {
 public:
  Model(const Scenario& scenario, const Plan& plan, const SimOptions& options)
      : sc_(checked(scenario)),
        plan_(plan),
        opt_(options),
        exec_(plan, *this),
        sched_(scenario, plan, Rng::stream(options.seed, Stream::scheduler)),
        nodes_(scenario.cluster.node_pools, initial_slots(scenario), use_trees(options, sched_),
               sched_.size(), sched_.images()),
        storage_(scenario.cluster.storage.read_bytes_per_second,
                 scenario.cluster.storage.write_bytes_per_second) {
    trace_.backend = "sim";
    trace_.scenario = sc_.name;
    trace_.seed = opt_.seed;
    for (const PlanStep& s : plan_.steps()) trace_.steps.push_back(s.path);
    init_speculation();
    // Speculation reads its attempts' start times and steps from their records: it keeps them.
    records_ = opt_.records || !spec_.empty();
    trace_.records = records_;
    const std::size_t expected = plan_.task_count() + plan_.task_count() / 8 + 16;
    if (records_) {
      trace_.attempts.reserve(expected);
      prefault(trace_.attempts.data(), plan_.task_count() * sizeof(AttemptRecord));
      recs_ = trace_.attempts.data();
    } else {
      recs_ = &scratch_;  // every record written to this one, read by nobody
      rec_mask_ = 0;
    }
    att_.reserve(expected);
    sched_.use_attempts(&att_, opt_.class_choice);
    prefault(att_.data(), plan_.task_count() * sizeof(Attempt));
    progress_every_ = std::max<std::uint64_t>(1, plan_.size() / 100);
    // Nodes that fail, are reclaimed or scaled down faster than tasks finish are replaced for ever: the
    // run stops (as at the horizon) once it has made this many, rather than fill the memory with them.
    std::uint64_t most_nodes = 0;
    for (const NodePool& p : sc_.cluster.node_pools)
      most_nodes += static_cast<std::uint64_t>(p.count) + static_cast<std::uint64_t>(p.autoscaling.max);
    // At most SimOptions::most_nodes_made: with autoscaling.max in the millions the formula let a
    // hopeless run fill the memory before it stopped.
    node_budget_ =
        std::min<std::uint64_t>(100'000 + 100 * most_nodes, std::max<std::uint64_t>(1, opt_.most_nodes_made));
    stats_.step_done.assign(plan_.steps().size(), kNever);
    controlled_ = sc_.overheads.control_plane.enabled();
    // A step's done time is its Job's condition: complete_latency after the write that counted its last
    // task (scope step, the Job controller counting the pods; controller.inl).
    const ControlPlane& cp = sc_.overheads.control_plane;
    if (controlled_ && cp.scope == ControlPlane::Scope::step && !cp.follow_pods)
      condition_lag_ = cp.complete_latency;
    if (controlled_) init_keys();
    if (controlled_ && cp.api_qps > 0) {
      // Rounded to the nearest nanosecond; a rate so low that its interval passes the range of times is
      // the longest (the run meets its horizon), not a cast's overflow.
      const double interval_ns = 1e9 / cp.api_qps + 0.5;
      api_interval_ =
          interval_ns < 9.2e18 ? Duration::from_ns(static_cast<std::int64_t>(interval_ns)) : Duration::max();
      api_tolerance_ = api_interval_ * (cp.api_burst - 1);
    }
    for (std::size_t i = 0; i < plan_.steps().size(); ++i)
      if (plan_.steps()[i].workers != 0) {
        work_queues_.resize(plan_.steps().size());
        work_queues_[i].workers = plan_.steps()[i].workers;
      }
    if (nodes_.use_trees()) {
      std::vector<std::uint64_t> left(sched_.size(), 0);
      for (std::size_t i = 0; i < plan_.steps().size(); ++i) left[i] = plan_.steps()[i].instances;
      if (sc_.overheads.pods_per_task >= 2) left[sched_.driver_class()] = plan_.task_count();
      nodes_.set_class_tasks(std::move(left));
    }
  }

  void run() {
    for (std::uint32_t p = 0; p < sc_.cluster.node_pools.size(); ++p)
      for (int i = 0; i < initial_count(sc_.cluster.node_pools[p]); ++i)
        add_node(p, SimTime::zero(), SimTime::zero());
    running_ = true;
    exec_.start();
    if (!exec_.all_resolved()) engine_.run([this](const Event& e) { handle(e); });
    finish();
  }

  Trace take_trace() { return std::move(trace_); }
  [[nodiscard]] SimStats stats() const {
    SimStats s = stats_;
    s.events = engine_.events_processed();
    return s;
  }

  // ---- tasks: the Plan's execution rules are core's Execution; these are its hooks -------------------
  // A component task became ready: admit it with the others that became ready at this instant.
  void on_ready(TaskId t) {
    ready_batch_.push_back(t);
    if (!admit_pending_) {
      admit_pending_ = true;
      engine_.schedule(Duration::zero(), kAdmit, 0);
    }
  }
  // Admitted past its limits: its first pod is created now, or by the controller's sync.
  // A work-queue item while every worker pod exists goes straight to the queue, not through the
  // orchestrator (which creates the worker pods only).
  void on_start(TaskId t) {
    if (controlled_ && (work_queues_.empty() || !queue_is_full(t)))
      want_pod(t);
    else
      create_attempt(t);
  }
  void on_resolved(TaskId t) {
    if (!plan_.is_join(t)) stats_.step_done[plan_.step_of(t)] = engine_.now() + condition_lag_;
    const std::uint64_t resolved = exec_.resolved_count();
    // About every 1%, and at the end (up to 1 whatever the plan's size); no division when nobody listens.
    if (opt_.progress && (resolved % progress_every_ == 0 || resolved == plan_.size()))
      opt_.progress(static_cast<double>(resolved) / static_cast<double>(plan_.size()));
    if (!plan_.is_join(t) && nodes_.use_trees()) {
      nodes_.class_task_resolved(plan_.step_of(t));
      if (sc_.overheads.pods_per_task >= 2) nodes_.class_task_resolved(sched_.driver_class());
    }
  }
  void on_all_resolved() {
    end_ = engine_.now();
    engine_.stop();
  }

 private:
  static const Scenario& checked(const Scenario& sc) {
    const auto& pools = sc.cluster.node_pools;
    if (pools.size() > 64)
      throw InputError(pools[64].where, "cluster.node_pools[64]",
                       "the simulator supports at most 64 node pools, got " + std::to_string(pools.size()));
    return sc;
  }
  static std::uint32_t initial_slots(const Scenario& sc) {
    std::uint32_t initial = 0;
    for (const NodePool& p : sc.cluster.node_pools)
      initial += static_cast<std::uint32_t>(std::max(0, initial_count(p)));
    return initial;
  }
  // Per-class score trees answer a decision in O(log n); with many classes, keeping every tree up to
  // date on each node change would cost more than it saves, so the node index scan is used instead.
  static bool use_trees(const SimOptions& o, const Scheduler& sched) {
    return o.node_search == NodeSearch::score_tree && sched.size() <= kMaxTreeClasses && !sched.list();
  }

  [[nodiscard]] std::uint32_t class_of_step(TaskId t) const { return plan_.step_of(t); }
  [[nodiscard]] const Component& component(TaskId t) const {
    return plan_.steps()[plan_.step_of(t)].component;
  }
  [[nodiscard]] double input_bytes(TaskId t) const { return sample_input_bytes(plan_, t, opt_.seed); }
  [[nodiscard]] double output_bytes(TaskId t) const { return sample_output_bytes(plan_, t, opt_.seed); }

  void handle(const Event& e) {
    if (e.at() > opt_.horizon ||
        (opt_.stop != nullptr && (engine_.events_processed() & 4095) == 0 && opt_.stop->load())) {
      engine_.stop();
      return;
    }
    switch (e.kind()) {
      case kAdmit:
        on_admit();
        break;
      case kDecide:
        on_decide();
        break;
      case kClassWake:
        sched_.on_class_wake(e.target, e.gen, engine_);
        break;
      case kReadStart:
        on_read_start(e.target);
        break;
      case kStorage:
        on_storage(static_cast<StorageDir>(e.target), e.gen);
        break;
      case kRunDone:
        on_run_done(e.target);
        break;
      case kRetry:
        create_attempt(e.target);
        break;
      case kDriverDone:
        on_driver_done(e.target);
        break;
      case kNodeFail:
        on_node_fail(e.target, e.gen);
        break;
      case kNodeUp:
        node_up(e.target);
        break;
      case kScaleUpCheck:
        on_scale_up_check(e.target);
        break;
      case kScaleDown:
        on_scale_down(e.target, e.gen);
        break;
      case kScaleDownResume:
        if (e.target == kLateScaleDowns)
          on_late_scale_downs();
        else
          on_scale_down_resume();
        break;
      case kSync:
        on_sync(e.target, e.gen);
        break;
      case kCreatePod:
        create_attempt(e.target);
        break;
      case kSyncWrite:
        on_sync_write(e.target);
        break;
      case kImagePulled:
        on_image_pulled(e.target, e.gen);
        break;
      case kSpecCheck:
        on_spec_check(e.target, e.gen);
        break;
      default:
        assert(false && "unknown event kind");
    }
  }

  void on_admit() {
    admit_pending_ = false;
    admitting_.swap(ready_batch_);
    // Usually already in id order (tasks become ready in id order within an instant).
    if (!std::is_sorted(admitting_.begin(), admitting_.end()))
      std::sort(admitting_.begin(), admitting_.end());
    for (TaskId t : admitting_) exec_.admit(t);
    admitting_.clear();
  }

  // The node's state changed: update the scheduler's search structures.
  [[gnu::always_inline]] void update_index(std::uint32_t slot) { nodes_.update(slot, sched_); }

  // ---- pods (pod_lifecycle.inl) -------------------------------------------------------------------------
  inline void create_attempt(TaskId t);
  [[gnu::always_inline]] inline void enqueue(std::uint32_t c, std::uint32_t a);
  inline void on_decide();
  inline void decide();
  inline void bind(std::uint32_t c, std::uint32_t a, std::uint32_t slot);
  inline void release(std::uint32_t a, std::uint32_t c);
  inline void schedule_start(std::uint32_t a, SimTime bound);
  inline void on_read_start(std::uint32_t a);
  inline void on_storage(StorageDir dir, std::uint32_t gen);
  inline void start_run(std::uint32_t a, SimTime at_time);
  inline void on_run_done(std::uint32_t a);
  inline void end_attempt(std::uint32_t a);
  // Work queues are rare: kept out of line, so that the per-pod path stays as it was without them.
  [[gnu::noinline, gnu::cold]] bool take_worker(TaskId t);
  [[gnu::noinline, gnu::cold]] void give_back_worker(TaskId t);
  [[gnu::noinline, gnu::cold]] void correct_item_read(std::uint32_t a);
  [[gnu::noinline, gnu::cold]] bool end_work_item(std::uint32_t a);
  [[nodiscard]] bool queue_is_full(TaskId t) {
    const WorkQueue* wq = work_queue(t);
    return wq != nullptr && wq->full();
  }
  [[gnu::noinline, gnu::cold]] void hand_over(std::uint32_t a, TaskId next, SimTime queued_at);
  [[nodiscard]] WorkQueue* work_queue(TaskId t) {
    return work_queues_.empty() || work_queues_[plan_.step_of(t)].workers == 0
               ? nullptr
               : &work_queues_[plan_.step_of(t)];
  }
  // Speculative execution (`speculation`, speculation.inl): rare, out of line like the work queues.
  void init_speculation();
  [[gnu::noinline, gnu::cold]] bool spec_won(TaskId t) const;
  [[gnu::noinline, gnu::cold]] void spec_created(TaskId t, std::uint32_t a);
  [[gnu::noinline, gnu::cold]] void spec_started(std::uint32_t a, SimTime at_time);
  [[gnu::noinline, gnu::cold]] void spec_run_done(std::uint32_t a);
  [[gnu::noinline, gnu::cold]] bool spec_end(std::uint32_t a);
  [[gnu::noinline, gnu::cold]] bool spec_evicted(std::uint32_t a);
  void spec_cancel(std::uint32_t a);
  void spec_arm(std::uint32_t step);
  void on_spec_check(std::uint32_t step, std::uint32_t gen);
  inline void on_driver_done(std::uint32_t a);
  inline void on_image_pulled(std::uint32_t target, std::uint32_t gen);
  inline bool refresh_image(std::uint32_t image);
  inline void refresh_images();

  // ---- the orchestrator's controller (controller.inl) ----------------------------------------------------
  [[nodiscard]] std::uint32_t controller_key(TaskId t) const {
    if (sc_.overheads.control_plane.scope == ControlPlane::Scope::run) return 0;
    return task_key_.empty() ? plan_.step_of(t) : task_key_[t];
  }
  // Scope step: a key per step instance, (step, group iteration), as the k8s backend makes a Job for each
  // (docs/k8s-backend.md). Without looped groups that is the step itself, and task_key_ stays empty.
  void init_keys() {
    std::size_t n = plan_.steps().size();
    if (sc_.overheads.control_plane.scope == ControlPlane::Scope::step && plan_.scopes().size() > 1) {
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> index;
      task_key_.assign(plan_.size(), 0);
      for (TaskId t = 0; t < plan_.size(); ++t)
        if (!plan_.is_join(t))
          task_key_[t] = index
                             .try_emplace({plan_.step_of(t), plan_.scope_of(t)},
                                          static_cast<std::uint32_t>(index.size()))
                             .first->second;
      n = index.size();
    }
    keys_.resize(std::max<std::size_t>(1, n));
  }
  inline void request_sync(std::uint32_t k, SimTime at);
  inline SimTime api_call(SimTime at);
  inline void want_pod(TaskId t);
  inline void pod_event(TaskId t);
  inline void pod_ended(std::uint32_t a);
  inline void on_sync(std::uint32_t k, std::uint32_t gen);
  inline void on_sync_write(std::uint32_t k);
  inline void apply_sync(std::uint32_t k, SimTime sync_time, bool write);

  // ---- nodes (node_events.inl) ------------------------------------------------------------------------
  inline void add_node(std::uint32_t pool, SimTime up, SimTime billed_from);
  inline std::uint32_t node_up(std::uint32_t record, bool booted = true);
  inline void remove_node(std::uint32_t slot);
  inline void on_node_fail(std::uint32_t slot, std::uint32_t gen);
  [[gnu::cold, gnu::noinline]] void stop_for_churn() {
    std::string why;
    for (const NodePool& p : sc_.cluster.node_pools) {
      std::string what;
      if (p.mtbf > Duration::zero()) what += "mtbf " + format_duration(p.mtbf);
      if (p.spot && p.spot_mean_reclaim > Duration::zero())
        what += (what.empty() ? "" : ", ") + std::string("spot.mean_reclaim ") +
                format_duration(p.spot_mean_reclaim);
      if (p.autoscaling.enabled())
        what += (what.empty() ? "" : ", ") + std::string("autoscaling.scale_down_idle ") +
                format_duration(p.autoscaling.scale_down_idle);
      if (!what.empty()) why += (why.empty() ? "" : "; ") + ("pool " + p.name + ": " + what);
    }
    trace_.stopped_early = "it had made " + std::to_string(trace_.nodes.size()) +
                           " nodes, each replacing one that failed, was reclaimed or was scaled down (" +
                           why + "): nodes go away faster than the tasks can finish";
    engine_.stop();
  }

  // ---- the autoscaler (autoscaler.inl) ------------------------------------------------------------------
  inline void became_idle(std::uint32_t slot);
  inline void arm_autoscaler(std::uint32_t c);
  inline void on_scale_up_check(std::uint32_t c);
  inline std::int64_t pods_without_room(std::uint32_t c);
  inline void on_scale_down(std::uint32_t slot, std::uint32_t idle_gen);
  void schedule_late_scale_downs();
  void on_late_scale_downs();
  void scale_down_now(std::uint32_t slot, std::uint32_t idle_gen);
  // Within scale_down_delay_after_add of a scale-up: rare, out of line.
  [[gnu::noinline, gnu::cold]] void hold_scale_down(std::uint32_t slot, std::uint32_t idle_gen);
  [[gnu::noinline]] void release_held_scale_downs();
  [[nodiscard]] SimTime scan_time(SimTime t) const;
  void on_scale_down_resume();

  // ---- why attempts failed (Trace::errors, one text per reason and step) ----------------------------------
  enum ErrorKind : std::uint32_t { kSampled = 0, kFitsNoNode = 1, kPastDeadline = 2, kErrorKinds = 3 };
  // The index of the step's text for `kind` in Trace::errors, made by text() the first time.
  template <class Text>
  [[gnu::cold, gnu::noinline]] std::uint32_t error_index(ErrorKind kind, std::uint32_t step, Text&& text) {
    if (error_of_.empty()) error_of_.assign(kErrorKinds * plan_.steps().size(), kNoError);
    std::uint32_t& e = error_of_[kErrorKinds * std::size_t{step} + kind];
    if (e == kNoError) {
      e = static_cast<std::uint32_t>(trace_.errors.size());
      trace_.errors.push_back(text());
    }
    return e;
  }
  // Why a failed attempt failed, the text every backend gives it: stopped at retries.max_duration, else the
  // scenario's failure model.
  [[gnu::cold, gnu::noinline]] void failure_error(std::uint32_t a) {
    const std::uint32_t step = plan_.step_of(att_[a].task);
    if (att_[a].past_deadline) {
      rec(a).error = error_index(kPastDeadline, step, [&] {
        return past_deadline_text(*plan_.steps()[step].component.retries.max_duration);
      });
      return;
    }
    rec(a).error = error_index(kSampled, step,
                               [&] { return sampled_failure_text(plan_.steps()[step].component.failure.p); });
  }
  // A retry whose run would go on past its task's retries.max_duration: stopped at it, failed. Returns the
  // run's length (cut, or `run`).
  [[gnu::cold, gnu::noinline]] Duration cut_at_deadline(std::uint32_t a, SimTime start, Duration run) {
    const SimTime deadline = exec_.retry_deadline(att_[a].task);
    if (deadline == kNever || start + run <= deadline) return run;
    att_[a].will_fail = true;
    att_[a].past_deadline = true;
    return std::max(Duration::zero(), deadline - start);
  }

  // ---- the end ----------------------------------------------------------------------------------------
  static Attempt new_attempt(TaskId t, std::uint32_t number, AttemptKind kind) {
    Attempt at;
    at.task = t;
    at.number = number;
    at.kind = kind;
    return at;
  }
  // Appends the next attempt's record (with records only): created at `submitted`, not started.
  [[gnu::always_inline]] void new_record(TaskId t, std::uint32_t number, AttemptKind kind, SimTime submitted,
                                         SimTime scheduled, std::int32_t node, std::uint32_t pod) {
    // Every field given: value-initializing the record first (emplace_back()) made GCC clear its 88
    // bytes with `rep stos`, whose start-up cost was a tenth of a simple task's whole simulation.
    trace_.attempts.push_back(AttemptRecord{.task = t,
                                            .step = plan_.step_of(t),
                                            .item = plan_.item(t),
                                            .attempt = number,
                                            .node = node,
                                            .pod = pod,
                                            .submitted = submitted,
                                            .scheduled = scheduled,
                                            .started = kNever,
                                            .finished = kNever,
                                            .outcome = Outcome::succeeded,
                                            .kind = kind,
                                            .error = kNoError,
                                            .image_pull = Duration::zero(),
                                            .input_read = Duration::zero(),
                                            .output_write = Duration::zero()});
    recs_ = trace_.attempts.data();
  }
  // Attempt a's record, to write (a run without records writes them all to one scratch record).
  [[gnu::always_inline]] AttemptRecord& rec(std::uint32_t a) { return recs_[a & rec_mask_]; }
  // The attempt ends now, with this outcome (every `finished` of the run is set here, but finish()'s at
  // its end).
  [[gnu::always_inline]] void ended(std::uint32_t a, Outcome outcome) {
    Attempt& at = att_[a];
    if (!at.ended) ++ended_;
    at.ended = true;
    at.outcome = outcome;
    AttemptRecord& r = rec(a);
    r.finished = engine_.now();
    r.outcome = outcome;
    last_finished_ = engine_.now();  // time only goes forward
  }
  // An attempt that ends at `end` before its pod is through its phases (evicted, cancelled, the run's
  // end): its record says what happened until then. A bind still in flight never landed: the pod was
  // never placed. An image pull, input read or output write cut short took the time until `end`; a start
  // not reached never happened.
  void cut_short(std::uint32_t a, SimTime end) {
    AttemptRecord& r = rec(a);
    const Phase phase = att_[a].phase;
    if (phase == Phase::writing) r.output_write = end - r.output_write;
    if (r.scheduled == kNever) return;
    if (r.scheduled > end) {
      r.scheduled = r.started = kNever;
      r.node = -1;
      r.image_pull = r.input_read = Duration::zero();
      return;
    }
    r.image_pull = std::min(r.image_pull, end - r.scheduled);
    if (r.started > end) {
      r.started = kNever;
      r.input_read = Duration::zero();
    }
    if (phase == Phase::reading)
      r.input_read =
          std::max(Duration::zero(), end - (r.scheduled + r.image_pull + sc_.overheads.sandbox_start));
  }
  void finish() {
    const SimTime end = exec_.all_resolved() ? end_ : std::min(engine_.now(), opt_.horizon);
    // Whatever did not finish (the horizon was reached) is cancelled and its task reported failed.
    // (A pass over every record only if one is unfinished.)
    // So is a run stopped with no pod alive (a retry due past the horizon): it ran until `end`.
    if (ended_ < att_.size() || !exec_.all_resolved()) last_finished_ = std::max(last_finished_, end);
    trace_.last_finished = last_finished_;
    if (records_ && ended_ < trace_.attempts.size())
      for (std::size_t a = 0; a < trace_.attempts.size(); ++a) {
        AttemptRecord& r = trace_.attempts[a];
        if (r.finished != kNever) continue;
        cut_short(static_cast<std::uint32_t>(a), end);
        r.finished = end;
        r.outcome = Outcome::cancelled;
      }
    trace_.tasks_unfinished = exec_.unfinished_tasks();
    trace_.tasks_waiting = exec_.waiting_tasks();
    trace_.tasks_failed = exec_.tasks_failed() + trace_.tasks_unfinished + trace_.tasks_waiting;
    trace_.tasks_not_run = exec_.dead_tasks();
    for (NodeRecord& n : trace_.nodes) {
      if (n.down != kNever) continue;
      n.down = end;
      if (n.up > end) n.up = end;
    }
    if (!records_) return;
    trace_.pod_prefixes.reserve(trace_.steps.size());
    for (const std::string& step : trace_.steps) trace_.pod_prefixes.push_back(pod_name_prefix(step));
    // Inside looped groups the step and item repeat in every iteration: such a pod's name carries the
    // groups' iteration numbers too, so that names are unique, as in a namespace.
    if (plan_.scopes().size() > 1)
      for (AttemptRecord& r : trace_.attempts)
        if (r.pod == kNoPod && !scope_part(r.task).empty()) {
          r.pod = static_cast<std::uint32_t>(trace_.pod_names.size());
          trace_.pod_names.push_back(pod_name(r, trace_.pod_prefixes[r.step]));
        }
  }

  // A pod's name by the trace's rule (Trace::pod_name: `prefix` is its step's pod_name_prefix), with the
  // iteration numbers of its looped groups (scope_part) before the item.
  std::string pod_name(const AttemptRecord& r, const std::string& prefix) {
    return prefix + scope_part(r.task) + std::to_string(r.item) + '-' + std::to_string(r.attempt);
  }
  // scope_indices(t), worked out once per scope (and whether the step has a loop of its own).
  const std::string& scope_part(TaskId t) {
    static const std::string kNoScope;
    const std::uint32_t scope = plan_.scope_of(t);
    if (scope == kNone) return kNoScope;
    if (scope_part_.empty()) scope_part_.resize(2 * plan_.scopes().size());
    std::optional<std::string>& part =
        scope_part_[2 * std::size_t{scope} + (plan_.steps()[plan_.step_of(t)].has_loop ? 1 : 0)];
    if (!part) part = scope_indices(t);
    return *part;
  }

  // The iteration numbers of the looped groups around task t that its item does not give, outermost
  // first, each followed by '-' ("3-" for item 1 of a step without a loop of its own in outer[3]/inner[1],
  // whose item is inner's); "" when the item alone tells its tasks apart.
  [[nodiscard]] std::string scope_indices(TaskId t) const {
    std::vector<std::string_view> numbers;  // innermost first
    for (std::uint32_t s = plan_.scope_of(t); s != kNone && !plan_.scopes()[s].name.empty();
         s = plan_.scopes()[s].parent) {
      const std::string_view n = plan_.scopes()[s].name;
      if (const std::size_t open = n.rfind('['); open != std::string_view::npos && n.back() == ']')
        numbers.push_back(n.substr(open + 1, n.size() - open - 2));
    }
    if (!plan_.steps()[plan_.step_of(t)].has_loop && !numbers.empty()) numbers.erase(numbers.begin());
    std::string out;
    for (auto it = numbers.rbegin(); it != numbers.rend(); ++it) (out += *it) += '-';
    return out;
  }

  const Scenario& sc_;
  const Plan& plan_;
  const SimOptions& opt_;
  Engine engine_;
  Trace trace_;
  SimStats stats_;

  // Tasks.
  Execution<Model> exec_;
  std::vector<TaskId> ready_batch_, admitting_;
  bool admit_pending_ = false;
  bool in_list_pass_ = false;  // on_decide places the whole list (policy list, free decisions)
  std::uint64_t progress_every_ = 1;
  SimTime end_;
  std::uint64_t node_budget_ = 0;        // see the constructor
  std::vector<std::uint32_t> error_of_;  // per step and ErrorKind: its text's index in Trace::errors
  std::vector<std::optional<std::string>> scope_part_;  // per scope, and its step with a loop or not
  bool running_ = false;  // the nodes of the start are up: nodes added now come during the run

  // Pods: one per attempt (Trace::attempts at the same index); ended_: those whose `finished` is set.
  Attempts att_;
  std::uint64_t ended_ = 0;
  SimTime last_finished_ = SimTime::zero();  // the latest end of an attempt
  // The records (rec): trace_.attempts, or without them (records_ false) one scratch record.
  bool records_ = true;
  AttemptRecord* recs_ = nullptr;
  std::uint32_t rec_mask_ = 0xFFFFFFFFu;
  AttemptRecord scratch_{};
  std::vector<std::uint32_t> evicted_;  // scratch for on_node_fail
  // Work queues (loops with `workers`), per step; empty when no loop has one.
  std::vector<WorkQueue> work_queues_;
  // Speculative execution, per step; empty when no step has `speculation`. spec_tasks_: the tasks that got
  // a backup (their live attempts).
  std::vector<Speculation> spec_;
  std::map<TaskId, SpecTask> spec_tasks_;

  // The orchestrator's controller: one work-queue key per step (or one), when control_plane is on.
  bool controlled_ = false;
  Duration condition_lag_ = Duration::zero();  // see the constructor
  std::vector<ControllerKey> keys_;
  std::vector<std::uint32_t> task_key_;  // scope step with looped groups: each task's key (step instance)
  std::vector<EndedPod> seen_;
  std::vector<TaskId> creating_;
  // The controller's rate limiter (api_call): its next token's time; a token's interval (zero: no limit)
  // and the burst's tolerance (api_burst - 1 intervals), from the control plane's api_qps and api_burst.
  SimTime api_tat_ = SimTime::zero();
  Duration api_interval_ = Duration::zero(), api_tolerance_ = Duration::zero();

  Scheduler sched_;
  Nodes nodes_;
  SharedStorage storage_;
  // The autoscaler: no scale-down before scale_down_from_ (the last scale-up + scale_down_delay_after_add);
  // the nodes that became due before it wait in held_, (slot, idle_gen) in the order they became due, for
  // one kScaleDownResume event (resume_pending_).
  SimTime scale_down_from_ = SimTime::zero();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held_;
  bool resume_pending_ = false;
  // The nodes due for scale-down at this instant, (slot, idle_gen), looked at after every other event of
  // the instant: one kScaleDownResume event with target kLateScaleDowns (late_pending_).
  static constexpr std::uint32_t kLateScaleDowns = 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> late_scale_downs_;
  bool late_pending_ = false;
  // Scratch for pods_without_room: the free room of each node that is up or booting, and per class the
  // first of them that may still hold one of its pods.
  struct NodeRoom {
    std::uint32_t pool = 0;
    Room room;
  };
  std::vector<NodeRoom> rooms_;
  std::vector<std::uint32_t> room_from_;
};

}  // namespace
}  // namespace shardflow::sim
