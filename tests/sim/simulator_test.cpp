#include <algorithm>
#include <atomic>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {
SimTime s(std::int64_t seconds) {
  return SimTime::from_s(seconds);
}
}  // namespace

TEST_CASE("Simulator: Argo parallelism-limit, 10 x 10 s with parallelism 2 take 50 s", "[sim]") {
  const Scenario sc = scenario({loop(task("work", 10), 10, 2)}, {pool("big", 4, 16000)});
  const Trace t = run(sc);
  CHECK(t.backend == "sim");
  REQUIRE(t.attempts.size() == 10);
  CHECK(makespan(t) == s(50));
  CHECK(max_concurrent(t, 0) == 2);
  CHECK(t.tasks_failed == 0);
  // Waves of two: items 2k and 2k+1 run from 10k to 10k + 10.
  for (const AttemptRecord& a : t.attempts) {
    CHECK(a.started == s(10 * static_cast<std::int64_t>(a.item / 2)));
    CHECK(a.submitted == a.started);  // admitted when a slot frees, no overheads
  }
}

TEST_CASE("Simulator: Argo parallelism-nested-dag takes 80 s", "[sim]") {
  // A group A (parallelism 2) of b1..b5, each a group c1 -> {c2, c3}; b2, b3, b4 after b1; b5 after them.
  auto b = [](const std::string& name, std::vector<StepIndex> deps) {
    return group(name, {task("c1", 10), task("c2", 10, {0}), task("c3", 10, {0})}, std::move(deps));
  };
  const Scenario sc = scenario(
      {group("A", {b("b1", {}), b("b2", {0}), b("b3", {0}), b("b4", {0}), b("b5", {1, 2, 3})}, {}, 2)},
      {pool("big", 4, 16000)});
  const Trace t = run(sc);
  REQUIRE(t.attempts.size() == 15);
  CHECK(makespan(t) == s(80));
  // b1 0-20; b2, b3 20-40; b4 40-60 (A allows 2 children at once); b5 60-80.
  std::map<std::string, SimTime> c1_start;
  for (const AttemptRecord& a : t.attempts)
    if (t.steps[a.step].ends_with("/c1")) c1_start[t.steps[a.step]] = a.started;
  CHECK(c1_start.at("A/b1/c1") == s(0));
  CHECK(c1_start.at("A/b2/c1") == s(20));
  CHECK(c1_start.at("A/b3/c1") == s(20));
  CHECK(c1_start.at("A/b4/c1") == s(40));
  CHECK(c1_start.at("A/b5/c1") == s(60));
}

TEST_CASE("Simulator: 100 x 10 s on 10 one-CPU nodes take 100 s, 102 s with a 2 s first pull", "[sim]") {
  Scenario sc = scenario({loop(task("work", 10), 100)}, {pool("small", 10, 1000)});
  SECTION("no pulls") {
    const Trace t = run(sc);
    CHECK(makespan(t) == s(100));
    CHECK(max_concurrent(t, 0) == 10);
  }
  SECTION("a 2 s pull on first use per node") {
    sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
    sc.overheads.default_image_size = 2 * kGiB;
    const Trace t = run(sc);
    CHECK(makespan(t) == s(102));
    const auto pulled = std::count_if(t.attempts.begin(), t.attempts.end(),
                                      [](const AttemptRecord& a) { return a.image_pull == s(2); });
    const auto cached = std::count_if(t.attempts.begin(), t.attempts.end(),
                                      [](const AttemptRecord& a) { return a.image_pull == s(0); });
    CHECK(pulled == 10);
    CHECK(cached == 90);
  }
}

TEST_CASE("Simulator: fan-out of 8 x 10 s then a 5 s fan-in takes 15 s", "[sim]") {
  const Scenario sc =
      scenario({loop(task("shard", 10), 8), task("aggregate", 5, {0})}, {pool("big", 2, 8000)});
  const Trace t = run(sc);
  REQUIRE(t.attempts.size() == 9);
  CHECK(makespan(t) == s(15));
  SimTime last_shard = SimTime::zero(), agg_start = kNever;
  for (const AttemptRecord& a : t.attempts) {
    if (a.step == 0) last_shard = std::max(last_shard, a.finished);
    if (a.step == 1) agg_start = a.started;
  }
  CHECK(last_shard == s(10));
  CHECK(agg_start == s(10));
  CHECK(agg_start >= last_shard);
}

TEST_CASE("Simulator: fan-in waits for the slowest iteration", "[sim]") {
  Step shard = loop(task("shard", 0), 4);
  shard.component.input.per_item = {kGiB, 3 * kGiB, 2 * kGiB, kGiB};
  shard.component.duration.per_gib = Duration::from_s(10);  // 10, 30, 20, 10 s
  const Scenario sc = scenario({shard, task("aggregate", 5, {0})}, {pool("big", 1, 8000)});
  const Trace t = run(sc);
  CHECK(makespan(t) == s(35));
  for (const AttemptRecord& a : t.attempts)
    if (a.step == 1) CHECK(a.started == s(30));
}

TEST_CASE("Simulator: retries make max + 1 attempts with exact backoff, and the failure is reported",
          "[sim]") {
  Step flaky = task("flaky", 10);
  flaky.component.failure.p = 1;
  flaky.component.retries.max = 3;
  flaky.component.retries.backoff = Duration::from_s(10);
  flaky.component.retries.factor = 2;
  const Scenario sc =
      scenario({flaky, task("after", 1, {0}), task("independent", 7)}, {pool("big", 1, 8000)});
  const Trace t = run(sc);
  AttemptRecords f;
  for (const AttemptRecord& a : t.attempts)
    if (a.step == 0) f.push_back(a);
  REQUIRE(f.size() == 4);
  // Runs 0-10; waits 10 s; 20-30; waits 20 s; 50-60; waits 40 s; 100-110.
  const std::int64_t starts[] = {0, 20, 50, 100};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(f[i].attempt == i);
    CHECK(f[i].outcome == Outcome::failed);
    CHECK(f[i].submitted == s(starts[i]));
    CHECK(f[i].started == s(starts[i]));
    CHECK(f[i].finished == s(starts[i] + 10));
    CHECK(f[i].kind == (i == 0 ? AttemptKind::first : AttemptKind::retry));
  }
  CHECK(t.tasks_failed == 1);
  // flaky: 3 retries, 4 failed attempts; after: never runs; independent: one attempt.
  const Metrics m = compute_metrics(t, Plan::unroll(sc.pipeline));
  CHECK(m.attempts == 5);
  CHECK(m.retries == 3);
  CHECK(m.backups == 0);
  CHECK(m.replacements == 0);
  CHECK(m.failed_attempts == 4);
  CHECK(m.cancelled_attempts == 0);
  // The dependent never runs; the independent task does.
  CHECK(
      std::none_of(t.attempts.begin(), t.attempts.end(), [](const AttemptRecord& a) { return a.step == 1; }));
  CHECK(std::count_if(t.attempts.begin(), t.attempts.end(), [](const AttemptRecord& a) {
          return a.step == 2 && a.outcome == Outcome::succeeded;
        }) == 1);
  CHECK(makespan(t) == s(110));
}

TEST_CASE("Simulator: scheduler placement follows kube-scheduler's scores", "[sim]") {
  // Three empty nodes; the pod asks for 1 CPU and 2 GiB (integer division as kube-scheduler does):
  //   node  cpu  mem    LeastAllocated (cpu, mem -> avg)         MostAllocated (cpu, mem -> avg)
  //   n1    2    4 GiB  (1000*100/2000=50, 2*100/4=50)  -> 50    (50, 50)            -> 50
  //   n2    4    8 GiB  (3000*100/4000=75, 6*100/8=75)  -> 75    (25, 25)            -> 25
  //   n3    8    4 GiB  (7000*100/8000=87, 50) -> 137/2 = 68     (1000*100/8000=12, 50) -> 62/2 = 31
  // LeastAllocated picks n2; MostAllocated picks n1.
  Step one = task("one", 10);
  one.component.resources.memory = 2 * kGiB;
  Scenario sc = scenario(
      {one}, {pool("n1", 1, 2000, 4 * kGiB), pool("n2", 1, 4000, 8 * kGiB), pool("n3", 1, 8000, 4 * kGiB)});
  SECTION("LeastAllocated") {
    sc.cluster.scheduler.policy = ScorePolicy::least_allocated;
    const Trace t = run(sc);
    CHECK(t.nodes.at(static_cast<std::size_t>(t.attempts.at(0).node)).pool == "n2");
  }
  SECTION("MostAllocated") {
    sc.cluster.scheduler.policy = ScorePolicy::most_allocated;
    const Trace t = run(sc);
    CHECK(t.nodes.at(static_cast<std::size_t>(t.attempts.at(0).node)).pool == "n1");
  }
  SECTION("BalancedAllocation prefers equal fractions") {
    // n3: fractions 0.125 and 0.5 -> (1 - 0.1875) * 100 = 81; n1, n2: 100 (a tie, broken by the RNG).
    sc.cluster.scheduler.policy = ScorePolicy::balanced_allocation;
    const Trace t = run(sc);
    CHECK(t.nodes.at(static_cast<std::size_t>(t.attempts.at(0).node)).pool != "n3");
  }
}

TEST_CASE("Simulator: MostAllocated packs and LeastAllocated spreads", "[sim]") {
  Scenario sc = scenario({loop(task("w", 10), 4)}, {pool("p", 4, 4000, 64 * kGiB)});
  auto nodes_used = [](const Trace& t) {
    std::vector<std::int32_t> n;
    for (const AttemptRecord& a : t.attempts) n.push_back(a.node);
    std::sort(n.begin(), n.end());
    return static_cast<std::size_t>(std::unique(n.begin(), n.end()) - n.begin());
  };
  sc.cluster.scheduler.policy = ScorePolicy::most_allocated;
  CHECK(nodes_used(run(sc)) == 1);
  sc.cluster.scheduler.policy = ScorePolicy::least_allocated;
  CHECK(nodes_used(run(sc)) == 4);
}

