// Settings given in a scenario file reach the simulator: each case loads YAML text (not a scenario
// built in code) and checks an exact makespan that differs from the one the default would give.
#include <algorithm>
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
           "overheads: {orchestrator: kfp-v2, driver_pod: 3s, sandbox_start: 0s, image_pull_bandwidth: 0/s, "
           "control_plane: {sync_period: 0s}" +
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

namespace {

struct Run {
  Trace trace;
  sim::SimStats stats;
};

Run run_stats(const std::string& yaml) {
  const Scenario sc = load_scenario_text(yaml, "control-plane.yaml");
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = sc.seed;
  Run r;
  r.trace = sim::simulate(sc, plan, opt, r.stats);
  return r;
}

// One pool, a free scheduler, no image pulls; pods run 100 ms after they are created (as a kubelet
// would start them), so no pod ends at the very instant of a sync.
std::string control_plane_scenario(const std::string& steps, const std::string& overheads) {
  return "name: t\npipeline:\n  steps:\n" + steps +
         "cluster:\n  node_pools: [{name: n, cpu: 64, memory: 64Gi, count: 1}]\n"
         "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n"
         "overheads: {sandbox_start: 100ms, image_pull_bandwidth: 0/s, image_size: 0, " +
         overheads + "}\n";
}

SimTime at_ms(std::int64_t ms) {
  return SimTime::from_ms(ms);
}

// 50 pods x 2 s, parallelism 5, then a 1 s step: the controller's refill cases below.
const std::string kRefillSteps =
    "    - {name: work, parallel_for: {count: 50, parallelism: 5}, duration: {base: 2s}}\n"
    "    - {name: after, after: [work], duration: {base: 1s}}\n";

// The 10 waves of kRefillSteps' work: wave k's sync creates its 5 pods in slow-start batches of 1, 2, 2
// (5 ms apart) from first_ms + period_ms * k.
void check_waves(const Trace& t, std::int64_t period_ms, std::int64_t first_ms) {
  for (int k = 0; k < 10; ++k) {
    const SimTime wave = at_ms(period_ms * k + first_ms);
    INFO("wave " << k);
    CHECK(t.attempts[5 * k].submitted == wave);
    CHECK(t.attempts[5 * k + 1].submitted == wave + at_ms(5));
    CHECK(t.attempts[5 * k + 2].submitted == wave + at_ms(5));
    CHECK(t.attempts[5 * k + 3].submitted == wave + at_ms(10));
    CHECK(t.attempts[5 * k + 4].submitted == wave + at_ms(10));
  }
}

}  // namespace

TEST_CASE("ScenarioSettings: indexed-job's controller refills a slot and completes the Job at its next sync",
          "[sim]") {
  // 50 pods x 2 s, parallelism 5. The Job's first sync (at 0) creates 5 pods in slow-start batches of
  // 1, 2, 2 (5 ms apart): they run from 0.100, 0.105, 0.105, 0.110, 0.110 and end 2 s later. Syncs:
  // at 1 (asked by sync 0's status write), at 2 (sync 1 wrote the pods' readiness), none asked by sync
  // 2 (nothing changed); the first end (2.100) asks for one at 3.100, which sees all five ends and
  // creates the next five. So each wave takes 3.1 s: wave k's sync at 3.1 k. The last wave (k = 9,
  // 27.9) ends at 30.0 to 30.01; the sync at 31.0 completes the Job; `after` is created then (its own
  // Job's first sync) and ends at 31.0 + 0.1 + 1 = 32.1.
  const std::string steps = kRefillSteps;
  const Run r = run_stats(control_plane_scenario(steps, "orchestrator: indexed-job"));
  REQUIRE(r.trace.attempts.size() == 51);
  check_waves(r.trace, 3100, 0);
  CHECK(r.trace.attempts[49].finished == at_ms(30010));
  CHECK(r.stats.step_done[0] == SimTime::from_s(31));
  CHECK(r.trace.attempts.back().submitted == SimTime::from_s(31));
  CHECK(makespan(r.trace) == at_ms(32100));

  SECTION("without the controller's lag: back to back") {
    const Run off = run_stats(control_plane_scenario(steps, "orchestrator: indexed-job, job_sync: 0s"));
    // Each pod created when the one before it ended: 10 waves of 2.1 s, then `after` 21.0 to 22.1.
    CHECK(off.trace.attempts[49].finished == SimTime::from_s(21));
    CHECK(makespan(off.trace) == at_ms(22100));
  }
}

