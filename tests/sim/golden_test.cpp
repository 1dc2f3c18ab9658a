// A golden trace: a small scenario that exercises noise, stragglers, failures and retries, shared
// storage (reads and writes), image pulls, a kfp-v2 driver pod, node failures and the autoscaler, and
// kube-scheduler's default profile on two pool shapes with a PreferNoSchedule taint,
// simulated with a fixed seed and compared field by field with tests/sim/data/golden-trace.csv. The
// same file must come out on every machine and standard library (integer times; our own random
// numbers and elementary functions).
//
// After an intended change of the model, regenerate with SHARDFLOW_UPDATE_GOLDEN=1 and review the diff.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/sampling.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

Scenario golden_scenario() {
  Step shard = loop(task("shard", 20), 24, 8);
  Component& c = shard.component;
  c.duration.per_gib = Duration::from_s(30);
  c.duration.lognormal_sigma = 0.4;
  c.duration.straggler_p = 0.1;
  c.duration.straggler_factor = 3;
  c.failure.p = 0.15;
  c.retries = RetryPolicy{3, Duration::from_s(5), 2, Duration::from_s(60), std::nullopt};
  c.input.dist = {Distribution::Kind::lognormal, 0.5 * kGiB, 0.5};
  c.output.dist = {Distribution::Kind::uniform, 0.1 * kGiB, 0.3 * kGiB};
  c.image = "shard:1";
  c.tolerations.push_back(Toleration{"spot", "Exists", "", "PreferNoSchedule"});
  Step agg = task("aggregate", 30, {0}, 2000);
  agg.component.image = "agg:1";
  NodePool stable = pool("stable", 2, 4000, 16 * kGiB);
  stable.price_per_hour = 0.4;
  // Spot nodes have another shape (BalancedAllocation then differs between the pools) and a
  // PreferNoSchedule taint that only the shard steps tolerate (TaintToleration's normalized score
  // differs between the pools for the others).
  NodePool spot = pool("spot", 2, 8000, 8 * kGiB);
  spot.taints.push_back(Taint{"spot", "", "PreferNoSchedule"});
  spot.spot = true;
  spot.spot_discount = 0.6;
  spot.price_per_hour = 0.4;
  spot.spot_mean_reclaim = Duration::from_s(150);
  spot.autoscaling.max = 4;
  spot.autoscaling.min = 1;
  spot.autoscaling.scale_up_delay = Duration::from_s(15);
  spot.autoscaling.boot_time = Duration::from_s(40);
  spot.autoscaling.scale_down_idle = Duration::from_s(60);
  Scenario sc = scenario({shard, agg}, {stable, spot});
  sc.cluster.storage.read_bytes_per_second = 0.5 * kGiB;
  sc.cluster.storage.write_bytes_per_second = 0.25 * kGiB;
  sc.cluster.scheduler.decisions_per_second = 50;
  sc.cluster.scheduler.bind_latency = Duration::from_ms(30);
  sc.overheads.orchestrator = "kfp-v2";
  sc.overheads.pods_per_task = 2;
  sc.overheads.driver_pod_duration = Duration::from_s(2);
  sc.overheads.sandbox_start = Duration::from_ms(700);
  sc.overheads.image_pull_bytes_per_second = 200.0 * kMiB;
  sc.overheads.default_image_size = 300 * kMiB;
  return sc;
}

std::string csv(const Trace& t) {
  std::ostringstream out;
  out << "task,attempt,node,submitted,scheduled,started,finished,outcome,kind,image_pull,input_read,"
         "output_write\n";
  for (const AttemptRecord& a : t.attempts)
    out << a.task << ',' << a.attempt << ',' << a.node << ',' << a.submitted.ns() << ',' << a.scheduled.ns()
        << ',' << a.started.ns() << ',' << a.finished.ns() << ',' << to_string(a.outcome) << ','
        << to_string(a.kind) << ',' << a.image_pull.ns() << ',' << a.input_read.ns() << ','
        << a.output_write.ns() << '\n';
  out << "node,pool,price_per_hour,billed_from,up,down\n";
  for (const NodeRecord& n : t.nodes)
    out << n.name << ',' << n.pool << ',' << n.price_per_hour << ',' << n.billed_from.ns() << ',' << n.up.ns()
        << ',' << n.down.ns() << '\n';
  out << "tasks_failed," << t.tasks_failed << '\n';
  return out.str();
}

}  // namespace

