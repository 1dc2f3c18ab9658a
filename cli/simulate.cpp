#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <sys/ioctl.h>
#include <system_error>
#include <thread>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <shardflow/core/backend.hpp>
#include <shardflow/core/error.hpp>
#include <shardflow/core/leftovers.hpp>
#include <shardflow/core/machine.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/exec/kernels.hpp>
#include <shardflow/exec/local_backend.hpp>
#include <shardflow/k8s/controller.hpp>
#include <shardflow/k8s/manifests.hpp>
#include <shardflow/report/chrome_trace.hpp>
#include <shardflow/sim/simulator.hpp>

#include "commands.hpp"
#include "run_file.hpp"

namespace shardflow::cli {
namespace {

// An error text (a command's stderr tail may hold several lines) for one line of the summary: its lines,
// blank ones dropped, joined by " | ", other control characters as spaces (the trace keeps the text).
std::string summary_line(std::string_view text) {
  std::string joined;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    if (!line.empty()) joined += (joined.empty() ? "" : " | ") + std::string(line);
    at = end + 1;
  }
  return one_line(joined);
}

// Above this many attempts the timeline is not written: its JSON (some 600 bytes an attempt) would be more
// than the trace viewers load.
constexpr std::size_t kTimelineMaxAttempts = 100'000;

std::string human_seconds(double s) {
  return format_duration(Duration::from_ms(static_cast<std::int64_t>(s * 1000 + 0.5)));
}

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{SIGINT};                     // the signal that stopped the run
std::atomic<std::int64_t> g_first_signal_ns{0};        // when it came (CLOCK_MONOTONIC)
constexpr std::int64_t kSecondSignalNs = 500'000'000;  // a signal this long after the first is a second one
// Ends the process as the signal would, without leaving the temporary files it was writing or the
// commands it runs behind (leftovers). Async-signal-safe.
void end_at_once(int sig) {
  leftovers::clean_up_at_once();
  signal(sig, SIG_DFL);
  raise(sig);
}
std::atomic<bool> g_at_once{false};  // an EndsAtOnce is alive: the first signal ends the process
std::atomic<bool> g_writing{false};  // a finished run's results are being written
extern "C" void on_sigint(int sig) {
  if (g_at_once.load()) end_at_once(sig);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe, as are signal(), raise() and write()
  const std::int64_t ns = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  if (!g_interrupted.load()) {
    g_signal.store(sig);
    g_first_signal_ns.store(ns);
    g_interrupted.store(true);
    if (g_writing.load()) {  // said now, not once the writing is over
      static constexpr char kNote[] =
          "\nshardflow: the run had ended; its results are being written whole (a second Ctrl-C ends at "
          "once, without them)\n";
      [[maybe_unused]] const auto written = ::write(STDERR_FILENO, kNote, sizeof kNote - 1);
    }
    return;
  }
  // `timeout` and CI runners signal the process and then its process group: the same stop arrives twice
  // within microseconds. Only a signal a while after the first is a user's second Ctrl-C: it ends the
  // process at once.
  if (ns - g_first_signal_ns.load() < kSecondSignalNs) return;
  end_at_once(sig);
}

}  // namespace

// Ctrl-C (SIGINT), or SIGTERM or SIGHUP (what `timeout`, a CI runner cancelling a job or a closed
// terminal send) while a run is going: the first asks the backend to stop (the partial trace is written,
// exit 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM); a second one, half a second or more later, ends
// the process at once (copies of the first that arrive with it, as `timeout` sends them, do not).
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~InterruptGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

EndsAtOnce::EndsAtOnce() : guard_(std::make_unique<InterruptGuard>()) {
  g_at_once.store(true);
}
EndsAtOnce::~EndsAtOnce() {
  g_at_once.store(false);
}

Interruptible::Interruptible() : guard_(std::make_unique<InterruptGuard>()) {
  g_interrupted.store(false);
  g_signal.store(SIGINT);
}
Interruptible::~Interruptible() = default;
const std::atomic<bool>* Interruptible::flag() const {
  return &g_interrupted;
}
bool Interruptible::interrupted() const {
  return g_interrupted.load();
}
int Interruptible::exit_status() const {
  return 128 + g_signal.load();
}