TEST_CASE(
    "ScenarioSettings: follow_pods: the run's controller sees a pod end at once, the Job's sync refills",
    "[sim]") {
  // As the first case, but shardflow's k8s controller follows the pods: the waves are the same (the
  // Job controller's syncs create the pods), and `after` is created when the last pod of `work` ends
  // (30.010), not at the sync that completes the Job (31.0).
  const std::string steps = kRefillSteps;
  const Run r = run_stats(
      control_plane_scenario(steps, "orchestrator: indexed-job, control_plane: {follow_pods: true}"));
  REQUIRE(r.trace.attempts.size() == 51);
  for (int k = 0; k < 10; ++k) CHECK(r.trace.attempts[5 * k].submitted == at_ms(3100 * k));
  CHECK(r.trace.attempts[49].finished == at_ms(30010));
  CHECK(r.stats.step_done[0] == at_ms(30010));
  CHECK(r.trace.attempts.back().submitted == at_ms(30010));
  CHECK(makespan(r.trace) == at_ms(31110));
  SECTION("a retry waits for the Job controller's backoff only, not the step's") {
    const Run f = run_stats(control_plane_scenario(
        "    - {name: w, duration: {base: 2s}, failure: {p: 1}, retries: {max: 1, backoff: 30s}}\n",
        "orchestrator: indexed-job, control_plane: {follow_pods: true}"));
    REQUIRE(f.trace.attempts.size() == 2);
    CHECK(f.trace.attempts[1].submitted == at_ms(12100));  // 2.1 + 10 s, not 2.1 + 30 s
  }
}

TEST_CASE("ScenarioSettings: repeat_first_attempt: every attempt repeats attempt 0's draws", "[sim]") {
  const std::string steps =
      "    - {name: w, parallel_for: {count: 4}, duration: {base: 2s, noise: {lognormal_sigma: 0.5}},\n"
      "       failure: {p: 1}, retries: {max: 2}}\n";
  const Run same =
      run_stats(control_plane_scenario(steps, "orchestrator: indexed-job, repeat_first_attempt: true"));
  const Run fresh = run_stats(control_plane_scenario(steps, "orchestrator: indexed-job"));
  REQUIRE(same.trace.attempts.size() == 12);
  REQUIRE(fresh.trace.attempts.size() == 12);
  auto run_time = [](const AttemptRecord& a) { return a.finished - a.started; };
  int differ = 0;
  for (const Trace* t : {&same.trace, &fresh.trace})
    for (const AttemptRecord& a : t->attempts)
      if (a.attempt > 0) {
        const auto first = std::find_if(t->attempts.begin(), t->attempts.end(), [&](const AttemptRecord& b) {
          return b.task == a.task && b.attempt == 0;
        });
        REQUIRE(first != t->attempts.end());
        if (t == &same.trace)
          CHECK(run_time(a) == run_time(*first));
        else if (run_time(a) != run_time(*first))
          ++differ;
      }
  CHECK(differ > 0);
}

TEST_CASE("ScenarioSettings: the kwok-testenv preset", "[sim]") {
  const Scenario sc = load_scenario_text(
      "name: t\npipeline:\n  steps:\n    - {name: w}\n"
      "cluster:\n  node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]\n"
      "overheads: {preset: kwok-testenv}\n",
      "kwok.yaml");
  CHECK(sc.overheads.orchestrator == "indexed-job");
  CHECK(sc.overheads.pods_per_task == 1);
  CHECK(sc.overheads.sandbox_start == Duration::from_ms(15));
  CHECK(sc.overheads.image_pull_bytes_per_second == 0);
  CHECK(sc.overheads.default_image_size == 0);
  CHECK(sc.overheads.repeat_first_attempt);
  CHECK(sc.overheads.control_plane.follow_pods);
  CHECK(sc.overheads.control_plane.sync_period == Duration::from_s(1));
  CHECK(sc.overheads.control_plane.failure_backoff == Duration::from_s(10));
  CHECK(sc.cluster.scheduler.decisions_per_second == 500);
  CHECK(sc.cluster.scheduler.bind_latency == Duration::from_ms(10));
  CHECK_THROWS_WITH(load_scenario_text("name: t\npipeline:\n  steps:\n    - {name: w}\n"
                                       "cluster:\n  node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]\n"
                                       "overheads: {preset: kwok}\n",
                                       "kwok.yaml"),
                    Catch::Contains("unknown preset \"kwok\" (expected none or kwok-testenv)"));
}

