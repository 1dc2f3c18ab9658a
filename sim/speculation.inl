// The Model's speculative execution (part of simulator.cpp's one translation unit; see model.hpp and
// docs/strategies.md): on a step with `speculation: {after: F, max: M}`, an attempt whose run has lasted
// F x the nearest-rank median run time of the step's finished iterations gets a backup attempt (a new pod,
// scheduled like any other, with its own duration draw), at most M per task. The first attempt of the
// task to succeed wins; its other live attempts are cancelled (outcome cancelled, their node time was
// used). A failed or evicted attempt whose task has another live attempt ends without a retry; the last
// live attempt's failure is retried (or fails the task) as usual.
#pragma once

#include <cmath>

#include "model.hpp"

namespace shardflow::sim {
namespace {

inline void Model::init_speculation() {
  for (std::size_t i = 0; i < plan_.steps().size(); ++i) {
    const PlanStep& ps = plan_.steps()[i];
    if (ps.speculation_max == 0) continue;
    spec_.resize(plan_.steps().size());
    spec_[i].after = ps.speculation_after;
    spec_[i].max = ps.speculation_max;
  }
}

// Whether t already won: a backup asked for before the original won, which the orchestrator's controller
// gets to create only now, at a sync after the win, is not created (a controller makes no pod for an item
// that succeeded). It was recorded cancelled at creation, and its `finished`, the sync's time, made the
// makespan, and the backup count, larger than the run's.
bool Model::spec_won(TaskId t) const {
  const auto it = spec_tasks_.find(t);
  return it != spec_tasks_.end() && it->second.won;
}

// Attempt a of t was created: if t has a backup, a is one of its live attempts (a backup if one was asked
// for).
void Model::spec_created(TaskId t, std::uint32_t a) {
  const auto it = spec_tasks_.find(t);
  if (it != spec_tasks_.end()) it->second.live.push_back(a);
}

// Attempt a's run starts at at_time: watch it for straggling.
void Model::spec_started(std::uint32_t a, SimTime at_time) {
  const std::uint32_t step = plan_.step_of(att_[a].task);
  Speculation& sp = spec_[step];
  if (sp.max == 0) return;
  sp.running.emplace(at_time.ns(), a);
  spec_arm(step);
}

// Attempt a's run ended: a successful run's time joins the median; a is no longer watched.
void Model::spec_run_done(std::uint32_t a) {
  const AttemptRecord& r = rec(a);  // speculation keeps the records
  Speculation& sp = spec_[r.step];
  if (sp.max == 0) return;
  sp.running.erase({r.started.ns(), a});
  if (!att_[a].will_fail) {
    const std::int64_t run = (engine_.now() - r.started).ns();
    sp.runs.insert(std::upper_bound(sp.runs.begin(), sp.runs.end(), run), run);
  }
  spec_arm(r.step);
}

// F x the median run time in ns, or nothing when it lies past any time a simulation reaches (a factor of
// 1e18x: llround of it is undefined, and came out negative, backing up every run).
inline std::optional<std::int64_t> spec_threshold(double after, std::int64_t median) {
  const double t = after * static_cast<double>(median);
  if (!(t < 4e18)) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(t));
}

// The next instant a watched attempt of `step` reaches F x the median (the earliest-started one), if the
// median exists: one kSpecCheck event, superseding the previous one (gen).
void Model::spec_arm(std::uint32_t step) {
  Speculation& sp = spec_[step];
  while (!sp.running.empty() && att_[sp.running.begin()->second].phase != Phase::running)
    sp.running.erase(sp.running.begin());  // evicted or cancelled since
  const std::int64_t median = sp.median();
  if (median < 0 || sp.running.empty()) return;
  const std::optional<std::int64_t> threshold = spec_threshold(sp.after, median);
  if (!threshold) return;  // no run reaches it
  const SimTime at = std::max(engine_.now(), SimTime::from_ns(sp.running.begin()->first + *threshold));
  engine_.schedule_at(at, kSpecCheck, step, ++sp.gen);
}

// Every watched attempt of `step` whose run reached F x the median gets a backup, if its task has fewer
// than M.
void Model::on_spec_check(std::uint32_t step, std::uint32_t gen) {
  Speculation& sp = spec_[step];
  if (gen != sp.gen) return;
  const std::optional<std::int64_t> threshold = spec_threshold(sp.after, sp.median());
  if (!threshold) return;
  while (!sp.running.empty()) {
    const auto [started, a] = *sp.running.begin();
    if (att_[a].phase != Phase::running) {
      sp.running.erase(sp.running.begin());
      continue;
    }
    if (started + *threshold > engine_.now().ns()) break;
    sp.running.erase(sp.running.begin());
    const TaskId t = att_[a].task;
    SpecTask& task = spec_tasks_[t];
    if (task.live.empty()) task.live.push_back(a);
    if (task.backups >= sp.max) continue;
    ++task.backups;
    exec_.want_backup(t);  // t's next attempt is a backup; spec_created makes it one of t's live attempts
    if (controlled_)
      want_pod(t);  // the orchestrator's controller creates it at its next sync
    else
      create_attempt(t);
  }
  spec_arm(step);
}

// Attempt a ended (run and write done). False: its task never had a backup (the usual path). Else the
// first success wins and cancels the others; a failure with another live attempt ends quietly.
bool Model::spec_end(std::uint32_t a) {
  const TaskId t = att_[a].task;
  const auto it = spec_tasks_.find(t);
  if (it == spec_tasks_.end()) return false;
  std::vector<std::uint32_t>& live = it->second.live;
  live.erase(std::remove(live.begin(), live.end(), a), live.end());
  Attempt& at = att_[a];
  at.phase = Phase::finished;
  ended(a, at.will_fail ? Outcome::failed : Outcome::succeeded);
  release(a, class_of_step(t));
  if (!at.will_fail) {
    it->second.won = true;
    for (std::uint32_t other : live) spec_cancel(other);
    live.clear();
    if (controlled_)
      pod_ended(a);  // the task succeeds when the controller sees it
    else
      exec_.succeeded(t);
    return true;
  }
  failure_error(a);
  if (!live.empty()) {  // another attempt of t still runs: no retry yet
    if (controlled_) pod_event(t);
    return true;
  }
  if (controlled_)
    pod_ended(a);
  else if (const auto delay = exec_.attempt_failed(t, engine_.now(), engine_.now()))
    engine_.schedule(*delay, kRetry, t);
  return true;
}

// Attempt a was evicted: true if its task has another live attempt (no replacement is made).
bool Model::spec_evicted(std::uint32_t a) {
  const auto it = spec_tasks_.find(att_[a].task);
  if (it == spec_tasks_.end()) return false;
  std::vector<std::uint32_t>& live = it->second.live;
  live.erase(std::remove(live.begin(), live.end(), a), live.end());
  return !live.empty();
}

// A losing attempt stops now, wherever it is; its node time so far was used.
void Model::spec_cancel(std::uint32_t a) {
  Attempt& at = att_[a];
  if (at.phase != Phase::finished && at.phase != Phase::evicted) cut_short(a, engine_.now());  // still phased
  switch (at.phase) {
    case Phase::queued:
    case Phase::driver_queued:
      at.cancelled = true;  // dropped when the scheduler pops it
      break;
    case Phase::driver_on_node:
      release(a, sched_.driver_class());
      break;
    case Phase::reading:
      storage_.stop(kRead, a, att_, engine_);
      release(a, class_of_step(at.task));
      break;
    case Phase::writing:
      storage_.stop(kWrite, a, att_, engine_);
      release(a, class_of_step(at.task));
      break;
    case Phase::starting:
    case Phase::running:
      release(a, class_of_step(at.task));
      break;
    default:
      return;  // ended already
  }
  at.phase = Phase::finished;
  ended(a, Outcome::cancelled);
}

}  // namespace
}  // namespace shardflow::sim
