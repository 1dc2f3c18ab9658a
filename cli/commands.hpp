// Subcommands of `shardflow` that need more than a few lines of wiring.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::cli {

// Option checks that CLI11's own lack (CLI11 2.1): its number checks let "nan" through (every comparison
// with it is false) and CLI::PositiveNumber names DBL_MAX in its message; a std::uint64_t option takes
// "-1" and 2^64 and wraps them.

/// A finite number in [lo, hi] (hi infinite: no upper bound; lo_open: > lo rather than >=).
CLI::Validator finite_number(double lo, double hi, bool lo_open = false, bool hi_open = false);
/// A whole number from `lo` to 2^64 - 1, as written (no sign, no wrap).
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi = UINT64_MAX);

/// How a command loads its scenario: --set, --overlay and --cluster (add_load_options).
struct LoadArgs {
  std::vector<std::string> sets;                            // --set PATH=VALUE overrides
  std::vector<std::string> overlays;                        // --overlay FILE, in order
  std::string cluster;                                      // --cluster local (or FILE, for a KFP pipeline)
  std::vector<std::string> params;                          // --param NAME=VALUE (KFP pipeline parameters)
  std::uint64_t max_tasks = LoadOptions::kDefaultMaxTasks;  // --max-tasks
};

struct SimulateArgs {
  std::string file;
  std::string seed_text;  // checked to be a uint64 by the option's validator
  std::string out_dir;
  LoadArgs load;
  bool quiet = false;
  bool no_files = false;             // print the summary only; write no output directory
  const char* command = "simulate";  // the command's name, for its messages ("run" for run_command)
  // `run` only (`simulate` is `run --backend sim`):
  std::string backend = "sim";
  int cores = 0;               // local: 0 = this machine's
  std::string memory_text;     // local: "" = this machine's
  double time_scale = 1;       // local: multiplies sleep and spin durations
  bool dry_run = false;        // k8s: print the manifests instead of running
  bool emulate = false;        // k8s: the KWOK test cluster (placeholder images, sampled outcomes)
  std::string namespace_name;  // k8s: "" = the context's (dry run: default)
  std::string run_id;          // k8s: "" = a random one
  std::string kubeconfig;      // k8s: "" = $KUBECONFIG or ~/.kube/config
  std::string context;         // k8s: "" = current-context
  double qps = 50;             // k8s: client-side rate limit
  int burst = 100;             // k8s
  bool keep = false;           // k8s: leave the run's objects when it ends
  std::string resume;          // k8s: the output directory of a run to continue
  std::int64_t resume_started_unix_ns = 0;  // k8s: set from that run's run.json
};

/// `shardflow k8s cleanup|status`.
struct K8sArgs {
  std::string run_id;
  bool all = false;
  std::string dir;
  std::string kubeconfig, context, namespace_name;
  bool foreground = false;
  bool no_wait = false;
  double timeout_s = 120;
};
CLI::App* add_k8s_command(CLI::App& app, K8sArgs& args);
int run_k8s_command(CLI::App& cmd, const K8sArgs& args);

struct SweepArgs {
  std::string file;
  std::vector<std::string> vary;
  LoadArgs load;
  int replications = 10;
  std::string deadline_text;
  double quantile = 95;
  std::optional<double> confidence;  // --confidence PERCENT
  std::optional<double> budget;      // --budget COST
  std::optional<std::uint64_t> seed;
  std::string out_dir;
  bool quiet = false;
  std::string shard_text;  // --shard I/N
  std::string search_text = "grid";
  int emit_job = 0;       // --emit-job N: write the Indexed Job instead of sweeping
  std::string image;      // --image for --emit-job
  bool no_reuse = false;  // --no-reuse: simulate configurations that differ only in prices each
};

/// `shardflow merge DIR...`: the slices of one sweep into the whole.
struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out_dir;
  bool quiet = false;
};

struct CompareArgs {
  std::string file;
  std::vector<std::string> variant;  // --variant NAME:PATH=V,...
  std::string variants_file;         // --variants FILE
  LoadArgs load;
  int replications = 10;
  std::string deadline_text;
  double quantile = 95;
  std::optional<std::uint64_t> seed;
  std::string out_dir;
  bool quiet = false;
  std::string backend = "sim";  // or local: also run each variant for real
  int measure_runs = 1;         // local: real runs per variant
  int cores = 0;                // local: 0 = this machine's
  double time_scale = 1;        // local
};

struct CalibrateArgs {
  std::string file;
  std::vector<std::string> traces;  // trace.json files, or directories holding one
  std::string out;                  // the overlay to write
  LoadArgs load;
  bool quiet = false;
};

