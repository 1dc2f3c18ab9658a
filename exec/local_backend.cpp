#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/execution.hpp>
#include <shardflow/core/machine.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/exec/kernels.hpp>
#include <shardflow/exec/local_backend.hpp>

namespace shardflow::exec {

namespace {

using Clock = std::chrono::steady_clock;

// How a step's tasks run.
enum class How : std::uint8_t {
  cpu,       // a kernel on a TBB worker (in an arena of `threads` slots)
  sleep,     // a timer: no thread is held
  blocking,  // a kernel that waits on something else (a process): its own thread, off the CPU workers
};

struct StepInfo {
  How how = How::sleep;
  bool noop = false;
  std::uint64_t fail_attempts = 0;  // the kernel's fail_attempts (sleep fails them without a timer)
  bool upstream = false;            // its kernel reads the results of the tasks before it
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int threads = 1;
  std::uint32_t shape = 0;  // index of its (cpu, memory) request among the plan's distinct ones
  // A duration model without randomness or input dependence samples `base` for every attempt: kept here
  // so that a task of such a step never reads its (large, cold) Component.
  bool fixed = false;
  double base_ns = 0;
  // A work queue (`parallel_for.workers`): at most `workers` of its items hold a worker at once (here
  // a worker costs nothing to start, so this is the whole difference); the others wait in `parked`.
  std::uint32_t workers = 0;
  std::uint32_t live = 0;
  std::deque<TaskId> parked;
};

// Attempts waiting for CPU and memory, one FIFO per distinct request: when the oldest of a shape does
// not fit, none of that shape does, so a dispatch looks at each shape once however many steps there are.
struct Shape {
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  std::deque<std::uint32_t> queue;  // attempt ids, oldest first
};

struct Timer {
  std::int64_t at = 0;  // ns since the start
  std::uint64_t seq = 0;
  std::uint32_t id = 0;  // an attempt (a sleep ends) or a task (a retry is due)
  bool retry = false;
  bool operator>(const Timer& o) const { return at > o.at || (at == o.at && seq > o.seq); }
};

struct Completion {
  std::uint32_t attempt = 0;
  bool ok = false;
  std::string error;
  std::shared_ptr<const Value> value;
  std::int64_t started = -1;  // when the kernel began (-1: the attempt never ran: a sleep's timer)
  std::int64_t at = 0;        // when it ended
  bool cancelled = false;     // the kernel stopped because the run did (KernelCancelled): no error
};

// What a launched attempt needs, built under the lock and handed to the thread that runs it.
struct Job {
  std::uint32_t attempt = 0;
  const KernelSpec* kernel = nullptr;
  int threads = 1;
  bool noop = false;  // a `noop` kernel: nothing to call
  bool cpu = false;   // runs on the arena's workers (else on its own thread)
  KernelContext ctx;
};

thread_local bool t_in_arena = false;  // this thread runs a task of the run's arena
// A CPU job launched by the pump this worker just ran: it runs it next itself, without a spawn (a chain
// of tasks that each free the CPU the next one needs stays on one thread, as a continuation would).
thread_local std::shared_ptr<Job>* t_next = nullptr;

class LocalRun {
 public:
  LocalRun(const Scenario& scenario, const Plan& plan, const RunOptions& options, const LocalOptions& local,
           RunObserver* observer)
      : sc_(scenario),
        plan_(plan),
        opt_(options),
        lo_(local),
        obs_(observer),
        cores_(local.cores > 0 ? local.cores : machine_cores()),
        memory_(local.memory > 0 ? local.memory : machine_memory()),
        exec_(plan, *this),
        arena_(cores_, 0) {
    exec_.set_time_scale(lo_.time_scale);  // the retry waits it scales, for retries.max_duration's check
    steps_.reserve(plan_.steps().size());
    for (const PlanStep& s : plan_.steps()) {
      const Component& c = s.component;
      StepInfo info;
      info.how = kernel_sleeps(c.kernel) ? How::sleep : kernel_blocks(c.kernel) ? How::blocking : How::cpu;
      info.noop = kernel_is_noop(c.kernel);
      info.fail_attempts = kernel_fail_attempts(c.kernel);
      prepare_kernel(c.kernel);  // before the run's clock starts
      info.upstream = kernel_uses_upstream(c.kernel);
      const DurationModel& m = c.duration;
      info.fixed = m.lognormal_sigma <= 0 && m.straggler_p <= 0 && c.failure.p <= 0 &&
                   m.per_gib == Duration::zero() && c.tree.total == 0;  // a tree task's time is its share
      info.base_ns = static_cast<double>(m.base.ns());
      info.workers = s.workers;
      info.cpu = c.resources.cpu;
      info.memory = c.resources.memory;
      info.threads = static_cast<int>(std::clamp<MilliCpu>((c.resources.cpu + 999) / 1000, 1, cores_));
      const auto same = std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& x) {
        return x.cpu == info.cpu && x.memory == info.memory;
      });
      info.shape = static_cast<std::uint32_t>(same - shapes_.begin());
      if (same == shapes_.end()) shapes_.push_back({info.cpu, info.memory, {}});
      steps_.push_back(info);
    }
    results_.resize(plan_.size());
    attempts_.reserve(plan_.task_count() + plan_.task_count() / 8 + 16);
    samples_.reserve(attempts_.capacity());
    free_cpu_ = static_cast<MilliCpu>(cores_) * 1000;
    free_memory_ = memory_;
    out_dir_ = !opt_.files_dir.empty() ? std::filesystem::path(opt_.files_dir)
               : lo_.out_dir.empty()   ? std::filesystem::path("shardflow-commands")
                                       : lo_.out_dir;
  }