TEST_CASE(
    "ScenarioSettings: control_plane.sync_latency: a sync's pods and counted tasks land that much later",
    "[sim]") {
  // The refill case above with sync_latency 40 ms. The Job's first sync reads at 0 and its write lands
  // at 0.040: the pods are created at 0.040, 0.045, 0.045, 0.050, 0.050 and run 0.140..2.140 to
  // 0.150..2.150. Its status write asks for the sync at 1 (counted from the sync, not its write); that one
  // writes the pods' readiness (at 1.040) and asks for the one at 2, which sees nothing new. The first
  // end (2.140) asks for the sync at 3.140, which sees all five; its write at 3.180 creates the next
  // five. So each wave takes 3.140 s. The last wave (3.140 * 9 + 0.040 = 28.300) ends at 30.400 to
  // 30.410, the sync at 31.400 sees it and its write completes the Job at 31.440; `after` (its own Job:
  // first sync 31.440, write 31.480) ends at 31.480 + 0.1 + 1 = 32.580.
  const std::string steps = kRefillSteps;
  const Run r = run_stats(
      control_plane_scenario(steps, "orchestrator: indexed-job, control_plane: {sync_latency: 40ms}"));
  REQUIRE(r.trace.attempts.size() == 51);
  check_waves(r.trace, 3140, 40);
  CHECK(r.trace.attempts[49].finished == at_ms(30410));
  CHECK(r.stats.step_done[0] == at_ms(31440));
  CHECK(r.trace.attempts.back().submitted == at_ms(31480));
  CHECK(makespan(r.trace) == at_ms(32580));
}

TEST_CASE("ScenarioSettings: control_plane.complete_latency moves a Job's done time, not the steps after it",
          "[sim]") {
  // The sync_latency case above plus complete_latency 120 ms: the write at 31.440 counts the last pods;
  // the Job's condition comes at 31.560. `after` is still created at the write (31.480 after its own
  // Job's first sync) and ends at 32.580. Its Job's syncs come every second from 31.440 while each
  // writes (creation, then readiness): the one at 33.440 sees the end, its write lands at 33.480 and
  // `after`'s condition at 33.600.
  const std::string steps = kRefillSteps;
  const Run r = run_stats(control_plane_scenario(
      steps, "orchestrator: indexed-job, control_plane: {sync_latency: 40ms, complete_latency: 120ms}"));
  REQUIRE(r.trace.attempts.size() == 51);
  CHECK(r.stats.step_done[0] == at_ms(31560));
  CHECK(r.trace.attempts.back().submitted == at_ms(31480));
  CHECK(r.stats.step_done[1] == at_ms(33600));
  CHECK(makespan(r.trace) == at_ms(32580));
  SECTION("with follow_pods a step is done when its pods end: no condition lag") {
    const Run f = run_stats(control_plane_scenario(
        steps, "orchestrator: indexed-job, control_plane: {complete_latency: 120ms, follow_pods: true}"));
    const Run g = run_stats(
        control_plane_scenario(steps, "orchestrator: indexed-job, control_plane: {follow_pods: true}"));
    CHECK(f.stats.step_done == g.stats.step_done);
  }
}