TEST_CASE("Simulator: a golden trace comes out the same on every machine", "[sim]") {
  const Trace t = run(golden_scenario(), 20261129);
  const std::string got = csv(t);
  const std::string path = std::string(SHARDFLOW_SOURCE_DIR) + "/tests/sim/data/golden-trace.csv";
  if (const char* update = std::getenv("SHARDFLOW_UPDATE_GOLDEN");
      update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << got;
    WARN("rewrote " << path);
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream want;
  want << in.rdbuf();
  CHECK(got == want.str());
  // The scenario does exercise what it is meant to.
  CHECK(count_outcome(t, Outcome::failed) > 0);
  CHECK(count_outcome(t, Outcome::evicted) > 0);
  // Each attempt's kind follows from the one before it of its task: after a failure a retry, after an
  // eviction a replacement (no speculation here).
  std::vector<const AttemptRecord*> last(t.attempts.size(), nullptr);
  std::uint64_t retries = 0, replacements = 0;
  for (const AttemptRecord& a : t.attempts) {
    REQUIRE(a.task < last.size());
    const AttemptRecord* before = last[a.task];
    const AttemptKind expected = before == nullptr                     ? AttemptKind::first
                                 : before->outcome == Outcome::evicted ? AttemptKind::replacement
                                                                       : AttemptKind::retry;
    CHECK(a.kind == expected);
    retries += a.kind == AttemptKind::retry;
    replacements += a.kind == AttemptKind::replacement;
    last[a.task] = &a;
  }
  CHECK(retries == static_cast<std::uint64_t>(count_outcome(t, Outcome::failed)) - t.tasks_failed);
  CHECK(replacements == static_cast<std::uint64_t>(count_outcome(t, Outcome::evicted)));
  CHECK(t.nodes.size() > 4);
  CHECK(std::any_of(t.attempts.begin(), t.attempts.end(),
                    [](const AttemptRecord& a) { return a.output_write > Duration::zero(); }));
}

// A sweep shares each replication's first-attempt draws between its configurations (RunOptions::draws):
// the trace is the same to the bit with a table made from this plan, from a plan whose step has another
// sigma (the memoized factor is not used), from a plan with a shorter loop (its join and the aggregate
// sit at ids that are shards here), with one too short, and with one of another seed (ignored).
TEST_CASE("Simulator: the golden trace is the same with the draws made ahead", "[sim]") {
  const Scenario sc = golden_scenario();
  const Plan plan = Plan::unroll(sc.pipeline);
  constexpr std::uint64_t kSeed = 20261129;
  const std::string want = csv(sim::simulate(sc, plan, sim::SimOptions::with_seed(kSeed)));
  Scenario other = sc;
  other.pipeline.steps[0].component.duration.lognormal_sigma = 0.7;
  Scenario fewer = sc;
  fewer.pipeline.steps[0].loop->count = 20;
  const Plan fewer_plan = Plan::unroll(fewer.pipeline);
  REQUIRE(fewer_plan.is_join(20));
  REQUIRE(!plan.is_join(20));
  AttemptDrawTable shorter = make_draw_table(plan, kSeed);
  shorter.first.resize(shorter.first.size() / 2);
  const AttemptDrawTable tables[] = {
      make_draw_table(plan, kSeed), make_draw_table(Plan::unroll(other.pipeline), kSeed),
      make_draw_table(fewer_plan, kSeed), shorter, make_draw_table(plan, kSeed + 1)};
  for (const AttemptDrawTable& table : tables) {
    sim::SimOptions o = sim::SimOptions::with_seed(kSeed);
    o.draws = &table;
    CHECK(csv(sim::simulate(sc, plan, o)) == want);
  }
  // The table holds what sample_attempt draws for attempt 0.
  const AttemptDrawTable& table = tables[0];
  for (TaskId t = 0; t < plan.size(); ++t) {
    if (plan.is_join(t)) continue;
    const Component& c = plan.steps()[plan.step_of(t)].component;
    const AttemptSample a = sample_attempt(c, plan, t, 0, kSeed);
    const AttemptSample b = sample_attempt(c, plan, t, 0, kSeed, &table.first[t]);
    CHECK(a.run_ns == b.run_ns);
    CHECK(a.fails == b.fails);
  }
}
