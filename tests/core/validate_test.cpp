// The loader's checks on the model (core/validate.cpp), called on pipelines and clusters built in code, as
// an importer calls them: each returns the problem (which step, which `after` entry) with the exact
// message a scenario file gets (tests/core/scenario_loader_test.cpp has the same messages at file:line:col).
#include "core/validate.hpp"  // core-private

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

#include "core/pipeline_builders.hpp"

using namespace shardflow;
using namespace shardflow::detail;
using shardflow::testing::component;

namespace {

Step waits_for(std::string name, std::vector<std::string> after) {
  Step s = component(std::move(name), 1);
  s.after = std::move(after);
  return s;
}

StepNames names_of(const std::vector<Step>& steps) {
  StepNames out;
  for (std::size_t i = 0; i < steps.size(); ++i) out.emplace(steps[i].name, i);
  return out;
}

Cluster one_pool(MilliCpu cpu, ByteCount memory) {
  Cluster c;
  NodePool p;
  p.name = "p";
  p.cpu = cpu;
  p.memory = memory;
  p.count = 1;
  c.node_pools.push_back(p);
  return c;
}

}  // namespace

TEST_CASE("Validate: after names resolve into sibling indices", "[core]") {
  std::vector<Step> steps{waits_for("a", {}), waits_for("b", {"a"}), waits_for("c", {"b", "a"})};
  CHECK_FALSE(resolve_dependencies(steps, names_of(steps)).has_value());
  CHECK(steps[0].deps.empty());
  CHECK(steps[1].deps == std::vector<StepIndex>{0});
  CHECK(steps[2].deps == std::vector<StepIndex>{1, 0});
}

TEST_CASE("Validate: dependency problems name the step, the after entry and the reason", "[core]") {
  SECTION("unknown step") {
    std::vector<Step> steps{waits_for("a", {}), waits_for("b", {}), waits_for("c", {"a", "nope"})};
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK(p->step == 2);
    CHECK(p->entry == 1);
    CHECK(p->message == "unknown step \"nope\" (steps here: a, b)");
  }
  SECTION("unknown step among many siblings lists ten") {
    std::vector<Step> steps;
    for (int i = 0; i < 13; ++i) steps.push_back(waits_for("s" + std::to_string(i), {}));
    steps.push_back(waits_for("last", {"x"}));
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK(p->message ==
          "unknown step \"x\" (steps here: s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, and 3 more)");
  }
  SECTION("a step waiting for itself") {
    std::vector<Step> steps{waits_for("a", {"a"})};
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK((p->step == 0 && p->entry == 0));
    CHECK(p->message == "step \"a\" cannot wait for itself");
  }
  SECTION("a cycle, named in run order at the entry that closes it") {
    std::vector<Step> steps{waits_for("a", {"c"}), waits_for("b", {"a"}), waits_for("c", {"b"})};
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK((p->step == 1 && p->entry == 0));
    CHECK(p->message == "dependency cycle: a -> b -> c -> a (each step runs before the next)");
    // find_cycle alone, on the resolved model, finds the same one.
    const auto again = find_cycle(steps);
    REQUIRE(again.has_value());
    CHECK((again->step == 1 && again->entry == 0 && again->message == p->message));
  }
  SECTION("a cycle is named the shortest way through the entry that closes it") {
    // The depth-first search goes a, b, c, d and finds d waiting for a; a also waits for d directly.
    std::vector<Step> steps{waits_for("a", {"b", "d"}), waits_for("b", {"c"}), waits_for("c", {"d"}),
                            waits_for("d", {"a"})};
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK((p->step == 3 && p->entry == 0));
    CHECK(p->message == "dependency cycle: a -> d -> a (each step runs before the next)");
  }
  SECTION("a long cycle names its first ten steps and how many more") {
    std::vector<Step> steps;
    for (int i = 0; i < 25; ++i)
      steps.push_back(waits_for("s" + std::to_string(i), {"s" + std::to_string((i + 24) % 25)}));
    const auto p = resolve_dependencies(steps, names_of(steps));
    REQUIRE(p.has_value());
    CHECK((p->step == 1 && p->entry == 0));
    CHECK(p->message ==
          "dependency cycle: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> s8 -> s9 -> ... (and 15 more) "
          "-> s0 "
          "(each step runs before the next)");
    steps.resize(10);  // exactly ten: every one named
    steps[0].after = {"s9"};
    for (Step& s : steps) s.deps.clear();
    const auto ten = resolve_dependencies(steps, names_of(steps));
    REQUIRE(ten.has_value());
    CHECK(ten->message ==
          "dependency cycle: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> s8 -> s9 -> s0 (each step runs "
          "before the next)");
  }
}

