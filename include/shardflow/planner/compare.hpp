// Strategy comparison: run a few named variants of one scenario side by side, each R times, and say how
// each differs from the first (the baseline), with a paired confidence interval per difference.
//
// Replication k of every variant uses the seed (base seed + k), and the simulator's random streams are
// keyed by what they are for (a task's duration, an input size), so variants are compared on the same
// draws (common random numbers). The difference of variant v to the baseline is computed per seed,
// d_k = x_v,k - x_0,k, and summarized like any sample: its mean and a 95% interval of the mean (Hall's
// skewness-corrected t interval, see summarize).
// Pairing takes out the noise both variants share, so a small real difference is found with few runs. A
// difference is significant when its interval excludes 0. Runs go in parallel on all cores (oneTBB); the
// result does not depend on how many there are.
//
//   CompareSpec spec;
//   spec.variants = {parse_variant("narrow:pipeline.steps[sleep].parallel_for.parallelism=2"),
//                    parse_variant("wide:pipeline.steps[sleep].parallel_for.parallelism=5")};
//   spec.replications = 20;
//   CompareResult r = run_compare("scenarios/argo-parallelism-limit.yaml", spec);
//   print_compare(std::cout, r);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <shardflow/core/backend.hpp>
#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::planner {

/// One named variant: --set overrides (and overlays) applied over the scenario after the common ones.
struct Variant {
  std::string name;
  std::vector<std::string> sets;                // PATH=VALUE, as for --set
  std::vector<SourceLocation> set_where;        // where each set was written (for errors), parallel to `sets`
  std::vector<SourceLocation> set_value_where;  // where each set's value was written, when in a file
  std::vector<ScenarioFile> overlays;           // merged after the common --overlay and --set, before `sets`
  std::vector<std::string> overlays_given;      // each overlay as the variants file names it (for display)
  SourceLocation where;                         // where the variant was given
};

/// "NAME:PATH=V[,PATH=V...]" (or "NAME" alone: the scenario unchanged). Commas inside [...], {...} or
/// quotes do not split assignments. Throws InputError naming the `--variant` text on a bad one.
Variant parse_variant(const std::string& text);

/// A variants file: a mapping with `variants:`, a list of {name, set: {PATH: VALUE, ...}, overlay: FILE}
/// (overlay relative to the variants file). Throws InputError naming file:line:col and the field.
std::vector<Variant> read_variants_file(const std::string& path);
std::vector<Variant> read_variants_text(const std::string& yaml, const std::string& file,
                                        const std::string& base_dir = ".");

struct CompareSpec {
  std::vector<Variant> variants;       // the first is the baseline
  std::vector<ScenarioFile> overlays;  // merged over every variant's scenario first
  std::vector<std::string> sets;       // then these, then the variant's own overlays and sets
  std::string cluster;                 // LoadOptions::cluster
  std::vector<std::string> params;     // LoadOptions::params
  std::uint64_t max_tasks = LoadOptions::kDefaultMaxTasks;  // LoadOptions::max_tasks (--max-tasks)
  int replications = 10;
  std::optional<std::uint64_t> base_seed;  // default: the scenario's seed
  std::optional<double> deadline_s;
  double quantile = 95;
  /// Optional: as SweepSpec::stop (run_compare_text throws Interrupted).
  const std::atomic<bool>* stop = nullptr;
};

/// One replication of one variant.
struct CompareRun {
  std::uint64_t seed = 0;
  double makespan_s = 0;
  double cost = 0;
  double cpu_utilization = 0;  // Metrics::mean_cpu_utilization
  bool failed = false;         // some task exhausted its retries
};

/// A variant run for real (e.g. the local backend) next to the simulator's prediction of the same runs.
struct Measurement {
  std::string backend;                               // "local"
  std::vector<std::uint64_t> seeds;                  // one real run per seed
  std::vector<double> measured_makespan_s;           // per seed
  std::vector<double> predicted_makespan_s;          // per seed: the simulator on a model of where it ran
  std::vector<std::uint64_t> measured_tasks_failed;  // per seed: the real run's (0: all succeeded)
  [[nodiscard]] std::size_t runs_with_failed_tasks() const {
    std::size_t n = 0;
    for (std::uint64_t f : measured_tasks_failed) n += f > 0;
    return n;
  }
  [[nodiscard]] double measured_mean() const { return mean_of(measured_makespan_s); }
  [[nodiscard]] double predicted_mean() const { return mean_of(predicted_makespan_s); }

 private:
  static double mean_of(const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0 : sum / static_cast<double>(v.size());
  }
};

struct VariantResult;
/// What makes a variant, for display: "overlay P" for each of its overlays, then its sets, joined with
/// `sep`; "" for the scenario as it is. (Inline: the report layer, which does not link the planner, uses it.)
inline std::string variant_changes(const VariantResult& v, const std::string& sep);

