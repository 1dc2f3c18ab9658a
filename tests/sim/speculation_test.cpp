// Speculative execution (`speculation: {after, max}`) on hand-computed cases: no overheads, so that the
// makespans are exact. The straggler is chosen by its seed: the test finds the first seed whose draws make
// exactly one of the 10 items a straggler (x4) and its backup's own draw not one.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

constexpr std::uint32_t kBackupKey = 0x40000000u;  // sim/pods.hpp: a backup's duration stream key

struct Run {
  Plan plan;
  Trace trace;
};

Run run_text(const std::string& yaml, std::uint64_t seed) {
  const Scenario sc = load_scenario_text(yaml, "spec.yaml", LoadOptions{});
  Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = seed;
  Trace t = sim::simulate(sc, plan, opt);
  return {std::move(plan), std::move(t)};
}

// 10 items of 10 s (straggler p 0.1, x4) on one 16-CPU node (price 36/h: 0.01 per second), then nothing.
std::string spec_yaml(const std::string& speculation, const std::string& extra = "") {
  return "name: spec\n"
         "overheads: none\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: cpu, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 36}\n"
         "pipeline:\n"
         "  steps:\n"
         "    - {name: shard, parallel_for: {count: 10}, resources: {cpu: 1, memory: 1Gi}, "
         "duration: {base: 10s, straggler: {p: 0.1, factor: 4}}" +
         extra + (speculation.empty() ? "" : ", speculation: " + speculation) + "}\n";
}

// The first seed whose first attempts have exactly one straggler (returned in `straggler`) whose backup
// (attempt 1, its own stream) does not straggle.
std::uint64_t seed_with_one_straggler(TaskId& straggler) {
  const Scenario sc = load_scenario_text(spec_yaml(""), "spec.yaml", LoadOptions{});
  const Plan plan = Plan::unroll(sc.pipeline);
  const Component& c = plan.steps()[0].component;
  for (std::uint64_t seed = 1;; ++seed) {
    int slow = 0;
    for (TaskId t = 0; t < plan.size(); ++t)
      if (!plan.is_join(t) && sample_attempt(c, plan, t, 0, seed).run_ns > 11e9) {
        ++slow;
        straggler = t;
      }
    if (slow == 1 && sample_attempt(c, plan, straggler, kBackupKey + 1, seed).run_ns < 11e9) return seed;
  }
}

std::string json(const Trace& t) {
  std::ostringstream o;
  write_trace_json(o, t);
  return o.str();
}

}  // namespace

