// The Plan's execution rules, once for every backend: ready counts and joins, loop and group
// `parallelism` limits, retries with backoff, and the cancellation of what depends on a failed task.
// A backend owns time and resources (a simulated clock and cluster, this machine's cores, a live
// cluster); this class decides which task may start and what happens after each attempt, so that every
// backend agrees on it by construction.
//
// The backend passes a Hooks object with four members (inlined; the simulator calls this per task):
//   void on_ready(TaskId t);     // t's predecessors are done: call admit(t) now or later (the simulator
//                                // admits everything that became ready at one instant, in id order)
//   void on_start(TaskId t);     // t is admitted past its limits: create its first attempt
//   void on_resolved(TaskId t);  // t (task or join) is done, failed, or will never run
//   void on_all_resolved();      // nothing is left to run
//
//   Execution<MyHooks> x(plan, hooks);
//   x.start();                                         // on_ready for every task without predecessors
//   x.admit(t);                                        // on_start(t) now, or when a limiter frees a slot
//   x.succeeded(t);                                    // an attempt succeeded: successors become ready
//   if (auto delay = x.attempt_failed(t, ended, now))  // an attempt failed: retry after *delay, else t
//     retry_after(*delay);                             // failed for good, and its dependents
//   x.attempt_evicted(t);                              // t's next attempt replaces an evicted one
//   x.want_backup(t);                                  // t's next attempt is a speculative backup
//   auto [number, kind] = x.next_attempt(t, now);      // creating an attempt: its number and kind
//
// Limits (see plan.hpp): a task may start only if every unit on its chain is already active or its
// limiter has a free slot; starting activates them; a unit frees its slot when its last task is resolved,
// and the tasks queued behind that limiter are admitted in the order they were queued.
// Not thread-safe: a backend with threads calls it under its own lock.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/ring.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow {

enum class TaskState : std::uint8_t {
  waiting,   // predecessors not done
  ready,     // predecessors done, admit() not called yet
  blocked,   // queued behind a parallelism limiter
  admitted,  // started: attempts run (or wait for resources)
  done,      // succeeded (joins: passed)
  failed,    // exhausted its retries
  dead,      // never runs: a predecessor failed
};

template <class Hooks>
class Execution {
 public:
  Execution(const Plan& plan, Hooks& hooks) : plan_(plan), hooks_(hooks) {
    const std::uint32_t n = plan_.size();
    preds_left_.resize(n);
    state_.assign(n, TaskState::waiting);
    failures_.assign(n, 0);
    attempts_of_.assign(n, 0);
    next_kind_.assign(n, AttemptKind::retry);
    for (const PlanStep& s : plan_.steps())
      if (s.component.retries.max_duration) first_at_.assign(n, kNever);
    for (TaskId t = 0; t < n; ++t) preds_left_[t] = static_cast<std::uint32_t>(plan_.preds(t).size());
    unit_left_.resize(plan_.units().size());
    unit_active_.assign(plan_.units().size(), 0);
    for (std::size_t u = 0; u < plan_.units().size(); ++u) unit_left_[u] = plan_.units()[u].tasks;
    limiter_used_.assign(plan_.limiters().size(), 0);
    limiter_queue_.resize(plan_.limiters().size());
  }

  /// Makes every node without predecessors ready (joins pass at once), in id order.
  void start() {
    for (TaskId t = 0; t < plan_.size(); ++t)
      if (preds_left_[t] == 0 && state_[t] == TaskState::waiting) on_ready(t);
  }

  /// Asks to start a ready task: hooks.on_start(t) now, or once the limiter that blocks it frees a slot.
  void admit(TaskId t) {
    const LimiterId l = blocking_limiter(t);
    if (l != kNone) {
      state_[t] = TaskState::blocked;
      limiter_queue_[l].push_back(t);
      return;
    }
    for (UnitId u = plan_.unit_of(t); u != kNone; u = plan_.units()[u].parent) {
      if (unit_active_[u]) continue;
      unit_active_[u] = 1;
      ++limiter_used_[plan_.units()[u].limiter];
    }
    state_[t] = TaskState::admitted;
    hooks_.on_start(t);
  }