namespace {

// The terminal's width, for a line rewritten in place (a line wider than it wraps, and each rewrite leaves a
// row behind); 0 when standard error is not a terminal.
std::size_t terminal_columns() {
  winsize ws{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}
// Rewrites the terminal's current line with `text`, cut to its width.
void rewrite_line(const std::string& text) {
  const std::size_t cols = terminal_columns();
  const std::size_t width = cols > 1 ? std::min(text.size(), cols - 1) : text.size();
  std::fprintf(stderr, "\r%.*s\033[K", static_cast<int>(width), text.c_str());
}

// What the simulator predicts for a run: its makespan (0 when it cannot run the scenario: a pod that fits
// no node fails unplaced) and, in order, when each task is done (succeeded or failed for good), for the
// progress line's ETA. Tasks that fail their runs (failure.p, retries exhausted) are part of the
// prediction: the run fails as predicted.
struct Prediction {
  double makespan_s = 0;
  std::vector<double> done_s;  // sorted
};

// Progress of a real run: tasks done, running, failed attempts, elapsed time and the simulator's
// prediction with an ETA; on a terminal one line rewritten at most ten times a second, else a whole line
// every `every_s` seconds. A line comes at least that often even when no task moves (a retry's backoff, a
// pod the scheduler cannot place yet), from a thread of its own: a quiet run looked hung.
class Progress final : public RunObserver {
 public:
  // show: rewrite one line on a terminal; every_s > 0 (not a terminal): a whole line that often.
  // since: how long the run has been going already (a resumed run's clock goes on from its start, as its
  // trace's does). quiet_start (not a terminal): the first line only every_s after the run began, and no
  // last line unless one came before (a local run's log stays empty when it takes less than every_s).
  Progress(std::uint64_t tasks, bool show, Prediction prediction, double every_s = 0,
           std::chrono::nanoseconds since = {}, bool quiet_start = false)
      : tasks_(tasks),
        show_(show),
        quiet_start_(quiet_start),
        every_s_(show ? 0 : every_s),
        prediction_(std::move(prediction)),
        t0_(std::chrono::steady_clock::now() - std::max(since, std::chrono::nanoseconds{})) {
    if (show_ || every_s_ > 0)
      ticker_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        // The next line is due `every` after the last one; on a terminal a change comes sooner, kSettle
        // after the event that made it (the backend starts the next task just after one ends) and at most
        // ten lines a second.
        const auto every = show_ ? std::chrono::milliseconds(1000) : gap();
        while (!stopping_) {
          const auto now = std::chrono::steady_clock::now();
          auto due = last_ + every;
          if (show_ && changed_at_) due = std::min(due, std::max(last_ + gap(), *changed_at_ + kSettle));
          // At least 100 ms from now (as before the run began), unless a change waits to be shown.
          const bool change = show_ && changed_at_.has_value();
          wake_.wait_until(lock, std::max(due, now + std::chrono::milliseconds(change ? 1 : 100)));
          if (stopping_ || !started_) continue;
          const auto t = std::chrono::steady_clock::now();
          if (t - last_ >= every ||
              (show_ && changed_at_ && t >= *changed_at_ + kSettle && t - last_ >= gap()))
            print(lock);
        }
      });
  }
  ~Progress() override { stop(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// No more lines (the run ended): called before the summary is printed. `interrupted`: the run was
  /// stopped before its tasks all resolved (its last line has no ETA, not ETA 0s).
  void stop(bool interrupted = false) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      interrupted_ = interrupted;
      // The run's last state, if no line said it yet (a task that never ran leaves the count short of all
      // tasks, so the event that resolved the last one did not force a line).
      if (!show_ && every_s_ > 0 && started_ && state() != printed_ && (!quiet_start_ || lines_ > 0))
        print(lock);
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }
  // A line printed before the first progress line (once the run has begun: not before an early error).
  void set_header(std::string text) { header_ = std::move(text); }
  void on_event(const TaskEvent& e) override {
    std::unique_lock lock(mutex_);
    if (!header_.empty()) {
      std::fprintf(stderr, "%s\n", header_.c_str());
      header_.clear();
    }
    if (!started_) {
      // The first line comes kFirstLine after the first event, not at it: a resumed run's first events
      // are a burst of what its earlier part did (tasks done), which a line at the first said was 0.
      started_ = true;
      last_ = std::chrono::steady_clock::now() -
              (quiet_start_ ? std::chrono::milliseconds(0) : gap() - kFirstLine);
    }
    switch (e.kind) {
      case TaskEvent::Kind::admitted:
        if (e.attempt == 0) ++admitted_;
        break;
      case TaskEvent::Kind::started:
        ++running_;
        break;
      case TaskEvent::Kind::finished:
        running_ -= running_ > 0 ? 1 : 0;
        ++done_;
        done_at_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        break;
      case TaskEvent::Kind::failed:
        running_ -= running_ > 0 ? 1 : 0;
        ++failed_attempts_;
        if (e.final) {
          ++failed_tasks_;
          done_at_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        }
        break;
    }
    // Lines come from the ticker, a moment after the events: one printed at a task's end said "0 running"
    // before the backend had started the next task, line after line.
    if (!changed_at_) changed_at_ = std::chrono::steady_clock::now();
    wake_.notify_all();
  }
  void on_output(TaskId /*task*/, const std::string& text) override {
    const std::lock_guard lock(mutex_);
    outputs_.push_back(text);
  }
  void clear_line() const {
    if (show_) std::fputs("\r\033[K", stderr);
  }
  [[nodiscard]] const std::vector<std::string>& outputs() const { return outputs_; }

 private:
  static constexpr std::chrono::milliseconds kFirstLine{100};
  static constexpr std::chrono::milliseconds kSettle{20};
  [[nodiscard]] std::chrono::milliseconds gap() const {
    return show_ ? std::chrono::milliseconds(100)
                 : std::chrono::milliseconds(static_cast<std::int64_t>(every_s_ * 1000));
  }
  [[nodiscard]] std::array<std::uint64_t, 4> state() const {
    return {done_, running_, failed_tasks_, failed_attempts_};
  }
  // One progress line (mutex_ held).
  void print(const std::unique_lock<std::mutex>& /*held*/) {
    const auto now = std::chrono::steady_clock::now();
    last_ = now;
    ++lines_;
    changed_at_.reset();
    printed_ = state();
    const double elapsed = std::chrono::duration<double>(now - t0_).count();
    char eta[96] = "";
    // The run is over: ETA 0, or none if it was interrupted (nothing is left to wait for).
    const double left = stopping_ ? (prediction_.makespan_s > 0 && !interrupted_ ? 0 : -1)
                                  : eta_from_prediction(prediction_.done_s, prediction_.makespan_s,
                                                        done_ + failed_tasks_, elapsed, done_at_);
    // 0 with tasks left: the run is behind the prediction's last end, at its pace.
    if (left >= 0)
      std::snprintf(
          eta, sizeof eta, ", predicted %s, ETA %s", human(prediction_.makespan_s).c_str(),
          left == 0 && !stopping_ && done_ + failed_tasks_ < tasks_ ? "overdue" : human(left).c_str());
    const std::uint64_t ended = done_ + failed_tasks_ + running_;
    const std::uint64_t pending = admitted_ > ended ? admitted_ - ended : 0;
    char attempts[64] = "";  // said once some attempt failed (the line fits 80 columns more often)
    if (failed_attempts_ > 0)
      std::snprintf(attempts, sizeof attempts, " (%llu failed attempts)",
                    static_cast<unsigned long long>(failed_attempts_));
    char failed[48] = "";  // said once a task or an attempt failed
    if (failed_tasks_ > 0 || failed_attempts_ > 0)
      std::snprintf(failed, sizeof failed, ", %llu failed", static_cast<unsigned long long>(failed_tasks_));
    char line[320];
    std::snprintf(line, sizeof line, "%llu/%llu tasks done, %llu running, %llu pending%s%s; %s elapsed%s",
                  static_cast<unsigned long long>(done_), static_cast<unsigned long long>(tasks_),
                  static_cast<unsigned long long>(running_), static_cast<unsigned long long>(pending), failed,
                  attempts, human(elapsed).c_str(), eta);
    if (!show_) {
      std::fprintf(stderr, "%s\n", line);
      return;
    }
    rewrite_line(line);  // never wider than the terminal, or each rewrite wraps onto a new row
  }
  // Short: a tenth of a second below a minute (0 is "0s"), then minutes and seconds, or hours and minutes,
  // so that the line, ETA last, fits 80 columns.
  static std::string human(double s) {
    char buf[48];
    if (s <= 0) return "0s";
    if (s < 60)
      std::snprintf(buf, sizeof buf, "%.1fs", s);
    else if (s < 3600)
      std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    else
      std::snprintf(buf, sizeof buf, "%lldh%02dm", static_cast<long long>(s) / 3600,
                    static_cast<int>(static_cast<long long>(s) % 3600 / 60));
    return buf;
  }
  std::uint64_t tasks_;
  bool show_;
  bool quiet_start_;
  std::uint64_t lines_ = 0;  // printed so far
  double every_s_;
  Prediction prediction_;
  std::chrono::steady_clock::time_point t0_, last_;
  std::uint64_t admitted_ = 0, done_ = 0, running_ = 0, failed_attempts_ = 0, failed_tasks_ = 0;
  std::optional<double> done_at_;  // elapsed seconds when the last task was done (for the ETA's pace)
  std::optional<std::chrono::steady_clock::time_point> changed_at_;  // the first event not in a line yet
  std::vector<std::string> outputs_;
  std::string header_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool started_ = false, stopping_ = false, interrupted_ = false;
  std::array<std::uint64_t, 4> printed_{};
  std::thread ticker_;
};

Prediction predict(const Scenario& s, const Plan& p, std::uint64_t seed) {
  try {
    sim::SimOptions so;
    so.seed = seed;
    const Trace t = sim::simulate(s, p, so);
    std::vector<double> last(p.size(), -1);  // per task, its last attempt's end
    for (const AttemptRecord& a : t.attempts) {
      if (a.outcome == Outcome::failed && a.scheduled == kNever) return {};
      if (a.finished != kNever) last[a.task] = std::max(last[a.task], a.finished.seconds());
    }
    Prediction out;
    out.makespan_s = makespan_s(t);
    for (TaskId task = 0; task < p.size(); ++task)
      if (!p.is_join(task) && last[task] >= 0) out.done_s.push_back(last[task]);
    std::sort(out.done_s.begin(), out.done_s.end());
    return out;
  } catch (const InputError&) {
    return {};
  }
}

// The scenario on this machine as the simulator sees it: `--cluster local` with the local backend's
// cores and memory. Its prediction is what a local run shows; none (0) when the simulator cannot place a
// step there (a node selector the local node lacks).
Prediction predict_local(const SimulateArgs& args, std::uint64_t seed, const exec::LocalOptions& lo) {
  LoadOptions o = load_options(args.load);
  o.cluster = "local";
  o.warn = nullptr;  // the run's own load has warned
  o.sets.push_back("cluster.node_pools[local].cpu=" +
                   std::to_string(lo.cores > 0 ? lo.cores : machine_cores()));
  if (lo.memory > 0) o.sets.push_back("cluster.node_pools[local].memory=" + std::to_string(lo.memory));
  try {
    Scenario s = load_scenario_file(args.file, o);
    // At --time-scale: the sampled-time kernels' run times scaled, the others at their own speed.
    apply_time_scale(s, lo.time_scale,
                     [](const Component& c) { return exec::kernel_runs_sampled_time(c.kernel); });
    return predict(s, Plan::unroll(s.pipeline), seed);
  } catch (const InputError&) {
    return {};
  }
}

}  // namespace