TEST_CASE("Speculation: a backup turns a 40 s straggler into 15 s + 10 s = 25 s", "[sim]") {
  TaskId straggler = 0;
  const std::uint64_t seed = seed_with_one_straggler(straggler);
  // Without speculation: 9 items 0..10 s, the straggler 0..40 s (10 s x 4): makespan 40 s.
  const Run plain = run_text(spec_yaml(""), seed);
  CHECK(makespan(plain.trace) == SimTime::from_s(40));
  CHECK(plain.trace.attempts.size() == 10);
  // With after 1.5x: at 10 s nine runs of 10 s finished, median 10 s; the straggler's run reaches
  // 1.5 x 10 = 15 s at 15 s, so its backup starts then and runs its own 10 s: 15..25 s. The original is
  // cancelled at 25 s. Makespan 25 s.
  const Run spec = run_text(spec_yaml("{after: 1.5x, max: 1}"), seed);
  CHECK(makespan(spec.trace) == SimTime::from_s(25));
  REQUIRE(spec.trace.attempts.size() == 11);
  CHECK(spec.trace.tasks_failed == 0);
  const AttemptRecord& original = spec.trace.attempts[straggler];
  const AttemptRecord& backup = spec.trace.attempts[10];
  CHECK(original.task == straggler);
  CHECK(original.outcome == Outcome::cancelled);
  CHECK(original.started == SimTime::zero());
  CHECK(original.finished == SimTime::from_s(25));
  CHECK(backup.task == straggler);
  CHECK(backup.attempt == 1);
  CHECK(backup.outcome == Outcome::succeeded);
  CHECK(backup.submitted == SimTime::from_s(15));
  CHECK(backup.started == SimTime::from_s(15));
  CHECK(backup.finished == SimTime::from_s(25));
  CHECK(count_outcome(spec.trace, Outcome::cancelled) == 1);
  // The backup is the only attempt that is not a first; the cancelled original is not a failure.
  for (const AttemptRecord& a : spec.trace.attempts)
    CHECK(a.kind == (&a == &backup ? AttemptKind::backup : AttemptKind::first));

  // The cancelled attempt is charged: CPU work = 9 x 10 s + 25 s (cancelled) + 10 s (backup) = 125
  // core-s (without: 9 x 10 + 40 = 130). Cost: one node billed for the makespan, 25 s x 0.01/s = 0.25
  // (without: 0.40).
  const Metrics m = compute_metrics(spec.trace, spec.plan);
  CHECK(m.attempts == 11);
  CHECK(m.backups == 1);
  CHECK(m.backups_won == 1);
  CHECK(m.retries == 0);
  CHECK(m.replacements == 0);
  CHECK(m.cancelled_attempts == 1);
  CHECK(m.failed_attempts == 0);
  CHECK(m.per_step[0].failures == 0);
  CHECK(m.cpu_work_core_s == Approx(125).epsilon(1e-12));
  CHECK(m.cost == Approx(0.25).epsilon(1e-12));
  const Metrics mp = compute_metrics(plain.trace, plain.plan);
  CHECK(mp.cpu_work_core_s == Approx(130).epsilon(1e-12));
  CHECK(mp.cost == Approx(0.40).epsilon(1e-12));

  // A factor of 3x: the backup starts at 30 s and would end at 40 s, as the original does; the first to
  // finish wins (the original, ended first in event order at 40 s); makespan 40 s.
  const Run late = run_text(spec_yaml("{after: 3x, max: 1}"), seed);
  CHECK(makespan(late.trace) == SimTime::from_s(40));
  CHECK(late.trace.attempts.size() == 11);
  CHECK(late.trace.attempts[10].submitted == SimTime::from_s(30));
  // The backup lost: it is cancelled, and counted as a backup that did not win.
  CHECK(late.trace.attempts[10].kind == AttemptKind::backup);
  CHECK(late.trace.attempts[10].outcome == Outcome::cancelled);
  const Metrics ml = compute_metrics(late.trace, late.plan);
  CHECK(ml.backups == 1);
  CHECK(ml.backups_won == 0);
  CHECK(ml.cancelled_attempts == 1);
  CHECK(ml.failed_attempts == 0);
}

TEST_CASE("Speculation: max 0, or nothing straggling, gives the trace without speculation", "[sim]") {
  TaskId straggler = 0;
  const std::uint64_t seed = seed_with_one_straggler(straggler);
  const Run plain = run_text(spec_yaml(""), seed);
  const Run off = run_text(spec_yaml("{after: 1.5x, max: 0}"), seed);
  CHECK(json(off.trace) == json(plain.trace));
  // A factor so large that no run reaches it (F x the median past any 64-bit time: its rounding once came
  // out negative and backed up every run).
  for (const char* huge : {"{after: 1e9x}", "{after: 1e18x}", "{after: 1e308x}"})
    CHECK(json(run_text(spec_yaml(huge), seed).trace) == json(plain.trace));
  // No stragglers (p 0): every run is 10 s, never 1.5 x the median.
  const std::string calm =
      "name: spec\noverheads: none\ncluster:\n  node_pools:\n"
      "    - {name: cpu, cpu: 4, memory: 64Gi, count: 1}\n"
      "pipeline:\n  steps:\n"
      "    - {name: shard, parallel_for: {count: 10}, resources: {cpu: 1, memory: 1Gi}, "
      "duration: {base: 10s, noise: {lognormal_sigma: 0.1}}";
  const Run a = run_text(calm + "}\n", 7);
  const Run b = run_text(calm + ", speculation: {after: 1.5x}}\n", 7);
  CHECK(json(b.trace) == json(a.trace));
}