TEST_CASE(
    "ScenarioSettings: with sync_latency a failed pod's replacement waits for the backoff and the write",
    "[sim]") {
  // The backoff case below with sync_latency 50 ms: attempt 0 created at 0.050, runs 0.150..2.150; the
  // sync at 3.150 sees it failed (write 3.200): retry due at 2.150 + 10 = 12.150, whose sync's write
  // lands at 12.200. Attempt 1 runs 12.300..14.300; sync 15.300 (write 15.350): due 34.300, written
  // 34.350. Attempt 2 runs 34.450..36.450; the sync at 37.450 sees the last failure, written at 37.500.
  const Run r = run_stats(
      control_plane_scenario("    - {name: w, duration: {base: 2s}, failure: {p: 1}, retries: {max: 2}}\n",
                             "orchestrator: indexed-job, control_plane: {sync_latency: 50ms}"));
  REQUIRE(r.trace.attempts.size() == 3);
  CHECK(r.trace.attempts[0].submitted == at_ms(50));
  CHECK(r.trace.attempts[1].submitted == at_ms(12200));
  CHECK(r.trace.attempts[2].submitted == at_ms(34350));
  CHECK(r.trace.attempts[2].finished == at_ms(36450));
  CHECK(r.stats.step_done[0] == at_ms(37500));
  CHECK(r.trace.tasks_failed == 1);
}

TEST_CASE("ScenarioSettings: a sync creates pods in slow-start batches, at most max_creates_per_sync",
          "[sim]") {
  const std::string steps = "    - {name: w, parallel_for: {count: 20}, duration: {base: 5s}}\n";
  SECTION("batches of 1, 2, 4, 8 and the 5 left, 5 ms apart") {
    // Without the controller's client-side rate limit, each batch at its time.
    const Run r0 =
        run_stats(control_plane_scenario(steps, "orchestrator: indexed-job, control_plane: {api_qps: 0}"));
    REQUIRE(r0.trace.attempts.size() == 20);
    const std::int64_t batch[20] = {0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4};
    for (int k = 0; k < 20; ++k) CHECK(r0.trace.attempts[k].submitted == at_ms(5 * batch[k]));
    // With it (the preset's 20 a second, a burst of 30): each create and its event take a token; pods 0
    // to 14 take the burst's 30, and pod 15's create (asked at 20 ms) waits for the token that comes
    // 1/20 s after the burst's last was due (50 ms), its event takes the one at 100 ms, pod 16's create
    // the one at 150 ms, and so on.
    const Run r = run_stats(control_plane_scenario(steps, "orchestrator: indexed-job"));
    REQUIRE(r.trace.attempts.size() == 20);
    for (int k = 0; k < 15; ++k) CHECK(r.trace.attempts[k].submitted == at_ms(5 * batch[k]));
    for (int k = 15; k < 20; ++k) CHECK(r.trace.attempts[k].submitted == at_ms(50 + 100 * (k - 15)));
    // The last pods end at 0.020 + 0.1 + 5; the first end (5.1) asks for the sync that completes the Job.
    CHECK(r.stats.step_done[0] == at_ms(6100));
  }
  SECTION("8 per sync: the rest wait for the next syncs (asked by each sync's status write)") {
    // With a sync period of 1.5 s: syncs at 0, 1.5 and 3 create 8, 8 and 4 pods (ending at 5.1, 6.6
    // and 8.1); 4.5 writes their readiness; 6, 7.5 and 9 see each group end: the Job completes at 9.
    const Run r = run_stats(control_plane_scenario(steps,
                                                   "orchestrator: indexed-job, control_plane: {sync_period: "
                                                   "1.5s, max_creates_per_sync: 8, create_batch: 0s}"));
    REQUIRE(r.trace.attempts.size() == 20);
    for (int k = 0; k < 20; ++k) CHECK(r.trace.attempts[k].submitted == at_ms(1500 * (k / 8)));
    CHECK(r.stats.step_done[0] == SimTime::from_s(9));
  }
}

TEST_CASE("ScenarioSettings: indexed-job re-creates a failed pod after the Job controller's backoff",
          "[sim]") {
  // One pod of 2 s that always fails, 2 retries, no backoff of its own: the Job controller waits 10 s,
  // then 20 s, from the failed pod's end. Attempt 0: created 0, runs 0.1..2.1; sync 3.1 sees it
  // failed: retry at 12.1. Attempt 1: 12.1, runs 12.2..14.2; sync 15.2: retry at 14.2 + 20 = 34.2.
  // Attempt 2: 34.2, runs 34.3..36.3; the sync at 37.3 sees the last failure: the Job fails.
  const Run r = run_stats(
      control_plane_scenario("    - {name: w, duration: {base: 2s}, failure: {p: 1}, retries: {max: 2}}\n",
                             "orchestrator: indexed-job"));
  REQUIRE(r.trace.attempts.size() == 3);
  CHECK(r.trace.attempts[0].submitted == SimTime::zero());
  CHECK(r.trace.attempts[1].submitted == at_ms(12100));
  CHECK(r.trace.attempts[2].submitted == at_ms(34200));
  CHECK(r.trace.attempts[2].finished == at_ms(36300));
  CHECK(r.stats.step_done[0] == at_ms(37300));
  CHECK(r.trace.tasks_failed == 1);
}

