#include "lanes.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace shardflow::report::detail {

std::vector<int> assign_lanes(const std::vector<Interval>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return v[a].begin != v[b].begin ? v[a].begin < v[b].begin : v[a].end < v[b].end;
  });
  std::vector<int> lane(v.size(), 0);
  std::priority_queue<int, std::vector<int>, std::greater<>> free;  // lowest first, as a set's begin()
  using Busy = std::pair<std::int64_t, int>;                        // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  int lanes = 0;
  for (std::size_t i : order) {
    while (!busy.empty() && busy.top().first <= v[i].begin) {
      free.push(busy.top().second);
      busy.pop();
    }
    int l = 0;
    if (free.empty()) {
      l = lanes++;
    } else {
      l = free.top();
      free.pop();
    }
    lane[i] = l;
    busy.emplace(v[i].end, l);
  }
  return lane;
}

}  // namespace shardflow::report::detail
