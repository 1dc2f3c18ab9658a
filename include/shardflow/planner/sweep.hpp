// Capacity planning by sweep: run a scenario under every combination of some overridden fields, each
// configuration R times with different seeds, and summarize makespan and cost per configuration; with
// a deadline, recommend the cheapest configuration whose makespan quantile meets it.
//
// Replication r of every configuration uses the seed (base seed + r), and the simulator's random
// streams are keyed by what they are for (a task's duration, an input size), so configurations are
// compared on the same draws (common random numbers): a difference between two configurations is the
// configuration's, not the dice's. Runs go in parallel on all cores (oneTBB); the result does not depend
// on how many there are.
//
//   SweepSpec spec;
//   spec.dimensions = {parse_dimension("cluster.node_pools[cpu].count=10,20,40")};
//   spec.replications = 20;
//   spec.deadline_s = 5400;
//   SweepResult r = run_sweep("scenarios/shard-preprocess-train.yaml", spec);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <shardflow/core/backend.hpp>
#include <shardflow/core/scenario.hpp>

namespace shardflow::planner {

/// One field to vary: PATH (as for --set) and the values it takes, each YAML text.
struct Dimension {
  std::string path;
  std::vector<std::string> values;
};

/// "PATH=V1,V2,..." -> a Dimension. Commas inside [...], {...} or quotes do not split values.
/// Throws InputError naming the `--vary` text on a bad one.
Dimension parse_dimension(const std::string& text);

/// A slice of a sweep's configurations: `--shard I/N` runs configurations I, I+N, I+2N, ... (in the
/// order of every combination, the last dimension fastest), so slices are deterministic and balanced.
struct Shard {
  int index = 0;
  int count = 1;
};
/// "I/N" -> a Shard; throws InputError naming `--shard` on a bad one.
Shard parse_shard(const std::string& text);

/// How the configurations are searched: `grid` runs every one with every replication; `auto` assumes
/// monotonicity along node counts and parallelism and runs fewer (see run_sweep and docs/planner.md).
enum class Search { grid, automatic };
/// "grid" or "auto"; throws InputError naming `--search`.
Search parse_search(const std::string& text);

struct SweepSpec {
  std::vector<Dimension> dimensions;   // configurations: every combination, the last dimension fastest
  std::vector<ScenarioFile> overlays;  // merged over the scenario of every configuration first (in order)
  std::vector<std::string> sets;       // then these --set overrides, then the configuration's own
  std::string cluster;                 // "" or "local": the cluster preset (LoadOptions::cluster)
  std::vector<std::string> params;     // a KFP pipeline's parameters, NAME=VALUE (LoadOptions::params)
  std::uint64_t max_tasks = LoadOptions::kDefaultMaxTasks;  // LoadOptions::max_tasks (--max-tasks)
  int replications = 10;
  std::optional<std::uint64_t> base_seed;  // default: the scenario's seed
  std::optional<double> deadline_s;
  double quantile = 95;  // the makespan percentile that must meet the deadline
  /// How sure (percent, below 100) the sweep must be that a configuration meets the deadline in at least
  /// `quantile` percent of runs: a configuration meets it only if the one-sided Clopper-Pearson lower
  /// bound at this level of its share of runs by the deadline is at least quantile / 100 (runs_needed).
  /// None: the share itself must be (the quantile's nearest rank).
  std::optional<double> confidence;
  /// Without a deadline: recommend the fastest configuration (lowest quantile makespan, failed runs late)
  /// whose finished_cost_mean is at most this. Not with a deadline (the cheapest that meets it is the pick).
  std::optional<double> budget;
  std::optional<Shard> shard;  // run only this slice of the configurations
  /// Optional: when it becomes true (a signal handler), runs not started are skipped, running ones stop,
  /// and run_sweep_text throws Interrupted: a sweep's figures need every run.
  const std::atomic<bool>* stop = nullptr;
  Search search = Search::grid;
  /// Simulate configurations that the simulator cannot tell apart (equal sim::simulation_view: they
  /// differ only in prices or free text) once per replication, and price each one's trace with its own
  /// prices; the results are the same to the bit as without (`sweep --no-reuse`). Only with the
  /// simulator: a run_sweep given another backend simulates every configuration.
  bool reuse = true;
  /// The memory the sweep may use, in bytes; 0: this machine's. A sweep that would hold more (every
  /// distinct pipeline's plan at once, and its simulations running side by side) is an InputError before
  /// any plan is unrolled.
  std::uint64_t memory_bytes = 0;
};

/// Sample statistics of one quantity over the replications.
struct Summary {
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double min = 0;
  double p50 = 0;  // nearest rank, as everywhere in shardflow
  double p95 = 0;
  double max = 0;
  // 95% confidence interval of the mean: Hall's (1992) skewness-corrected t interval (see summarize)
  // from kMinSkewCorrected values on, the Student-t interval below. It is the Student-t interval for a
  // symmetric sample and leans toward a sample's long tail.
  double ci95_low = 0;
  double ci95_high = 0;
  double skewness = 0;  // sample skewness G1, which the interval corrects for (0 for n < 3)
  std::size_t n = 0;    // values summarized; with fewer than 2 there is no interval (it is the mean)
};
/// The fewest values whose interval summarize() corrects for skewness (the fewest replications the
/// coverage study measured the correction with): the skewness of fewer runs is noise.
inline constexpr std::size_t kMinSkewCorrected = 10;
Summary summarize(const std::vector<double>& values);

struct ConfigResult {
  std::vector<std::string> values;  // one per dimension
  /// Why the configuration cannot run (its cluster has no nodes, or a pod fits no node it may use), or
  /// empty. Such a configuration was not simulated: its figures are zero and nothing reads them.
  std::string infeasible;
  Summary makespan_s;  // over every run (the interval's low end at least 0)
  Summary cost;
  /// The mean cost of the runs in which no task failed (cost.mean when none failed, or all did): what
  /// "cheapest" and the Pareto front compare, since a run whose tasks failed ended early and cheap.
  double finished_cost_mean = 0;
  /// SweepSpec::quantile of the makespans, a run whose tasks failed counting as later than every run that
  /// finished (the slowest run's makespan when the quantile falls on one of those).
  double quantile_makespan_s = 0;
  /// More runs had failed tasks than the quantile lets through: quantile_makespan_s is then the slowest
  /// run's, no makespan to plan with (the table's "none"). Set by finish_sweep.
  bool quantile_on_failed_run = false;
  double p_meets_deadline = 0;     // share of replications that finished by the deadline (if one), with
                                   // no task failed: a run whose tasks failed did not finish the pipeline
  int runs_with_failed_tasks = 0;  // replications where some task exhausted its retries
  /// At least runs_needed(replications, quantile, confidence) replications finished by the deadline:
  /// without a confidence, the quantile makespan is within it and failed runs are too few to move it.
  bool meets = false;
  /// Its plan's critical path by mean run times on its fastest nodes, no overheads
  /// (critical_path_seconds / fastest_speed): its runs cannot end sooner on average, whatever else changes.
  /// 0: not known (a sweep file written before it was kept).
  double critical_path_s = 0;
  /// Per dimension: a parallelism that limits nothing here, 0 or at least its loop's iterations (empty: a
  /// sweep file without it, where only 0 is known to be no limit).
  std::vector<bool> no_limit;
};

/// When no configuration meets the deadline: the nearest one and what it would take.
/// The nearest is the configuration with the fewest replications with failed tasks, then the lowest
/// quantile makespan (the least over the deadline), then the lowest mean cost, then the first in order.
struct Nearest {
  std::size_t config = 0;
  double over_deadline_s =
      0;  // its quantile makespan minus the deadline (<= 0 when only failures kept it out)
  /// Along each varied field, the others held at the nearest's values: the smallest change that the
  /// sweep saw meet the deadline ("none in the range" when nothing met, which is always the case here),
  /// and how the quantile makespan moves along the field's values, which says which way to extend it.
  struct Field {
    std::string path;
    std::vector<std::string> values;  // the field's values the sweep ran on this line, in --vary order
    std::vector<double> quantile_makespan_s;  // the quantile makespan at each
    std::vector<double> critical_path_s;      // the configuration's critical path at each
    std::vector<bool> no_limit;               // whether each value is a parallelism that limits nothing
    /// Values whose quantile makespan fell on a run with failed tasks (quantile_on_failed_run): not a
    /// makespan to read a trend from, so left out of `values`.
    std::vector<std::string> failed_values;
    // "falls", "levels off" (falls, then flat to the last value), "rises", "flat", "lowest inside", "one
    // value"; makespans within 0.1% of the field's largest count as equal.
    std::string trend;
  };
  std::vector<Field> fields;
};

struct SweepResult {
  std::string scenario;
  /// FNV-1a (64 bits, hex) of the scenario text, the overlays' texts, the --set overrides, the cluster
  /// preset and the pipeline parameters: slices of one sweep must have the same.
  std::string inputs_hash;
  std::vector<Dimension> dimensions;
  int replications = 0;
  std::uint64_t base_seed = 0;
  std::optional<double> deadline_s;
  double quantile = 95;
  std::optional<double> confidence;  // SweepSpec::confidence
  std::optional<double> budget;      // SweepSpec::budget
  std::vector<ConfigResult> configs;
  /// The cheapest (by finished_cost_mean, then quantile makespan, then order) configuration that meets the
  /// deadline; with a budget instead, the fastest (quantile makespan, then cost, then order) within it
  /// whose quantile is not a failed run's; none without either, or when no configuration qualifies.
  std::optional<std::size_t> recommended;
  /// The Pareto front of mean cost against the quantile makespan (indices into configs, by cost).
  std::vector<std::size_t> pareto;
  /// With a deadline that no configuration meets.
  std::optional<Nearest> nearest;
  Search search = Search::grid;
  std::size_t configurations_in_space = 0;  // every combination (configs holds fewer with --search auto)
  /// Runs evaluated, configuration by replication (grid: configurations x replications), whether simulated
  /// for that configuration or shared with one it cannot differ from (SweepSpec::reuse).
  std::uint64_t simulations = 0;
  /// The simulations actually run for them: with reuse, one per group of configurations with equal
  /// simulation views and replication. Not written to sweep.json (which does not depend on --no-reuse),
  /// so 0 in a result read back or merged.
  std::uint64_t distinct_simulations = 0;
  std::optional<Shard> shard;  // a slice (--shard): configs holds its configurations only
};

/// The fewest of `replications` runs that must finish by the deadline (with no failed task) for a
/// configuration to meet it. Without a confidence: the quantile's nearest rank (ceil(quantile% of the
/// runs)), as the quantile makespan is judged. With one (percent, below 100): the fewest k whose one-sided
/// Clopper-Pearson lower bound at that level is at least quantile / 100, that is P(X >= k) <= 1 -
/// confidence / 100 for X ~ Binomial(replications, quantile / 100); replications + 1 when no k is enough
/// (too few runs to be that sure, or a quantile of 100).
std::size_t runs_needed(std::size_t replications, double quantile, std::optional<double> confidence);
/// The fewest replications with which a configuration can meet the deadline at that confidence (all of
/// them by the deadline); 0 for a quantile of 100, which no number of runs shows.
std::size_t replications_for_confidence(double quantile, double confidence);
/// More runs with failed tasks than the quantile lets through (replications less its nearest rank): the
/// quantile makespan is then a failed run's, which ended early and cheap, and the configuration is not on
/// the Pareto front. A few failed runs below that count as late runs, as the verdict counts them.
bool failures_reach_quantile(int runs_with_failed_tasks, int replications, double quantile);
/// A 95% interval of a share of runs, k of n: Wilson's score interval (0..1 for n = 0).
struct ShareInterval {
  double low = 0, high = 1;
};
ShareInterval share_interval95(std::size_t k, std::size_t n);

/// A sweep or comparison stopped by its `stop` flag before its runs were done.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

/// Sets recommended, pareto and nearest from configs (and the deadline).
void finish_sweep(SweepResult& r);
/// How many of its configurations cannot run (ConfigResult::infeasible).
std::size_t configurations_that_cannot_run(const SweepResult& r);

/// Combines the slices of one sweep (`shardflow merge`): the result is what the whole sweep on one
/// machine gives, byte for byte once written. `files` names each slice in errors (InputError when they
/// are not the N different slices of one sweep).
SweepResult merge_sweeps(const std::vector<SweepResult>& slices, const std::vector<std::string>& files);

/// What run_sweep_text checks before it simulates, without simulating: its options, and that every
/// configuration loads (the first bad one is the InputError the sweep would throw). Returns the number
/// of configurations, before any --shard (sweep --emit-job, whose slices run elsewhere).
std::size_t check_sweep_text(const std::string& yaml, const std::string& file, const SweepSpec& spec);

/// The sweep's first configuration (the first value of every --vary), loaded as run_sweep_text loads it
/// first, with its errors: what names the scenario (its output directory) before the sweep runs. The
/// scenario without the --vary values may not be one the sweep runs at all (a step that fits only the
/// larger nodes a --vary gives), so it is never loaded on its own. `warn` gets the importer's warnings
/// (LoadOptions::warn), which the sweep's own loads drop: said once, not once per configuration.
Scenario first_configuration(const std::string& yaml, const std::string& file, const SweepSpec& spec,
                             const std::function<void(const std::string&)>& warn = {});

/// Runs the sweep on the scenario file. `progress` (optional) is called with the share of runs done.
/// `backend` makes the backend each worker thread runs with (default: the simulator).
/// Throws InputError for a bad scenario, override or dimension.
SweepResult run_sweep(const std::string& scenario_file, const SweepSpec& spec,
                      const std::function<void(double)>& progress = {}, const BackendFactory& backend = {});
/// The same on scenario text; `file` names it in error messages.
SweepResult run_sweep_text(const std::string& yaml, const std::string& file, const SweepSpec& spec,
                           const std::function<void(double)>& progress = {},
                           const BackendFactory& backend = {});

/// A table for people; one JSON document; CSV with one row per configuration.
void print_sweep(std::ostream& out, const SweepResult& r);
void write_sweep_json(std::ostream& out, const SweepResult& r);
void write_sweep_csv(std::ostream& out, const SweepResult& r);
/// Reads what write_sweep_json writes; `file` names the input in errors (InputError).
SweepResult read_sweep_json(std::istream& in, const std::string& file);

}  // namespace shardflow::planner