TEST_CASE("Speculation: the same seed gives the same backups, and none when every run straggles alike",
          "[sim]") {
  TaskId straggler = 0;
  const std::uint64_t seed = seed_with_one_straggler(straggler);
  const Run a = run_text(spec_yaml("{after: 1.5x, max: 1}"), seed);
  const Run b = run_text(spec_yaml("{after: 1.5x, max: 1}"), seed);
  CHECK(json(a.trace) == json(b.trace));
  // Every attempt straggles (p 1): all ten run 40 s (0..40 s), the median exists only at 40 s when all
  // finish together: no backup is ever made.
  const Run all = run_text(
      "name: spec\noverheads: none\ncluster:\n  node_pools:\n    - {name: cpu, cpu: 16, memory: 64Gi, count: "
      "1}\n"
      "pipeline:\n  steps:\n    - {name: shard, parallel_for: {count: 10}, resources: {cpu: 1, memory: 1Gi}, "
      "duration: {base: 10s, straggler: {p: 1, factor: 4}}, speculation: {after: 1.5x, max: 2}}\n",
      seed);
  CHECK(all.trace.attempts.size() == 10);
  CHECK(makespan(all.trace) == SimTime::from_s(40));
}

TEST_CASE("Speculation: with the default overheads (the controller creates the backup) it still wins",
          "[sim]") {
  TaskId straggler = 0;
  const std::uint64_t seed = seed_with_one_straggler(straggler);
  // Items of 60 s (the straggler 240 s): the backup's start-up (controller sync, driver pod, sandbox) is
  // short against them. The same seed makes the same item the straggler (its draw does not depend on base).
  auto with_overheads = [](std::string yaml) {
    yaml.replace(yaml.find("base: 10s"), 9, "base: 60s");
    return yaml.replace(yaml.find("overheads: none\n"), 16, "");
  };
  const Run plain = run_text(with_overheads(spec_yaml("")), seed);
  const Run spec = run_text(with_overheads(spec_yaml("{after: 1.5x, max: 1}")), seed);
  REQUIRE(spec.trace.attempts.size() == 11);
  CHECK(spec.trace.tasks_failed == 0);
  const AttemptRecord& original = spec.trace.attempts[straggler];
  const AttemptRecord& backup = spec.trace.attempts[10];
  CHECK(original.outcome == Outcome::cancelled);
  CHECK(backup.outcome == Outcome::succeeded);
  CHECK(backup.task == straggler);
  CHECK(backup.kind == AttemptKind::backup);  // asked for at the check, created by the controller's sync
  CHECK(original.kind == AttemptKind::first);
  CHECK(original.finished == backup.finished);
  // The straggler's run reached 1.5 x the median (60 s) 90 s after it started; the backup pod is created
  // at the controller's next sync, after that, and runs 60 s.
  CHECK(backup.submitted >= original.started + SimTime::from_s(90));
  CHECK(backup.finished - backup.started == SimTime::from_s(60));
  // It saves 240 - (90 + 60) = 90 s less the backup's own start-up (sync, driver pod, sandbox).
  CHECK(makespan(spec.trace) < makespan(plain.trace));
  CHECK(original.finished < original.started + SimTime::from_s(240));
}

TEST_CASE("Speculation: a trace with a cancelled loser and a backup reads back as written", "[sim]") {
  TaskId straggler = 0;
  const std::uint64_t seed = seed_with_one_straggler(straggler);
  const Run spec = run_text(spec_yaml("{after: 1.5x, max: 1}"), seed);
  const std::string text = json(spec.trace);
  std::istringstream in(text);
  const Trace back = read_trace_json(in, "trace.json");
  REQUIRE(back.attempts.size() == 11);
  CHECK(back.attempts[straggler].outcome == Outcome::cancelled);
  CHECK(back.attempts[10].attempt == 1);
  CHECK(back.attempts[10].kind == AttemptKind::backup);
  CHECK(text.find("\"outcome\": \"succeeded\", \"kind\": \"backup\"") != std::string::npos);
  CHECK(json(back) == text);
}