  // ---- Execution's hooks (called under mu_) ---------------------------------------------------------
  void on_ready(TaskId t) { ready_.push_back(t); }
  void on_start(TaskId t) { create_attempt(t); }
  void on_resolved(TaskId /*t*/) {}
  void on_all_resolved() {
    all_done_ = true;
    end_ = stamp_;
  }

  LocalResult run() {
    t0_ = Clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    exec_.start();
    pump(0);
    while (true) {
      if (!stopping_ && ((opt_.stop != nullptr && opt_.stop->load()) || now_ns() >= opt_.horizon.ns()))
        begin_stop();
      if (all_done_ || stopping_) {
        if (in_flight_ == 0) break;
        cv_.wait(lock);
        continue;
      }
      const std::int64_t now = now_ns();
      stamp_ = now;
      bool fired = false;
      while (!timers_.empty() && timers_.top().at <= now) {
        const Timer tm = timers_.top();
        timers_.pop();
        fired = true;
        if (tm.retry)
          create_attempt(tm.id);
        else
          completions_.push_back({tm.id, true, {}, nullptr, -1, now});
      }
      if (fired) {
        pump(now);
        continue;
      }
      // Sleep until the next timer, a change (cv_), or 50 ms to look at the stop token again.
      std::int64_t wake = now + 50'000'000;
      if (!timers_.empty()) wake = std::min(wake, timers_.top().at);
      if (opt_.horizon.ns() < wake) wake = std::max(now, opt_.horizon.ns());
      cv_.wait_until(lock, t0_ + std::chrono::nanoseconds(wake));
    }
    lock.unlock();
    arena_.execute([&] { tg_.wait(); });
    for (std::thread& th : threads_) th.join();
    return finish();
  }

