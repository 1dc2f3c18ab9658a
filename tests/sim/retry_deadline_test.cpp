// retries.max_duration (Argo's retryStrategy.backoff.maxDuration, KFP's backoffMaxDuration): retrying ends
// at the task's first attempt's creation + max_duration. Exact times, hand-computed.
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/sim/simulator.hpp>

using namespace shardflow;

namespace {

struct Run {
  Plan plan;
  Trace trace;
};

Run run_text(const std::string& yaml) {
  const Scenario sc = load_scenario_text(yaml, "deadline.yaml", LoadOptions{});
  Plan plan = Plan::unroll(sc.pipeline);
  Trace t = sim::simulate(sc, plan, sim::SimOptions{});
  return {std::move(plan), std::move(t)};
}

// One task of 100 s that always fails; retries {max: 5, backoff: 30s, factor: 1} and the given extra keys;
// no overheads, so that every time is exact.
std::string yaml(const std::string& retry_extra, const std::string& overheads = "none") {
  return "name: deadline\n"
         "overheads: " +
         overheads +
         "\n"
         "pipeline:\n"
         "  steps:\n"
         "    - name: a\n"
         "      duration: {base: 100s}\n"
         "      failure: {p: 1}\n"
         "      retries: {max: 5, backoff: 30s, factor: 1" +
         retry_extra +
         "}\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: n, cpu: 16, memory: 64Gi, count: 1}\n"
         "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n";
}

}  // namespace

TEST_CASE("retries.max_duration: no retry whose wait would end past the deadline", "[sim]") {
  // Without it: 6 attempts, each 100 s then 30 s of backoff: the last ends at 5 x 130 + 100 = 750 s.
  const Run all = run_text(yaml(""));
  CHECK(all.trace.attempts.size() == 6);
  CHECK(all.trace.attempts.back().finished == SimTime::from_s(750));
  // max_duration 250s: attempt 0 fails at 100 s (100 + 30 = 130 <= 250: retried at 130 s); attempt 1
  // fails at 230 s, and 230 + 30 = 260 > 250: no retry, the task has failed at 230 s.
  const Run cut = run_text(yaml(", max_duration: 250s"));
  REQUIRE(cut.trace.attempts.size() == 2);
  CHECK(cut.trace.attempts[1].submitted == SimTime::from_s(130));
  CHECK(cut.trace.attempts[1].finished == SimTime::from_s(230));
  CHECK(cut.trace.attempts[1].outcome == Outcome::failed);
  CHECK(cut.trace.tasks_failed == 1);
  // Exactly at the deadline is still in time (Argo: "After" the deadline fails): 260s gives a third
  // attempt at 260 s, which runs to 360 s, past 260 s: stopped at the deadline (0 s of run).
  const Run edge = run_text(yaml(", max_duration: 260s"));
  REQUIRE(edge.trace.attempts.size() == 3);
  CHECK(edge.trace.attempts[2].submitted == SimTime::from_s(260));
  CHECK(edge.trace.attempts[2].finished == SimTime::from_s(260));
}

TEST_CASE("retries.max_duration: a retry still running at the deadline is stopped there, failed", "[sim]") {
  // max_duration 180s: attempt 0 fails at 100 s, retried at 130 s (<= 180); it would run to 230 s, and
  // is stopped at 180 s with the deadline's error; 180 + 30 > 180: no more retries.
  const Run r = run_text(yaml(", max_duration: 180s"));
  REQUIRE(r.trace.attempts.size() == 2);
  const AttemptRecord& retry = r.trace.attempts[1];
  CHECK(retry.kind == AttemptKind::retry);
  CHECK(retry.started == SimTime::from_s(130));
  CHECK(retry.finished == SimTime::from_s(180));
  CHECK(retry.outcome == Outcome::failed);
  REQUIRE(retry.error < r.trace.errors.size());
  CHECK(r.trace.errors[retry.error] ==
        "DeadlineExceeded: a retry still running at the end of retries.max_duration (3m from the task's "
        "first attempt) is stopped there, as Argo stops a retry pod at backoff.maxDuration (KFP's "
        "backoffMaxDuration)");
  // The first attempt keeps its own error (the sampled failure), and is never stopped: it has no deadline.
  CHECK(r.trace.errors[r.trace.attempts[0].error].find("DeadlineExceeded") == std::string::npos);
  const Run first_long = run_text(yaml(", max_duration: 50s"));
  REQUIRE(first_long.trace.attempts.size() == 1);
  CHECK(first_long.trace.attempts[0].finished == SimTime::from_s(100));
  const Metrics m = compute_metrics(r.trace, r.plan);
  CHECK(m.makespan_s == 180);
}

TEST_CASE("retries.max_duration under Argo's controller: the same deadline, checked when it acts", "[sim]") {
  const std::string argo = "{orchestrator: argo, sandbox_start: 0s, image_size: 0}";
  // KFP's default (1h): retried up to max; the controller makes each retry 30 s after the failure.
  const Run all = run_text(yaml(", max_duration: 1h", argo));
  REQUIRE(all.trace.attempts.size() == 6);
  CHECK(all.trace.attempts[1].submitted == SimTime::from_s(130));
  CHECK(all.trace.attempts[5].finished == SimTime::from_s(750));
  // 120s: the first pod (created at 0 s) fails at 100 s, and 100 + 30 > 120: no retry.
  const Run none = run_text(yaml(", max_duration: 120s", argo));
  CHECK(none.trace.attempts.size() == 1);
  CHECK(none.trace.tasks_failed == 1);
}

TEST_CASE("retries.max_duration: read from the scenario, refused when not a duration", "[core]") {
  const Scenario sc = load_scenario_text(yaml(", max_duration: 2h"), "deadline.yaml", LoadOptions{});
  CHECK(sc.pipeline.steps[0].component.retries.max_duration == Duration::from_s(7200));
  CHECK_FALSE(load_scenario_text(yaml(""), "deadline.yaml", LoadOptions{})
                  .pipeline.steps[0]
                  .component.retries.max_duration.has_value());
  try {
    (void)load_scenario_text(yaml(", max_duration: soon"), "deadline.yaml", LoadOptions{});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("deadline.yaml:8:") == 0);
    CHECK(std::string(e.what()).find("pipeline.steps[0].retries.max_duration") != std::string::npos);
  }
}