TEST_CASE(
    "ScenarioSettings: with timestamp_resolution the controller's backoff counts from the end the API stored",
    "[sim]") {
  // The backoff case above with a 1 s timestamp resolution: the backoff counts from the failed pod's
  // end rounded down to the wall clock's whole seconds.
  const std::string steps = "    - {name: w, duration: {base: 2s}, failure: {p: 1}, retries: {max: 2}}\n";
  SECTION("clock_phase 0: the wall clock's seconds are the simulation's") {
    // Attempt 0 runs 0.1..2.1 (stored as 2): retry at 2 + 10 = 12. Attempt 1: 12, runs 12.1..14.1
    // (stored as 14): retry at 34. Attempt 2: 34, runs 34.1..36.1; the sync at 37.1 fails the Job.
    const Run r = run_stats(control_plane_scenario(
        steps, "orchestrator: indexed-job, control_plane: {timestamp_resolution: 1s}"));
    REQUIRE(r.trace.attempts.size() == 3);
    CHECK(r.trace.attempts[1].submitted == SimTime::from_s(12));
    CHECK(r.trace.attempts[2].submitted == SimTime::from_s(34));
    CHECK(r.trace.attempts[2].finished == at_ms(36100));
    CHECK(r.stats.step_done[0] == at_ms(37100));
  }
  SECTION("clock_phase 950ms: the run was created 0.95 s past a wall-clock second") {
    // Attempt 0 ends at 2.1, wall 3.05 (stored as 3, i.e. 2.05): retry at 12.05. Attempt 1 runs
    // 12.15..14.15, wall 15.1 (stored as 15, i.e. 14.05): retry at 34.05. Attempt 2 runs 34.15..36.15.
    const Run r = run_stats(control_plane_scenario(
        steps, "orchestrator: indexed-job, control_plane: {timestamp_resolution: 1s, clock_phase: 950ms}"));
    REQUIRE(r.trace.attempts.size() == 3);
    CHECK(r.trace.attempts[1].submitted == at_ms(12050));
    CHECK(r.trace.attempts[2].submitted == at_ms(34050));
    CHECK(r.stats.step_done[0] == at_ms(37150));
  }
  SECTION("clock_phase 300ms: the stored end is before the simulation's second") {
    // 2.1 is wall 2.4 (stored as 2, i.e. 1.7): retry at 11.7; attempt 1 runs 11.8..13.8, wall 14.1
    // (stored as 13.7): retry at 33.7; attempt 2 runs 33.8..35.8, the sync at 36.8 fails the Job.
    const Run r = run_stats(control_plane_scenario(
        steps, "orchestrator: indexed-job, control_plane: {timestamp_resolution: 1s, clock_phase: 300ms}"));
    REQUIRE(r.trace.attempts.size() == 3);
    CHECK(r.trace.attempts[1].submitted == at_ms(11700));
    CHECK(r.trace.attempts[2].submitted == at_ms(33700));
    CHECK(r.stats.step_done[0] == at_ms(36800));
  }
  SECTION("with sync_latency 50 ms: the requeued sync is at the stored end + backoff, its write later") {
    // The sync_latency case above: attempt 0 runs 0.150..2.150 (stored as 2): the sync at 12 writes at
    // 12.050. Attempt 1 runs 12.150..14.150 (stored as 14): sync 34, written 34.050. Attempt 2 runs
    // 34.150..36.150; the sync at 37.150 sees the last failure, written at 37.200.
    const Run r = run_stats(control_plane_scenario(
        steps, "orchestrator: indexed-job, control_plane: {sync_latency: 50ms, timestamp_resolution: 1s}"));
    REQUIRE(r.trace.attempts.size() == 3);
    CHECK(r.trace.attempts[0].submitted == at_ms(50));
    CHECK(r.trace.attempts[1].submitted == at_ms(12050));
    CHECK(r.trace.attempts[2].submitted == at_ms(34050));
    CHECK(r.stats.step_done[0] == at_ms(37200));
  }
  SECTION("the step's own backoff still counts from the end itself") {
    // retries.backoff 11 s is longer than the controller's 10 s from the stored end (2): attempt 1 at
    // 2.1 + 11 = 13.1 rather than 12.
    const Run r = run_stats(control_plane_scenario(
        "    - {name: w, duration: {base: 2s}, failure: {p: 1}, retries: {max: 1, backoff: 11s}}\n",
        "orchestrator: indexed-job, control_plane: {timestamp_resolution: 1s}"));
    REQUIRE(r.trace.attempts.size() == 2);
    CHECK(r.trace.attempts[1].submitted == at_ms(13100));
  }
}

