// Execution::next_attempt: the number and kind of each attempt, from what the backend told it.
#include <catch2/catch.hpp>

#include <shardflow/core/execution.hpp>

#include "core/pipeline_builders.hpp"

using namespace shardflow;
using namespace shardflow::testing;

namespace {

struct NoHooks {
  void on_ready(TaskId) {}
  void on_start(TaskId) {}
  void on_resolved(TaskId) {}
  void on_all_resolved() {}
};

}  // namespace

TEST_CASE("Execution: next_attempt numbers each task's attempts and says why each exists", "[core]") {
  Pipeline pl = pipeline({component("a", 10), component("b", 10)});
  pl.steps[0].component.retries.max = 5;
  const Plan plan = Plan::unroll(pl);
  NoHooks hooks;
  Execution<NoHooks> x(plan, hooks);
  auto next = [&x](TaskId t) {
    const auto [number, kind] = x.next_attempt(t, SimTime::zero());
    return std::pair{number, kind};
  };
  CHECK(next(0) == std::pair{0u, AttemptKind::first});
  CHECK(next(1) == std::pair{0u, AttemptKind::first});  // numbers are per task
  REQUIRE(x.attempt_failed(0, SimTime::zero(), SimTime::zero()).has_value());
  CHECK(next(0) == std::pair{1u, AttemptKind::retry});
  x.attempt_evicted(0);
  CHECK(next(0) == std::pair{2u, AttemptKind::replacement});
  // A backup asked for comes first, then the kind the last failure or eviction said, until the next one.
  x.want_backup(0);
  x.want_backup(0);
  CHECK(next(0) == std::pair{3u, AttemptKind::backup});
  CHECK(next(0) == std::pair{4u, AttemptKind::backup});
  CHECK(next(0) == std::pair{5u, AttemptKind::replacement});
  REQUIRE(x.attempt_failed(0, SimTime::zero(), SimTime::zero()).has_value());
  CHECK(next(0) == std::pair{6u, AttemptKind::retry});
  CHECK(x.attempts(0) == 7);
  CHECK(next(1) == std::pair{1u, AttemptKind::retry});  // b never failed: retry is the default later kind
}