  struct NextAttempt {
    std::uint32_t number;  // 0 for the first
    AttemptKind kind;
  };
  /// The number of the task's next attempt and why it exists; counts it. Attempt 0 is the first; a later
  /// one is a backup while want_backup asked for one not yet created, else what the last of
  /// attempt_failed (a retry) and attempt_evicted (a replacement) said.
  /// `now` is when it is created (its pod, in the backend's clock): the first attempt's starts the clock of
  /// retries.max_duration.
  NextAttempt next_attempt(TaskId t, SimTime now) {
    const std::uint32_t n = attempts_of_[t]++;
    if (n == 0) {
      if (!first_at_.empty()) first_at_[t] = now;
      return {n, AttemptKind::first};
    }
    if (!backups_wanted_.empty() && backups_wanted_[t] > 0) {
      --backups_wanted_[t];
      return {n, AttemptKind::backup};
    }
    return {n, next_kind_[t]};
  }
  /// An attempt of t was evicted (its node failed or was reclaimed, its pod was evicted): the task's next
  /// attempt replaces it (it does not count against the retries).
  void attempt_evicted(TaskId t) { next_kind_[t] = AttemptKind::replacement; }
  /// The backend will create a speculative backup of t's running attempt: t's next attempt is one.
  void want_backup(TaskId t) {
    if (backups_wanted_.empty()) backups_wanted_.assign(plan_.size(), 0);
    ++backups_wanted_[t];
  }
  [[nodiscard]] std::uint32_t attempts(TaskId t) const { return attempts_of_[t]; }

  /// An attempt of t succeeded: t is done and its successors may become ready.
  void succeeded(TaskId t) {
    state_[t] = TaskState::done;
    resolved(t);
    release_successors(t);
  }

  /// An attempt of t failed (it ended at `failed_at`; `now` is when the backend acts on it, later when a
  /// controller notices failures at its syncs). Returns the delay before the next attempt (the step's
  /// RetryPolicy), or nothing when t has exhausted its retries, or when retries.max_duration ends them (as
  /// Argo does: `now` past the deadline, or `failed_at` + the delay past it): then t has failed for good
  /// (see fail()).
  std::optional<Duration> attempt_failed(TaskId t, SimTime failed_at, SimTime now) {
    const int k = static_cast<int>(++failures_[t]);
    next_kind_[t] = AttemptKind::retry;
    const RetryPolicy& retry = plan_.steps()[plan_.step_of(t)].component.retries;
    if (k <= retry.max && (first_at_.empty() || first_at_[t] == kNever ||
                           !retry.deadline_ends_retries(k, first_at_[t], failed_at, now, scale_)))
      return retry.delay_before_retry(k);
    fail(t);
    return std::nullopt;
  }

  /// When retrying t must be over: its first attempt's creation + the step's retries.max_duration (a
  /// deadline on the backend's clock, never scaled); kNever without one (or when the backend ignores them).
  [[nodiscard]] SimTime retry_deadline(TaskId t) const {
    if (first_at_.empty() || first_at_[t] == kNever) return kNever;
    const std::optional<Duration>& limit = plan_.steps()[plan_.step_of(t)].component.retries.max_duration;
    return limit ? first_at_[t] + *limit : kNever;
  }
  /// Some step has retries.max_duration and the backend keeps it.
  [[nodiscard]] bool has_retry_deadlines() const { return !first_at_.empty(); }
  /// The backend cannot enforce retries.max_duration (Kubernetes Jobs): retries are counted without it.
  void ignore_retry_deadlines() { first_at_.clear(); }
  /// The backend waits `scale` times the retry delays it is given (the local backend's time_scale): the
  /// deadline check counts the wait as it will be. The deadline itself is not scaled: it bounds a run's
  /// real time, and the local backend's real kernels run at their own speed whatever the scale.
  void set_time_scale(double scale) { scale_ = scale; }

  /// t fails for good (no retries left, or it can never be placed): it and everything after it
  /// never run.
  void fail(TaskId t) {
    state_[t] = TaskState::failed;
    ++tasks_failed_;
    resolved(t);
    stack_.assign(plan_.succs(t).begin(), plan_.succs(t).end());
    while (!stack_.empty()) {
      const TaskId s = stack_.back();
      stack_.pop_back();
      if (state_[s] != TaskState::waiting) continue;
      state_[s] = TaskState::dead;
      resolved(s);
      for (TaskId x : plan_.succs(s)) stack_.push_back(x);
    }
  }