TEST_CASE(
    "Speculation: max 2 gives a straggling backup a backup of its own (40 s becomes 12 + 12 + 10 = 34 s)",
    "[sim]") {
  // The first seed with exactly one straggler among the first attempts whose first backup (attempt 1)
  // straggles too and whose second (attempt 2) does not.
  const Scenario sc = load_scenario_text(spec_yaml(""), "spec.yaml", LoadOptions{});
  const Plan plan = Plan::unroll(sc.pipeline);
  const Component& c = plan.steps()[0].component;
  TaskId straggler = 0;
  std::uint64_t seed = 1;
  for (;; ++seed) {
    int slow = 0;
    for (TaskId t = 0; t < plan.size(); ++t)
      if (!plan.is_join(t) && sample_attempt(c, plan, t, 0, seed).run_ns > 11e9) {
        ++slow;
        straggler = t;
      }
    if (slow == 1 && sample_attempt(c, plan, straggler, kBackupKey + 1, seed).run_ns > 11e9 &&
        sample_attempt(c, plan, straggler, kBackupKey + 2, seed).run_ns < 11e9)
      break;
  }
  // after 1.2x, median 10 s from 10 s on: the original (0..40 s) gets backup 1 at 12 s; backup 1 (a
  // straggler too, 40 s) reaches 12 s of run at 24 s and gets backup 2, which runs 24..34 s and wins.
  // The original and backup 1 are cancelled at 34 s.
  const Run r = run_text(spec_yaml("{after: 1.2x, max: 2}"), seed);
  REQUIRE(r.trace.attempts.size() == 12);
  CHECK(makespan(r.trace) == SimTime::from_s(34));
  CHECK(r.trace.attempts[straggler].outcome == Outcome::cancelled);
  CHECK(r.trace.attempts[10].submitted == SimTime::from_s(12));
  CHECK(r.trace.attempts[10].outcome == Outcome::cancelled);
  CHECK(r.trace.attempts[11].submitted == SimTime::from_s(24));
  CHECK(r.trace.attempts[11].outcome == Outcome::succeeded);
  CHECK(r.trace.attempts[11].finished == SimTime::from_s(34));
  CHECK(r.trace.attempts[10].kind == AttemptKind::backup);
  CHECK(r.trace.attempts[11].kind == AttemptKind::backup);
  CHECK(r.trace.attempts[11].attempt == 2);
  const Metrics m = compute_metrics(r.trace, r.plan);
  CHECK(m.backups == 2);
  CHECK(m.backups_won == 1);
  CHECK(m.cancelled_attempts == 2);
  // With max 1 the straggling backup gets none: the original ends first at 40 s (backup 1 would end at
  // 12 + 40 = 52 s and is cancelled then).
  const Run one = run_text(spec_yaml("{after: 1.2x, max: 1}"), seed);
  CHECK(one.trace.attempts.size() == 11);
  CHECK(makespan(one.trace) == SimTime::from_s(40));
  CHECK(one.trace.attempts[10].outcome == Outcome::cancelled);
}

TEST_CASE("Speculation: a backup the controller would create after the item won is not created", "[sim]") {
  // Items 0-2 run 10 s (1 GiB x 10 s/GiB), item 3 16.9921875 s (1740 MiB). The median is 10 s, so item
  // 3 is due a backup at 15 s; Argo's controller creates pods at its syncs (every 10 s: 20 s), after the
  // item won at 16.9921875 s. No pod is made: the makespan is the last pod's end, as without
  // speculation (it was the sync's 20 s, from a cancelled record of a pod that never existed).
  const std::string yaml = R"y(name: spa
overheads: {orchestrator: ORCH, sandbox_start: 0s, image_size: 0}
pipeline:
  steps:
    - name: a
      parallel_for: {count: 4}
      input: {size: [1GiB, 1GiB, 1GiB, 1740Mi]}
      duration: {per_gib: 10s}
      speculation: {after: 1.5x}
cluster:
  node_pools:
    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}
  scheduler: {decisions_per_second: 0, bind_latency: 0s}
)y";
  const double run3 = 1740.0 / 1024 * 10;  // 16.9921875 s
  for (const auto& [orchestrator, start] :
       std::vector<std::pair<std::string, double>>{{"argo", 0.0}, {"kfp-v2", 10.0}}) {
    INFO(orchestrator);
    std::string text = yaml;
    text.replace(text.find("ORCH"), 4, orchestrator);
    const Run r = run_text(text, 1);
    CHECK(r.trace.attempts.size() == 4);
    const Metrics m = compute_metrics(r.trace, r.plan);
    CHECK(m.backups == 0);
    CHECK(m.cancelled_attempts == 0);
    // kfp-v2: the executor pods start after their driver pods (created at the first sync, 0 s; 3 s of
    // driver; the executor pod at the next sync, 10 s).
    CHECK(m.makespan_s == start + run3);
  }
}