CLI::Validator input_file_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path == "-") path = "/dev/stdin";  // the usual name of standard input; messages say /dev/stdin
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (st.type() == std::filesystem::file_type::not_found) return path + ": does not exist";
        if (st.type() == std::filesystem::file_type::directory)
          return path +
                 ": is a directory; name a file in it (a scenario or compiled KFP pipeline, YAML, or a "
                 "WfCommons instance, JSON)";
        return {};
      },
      "FILE");
}

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option(
         "--set", sets,
         "Change the scenario before it is read, as PATH=VALUE (repeatable): PATH names keys with dots "
         "(a key with dots in double quotes: labels.\"kubernetes.io/arch\") and list elements with [index] "
         "or "
         "[name]; VALUE is YAML. Of two --set of one field, in any "
         "spelling ([gpu] or [1]), the last wins. E.g. --set cluster.node_pools[gpu].count=4 --set "
         "pipeline.steps[preprocess].parallel_for.parallelism=20")
      ->allow_extra_args(false)
      ->type_name("PATH=VALUE");
}

void add_load_options(CLI::App* cmd, LoadArgs& args) {
  add_set_option(cmd, args.sets);
  cmd->add_option("--overlay", args.overlays,
                  "A partial scenario (YAML) merged over the scenario before it is read (repeatable, in "
                  "order, before any --set): mappings merge key by key, list elements with a `name` merge "
                  "with the element of that name (or are appended), anything else is replaced. E.g. "
                  "--overlay fitted.yaml with `pipeline: {steps: [{name: preprocess, duration: {base: "
                  "40s}}]}`. Errors in it name the overlay's file:line:col")
      ->allow_extra_args(false)
      ->type_name("FILE");
  cmd->add_option("--cluster", args.cluster,
                  "Replace the scenario's cluster with a preset. `local`: this machine as one node (the "
                  "CPUs this process may use, its physical memory, no GPUs, no pod limit, price 0), a free "
                  "scheduler, no storage model, and no orchestrator overheads (one pod per task, no "
                  "sandbox start, no image pulls); overlays and --set still apply on top, so --overlay "
                  "can add measured overheads")
      ->type_name("local");
  cmd->add_option(
         "--param", args.params,
         "A compiled Kubeflow pipeline's parameter, NAME=VALUE with VALUE as YAML or JSON (repeatable); "
         "for such a pipeline --cluster may also name a YAML file whose `cluster:` is used "
         "(docs/kfp-import.md)")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  cmd->add_option(
         "--max-tasks", args.max_tasks,
         "Refuse a pipeline that unrolls to more task instances than this (default 50000000: "
         "simulating takes about 200 bytes of memory per task, so 10 GiB; more than this machine's memory "
         "is refused whatever the limit); the count is known "
         "before unrolling, and `explain` shows it without unrolling")
      ->check(whole_number(1))
      ->type_name("N");
}

ScenarioProblems::ScenarioProblems(std::vector<InputError> problems, std::string file)
    : InputError(problems.front().where(), problems.front().field(), problems.front().message()),
      problems_(std::move(problems)),
      file_(std::move(file)) {}

void throw_problems(std::vector<InputError> problems, const std::string& file) {
  if (problems.empty()) return;
  order_problems(problems, file);
  if (problems.size() == 1) throw problems.front();
  throw ScenarioProblems(std::move(problems), file);
}

Scenario load_scenario_reporting_all(const std::string& file, const LoadOptions& options, bool kernels) {
  ScenarioCheck check = check_scenario_file(file, options);
  if (check.problems.empty() && check.scenario) return std::move(*check.scenario);
  // For a local run, the kernels of the steps that could be read are reported with the rest, as
  // `validate` reports them (else they came one run later).
  if (kernels && !check.problems.empty() && check.partial)
    for (InputError& e : exec::kernel_spec_problems(check.partial->pipeline.steps))
      check.problems.push_back(std::move(e));
  throw_problems(std::move(check.problems), file);
  // A check that found nothing and loaded nothing: the loader's word.
  return load_scenario_file(file, options);
}

LoadOptions load_options(const LoadArgs& args) {
  LoadOptions o;
  for (const std::string& path : args.overlays) o.overlays.push_back(read_overlay_file(path));
  o.sets = args.sets;
  o.cluster = args.cluster;
  o.params = args.params;
  o.max_tasks = args.max_tasks;
  o.warn = [](const std::string& line) { std::cerr << printable(line) << "\n"; };
  return o;
}

namespace {

void add_seed_out_options(CLI::App* cmd, SimulateArgs& args) {
  cmd->add_option("file", args.file, kInputFileHelp)->required()->transform(input_file_check());
  // CLI11 2.1 wraps "-1" and 2^64 into a uint64 silently, so the seed is read as text and checked here.
  cmd->add_option("--seed", args.seed_text, "Random seed, 0 to 2^64-1 (default: the scenario's `seed`)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size())
              return "want a whole number from 0 to 18446744073709551615, got \"" + text + "\"";
            return "";
          },
          "UINT64"))
      ->type_name("SEED");
  cmd->add_option(
      "--out", args.out_dir,
      "Directory for trace.json, trace.csv, metrics.json, metrics.csv, timeline.json and report.html "
      "(default: out/<scenario name>)");
  add_load_options(cmd, args.load);
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->add_flag("--no-files", args.no_files,
                "Write no files (no --out directory): print the summary only, e.g. to time a run or read its "
                "makespan in a script (not with --backend k8s, whose run.json --resume needs)");
}

}  // namespace

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args) {
  auto* cmd =
      app.add_subcommand("simulate",
                         "Simulate a scenario on its modelled Kubernetes cluster; print a summary and write "
                         "the trace and metrics (JSON, CSV) and a timeline for ui.perfetto.dev "
                         "(the same as `run --backend sim`)");
  add_seed_out_options(cmd, args);
  cmd->footer(
      "Examples:\n  shardflow simulate scenarios/shard-preprocess-train.yaml --seed 7 --out out/seed7\n"
      "  shardflow simulate scenarios/shard-preprocess-train.yaml --set cluster.node_pools[cpu].count=40\n"
      "  shardflow simulate seismology-chameleon-1000p-001.json --no-files   # a WfCommons instance "
      "(docs/wfcommons-import.md)\n"
      "The same scenario and seed always give the same trace, on any machine.\n"
      "timeline.json is a Chrome trace: open it in https://ui.perfetto.dev or chrome://tracing to see\n"
      "each node's pods (pull, read, run, write) and the pods waiting for the scheduler. It is left\n"
      "out above 100,000 attempts (60 MB and more), too many for those viewers.\n"
      "report.html is one page for a browser: headline figures, a Gantt chart of the pods by node,\n"
      "utilization over time, run-time histograms and the slowest attempts (shardflow report --help).");
  return cmd;
}

