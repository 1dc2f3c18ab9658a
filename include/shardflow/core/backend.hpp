// The backend seam: one narrow interface that the simulator, the local (oneTBB) backend and the
// Kubernetes backend implement, so that a scenario switches backend with one flag and every backend
// writes the same Trace.
//
//   std::unique_ptr<Backend> b = sim::make_backend();        // or exec::make_local_backend({...})
//   RunOptions o;
//   o.seed = scenario.seed;
//   Trace trace = b->run(scenario, Plan::unroll(scenario.pipeline), o);
//
// What every backend does alike (which task may start, retries, cancelling dependents; every sampled
// number) is not in the backends: it is core's Execution (execution.hpp) and sampling (sampling.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow {

struct AttemptDrawTable;  // core/sampling.hpp

/// What happened to a task, as a backend reports it while it runs.
struct TaskEvent {
  enum class Kind : std::uint8_t {
    admitted,  // past its parallelism limits: its first attempt (pod) is created
    started,   // an attempt started running
    finished,  // an attempt succeeded: the task is done
    failed,    // an attempt failed (retried or not: see `final`)
  };
  Kind kind = Kind::admitted;
  TaskId task = 0;
  std::uint32_t attempt = 0;
  bool final = false;  // failed: the task exhausted its retries
  SimTime at;          // since the start of the run (simulated time for the simulator)
};

/// Receives a run's task events, for progress bars and live reports. A backend with threads calls it
/// from any of them, one call at a time; keep it short.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_event(const TaskEvent& e) = 0;
  /// A task without successors produced a result worth showing ("chose lambda 0.1: held-out MSE
  /// 0.0101"): backends that compute something (local) report it here.
  virtual void on_output(TaskId /*task*/, const std::string& /*text*/) {}
};

struct RunOptions {
  std::uint64_t seed = 1;
  /// When it becomes true (another thread, a signal handler), the run stops soon: what had not finished
  /// is reported cancelled, and the partial trace is returned.
  const std::atomic<bool>* stop = nullptr;
  /// Stop at this time since the start (simulated or real) even if tasks remain (reported cancelled).
  Duration horizon = Duration::from_s(10LL * 365 * 24 * 3600);
  /// Optional: first attempts' random draws made ahead for this seed (a sweep makes one table per
  /// replication and shares it between its configurations). A backend may read them instead of drawing;
  /// the results are the same to the bit (core/sampling.hpp). Ignored when its seed is not `seed`.
  const AttemptDrawTable* draws = nullptr;
  /// False: the caller wants the run's summary only (Trace::records): a backend may then keep no attempt
  /// records, and the simulator keeps none (a sweep, which reads the makespan and the nodes, runs so).
  bool records = true;
  /// Optional: told the share of the plan's tasks resolved so far, about every 1% of them (the simulator
  /// calls it; the real backends report each task through the RunObserver instead).
  std::function<void(double done_fraction)> progress;
  /// Optional: where the tasks' own files go (the local backend's command logs) for this run; empty: the
  /// backend's setting (LocalOptions::out_dir). `compare` gives each variant's each run its own.
  std::string files_dir;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// "sim", "local" or "k8s": the Trace's `backend` field.
  [[nodiscard]] virtual std::string name() const = 0;
  /// Checks that the backend can run this scenario (kernels exist and their parameters are right,
  /// tasks fit on this machine...) before anything runs. Throws InputError naming file:line:col and the
  /// field. run() calls it too.
  virtual void check(const Scenario& scenario, const Plan& plan) const = 0;
  /// Runs the plan and returns its trace. May be called from several threads at once.
  virtual Trace run(const Scenario& scenario, const Plan& plan, const RunOptions& options,
                    RunObserver* observer = nullptr) const = 0;
};

/// Makes a backend; a sweep makes one per worker thread.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

}  // namespace shardflow
