// The local backend: runs a Plan for real on this machine's cores with oneTBB (backend "local").
//
//   LocalOptions lo;
//   lo.cores = 2;                                   // or 0: every CPU this process may use
//   std::unique_ptr<Backend> b = exec::make_local_backend(lo);
//   Trace trace = b->run(scenario, plan, {.seed = scenario.seed});
//
// What it honours, exactly as the simulator does (both drive core's Execution): dependencies and joins,
// every loop's and group's `parallelism`, retries with the step's backoff (real time), and cancelling what
// depends on a failed task. The machine is one node: a task is admitted past its limits, then waits
// (first come, first served, as kube-scheduler's queue) until its CPU and memory requests fit in what is
// free of `cores` and `memory`; it then runs its kernel (kernels.hpp) in a tbb::task_arena with one slot
// per requested CPU (at least 1). `sleep` tasks (and steps without a kernel) wait on a timer without
// holding a thread; `command` tasks wait for their process off the CPU workers.
//
// Every sampled number is core's (sampling.hpp): the attempt's run time (for sleep and spin, times
// `time_scale`, which the trace records with the steps it scaled) and whether it fails (a sampled failure
// is recorded after the kernel ran). A kernel that throws fails its attempt with the exception's message
// in the trace; the task is retried per its policy.
// When RunOptions::stop becomes true the run stops: waiting tasks are cancelled, running kernels are asked
// to stop (a command gets SIGTERM), and the partial trace is returned.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/backend.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::exec {

struct LocalOptions {
  int cores = 0;         // CPU capacity in cores; 0: the CPUs this process may use
  ByteCount memory = 0;  // memory capacity; 0: this machine's physical memory
  /// Model time to real time: multiplies the sampled run times that sleep and spin use, and the retry
  /// backoffs (0.001 runs a step modelled as 1 hour in 3.6 s). The trace records it
  /// (Trace::time_scale, with the steps whose run times it scaled), so that calibrate can undo it.
  double time_scale = 1;
  /// Where `command` kernels write their stdout and stderr (made when needed); empty: the current
  /// directory's `shardflow-commands/`.
  std::filesystem::path out_dir;
};

/// The local backend. Its observer also receives each sink task's result (`on_output`).
std::unique_ptr<Backend> make_local_backend(const LocalOptions& options);

class Value;
/// A local run's trace and the results of its tasks without successors (the pipeline's answers), in task
/// id order.
struct LocalResult {
  Trace trace;
  std::vector<std::pair<TaskId, std::shared_ptr<const Value>>> outputs;
  /// What each attempt drew (core's sample_attempt), in the order of trace.attempts: its run time at
  /// speed 1 before --time-scale, and whether it fails. The simulator draws the same.
  std::vector<AttemptSample> samples;
};
/// What the backend's run() does, keeping the answers. Throws InputError (before anything runs) for a
/// scenario this machine cannot run.
LocalResult run_local(const Scenario& scenario, const Plan& plan, const RunOptions& run,
                      const LocalOptions& options, RunObserver* observer = nullptr);

}  // namespace shardflow::exec
