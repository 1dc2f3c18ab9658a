// Strategies on hand-computed cases: each scenario is YAML text (what a user writes), with no overheads
// so that the makespans are exact.
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

struct Run {
  Plan plan;
  Trace trace;
};

Run run_text(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  LoadOptions o;
  o.sets = sets;
  const Scenario sc = load_scenario_text(yaml, "strategy.yaml", o);
  Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = sc.seed;
  Trace t = sim::simulate(sc, plan, opt);
  return {std::move(plan), std::move(t)};
}

// `shards` tasks of 10 s, then an aggregate of `agg` (its duration model for all the shards) with
// `fan_in` (empty: flat); 8 nodes of 16 CPUs hold 128 one-CPU pods at once.
std::string tree_yaml(int shards, const std::string& agg, const std::string& fan_in) {
  return "name: tree\n"
         "overheads: none\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: cpu, cpu: 16, memory: 64Gi, count: 8}\n"
         "pipeline:\n"
         "  steps:\n"
         "    - {name: shard, parallel_for: {count: " +
         std::to_string(shards) +
         "}, resources: {cpu: 1, memory: 1Gi}, duration: {base: 10s}}\n"
         "    - {name: agg, after: [shard], resources: {cpu: 1, memory: 1Gi}, duration: " +
         agg + (fan_in.empty() ? "" : ", fan_in: " + fan_in) + "}\n";
}

// Start and end (seconds) of the attempt of task `name`.
std::pair<double, double> span_of(const Run& r, const std::string& name) {
  for (const AttemptRecord& a : r.trace.attempts)
    if (r.plan.task_name(a.task) == name) return {a.started.seconds(), a.finished.seconds()};
  FAIL("no attempt of " << name);
  return {};
}

}  // namespace

TEST_CASE("Strategies: tree fan-in of 64 shards, arity 4, in 3 levels takes 22 s instead of 74 s", "[sim]") {
  // Flat: the shards run 0..10 s at once (128 slots), then one aggregate of 64 s: 10 + 64 = 74 s.
  const Run flat = run_text(tree_yaml(64, "{base: 64s}", ""));
  CHECK(makespan(flat.trace) == SimTime::from_s(74));
  CHECK(flat.trace.attempts.size() == 65);
  // Tree: 16 level-1 tasks each merge 4 shards (4/64 of 64 s = 4 s): 10..14; 4 level-2 tasks merge 4
  // level-1 outputs each (4 s): 14..18; the aggregate merges the 4 level-2 outputs (4 s): 18..22.
  const Run tree = run_text(tree_yaml(64, "{base: 64s}", "{arity: 4}"));
  CHECK(tree.trace.attempts.size() == 64 + 16 + 4 + 1);
  CHECK(makespan(tree.trace) == SimTime::from_s(22));
  CHECK(tree.trace.tasks_failed == 0);
  for (int i = 0; i < 16; ++i)
    CHECK(span_of(tree, "agg.level1[" + std::to_string(i) + "]") == std::pair(10.0, 14.0));
  for (int i = 0; i < 4; ++i)
    CHECK(span_of(tree, "agg.level2[" + std::to_string(i) + "]") == std::pair(14.0, 18.0));
  CHECK(span_of(tree, "agg") == std::pair(18.0, 22.0));
}

