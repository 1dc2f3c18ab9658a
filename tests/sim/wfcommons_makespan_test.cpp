// The WfCommons instances in tests/data/wfcommons/ (real recorded runs, see ORIGIN.md there) simulated as
// imported: `list` scheduling with no overheads gives the makespans WRENCH 2.3 and DSLab compute on the
// same platform (one host per machine with its cores, one core per task, each task its recorded runtime,
// no data transfer; figures from ../shared/data/README.md, "Peer figures").
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

using namespace shardflow;

namespace {
double makespan_of(const std::string& name, const std::vector<std::string>& sets = {}) {
  LoadOptions o;
  o.sets = sets;
  const Scenario s =
      load_scenario_file(std::string(SHARDFLOW_SOURCE_DIR) + "/tests/data/wfcommons/" + name + ".json", o);
  const Plan plan = Plan::unroll(s.pipeline);
  return makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed)));
}
}  // namespace

TEST_CASE("WfCommons: zero-overhead list scheduling equals WRENCH's makespan on all 8 instances",
          "[sim][wfcommons]") {
  const std::pair<const char*, double> wrench[] = {
      {"helloworld-forkjoin-10-chameleon", 307.360},
      {"srasearch-chameleon-10a-001", 1005.858},
      {"epigenomics-chameleon-hep-1seq-100k-001", 104.822},
      {"blast-chameleon-small-001", 10.413},
      {"1000genome-chameleon-2ch-100k-001", 204.686},
      {"montage-chameleon-2mass-005d-001", 21.385},
      {"seismology-chameleon-100p-001", 2.840},
      {"seismology-chameleon-1000p-001", 5.878},
  };
  for (const auto& [name, expected] : wrench) {
    INFO(name);
    CHECK(makespan_of(name) == Approx(expected).margin(1e-3));
  }
}

TEST_CASE("WfCommons: helloworld by hand: list order on 64, 2 and 1 cores", "[sim][wfcommons]") {
  // helloworld-forkjoin-10: task 01 (100.187 s) -> tasks 02..09 -> task 10 (99.82 s), runtimes 02 107.353,
  // 03 102.889, 04 103.57, 05 102.475, 06 103.207, 07 102.513, 08 103.576, 09 103.114.
  // 64 cores: the 8 at once; the longest is 02: 100.187 + 107.353 + 99.82 = 307.36 s.
  CHECK(makespan_of("helloworld-forkjoin-10-chameleon") == Approx(307.36).margin(1e-9));
  // 2 cores, ready tasks in id order: 02 and 03 start at 100.187; 03 ends 203.076 -> 04 (ends 306.646);
  // 02 ends 207.540 -> 05 (ends 310.015); 04 -> 06 (ends 409.853); 05 -> 07 (ends 412.528); 06 -> 08 (ends
  // 513.429); 07 -> 09 (ends 515.642); then 10: 515.642 + 99.82 = 615.462 s.
  CHECK(makespan_of("helloworld-forkjoin-10-chameleon", {"cluster.node_pools[ubuntu].cpu=2"}) ==
        Approx(615.462).margin(1e-9));
  // 1 core: one after another, the sum of the runtimes: 1028.704 s.
  CHECK(makespan_of("helloworld-forkjoin-10-chameleon", {"cluster.node_pools[ubuntu].cpu=1"}) ==
        Approx(1028.704).margin(1e-9));
}

