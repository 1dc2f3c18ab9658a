// The committed scenario files, simulated: exact makespans where the scenario documents one, and
// sanity (everything finishes, runs are reproducible) for the others.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {
Trace run_file(const std::string& name, std::uint64_t seed = 0) {
  const Scenario sc = load_scenario_file(std::string(SHARDFLOW_SOURCE_DIR) + "/scenarios/" + name);
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = seed != 0 ? seed : sc.seed;
  return sim::simulate(sc, plan, opt);
}
}  // namespace

TEST_CASE("Scenarios: argo-parallelism-limit.yaml takes exactly 50 s", "[sim]") {
  const Trace t = run_file("argo-parallelism-limit.yaml");
  CHECK(t.scenario == "argo-parallelism-limit");
  CHECK(t.attempts.size() == 10);
  CHECK(makespan(t) == SimTime::from_s(50));
  CHECK(max_concurrent(t, 0) == 2);
}

TEST_CASE("Scenarios: argo-parallelism-nested-dag.yaml takes exactly 80 s", "[sim]") {
  const Trace t = run_file("argo-parallelism-nested-dag.yaml");
  CHECK(t.attempts.size() == 15);
  CHECK(makespan(t) == SimTime::from_s(80));
}

TEST_CASE("Scenarios: every committed scenario runs to the end, reproducibly", "[sim]") {
  for (const char* name :
       {"shard-preprocess-train.yaml", "hyperparameter-sweep.yaml", "regional-evaluation.yaml"}) {
    INFO(name);
    const Trace a = run_file(name);
    const Trace b = run_file(name);
    std::ostringstream ja, jb;
    write_trace_json(ja, a);
    write_trace_json(jb, b);
    CHECK(ja.str() == jb.str());
    CHECK(a.tasks_failed == 0);
    CHECK(count_outcome(a, Outcome::cancelled) == 0);
    CHECK(makespan(a) > SimTime::zero());
  }
}
