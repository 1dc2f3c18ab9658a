// Metrics computed from any backend's Trace, so simulated and measured runs compare field by field.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <shardflow/core/trace.hpp>

namespace shardflow {

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
};

struct StepMetrics {
  std::string step;
  std::uint64_t attempts = 0;
  std::uint64_t failures = 0;   // attempts that did not succeed and were not cancelled
  std::uint64_t succeeded = 0;  // successful attempts
  Percentiles run_seconds;      // started -> finished of successful attempts (all 0 when none)
  Resources requests;           // what each of its pods asked for (from the plan)
};

struct Metrics {
  double makespan_s = 0;            // last finish - 0
  double critical_path_s = 0;       // longest chain of successful attempts' run times along plan edges
  double total_work_s = 0;          // sum of run times (started -> finished) of all attempts
  double cpu_work_core_s = 0;       // sum of run time x requested cores
  double mean_cpu_utilization = 0;  // cpu_work / (node cores x node lifetime), 0..1
  double peak_cpu_utilization = 0;  // highest instantaneous requested/available cores
  Percentiles queue_wait_s;         // submitted -> scheduled, per attempt that was bound (0s if none was)
  double cost = 0;                  // sum over nodes of price_per_hour x billed hours
  std::uint64_t attempts = 0;
  std::uint64_t retries = 0;             // attempts of kind retry (after a failed attempt)
  std::uint64_t backups = 0;             // speculative backup attempts
  std::uint64_t backups_won = 0;         // backups that succeeded (their task's first success)
  std::uint64_t replacements = 0;        // attempts replacing an evicted one (node failure, spot, eviction)
  std::uint64_t failed_attempts = 0;     // attempts that did not succeed and were not cancelled
  std::uint64_t cancelled_attempts = 0;  // a losing speculative attempt, or stopped by the run's end
  std::uint64_t tasks_failed = 0;        // tasks that exhausted their retries
  std::vector<StepMetrics> per_step;
  /// The tasks of one longest chain (critical_path_s), first to last; joins are left out.
  std::vector<TaskId> critical_path;
};

/// Computes metrics. `plan` supplies edges for the critical path and requests for CPU work.
Metrics compute_metrics(const Trace& trace, const Plan& plan);

/// The two figures a sweep needs from each run, without the rest of compute_metrics (its sorts and
/// per-step lists): the last finish (runs start at 0) and the billed node time's price.
double makespan_s(const Trace& trace);
double cost(const Trace& trace);

/// A live run's time left, from a prediction's pace scaled to the run's: `predicted_done_s` is when each
/// task was done (succeeded or failed for good) in the predicted trace, sorted; with `done` tasks done
/// after `elapsed_s` where the prediction had that many done at p, the rest takes
/// (predicted_makespan_s - p) x elapsed_s / p. A prediction 8x too slow (a scenario's durations from
/// another cluster) then gives a right ETA from the first tasks on, where "predicted minus elapsed" said
/// minutes for a run of seconds. Before any task is done (or with no per-task times): the prediction's
/// own remainder, at least 0; once all are done: 0; without a prediction (makespan <= 0): -1.
/// `done_at_s`: when (elapsed) the done-th task ended, if later ticks ask too: the pace is taken then, and
/// the run is taken to go on at it since, up to the next task's predicted end (which has not come), so
/// that the ETA falls while tasks run instead of growing with every second none ends.
double eta_from_prediction(const std::vector<double>& predicted_done_s, double predicted_makespan_s,
                           std::uint64_t done, double elapsed_s, std::optional<double> done_at_s = {});
/// cost()'s sum: each node's billed time (`billed`: billed_from to down) added up exactly, in whole
/// nanoseconds, per price; then each price times its hours. So two runs with the same node time at the
/// same prices cost the same to the bit, whichever nodes it was spread over (3 nodes x 14 s and 6 x 7 s):
/// a sweep or a comparison tells equal costs apart by the makespan, not by rounding. A sweep prices a
/// trace with another configuration's prices by it (sim::simulation_view).
class CostSum {
 public:
  void add(double price_per_hour, Duration billed);
  [[nodiscard]] double total() const;

 private:
  struct Part {
    double price_per_hour = 0;
    std::int64_t ns = 0;  // billed time at this price, until it would overflow
    double more_s = 0;    // past that, in seconds
  };
  std::vector<Part> parts_;  // in the order the prices first came
};

/// Exact nearest-rank percentile (p in [0,100]) of unsorted values; 0 for an empty set.
double percentile(std::vector<double> values, double p);
/// The 1-based rank percentile() takes among n > 0 values: the smallest with at least p% at or below it.
std::size_t nearest_rank(double p, std::size_t n);

void write_metrics_json(std::ostream& out, const Metrics& m);
/// Reads what write_metrics_json writes; `file` names the input in errors. Throws InputError for text
/// that is not JSON or a missing or mistyped field (named as in `steps[1].run_s.p95`, at its line:col).
/// `requests` and `critical_path`, which older files lack, are read as empty; `backups`, `backups_won`,
/// `replacements` and `cancelled_attempts`, as 0.
Metrics read_metrics_json(std::istream& in, const std::string& file);
/// CSV: one row per metric name,value (per-step rows as step.<name>.<field>).
void write_metrics_csv(std::ostream& out, const Metrics& m);

}  // namespace shardflow