TEST_CASE("Scheduler policy list: id order, most idle cores, no backfilling", "[sim][wfcommons]") {
  const auto makespan = [](const std::string& steps, const std::string& pools) {
    const Scenario s =
        load_scenario_text("name: t\npipeline:\n  steps:\n" + steps + "cluster:\n  node_pools:\n" + pools +
                               "  scheduler: {policy: list, initial_backoff: 0s, max_backoff: 0s}\n"
                               "overheads: none\n",
                           "t.yaml");
    const Plan plan = Plan::unroll(s.pipeline);
    return makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed)));
  };
  const std::string two_cores = "    - {name: p, cpu: 2, memory: 1Gi, count: 1}\n";
  // a (1 core, 10 s) starts at 0; b (2 cores) fits nowhere until a ends, and c (1 core), after b in id
  // order, waits behind it (no backfilling): b 10-11, c 11-12 -> 12 s (with backfilling it would be 11 s).
  CHECK(makespan("    - {name: a, resources: {cpu: 1}, duration: {base: 10s}}\n"
                 "    - {name: b, resources: {cpu: 2}, duration: {base: 1s}}\n"
                 "    - {name: c, resources: {cpu: 1}, duration: {base: 1s}}\n",
                 two_cores) == Approx(12.0).margin(1e-9));
  // The order is the names' string order, not the file's: z (2 cores, 10 s) comes after b and c, which
  // run 0-5 together; z runs 5-15 -> 15 s (file order would give z 0-10, then b and c 10-15: also 15 s, so
  // the next case tells them apart).
  CHECK(makespan("    - {name: z, resources: {cpu: 2}, duration: {base: 10s}}\n"
                 "    - {name: b, resources: {cpu: 1}, duration: {base: 5s}}\n"
                 "    - {name: c, resources: {cpu: 1}, duration: {base: 1s}}\n",
                 two_cores) == Approx(15.0).margin(1e-9));
  // b (5 s) and c (1 s) first on the 2 cores; at 1 s c ends, but z needs both: it waits for b (5 s) and
  // runs 5-15 -> 15 s. In file order z would run 0-10 and b, c 10-15: also 15 s. With 3 cores: b and c at
  // 0 (b on one, c on another); z (2 cores) waits until c ends at 1 s -> 1-11 -> 11 s; file order: z 0-10
  // with b at 0 on the third core, c at 5 -> 10 s.
  const std::string three_cores = "    - {name: p, cpu: 3, memory: 1Gi, count: 1}\n";
  CHECK(makespan("    - {name: z, resources: {cpu: 2}, duration: {base: 10s}}\n"
                 "    - {name: b, resources: {cpu: 1}, duration: {base: 5s}}\n"
                 "    - {name: c, resources: {cpu: 1}, duration: {base: 1s}}\n",
                 three_cores) == Approx(11.0).margin(1e-9));
  // Each task to the node with the most idle cores, not the first with one free: nodes of 1 core
  // (listed first) and 2 cores; a (1 core, 10 s) goes to the 2-core node (2 idle against 1), so b (2 cores,
  // 1 s) fits nowhere until a ends: 10-11 -> 11 s (first fit would put a on the 1-core node: 10 s).
  CHECK(makespan("    - {name: a, resources: {cpu: 1}, duration: {base: 10s}}\n"
                 "    - {name: b, resources: {cpu: 2}, duration: {base: 1s}}\n",
                 "    - {name: small, cpu: 1, memory: 1Gi, count: 1}\n"
                 "    - {name: big, cpu: 2, memory: 1Gi, count: 1}\n") == Approx(11.0).margin(1e-9));
}

