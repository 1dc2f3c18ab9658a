// Settings given in a scenario file reach the simulator: each case loads YAML text (not a scenario
// built in code) and checks an exact makespan that differs from the one the default would give.
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

Trace run_text(const std::string& yaml) {
  const Scenario sc = load_scenario_text(yaml, "settings.yaml");
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = sc.seed;
  return sim::simulate(sc, plan, opt);
}

}  // namespace

TEST_CASE("ScenarioSettings: max_pods limits the pods a node runs at once", "[sim]") {
  // One node with room for 64 one-CPU tasks; four 10 s tasks, no overheads.
  auto yaml = [](const std::string& pool_extra) {
    return "name: max-pods\n"
           "overheads: none\n"
           "cluster:\n"
           "  node_pools:\n"
           "    - {name: big, cpu: 64, memory: 256Gi, count: 1" +
           pool_extra +
           "}\n"
           "pipeline:\n"
           "  steps:\n"
           "    - {name: w, parallel_for: {count: 4}, resources: {cpu: 1, memory: 1Gi}, duration: {base: "
           "10s}}\n";
  };
  SECTION("two pods per node: two waves of two") {
    const Trace t = run_text(yaml(", max_pods: 2"));
    REQUIRE(t.attempts.size() == 4);
    CHECK(makespan(t) == SimTime::from_s(20));
    CHECK(max_concurrent(t, 0) == 2);
  }
  SECTION("the default (110) runs all four at once") {
    const Trace t = run_text(yaml(""));
    CHECK(makespan(t) == SimTime::from_s(10));
    CHECK(max_concurrent(t, 0) == 4);
  }
}

TEST_CASE("ScenarioSettings: serialize_image_pulls false pulls two images on a node at once", "[sim]") {
  // Steps a and b (10 s each) use different 2 GiB images on one node; a pull runs at 1 GiB/s, so 2 s.
  // Serialized (kubelet's default): a pulls 0..2 and runs 2..12; b's pull waits, 2..4, and b runs 4..14.
  // Parallel: both pull 0..2 at the full bandwidth and run 2..12. Nothing else costs time: one pod per
  // task, free scheduling and binding, no sandbox start.
  auto yaml = [](const std::string& serialize) {
    return "name: pulls\n"
           "overheads: {orchestrator: none, sandbox_start: 0s, image_pull_bandwidth: 1GiB/s, image_size: "
           "2GiB" +
           serialize +
           "}\n"
           "cluster:\n"
           "  node_pools:\n"
           "    - {name: p, cpu: 8, memory: 64Gi, count: 1}\n"
           "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n"
           "pipeline:\n"
           "  steps:\n"
           "    - {name: a, image: img-a, duration: {base: 10s}}\n"
           "    - {name: b, image: img-b, duration: {base: 10s}}\n";
  };
  auto pull_of = [](const Trace& t, std::uint32_t step) {
    for (const AttemptRecord& r : t.attempts)
      if (r.step == step) return r.image_pull;
    FAIL("no attempt of step " << step);
    return Duration::zero();
  };
  SECTION("true") {
    const Trace t = run_text(yaml(", serialize_image_pulls: true"));
    REQUIRE(t.attempts.size() == 2);
    CHECK(pull_of(t, 0) == Duration::from_s(2));
    CHECK(pull_of(t, 1) == Duration::from_s(4));
    CHECK(makespan(t) == SimTime::from_s(14));
  }
  SECTION("absent means true") {
    CHECK(makespan(run_text(yaml(""))) == SimTime::from_s(14));
  }
  SECTION("false") {
    const Trace t = run_text(yaml(", serialize_image_pulls: false"));
    REQUIRE(t.attempts.size() == 2);
    CHECK(pull_of(t, 0) == Duration::from_s(2));
    CHECK(pull_of(t, 1) == Duration::from_s(2));
    CHECK(makespan(t) == SimTime::from_s(12));
  }
}