struct ReportArgs {
  std::string dir;        // a run's or a sweep's output directory
  std::string predicted;  // or two runs' directories
  std::string measured;
  std::string out;  // the page ("" = the default)
  bool quiet = false;
};

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args);
int run_compare_command(const CompareArgs& args);

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);
int run_calibrate_command(const CalibrateArgs& args);

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args);
int run_sweep_command(const SweepArgs& args);
CLI::App* add_merge_command(CLI::App& app, MergeArgs& args);
int run_merge_command(const MergeArgs& args);

/// --deadline's duration in seconds (blanks around it ignored: "30s " is 30 s); an InputError at --deadline
/// for anything but a duration above 0.
double deadline_flag_seconds(const std::string& text);

/// An InputError at --out if `dir`, or a directory it would be made in, is a file: "<file> is a file, not a
/// directory (<wanted> would be made in it): <then>" (the parenthesis unless the file is `wanted` itself).
void refuse_file_in_the_way(const std::filesystem::path& dir, const std::filesystem::path& wanted,
                            const std::string& then);

/// The output directory: `out_dir`, or out/<scenario name> (a run's), or out/<scenario name>/<sub> (a
/// sweep's or a comparison's, so that they do not replace a run's report.html, or each other's). Made at
/// once, so that a bad --out is an InputError before any work is done.
std::filesystem::path make_out_dir(const std::string& out_dir, const std::string& scenario_name,
                                   const std::string& sub = "");
/// Removes the directories make_out_dir made that are empty, innermost first (`--out a/b/c` made all
/// three); true if any was.
bool remove_made_dirs();
/// The output directory's path, without making it.
std::filesystem::path out_dir_path(const std::string& out_dir, const std::string& scenario_name,
                                   const std::string& sub = "");
/// Writes `path` through `write`; a failure to open or write names the path.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

/// Runs `write`, which writes a finished run's result files, and returns "" or the message of its failure
/// (a full disk, a directory in the way) instead of throwing it: the caller prints its summary anyway,
/// then calls results_not_written, so that the run is not lost with the file. The files are a set: each
/// write_file inside `write` goes to a temporary file, and only when all are written are they renamed
/// into place (under a lock on their directory: two commands writing into one directory at once do not
/// mix their files); a failure leaves the files that were there as they were, and no temporary file.
std::string write_results(const std::function<void()>& write);
/// Removes a stale result file (one this run does not write, from an earlier run); inside write_results,
/// when the set is put in place.
void remove_result(const std::filesystem::path& path);
/// Inside write_results: removes (remove_result) the command logs in `dir` (exec::is_command_log_name)
/// that are not in `ours` and were last written before `began` (an earlier run's; another run writing
/// into `dir` at once keeps its own). Other files stay.
void remove_stale_command_logs(const std::filesystem::path& dir, const std::set<std::string>& ours,
                               std::filesystem::file_time_type began);
/// After the summary (if `summary_shown`): "COMMAND: ERROR: the results in DIR are not written: the files
/// there are as they were" (or "are not all written" when write_results put some in place) "(its
/// summary is above)" on stderr. Returns the exit status, 1.
/// `made_dir`: the command made DIR; left empty, it is removed.
int results_not_written(const std::string& command, const std::string& error,
                        const std::filesystem::path& dir, bool summary_shown, bool made_dir = false);

/// The help of a command's input file: every command that loads one reads the three formats.
inline constexpr const char* kInputFileHelp =
    "Scenario file (YAML), compiled KFP pipeline (YAML) or WfCommons instance (JSON); - reads standard input";

/// The first of `paths` that names the same file or directory as `path` (".", "..", symlinks resolved),
/// or nullptr: an --out that would overwrite an input, an input given twice.
const std::string* same_path_in(const std::string& path, const std::vector<std::string>& paths);

/// An input file a command reads (a trace.json, sweep.json, run.json), opened; an InputError naming it when
/// it is missing (`missing`: what to say, e.g. "cannot open it (is this a shardflow output directory?)"),
/// a directory, or unreadable (the system's reason).
std::ifstream open_input(const std::filesystem::path& path, const std::string& missing);

/// While alive, SIGINT, SIGTERM and SIGHUP set flag() instead of ending the process, as during a run (a
/// second Ctrl-C half a second or more after the first ends it at once): for a sweep or comparison to
/// stop its runs and say so. exit_status(): 128 + the signal (130 for Ctrl-C).
class InterruptGuard;
class Interruptible {
 public:
  Interruptible();
  ~Interruptible();
  Interruptible(const Interruptible&) = delete;
  Interruptible& operator=(const Interruptible&) = delete;
  [[nodiscard]] const std::atomic<bool>* flag() const;
  [[nodiscard]] bool interrupted() const;
  [[nodiscard]] int exit_status() const;