TEST_CASE("Scheduler policy list: the children of the task that freed a core join the list first",
          "[sim][wfcommons]") {
  // One node of 2 cores; a1 (1 s), z1 (5 s), z2 (5 s) ready at 0, b (1 s) after a1. At 0: a1 and z1 run,
  // z2 waits. At 1 a1 ends and b is ready: the list is b, z2 (string order), so b runs 1-2 and z2 2-7:
  // 7 s. (Deciding before b joined gave z2 the core: 6 s.)
  const Scenario s = load_scenario_text(
      "name: t\npipeline:\n  steps:\n"
      "    - {name: a1, duration: {base: 1s}}\n"
      "    - {name: z1, duration: {base: 5s}}\n"
      "    - {name: z2, duration: {base: 5s}}\n"
      "    - {name: b, after: [a1], duration: {base: 1s}}\n"
      "cluster:\n  node_pools:\n    - {name: p, cpu: 2, memory: 1Gi, count: 1}\n"
      "  scheduler: {policy: list}\noverheads: none\n",
      "t.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed))) == Approx(7.0).margin(1e-9));
}

namespace {
// List scheduling written out plainly, as the docs define it: at each instant, every task that ended then
// frees its cores and readies its children; then the ready tasks in name order, each to the node with
// the most idle cores (ties: the first), until the first that fits nowhere. Tasks of no run time end at
// the same instant, after that pass.
double list_reference(const std::vector<std::string>& names, const std::vector<std::int64_t>& run_ms,
                      const std::vector<int>& cores, const std::vector<std::vector<int>>& children,
                      std::vector<int> idle) {
  const std::size_t n = names.size();
  std::vector<int> waiting(n, 0);
  for (const auto& c : children)
    for (int k : c) ++waiting[static_cast<std::size_t>(k)];
  std::vector<int> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(static_cast<int>(i));
  std::multimap<std::int64_t, std::pair<int, int>> running;  // end -> (task, node)
  std::int64_t now = 0, end = 0;
  const auto pass = [&] {
    std::sort(ready.begin(), ready.end(), [&](int a, int b) { return names[a] < names[b]; });
    std::size_t placed = 0;
    for (; placed < ready.size(); ++placed) {
      const int t = ready[placed];
      const auto best = static_cast<std::size_t>(std::max_element(idle.begin(), idle.end()) - idle.begin());
      if (idle[best] < cores[static_cast<std::size_t>(t)]) break;
      idle[best] -= cores[static_cast<std::size_t>(t)];
      running.emplace(now + run_ms[static_cast<std::size_t>(t)], std::pair{t, static_cast<int>(best)});
    }
    ready.erase(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(placed));
  };
  pass();
  while (!running.empty()) {
    now = running.begin()->first;
    end = std::max(end, now);
    while (!running.empty() && running.begin()->first == now) {
      const auto [t, node] = running.begin()->second;
      running.erase(running.begin());
      idle[static_cast<std::size_t>(node)] += cores[static_cast<std::size_t>(t)];
      for (int k : children[static_cast<std::size_t>(t)])
        if (--waiting[static_cast<std::size_t>(k)] == 0) ready.push_back(k);
    }
    pass();
  }
  return static_cast<double>(end) / 1000;
}
}  // namespace

TEST_CASE("Scheduler policy list: random DAGs against list scheduling written out plainly",
          "[sim][wfcommons]") {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  const auto next = [&x](std::uint64_t m) {  // splitmix64, the same on every machine
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) % m;
  };
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 6 + next(14);
    std::vector<std::string> names(n);
    std::vector<std::int64_t> run_ms(n);
    std::vector<int> cores(n);
    std::vector<std::vector<int>> children(n);
    std::string steps;
    for (std::size_t i = 0; i < n; ++i) {
      // Names in a random order against the file's; runs of 0 to 4 s (zero often), 1 to 3 cores.
      names[i] = std::string(1, static_cast<char>('a' + next(26))) + std::to_string(i);
      run_ms[i] = static_cast<std::int64_t>(next(3) == 0 ? 0 : 250 * next(17));
      cores[i] = 1 + static_cast<int>(next(3));
      std::string after;
      for (std::size_t p = 0; p < i; ++p)
        if (next(4) == 0) {
          children[p].push_back(static_cast<int>(i));
          after += (after.empty() ? "" : ", ") + names[p];
        }
      steps += "    - {name: " + names[i] + ", after: [" + after +
               "], resources: {cpu: " + std::to_string(cores[i]) +
               "}, duration: {base: " + std::to_string(run_ms[i]) + "ms}}\n";
    }
    const Scenario s = load_scenario_text("name: t\npipeline:\n  steps:\n" + steps +
                                              "cluster:\n  node_pools:\n"
                                              "    - {name: p, cpu: 3, memory: 1Gi, count: 1}\n"
                                              "    - {name: q, cpu: 4, memory: 1Gi, count: 1}\n"
                                              "  scheduler: {policy: list}\noverheads: none\n",
                                          "t.yaml");
    const Plan plan = Plan::unroll(s.pipeline);
    INFO("round " << round << "\n" << steps);
    CHECK(makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed))) ==
          Approx(list_reference(names, run_ms, cores, children, {3, 4})).margin(1e-9));
  }
}

TEST_CASE("WfCommons: the list takes the tasks in their ids' order, not their step names'",
          "[sim][wfcommons]") {
  // One core; "x.9" (2 s) and "x0" (1 s) ready at 0. By id "x.9" < "x0" ('.' before '0'), so x.9 runs 0-2
  // and x0 2-3; by step name ("x_9", '_' after '0') it would be the other way round.
  const Scenario s = load_scenario_text(R"({"name": "dots", "schemaVersion": "1.4", "workflow": {
    "makespanInSeconds": 3, "executedAt": "03-23-21T06:04:36Z",
    "machines": [{"nodeName": "n1", "cpu": {"count": 1}}],
    "tasks": [{"name": "x0", "type": "compute", "parents": [], "runtimeInSeconds": 1},
              {"name": "x.9", "type": "compute", "parents": [], "runtimeInSeconds": 2}]}})",
                                        "dots.json");
  CHECK(s.cluster.scheduler.list_order == std::vector<std::string>{"x_9", "x0"});
  const Plan plan = Plan::unroll(s.pipeline);
  const Trace t = sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed));
  REQUIRE(t.attempts.size() == 2);
  for (const AttemptRecord& a : t.attempts)
    CHECK(a.started.seconds() == Approx(plan.steps()[a.step].path == "x_9" ? 0.0 : 2.0).margin(1e-9));
}