TEST_CASE("Simulator: node selectors and taints restrict placement", "[sim]") {
  NodePool gpu = pool("gpu", 1, 8000);
  gpu.labels["accel"] = "a100";
  gpu.taints.push_back(Taint{"nvidia.com/gpu", "present", "NoSchedule"});
  NodePool cpu = pool("cpu", 1, 8000);
  Step train = task("train", 10);
  train.component.node_selector["accel"] = "a100";
  Step prep = task("prep", 10);
  SECTION("a tolerating, selecting pod lands on the tainted pool; others avoid it") {
    train.component.tolerations.push_back(Toleration{"nvidia.com/gpu", "Exists", "", "NoSchedule"});
    const Scenario sc = scenario({loop(prep, 3), train}, {gpu, cpu});
    const Trace t = run(sc);
    for (const AttemptRecord& a : t.attempts)
      CHECK(t.nodes.at(static_cast<std::size_t>(a.node)).pool == (a.step == 1 ? "gpu" : "cpu"));
    CHECK(t.tasks_failed == 0);
  }
  SECTION("without the toleration the pod can never be placed and fails") {
    const Scenario sc = scenario({prep, train}, {gpu, cpu});
    const Trace t = run(sc);
    CHECK(t.tasks_failed == 1);
    for (const AttemptRecord& a : t.attempts)
      if (a.step == 1) {
        CHECK(a.outcome == Outcome::failed);
        CHECK(a.node == -1);
        CHECK(a.scheduled == kNever);
      }
  }
}

TEST_CASE("Simulator: shared storage bandwidth is shared fairly", "[sim]") {
  Step read = loop(task("read", 10), 2);
  read.component.input.dist.a = static_cast<double>(kGiB);
  Scenario sc = scenario({read}, {pool("p", 2, 4000)});
  sc.cluster.storage.read_bytes_per_second = static_cast<double>(kGiB);
  SECTION("two readers of 1 GiB on 1 GiB/s take 2 s each") {
    const Trace t = run(sc);
    for (const AttemptRecord& a : t.attempts) {
      CHECK(a.input_read == s(2));
      CHECK(a.started == s(2));
    }
    CHECK(makespan(t) == s(12));
  }
  SECTION("a reader that starts later gets the full bandwidth once alone") {
    // Sizes 1 GiB and 3 GiB: both share until the first finishes at 2 s (1 GiB each), the second
    // reads its last 2 GiB alone in 2 s: it finishes reading at 4 s.
    read.component.input.per_item = {kGiB, 3 * kGiB};
    sc.pipeline.steps[0] = read;
    const Trace t = run(sc);
    CHECK(t.attempts.at(0).input_read == s(2));
    CHECK(t.attempts.at(1).input_read == s(4));
  }
}

TEST_CASE("Simulator: outputs are written after the run, sharing the write bandwidth", "[sim]") {
  // Four 10 s tasks, then a fan-in. Each writes 1 GiB at the end of its run; the four writes share
  // 1 GiB/s, so each takes 4 s and the fan-in starts at 14 s.
  Step w = loop(task("w", 10), 4);
  w.component.output.dist.a = static_cast<double>(kGiB);
  Scenario sc = scenario({w, task("fan-in", 5, {0})}, {pool("p", 4, 4000)});
  sc.cluster.storage.write_bytes_per_second = static_cast<double>(kGiB);
  SECTION("four writers of 1 GiB on 1 GiB/s take 4 s each, and the fan-in waits for them") {
    const Trace t = run(sc);
    REQUIRE(t.attempts.size() == 5);
    for (int i = 0; i < 4; ++i) {
      CHECK(t.attempts[i].started == s(0));
      CHECK(t.attempts[i].output_write == s(4));
      CHECK(t.attempts[i].finished == s(14));
    }
    CHECK(t.attempts[4].submitted == s(14));
    CHECK(t.attempts[4].output_write == s(0));
    CHECK(makespan(t) == s(19));
  }
  SECTION("the pod keeps its node while it writes") {
    sc.cluster.node_pools[0].count = 1;
    sc.cluster.node_pools[0].cpu = 2000;  // two tasks at a time: 0-10 run, 10-12 write (two share)
    const Trace t = run(sc);
    CHECK(t.attempts[0].finished == s(12));
    CHECK(t.attempts[2].started == s(12));  // the third task waits for a pod to end, not for its run
    CHECK(t.attempts[2].finished == s(24));
    CHECK(makespan(t) == s(29));
  }
  SECTION("reads and writes have their own bandwidth") {
    // One task reads 1 GiB while the other writes 1 GiB (the reader starts 10 s later): 1 s each.
    sc.pipeline.steps = {task("writer", 10), task("reader", 10)};
    sc.pipeline.steps[0].component.output.dist.a = static_cast<double>(kGiB);
    sc.pipeline.steps[1].component.input.dist.a = static_cast<double>(kGiB);
    sc.pipeline.steps[1].component.duration.base = Duration::from_s(0);
    sc.pipeline.steps[1].component.duration.per_gib = Duration::from_s(9);  // reads 0-1, runs 1-10
    sc.cluster.storage.read_bytes_per_second = static_cast<double>(kGiB);
    const Trace t = run(sc);
    CHECK(t.attempts[0].output_write == s(1));
    CHECK(t.attempts[0].finished == s(11));
    CHECK(t.attempts[1].input_read == s(1));
    CHECK(t.attempts[1].finished == s(10));
  }
  SECTION("a failed attempt writes nothing") {
    sc.pipeline.steps = {task("flaky", 10)};
    sc.pipeline.steps[0].component.output.dist.a = static_cast<double>(kGiB);
    sc.pipeline.steps[0].component.failure.p = 1;
    sc.pipeline.steps[0].component.retries.max = 1;
    const Trace t = run(sc);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[0].output_write == s(0));
    CHECK(t.attempts[0].finished == s(10));
    CHECK(t.attempts[1].outcome == Outcome::failed);  // p = 1: the retry fails too, and writes nothing
    CHECK(t.attempts[1].output_write == s(0));
  }
  SECTION("without a write bandwidth, writing takes no time") {
    sc.cluster.storage.write_bytes_per_second = 0;
    const Trace t = run(sc);
    CHECK(makespan(t) == s(15));
  }
}

TEST_CASE("Simulator: kfp-v2 runs a driver pod before each executor pod", "[sim]") {
  Scenario sc = scenario({loop(task("a", 10), 3), task("b", 10, {0})}, {pool("p", 2, 8000)});
  sc.overheads.orchestrator = "kfp-v2";
  sc.overheads.pods_per_task = 2;
  sc.overheads.driver_pod_duration = Duration::from_s(3);
  sc.overheads.sandbox_start = Duration::from_s(1);
  const Trace t = run(sc);
  // Each task: driver (1 s sandbox + 3 s) then executor (1 s sandbox + 10 s): 15 s; two in a row: 30 s.
  CHECK(makespan(t) == s(30));
  for (const AttemptRecord& a : t.attempts) {
    CHECK(a.scheduled - a.submitted == s(4));
    CHECK(a.started - a.scheduled == s(1));
  }
}

TEST_CASE("Simulator: decisions are serialized at the scheduler's rate, then bound", "[sim]") {
  Scenario sc = scenario({loop(task("w", 10), 3)}, {pool("p", 3, 4000)});
  sc.cluster.scheduler.decisions_per_second = 10;  // 100 ms each
  sc.cluster.scheduler.bind_latency = Duration::from_ms(50);
  const Trace t = run(sc);
  std::vector<SimTime> bound;
  for (const AttemptRecord& a : t.attempts) bound.push_back(a.scheduled);
  std::sort(bound.begin(), bound.end());
  CHECK(bound == std::vector<SimTime>{SimTime::from_ms(150), SimTime::from_ms(250), SimTime::from_ms(350)});
  CHECK(makespan(t) == SimTime::from_ms(10350));
}

TEST_CASE("Simulator: the autoscaler adds nodes after the delay and boot time", "[sim]") {
  NodePool p = pool("auto", 1, 1000);
  p.price_per_hour = 3.6;
  p.autoscaling.min = 1;
  p.autoscaling.max = 3;
  p.autoscaling.scale_up_delay = Duration::from_s(10);
  p.autoscaling.boot_time = Duration::from_s(60);
  p.autoscaling.scale_down_idle = Duration::from_s(600);
  const Scenario sc = scenario({loop(task("w", 100), 3)}, {p});
  const Trace t = run(sc);
  // One pod runs 0-100; two are unschedulable from 0; at 10 s the autoscaler asks for 2 nodes, up at
  // 70 s; the pods run 70-170.
  CHECK(makespan(t) == s(170));
  REQUIRE(t.nodes.size() == 3);
  CHECK(t.nodes[0].up == s(0));
  CHECK(t.nodes[0].billed_from == s(0));
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(t.nodes[i].billed_from == s(10));
    CHECK(t.nodes[i].up == s(70));
    CHECK(t.nodes[i].down == s(170));
    CHECK(t.nodes[i].price_per_hour == 3.6);
  }
  std::vector<SimTime> starts;
  for (const AttemptRecord& a : t.attempts) starts.push_back(a.started);
  std::sort(starts.begin(), starts.end());
  CHECK(starts == std::vector<SimTime>{s(0), s(70), s(70)});
}

