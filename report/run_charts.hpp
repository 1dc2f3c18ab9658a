// The charts and tables of a run page, shared with the prediction page.
#pragma once

#include <string>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow::report::detail {

/// "seed 42 · backend sim · 1,200 tasks, 1,210 attempts on 40 nodes".
std::string run_facts(const Trace& trace);

/// CPU, memory and GPU requested over available (GPU only when some node has one), and pending pods,
/// over [0, end_s]: two line charts.
void utilization_charts(std::string& out, const Trace& trace, const Metrics& metrics, double end_s);

/// A run-time histogram of each step's successful attempts, and a table of its queue waits and runs.
void step_charts(std::string& out, const Trace& trace, const Metrics& metrics);

/// The `n` attempts that ran longest, in a sortable table.
void slowest_table(std::string& out, const Trace& trace, std::size_t n);

}  // namespace shardflow::report::detail