 private:
  std::unique_ptr<InterruptGuard> guard_;
};

/// While alive, SIGINT, SIGTERM and SIGHUP end the process at once, as by default, but first remove the
/// temporary files it is writing and kill the commands it runs (core/leftovers.hpp): for a command with
/// nothing partial worth keeping (`report`). A second Ctrl-C during an Interruptible does the same.
class EndsAtOnce {
 public:
  EndsAtOnce();
  ~EndsAtOnce();
  EndsAtOnce(const EndsAtOnce&) = delete;
  EndsAtOnce& operator=(const EndsAtOnce&) = delete;

 private:
  std::unique_ptr<InterruptGuard> guard_;
};

/// The progress of a sweep's or comparison's runs: "VERB... 41%" on standard error when `show`, and the
/// share done kept in `done` (for interrupted_runs).
std::function<void(double)> runs_progress(const char* verb, bool show, double& done);
/// A sweep's or comparison's runs stopped by a signal (planner::Interrupted): says so on stderr, with the
/// share `done` of its runs that had finished (< 0: not said), and that `dir`/`file` is from an earlier one
/// if it is there (else `dir`, if this command made it and it is empty, is removed). Returns
/// guard.exit_status().
int interrupted_runs(const std::string& command, const std::filesystem::path& dir, bool made_dir,
                     const std::string& file, double done, const Interruptible& guard);

/// The files a scenario is loaded from: `file`, the overlays, a --cluster file.
std::vector<std::string> load_inputs(const std::string& file, const LoadArgs& load);
/// An InputError at --out when a file the command writes in `dir` (one of `outputs`) is one of `inputs`
/// (same_path_in): a scenario, overlay or trace would be replaced by a result.
void refuse_outputs_over_inputs(const std::filesystem::path& dir, std::initializer_list<const char*> outputs,
                                const std::vector<std::string>& inputs);

/// The check of an input file's path (instead of CLI::ExistingFile, whose "File is actually a directory"
/// did not say what to give): "PATH: does not exist", or "PATH: is a directory; name a file in it (...)".
CLI::Validator input_file_check();

/// Adds the repeatable `--set PATH=VALUE` option (scenario overrides) to a command.
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);
/// Adds --set (add_set_option), the repeatable `--overlay FILE` and `--cluster local` to a command.
void add_load_options(CLI::App* cmd, LoadArgs& args);
/// The LoadOptions for `args`: the overlay files read (InputError naming one that cannot be).
LoadOptions load_options(const LoadArgs& args);
/// More than one problem with a scenario file, every one (check_scenario_file's, in its order): main prints
/// each on a line, then "FILE: N problems", and exits 2 as for one. what() is the first's.
class ScenarioProblems : public InputError {
 public:
  ScenarioProblems(std::vector<InputError> problems, std::string file);
  [[nodiscard]] const std::vector<InputError>& problems() const { return problems_; }
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::vector<InputError> problems_;
  std::string file_;
};
/// load_scenario_file, reporting every problem the file has as validate does (ScenarioProblems when there
/// are several), not only the first: a user fixing a scenario by running it sees them all at once.
/// `kernels`: with other problems, the kernel problems of the steps that could be read are reported too
/// (a local run's, as `validate` reports them).
Scenario load_scenario_reporting_all(const std::string& file, const LoadOptions& options,
                                     bool kernels = false);
/// Nothing when `problems` is empty; else throws them, in order_problems' order: the one InputError, or
/// ScenarioProblems for several.
void throw_problems(std::vector<InputError> problems, const std::string& file);

CLI::App* add_report_command(CLI::App& app, ReportArgs& args);
int run_report_command(const ReportArgs& args);
/// Write DIR/report.html for a run or a sweep; returns its path.
std::filesystem::path write_run_report_file(const std::filesystem::path& dir, const Trace& trace,
                                            const Metrics& metrics);
std::filesystem::path write_sweep_report_file(const std::filesystem::path& dir,
                                              const planner::SweepResult& sweep);
std::filesystem::path write_compare_report_file(const std::filesystem::path& dir,
                                                const planner::CompareResult& compare);

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args);
/// `shardflow run SCENARIO --backend sim|local|k8s`: one command for every backend, the same files.
CLI::App* add_run_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args);

}  // namespace shardflow::cli