 private:
  [[nodiscard]] std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0_).count();
  }

  void emit(TaskEvent::Kind kind, std::uint32_t a, bool final = false) {
    if (obs_ == nullptr) return;
    const AttemptRecord& r = attempts_[a];
    obs_->on_event({kind, r.task, r.attempt, final, SimTime::from_ns(stamp_)});
  }

  void create_attempt(TaskId t) {
    if (StepInfo& w = steps_[plan_.step_of(t)]; w.workers != 0) {
      if (w.live >= w.workers) {
        w.parked.push_back(t);
        return;
      }
      ++w.live;
    }
    const auto a = static_cast<std::uint32_t>(attempts_.size());
    const auto [attempt, kind] = exec_.next_attempt(t, SimTime::from_ns(stamp_));
    attempts_.push_back(AttemptRecord{.task = t,
                                      .step = plan_.step_of(t),
                                      .item = plan_.item(t),
                                      .attempt = attempt,
                                      .node = -1,
                                      .pod = kNoPod,
                                      .submitted = SimTime::from_ns(stamp_),
                                      .scheduled = kNever,
                                      .started = kNever,
                                      .finished = kNever,
                                      .outcome = Outcome::succeeded,
                                      .kind = kind,
                                      .image_pull = Duration::zero(),
                                      .input_read = Duration::zero(),
                                      .output_write = Duration::zero()});
    const StepInfo& info = steps_[plan_.step_of(t)];
    samples_.push_back(
        info.fixed ? AttemptSample{info.base_ns, false}
                   : sample_attempt(plan_.steps()[plan_.step_of(t)].component, plan_, t, attempt, opt_.seed));
    shapes_[steps_[plan_.step_of(t)].shape].queue.push_back(a);
    emit(TaskEvent::Kind::admitted, a);
  }

  // Everything that follows from what just happened at `now`, without recursion: finished attempts
  // release their successors, ready tasks are admitted (in id order, as the simulator admits the tasks
  // that became ready at one instant), admitted attempts are launched while their requests fit. What
  // it records is stamped `now`: one clock reading per pump, not one per record.
  void pump(std::int64_t now) {
    stamp_ = now;
    for (;;) {
      bool moved = false;
      if (!completions_.empty()) {
        done_.swap(completions_);
        for (Completion& c : done_) finish_attempt(c);
        done_.clear();
        moved = true;
      }
      if (!ready_.empty()) {
        admitting_.swap(ready_);
        if (!std::is_sorted(admitting_.begin(), admitting_.end()))
          std::sort(admitting_.begin(), admitting_.end());
        for (TaskId t : admitting_) exec_.admit(t);
        admitting_.clear();
        moved = true;
      }
      if (!stopping_ && dispatch()) moved = true;
      if (!moved) break;
    }
    if (all_done_) cv_.notify_all();
  }

  // Launches pending attempts whose requests fit, oldest first (a shape whose oldest attempt does not
  // fit is passed over: its younger attempts ask for the same). Returns whether it launched any.
  bool dispatch() {
    bool any = false;
    for (;;) {
      std::size_t best = shapes_.size();
      for (std::size_t s = 0; s < shapes_.size(); ++s) {
        const Shape& x = shapes_[s];
        if (x.queue.empty() || x.cpu > free_cpu_ || x.memory > free_memory_) continue;
        if (best == shapes_.size() || x.queue.front() < shapes_[best].queue.front()) best = s;
      }
      if (best == shapes_.size()) return any;
      const std::uint32_t a = shapes_[best].queue.front();
      shapes_[best].queue.pop_front();
      launch(a);
      any = true;
    }
  }

  void launch(std::uint32_t a) {
    AttemptRecord& r = attempts_[a];
    const StepInfo& info = steps_[r.step];
    free_cpu_ -= info.cpu;
    free_memory_ -= info.memory;
    const std::int64_t now = stamp_;
    r.node = 0;
    r.scheduled = SimTime::from_ns(now);
    const double run_ns = samples_[a].run_ns * lo_.time_scale;
    if (info.how == How::sleep) {
      r.started = r.scheduled;
      emit(TaskEvent::Kind::started, a);
      Duration d = delay_from_ns(run_ns);
      // A retry that would sleep past its task's retries.max_duration stops at it (end_attempt fails it).
      if (const SimTime deadline = retry_deadline(r); deadline != kNever && now + d.ns() > deadline.ns())
        d = Duration::from_ns(std::max<std::int64_t>(0, deadline.ns() - now));
      if (r.attempt < info.fail_attempts)  // before doing anything, as the other kernels fail
        completions_.push_back(
            {a, false, injected_failure_text(r.attempt, info.fail_attempts), nullptr, -1, now});
      else if (d == Duration::zero())
        completions_.push_back({a, true, {}, nullptr, -1, now});
      else
        timers_.push({now + d.ns(), timer_seq_++, a, false});
      cv_.notify_all();  // the timer loop may need to wake earlier
      return;
    }
    std::shared_ptr<Job> job = take_job();
    job->attempt = a;
    job->kernel = &plan_.steps()[r.step].component.kernel;
    job->threads = info.threads;
    job->noop = info.noop;
    job->cpu = info.how == How::cpu;
    if (!info.noop) {  // a noop reads nothing: its context is not built
      KernelContext& ctx = job->ctx;
      ctx.scenario = &sc_;
      ctx.plan = &plan_;
      ctx.task = r.task;
      ctx.attempt = r.attempt;
      ctx.seed = opt_.seed;
      ctx.input_bytes = sample_input_bytes(plan_, r.task, opt_.seed);
      ctx.run_seconds = run_ns * 1e-9;
      ctx.threads = info.threads;
      ctx.stop = &cancel_;
      if (info.how == How::blocking) ctx.out_dir = out_dir_;
      if (info.upstream) gather_upstream(r.task, ctx.upstream);
    }
    emit(TaskEvent::Kind::started, a);
    ++in_flight_;
    if (info.how == How::blocking) {
      threads_.emplace_back([this, job] { run_jobs(job); });
    } else if (t_in_arena && t_next != nullptr && !*t_next) {
      *t_next = std::move(job);
    } else if (t_in_arena) {
      tg_.run([this, job] { run_jobs(job); });
    } else {
      arena_.enqueue(tg_.defer([this, job] { run_jobs(job); }));
    }
  }

  // Jobs are recycled (under mu_): a run of a million tasks allocates a handful of them, not a million.
  std::shared_ptr<Job> take_job() {
    if (free_jobs_.empty()) return std::make_shared<Job>();
    std::shared_ptr<Job> job = std::move(free_jobs_.back());
    free_jobs_.pop_back();
    return job;
  }
  void recycle(std::shared_ptr<Job> job) {
    if (job.use_count() != 1) return;  // a spawned task may still hold a copy
    job->ctx.upstream.clear();
    job->ctx.out_dir.clear();
    free_jobs_.push_back(std::move(job));
  }

  // The results of the tasks t depends on, in id order; a join stands for its predecessors.
  void gather_upstream(TaskId t, std::vector<std::shared_ptr<const Value>>& out) {
    upstream_tasks(plan_, t, stack_, gathered_);
    out.reserve(gathered_.size());
    for (TaskId p : gathered_) out.push_back(results_[p]);
  }

  // On a worker (or a blocking job's own thread): run the job's kernel, report back under the lock, then
  // run the job that report launched for this thread, if any.
  void run_jobs(std::shared_ptr<Job> job) {
    const bool was_in_arena = t_in_arena;
    std::shared_ptr<Job>* const was_next = t_next;
    std::shared_ptr<Job> next;
    const bool cpu = job->cpu;
    t_in_arena = cpu;
    t_next = cpu ? &next : nullptr;
    while (job) {
      Completion c = run_kernel_of(*job);
      const std::lock_guard<std::mutex> lock(mu_);
      completions_.push_back(std::move(c));
      // What this pump records happens now, under the lock: the completion's own time was read before
      // the lock, and another worker's pump may have stamped later times meanwhile (the successors it
      // admitted were then stamped before their predecessor's end, and reserved cores read over 100%).
      pump(std::max(completions_.back().at, now_ns()));
      --in_flight_;
      if (in_flight_ == 0 || all_done_) cv_.notify_all();
      recycle(std::move(job));
      job = std::move(next);
      next.reset();
    }
    t_in_arena = was_in_arena;
    t_next = was_next;
  }

  Completion run_kernel_of(Job& job) {
    Completion c;
    c.attempt = job.attempt;
    c.started = now_ns();
    try {
      if (job.noop) {
        // nothing to run
      } else if (job.threads > 1) {
        tbb::task_arena inner(job.threads);
        inner.execute([&] { c.value = run_kernel(*job.kernel, job.ctx); });
      } else {
        c.value = run_kernel(*job.kernel, job.ctx);
      }
      c.ok = true;
    } catch (const KernelCancelled& e) {
      c.cancelled = true;
      c.error = e.what();
    } catch (const std::exception& e) {
      c.error = e.what();
    } catch (...) {
      c.error = "the kernel threw something that is not a std::exception";
    }
    c.at = now_ns();
    return c;
  }

  // When a retry must be over (kNever for a first attempt, a backup, a replacement, or no max_duration).
  [[nodiscard]] SimTime retry_deadline(const AttemptRecord& r) const {
    return r.kind == AttemptKind::retry ? exec_.retry_deadline(r.task) : kNever;
  }

  void set_error(AttemptRecord& r, const std::string& text) {
    r.error = static_cast<std::uint32_t>(errors_.size());
    errors_.push_back(text);
  }

  // An attempt ended: what it means for its task, then its work-queue worker (if any) takes the next item.
  void finish_attempt(Completion& c) {
    const std::uint32_t step = attempts_[c.attempt].step;
    end_attempt(c);
    StepInfo& w = steps_[step];
    if (w.workers == 0) return;
    --w.live;
    if (stopping_ || w.parked.empty()) return;
    const TaskId next = w.parked.front();
    w.parked.pop_front();
    create_attempt(next);
  }

  void end_attempt(Completion& c) {
    AttemptRecord& r = attempts_[c.attempt];
    const StepInfo& info = steps_[r.step];
    free_cpu_ += info.cpu;
    free_memory_ += info.memory;
    if (c.started >= 0) r.started = SimTime::from_ns(c.started);
    r.finished = SimTime::from_ns(c.at);
    if (stopping_) {
      // Cancelled by the stop, as a waiting attempt or a sleep is: no error. A kernel that failed on its
      // own before it noticed keeps its error.
      r.outcome = Outcome::cancelled;
      if (!c.ok && !c.cancelled) set_error(r, c.error);
      return;
    }
    const TaskId t = r.task;
    // A retry still running at its task's retries.max_duration: a sleep stopped there, a kernel (not
    // interrupted) when it returns. Failed, whatever the kernel said.
    if (const SimTime deadline = retry_deadline(r); deadline != kNever && c.at >= deadline.ns()) {
      c.ok = false;
      c.error = past_deadline_text(*plan_.steps()[r.step].component.retries.max_duration);
    }
    if (c.ok && samples_[c.attempt].fails) {
      c.ok = false;
      c.error = sampled_failure_text(plan_.steps()[r.step].component.failure.p);
    }
    if (c.ok) {
      r.outcome = Outcome::succeeded;
      emit(TaskEvent::Kind::finished, c.attempt);
      if (c.value && obs_ != nullptr && plan_.succs(t).empty()) {
        const std::string text = c.value->describe();
        if (!text.empty()) obs_->on_output(t, text);
      }
      results_[t] = std::move(c.value);
      exec_.succeeded(t);
      return;
    }
    r.outcome = Outcome::failed;
    set_error(r, c.error);
    const auto delay = exec_.attempt_failed(t, SimTime::from_ns(c.at), SimTime::from_ns(c.at));
    emit(TaskEvent::Kind::failed, c.attempt, !delay);
    if (delay)
      timers_.push({c.at + delay_from_ns(static_cast<double>(delay->ns()) * lo_.time_scale).ns(),
                    timer_seq_++, t, true});
    cv_.notify_all();
  }

  // Stop: nothing new starts; what waits is cancelled; running kernels see `cancel_` and return.
  void begin_stop() {
    stopping_ = true;
    cancel_.store(true);
    const std::int64_t now = now_ns();
    end_ = now;
    for (Shape& x : shapes_) {
      for (std::uint32_t a : x.queue) {
        attempts_[a].finished = SimTime::from_ns(now);
        attempts_[a].outcome = Outcome::cancelled;
      }
      x.queue.clear();
    }
    while (!timers_.empty()) {
      const Timer tm = timers_.top();
      timers_.pop();
      if (tm.retry) continue;  // the task stays unfinished
      AttemptRecord& r = attempts_[tm.id];
      r.finished = SimTime::from_ns(now);
      r.outcome = Outcome::cancelled;
    }
  }

  LocalResult finish() {
    LocalResult result;
    Trace& trace = result.trace;
    trace.backend = "local";
    trace.scenario = sc_.name;
    trace.seed = opt_.seed;
    for (const PlanStep& s : plan_.steps()) trace.steps.push_back(s.path);
    if (lo_.time_scale != 1) {  // what calibrate needs to turn the run times back into model time
      trace.time_scale = lo_.time_scale;
      for (std::uint32_t s = 0; s < plan_.steps().size(); ++s)
        if (kernel_runs_sampled_time(plan_.steps()[s].component.kernel)) trace.time_scaled_steps.push_back(s);
    }
    NodeRecord node;
    node.name = "local";
    node.pool = "local";
    node.cpu = static_cast<MilliCpu>(cores_) * 1000;
    node.memory = memory_;
    node.up = SimTime::zero();
    node.billed_from = SimTime::zero();
    trace.attempts = std::move(attempts_);
    result.samples = std::move(samples_);
    // A stopped run ends when it was stopped; the attempts that were running end when they have noticed
    // (a command gets SIGTERM, then SIGKILL 2 s later): the machine is in the run until the last of them.
    SimTime last = SimTime::from_ns(end_);
    for (AttemptRecord& r : trace.attempts) {
      if (r.finished == kNever) {  // cannot happen once every runner has reported; keep the trace sane
        r.finished = SimTime::from_ns(end_);
        r.outcome = Outcome::cancelled;
      }
      last = std::max(last, r.finished);
    }
    node.down = last;
    trace.nodes.push_back(node);
    trace.errors = std::move(errors_);
    trace.tasks_unfinished = exec_.unfinished_tasks();
    trace.tasks_waiting = exec_.waiting_tasks();
    trace.tasks_failed = exec_.tasks_failed() + trace.tasks_unfinished + trace.tasks_waiting;
    trace.tasks_not_run = exec_.dead_tasks();
    // A stopped run lasted until it stopped, though no attempt was running then (a retry waiting out its
    // backoff): its makespan (trace.json's stopped_at).
    if (trace.tasks_unfinished != 0 || trace.tasks_waiting != 0) trace.last_finished = last;
    // No pod names: the local backend runs tasks, not pods.
    for (TaskId t = 0; t < plan_.size(); ++t)
      if (!plan_.is_join(t) && plan_.succs(t).empty() && results_[t])
        result.outputs.emplace_back(t, results_[t]);
    return result;
  }

  const Scenario& sc_;
  const Plan& plan_;
  const RunOptions& opt_;
  const LocalOptions& lo_;
  RunObserver* obs_;
  const int cores_;
  const ByteCount memory_;
  std::vector<StepInfo> steps_;
  std::vector<Shape> shapes_;
  std::filesystem::path out_dir_;

  std::mutex mu_;
  std::condition_variable cv_;
  Execution<LocalRun> exec_;
  Clock::time_point t0_;
  std::int64_t end_ = 0;
  bool all_done_ = false;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};

  AttemptRecords attempts_;  // written under mu_ only
  std::vector<AttemptSample> samples_;
  std::vector<std::string> errors_;
  std::vector<std::shared_ptr<const Value>> results_;
  std::vector<TaskId> ready_, admitting_, stack_, gathered_;
  std::vector<std::shared_ptr<Job>> free_jobs_;
  std::int64_t stamp_ = 0;  // the time of what the current pump records
  std::vector<Completion> completions_, done_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t timer_seq_ = 0;
  MilliCpu free_cpu_ = 0;
  ByteCount free_memory_ = 0;
  std::uint64_t in_flight_ = 0;

  tbb::task_arena arena_;
  tbb::task_group tg_;
  std::vector<std::thread> threads_;
};