TEST_CASE("ScenarioSettings: driver_resources are the kfp-v2 driver pods' requests", "[sim]") {
  // Two tasks of 10 s, each needing the whole 2-CPU node; each attempt first runs a 3 s driver pod.
  // Small drivers (100m, the default) both run 0..3; executor 1 runs 3..13, executor 2 13..23.
  // Drivers of 2 CPUs take the node too: driver 1 0..3; driver 2 (created first) 3..6; executor 1
  // 6..16; executor 2 16..26.
  auto yaml = [](const std::string& driver) {
    return "name: drivers\n"
           "overheads: {orchestrator: kfp-v2, driver_pod: 3s, sandbox_start: 0s, image_pull_bandwidth: 0/s" +
           driver +
           "}\n"
           "cluster:\n"
           "  node_pools:\n"
           "    - {name: p, cpu: 2, memory: 8Gi, count: 1}\n"
           "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n"
           "pipeline:\n"
           "  steps:\n"
           "    - {name: w, parallel_for: {count: 2}, resources: {cpu: 2}, duration: {base: 10s}}\n";
  };
  CHECK(makespan(run_text(yaml(""))) == SimTime::from_s(23));
  CHECK(makespan(run_text(yaml(", driver_resources: {cpu: 2}"))) == SimTime::from_s(26));
}

TEST_CASE(
    "Cluster preset local: a pod that did not fit starts as soon as room frees, as on the local backend",
    "[sim]") {
  // Three 500 ms tasks of one CPU on two cores: the third does not fit at 0 and starts at 0.5 s.
  const std::string yaml =
      "name: backoff\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: x, parallel_for: {count: 3}, resources: {cpu: 1}, duration: {base: 500ms}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 2, memory: 1Gi, count: 1}\n"
      "overheads: none\n";
  LoadOptions local;
  local.cluster = "local";
  local.sets = {"cluster.node_pools[local].cpu=2"};
  const Scenario s = load_scenario_text(yaml, "backoff.yaml", local);
  const Trace t = sim::simulate(s, Plan::unroll(s.pipeline), {});
  CHECK(makespan_s(t) == 1.0);
}

TEST_CASE(
    "ScenarioSettings: indexed-job's job_sync refills a slot and completes the Job 1 s after a pod ends",
    "[sim]") {
  // 50 pods x 2 s, parallelism 5, every other overhead off: each slot runs 10 pods, a new one 1 s after
  // the last ended, so the last pod ends at 9 x (2 + 1) + 2 = 29 s; the fan-in starts 1 s after that
  // (the Job's completion) and ends at 31 s. Without job_sync: 10 x 2 = 20 s, then 21 s.
  const std::string head =
      "name: t\npipeline:\n  steps:\n"
      "    - {name: work, parallel_for: {count: 50, parallelism: 5}, duration: {base: 2s}}\n"
      "    - {name: after, after: [work], duration: {base: 1s}}\n"
      "cluster:\n  node_pools: [{name: n, cpu: 64, memory: 64Gi, count: 1}]\n  scheduler: "
      "{decisions_per_second: 0, bind_latency: 0s}\n"
      "overheads: {orchestrator: indexed-job, sandbox_start: 0s, image_pull_bandwidth: 0/s, "
      "image_size: 0";
  const Trace t = run_text(head + "}\n");
  REQUIRE(t.attempts.size() == 51);
  CHECK(t.attempts.back().started == SimTime::from_s(30));
  CHECK(makespan(t) == SimTime::from_s(31));
  const Trace off = run_text(head + ", job_sync: 0s}\n");
  CHECK(makespan(off) == SimTime::from_s(21));
  const Trace argo = run_text(
      "name: t\npipeline:\n  steps:\n    - {name: work, parallel_for: {count: 50, parallelism: 5}, "
      "duration: {base: 2s}}\ncluster:\n  node_pools: [{name: n, cpu: 64, memory: 64Gi, count: 1}]\n  "
      "scheduler: {decisions_per_second: 0, bind_latency: 0s}\n"
      "overheads: {orchestrator: argo, sandbox_start: 0s, image_pull_bandwidth: 0/s, image_size: 0}\n");
  CHECK(makespan(argo) == SimTime::from_s(20));
}