TEST_CASE(
    "ScenarioSettings: argo's and kfp-v2's workflow controller requeues the workflow 10 s after a pod event",
    "[sim]") {
  // One key for the whole workflow; the first pods at 0. A pod's Running asks for a sync 10 s later,
  // which sees the pods that ended before it and creates what may start.
  const std::string steps =
      "    - {name: a, duration: {base: 2s}}\n"
      "    - {name: b, after: [a], parallel_for: {count: 3}, duration: {base: 15s}}\n";
  SECTION("argo") {
    // a runs 0.1..2.1; sync 0's status write asks for a sync at 10, which sees a done and creates b's
    // pods: 10.1..25.1; syncs at 20 (status write), 30 (pods became Running) sees them end.
    const Run r = run_stats(control_plane_scenario(steps, "orchestrator: argo"));
    REQUIRE(r.trace.attempts.size() == 4);
    CHECK(r.trace.attempts[1].submitted == SimTime::from_s(10));
    CHECK(r.trace.attempts[3].finished == at_ms(25100));
    CHECK(r.stats.step_done[1] == SimTime::from_s(30));
  }
  SECTION("kfp-v2: each task's executor pod is created at the sync after its driver pod ended") {
    // a's driver 0.1..1.1; sync 10 creates a's executor: 10.1..12.1; sync 20 sees it and creates b's
    // drivers (20.1..21.1); sync 30 their executors: 30.1..45.1; syncs 40, then 50 sees them end.
    const Run r = run_stats(control_plane_scenario(steps, "orchestrator: kfp-v2, driver_pod: 1s"));
    REQUIRE(r.trace.attempts.size() == 4);
    CHECK(r.trace.attempts[0].started == at_ms(10100));
    CHECK(r.trace.attempts[1].submitted == SimTime::from_s(20));
    CHECK(r.trace.attempts[1].started == at_ms(30100));
    CHECK(r.stats.step_done[1] == SimTime::from_s(50));
  }
}