CLI::App* add_run_command(CLI::App& app, SimulateArgs& args) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run a scenario on a backend: `sim` simulates it on its modelled cluster (the default), `local` runs "
      "it for real on this machine's cores (oneTBB, real kernels), `k8s` on a live cluster. Every backend "
      "writes the same files");
  args.command = "run";
  add_seed_out_options(cmd, args);
  cmd->add_option("--backend", args.backend, "sim (default), local or k8s")
      ->check(CLI::IsMember({"sim", "local", "k8s"}));
  cmd->add_option(
         "--cores", args.cores,
         "local: CPU capacity in cores (default: the CPUs this process may use); a task asking "
         "for 2 CPUs runs its kernel on 2 of them; more than this process may use is allowed, with a warning")
      ->check(whole_number(1, 4096));
  cmd->add_option(
      "--memory", args.memory_text,
      "local: memory capacity, e.g. 8Gi (default: this machine's physical memory; more is allowed, with a "
      "warning)");
  cmd->add_option("--time-scale", args.time_scale,
                  "local: model time to real time: multiplies the sampled run times that `sleep` and `spin` "
                  "kernels use and the retry backoffs, from 0.000001 to 1000 (default 1; 0.001 runs a step "
                  "modelled as 1 hour "
                  "in 3.6 s)")
      ->check(finite_number(1e-6, 1000));
  cmd->add_flag("--dry-run", args.dry_run,
                "k8s: print the Jobs the run would create (a YAML stream for `kubectl apply -f -`) and exit; "
                "no cluster is contacted. A run submits each Job when the steps before it are done; applied "
                "together with kubectl, they all start at once");
  cmd->add_option("--namespace", args.namespace_name,
                  "k8s: the namespace of the run's objects (default: the context's namespace; `default` for "
                  "--dry-run)");
  cmd->add_option("--kubeconfig", args.kubeconfig,
                  "k8s: the kubeconfig file (default: $KUBECONFIG, a list merged as kubectl does, or "
                  "~/.kube/config; in a pod without either, its service account)")
      ->type_name("FILE");
  cmd->add_option("--context", args.context, "k8s: the kubeconfig context to use (default: current-context)");
  cmd->add_option("--qps", args.qps, "k8s: requests per second to the API server, sustained (default 50)")
      ->check(finite_number(0, HUGE_VAL, true));
  cmd->add_option("--burst", args.burst,
                  "k8s: requests that may go at once after a quiet spell (default 100)")
      ->check(whole_number(1, 100000));
  cmd->add_option("--resume", args.resume,
                  "k8s: continue the run whose output directory this is, after its controller was stopped "
                  "or killed: the same scenario, flags and run id (from its run.json); the Jobs and pods "
                  "on the cluster say what is done, only what is missing is created")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
  cmd->get_option("file")->required(false);
  cmd->add_flag("--keep", args.keep,
                "k8s: leave the run's Jobs and pods on the cluster when it ends (delete them later with "
                "`shardflow k8s cleanup RUN_ID`)");
  cmd->add_flag("--emulate", args.emulate,
                "k8s: for the KWOK test cluster: steps without an image get a placeholder image, and each "
                "pod carries its sampled duration and outcome as annotations (docs/k8s-backend.md)");
  cmd->add_option("--run-id", args.run_id,
                  "k8s: the run's id, part of every Job name (default: 8 random hex digits)");
  cmd->footer(
      "Examples:\n"
      "  shardflow run scenarios/local-ridge.yaml --backend local --cores 2\n"
      "  shardflow run scenarios/argo-parallelism-limit.yaml --backend k8s --dry-run | kubectl apply -f -\n"
      "  shardflow run scenarios/shard-preprocess-train.yaml --backend local \\\n"
      "      --overlay scenarios/local-overlays/shard-preprocess-train.yaml --time-scale 0.001\n"
      "  shardflow run scenarios/shard-preprocess-train.yaml            # = shardflow simulate\n"
      "  shardflow run scenarios/argo-parallelism-limit.yaml --backend k8s --kubeconfig kc.yaml \\\n"
      "      --namespace ml --out out/live                               # on a live cluster\n"
      "  shardflow run scenarios/shard-preprocess-train.yaml --backend k8s --dry-run --emulate\n"
      "      # a step without an image (the seed's aggregate, train) runs on a live cluster only with\n"
      "      # --emulate, on the KWOK test cluster; a real cluster needs an image for every step\n"
      "The local backend honours dependencies, every parallelism limit and the CPU and memory requests\n"
      "against --cores and --memory; a task larger than that is an error before anything runs (exit 2).\n"
      "Ctrl-C stops a run cleanly: running tasks are cancelled, the partial trace is written, exit 130 "
      "(SIGTERM\n"
      "and SIGHUP too, exit 143 and 129)\n"
      "(k8s: the run's Jobs are left running; `shardflow k8s cleanup RUN_ID` deletes them).\n"
      "k8s: a ConfigMap sf-RUN_ID owns the run's Jobs (and they their pods); a Job is created when its\n"
      "dependencies are done and group limits allow; progress goes to stderr; the objects are deleted\n"
      "when the run ends unless --keep. See docs/k8s-backend.md.\n"
      "Kernels are chosen by each step's `kernel:` (docs/scenario-format.md); a step without one sleeps\n"
      "for its sampled duration.");
  return cmd;
}

