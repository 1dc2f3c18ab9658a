// Reports people open in a browser: one self-contained HTML page per run, per sweep, and for a
// prediction next to a measurement. A page is one file with its SVG charts, CSS and a few lines of
// script (tooltips, sortable tables) inline: no network, opens from disk, prints.
//
//   std::ofstream out(dir / "report.html");
//   report::write_run_report(out, trace, metrics, {.version = "0.1.0"});
//
// A run report shows the headline figures, a Gantt chart of the pods by node (coloured by step, with
// retries, failures and the critical path marked), utilization and pending pods over time, per-step
// run-time histograms and queue waits, and the slowest attempts. It needs only what a run's directory
// holds (trace.json, metrics.json: requests per step and the critical path come from the metrics), so
// `shardflow report DIR` rebuilds it for a trace of any backend. Large traces stay small: above
// ReportOptions::max_bars bars, each node may draw its share of them, and a node with more pods is drawn
// as time bins of its running pods per step; the chart says which.
//
// The report layer reads the planner's result types (planner/sweep.hpp, plain structs) but does not
// link the planner, which links the simulator.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/pareto.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::report {

struct ReportOptions {
  std::string version;  // shardflow's, shown in the page's header
  /// At most this many Gantt bars in a chart; beyond it, nodes with more than their share are aggregated.
  std::size_t max_bars = 12'000;
};

/// A run: its trace and metrics (as compute_metrics gives them, or read back from metrics.json).
void write_run_report(std::ostream& out, const Trace& trace, const Metrics& metrics,
                      const ReportOptions& options);

/// A sweep: cost against the makespan quantile of every configuration, the Pareto front, the deadline
/// and the recommendation; the configurations in a sortable table.
void write_sweep_report(std::ostream& out, const planner::SweepResult& sweep, const ReportOptions& options);

/// A comparison: each variant's mean makespan and mean cost as bars with their 95% intervals, the paired
/// differences to the baseline with theirs (significant ones marked), the variants in a table, and where
/// a real backend ran, the measured makespan next to the predicted one.
void write_compare_report(std::ostream& out, const planner::CompareResult& compare,
                          const ReportOptions& options);

/// One run's files, for the pages that show several runs.
struct RunData {
  const Trace& trace;
  const Metrics& metrics;
  std::string label;  // "predicted", "measured", a directory
};

/// A prediction next to a measurement: both Gantt charts on one time axis, and the error per step
/// (run-time percentiles and makespan, predicted against measured).
/// For a run at another time scale (run --backend local --time-scale F) than the run it is compared with:
/// "ran at time scale F (run --time-scale): its sampled-time steps took that times their model time, so the
/// errors are mostly the scale's"; "" otherwise. The prediction report says it, and `report` warns with it.
std::string time_scale_caveat(const Trace& run, const Trace& other);

void write_prediction_report(std::ostream& out, const RunData& predicted, const RunData& measured,
                             const ReportOptions& options);

/// A duration for people, rounded to what matters at its size: "1h15m", "4m3s", "2.5s", "350ms".
std::string human_duration(double seconds);

/// The Pareto front is the planner's (one implementation: shardflow/planner/pareto.hpp).
using planner::CostTime;
using planner::pareto_front;

}  // namespace shardflow::report