TEST_CASE("Strategies: tree fan-in of 10 shards, arity 4: levels of 4 + 4 + 2, then a root of 3", "[sim]") {
  // The aggregate's model is 10 s for all 10 shards, so 1 s per merged input.
  // Flat: 10 + 10 = 20 s. Tree: level1[0] and [1] merge 4 shards (4 s): 10..14; level1[2] merges 2
  // (2 s): 10..12; the root merges the 3 level-1 outputs (3 s) once the last is done: 14..17.
  CHECK(makespan(run_text(tree_yaml(10, "{base: 10s}", "")).trace) == SimTime::from_s(20));
  const Run tree = run_text(tree_yaml(10, "{base: 10s}", "{arity: 4}"));
  CHECK(makespan(tree.trace) == SimTime::from_s(17));
  CHECK(span_of(tree, "agg.level1[0]") == std::pair(10.0, 14.0));
  CHECK(span_of(tree, "agg.level1[1]") == std::pair(10.0, 14.0));
  CHECK(span_of(tree, "agg.level1[2]") == std::pair(10.0, 12.0));
  CHECK(span_of(tree, "agg") == std::pair(14.0, 17.0));
  // Arity 2 over 10 (1 s per merged input): level1 has 5 tasks of 2 inputs (10..12); level2 merges
  // those 5 in 3 tasks of 2, 2 and 1 inputs (12..14, 12..14, 12..13); level3 merges those 3 in 2 tasks
  // of 2 and 1 inputs: level3[0] waits for level2[0] and [1] (14..16), level3[1] for level2[2] alone
  // (13..14); the root merges the 2 level-3 outputs (2 s) after the later one: 16..18.
  const Run binary = run_text(tree_yaml(10, "{base: 10s}", "{arity: 2}"));
  CHECK(binary.trace.attempts.size() == 10 + 5 + 3 + 2 + 1);
  CHECK(span_of(binary, "agg.level2[2]") == std::pair(12.0, 13.0));
  CHECK(span_of(binary, "agg.level3[0]") == std::pair(14.0, 16.0));
  CHECK(span_of(binary, "agg.level3[1]") == std::pair(13.0, 14.0));
  CHECK(span_of(binary, "agg") == std::pair(16.0, 18.0));
  CHECK(makespan(binary.trace) == SimTime::from_s(18));
}

TEST_CASE("Strategies: re-sharding 1 TiB keeps the total, so granularity is swept honestly", "[sim]") {
  // 1 TiB read at 1 s per GiB, split into `count` items on 8 x 16 = 128 one-CPU slots, plus a 30 s
  // start-up per item. count 64: one wave of 1024/64 = 16 GiB -> 30 + 16 = 46 s.
  // count 256: two waves (128 + 128) of 4 GiB -> 2 x (30 + 4) = 68 s. count 8: one wave of 128 GiB ->
  // 30 + 128 = 158 s. count 128: one wave of 8 GiB -> 38 s, the best of the four.
  const std::string yaml =
      "name: reshard\n"
      "overheads: none\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: cpu, cpu: 16, memory: 64Gi, count: 8}\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: shard, parallel_for: {count: 64}, input: {total: 1TiB}, resources: {cpu: 1, memory: "
      "1Gi},\n"
      "       duration: {base: 30s, per_gib: 1s}}\n";
  const auto makespan_at = [&](int count) {
    return makespan(
        run_text(yaml, {"pipeline.steps[shard].parallel_for.count=" + std::to_string(count)}).trace);
  };
  CHECK(makespan_at(8) == SimTime::from_s(158));
  CHECK(makespan_at(64) == SimTime::from_s(46));
  CHECK(makespan_at(128) == SimTime::from_s(38));
  CHECK(makespan_at(256) == SimTime::from_s(68));
}

namespace {

// `count` items of 10 s on 10 one-CPU nodes; every pod pays a 1 s sandbox start (no other overhead).
std::string queue_yaml(const std::string& loop, const std::string& extra = "") {
  return "name: queue\n"
         "overheads: {orchestrator: none, sandbox_start: 1s, image_pull_bandwidth: 0/s, image_size: 0}\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: cpu, cpu: 1, memory: 4Gi, count: 10}\n"
         "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n"
         "pipeline:\n"
         "  steps:\n"
         "    - {name: item, parallel_for: " +
         loop + ", resources: {cpu: 1, memory: 1Gi}, duration: {base: 10s}" + extra + "}\n";
}

std::set<std::string> pods_of(const Trace& t) {
  std::set<std::string> pods;
  for (const AttemptRecord& a : t.attempts) pods.insert(t.pod_name(a));
  return pods;
}

}  // namespace