namespace {

// The flags of `run` that were given (that differ from their defaults), in one order: what each check of
// flags that do not go together reports first.
std::vector<std::string_view> given_flags(const SimulateArgs& a) {
  const SimulateArgs d;
  std::vector<std::string_view> out;
  const auto add = [&](bool given, std::string_view flag) {
    if (given) out.push_back(flag);
  };
  add(a.dry_run, "--dry-run");
  add(a.backend != d.backend, "--backend");
  add(!a.seed_text.empty(), "--seed");
  add(!a.out_dir.empty(), "--out");
  add(a.no_files, "--no-files");
  add(!a.load.sets.empty(), "--set");
  add(!a.load.overlays.empty(), "--overlay");
  add(a.load.cluster != d.load.cluster, "--cluster");
  add(!a.load.params.empty(), "--param");
  add(a.load.max_tasks != d.load.max_tasks, "--max-tasks");
  add(a.cores != d.cores, "--cores");
  add(a.memory_text != d.memory_text, "--memory");
  add(a.time_scale != d.time_scale, "--time-scale");
  add(a.emulate, "--emulate");
  add(!a.namespace_name.empty(), "--namespace");
  add(!a.run_id.empty(), "--run-id");
  add(!a.kubeconfig.empty(), "--kubeconfig");
  add(!a.context.empty(), "--context");
  add(a.keep, "--keep");
  add(a.qps != d.qps, "--qps");
  add(a.burst != d.burst, "--burst");
  return out;
}

// The first of the given flags that is one of `flags` (or, with `all_but`, that is none of them).
const char* first_given(const SimulateArgs& args, std::initializer_list<std::string_view> flags,
                        bool all_but = false) {
  for (const std::string_view f : given_flags(args))
    if ((std::find(flags.begin(), flags.end(), f) != flags.end()) != all_but) return f.data();
  return nullptr;
}

// The arguments of the run that `args.resume` (an output directory) continues, from its run.json.
SimulateArgs resumed_args(const SimulateArgs& args) {
  // Only a k8s run has pods that went on without shardflow: a simulated or local run is run again.
  if (args.backend != "k8s" && first_given(args, {"--backend"}) != nullptr &&
      !std::filesystem::exists(std::filesystem::path(args.resume) / "run.json"))
    throw InputError({"--resume " + args.resume, 0, 0}, "",
                     "continues a `run --backend k8s` only (its pods go on without shardflow); a run of "
                     "--backend " +
                         args.backend + " is run again, without --resume");
  const RunFile run = read_run_file(args.resume);
  const std::string file = (std::filesystem::path(args.resume) / "run.json").string();
  if (!run.invocation || !run.seed)
    throw InputError({file, 0, 0}, "",
                     std::string("not the run.json of a `shardflow run --backend k8s`: it does not say ") +
                         (run.invocation ? "the run's seed" : "how the run was started"));
  if (run.state == "finished")
    throw InputError({"--resume " + args.resume, 0, 0}, "",
                     "run " + run.run_id + " finished already; nothing to resume");
  // Its controller still runs here: a second one would drive the same run and write the same files.
  // (Killed, it left the state "running" and is gone.)
  if (run.state == "running" &&
      k8s::controller_running(run.controller_host, run.controller_pid, run.controller_start))
    throw InputError({"--resume " + args.resume, 0, 0}, "",
                     "run " + run.run_id + "'s controller is still running on this machine (process " +
                         std::to_string(run.controller_pid) +
                         "): stop it (Ctrl-C) or let it finish; --resume continues a run whose controller "
                         "was stopped or killed");
  if (!args.file.empty())
    throw InputError({"--resume " + args.resume, 0, 0}, "",
                     "give no scenario with --resume: the run's own (" + run.invocation->file + ") is used");
  // The run is continued as it was started: a flag that would change it (or, --dry-run, not run it) is
  // refused, not silently dropped. --kubeconfig, --context, --keep and --quiet are this invocation's own.
  const char* flag = args.backend == "k8s"
                         ? first_given(args, {"--backend", "--kubeconfig", "--context", "--keep"}, true)
                         : first_given(args, {"--kubeconfig", "--context", "--keep"}, true);
  if (flag != nullptr)
    throw InputError(
        {std::string(flag), 0, 0}, "",
        std::string("cannot be given with --resume, which continues run ") + run.run_id +
            " as it was started (its scenario, options, seed, namespace and output directory, "
            "from " +
            file + "; --kubeconfig, --context, --keep and -q may be given)" +
            (args.dry_run ? ": a dry run of it would be `run` with those options and --dry-run" : ""));
  const RunFile::Invocation& inv = *run.invocation;
  SimulateArgs a;
  a.file = inv.file;
  a.load.sets = inv.sets;
  a.load.overlays = inv.overlays;
  a.load.cluster = inv.cluster;
  a.seed_text = std::to_string(*run.seed);
  a.out_dir = args.resume;
  a.quiet = args.quiet;
  a.backend = "k8s";
  a.emulate = run.emulate;
  a.keep = run.kept || args.keep;
  a.namespace_name = run.namespace_name;
  a.run_id = run.run_id;
  a.kubeconfig = args.kubeconfig.empty() ? run.kubeconfig : args.kubeconfig;
  a.context = args.context.empty() ? run.context : args.context;
  a.qps = inv.qps;
  a.burst = inv.burst;
  a.resume_started_unix_ns = run.started_unix_ns;
  return a;
}

// The `backend` of the trace.json at `path` (its first lines), or "" when there is none or it cannot tell.
std::string trace_backend(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string key = "\"backend\": \"";
  const std::size_t at = head.find(key);
  if (at == std::string::npos || head.find("\"format\": \"shardflow-trace\"") == std::string::npos) return "";
  const std::size_t end = head.find('"', at + key.size());
  return end == std::string::npos ? "" : head.substr(at + key.size(), end - at - key.size());
}

}  // namespace

