#include <vector>

#include <catch2/catch.hpp>

#include "sim/node_index.hpp"
#include "sim/scoring.hpp"

using namespace shardflow;
using namespace shardflow::sim;

TEST_CASE("Scoring: numFeasibleNodesToFind follows kube-scheduler", "[sim]") {
  CHECK(num_feasible_nodes_to_find(0, 50) == 50);          // fewer than 100: all
  CHECK(num_feasible_nodes_to_find(0, 100) == 100);        // 50 - 0 = 50% of 100 = 50 -> at least 100
  CHECK(num_feasible_nodes_to_find(0, 1000) == 420);       // 50 - 8 = 42%
  CHECK(num_feasible_nodes_to_find(0, 5000) == 500);       // 50 - 40 = 10%
  CHECK(num_feasible_nodes_to_find(0, 10000) == 500);      // 50 - 80 < 5 -> 5%
  CHECK(num_feasible_nodes_to_find(10, 500) == 100);       // 50 -> at least 100
  CHECK(num_feasible_nodes_to_find(30, 1000) == 300);      // explicit percentage
  CHECK(num_feasible_nodes_to_find(100, 10000) == 10000);  // 100%: all
}

TEST_CASE("NodeIndex: visits fitting nodes in rotated order and counts what it passed", "[sim]") {
  NodeIndex index(8);
  // Slots 0..7 with free cpu 0, 1000, 2000, ..., 7000; slot 5 is in pool 1, the others in pool 0.
  for (std::uint32_t i = 0; i < 8; ++i)
    index.set(i, {static_cast<MilliCpu>(i) * 1000, 8 * kGiB, 0, 10}, i == 5 ? 1 : 0);
  std::vector<std::uint32_t> seen;
  auto collect = [&](std::uint32_t slot) {
    seen.push_back(slot);
    return true;
  };
  SECTION("all fitting nodes from a start index, wrapping around") {
    const std::uint32_t passed = index.for_each_fit(6, {3000, kGiB, 0}, ~0ull, collect);
    CHECK(seen == std::vector<std::uint32_t>{6, 7, 3, 4, 5});
    CHECK(passed == 8);  // never stopped: every slot was passed over
  }
  SECTION("stopping after two: passed = slots from the start up to the second fit") {
    const std::uint32_t passed = index.for_each_fit(6, {3000, kGiB, 0}, ~0ull, [&](std::uint32_t slot) {
      seen.push_back(slot);
      return seen.size() < 2;
    });
    CHECK(seen == std::vector<std::uint32_t>{6, 7});
    CHECK(passed == 2);
    seen.clear();
    const std::uint32_t passed2 = index.for_each_fit(7, {3000, kGiB, 0}, ~0ull, [&](std::uint32_t slot) {
      seen.push_back(slot);
      return seen.size() < 2;
    });
    CHECK(seen == std::vector<std::uint32_t>{7, 3});
    CHECK(passed2 == 5);  // 7, 0, 1, 2, 3
  }
  SECTION("pool masks and the O(1) answer") {
    index.for_each_fit(0, {1000, kGiB, 0}, 0b10, collect);
    CHECK(seen == std::vector<std::uint32_t>{5});
    CHECK(index.may_fit({7000, kGiB, 0}, ~0ull));
    CHECK_FALSE(index.may_fit({7001, kGiB, 0}, ~0ull));
    CHECK_FALSE(index.may_fit({1000, kGiB, 1}, ~0ull));  // no GPUs anywhere
    CHECK_FALSE(index.may_fit({1000, kGiB, 0}, 0b100));  // no node of pool 2
    seen.clear();
    index.for_each_fit(0, {6000, kGiB, 0}, 0b10, collect);  // the pool-1 node has 5000
    CHECK(seen.empty());
  }
  SECTION("per-resource maxima may pass a range where no single node fits; leaves are exact") {
    NodeIndex two(2);
    two.set(0, {4000, kGiB, 0, 10}, 0);
    two.set(1, {1000, 8 * kGiB, 0, 10}, 0);
    CHECK(two.may_fit({2000, 2 * kGiB, 0}, ~0ull));
    two.for_each_fit(0, {2000, 2 * kGiB, 0}, ~0ull, collect);
    CHECK(seen.empty());
  }
  SECTION("cleared slots and growth") {
    index.clear(7);
    index.resize(20);
    index.set(19, {9000, kGiB, 0, 1}, 0);
    index.for_each_fit(0, {6500, kGiB, 0}, ~0ull, collect);
    CHECK(seen == std::vector<std::uint32_t>{19});
    CHECK(index.slots() == 20);
    index.set(19, {9000, kGiB, 0, 0}, 0);  // no pod slots left
    seen.clear();
    index.for_each_fit(0, {6500, kGiB, 0}, ~0ull, collect);
    CHECK(seen.empty());
  }
}