TEST_CASE("Validate: fan_in merges exactly one component loop", "[core]") {
  std::vector<Step> steps{testing::with_loop(component("map", 1), 4), component("other", 1),
                          component("reduce", 1, {0, 1})};
  steps[2].fan_in_arity = 2;
  CHECK(resolve_fan_in(steps).empty());
  CHECK(steps[2].fan_in_of == 0);

  steps[1] = testing::with_loop(component("other", 1), 2);
  const auto two = resolve_fan_in(steps);
  REQUIRE(two.size() == 1);
  CHECK(two[0].step == 2);
  CHECK(two[0].message == "waits for two loops (map and other); fan_in merges one");

  // Every step's problem, not the first alone.
  steps.push_back(component("single", 1));
  steps.push_back(component("merge", 1, {3}));
  steps[4].fan_in_arity = 2;
  const auto both = resolve_fan_in(steps);
  REQUIRE(both.size() == 2);
  CHECK(both[0].step == 2);
  CHECK(both[1].step == 4);
  CHECK(both[1].message == "needs an `after` step with a parallel_for (the loop whose outputs it merges)");

  steps[2].deps = {};
  const auto none = resolve_fan_in(steps);
  REQUIRE(none.size() == 2);
  CHECK(none[0].message == "needs an `after` step with a parallel_for (the loop whose outputs it merges)");
}

TEST_CASE("Validate: a task that fits no node, and the driver pod", "[core]") {
  const Cluster cluster = one_pool(4000, 8 * kGiB);
  Step big = component("big", 1);
  big.component.resources = Resources{8000, 4 * kGiB, 0};
  CHECK(fit_problem(cluster, big) ==
        "step \"big\" asks for cpu 8, memory 4Gi, gpu 0, more than any node it may use can hold (largest: "
        "pool \"p\" with cpu 4, memory 8Gi, gpu 0)");
  big.component.resources.cpu = 4000;
  CHECK_FALSE(fit_problem(cluster, big).has_value());
  big.component.node_selector = {{"accel", "a100"}};
  CHECK(fit_problem(cluster, big) ==
        "step \"big\" fits no node pool: its node_selector and tolerations match none of the pools with "
        "nodes (p: no label accel=a100)");
  // Each pool says why: a label of another value, a NoSchedule taint the step does not tolerate (a
  // PreferNoSchedule taint refuses nothing).
  Cluster two = one_pool(4000, 8 * kGiB);
  two.node_pools[0].labels["accel"] = "h100";
  two.node_pools.push_back(one_pool(4000, 8 * kGiB).node_pools.front());
  two.node_pools[1].name = "q";
  two.node_pools[1].labels["accel"] = "a100";
  two.node_pools[1].taints = {Taint{"gpu", "yes", "NoSchedule"}, Taint{"spot", "", "NoExecute"}};
  CHECK(fit_problem(two, big) ==
        "step \"big\" fits no node pool: its node_selector and tolerations match none of the pools with "
        "nodes (p: label accel=h100, not a100, q: taint gpu=yes:NoSchedule not tolerated)");
  big.component.tolerations = {Toleration{"gpu", "Equal", "yes", "NoSchedule"}};
  CHECK(fit_problem(two, big) ==
        "step \"big\" fits no node pool: its node_selector and tolerations match none of the pools with "
        "nodes (p: label accel=h100, not a100, q: taint spot:NoExecute not tolerated)");
  big.component.tolerations.clear();

  Overheads o;
  o.pods_per_task = 2;
  o.driver_memory = 16 * kGiB;
  CHECK(driver_fit_problem(cluster, o) ==
        "the driver pod asks for cpu 100m, memory 16Gi, more than any node it may use can hold (largest: "
        "pool \"p\" with cpu 4, memory 8Gi)");
  o.driver_memory = 128 * kMiB;
  CHECK_FALSE(driver_fit_problem(cluster, o).has_value());
}

