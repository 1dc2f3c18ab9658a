// The Pareto front of a cost against time plane: the configurations of a sweep that no other one beats
// in both cost and makespan. `shardflow sweep` prints and writes it (SweepResult::pareto); the sweep
// report draws it.
//
//   std::vector<CostTime> p = {{1, 10}, {2, 5}, {3, 6}};
//   pareto_front(p);  // {0, 1}: (3, 6) is beaten by (2, 5)
//
// Header-only so that the report layer, which reads the planner's result types but does not link the
// planner (and with it the simulator), uses this very implementation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

namespace shardflow::planner {

/// A point of a cost (x) against time (y) plane, both to be minimized.
struct CostTime {
  double cost = 0;
  double time = 0;
};

/// The indices of the points no other point beats in both cost and time (equal in one and better in the
/// other counts as beating), ordered by cost, then time, then index. Equal points are all kept.
inline std::vector<std::size_t> pareto_front(std::span<const CostTime> p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return p[a].cost != p[b].cost ? p[a].cost < p[b].cost : p[a].time < p[b].time;
  });
  // By cost, then time: a point is on the front unless an earlier one is as fast (and so as cheap and
  // as fast, or cheaper and as fast): it must be strictly faster than every cheaper-or-equal point seen,
  // or equal to the last point kept.
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (front.empty() || p[i].time < p[front.back()].time ||
        (p[i].time == p[front.back()].time && p[i].cost == p[front.back()].cost))
      front.push_back(i);
  }
  return front;
}

/// The same among the points with `eligible[i]` (indices into `p`, ordered as above). A sweep's front is
/// that of its configurations whose quantile makespan is not a failed run's (failures_reach_quantile): a
/// run whose tasks fail ends early and costs little, which no plan can use.
inline std::vector<std::size_t> pareto_front(std::span<const CostTime> p, const std::vector<bool>& eligible) {
  std::vector<CostTime> kept;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (eligible[i]) {
      kept.push_back(p[i]);
      index.push_back(i);
    }
  std::vector<std::size_t> front = pareto_front(kept);
  for (std::size_t& i : front) i = index[i];
  return front;
}

}  // namespace shardflow::planner