TEST_CASE("Simulator: a node with no boot time takes the pods that wait for it at once", "[sim]") {
  // boot_time 0: the node is up the instant it is asked for. The pending pods used to miss it (only a
  // node that booted woke the scheduler) and waited for the 5-minute flush of unschedulable pods.
  SECTION("a scale-up from zero") {
    NodePool p = pool("auto", 0, 1000);
    p.price_per_hour = 3.6;  // 0.001 a second
    p.autoscaling.min = 0;
    p.autoscaling.max = 2;
    p.autoscaling.scale_up_delay = Duration::from_s(10);
    p.autoscaling.boot_time = Duration::zero();
    const Trace t = run(scenario({loop(task("w", 10), 2)}, {p}));
    // Both pods unschedulable from 0; at 10 s two nodes come up at once; the pods run 10-20.
    CHECK(makespan(t) == s(20));
    REQUIRE(t.nodes.size() == 2);
    for (const NodeRecord& n : t.nodes) {
      CHECK(n.up == s(10));
      CHECK(n.billed_from == s(10));
    }
    for (const AttemptRecord& a : t.attempts) CHECK(a.started == s(10));
    CHECK(cost(t) == Approx(0.02).epsilon(1e-12));
  }
  SECTION("a replacement for a failed node") {
    NodePool p = pool("p", 1, 1000);
    p.autoscaling.min = 1;
    p.autoscaling.max = 1;
    p.autoscaling.boot_time = Duration::zero();
    p.mtbf = Duration::from_s(30);
    const Scenario sc = scenario({loop(task("a", 20), 3)}, {p});
    const Trace t = run(sc);
    // Every pod that waits is bound the instant a node with room exists: at the start, when a pod ends, or
    // when a replacement comes up (never 5 minutes later).
    std::vector<SimTime> room_from;  // when a node came up or a pod ended
    for (const NodeRecord& n : t.nodes) room_from.push_back(n.up);
    for (const AttemptRecord& a : t.attempts) room_from.push_back(a.finished);
    for (const AttemptRecord& a : t.attempts) {
      if (a.scheduled == kNever) continue;
      CHECK(std::find(room_from.begin(), room_from.end(), a.scheduled) != room_from.end());
    }
    CHECK(makespan(t) < s(300));
  }
}

TEST_CASE("Simulator: a failed attempt says why, as the local backend does", "[sim]") {
  Step w = task("w", 10);
  w.component.failure.p = 1;
  w.component.retries.max = 2;
  w.component.retries.backoff = Duration::zero();
  Step big = task("big", 10, {}, 64000);  // 64 CPUs: fits no node of 1
  const Trace t = run(scenario({loop(w, 2), big}, {pool("p", 2, 1000)}));
  REQUIRE(t.attempts.size() == 7);  // 2 x 3 attempts of w, 1 of big
  for (const AttemptRecord& a : t.attempts) {
    CHECK(a.outcome == Outcome::failed);
    CHECK(t.error_text(a) ==
          (t.steps[a.step] == "big" ? "its pod fits no node it may use" : "sampled failure (failure.p = 1)"));
  }
  CHECK(t.errors.size() == 2);  // one text per reason and step, not per attempt
}

TEST_CASE("Simulator: pods in looped groups have names of their own", "[sim]") {
  // A group looped twice around a group looped twice around a step looped twice (w), and a step without a
  // loop of its own (v), whose item is its group's iteration. By step path, item and attempt alone, the
  // outer group's two iterations gave the same names.
  const Scenario sc = load_scenario_text(
      "name: nested\noverheads: none\npipeline:\n  steps:\n"
      "    - name: outer\n      parallel_for: {count: 2}\n      steps:\n"
      "        - name: inner\n          parallel_for: {count: 2}\n          steps:\n"
      "            - {name: w, parallel_for: {count: 2}, duration: {base: 1s}}\n"
      "            - {name: v, duration: {base: 1s}}\n"
      "cluster:\n  node_pools:\n    - {name: p, cpu: 16, memory: 64Gi, count: 1}\n",
      "nested.yaml");
  const Trace t = run(sc);
  std::vector<std::string> names;
  for (const AttemptRecord& a : t.attempts) names.push_back(t.pod_name(a));
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"outer-inner-v-0-0-0", "outer-inner-v-0-1-0", "outer-inner-v-1-0-0",
                                 "outer-inner-v-1-1-0", "outer-inner-w-0-0-0-0", "outer-inner-w-0-0-1-0",
                                 "outer-inner-w-0-1-0-0", "outer-inner-w-0-1-1-0", "outer-inner-w-1-0-0-0",
                                 "outer-inner-w-1-0-1-0", "outer-inner-w-1-1-0-0", "outer-inner-w-1-1-1-0"});
}

TEST_CASE("Simulator: the autoscaler removes idle nodes down to min", "[sim]") {
  NodePool p = pool("auto", 3, 1000);
  p.autoscaling.min = 1;
  p.autoscaling.max = 3;
  p.autoscaling.scale_down_idle = Duration::from_s(60);
  // A long chain on one node: the other two are idle from 0 and removed at 60 s.
  const Scenario sc = scenario({task("a", 100), task("b", 100, {0})}, {p});
  const Trace t = run(sc);
  CHECK(makespan(t) == s(200));
  REQUIRE(t.nodes.size() == 3);
  int removed = 0;
  for (const NodeRecord& n : t.nodes) removed += n.down == s(60) ? 1 : 0;
  CHECK(removed == 2);
}

// Cluster Autoscaler's "filter out schedulable" step (sim/autoscaler.inl, pods_without_room): a scale-up
// check counts only the pending pods that the free room of the nodes already up cannot take. The
// scale-up check repeats every 10 s; with a boot time that is a multiple of 10 s, a check falls on the
// instant its nodes come up, after they are up but before the scheduler has bound the pods to them.
TEST_CASE("Simulator: a scale-up check at the instant its nodes come up adds none", "[sim]") {
  NodePool p = pool("auto", 1, 1000);
  p.price_per_hour = 3.6;  // 0.001 a second
  p.autoscaling.min = 1;
  p.autoscaling.max = 5;
  p.autoscaling.scale_up_delay = Duration::from_s(10);
  p.autoscaling.boot_time = Duration::from_s(60);
  p.autoscaling.scale_down_idle = Duration::from_s(600);
  Scenario sc = scenario({loop(task("w", 100), 3)}, {p});
  SECTION("kube-scheduler's default profile") {}
  SECTION("policy list (the pending pods in the list's order)") {
    sc.cluster.scheduler.policy = ScorePolicy::list;
  }
  const Trace t = run(sc);
  // By hand. w0 runs 0-100 on auto-0; w1 and w2 are unschedulable from 0. The check at 10 adds auto-1
  // and auto-2 (billed from 10, up at 70); the checks at 20..60 see them booting. At 70 both come up,
  // then the check at 70 (scheduled at 60) runs before the decisions (scheduled at 70): w1 and w2 are
  // still pending, nothing boots. They fit the free room of auto-1 and auto-2, so no node is added (the
  // simulator before this check added auto-3 and auto-4 at 70, up at 130 and idle to the end: 5 nodes,
  // cost 0.69). w1 and w2 run 70-170. Node-seconds 170 + 160 + 160 = 490: cost 0.49.
  CHECK(makespan(t) == s(170));
  REQUIRE(t.nodes.size() == 3);
  CHECK(t.nodes[0].billed_from == s(0));
  CHECK(t.nodes[0].up == s(0));
  CHECK(t.nodes[0].down == s(170));
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(t.nodes[i].billed_from == s(10));
    CHECK(t.nodes[i].up == s(70));
    CHECK(t.nodes[i].down == s(170));
  }
  std::vector<SimTime> starts;
  for (const AttemptRecord& a : t.attempts) starts.push_back(a.started);
  std::sort(starts.begin(), starts.end());
  CHECK(starts == std::vector<SimTime>{s(0), s(70), s(70)});
  CHECK(cost(t) == Approx(0.49).epsilon(1e-12));
}

TEST_CASE("Simulator: the free room goes to the pending pods in the scheduler's order, every class's",
          "[sim]") {
  // Pool y (listed first): 1-CPU nodes at 7.2 an hour (0.002 a second), none at first, scale_up_delay
  // 55 s. Pool x: 2.5-CPU nodes at 3.6 an hour (0.001 a second), one at first, scale_up_delay 10 s.
  // Both: boot 60 s, scale_down_idle 1 h (nothing goes before the end). Steps: a (2 x 2 CPUs, 1000 s;
  // only x holds it), pre (0.5 CPU, 15 s), then b (2 x 1 CPU, 100 s; its first pool is y).
  NodePool y = pool("y", 0, 1000);
  y.price_per_hour = 7.2;
  y.autoscaling.min = 0;
  y.autoscaling.max = 5;
  y.autoscaling.scale_up_delay = Duration::from_s(55);
  y.autoscaling.boot_time = Duration::from_s(60);
  y.autoscaling.scale_down_idle = Duration::from_s(3600);
  NodePool x = pool("x", 1, 2500);
  x.price_per_hour = 3.6;
  x.autoscaling.min = 1;
  x.autoscaling.max = 5;
  x.autoscaling.scale_up_delay = Duration::from_s(10);
  x.autoscaling.boot_time = Duration::from_s(60);
  x.autoscaling.scale_down_idle = Duration::from_s(3600);
  const Scenario sc = scenario(
      {loop(task("a", 1000, {}, 2000), 2), task("pre", 15, {}, 500), loop(task("b", 100, {1}), 2)}, {y, x});
  const Trace t = run(sc);
  // By hand. At 0: a0 and pre go to x-0; a1 is unschedulable from 0. Its check at 10 adds x-1 (billed
  // from 10, up at 70). pre ends at 15: b0 and b1 are created, find no room (x-0 has 0.5 CPU left) and
  // are unschedulable from 15; b's check is at 15 + 55 = 70, scheduled at 15, after x-1's coming up
  // (scheduled at 10). At 70, x-1 comes up, then b's check and a's (scheduled at 60), then the
  // decisions. The pending pods in the scheduler's order are a1 (created at 0), b0, b1 (at 15): a1 takes
  // x-1 (2.5 CPUs, 0.5 left), b0 and b1 find no room. b's check adds y-0 and y-1 (2 pods, one a node;
  // billed from 70, up at 130); a's adds nothing. Packed the other way (b first), b0 and b1 would have
  // taken x-1 and a's check would have added x-2; counting each class's own free room alone, neither
  // check would add a node at 70 and y-0, y-1 would come at 80, 10 s later. a1 runs 70-1070 on x-1. At
  // 130 y-0 and y-1 come up before b's check of 130, which finds b0 and b1 room there and adds none
  // (the simulator before this check added x-2 at 70 and y-2, y-3 at 130: 7 nodes, cost 10.89). b0 and
  // b1 run 130-230. The run ends at 1070 with a1.
  CHECK(makespan(t) == s(1070));
  REQUIRE(t.nodes.size() == 4);
  const std::vector<std::string> names = {"x-0", "x-1", "y-0", "y-1"};
  const std::vector<std::int64_t> billed = {0, 10, 70, 70}, up = {0, 70, 130, 130};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO(i);
    CHECK(t.nodes[i].name == names[i]);
    CHECK(t.nodes[i].billed_from == s(billed[i]));
    CHECK(t.nodes[i].up == s(up[i]));
    CHECK(t.nodes[i].down == s(1070));
  }
  REQUIRE(t.attempts.size() == 5);
  for (const AttemptRecord& r : t.attempts) {
    INFO(r.task);
    const std::string& node = t.nodes.at(static_cast<std::size_t>(r.node)).name;
    if (r.step == 0) CHECK(node == (r.item == 0 ? "x-0" : "x-1"));
    if (r.step == 0) CHECK(r.started == s(r.item == 0 ? 0 : 70));
    if (r.step == 2) CHECK(node.rfind("y-", 0) == 0);
    if (r.step == 2) CHECK(r.started == s(130));
  }
  // Node-seconds: x 1070 + 1060 = 2130 at 0.001 (2.13), y 2 x 1000 = 2000 at 0.002 (4.00): 6.13.
  CHECK(cost(t) == Approx(6.13).epsilon(1e-12));
}