TEST_CASE("Validate: messages stay short whatever the number of pools and the length of names", "[core]") {
  // A cluster built in code is not held to the loader's 64 pools: 1,000 pools, none selected.
  Cluster cluster;
  for (int i = 0; i < 1000; ++i) {
    cluster.node_pools.push_back(one_pool(4000, 8 * kGiB).node_pools.front());
    cluster.node_pools.back().name = "p" + std::to_string(i);
  }
  Step a = component("a", 1);
  a.component.node_selector = {{"accel", "a100"}};
  CHECK(fit_problem(cluster, a) ==
        "step \"a\" fits no node pool: its node_selector and tolerations match none of the pools with nodes "
        "(p0: no label accel=a100, p1: no label accel=a100, p2: no label accel=a100, p3: no label "
        "accel=a100, p4: no label accel=a100, p5: no label accel=a100, p6: no label accel=a100, p7: no "
        "label accel=a100, p8: no label accel=a100, p9: no label accel=a100, and 990 more)");
  // A pool name of 10,000 characters: its first 100, and how many more.
  cluster.node_pools.resize(1);
  cluster.node_pools[0].name = std::string(10'000, 'n');
  CHECK(
      fit_problem(cluster, a) ==
      "step \"a\" fits no node pool: its node_selector and tolerations match none of the pools with nodes (" +
          std::string(100, 'n') + "... (9,900 more characters): no label accel=a100)");
  // Step names of 10,000 characters: in a cycle, in an unknown dependency's listing, in a fan-in.
  const std::string x(10'000, 'x'), y(10'000, 'y');
  const std::string x100 = std::string(100, 'x') + "... (9,900 more characters)";
  const std::string y100 = std::string(100, 'y') + "... (9,900 more characters)";
  std::vector<Step> cycle{waits_for(x, {y}), waits_for(y, {x})};
  const auto c = resolve_dependencies(cycle, names_of(cycle));
  REQUIRE(c.has_value());
  CHECK(c->message ==
        "dependency cycle: " + x100 + " -> " + y100 + " -> " + x100 + " (each step runs before the next)");
  std::vector<Step> unknown{waits_for(x, {}), waits_for("b", {"nope"})};
  const auto u = resolve_dependencies(unknown, names_of(unknown));
  REQUIRE(u.has_value());
  CHECK(u->message == "unknown step \"nope\" (steps here: " + x100 + ")");
}

TEST_CASE("Validate: the task limit is reported at the widest loop", "[core]") {
  Pipeline p = testing::pipeline({testing::with_loop(component("wide", 1), 1000)});
  p.steps[0].loop_where = SourceLocation{"x.yaml", 3, 9};
  p.steps[0].loop_field = "pipeline.steps[0].parallel_for.count";
  CHECK_NOTHROW(check_task_limit(p, 1000, "x.yaml"));
  try {
    check_task_limit(p, 999, "x.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(
        std::string(e.what()) ==
        "x.yaml:3:9: pipeline.steps[0].parallel_for.count: the pipeline unrolls to 1,000 tasks (about 1 MiB "
        "of memory to simulate); the limit is 999 (--max-tasks raises it; `explain` counts without "
        "unrolling)");
  }
}

TEST_CASE("Validate: a pipeline larger than the machine's memory is refused at its widest loop", "[core]") {
  Pipeline p = testing::pipeline({testing::with_loop(component("wide", 1), 10'000'000)});
  p.steps[0].loop_where = SourceLocation{"x.yaml", 3, 9};
  p.steps[0].loop_field = "pipeline.steps[0].parallel_for.count";
  // 205 bytes a task: 2,050,000,000 bytes.
  CHECK_NOTHROW(check_task_memory(p, 2'050'000'000, "x.yaml"));
  CHECK_NOTHROW(check_task_memory(p, 0, "x.yaml"));  // memory not known: nothing to say
  try {
    check_task_memory(p, 2'049'999'999, "x.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(
        std::string(e.what()) ==
        "x.yaml:3:9: pipeline.steps[0].parallel_for.count: the pipeline unrolls to 10,000,000 tasks (about 2 "
        "GiB of memory to simulate); this machine has 2 GiB: shrink this loop (`explain` counts without "
        "unrolling)");
  }
}

TEST_CASE("Validate: every dependency problem of many steps, each once, in reading order then cycles",
          "[core]") {
  // 300 steps, each after a typo of the one before: 299 unknown names, the first kSuggested with a "did
  // you mean" (a pass over the names each), the others with the listing; then 150 two-step cycles, the
  // first kShortest by the breadth-first search, the others from the depth-first search's stack (the same
  // two steps here). A report removes the entry it is given, as the scenario reader does.
  std::vector<Step> steps{waits_for("s0", {})};  // s_i after z_(i-1), a typo of s_(i-1)
  for (int i = 1; i < 300; ++i)
    steps.push_back(
        waits_for("s" + std::to_string(i), {"z" + std::to_string(i - 1), "t" + std::to_string(i ^ 1)}));
  for (int i = 0; i < 300; i += 2)
    steps.push_back(waits_for("t" + std::to_string(i), {"t" + std::to_string(i + 1)}));
  for (int i = 1; i < 300; i += 2)
    steps.push_back(waits_for("t" + std::to_string(i), {"t" + std::to_string(i - 1)}));
  std::vector<StepProblem> seen;
  resolve_all_dependencies(steps, names_of(steps), {}, [&](StepProblem& p) {
    seen.push_back(p);
    steps[p.step].after.erase(steps[p.step].after.begin() + static_cast<std::ptrdiff_t>(p.entry));
  });
  REQUIRE(seen.size() == 299 + 150);
  CHECK(seen[0].step == 1);
  CHECK(seen[0].entry == 0);
  CHECK(seen[0].message ==
        "unknown step \"z0\" (steps here: s0, s2, s3, s4, s5, s6, s7, s8, s9, s10, and 589 more)");
  CHECK(seen[kSuggested - 1].message == "unknown step \"z99\" (did you mean \"s99\"?)");
  CHECK(seen[kSuggested].message ==
        "unknown step \"z100\" (steps here: s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, and 589 more)");
  CHECK(seen[298].step == 299);
  // Cycles t0 <-> t1 ... in the search's order, each broken at the entry that closed it.
  CHECK(seen[299].message == "dependency cycle: t0 -> t1 -> t0 (each step runs before the next)");
  CHECK(seen[299 + kShortest].message ==
        "dependency cycle: t201 -> t200 -> t201 (each step runs before the next)");
  CHECK(seen.back().message == "dependency cycle: t299 -> t298 -> t299 (each step runs before the next)");
  // What is left resolves: s_i waits for t_(i^1); the t pairs each keep one edge.
  CHECK(steps[1].deps == std::vector<StepIndex>{300});  // t0, the first t step
  CHECK_FALSE(find_cycle(steps).has_value());
  // The same problems one at a time, as before there was this pass: the same first problem.
  std::vector<Step> again{waits_for("a", {"b"}), waits_for("b", {"c"}), waits_for("c", {"a"})};
  const auto first = resolve_dependencies(again, names_of(again));
  REQUIRE(first.has_value());
  std::vector<StepProblem> all;
  std::vector<Step> copy{waits_for("a", {"b"}), waits_for("b", {"c"}), waits_for("c", {"a"})};
  resolve_all_dependencies(copy, names_of(copy), {}, [&](StepProblem& p) {
    all.push_back(p);
    // Broken at another of its edges (as a --set's): the search starts again, and finds no more.
    p.step = p.cycle.back().first;
    p.entry = p.cycle.back().second;
    copy[p.step].after.erase(copy[p.step].after.begin() + static_cast<std::ptrdiff_t>(p.entry));
  });
  REQUIRE(all.size() == 1);
  CHECK(all[0].message == first->message);
  CHECK(all[0].step == first->step);
  CHECK_FALSE(find_cycle(copy).has_value());
}