int run_simulate(const SimulateArgs& args) {
  if (!args.resume.empty()) return run_simulate(resumed_args(args));  // always --backend k8s
  if (args.file.empty())
    throw InputError({"run", 0, 0}, "", "give a scenario file (or --resume DIR to continue a k8s run)");
  // A --max-tasks raised past what this machine holds is refused by the loader (LoadOptions::check_memory).
  const Scenario scenario =
      load_scenario_reporting_all(args.file, load_options(args.load), args.backend == "local");
  const Plan plan = Plan::unroll(scenario.pipeline);
  if (args.backend == "local")  // the kernels it would refuse, every one (the backend's check stops at one)
    throw_problems(exec::kernel_problems(scenario, plan), args.file);
  std::uint64_t seed = scenario.seed;
  if (!args.seed_text.empty())
    std::from_chars(args.seed_text.data(), args.seed_text.data() + args.seed_text.size(), seed);
  exec::LocalOptions lo;
  lo.cores = args.cores;
  lo.time_scale = args.time_scale;
  if (!args.memory_text.empty()) {
    try {
      lo.memory = parse_bytes(args.memory_text);
    } catch (const std::exception& e) {
      throw InputError({"--memory " + args.memory_text, 0, 0}, "", e.what());
    }
    if (lo.memory <= 0) throw InputError({"--memory " + args.memory_text, 0, 0}, "", "must be more than 0");
    // A number without a unit is bytes: "--memory 8" meant 8Gi, not 8 bytes that hold no task.
    if (lo.memory < kMiB)
      throw InputError({"--memory " + args.memory_text, 0, 0}, "",
                       "is " + std::to_string(lo.memory) +
                           " bytes, less than 1Mi: give the unit (8Gi, 512Mi; a number alone counts bytes)");
  }
  if (args.backend != "local") {
    const char* flag = first_given(args, {"--cores", "--memory", "--time-scale"});
    if (flag != nullptr)
      throw InputError({std::string(flag), 0, 0}, "",
                       "applies to --backend local only (this run uses --backend " + args.backend + ")");
  }
  if (args.backend != "k8s") {
    const char* flag = first_given(args, {"--dry-run", "--emulate", "--namespace", "--run-id", "--kubeconfig",
                                          "--context", "--keep", "--qps", "--burst"});
    if (flag != nullptr)
      throw InputError({std::string(flag), 0, 0}, "",
                       "applies to --backend k8s only (this run uses --backend " + args.backend + ")");
  }
  if (args.backend == "k8s" && args.dry_run) {
    // It writes no files (the manifests go to stdout) and runs nothing: flags about a run's files or its
    // cluster connection would be dropped without a word.
    const char* flag =
        first_given(args, {"--out", "--no-files", "--keep", "--kubeconfig", "--context", "--qps", "--burst"});
    if (flag != nullptr)
      throw InputError({std::string(flag), 0, 0}, "",
                       "goes with a run, not with --dry-run, which prints the Jobs to stdout and contacts no "
                       "cluster (`> jobs.yaml` keeps them)");
    k8s::ManifestOptions mo;
    mo.run_id = args.run_id;
    if (mo.run_id.empty()) {
      char id[9];
      std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(std::random_device{}()));
      mo.run_id = id;
    }
    mo.namespace_name = args.namespace_name.empty() ? "default" : args.namespace_name;
    mo.emulate = args.emulate;
    mo.seed = seed;
    std::cout << k8s::to_yaml_stream(k8s::job_manifests(scenario, plan, mo)) << std::flush;
    return 0;
  }
  // The command kernel's stdout and stderr files: in the output directory, or with --no-files in a
  // scratch directory removed after the run (they are read for the trace's error texts).
  struct ScratchDir {
    std::filesystem::path path;
    int slot = -1;  // its leftovers slot
    ~ScratchDir() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
      leftovers::remove_file(slot);
    }
  } scratch;
  if (args.no_files && args.backend == "local") {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shardflow-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot make a scratch directory for the commands' output (" + pattern +
                               "): " + std::generic_category().message(errno));
    scratch.path = pattern;
    scratch.slot = leftovers::add_scratch_directory(pattern.c_str());  // a second Ctrl-C removes it too
    lo.out_dir = scratch.path;
  } else {
    lo.out_dir = out_dir_path(args.out_dir, scenario.name) / "commands";
    // A file where the commands' output goes: found now, not as every command attempt's failure.
    if (args.backend == "local")
      for (const PlanStep& ps : plan.steps())
        if (ps.component.kernel.name == "command") {
          refuse_file_in_the_way(lo.out_dir, lo.out_dir,
                                 "the commands' standard output and error go in " + lo.out_dir.string());
          break;
        }
  }
  std::unique_ptr<Backend> backend;
  std::string command_note;  // local: the steps whose commands are not run
  std::string cleanup;       // k8s: the command that deletes the run's objects (the backend's)
  k8s::ControllerOptions ko;
  if (args.backend == "sim") {
    backend = sim::make_backend();
  } else if (args.backend == "local") {
    // More than this machine has: the run goes on (a test of the scheduling may want it), but its times
    // are of tasks sharing the CPUs or swapping, not of the machine it describes.
    if (!args.quiet && args.cores > machine_cores())
      std::cerr << "run: warning: --cores " << args.cores << " is more than the "
                << (machine_cores() == 1 ? std::string("1 CPU") : std::to_string(machine_cores()) + " CPUs")
                << " this process may use: the tasks share them, and take longer than on " << args.cores
                << " cores\n";
    if (!args.quiet && lo.memory > 0 && machine_memory() > 0 && lo.memory > machine_memory())
      std::cerr << "run: warning: --memory " << args.memory_text << " is more than this machine's "
                << format_bytes(machine_memory()) << ": tasks may swap or be killed\n";
    // A step with a command but no kernel waits its modelled run time here (the command is for a
    // cluster's container): likely not what a first local run of it expects, so said after the run.
    if (!args.quiet) {
      std::vector<std::string> waiting;
      for (const PlanStep& ps : plan.steps())
        if (!ps.component.command.empty() && ps.component.kernel.name.empty() && ps.tree_root == kNone)
          waiting.push_back(ps.path);
      if (!waiting.empty()) {
        command_note = "run: note: " + std::string(waiting.size() == 1 ? "step " : "steps ");
        for (std::size_t i = 0; i < waiting.size() && i < 5; ++i)
          command_note += (i ? ", " : "") + waiting[i];
        if (waiting.size() > 5) command_note += " and " + std::to_string(waiting.size() - 5) + " more";
        command_note += std::string(waiting.size() == 1 ? " has" : " have") +
                        " a command but no kernel: the local backend waited each task's modelled run time "
                        "instead of running it (kernel: {name: command} runs the command here)\n";
      }
    }
    backend = exec::make_local_backend(lo);
  } else {
    ko.kubeconfig = args.kubeconfig;
    ko.context = args.context;
    ko.namespace_name = args.namespace_name;
    ko.run_id = args.run_id;
    if (ko.run_id.empty()) {
      char id[9];
      std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(std::random_device{}()));
      ko.run_id = id;
    }
    ko.emulate = args.emulate;
    ko.keep = args.keep;
    ko.qps = args.qps;
    ko.burst = args.burst;
    ko.out_dir = out_dir_path(args.out_dir, scenario.name).string();
    ko.resume_started_unix_ns = args.resume_started_unix_ns;
    ko.cleanup = [&cleanup](const std::string& command) { cleanup = command; };
    // A new run must not take over the run file of a run whose objects may still be on the cluster (an
    // interrupted or kept one): `run --resume DIR` and `k8s status DIR` could no longer reach that run.
    if (const std::filesystem::path run_file = std::filesystem::path(ko.out_dir) / "run.json";
        ko.resume_started_unix_ns == 0 && std::filesystem::exists(run_file)) {
      std::optional<RunFile> other;
      try {
        other = read_run_file(ko.out_dir);
      } catch (const InputError&) {  // not a run file this version reads: not one to keep
      }
      if (other && !other->objects_deleted)
        throw InputError(
            {"--out " + args.out_dir, 0, 0}, "",
            run_file.string() + " belongs to run " + other->run_id + " (" +
                (other->state == "running" ? std::string("running, or killed") : other->state) +
                (other->kept ? ", kept" : "") +
                "), whose objects may still be on the cluster; run --resume and k8s status read it "
                "there: "
                "give this run another --out, or delete that run's objects (" +
                k8s::cleanup_command(other->run_id, other->kubeconfig, other->context,
                                     other->namespace_name) +
                ") and then its run.json");
    }
    if (!args.quiet) ko.warn = [](const std::string& m) { std::fprintf(stderr, "k8s: %s\n", m.c_str()); };
    std::vector<std::string> overlays;
    for (const std::string& o : args.load.overlays) overlays.push_back(std::filesystem::absolute(o).string());
    ko.invocation = {{"file", std::filesystem::absolute(args.file).string()},
                     {"sets", args.load.sets},
                     {"overlays", overlays},
                     // A cluster model file (a KFP pipeline's) as an absolute path, as the others.
                     {"cluster", args.load.cluster.empty() || args.load.cluster == "local"
                                     ? args.load.cluster
                                     : std::filesystem::absolute(args.load.cluster).string()},
                     {"qps", args.qps},
                     {"burst", args.burst}};
    backend = k8s::make_backend(ko);
  }
  // Everything that can be wrong with the input is found before anything runs: the backend's checks,
  // then the output directory.
  backend->check(scenario, plan);
  if (args.no_files && args.backend == "k8s")
    throw InputError({"--no-files", 0, 0}, "",
                     "applies to --backend sim and local only (a k8s run writes run.json)");
  if (args.no_files && !args.out_dir.empty())
    throw InputError({"--no-files", 0, 0}, "", "writes no files: leave out --out " + args.out_dir);
  // The default directory is shared by simulate and run: a real run's results there (which took real
  // time) are not replaced by another backend's without --out (a simulation replaced a local run's,
  // silently).
  if (args.out_dir.empty() && !args.no_files) {
    const std::filesystem::path dir = out_dir_path(args.out_dir, scenario.name);
    const std::string there = trace_backend(dir / "trace.json");
    if ((there == "local" || there == "k8s") && there != args.backend)
      throw InputError({"--out", 0, 0}, "",
                       dir.string() + " holds the results of a " +
                           (there == "local" ? "local" : "live (k8s)") + " run (trace.json), which this " +
                           (args.backend == "sim" ? std::string("simulation") : args.backend + " run") +
                           " would replace: give --out DIR for it, or remove them first");
  }
  // A directory this run makes is taken away again if the run stops before anything was written to it
  // (a cluster it cannot reach, Ctrl-C while checking): no empty directory left behind.
  std::error_code exists_ec;
  const bool dir_existed =
      args.no_files || std::filesystem::exists(out_dir_path(args.out_dir, scenario.name), exists_ec);
  const std::filesystem::path dir =
      args.no_files ? std::filesystem::path() : make_out_dir(args.out_dir, scenario.name);
  if (!args.no_files)
    refuse_outputs_over_inputs(dir,
                               {"trace.json", "trace.csv", "metrics.json", "metrics.csv", "report.html",
                                "timeline.json", "run.json"},
                               load_inputs(args.file, args.load));
  struct EmptyDirRemover {
    bool made;
    ~EmptyDirRemover() {
      if (made) remove_made_dirs();  // and the ones it made around it (--out a/b/c)
    }
  } remove_if_empty{!dir_existed};

  const bool tty = !args.quiet && isatty(STDERR_FILENO) != 0;
  const bool sim = args.backend == "sim";
  const bool live = args.backend == "k8s";
  const bool local = args.backend == "local";
  Prediction prediction = sim || (!tty && !live) ? Prediction{}
                          : live                 ? predict(scenario, plan, seed)
                                                 : predict_local(args, seed, lo);
  const double predicted = prediction.makespan_s;
  // A resumed run's elapsed time counts from its start, as its trace's times do.
  const std::chrono::nanoseconds resumed = ko.resume_started_unix_ns > 0
                                               ? std::chrono::system_clock::now().time_since_epoch() -
                                                     std::chrono::nanoseconds(ko.resume_started_unix_ns)
                                               : std::chrono::nanoseconds{};
  // Without a terminal: a line every 5 s of a live run from its start, and every minute of a local run
  // once it has run a minute (a CI log of a long local run showed nothing until its summary; one of a
  // short run stays as it was).
  Progress progress(plan.task_count(), tty && !sim, std::move(prediction),
                    args.quiet ? 0
                    : live     ? 5
                    : local    ? 60
                               : 0,
                    resumed, local);
  if (live && !args.quiet)
    progress.set_header("k8s run " + ko.run_id + ": " + std::to_string(plan.task_count()) +
                        " tasks; the simulator predicts " +
                        (predicted > 0 ? human_seconds(predicted) : "nothing (it cannot place every step)") +
                        " on the scenario's cluster");
  RunOptions options;
  options.seed = seed;
  g_interrupted.store(false);
  g_signal.store(SIGINT);
  options.stop = &g_interrupted;
  const auto t0 = std::chrono::steady_clock::now();
  // A long simulation shows how far it is, and when it will end once that can be told (a 10-minute run
  // said "simulating..." and nothing more).
  int shown_percent = -1;
  if (sim && tty)
    options.progress = [&t0, &shown_percent](double done) {
      const int percent = static_cast<int>(done * 100);
      if (percent == shown_percent) return;
      shown_percent = percent;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (elapsed >= 1 && done >= 0.02 && done < 1)
        std::fprintf(stderr, "\rsimulating... %3d%%, ETA %s   ", percent,
                     human_seconds(std::ceil(elapsed * (1 - done) / done)).c_str());
      else
        std::fprintf(stderr, "\rsimulating... %3d%%", percent);
    };
  // Until the command returns: a signal while the results are written (and the trace freed) is noted and
  // the writing goes on, so that the set is whole and the summary printed; a second one ends the process
  // at once, without the temporary files (leftovers).
  const InterruptGuard guard;
  const auto run_began = std::filesystem::file_time_type::clock::now();  // for the command logs (below)
  Trace trace;
  {
    if (sim && tty) std::fprintf(stderr, "simulating...");
    try {
      trace = backend->run(scenario, plan, options, &progress);
    } catch (const k8s::Interrupted&) {  // Ctrl-C while the cluster was being checked
      progress.stop();
      progress.clear_line();
      std::cerr << "run: interrupted while checking the cluster, before anything of the run was made\n";
      return 128 + g_signal.load();
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.stop(g_interrupted.load());
  progress.clear_line();
  if (sim && tty) std::fputs("\r\033[K", stderr);
  std::cerr << command_note;
  const bool interrupted = g_interrupted.load();
  const Metrics m = compute_metrics(trace, plan);
  if (args.backend == "local") {  // for calibrate: what to give it to load the scenario the same way
    LoadRecord l;
    l.file = std::filesystem::absolute(args.file).string();
    for (const std::string& o : args.load.overlays)
      l.overlays.push_back(std::filesystem::absolute(o).string());
    l.sets = args.load.sets;
    l.params = args.load.params;
    l.cluster = args.load.cluster;
    trace.load = std::move(l);
  }

  const bool timeline = trace.attempts.size() <= kTimelineMaxAttempts;
  // A file that cannot be written (a full disk, a directory in the way) does not lose the run: the
  // summary is still printed, then what was not written, and the exit status is 1.
  std::string write_error;
  if (!args.no_files) {
    // A large run's files take a while (10 million attempts: about 3 GB, half a minute): on a terminal,
    // the file being written is shown, then the line is cleared.
    const bool show = tty && trace.attempts.size() >= 100'000;
    int width = 0;  // of the line shown, to clear
    const auto writing = [&](const char* name) {
      if (!show) return;
      rewrite_line("writing " + one_line(printable((dir / name).string())) + "...");
      width = 1;  // a line to clear
    };
    g_writing.store(true);
    write_error = write_results([&] {
      writing("trace.json");
      write_file(dir / "trace.json", [&](std::ostream& o) { write_trace_json(o, trace); });
      writing("trace.csv");
      write_file(dir / "trace.csv", [&](std::ostream& o) { write_trace_csv(o, trace); });
      write_file(dir / "metrics.json", [&](std::ostream& o) { write_metrics_json(o, m); });
      write_file(dir / "metrics.csv", [&](std::ostream& o) { write_metrics_csv(o, m); });
      writing("report.html");
      write_run_report_file(dir, trace, m);
      // A local run's command logs: those of an earlier run that this one did not make again (it had
      // more items, or other steps) go with the set, not stay beside this run's as if they were its own.
      // Only those last written before this run began: another run into this --out at once keeps its own.
      if (args.backend == "local" && !args.no_files)
        remove_stale_command_logs(lo.out_dir, exec::command_log_names(plan, trace), run_began);
      if (timeline) {
        writing("timeline.json");
        write_file(dir / "timeline.json", [&](std::ostream& o) { report::write_chrome_trace(o, trace); });
      } else {
        remove_result(dir / "timeline.json");  // a timeline from an earlier run would not match this trace
      }
    });
    g_writing.store(false);
    if (width > 0) std::fputs("\r\033[K", stderr);
  }

  if (!args.quiet) {
    char line[256];
    const std::string nodes =
        sim || live ? std::to_string(trace.nodes.size()) + (trace.nodes.size() == 1 ? " node" : " nodes")
                    : std::to_string(trace.nodes.empty() ? 0 : trace.nodes[0].cpu / 1000) +
                          (!trace.nodes.empty() && trace.nodes[0].cpu / 1000 == 1 ? " core" : " cores") +
                          " of this machine";
    std::printf("%s %s (seed %llu): %llu task%s, %llu attempt%s on %s in %.*f %s of wall time\n",
                sim ? "simulated" : "ran", one_line(printable(scenario.name)).c_str(),
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(plan.task_count()),
                plan.task_count() == 1 ? "" : "s", static_cast<unsigned long long>(m.attempts),
                m.attempts == 1 ? "" : "s", nodes.c_str(), wall < 1 ? 1 : 3, wall < 1 ? wall * 1e3 : wall,
                wall < 1 ? "ms" : "s");
    if (interrupted) std::printf("  interrupted: what had not finished is recorded as cancelled\n");
    if (live && (interrupted || args.keep)) {
      // The backend's command: the files and context the run used (from $KUBECONFIG and current-context
      // too), so that it finds this cluster whatever they are when it is run.
      std::printf("  k8s run %s: its objects are still on the cluster (%s)\n", ko.run_id.c_str(),
                  (cleanup.empty()
                       ? k8s::cleanup_command(ko.run_id, args.kubeconfig, args.context, args.namespace_name)
                       : cleanup)
                      .c_str());
    }
    std::printf("  makespan     %s (%.3f s); critical path of what ran %s\n",
                human_seconds(m.makespan_s).c_str(), m.makespan_s, human_seconds(m.critical_path_s).c_str());
    // Cents, or two significant digits below 0.1 (a cheap run's 0.015 read as 0.01 or 0.00).
    if (sim)
      std::printf(m.cost > 0 && m.cost < 0.1 ? "  cost         %.2g (price units per hour x node hours)\n"
                                             : "  cost         %.2f (price units per hour x node hours)\n",
                  m.cost);
    const bool capacity =
        std::any_of(trace.nodes.begin(), trace.nodes.end(), [](const NodeRecord& n) { return n.cpu > 0; });
    if (capacity || trace.nodes.empty())
      std::printf("  utilization  CPU mean %.1f%%, peak %.1f%%\n", m.mean_cpu_utilization * 100,
                  m.peak_cpu_utilization * 100);
    else  // a k8s run whose credentials could not list the nodes: their capacity is not known
      std::printf(
          "  utilization  not known (the run's nodes have no CPU capacity in the trace: they could "
          "not be listed)\n");
    // A work-queue item waits for a worker pod to take it, not for a pod of its own to be bound.
    const bool queues = std::any_of(plan.steps().begin(), plan.steps().end(),
                                    [](const PlanStep& st) { return st.workers != 0; });
    std::snprintf(line, sizeof line, "  queue wait   p50 %.3f s, p95 %.3f s, p99 %.3f s (%s%s)\n",
                  m.queue_wait_s.p50, m.queue_wait_s.p95, m.queue_wait_s.p99,
                  !(sim || live)                                 ? "admitted -> CPU and memory reserved"
                  : sim && scenario.overheads.pods_per_task >= 2 ? "driver pod created -> executor pod bound"
                                                                 : "pod created -> bound",
                  queues && (sim || live) ? "; a work-queue item: queued -> taken by a worker pod" : "");
    std::fputs(line, stdout);
    std::printf("  retries      %llu; failed attempts %llu; tasks failed %llu\n",
                static_cast<unsigned long long>(m.retries),
                static_cast<unsigned long long>(m.failed_attempts),
                static_cast<unsigned long long>(m.tasks_failed));
    if (m.backups > 0 || m.replacements > 0 || m.cancelled_attempts > 0)
      std::printf("  backups      %llu (%llu won); replacements %llu; cancelled attempts %llu\n",
                  static_cast<unsigned long long>(m.backups), static_cast<unsigned long long>(m.backups_won),
                  static_cast<unsigned long long>(m.replacements),
                  static_cast<unsigned long long>(m.cancelled_attempts));
    if (m.tasks_failed > 0) {
      // The tasks that exhausted their retries: every attempt ended, none succeeded, the last one failed.
      std::map<TaskId, const AttemptRecord*> last, first;
      std::map<TaskId, int> counted;  // attempts that count against retries.max: the first and its retries
      std::set<TaskId> ok;
      for (const AttemptRecord& a : trace.attempts) {
        if (a.outcome == Outcome::succeeded) ok.insert(a.task);
        if (!last.count(a.task) || last[a.task]->attempt < a.attempt) last[a.task] = &a;
        if (a.attempt == 0) first[a.task] = &a;
        counted[a.task] += a.kind == AttemptKind::first || a.kind == AttemptKind::retry;
      }
      std::string names;
      std::size_t n = 0;
      for (const auto& [t, a] : last) {
        if (ok.count(t) || a->outcome != Outcome::failed) continue;
        // Retries left that retries.max_duration (a deadline) did not let happen: say so. Retries left
        // after a run that failed, in a run that stopped with tasks unfinished: a retry was waiting its
        // backoff (unfinished, counted below). (A pod that fits no node fails at once, never started.)
        const RetryPolicy& retry = plan.steps()[plan.step_of(t)].component.retries;
        const bool retries_left = counted[t] <= retry.max;
        // Whether retries.max_duration ended them, as Execution decided (a local run at --time-scale
        // scales the waits, not the deadline).
        const bool cut = retries_left && first.count(t) &&
                         retry.deadline_ends_retries(counted[t], first[t]->submitted, a->finished,
                                                     a->finished, trace.time_scale);
        if (retries_left && !cut && trace.tasks_unfinished > 0 && a->started != kNever) continue;
        if (++n > 20) continue;
        names +=
            (n == 1 ? "" : ", ") + shortened(plan.task_name(t)) + " (" + std::to_string(a->attempt + 1) +
            (a->attempt == 0 ? " attempt" : " attempts") +
            (cut ? ", retries ended by retries.max_duration " + format_duration(*retry.max_duration) : "") +
            ")";
      }
      if (n > 20) names += ", and " + std::to_string(n - 20) + " more";
      if (n > 0) std::printf("  failed tasks %s\n", names.c_str());
      // The others had not finished when the run stopped: interrupted, or a simulation that reached its
      // horizon (a duration or a count far too large), which would otherwise read as that many failures.
      const std::uint64_t unfinished = trace.tasks_unfinished, waiting = trace.tasks_waiting;
      const std::string after = waiting == 0 ? std::string()
                                             : ", and " + std::to_string(waiting) + " after " +
                                                   (unfinished == 1 ? "it" : "them") + " never started";
      if (unfinished > 0)
        std::printf(
            "  unfinished   %llu task%s had not finished when the run %s %s%s%s (counted in "
            "tasks failed)\n",
            static_cast<unsigned long long>(unfinished), unfinished == 1 ? "" : "s",
            // Interrupted: it ends once its running attempts have stopped (a command gets 2 s after
            // SIGTERM), later than the interrupt.
            interrupted ? "was interrupted; it ended at" : "stopped at", human_seconds(m.makespan_s).c_str(),
            interrupted                    ? ""
            : !trace.stopped_early.empty() ? (": " + trace.stopped_early).c_str()
            : sim && Duration::from_seconds(m.makespan_s) >= options.horizon
                ? ", the simulation's horizon: look for a duration or a count far too large"
                : "",
            after.c_str());
    }
    if (const std::vector<TaskId>& dead = trace.tasks_not_run; !dead.empty()) {
      // What a failure cost beyond itself: the tasks after it, which a user otherwise sees only as
      // "N tasks, fewer attempts".
      std::string names;
      for (std::size_t i = 0; i < dead.size() && i < 5; ++i)
        names += (i == 0 ? "" : ", ") + shortened(plan.task_name(dead[i]));
      if (dead.size() > 5) names += ", and " + std::to_string(dead.size() - 5) + " more";
      std::printf("  not run      %zu task%s never started because a task %s depend%s on failed: %s\n",
                  dead.size(), dead.size() == 1 ? "" : "s", dead.size() == 1 ? "it" : "they",
                  dead.size() == 1 ? "s" : "", names.c_str());
    }
    for (const AttemptRecord& a : trace.attempts) {
      if (a.error == kNoError) continue;
      std::printf("  first error  %s attempt %u: %s\n", shortened(plan.task_name(a.task)).c_str(), a.attempt,
                  summary_line(trace.error_text(a)).c_str());
      break;
    }
    for (const std::string& out : progress.outputs()) std::printf("  result       %s\n", out.c_str());
    if (!args.no_files && write_error.empty())
      std::printf("wrote %s/{%strace.json,trace.csv,metrics.json,metrics.csv,report.html%s}\n",
                  dir.string().c_str(), live ? "run.json," : "", timeline ? ",timeline.json" : "");
    if (!timeline && !args.no_files && write_error.empty())
      std::printf("(no timeline.json: %zu attempts, over the %zu that trace viewers load)\n",
                  trace.attempts.size(), kTimelineMaxAttempts);
  }
  std::fflush(stdout);
  // Interrupted: said with -q too (the summary says it otherwise). A signal after the run came too late to
  // stop anything: the results are whole, and the exit status is the run's.
  if (interrupted && args.quiet)
    std::cerr << args.command << ": interrupted: what had not finished is recorded as cancelled"
              << (args.no_files || !write_error.empty() ? "" : " in the trace written") << "\n";
  if (!interrupted && g_interrupted.load())
    std::cerr << args.command << ": " << (g_signal.load() == SIGINT ? "Ctrl-C" : "a signal")
              << " came after the run had ended" << (args.no_files ? "" : ", while its results were written")
              << ": they are whole\n";
  if (!write_error.empty()) {
    const int status = results_not_written(args.command, write_error, dir, !args.quiet, !dir_existed);
    if (!interrupted) return status;
  }
  if (interrupted) return 128 + g_signal.load();
  return m.tasks_failed > 0 ? 1 : 0;
}

}  // namespace shardflow::cli
