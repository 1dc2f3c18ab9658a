#include "../../planner/progress.hpp"  // private to planner/

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

using shardflow::planner::ProgressGate;

// Two threads take counts 30 and 31; 31 gets the lock first. Before ProgressGate the display then went
// from 31% back to 30% (seen in `shardflow sweep`: "3%" then "2%").
TEST_CASE("progress: a count taken earlier but shown later is dropped", "[planner]") {
  std::vector<double> shown;
  ProgressGate gate([&](double f) { shown.push_back(f); }, 100);
  gate.show(31);
  gate.show(30);
  gate.show(31);
  gate.show(32);
  CHECK(shown == std::vector<double>{0.31, 0.32});
}

TEST_CASE("progress: every hundredth of the total and the end are shown", "[planner]") {
  std::vector<double> shown;
  ProgressGate gate([&](double f) { shown.push_back(f); }, 250);  // every 2nd run
  for (int i = 0; i < 250; ++i) gate.finished();
  REQUIRE(shown.size() == 125);
  CHECK(shown.front() == 2.0 / 250);
  CHECK(shown.back() == 1.0);
  ProgressGate few([&](double f) { shown.push_back(f); }, 3);  // fewer runs than hundredths: each
  shown.clear();
  for (int i = 0; i < 3; ++i) few.finished();
  CHECK(shown == std::vector<double>{1.0 / 3, 2.0 / 3, 1.0});
  ProgressGate none({}, 10);  // nothing to show to: nothing counted
  for (int i = 0; i < 10; ++i) none.finished();
}

// The auto search counts its runs against an estimate of them: past it, the fraction stays at 0.99.
TEST_CASE("progress: an estimated total stops at 0.99", "[planner]") {
  std::vector<double> shown;
  ProgressGate gate([&](double f) { shown.push_back(f); }, 4, true);
  for (int i = 0; i < 7; ++i) gate.finished();
  CHECK(shown == std::vector<double>{0.25, 0.5, 0.75, 0.99});
}
