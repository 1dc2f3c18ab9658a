// What the local backend runs for a task: real work whose answers can be checked, chosen by the step's
// `kernel: {name: ..., PARAM: VALUE}` (docs/scenario-format.md lists every kernel and parameter).
//
//   shard_stats  generate the shard's rows from (seed, item) -- features X and a target y from a known
//                linear model plus noise -- and compute the sufficient statistics X'X, X'y, y'y
//   aggregate    sum the statistics of every upstream task (the fan-in)
//   ridge_solve  solve (X'X + lambda I) w = X'y; lambda from the loop item ({lambda: 0.1}) or a parameter
//   evaluate     the held-out mean squared error of every upstream model, on a held-out shard
//   select_best  the model with the lowest held-out error
//   spin         CPU work for the attempt's sampled duration (a calibrated loop)
//   noop         nothing at all (DAG shapes, and measuring the backend's own cost per task)
//   command      run the step's `command` (no shell), {{item}}, {{item.index}}, {{item.KEY}} filled in
//   sleep        wait for the sampled duration, like a task waiting on I/O (also: a step with no kernel);
//                the backend runs it on a timer, not here
// Every kernel also takes `fail_attempts: N`: its first N attempts fail (to exercise retries).
//
// Results flow in memory: a task's Value is handed to the tasks that depend on it (through joins).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow::exec {