// A task larger than this machine would wait forever: say so before anything runs.
// Every step's every request this machine cannot hold, into `problems` (a run said one, then the next).
void check_fits(const std::vector<Step>& steps, const std::string& field, int cores, ByteCount memory,
                std::vector<InputError>& problems) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const auto here = [&] { return field + "[" + std::to_string(i) + "]"; };
    if (s.is_group()) {
      check_fits(s.steps, here() + ".steps", cores, memory, problems);
      continue;
    }
    const Resources& r = s.component.resources;
    if (r.cpu <= static_cast<MilliCpu>(cores) * 1000 && r.memory <= memory && r.gpu == 0) continue;
    // At the request's value (a --set's, an overlay's), where the reader knew it; else at the step.
    const auto at = [&](std::size_t k) {
      return s.resources_where[k].file.empty() ? s.where : s.resources_where[k];
    };
    const std::string machine =
        "this machine (--cores " + std::to_string(cores) + ", --memory " + format_bytes(memory) + ")";
    if (r.cpu > static_cast<MilliCpu>(cores) * 1000)
      problems.emplace_back(at(0), here() + ".resources.cpu",
                            "step " + s.name + " asks for " + format_cpu(r.cpu) + " CPUs, more than " +
                                machine + " has; lower it with --set or run with a larger --cores");
    if (r.memory > memory)
      problems.emplace_back(at(1), here() + ".resources.memory",
                            "step " + s.name + " asks for " + format_bytes(r.memory) +
                                " of memory, more than " + machine +
                                " has; lower it with --set or run with a larger --memory");
    if (r.gpu != 0)
      problems.emplace_back(
          at(2), here() + ".resources.gpu",
          "step " + s.name + " asks for " + std::to_string(r.gpu) +
              " GPU(s); the local backend has none (set resources.gpu to 0 with --set or an "
              "overlay to run it on CPUs)");
  }
}