TEST_CASE("Simulator: the nodes still booting are shared by every class's pending pods", "[sim]") {
  // One pool of 4-CPU nodes, none at first, up to 10, 3.6 an hour (0.001 a second), scale_up_delay 10 s,
  // boot 60 s. Two steps from 0, each 4 pods of 4 CPUs (one a node) for 100 s: a, then b. By hand: all 8
  // pods are unschedulable from 0. a's check at 10 packs the pending pods (a's 4, then b's 4) onto the
  // nodes that are up (none) and booting (none): 4 of a's are left, so it adds x-0..x-3 (billed from 10,
  // up at 70). b's check at 10 packs them again: a's 4 take the 4 booting nodes (CA has the upcoming nodes
  // in its snapshot), b's 4 are left: it adds x-4..x-7. All 8 come up at 70 and every pod runs 70-170.
  // Node-seconds 8 x 160: cost 1.28. Counting each class's booting nodes on its own (the simulator before
  // this), b's check saw the 4 booting nodes as its own and added nothing; b's nodes came at 70, up at
  // 130: makespan 230, cost 1.52.
  NodePool p = pool("x", 0, 4000);
  p.price_per_hour = 3.6;
  p.autoscaling.min = 0;
  p.autoscaling.max = 10;
  p.autoscaling.scale_up_delay = Duration::from_s(10);
  p.autoscaling.boot_time = Duration::from_s(60);
  p.autoscaling.scale_down_idle = Duration::from_s(600);
  const Trace t = run(scenario({loop(task("a", 100, {}, 4000), 4), loop(task("b", 100, {}, 4000), 4)}, {p}));
  CHECK(makespan(t) == s(170));
  REQUIRE(t.nodes.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    INFO(i);
    CHECK(t.nodes[i].billed_from == s(10));
    CHECK(t.nodes[i].up == s(70));
    CHECK(t.nodes[i].down == s(170));
  }
  for (const AttemptRecord& r : t.attempts) CHECK(r.started == s(70));
  CHECK(cost(t) == Approx(1.28).epsilon(1e-12));
}

TEST_CASE("Simulator: a big backlog's scale-up check packs it onto the nodes that came up", "[sim]") {
  // 20,000 pods of 1 CPU for 1000 s; one 40-CPU node at first, up to 1000, 3.6 an hour (0.001 a second),
  // boot 60 s. By hand: 40 pods run 0-1000 on auto-0; the check at 10 adds ceil(19,960 / 40) = 499 nodes
  // (billed from 10, up at 70). At 70 they come up and the check then finds room for all 19,960 pods
  // on them: no node is added (the simulator before this check added 499 more at 70, up at 130 and
  // scaled down idle at 730: 999 nodes, cost 859.35). The pods run 70-1070. Node-seconds 1070 + 499 x
  // 1060 = 530,010: cost 530.01.
  NodePool p = pool("auto", 1, 40000);
  p.price_per_hour = 3.6;
  p.autoscaling.min = 1;
  p.autoscaling.max = 1000;
  p.autoscaling.scale_up_delay = Duration::from_s(10);
  p.autoscaling.boot_time = Duration::from_s(60);
  p.autoscaling.scale_down_idle = Duration::from_s(600);
  const Trace t = run(scenario({loop(task("w", 1000), 20000)}, {p}));
  CHECK(makespan(t) == s(1070));
  CHECK(t.tasks_failed == 0);
  REQUIRE(t.nodes.size() == 500);
  for (std::size_t i = 1; i < t.nodes.size(); ++i) {
    INFO(i);
    CHECK(t.nodes[i].billed_from == s(10));
    CHECK(t.nodes[i].up == s(70));
    CHECK(t.nodes[i].down == s(1070));
  }
  CHECK(cost(t) == Approx(530.01).epsilon(1e-12));
}

namespace {

// Two autoscaled pools for the scale-down delay after a scale-up (cluster.autoscaler), no overheads:
// - pool a: two 1-CPU nodes from 0 (min 1, max 2), 3.6 an hour (0.001 a second), scale_down_idle 60 s;
// - pool b: no node at first (min 0, max 2), 2 CPUs, 7.2 an hour (0.002 a second), scale_up_delay 10 s,
//   boot_time 45 s (not a multiple of the 10 s scan, so that no scan falls on a node's coming up: see
//   the report of this change), scale_down_idle 60 s.
// Steps: x (1 CPU, 100 s) and big (2 CPUs, 1000 s) from 0; big2 (2 CPUs, 500 s) after x. Only pool b
// holds big and big2.
Scenario scale_down_delay_scenario(Duration delay_after_add) {
  NodePool a = pool("a", 2, 1000);
  a.price_per_hour = 3.6;
  a.autoscaling.min = 1;
  a.autoscaling.max = 2;
  a.autoscaling.scale_down_idle = Duration::from_s(60);
  NodePool b = pool("b", 0, 2000);
  b.price_per_hour = 7.2;
  b.autoscaling.min = 0;
  b.autoscaling.max = 2;
  b.autoscaling.scale_up_delay = Duration::from_s(10);
  b.autoscaling.boot_time = Duration::from_s(45);
  b.autoscaling.scale_down_idle = Duration::from_s(60);
  Scenario sc = scenario({task("x", 100), task("big", 1000, {}, 2000), task("big2", 500, {0}, 2000)}, {a, b});
  sc.cluster.autoscaler.scale_down_delay_after_add = delay_after_add;
  return sc;
}

std::int64_t billed_s(const NodeRecord& n) {
  return (n.down - n.billed_from).ns() / 1'000'000'000;
}

}  // namespace

TEST_CASE("Simulator: a scale-up delays the removal of nodes idle before it (scale_down_delay_after_add)",
          "[sim]") {
  // By hand. x runs 0-100 on one node of pool a (whichever the tie-break picks); the other, "a-idle",
  // is idle from 0. big is unschedulable from 0 (only pool b holds it): the autoscaler adds b-0 at 10
  // (billed from 10, up at 55), big runs 55-1055. When x ends at 100, big2 is unschedulable (b-0 is
  // full): b-1 is added at 110 (up at 155), big2 runs 155-655. The run ends at 1055 with big.
  // a-idle goes at max(0 + 60, S + delay), S the last scale-up before then (10, then 110). The node that
  // ran x, idle from 100, is due at 160 and held as long, but after a-idle (due first, it goes first)
  // pool a is at min (1): it stays to the end. b-1, idle from 655, goes at max(655 + 60, 110 + delay) =
  // 715 for every delay below (10 min: 710, the delay has passed already). b-0 runs to the end.
  Duration delay = Duration::zero();
  std::int64_t a_idle_down = 0;
  SECTION("Cluster Autoscaler's default, 10 min: a-idle waits for both scale-ups") {
    // Due at 60; the scale-up at 10 holds it to 610; at 610 the one at 110 holds it to 710: gone at 710.
    delay = Duration::from_s(600);
    a_idle_down = 710;
  }
  SECTION("5 min: the second scale-up still moves it") {
    // Due at 60 -> 310 (10 + 300) -> 410 (110 + 300): gone at 410.
    delay = Duration::from_s(300);
    a_idle_down = 410;
  }
  SECTION("30 s: the delay has passed already when a-idle is due") {
    // 10 + 30 = 40 <= 60: gone at 60, as without the delay.
    delay = Duration::from_s(30);
    a_idle_down = 60;
  }
  SECTION("0 s: the behaviour before the delay existed") {
    delay = Duration::zero();
    a_idle_down = 60;
  }
  const Trace t = run(scale_down_delay_scenario(delay));
  CHECK(makespan(t) == s(1055));
  CHECK(t.tasks_failed == 0);
  REQUIRE(t.attempts.size() == 3);
  CHECK(t.attempts[0].started == s(0));    // x
  CHECK(t.attempts[1].started == s(55));   // big, on b-0
  CHECK(t.attempts[2].started == s(155));  // big2, on b-1
  CHECK(t.attempts[2].finished == s(655));
  REQUIRE(t.nodes.size() == 4);
  const auto ran_x = static_cast<std::size_t>(t.attempts[0].node);
  REQUIRE(ran_x < 2);
  const NodeRecord& a_x = t.nodes[ran_x];
  const NodeRecord& a_idle = t.nodes[1 - ran_x];
  const NodeRecord& b0 = t.nodes[2];
  const NodeRecord& b1 = t.nodes[3];
  CHECK(b0.name == "b-0");
  CHECK(b1.name == "b-1");
  CHECK(a_idle.down == s(a_idle_down));
  CHECK(a_x.down == s(1055));
  CHECK(b0.billed_from == s(10));
  CHECK(b0.up == s(55));
  CHECK(b0.down == s(1055));
  CHECK(b1.billed_from == s(110));
  CHECK(b1.up == s(155));
  CHECK(b1.down == s(715));
  // Node-seconds: pool a 1055 + a_idle_down, pool b (1055 - 10) + (715 - 110) = 1650. Cost: pool a at
  // 0.001 a second, pool b at 0.002 (3.30): 10 min 1.765 + 3.30 = 5.065, 5 min 1.465 + 3.30 = 4.765, 30 s
  // and 0 s 1.115 + 3.30 = 4.415. Node-hours: (2705 + a_idle_down) / 3600, 0.9653 at 10 min.
  CHECK(billed_s(a_x) + billed_s(a_idle) == 1055 + a_idle_down);
  CHECK(billed_s(b0) + billed_s(b1) == 1650);
  const double want = delay == Duration::from_s(600) ? 5.065 : delay == Duration::from_s(300) ? 4.765 : 4.415;
  CHECK(cost(t) == Approx(want).epsilon(1e-12));
  CHECK(cost(t) == Approx((1055.0 + static_cast<double>(a_idle_down)) * 0.001 + 1650 * 0.002).epsilon(1e-12));
}