/// A task's result, handed to the tasks that depend on it.
class Value {
 public:
  virtual ~Value() = default;
  /// One line for people ("lambda 0.1: held-out MSE 0.01003"); empty when there is nothing to say.
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// Sufficient statistics of some rows of (X, y): X'X, X'y, y'y and the row count.
class ShardStats final : public Value {
 public:
  Eigen::MatrixXd xtx;
  Eigen::VectorXd xty;
  double yty = 0;
  std::uint64_t rows = 0;
  [[nodiscard]] std::string describe() const override;
};

/// A ridge model: weights w for one lambda.
class RidgeModel final : public Value {
 public:
  double lambda = 0;
  Eigen::VectorXd w;
  [[nodiscard]] std::string describe() const override;
};

/// Held-out errors of some models.
class Evaluation final : public Value {
 public:
  struct Entry {
    double lambda = 0;
    double mse = 0;     // mean squared error on the held-out rows
    Eigen::VectorXd w;  // the model's weights, so that select_best can hand on the chosen one
  };
  std::vector<Entry> entries;  // in upstream order
  [[nodiscard]] std::string describe() const override;
};

/// The chosen model.
class Selection final : public Value {
 public:
  double lambda = 0;
  double mse = 0;
  Eigen::VectorXd w;
  [[nodiscard]] std::string describe() const override;
};

/// The name, without its .stdout or .stderr, of the files where the `command` kernel writes attempt
/// `attempt` of task t's output: the task's name with '/' as '-', then ".attempt" and the number.
std::string command_log_base(const Plan& plan, TaskId t, std::uint32_t attempt);
/// Whether a file name is one command_log_base made (NAME.attemptN.stdout or .stderr).
bool is_command_log_name(std::string_view name);
/// The files (names, .stdout and .stderr) the `command` kernel wrote for a run's attempts.
std::set<std::string> command_log_names(const Plan& plan, const Trace& trace);

/// A command's result: exit status and where its output went.
class CommandResult final : public Value {
 public:
  int exit_status = 0;
  std::filesystem::path stdout_path, stderr_path;
  [[nodiscard]] std::string describe() const override;
};

/// Everything a kernel may use.
struct KernelContext {
  const Scenario* scenario = nullptr;
  const Plan* plan = nullptr;
  TaskId task = 0;
  std::uint32_t attempt = 0;
  std::uint64_t seed = 1;  // the run's seed
  double input_bytes = 0;  // the task's sampled input size
  double run_seconds = 0;  // the attempt's sampled run time (spin, sleep), already time-scaled
  /// Results of the tasks this one depends on (a join stands for all of its loop's tasks), in task id
  /// order; null entries for predecessors that produced nothing. Left empty for kernels that do not read
  /// them (kernel_uses_upstream).
  std::vector<std::shared_ptr<const Value>> upstream;
  int threads = 1;                          // slots of the arena it runs in: it may use tbb::parallel_for
  const std::atomic<bool>* stop = nullptr;  // set when the run is cancelled: return or throw soon
  std::filesystem::path out_dir;            // a directory for files a kernel writes (command output)
};

/// The loop item of task `t` as JSON text ("{\"lr\":0.1}"), or its index as text for `count:` loops.
std::string item_json(const Plan& plan, TaskId t);

/// Whether the kernel blocks without using CPU (command): the backend runs it off its CPU workers.
bool kernel_blocks(const KernelSpec& k);
/// Whether the kernel is `sleep` (or none): the backend waits on a timer instead of calling run_kernel.
bool kernel_sleeps(const KernelSpec& k);
/// Whether the kernel runs for the attempt's sampled run time (sleep, and spin without `seconds`): the
/// time that LocalOptions::time_scale multiplies. The others run at their own speed.
bool kernel_runs_sampled_time(const KernelSpec& k);
/// Whether the kernel reads its upstream results (aggregate, ridge_solve, evaluate, select_best): only
/// then does the backend gather them (a task after a join of a million tasks would otherwise copy a
/// million pointers for nothing).
bool kernel_uses_upstream(const KernelSpec& k);
/// Whether the kernel is `noop` without parameters: a CPU worker runs the task, calling nothing.
bool kernel_is_noop(const KernelSpec& k);
/// Does what the kernel needs once per process before its first attempt (spin: measure its loop's speed,
/// about 10 ms), so that no attempt's run time holds it.
void prepare_kernel(const KernelSpec& k);
/// The kernel's `fail_attempts` (0 without it): attempts 0 to N-1 fail before doing anything.
std::uint64_t kernel_fail_attempts(const KernelSpec& k);
/// Why such an attempt failed: "injected failure: attempt 0 of fail_attempts 2".
std::string injected_failure_text(std::uint64_t attempt, std::uint64_t fail_attempts);

/// Checks every component's kernel: a known name, parameters of the right type and range, a command
/// whose program exists. Throws InputError at the parameter (file:line:col, field) for the first problem.
void check_kernels(const Scenario& scenario);
/// Everything check_kernels checks but whether a command's program exists on this machine (the scenario
/// may be meant for another): names, parameters, a command's {{item.KEY}} placeholders. `shardflow
/// validate` calls it, so that a mistake in a kernel is reported before `run --backend local` refuses
/// it, with the same message, whatever backend the scenario is meant for.
void check_kernel_specs(const Scenario& scenario);

/// The tasks whose results task t's kernel reads: the tasks before it, a join standing for its own
/// predecessors, in id order, each once (into `out`; `stack` is scratch).
void upstream_tasks(const Plan& plan, TaskId t, std::vector<TaskId>& stack, std::vector<TaskId>& out);
/// A kernel that sums shard statistics (aggregate, ridge_solve) with no task before it that makes any
/// (shard_stats, aggregate): an InputError at its kernel, before anything runs, where the run would fail
/// each of its attempts. `validate` and `run --backend local` call it on the unrolled plan.
void check_kernel_upstream(const Plan& plan);
/// Every problem check_kernel_specs and check_kernel_upstream find, not only the first: one per step at
/// most of each (a step's kernel stops at its first mistake), in the steps' order, the specs' first.
/// `shardflow validate` reports them all.
std::vector<InputError> kernel_problems(const Scenario& scenario, const Plan& plan);
/// check_kernel_specs' problems alone, every one, for steps that may not make a whole pipeline (those a
/// collecting load could read while other parts of the file had problems: ScenarioCheck::partial).
std::vector<InputError> kernel_spec_problems(const std::vector<Step>& steps);

/// What run_kernel throws when it stopped because KernelContext::stop was set (a `command` sent SIGTERM,
/// a CPU kernel between its blocks): the attempt was cancelled, not failed, and the backend records no
/// error for it, as for a `sleep` whose timer was cancelled.
class KernelCancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs the task's kernel (not sleep). Returns its result (may be null); throws std::exception with a
/// message for the trace when the attempt fails.
std::shared_ptr<const Value> run_kernel(const KernelSpec& kernel, const KernelContext& ctx);

/// The row generator behind shard_stats and evaluate, for tests: rows of item `item` (X row-major in
/// `x`, features per row), deterministic in (seed, item).
///
/// Rows come in blocks of kRowsPerBlock, block b of item i from its own stream (Stream::data, i, b):
/// each row is `features` standard normals x, then y = x . w* + noise * N(0, 1), with w* =
/// true_weights(seed, features). Blocks are what shard_stats spreads over threads, so its statistics
/// do not depend on the thread count.
void generate_rows(std::uint64_t seed, std::uint64_t item, std::uint64_t rows, int features, double noise,
                   Eigen::MatrixXd& x, Eigen::VectorXd& y);

/// Rows per block of generate_rows (and per unit of shard_stats' parallel work).
inline constexpr std::uint64_t kRowsPerBlock = 1024;

/// The true weights w* of the generated data: standard normals from the stream (Stream::data, 2^64-1,
/// 2^64-1) of the seed; the same for every shard, and the first k of them for k features.
Eigen::VectorXd true_weights(std::uint64_t seed, int features);

/// The kernel names check_kernels accepts, sorted.
std::vector<std::string> kernel_names();

}  // namespace shardflow::exec
