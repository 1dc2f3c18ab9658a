// Lanes for intervals, shared by the timeline and the HTML Gantt chart: no two overlapping intervals
// share a lane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardflow::report::detail {

struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::size_t attempt = 0;  // the attempt it stands for (an index into Trace::attempts)
};

/// By start time, each interval takes the lowest-numbered lane free at its start (one that ended at or
/// before it). Returns a lane per interval, in the order given.
std::vector<int> assign_lanes(const std::vector<Interval>& v);

}  // namespace shardflow::report::detail