TEST_CASE("Simulator: with a scan interval, a node goes at the autoscaler's first loop after it is due",
          "[sim]") {
  // The run of the test above (x 0-100 on one node of pool a, a-idle idle from 0; b-0 added at 10, b-1 at
  // 110, big2 ends at 655, big at 1055), with cluster.autoscaler.scan_interval 25 s: the autoscaler's
  // loops are at 0, 25, 50, ... A node is removed at the first loop at or after the time it is due.
  Duration delay = Duration::zero();
  std::int64_t a_idle_down = 0, b1_down = 0;
  SECTION("no scale-down delay: a-idle due at 60 goes at 75; b-1 due at 715 goes at 725") {
    delay = Duration::zero();
    a_idle_down = 75;
    b1_down = 725;
  }
  SECTION("10 min: a-idle held to 710 goes at 725; b-1 due at 715 too") {
    delay = Duration::from_s(600);
    a_idle_down = 725;
    b1_down = 725;
  }
  Scenario sc = scale_down_delay_scenario(delay);
  sc.cluster.autoscaler.scan_interval = Duration::from_s(25);
  const Trace t = run(sc);
  CHECK(makespan(t) == s(1055));
  REQUIRE(t.nodes.size() == 4);
  const auto ran_x = static_cast<std::size_t>(t.attempts.at(0).node);
  REQUIRE(ran_x < 2);
  CHECK(t.nodes[1 - ran_x].down == s(a_idle_down));
  CHECK(t.nodes[ran_x].down == s(1055));  // pool a at its min once a-idle is gone
  CHECK(t.nodes[2].down == s(1055));
  CHECK(t.nodes[3].down == s(b1_down));
  // Pool a at 0.001 a second, pool b at 0.002: (1055 + a-idle) x 0.001 + ((1055 - 10) + (b-1 - 110)) x 0.002.
  CHECK(cost(t) == Approx((1055.0 + static_cast<double>(a_idle_down)) * 0.001 +
                          (1045.0 + static_cast<double>(b1_down - 110)) * 0.002)
                       .epsilon(1e-12));
  // A scan interval of 0 is the behaviour without one (the test above).
  sc.cluster.autoscaler.scan_interval = Duration::zero();
  CHECK(run(sc).nodes[3].down == s(715));
}

TEST_CASE("Simulator: runs with the scale-down delay are reproducible, with either node search", "[sim]") {
  const Scenario sc = scale_down_delay_scenario(Duration::from_s(600));
  const Plan plan = Plan::unroll(sc.pipeline);
  std::string first;
  for (const sim::NodeSearch search : {sim::NodeSearch::score_tree, sim::NodeSearch::node_index}) {
    for (int i = 0; i < 2; ++i) {
      sim::SimOptions o = sim::SimOptions::with_seed(3);
      o.node_search = search;
      std::ostringstream out;
      write_trace_json(out, sim::simulate(sc, plan, o));
      if (first.empty()) first = out.str();
      CHECK(out.str() == first);
    }
  }
}

TEST_CASE("Simulator: scale-downs wait for a scale-up's delay only when some scale-up happened", "[sim]") {
  // No scale-up in the run: the delay changes nothing (the existing case "removes idle nodes down to
  // min", with the default 10 min delay and with none).
  NodePool p = pool("auto", 3, 1000);
  p.autoscaling.min = 1;
  p.autoscaling.max = 3;
  p.autoscaling.scale_down_idle = Duration::from_s(60);
  Scenario sc = scenario({task("a", 100), task("b", 100, {0})}, {p});
  REQUIRE(sc.cluster.autoscaler.scale_down_delay_after_add == Duration::from_s(600));  // the default
  for (const Duration delay : {Duration::from_s(600), Duration::zero()}) {
    sc.cluster.autoscaler.scale_down_delay_after_add = delay;
    const Trace t = run(sc);
    CHECK(makespan(t) == s(200));
    int removed = 0;
    for (const NodeRecord& n : t.nodes) removed += n.down == s(60) ? 1 : 0;
    CHECK(removed == 2);
  }
}

TEST_CASE("Simulator: failed and reclaimed nodes evict pods, which run again", "[sim]") {
  NodePool p = pool("flaky", 4, 2000);
  p.autoscaling.boot_time = Duration::from_s(30);
  SECTION("node failures (MTBF)") {
    p.mtbf = Duration::from_s(200);
  }
  SECTION("spot reclaims") {
    p.spot = true;
    p.spot_discount = 0.7;
    p.price_per_hour = 1.0;
    p.spot_mean_reclaim = Duration::from_s(200);
  }
  const Scenario sc = scenario({loop(task("w", 60), 40), task("sum", 1, {0})}, {p});
  const Trace t = run(sc, 3);
  CHECK(t.tasks_failed == 0);
  CHECK(count_outcome(t, Outcome::evicted) > 0);
  CHECK(count_outcome(t, Outcome::succeeded) == 41);
  CHECK(t.nodes.size() > 4);  // replacements
  for (const AttemptRecord& a : t.attempts) {
    if (a.outcome != Outcome::evicted) continue;
    // The node went down exactly when the attempt was evicted, and the task ran again later.
    CHECK(t.nodes.at(static_cast<std::size_t>(a.node)).down == a.finished);
    CHECK(std::any_of(t.attempts.begin(), t.attempts.end(), [&](const AttemptRecord& b) {
      return b.task == a.task && b.attempt == a.attempt + 1 && b.submitted == a.finished &&
             b.kind == AttemptKind::replacement;
    }));
  }
  // No failures are modelled: every attempt after the first replaces an evicted one.
  for (const AttemptRecord& a : t.attempts)
    CHECK(a.kind == (a.attempt == 0 ? AttemptKind::first : AttemptKind::replacement));
  for (std::size_t i = 4; i < t.nodes.size(); ++i) CHECK(t.nodes[i].up - t.nodes[i].billed_from == s(30));
  if (p.spot)
    for (const NodeRecord& n : t.nodes) CHECK(n.price_per_hour == Approx(0.3));
}

TEST_CASE("Simulator: tasks that fit no node fail at once, the rest run", "[sim]") {
  const Scenario sc = scenario({task("huge", 10, {}, 64000), task("ok", 10)}, {pool("p", 1, 4000)});
  const Trace t = run(sc);
  CHECK(t.tasks_failed == 1);
  CHECK(makespan(t) == s(10));
}

TEST_CASE("Simulator: node speed divides run times, pod names and node records are filled", "[sim]") {
  NodePool fast = pool("fast", 1, 4000);
  fast.speed = 2;
  fast.price_per_hour = 7.2;
  const Scenario sc = scenario({loop(task("Prep/x", 10), 2)}, {fast});
  const Trace t = run(sc);
  CHECK(makespan(t) == s(5));
  CHECK(t.pod_name(t.attempts.at(1)) == "prep-x-1-0");
  REQUIRE(t.nodes.size() == 1);
  CHECK(t.nodes[0].name == "fast-0");
  CHECK(t.nodes[0].cpu == 4000);
  CHECK(t.nodes[0].down == s(5));
}

TEST_CASE("Simulator: pod names count items across digit carries and retries past 9", "[sim]") {
  // Pods of different steps interleave, items cross 9 -> 10, 99 -> 100 and 999 -> 1000, and one task
  // fails 12 times (attempts 0 to 11), so every way a name's digits are written is used.
  Step flaky = task("Flaky", 1);
  flaky.component.failure.p = 1;
  flaky.component.retries.max = 11;
  const Scenario sc =
      scenario({loop(task("Fan/Out", 1), 1005), flaky, loop(task("b", 3), 120, 7)}, {pool("p", 50, 64000)});
  const Trace t = run(sc);
  CHECK(t.tasks_failed == 1);
  const std::string prefixes[] = {"fan-out-", "flaky-", "b-"};
  std::map<std::uint32_t, std::size_t> per_step;
  bool interleaved = false;
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    const AttemptRecord& a = t.attempts[i];
    CHECK(t.pod_name(a) == prefixes[a.step] + std::to_string(a.item) + "-" + std::to_string(a.attempt));
    ++per_step[a.step];
    if (i > 0 && t.attempts[i - 1].step != a.step && per_step[a.step] > 1) interleaved = true;
  }
  CHECK(per_step[0] == 1005);
  CHECK(per_step[1] == 12);
  CHECK(per_step[2] == 120);
  CHECK(interleaved);
  CHECK(t.pod_name(t.attempts.at(999)) == "fan-out-999-0");
  CHECK(t.pod_name(t.attempts.at(1000)) == "fan-out-1000-0");
}