  [[nodiscard]] TaskState state(TaskId t) const { return state_[t]; }
  [[nodiscard]] std::uint64_t resolved_count() const { return resolved_; }
  [[nodiscard]] bool all_resolved() const { return resolved_ == plan_.size(); }
  /// Tasks that exhausted their retries (or could never be placed).
  [[nodiscard]] std::uint64_t tasks_failed() const { return tasks_failed_; }
  /// Tasks that were ready, blocked or admitted but not resolved: what a run stopped early leaves.
  [[nodiscard]] std::uint64_t unfinished_tasks() const {
    std::uint64_t n = 0;
    for (TaskId t = 0; t < plan_.size(); ++t)
      if (!plan_.is_join(t) && (state_[t] == TaskState::ready || state_[t] == TaskState::blocked ||
                                state_[t] == TaskState::admitted))
        ++n;
    return n;
  }
  /// Tasks still waiting for their predecessors (not joins): after a run stopped early, those after its
  /// unfinished tasks (after a run that ended, none).
  [[nodiscard]] std::uint64_t waiting_tasks() const {
    std::uint64_t n = 0;
    for (TaskId t = 0; t < plan_.size(); ++t)
      if (!plan_.is_join(t) && state_[t] == TaskState::waiting) ++n;
    return n;
  }
  /// Tasks that never ran because a task they depend on failed (not joins), in id order.
  [[nodiscard]] std::vector<TaskId> dead_tasks() const {
    std::vector<TaskId> dead;
    if (tasks_failed_ == 0) return dead;  // only a failure makes tasks dead
    for (TaskId t = 0; t < plan_.size(); ++t)
      if (state_[t] == TaskState::dead && !plan_.is_join(t)) dead.push_back(t);
    return dead;
  }
  /// Iterations (units) of limiter l that are active now.
  [[nodiscard]] std::uint32_t limiter_used(LimiterId l) const { return limiter_used_[l]; }

 private:
  void on_ready(TaskId t) {
    if (plan_.is_join(t)) {
      state_[t] = TaskState::done;
      resolved(t);
      release_successors(t);
      return;
    }
    state_[t] = TaskState::ready;
    hooks_.on_ready(t);
  }

  // The limiter whose slot the task would need but cannot get, or kNone if it can start.
  [[nodiscard]] LimiterId blocking_limiter(TaskId t) const {
    for (UnitId u = plan_.unit_of(t); u != kNone; u = plan_.units()[u].parent) {
      if (unit_active_[u]) continue;
      const LimiterId l = plan_.units()[u].limiter;
      const std::uint32_t cap = plan_.limiters()[l];
      if (cap != 0 && limiter_used_[l] >= cap) return l;
    }
    return kNone;
  }

  // A slot of limiter l was freed: admit waiting tasks in order until one needs a slot it cannot have.
  void drain(LimiterId l) {
    Ring& q = limiter_queue_[l];
    while (!q.empty()) {
      const TaskId t = q.front();
      const LimiterId b = blocking_limiter(t);
      if (b == l) break;
      q.pop_front();
      admit(t);  // admits, or queues it at the outer limiter that blocks it now
    }
  }

  void resolved(TaskId t) {
    ++resolved_;
    hooks_.on_resolved(t);
    if (!plan_.is_join(t)) {
      for (UnitId u = plan_.unit_of(t); u != kNone; u = plan_.units()[u].parent) {
        if (--unit_left_[u] != 0) continue;
        if (unit_active_[u]) {
          unit_active_[u] = 0;
          const LimiterId l = plan_.units()[u].limiter;
          --limiter_used_[l];
          drain(l);
        }
      }
    }
    if (resolved_ == plan_.size()) hooks_.on_all_resolved();
  }

  void release_successors(TaskId t) {
    for (TaskId s : plan_.succs(t))
      if (--preds_left_[s] == 0 && state_[s] == TaskState::waiting) on_ready(s);
  }

  const Plan& plan_;
  Hooks& hooks_;
  std::vector<std::uint32_t> preds_left_;
  std::vector<TaskState> state_;
  std::vector<std::uint32_t> failures_;
  std::vector<std::uint32_t> attempts_of_;
  std::vector<SimTime> first_at_;       // each task's first attempt's creation; empty without retry deadlines
  double scale_ = 1;                    // the backend's wait per unit of retry delay (set_time_scale)
  std::vector<AttemptKind> next_kind_;  // of t's next attempt after the first, unless a backup
  std::vector<std::uint32_t> backups_wanted_;  // backups asked for and not yet created (empty: none ever)
  std::vector<std::uint32_t> unit_left_;
  std::vector<std::uint8_t> unit_active_;
  std::vector<std::uint32_t> limiter_used_;
  std::vector<Ring> limiter_queue_;
  std::vector<TaskId> stack_;
  std::uint64_t resolved_ = 0;
  std::uint64_t tasks_failed_ = 0;
};

}  // namespace shardflow
