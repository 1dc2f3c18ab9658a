// The Gantt chart of a run's pods by node, for the run and prediction pages.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <shardflow/core/trace.hpp>

namespace shardflow::report::detail {

struct GanttOptions {
  std::string title;
  double end_s = 0;               // the time axis runs from 0 to here
  std::size_t max_bars = 12'000;  // above this, nodes with more than their share are drawn as time bins
};

/// Appends the chart (a heading, a note when nodes are aggregated, the SVG, its legend) to `out`: one
/// `rect.bar` per attempt bound to a node (from binding to end), coloured by step; retries outlined
/// dashed, attempts that did not succeed crossed at their end (`path.x`), the critical path's attempts
/// (`critical`: task ids) outlined thick. The <svg> carries data-bars, data-aggregated-nodes.
void gantt(std::string& out, const Trace& trace, std::span<const TaskId> critical,
           const GanttOptions& options);

/// The legend entries of a Gantt chart's steps and marks, as HTML; `drawn` is drawn_steps(trace).
std::string gantt_legend(const Trace& trace, const std::vector<std::size_t>& drawn);

}  // namespace shardflow::report::detail