TEST_CASE("Simulator: progress is reported up to 1", "[sim]") {
  const Scenario sc = scenario({loop(task("w", 1), 500)}, {pool("p", 10, 8000)});
  const Plan plan = Plan::unroll(sc.pipeline);
  std::vector<double> seen;
  sim::SimOptions opt;
  opt.progress = [&](double f) { seen.push_back(f); };
  (void)sim::simulate(sc, plan, opt);
  REQUIRE(!seen.empty());
  CHECK(seen.back() == 1.0);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
}

TEST_CASE("Simulator: a limited group loop admits all roots of an iteration together", "[sim]") {
  // Four iterations of {a, b} (independent, 10 s each), two iterations at a time: 0-10 and 10-20.
  Step g = group("g", {task("a", 10), task("b", 10)});
  g.loop = Loop{4, {}, 2};
  const Scenario sc = scenario({g}, {pool("p", 4, 16000)});
  const Trace t = run(sc);
  REQUIRE(t.attempts.size() == 8);
  CHECK(makespan(t) == s(20));
  for (const AttemptRecord& a : t.attempts) CHECK(a.started == s(a.item < 2 ? 0 : 10));
}

namespace {

// Node failure times come from the stream (seed, node, node record). The first seed whose first node
// (MTBF 10,000 s) fails between `lo` and `hi` seconds and whose replacement lives past 1,000 s; `fail`
// gets the failure time.
std::uint64_t seed_failing_between(double lo, double hi, double& fail) {
  for (std::uint64_t seed = 1;; ++seed) {
    Rng first = Rng::stream(seed, Stream::node, 0);
    Rng second = Rng::stream(seed, Stream::node, 1);
    fail = first.exponential(10000);
    if (fail > lo && fail < hi && second.exponential(10000) > 1000) return seed;
  }
}

}  // namespace

TEST_CASE("Simulator: nodes that go away faster than tasks finish stop the run, which says why", "[sim]") {
  // A task of an hour on nodes that fail every second would replace nodes until the 10-year horizon,
  // hundreds of millions of them. The run stops once it has made 100,000 + 100 x (count +
  // autoscaling.max) nodes. (An autoscaled pool with scale_down_idle 0 did too, removing each new node
  // before its pod was bound: no more, see the next test.)
  NodePool p = pool("p", 100, 8000);
  p.mtbf = Duration::from_s(1);
  const std::uint64_t budget = 100'000 + 100 * 100;
  const std::string why = "pool p: mtbf 1s";
  const Trace t = run(scenario({task("w", 3600)}, {p}), 1);
  CHECK(t.nodes.size() == budget);
  CHECK(t.tasks_failed == 1);
  CHECK(t.tasks_unfinished == 1);
  CHECK(t.stopped_early == "it had made " + std::to_string(budget) +
                               " nodes, each replacing one that failed, was reclaimed or was scaled down (" +
                               why + "): nodes go away faster than the tasks can finish");
  // A run that ends by itself says nothing of the kind.
  p.mtbf = Duration::zero();
  p.autoscaling = {};
  p.count = 1;
  CHECK(run(scenario({task("w", 3600)}, {p}), 1).stopped_early.empty());
}

TEST_CASE("Simulator: the nodes a run may make are bounded whatever the pools' autoscaling.max", "[sim]") {
  // 100,000 + 100 x 1,000,000 was the bound of an autoscaled pool of max 1,000,000: a hopeless run took
  // minutes and gigabytes to reach it. SimOptions::most_nodes_made caps it (10 million by default; 1,000
  // here, to run quickly).
  NodePool p = pool("p", 1, 8000);
  p.mtbf = Duration::from_s(1);
  p.autoscaling.min = 1;
  p.autoscaling.max = 1'000'000;
  const Scenario sc = scenario({task("w", 3600)}, {p});
  sim::SimOptions o;
  o.most_nodes_made = 1000;
  sim::SimStats st;
  const Trace t = sim::simulate(sc, Plan::unroll(sc.pipeline), o, st);
  CHECK(t.nodes.size() == 1000);
  CHECK(t.tasks_failed == 1);
  CHECK_THAT(t.stopped_early, Catch::StartsWith("it had made 1000 nodes, each replacing one that failed"));
  CHECK(sim::SimOptions{}.most_nodes_made == 10'000'000);
}

TEST_CASE("Simulator: with scale_down_idle 0 a node a pending pod fits is kept for it", "[sim]") {
  // 8 pods of 4 CPUs and 100 s, a pool of 4-CPU nodes from 0 to 2, no delays: 2 nodes, 4 waves, 400 s,
  // 2 x 400 s at 36 an hour = 8. The autoscaler used to remove a node the instant its pod ended, under
  // the pods waiting for it, and the run churned through 100,200 nodes to its horizon.
  NodePool p = pool("p", 0, 4000);
  p.price_per_hour = 36;
  p.autoscaling.min = 0;
  p.autoscaling.max = 2;
  p.autoscaling.scale_up_delay = Duration::zero();
  p.autoscaling.boot_time = Duration::zero();
  p.autoscaling.scale_down_idle = Duration::zero();
  Scenario sc = scenario({loop(task("a", 100, {}, 4000), 8)}, {p});
  sc.cluster.autoscaler.scale_down_delay_after_add = Duration::zero();
  const Trace t = run(sc, 1);
  CHECK(t.stopped_early.empty());
  CHECK(t.tasks_failed == 0);
  CHECK(makespan(t) == s(400));
  REQUIRE(t.nodes.size() == 2);
  for (const NodeRecord& n : t.nodes) {
    CHECK(n.billed_from == s(0));
    CHECK(n.down == s(400));
  }
  CHECK(compute_metrics(t, Plan::unroll(sc.pipeline)).cost == 8.0);
  // Once nothing waits, an idle node goes at once: the last wave's nodes at 400 s above. A node is
  // looked at after every other event of the instant it became due: b's pod, created the instant a's
  // ended, keeps a's node (it went under b's pod, which then waited for a new node: 2 nodes).
  Scenario one = scenario({task("a", 100, {}, 4000), task("b", 50, {0}, 4000)}, {p});
  one.cluster.autoscaler.scale_down_delay_after_add = Duration::zero();
  const Trace u = run(one, 1);
  CHECK(makespan(u) == s(150));
  REQUIRE(u.nodes.size() == 1);
  CHECK(u.nodes[0].down == s(150));
  CHECK(u.attempts[1].node == 0);
  CHECK(u.attempts[1].scheduled == s(100));
}

TEST_CASE(
    "Simulator: a node held back by scale_down_delay_after_add is kept for a pod created when it is due",
    "[sim]") {
  // p-0 is idle from 10 s; q's scale-up at 5 s holds scale-down until 65 s; a ends at 65 s and b (4 CPUs,
  // only p-0 holds it) is created then: b runs on p-0 from 65 s. (The held node went at 65 s under b,
  // which waited for a new node until 100 s; it still does when the delay is not what holds it back.)
  const std::string yaml =
      "name: held\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: y, duration: {base: 10s}, resources: {cpu: 4}}\n"
      "    - {name: a, duration: {base: 65s}, resources: {cpu: 2}}\n"
      "    - {name: x, duration: {base: 300s}, resources: {cpu: 2}}\n"
      "    - {name: g, duration: {base: 20s}, resources: {cpu: 1}, node_selector: {kind: g}}\n"
      "    - {name: b, after: [a], duration: {base: 60s}, resources: {cpu: 4}}\n"
      "cluster:\n  node_pools:\n"
      "    - {name: p, cpu: 4, memory: 16Gi, count: 2, autoscaling: {min: 0, max: 3, scale_down_idle: 0s, "
      "boot_time: 30s, scale_up_delay: 5s}}\n"
      "    - {name: q, cpu: 2, memory: 16Gi, count: 0, labels: {kind: g}, autoscaling: {min: 0, max: 1, "
      "scale_down_idle: 10m, boot_time: 30s, scale_up_delay: 5s}}\n"
      "  autoscaler: {scale_down_delay_after_add: 60s}\n";
  const Scenario sc = load_scenario_text(yaml, "held.yaml");
  const Trace t = run(sc, 1);
  REQUIRE(t.nodes.size() == 3);  // p-0, p-1, q-0: no new node for b
  CHECK(t.nodes[0].name == "p-0");
  CHECK(t.nodes[0].down == s(125));
  REQUIRE(t.attempts.size() == 5);
  CHECK(t.attempts[4].node == 0);
  CHECK(t.attempts[4].scheduled == s(65));
  CHECK(makespan(t) == s(300));
}

TEST_CASE("Simulator: an unschedulable pod is retried at the 30 s flush tick past its 5 minutes", "[sim]") {
  // kube-scheduler moves a pod unschedulable for more than 5 min back at its 30 s flushUnschedulable-
  // PodsLeftover ticks: y, unschedulable from 0 behind x (950 s), is tried at 330, 660, then when x ends
  // (950): with x's decision, 5 decisions (at 300, 600, 900 and 950 it was 6).
  Scenario sc = scenario({task("x", 950, {}, 2000), task("y", 10, {}, 2000)}, {pool("p", 1, 2000)});
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimStats st;
  const Trace t = sim::simulate(sc, plan, sim::SimOptions{}, st);
  CHECK(st.scheduling_attempts == 5);
  CHECK(t.attempts[1].scheduled == s(950));
  CHECK(makespan(t) == s(960));
}