struct VariantResult {
  std::string name;
  std::vector<std::string> sets;      // the variant's own overrides, for display
  std::vector<std::string> overlays;  // the variant's own overlay files, as given (applied before `sets`)
  std::vector<CompareRun> runs;       // one per replication, seed order
  Summary makespan_s;                 // over every run (the intervals' low ends at least 0)
  Summary cost;
  Summary cpu_utilization;
  double finished_cost_mean = 0;   // the mean cost of its runs in which no task failed (ConfigResult's)
  double quantile_makespan_s = 0;  // a run whose tasks failed counting as late (ConfigResult's)
  int runs_with_failed_tasks = 0;
  double p_meets_deadline = 0;
  /// With a deadline: enough runs by it (the quantile's nearest rank), a run whose tasks failed being late.
  bool meets = false;
  /// Paired by seed, over the seeds where neither run had failed tasks (n says how many): this variant
  /// minus the baseline (all zero for the baseline itself).
  Summary diff_makespan_s;
  Summary diff_cost;
  std::optional<Measurement> measured;
};

inline std::string variant_changes(const VariantResult& v, const std::string& sep) {
  std::string out;
  for (const std::string& o : v.overlays) out += (out.empty() ? "" : sep) + "overlay " + o;
  for (const std::string& s : v.sets) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// A difference is significant when its 95% interval excludes 0. One run has no interval (it is the
/// difference itself, of zero width): nothing about it is significant.
[[nodiscard]] inline bool significant(const Summary& diff) {
  return diff.n >= 2 && (diff.ci95_low > 0 || diff.ci95_high < 0);
}

/// The decimals to print a difference with: `decimals`, or more for a significant difference whose bound
/// nearer 0 would round to 0 with them (up to 6), so that "significant" never reads +0.00 (+0.00..+0.01).
/// (Inline: the report layer uses it without linking the planner.)
[[nodiscard]] inline int difference_decimals(const Summary& diff, int decimals) {
  if (!significant(diff)) return decimals;
  const double nearer = std::min(std::abs(diff.ci95_low), std::abs(diff.ci95_high));
  double step = 0.5;  // half a unit of the last decimal: what rounds to 0
  for (int i = 0; i < decimals; ++i) step /= 10;
  while (decimals < 6 && nearer < step) {
    ++decimals;
    step /= 10;
  }
  return decimals;
}

struct CompareResult {
  std::string scenario;
  int replications = 0;
  std::uint64_t base_seed = 0;
  std::optional<double> deadline_s;
  double quantile = 95;
  std::vector<VariantResult> variants;
  std::optional<std::size_t> fastest;   // lowest mean makespan (then cost, then order)
  std::optional<std::size_t> cheapest;  // lowest mean cost (then mean makespan, then order)
  /// With a deadline: the cheapest variant that meets it (then quantile makespan, then order).
  std::optional<std::size_t> recommended;
};

/// Runs every variant R times on the simulator (or `backend`'s). Throws InputError for a bad scenario,
/// variant or override; an error in a variant's own set names where the variant was given.
CompareResult run_compare(const std::string& scenario_file, const CompareSpec& spec,
                          const std::function<void(double)>& progress = {},
                          const BackendFactory& backend = {});
CompareResult run_compare_text(const std::string& yaml, const std::string& file, const CompareSpec& spec,
                               const std::function<void(double)>& progress = {},
                               const BackendFactory& backend = {});

/// The scenario of variant `v` (index into spec.variants) with `extra` load changes on top (e.g. the
/// local cluster preset for a prediction); errors in the variant's sets name where it was given.
Scenario load_variant(const std::string& yaml, const std::string& file, const CompareSpec& spec,
                      std::size_t v, const std::string& extra_cluster = "",
                      const std::vector<std::string>& extra_sets = {});

/// Fills each variant's `measured`: `runs` real runs (seeds base, base+1, ...) one after another with
/// `real`, each next to the simulator's makespan for the same seed on the scenario loaded with
/// `predict_cluster` and `predict_sets` on top, at the real runs' time scale `predict_scale`
/// (apply_time_scale: the steps `time_scaled` says run their sampled time scaled, the others at their
/// own speed). A real run with failed tasks is counted in `measured_tasks_failed`. `files_dir`, if given,
/// names each run's RunOptions::files_dir; `measured`, if given, is told each real run's trace.
void measure_variants(
    const std::string& yaml, const std::string& file, const CompareSpec& spec, CompareResult& result,
    const Backend& real, const std::string& backend_name, int runs, const std::string& predict_cluster,
    const std::vector<std::string>& predict_sets, double predict_scale,
    const std::function<bool(const Component&)>& time_scaled,
    const std::function<void(const std::string&)>& status = {},
    const std::function<std::string(std::size_t variant, std::uint64_t seed)>& files_dir = {},
    const std::function<void(std::size_t variant, std::uint64_t seed, const Plan& plan,
                             const Trace& measured)>& measured = {});

/// A table for people; one JSON document (docs/compare-format.md); CSV with one row per variant.
void print_compare(std::ostream& out, const CompareResult& r);
void write_compare_json(std::ostream& out, const CompareResult& r);
void write_compare_csv(std::ostream& out, const CompareResult& r);
/// Reads what write_compare_json writes; `file` names the input in errors (InputError).
CompareResult read_compare_json(std::istream& in, const std::string& file);

}  // namespace shardflow::planner