TEST_CASE("Strategies: a work queue of 10 workers runs 100 items in 101 s, static shards in 110 s", "[sim]") {
  // Static shards: one pod per item, each 1 s start-up + 10 s run, 10 at a time: 10 x 11 = 110 s.
  const Run flat = run_text(queue_yaml("{count: 100}"));
  CHECK(makespan(flat.trace) == SimTime::from_s(110));
  CHECK(pods_of(flat.trace).size() == 100);
  // Work queue: 10 pods start once (1 s), then each runs 10 items back to back: 1 + 10 x 10 = 101 s.
  const Run queue = run_text(queue_yaml("{count: 100, workers: 10}"));
  CHECK(makespan(queue.trace) == SimTime::from_s(101));
  REQUIRE(queue.trace.attempts.size() == 100);
  CHECK(queue.trace.tasks_failed == 0);
  CHECK(pods_of(queue.trace).size() == 10);
  // Worker w starts with item w and then takes items w + 10, w + 20, ...: item i runs from
  // 1 + 10 * floor(i / 10) s on the pod "item-<i % 10>-0", on the same node; items 10 and up were
  // queued at 0 and taken when a worker finished its item.
  std::map<std::string, std::int32_t> node_of_pod;
  for (const AttemptRecord& a : queue.trace.attempts) {
    INFO("item " << a.item);
    const std::int64_t wave = a.item / 10;
    CHECK(a.started == SimTime::from_s(1 + 10 * wave));
    CHECK(a.finished == SimTime::from_s(11 + 10 * wave));
    CHECK(a.submitted == SimTime::zero());
    CHECK(a.scheduled == (wave == 0 ? SimTime::zero() : SimTime::from_s(1 + 10 * wave)));
    CHECK(a.input_read == Duration::zero());
    CHECK(queue.trace.pod_name(a) == "item-" + std::to_string(a.item % 10) + "-0");
    const auto [it, added] = node_of_pod.emplace(queue.trace.pod_name(a), a.node);
    CHECK(it->second == a.node);
  }
}

TEST_CASE("Strategies: a work queue with more workers than nodes leaves the extra worker pods pending",
          "[sim]") {
  // 20 workers on 10 nodes: the pods of items 0-9 run; those of items 10-19 wait for a node. The 10
  // running workers take the 80 queued items (20-99), 8 rounds each: 1 + 9 x 10 = 91 s, then exit; the
  // 10 waiting pods start on the freed nodes: 91 + 1 + 10 = 102 s.
  const Run queue = run_text(queue_yaml("{count: 100, workers: 20}"));
  CHECK(makespan(queue.trace) == SimTime::from_s(102));
  CHECK(pods_of(queue.trace).size() == 20);
  // parallelism 5 admits at most 5 items at once: 5 workers, 20 rounds: 1 + 20 x 10 = 201 s.
  const Run limited = run_text(queue_yaml("{count: 100, workers: 10, parallelism: 5}"));
  CHECK(makespan(limited.trace) == SimTime::from_s(201));
  CHECK(pods_of(limited.trace).size() == 5);
}

TEST_CASE("Strategies: a failed work-queue item goes back to the queue, its retries counted per item",
          "[sim]") {
  // One worker, 2 items that always fail, 2 retries each without backoff: the failed item goes to the
  // back of the queue and the worker takes the next one. 1 s start, then item 0, 1, 0, 1, 0, 1 (10 s
  // each): 61 s, 6 attempts, both tasks failed for good.
  const Run r = run_text(queue_yaml("{count: 2, workers: 1}", ", failure: {p: 1}, retries: {max: 2}"));
  CHECK(makespan(r.trace) == SimTime::from_s(61));
  REQUIRE(r.trace.attempts.size() == 6);
  CHECK(r.trace.tasks_failed == 2);
  for (std::size_t i = 0; i < 6; ++i) {
    const AttemptRecord& a = r.trace.attempts[i];
    CHECK(a.item == i % 2);
    CHECK(a.attempt == i / 2);
    CHECK(a.outcome == Outcome::failed);
    CHECK(a.started == SimTime::from_s(1 + 10 * static_cast<std::int64_t>(i)));
    CHECK(r.trace.pod_name(a) == "item-0-0");
  }
}

TEST_CASE("Strategies: a work queue keeps each item's own draws (common random numbers)", "[sim]") {
  // Noisy items: each item's run time is the same under both strategies, for every item.
  const std::string noisy = ", duration: {base: 10s, noise: {lognormal_sigma: 0.5}}";
  auto yaml = [&](const std::string& loop) {
    std::string y = queue_yaml(loop);
    y.replace(y.find(", duration: {base: 10s}"), std::string(", duration: {base: 10s}").size(), noisy);
    return y;
  };
  const Run flat = run_text(yaml("{count: 30}"));
  const Run queue = run_text(yaml("{count: 30, workers: 3}"));
  std::map<std::uint32_t, Duration> run_flat;
  for (const AttemptRecord& a : flat.trace.attempts) run_flat[a.item] = a.finished - a.started;
  REQUIRE(queue.trace.attempts.size() == 30);
  for (const AttemptRecord& a : queue.trace.attempts) CHECK(a.finished - a.started == run_flat.at(a.item));
}