TEST_CASE("Simulator: a node that comes up wakes only the pods that fit it", "[sim]") {
  // x[1] (2 CPUs, pool a only) and z (500m, pool auto only) are unschedulable; auto-0 (1 CPU) comes up at
  // 100 s. kube-scheduler's queueing hints skip x[1] for a node it does not fit, so the next 10 s decision
  // is z's: bound at 110 s (a decision retried x[1] first: 120 s).
  const std::string yaml =
      "name: na\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: x, parallel_for: {count: 2}, resources: {cpu: 2}, node_selector: {role: x}, duration: "
      "{base: 1000s}}\n"
      "    - {name: z, resources: {cpu: 500m}, node_selector: {role: z}, duration: {base: 10s}}\n"
      "cluster:\n  node_pools:\n"
      "    - {name: a, cpu: 2, memory: 4Gi, count: 1, labels: {role: x}}\n"
      "    - {name: auto, cpu: 1, memory: 4Gi, labels: {role: z}, autoscaling: {min: 0, max: 1, "
      "scale_up_delay: 10s, boot_time: 60s}}\n"
      "  scheduler: {decisions_per_second: 0.1, bind_latency: 0s}\n";
  const Trace t = run(load_scenario_text(yaml, "na.yaml"), 1);
  REQUIRE(t.attempts.size() == 3);
  REQUIRE(t.nodes.size() == 2);
  CHECK(t.nodes[1].up == s(100));
  CHECK(t.attempts[2].scheduled == s(110));
  CHECK(t.attempts[2].node == 1);
  CHECK(t.attempts[1].scheduled == s(1020));  // x[1] when x[0] ends at 1010, its decision 10 s later
}

TEST_CASE("Simulator: a node failure at its sampled time evicts the pod, the replacement boots", "[sim]") {
  // The node fails within the task's run; its replacement outlives the rerun.
  NodePool p = pool("p", 1, 4000);
  p.mtbf = Duration::from_s(10000);
  p.autoscaling.boot_time = Duration::from_s(60);
  double fail = 0;
  const std::uint64_t seed = seed_failing_between(0, 50, fail);
  const SimTime down = Duration::from_seconds(fail);
  const Trace t = run(scenario({task("w", 100)}, {p}), seed);
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.attempts[0].outcome == Outcome::evicted);
  CHECK(t.attempts[0].started == s(0));
  CHECK(t.attempts[0].finished == down);
  CHECK(t.attempts[1].attempt == 1);
  CHECK(t.attempts[0].kind == AttemptKind::first);
  CHECK(t.attempts[1].kind == AttemptKind::replacement);
  CHECK(t.attempts[1].submitted == down);
  CHECK(t.attempts[1].started == down + s(60));
  CHECK(t.attempts[1].outcome == Outcome::succeeded);
  CHECK(makespan(t) == down + s(160));
  const Metrics m = compute_metrics(t, Plan::unroll(scenario({task("w", 100)}, {p}).pipeline));
  CHECK(m.replacements == 1);
  CHECK(m.retries == 0);
  CHECK(m.backups == 0);
  CHECK(m.failed_attempts == 1);  // the evicted one
  CHECK(m.cancelled_attempts == 0);
  REQUIRE(t.nodes.size() == 2);
  CHECK(t.nodes[0].down == down);
  CHECK(t.nodes[1].billed_from == down);
  CHECK(t.nodes[1].up == down + s(60));
  CHECK(t.tasks_failed == 0);
}

TEST_CASE("Simulator: a node failure while a pod writes its output evicts it mid-write", "[sim]") {
  // A 10 s run, then 100 GiB to write at 1 GiB/s (100 s). Find a seed whose first node fails during the
  // write and whose replacement outlives the rerun; the evicted attempt records the time it spent writing.
  NodePool p = pool("p", 1, 4000);
  p.mtbf = Duration::from_s(10000);
  p.autoscaling.boot_time = Duration::from_s(60);
  double fail = 0;
  const std::uint64_t seed = seed_failing_between(11, 100, fail);
  const SimTime down = Duration::from_seconds(fail);
  Step w = task("w", 10);
  w.component.output.dist.a = 100.0 * kGiB;
  Scenario sc = scenario({w}, {p});
  sc.cluster.storage.write_bytes_per_second = static_cast<double>(kGiB);
  const Trace t = run(sc, seed);
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.attempts[0].outcome == Outcome::evicted);
  CHECK(t.attempts[0].finished == down);
  CHECK(t.attempts[0].output_write == down - s(10));
  CHECK(t.attempts[1].started == down + s(60));
  CHECK(t.attempts[1].output_write == s(100));  // alone on the channel again: the stale write is gone
  CHECK(t.attempts[1].finished == down + s(170));
  CHECK(t.attempts[1].outcome == Outcome::succeeded);
}

TEST_CASE("Simulator: an eviction cuts the pod's phases short: pull, read and a bind in flight", "[sim]") {
  // The record says what the pod did until its node failed at `down`, within a 100 s phase: a pull or a
  // read cut short took until `down` (the pull counted its whole planned 100 s, the read 0); a pod whose
  // 100 s bind was still in flight was never bound (it was "bound" after it ended, on a dead node).
  NodePool p = pool("p", 1, 4000);
  p.mtbf = Duration::from_s(10000);
  p.autoscaling.boot_time = Duration::from_s(60);
  double fail = 0;
  const std::uint64_t seed = seed_failing_between(1, 99, fail);
  const SimTime down = Duration::from_seconds(fail);
  SECTION("image pull") {
    Scenario sc = scenario({task("w", 10)}, {p});
    sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
    sc.overheads.default_image_size = 100 * kGiB;
    const Trace t = run(sc, seed);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[0].outcome == Outcome::evicted);
    CHECK(t.attempts[0].scheduled == s(0));
    CHECK(t.attempts[0].finished == down);
    CHECK(t.attempts[0].image_pull == down - s(0));
    CHECK(t.attempts[0].started == kNever);
    CHECK(t.attempts[1].image_pull == s(100));  // the replacement node pulls again, all of it
    CHECK(t.attempts[1].started == down + s(160));
  }
  SECTION("input read") {
    Step w = task("w", 10);
    w.component.input.dist.a = 100.0 * kGiB;
    Scenario sc = scenario({w}, {p});
    sc.cluster.storage.read_bytes_per_second = static_cast<double>(kGiB);
    const Trace t = run(sc, seed);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[0].finished == down);
    CHECK(t.attempts[0].input_read == down - s(0));
    CHECK(t.attempts[0].started == kNever);
    CHECK(t.attempts[1].input_read == s(100));
    CHECK(t.attempts[1].started == down + s(160));
  }
  SECTION("a bind in flight") {
    Scenario sc = scenario({task("w", 10)}, {p});
    sc.cluster.scheduler.bind_latency = Duration::from_s(100);
    const Trace t = run(sc, seed);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[0].outcome == Outcome::evicted);
    CHECK(t.attempts[0].finished == down);
    CHECK(t.attempts[0].scheduled == kNever);
    CHECK(t.attempts[0].node == -1);
    CHECK(t.attempts[0].started == kNever);
    CHECK(t.attempts[1].scheduled == down + s(160));  // the replacement up at down + 60, then the bind
    CHECK(t.attempts[1].node == 1);
  }
}

TEST_CASE("Simulator: percentageOfNodesToScore limits and rotates the nodes looked at", "[sim]") {
  // 1,000 empty identical nodes: kube-scheduler scores 42% of them (420) per pod, starting where the
  // previous search stopped. Even MostAllocated cannot pack the second pod next to the first: the
  // first pod's node (somewhere in 0..419) is not among the nodes the second search looks at.
  Scenario sc = scenario({loop(task("w", 10), 3)}, {pool("p", 1000, 4000)});
  sc.cluster.scheduler.policy = ScorePolicy::most_allocated;
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimStats stats;
  const Trace t = sim::simulate(sc, plan, sim::SimOptions{}, stats);
  CHECK(stats.nodes_scored == 1260);  // 3 pods x 420 nodes
  CHECK(stats.scheduling_attempts == 3);
  std::vector<std::int32_t> node;
  for (const AttemptRecord& a : t.attempts) node.push_back(a.node);
  CHECK(node[0] < 420);
  CHECK(node[1] >= 420);
  CHECK(node[1] < 840);
  CHECK((node[2] >= 840 || node[2] < 260));
  SECTION("an explicit percentage") {
    sc.cluster.scheduler.percentage_of_nodes_to_score = 100;
    const Trace all = sim::simulate(sc, plan, sim::SimOptions{}, stats);
    CHECK(stats.nodes_scored == 3000);
    // Scoring every node, MostAllocated packs all three pods on one node.
    CHECK(all.attempts[0].node == all.attempts[1].node);
    CHECK(all.attempts[1].node == all.attempts[2].node);
  }
}

TEST_CASE("Simulator: more than 64 node pools is an input error naming the pool", "[sim]") {
  std::vector<NodePool> pools;
  for (int i = 0; i < 65; ++i) {
    pools.push_back(pool("p" + std::to_string(i), 1, 1000));
    pools.back().where = SourceLocation{"big.yaml", 10 + i, 7};
  }
  const Scenario sc = scenario({task("w", 1)}, pools);
  const Plan plan = Plan::unroll(sc.pipeline);
  try {
    (void)sim::simulate(sc, plan, sim::SimOptions{});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "big.yaml:74:7: cluster.node_pools[64]: the simulator supports at most 64 node pools, got 65");
  }
}

TEST_CASE("Simulator: a stop flag ends the run early, what did not finish is cancelled", "[sim]") {
  const Scenario sc = scenario({loop(task("w", 10), 5000)}, {pool("p", 10, 4000)});
  const Plan plan = Plan::unroll(sc.pipeline);
  std::atomic<bool> stop{true};
  sim::SimOptions opt;
  opt.stop = &stop;
  sim::SimStats stats;
  const Trace t = sim::simulate(sc, plan, opt, stats);
  CHECK(stats.events == 4096);  // the flag is polled every 4096 events
  CHECK(count_outcome(t, Outcome::cancelled) > 0);
  CHECK(t.tasks_failed + count_outcome(t, Outcome::succeeded) == 5000);
  stop = false;
  const Trace full = sim::simulate(sc, plan, opt, stats);
  CHECK(full.tasks_failed == 0);
  CHECK(makespan(full) == s(1250));  // 5000 x 10 s on 40 slots
}