// Speculative backups are simulated only (speculation is on top-level steps).
void refuse_speculation(const Scenario& scenario) {
  const auto& steps = scenario.pipeline.steps;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].speculation_max != 0)
      throw InputError(steps[i].speculation_where, "pipeline.steps[" + std::to_string(i) + "].speculation",
                       "the local backend does not run speculative backups; remove speculation, or use "
                       "--backend sim");
}

void check_local(const Scenario& scenario, const Plan& plan, const LocalOptions& lo) {
  refuse_speculation(scenario);
  check_kernels(scenario);
  check_kernel_upstream(plan);
  const int cores = lo.cores > 0 ? lo.cores : machine_cores();
  const ByteCount memory = lo.memory > 0 ? lo.memory : machine_memory();
  std::vector<InputError> problems;
  check_fits(scenario.pipeline.steps, "pipeline.steps", cores, memory, problems);
  if (problems.size() == 1) throw problems.front();
  if (!problems.empty()) throw InputErrors(problems);
}

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(LocalOptions options) : lo_(std::move(options)) {}
  [[nodiscard]] std::string name() const override { return "local"; }

  void check(const Scenario& scenario, const Plan& plan) const override { check_local(scenario, plan, lo_); }

  Trace run(const Scenario& scenario, const Plan& plan, const RunOptions& options,
            RunObserver* observer) const override {
    return run_local(scenario, plan, options, lo_, observer).trace;
  }

 private:
  LocalOptions lo_;
};

}  // namespace

LocalResult run_local(const Scenario& scenario, const Plan& plan, const RunOptions& run,
                      const LocalOptions& options, RunObserver* observer) {
  check_local(scenario, plan, options);
  const int cores = options.cores > 0 ? options.cores : machine_cores();
  // Room for every CPU worker of the run's arena, and for the extra slots of multi-CPU kernels' arenas
  // (TBB's default pool has one thread fewer than the machine has CPUs).
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                    static_cast<std::size_t>(2 * cores + 1));
  LocalRun r(scenario, plan, run, options, observer);
  return r.run();
}

std::unique_ptr<Backend> make_local_backend(const LocalOptions& options) {
  return std::make_unique<LocalBackend>(options);
}

}  // namespace shardflow::exec