TEST_CASE("ScenarioSettings: reserved resources and DaemonSet pods take room from every node", "[sim]") {
  // Two 16-core nodes and 16 tasks of 4 cores, 60 s each, nothing else charged. As written, a node
  // holds 4 of them: 8 at once, two waves, 120 s. Anything that takes a little of a node's 16 cores
  // leaves room for 3: 6 at once, three waves, 180 s.
  const std::string base =
      "name: room\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: w, parallel_for: {count: 16}, duration: {base: 60s}, resources: {cpu: 4, memory: 1Gi}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 16, memory: 64Gi, count: 2, price_per_hour: 1.0";
  const std::string tail = "overheads: none\n";
  CHECK(makespan_s(run_text(base + "}\n" + tail)) == Approx(120.0).epsilon(1e-12));
  // GKE's reservation: 16000m - (60 + 10 + 2 x 5 + 12 x 2.5) = 15890m allocatable.
  const Trace gke = run_text(base + ", reserved: gke}\n" + tail);
  CHECK(makespan_s(gke) == Approx(180.0).epsilon(1e-12));
  // The trace keeps the node's capacity (what is paid for), not its allocatable.
  REQUIRE(gke.nodes.size() == 2);
  CHECK(gke.nodes[0].cpu == 16000);
  CHECK(gke.nodes[0].memory == 64 * kGiB);
  // Memory reserved only: the cores are all there.
  CHECK(makespan_s(run_text(base + ", reserved: {memory: 4Gi}}\n" + tail)) == Approx(120.0).epsilon(1e-12));
  // A DaemonSet of 1m on every node.
  CHECK(makespan_s(run_text(base + "}\n  daemonsets:\n    - {name: logging, cpu: 1m, memory: 256Mi}\n" +
                            tail)) == Approx(180.0).epsilon(1e-12));
  // Or only on another pool: no change.
  CHECK(makespan_s(run_text(base +
                            "}\n    - {name: other, cpu: 2, memory: 4Gi, count: 0}\n  daemonsets:\n"
                            "    - {name: logging, cpu: 1, pools: [other]}\n" +
                            tail)) == Approx(120.0).epsilon(1e-12));
  // max_pods counts the DaemonSet pods: 4 of them (no requests) and max_pods 7 leave 3 for the tasks.
  CHECK(makespan_s(run_text(base +
                            ", max_pods: 7}\n  daemonsets:\n"
                            "    - {name: a}\n    - {name: b}\n    - {name: c}\n    - {name: d}\n" +
                            tail)) == Approx(180.0).epsilon(1e-12));
}

TEST_CASE("ScenarioSettings: kube-scheduler scores a node with its DaemonSet pods as requested", "[sim]") {
  // One pod of 1 core and 1 GiB; LeastAllocated alone, as kube-scheduler computes it (integer
  // percentages of the allocatable, averaged). Pool a: 8 cores, 16 GiB, an agent DaemonSet of 4 cores
  // and no memory request (scoring counts 200 MiB for it). Pool b: 2 cores, 16 GiB, no DaemonSet.
  //   a: cpu (8000 - 4000 - 1000) x 100 / 8000 = 37, memory (16384 - 200 - 1024) x 100 / 16384 = 92: 64
  //   b: cpu (2000 - 1000) x 100 / 2000 = 50, memory (16384 - 1024) x 100 / 16384 = 93: 71
  // so b. Had the DaemonSet been taken off a's capacity instead, a would score (75 + 92) / 2 = 83 and win.
  const Trace t = run_text(
      "name: score\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: one, duration: {base: 10s}, resources: {cpu: 1, memory: 1Gi}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: a, cpu: 8, memory: 16Gi, count: 1}\n"
      "    - {name: b, cpu: 2, memory: 16Gi, count: 1}\n"
      "  daemonsets:\n"
      "    - {name: agent, cpu: 4, pools: [a]}\n"
      "  scheduler: {score_weights: {NodeResourcesBalancedAllocation: 0, ImageLocality: 0}}\n"
      "overheads: none\n");
  REQUIRE(t.attempts.size() == 1);
  REQUIRE(t.attempts[0].node >= 0);
  CHECK(t.nodes[static_cast<std::size_t>(t.attempts[0].node)].pool == "b");
}

TEST_CASE("ScenarioSettings: a node with only DaemonSet pods is idle for the autoscaler", "[sim]") {
  // Two nodes, one task of 100 s: the node without it has only its DaemonSet pod and is removed after
  // scale_down_idle (60 s); the other goes when the run ends at 100 s.
  const Trace t = run_text(
      "name: idle\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: one, duration: {base: 100s}, resources: {cpu: 4, memory: 1Gi}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 16, memory: 64Gi, count: 2,\n"
      "       autoscaling: {min: 0, max: 2, scale_down_idle: 60s}}\n"
      "  daemonsets:\n"
      "    - {name: logging, cpu: 200m, memory: 128Mi}\n"
      "overheads: none\n");
  REQUIRE(t.nodes.size() == 2);
  std::vector<double> downs{t.nodes[0].down.seconds(), t.nodes[1].down.seconds()};
  std::sort(downs.begin(), downs.end());
  CHECK(downs[0] == Approx(60.0).epsilon(1e-12));
  CHECK(downs[1] == Approx(100.0).epsilon(1e-12));
}