TEST_CASE("Simulator: an unschedulable pod is retried when a pod ends, even inside its backoff", "[sim]") {
  // One 1-CPU node, two 3 s pods. The second does not fit at 0 and backs off for 5 s; the first ends at
  // 3 s, which moves it to the backoff queue, and with nothing else queued it is tried at once
  // (SchedulerPopFromBackoffQ): 3-6 s, not 5-8 s.
  Scenario sc = scenario({loop(task("w", 3), 2)}, {pool("p", 1, 1000)});
  sc.cluster.scheduler.initial_backoff = Duration::from_s(5);
  sc.cluster.scheduler.max_backoff = Duration::from_s(40);
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimStats stats;
  const Trace t = sim::simulate(sc, plan, sim::SimOptions{}, stats);
  CHECK(makespan(t) == s(6));
  CHECK(t.attempts.at(1).submitted == s(0));
  CHECK(t.attempts.at(1).scheduled == s(3));
  CHECK(stats.scheduling_attempts == 3);  // placed, not placed, placed
}

TEST_CASE("Simulator: a pod that failed scheduling is queued again as of its failure", "[sim]") {
  // kube-scheduler refreshes a failed pod's queue timestamp (AddUnschedulableIfNotPresent). One 3-CPU
  // node, a decision a second, no backoff. hold (2 CPU) is bound at 1 s and runs to 3.5 s; pre (1 CPU)
  // at 2 s, to 2.5 s, when it creates b (2 CPU). a (2 CPU, created at 0) fails at 3 s. hold's end makes
  // room for one of a and b: b, created before a failed, is first at 4 s; a fails again at 5 s and is
  // bound when b ends (24 s), at the next decision. By creation alone a would have run at 4 s.
  Scenario sc = scenario({task("hold", 2.5, {}, 2000), task("pre", 0.5, {}, 1000), task("a", 10, {}, 2000),
                          task("b", 20, {1}, 2000)},
                         {pool("p", 1, 3000)});
  sc.cluster.scheduler.decisions_per_second = 1;
  sc.cluster.scheduler.initial_backoff = Duration::zero();
  sc.cluster.scheduler.max_backoff = Duration::zero();
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimStats stats;
  const Trace t = sim::simulate(sc, plan, sim::SimOptions{}, stats);
  std::map<std::string, std::pair<SimTime, SimTime>> ran;  // step: started, finished
  for (const AttemptRecord& a : t.attempts) ran[t.steps[a.step]] = {a.started, a.finished};
  CHECK(ran.at("hold") == std::pair{s(1), SimTime::from_ms(3500)});
  CHECK(ran.at("pre") == std::pair{s(2), SimTime::from_ms(2500)});
  CHECK(ran.at("b") == std::pair{s(4), s(24)});
  CHECK(ran.at("a") == std::pair{s(25), s(35)});
  CHECK(stats.scheduling_attempts == 6);  // hold, pre, a (no room), b, a (no room), a
}

TEST_CASE("Simulator: a pod backs off to the end of kube-scheduler's backoff window", "[sim]") {
  // One 4-CPU node, a decision each 100 ms. hold (4 CPU) is bound at 0.1 s and runs to 2.15 s; a (2 CPU)
  // finds no room at 0.2 s and backs off 2 s, to 2.2 s. hold's end creates twenty 0.1-CPU pods of b,
  // tried from 2.25 s, one a decision; a, queued before them, goes first once its backoff is over. v1.36's
  // backoff queue orders pods by 1 s windows and a pod waits for the window after the one its backoff
  // ends in: a is tried at the first decision from 3 s (3.05 s), not at 2.25 s.
  Scenario sc =
      scenario({task("hold", 2.05, {}, 4000), task("a", 10, {}, 2000), loop(task("b", 100, {0}, 100), 20)},
               {pool("p", 1, 4000)});
  sc.cluster.scheduler.decisions_per_second = 10;
  sc.cluster.scheduler.initial_backoff = Duration::from_s(2);
  const auto a_started = [&] {
    const Trace t = run(sc);
    for (const AttemptRecord& r : t.attempts)
      if (t.steps[r.step] == "a") return r.started;
    return kNever;
  };
  SECTION("the default window, 1 s") {
    CHECK(a_started() == SimTime::from_ms(3050));
  }
  SECTION("no window: the backoff's own end") {
    sc.cluster.scheduler.backoff_window = Duration::zero();
    CHECK(a_started() == SimTime::from_ms(2250));
  }
}

TEST_CASE("Simulator: image pulls on a node are serialized unless told otherwise, pulls are shared",
          "[sim]") {
  // Three pods on one node at 0: a and b use image A, c uses image B; each pull takes 2 s.
  Step a = loop(task("a", 10), 2);
  a.component.image = "A";
  Step c = task("c", 10);
  c.component.image = "B";
  Scenario sc = scenario({a, c}, {pool("p", 1, 8000)});
  sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
  sc.overheads.default_image_size = 2 * kGiB;
  auto pulls = [](const Trace& t) {
    std::vector<SimTime> v;
    for (const AttemptRecord& r : t.attempts) v.push_back(r.image_pull);
    return v;
  };
  SECTION("serialized (kubelet's default): B waits for A's pull") {
    const Trace t = run(sc);
    CHECK(pulls(t) == std::vector<SimTime>{s(2), s(2), s(4)});  // b waits for the pull a started
    CHECK(makespan(t) == s(14));
  }
  SECTION("parallel") {
    sc.overheads.serialize_image_pulls = false;
    const Trace t = run(sc);
    CHECK(pulls(t) == std::vector<SimTime>{s(2), s(2), s(2)});
    CHECK(makespan(t) == s(12));
  }
}

TEST_CASE("Simulator: failed tasks free their parallelism slot, their dependents never run", "[sim]") {
  // Four 10 s tasks, two at a time, every attempt fails and there are no retries: two waves of failures.
  Step w = loop(task("w", 10), 4, 2);
  w.component.failure.p = 1;
  const Scenario sc = scenario({w, task("after", 5, {0})}, {pool("p", 2, 8000)});
  const Trace t = run(sc);
  REQUIRE(t.attempts.size() == 4);
  CHECK(t.tasks_failed == 4);
  CHECK(makespan(t) == s(20));
  for (const AttemptRecord& a : t.attempts) {
    CHECK(a.outcome == Outcome::failed);
    CHECK(a.started == s(a.item < 2 ? 0 : 10));
  }
}

TEST_CASE("Simulator: times past the range of times saturate: the run stops at its horizon and says so",
          "[sim]") {
  const SimTime horizon = sim::SimOptions{}.horizon;
  const auto load = [](const std::string& overheads, const std::string& step) {
    return load_scenario_text("name: far\noverheads: " + overheads + "\npipeline:\n  steps:\n    - " + step +
                                  "\ncluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}]}\n",
                              "far.yaml");
  };
  // No backoff is none after any number of retries: 0 x 3^999 was NaN, a negative delay (an assertion).
  const Trace retried = run(load("none",
                                 "{name: a, duration: {base: 1s}, failure: {p: 1}, "
                                 "retries: {max: 1000, factor: 3}}"));
  CHECK(retried.attempts.size() == 1001);
  CHECK(makespan(retried) == s(1001));
  CHECK(retried.tasks_failed == 1);
  // A batch delay of 2,000,000 hours times the slow-start batch wrapped past 2^63 ns into the past (an
  // assertion); an API rate of 1e-10 calls a second made an interval past 2^63 ns, which the cast made
  // no limit at all (14.31 s). Each first pod is created at once, the others at the end of time.
  for (const std::string overheads :
       {"{orchestrator: argo, control_plane: {create_batch: 2000000h}}",
        "{orchestrator: argo, control_plane: {api_qps: 1e-10, api_burst: 1}}"}) {
    const Trace t = run(load(overheads, "{name: a, parallel_for: {count: 4}, duration: {base: 1s}}"));
    CHECK(t.last_finished == horizon);  // the run's makespan; its one pod ended long before
    CHECK(t.tasks_unfinished == 3);
  }
  // A retry due past the horizon, with no pod alive: the run stopped there (it said 1 s, the failed
  // attempt's end), and its trace.json says so (stopped_at).
  const Scenario far = load("none",
                            "{name: a, duration: {base: 1s}, failure: {p: 1}, "
                            "retries: {max: 1, backoff: 100000h}}");
  const Trace t = run(far);
  CHECK(makespan(t) == s(1));
  CHECK(t.last_finished == horizon);
  CHECK(compute_metrics(t, Plan::unroll(far.pipeline)).makespan_s == horizon.seconds());
  std::stringstream json;
  write_trace_json(json, t);
  CHECK(compute_metrics(read_trace_json(json, "trace.json"), Plan::unroll(far.pipeline)).makespan_s ==
        horizon.seconds());
}

TEST_CASE("Simulator backend: RunOptions::progress is told the share of tasks resolved, up to all", "[sim]") {
  const Scenario sc = scenario({loop(task("w", 10), 1000), task("sum", 1, {0})}, {pool("p", 4, 8000)});
  const Plan plan = Plan::unroll(sc.pipeline);
  std::vector<double> seen;
  RunOptions o;
  o.progress = [&seen](double done) { seen.push_back(done); };
  const Trace t = sim::make_backend()->run(sc, plan, o);
  CHECK(t.tasks_failed == 0);
  // About every 1% of the plan's nodes (1,001 tasks and a join: every tenth), never going back, ending at
  // the whole plan.
  REQUIRE(seen.size() >= 99);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  CHECK(seen.front() > 0);
  CHECK(seen.back() == 1.0);
}
