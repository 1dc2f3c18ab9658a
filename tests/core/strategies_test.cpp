// Strategies in the scenario format and the Plan: tree fan-in (`fan_in: {arity: k}`) and re-sharding
// (`input: {total: SIZE}`). The simulator's exact makespans for them are in tests/sim/strategies_test.cpp.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>

using namespace shardflow;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    (void)load_scenario_text(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

// A valid scenario around one list of steps; the first step is on line 7.
std::string with_steps(const std::string& steps) {
  return "name: t\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
         "pipeline:\n"
         "  steps:\n" +
         steps;
}

// `shards` shards, then an aggregate with `fan_in` (empty: none) and a step after it.
std::string tree(std::uint32_t shards, const std::string& fan_in) {
  return with_steps("    - {name: shard, parallel_for: {count: " + std::to_string(shards) +
                    "}, input: {size: 1GiB}}\n"
                    "    - {name: agg, after: [shard], input: {size: 10GiB}, duration: {base: 64s}" +
                    (fan_in.empty() ? "" : ", fan_in: " + fan_in) +
                    "}\n"
                    "    - {name: train, after: [agg]}\n");
}

std::vector<TaskId> preds(const Plan& p, TaskId t) {
  return {p.preds(t).begin(), p.preds(t).end()};
}

}  // namespace

TEST_CASE("Strategies: a 64-shard tree fan-in of arity 4 unrolls into 16 + 4 + 1 aggregation tasks",
          "[core]") {
  const Scenario s = load_scenario_text(tree(64, "{arity: 4}"), "t.yaml");
  REQUIRE(s.pipeline.steps[1].fan_in_arity == 4);
  CHECK(s.pipeline.steps[1].fan_in_of == 0);
  CHECK(s.pipeline.steps[1].fan_in_where.line == 8);
  const Plan p = Plan::unroll(s.pipeline);
  // shard 0..63, level1 64..79 (16 = 64 / 4), level2 80..83 (4 = 16 / 4), agg 84 (reads 4), train 85.
  REQUIRE(p.size() == 86);
  CHECK(p.task_count() == 86);  // no join: every fan-in reads at most 4 tasks
  REQUIRE(p.steps().size() == 5);
  // The levels come after the declared steps, so shard, agg and train keep their step indices 0, 1, 2.
  CHECK(p.steps()[0].path == "shard");
  CHECK(p.steps()[1].path == "agg");
  CHECK(p.steps()[2].path == "train");
  CHECK(p.steps()[3].path == "agg.level1");
  CHECK(p.steps()[3].loop_count == 16);
  CHECK(p.steps()[3].instances == 16);
  CHECK(p.steps()[3].component.tree == TreeShare{64, 4, 64});
  CHECK(p.steps()[4].path == "agg.level2");
  CHECK(p.steps()[4].instances == 4);
  CHECK(p.steps()[4].component.tree == TreeShare{16, 4, 64});
  CHECK(p.steps()[1].component.tree == TreeShare{4, 4, 64});  // the root reads the 4 level-2 outputs
  CHECK(p.steps()[2].component.tree == TreeShare{});
  CHECK(p.task_name(64) == "agg.level1[0]");
  CHECK(p.task_name(79) == "agg.level1[15]");
  CHECK(p.task_name(83) == "agg.level2[3]");
  CHECK(p.task_name(84) == "agg");
  CHECK(preds(p, 64) == std::vector<TaskId>{0, 1, 2, 3});
  CHECK(preds(p, 79) == std::vector<TaskId>{60, 61, 62, 63});
  CHECK(preds(p, 80) == std::vector<TaskId>{64, 65, 66, 67});
  CHECK(preds(p, 83) == std::vector<TaskId>{76, 77, 78, 79});
  CHECK(preds(p, 84) == std::vector<TaskId>{80, 81, 82, 83});
  CHECK(preds(p, 85) == std::vector<TaskId>{84});
  // Each aggregation task merges 4 of the 64 inputs: 4/64 of the aggregate's 64 s = 4 s, and reads
  // 4/64 of its 10 GiB input = 640 MiB.
  for (TaskId t : {64u, 79u, 80u, 84u}) {
    const Component& c = p.steps()[p.step_of(t)].component;
    CHECK(sample_attempt(c, p, t, 0, 1).run_ns == 4e9);
    CHECK(sample_input_bytes(p, t, 1) == 640.0 * kMiB);
  }
}

TEST_CASE("Strategies: a tree fan-in over 10 shards of arity 4 has one level of 4 + 4 + 2 inputs", "[core]") {
  const Scenario s = load_scenario_text(tree(10, "{arity: 4}"), "t.yaml");
  const Plan p = Plan::unroll(s.pipeline);
  // shard 0..9, level1 10..12 (ceil(10 / 4) = 3), agg 13 reads the 3 level-1 outputs, train 14.
  REQUIRE(p.size() == 15);
  REQUIRE(p.steps().size() == 4);
  CHECK(p.steps()[3].path == "agg.level1");
  CHECK(p.steps()[3].component.tree == TreeShare{10, 4, 10});
  CHECK(p.steps()[1].component.tree == TreeShare{3, 4, 10});
  CHECK(preds(p, 10) == std::vector<TaskId>{0, 1, 2, 3});
  CHECK(preds(p, 11) == std::vector<TaskId>{4, 5, 6, 7});
  CHECK(preds(p, 12) == std::vector<TaskId>{8, 9});
  CHECK(preds(p, 13) == std::vector<TaskId>{10, 11, 12});
  // Shares of the aggregate's 64 s: 4/10 -> 25.6 s, 4/10 -> 25.6 s, 2/10 -> 12.8 s; the root 3/10 -> 19.2 s.
  const auto run_s = [&](TaskId t) {
    return sample_attempt(p.steps()[p.step_of(t)].component, p, t, 0, 1).run_ns / 1e9;
  };
  CHECK(run_s(10) == Approx(25.6).epsilon(1e-15));
  CHECK(run_s(11) == Approx(25.6).epsilon(1e-15));
  CHECK(run_s(12) == Approx(12.8).epsilon(1e-15));
  CHECK(run_s(13) == Approx(19.2).epsilon(1e-15));
  // Inputs: 2/10 of 10 GiB = 2 GiB for the last level-1 task, 3/10 of it (3 GiB) for the root.
  CHECK(sample_input_bytes(p, 12, 1) == 2.0 * kGiB);
  CHECK(sample_input_bytes(p, 13, 1) == 3.0 * kGiB);
}

TEST_CASE("Strategies: a tree fan-in over no more items than its arity is the flat fan-in", "[core]") {
  const Plan flat = Plan::unroll(load_scenario_text(tree(4, ""), "t.yaml").pipeline);
  const Plan small = Plan::unroll(load_scenario_text(tree(4, "{arity: 4}"), "t.yaml").pipeline);
  REQUIRE(small.size() == flat.size());
  REQUIRE(small.steps().size() == flat.steps().size());
  for (TaskId t = 0; t < flat.size(); ++t) {
    CHECK(preds(small, t) == preds(flat, t));
    CHECK(small.task_name(t) == flat.task_name(t));
  }
  CHECK(small.steps()[1].component.tree == TreeShare{});
}

TEST_CASE("Strategies: input total splits over the loop's items, and --set count keeps it", "[core]") {
  const std::string yaml = with_steps(
      "    - {name: shard, parallel_for: {count: 4}, input: {total: 1TiB}, output: {total: 8GiB}, "
      "duration: {per_gib: 1s}}\n");
  for (const auto& [count, per_item_gib] :
       std::vector<std::pair<std::uint32_t, double>>{{4, 256}, {16, 64}, {1024, 1}}) {
    LoadOptions o;
    o.sets = {"pipeline.steps[shard].parallel_for.count=" + std::to_string(count)};
    const Scenario s = load_scenario_text(yaml, "t.yaml", o);
    const Plan p = Plan::unroll(s.pipeline);
    REQUIRE(p.size() == count);
    double in = 0, out = 0;
    for (TaskId t = 0; t < p.size(); ++t) {
      CHECK(sample_input_bytes(p, t, 1) == per_item_gib * kGiB);  // 1 TiB = 1024 GiB over `count` items
      in += sample_input_bytes(p, t, 1);
      out += sample_output_bytes(p, t, 1);
      // 1 s per GiB read: 256 s, 64 s, 1 s.
      CHECK(sample_attempt(p.steps()[0].component, p, t, 0, 1).run_ns == per_item_gib * 1e9);
    }
    CHECK(in == 1024.0 * kGiB);
    CHECK(out == 8.0 * kGiB);
  }
}

TEST_CASE("Strategies: bad fan_in and total values get file:line:col errors naming the field", "[core]") {
  const std::string shard = "    - {name: shard, parallel_for: {count: 8}}\n";
  CHECK(error_of(with_steps(shard + "    - {name: agg, after: [shard], fan_in: {arity: 1}}\n")) ==
        "bad.yaml:8:51: pipeline.steps[1].fan_in.arity: must be >= 2, got 1");
  CHECK(error_of(with_steps(shard + "    - {name: agg, after: [shard], fan_in: {arity: two}}\n")) ==
        "bad.yaml:8:51: pipeline.steps[1].fan_in.arity: expected an integer, got \"two\"");
  CHECK(error_of(with_steps(shard + "    - {name: agg, after: [shard], fan_in: 4}\n")) ==
        "bad.yaml:8:43: pipeline.steps[1].fan_in: expected a mapping, got \"4\"");
  CHECK(error_of(with_steps(shard + "    - {name: agg, after: [shard], fan_in: {}}\n")) ==
        "bad.yaml:8:43: pipeline.steps[1].fan_in: missing required key \"arity\"");
  CHECK(error_of(with_steps(shard + "    - {name: agg, after: [shard], fan_in: {arty: 2}}\n")) ==
        "bad.yaml:8:44: pipeline.steps[1].fan_in.arty: unknown key \"arty\" (did you mean \"arity\"?)");
  CHECK(error_of(with_steps(shard + "    - {name: agg, fan_in: {arity: 2}}\n")) ==
        "bad.yaml:8:19: pipeline.steps[1].fan_in: needs an `after` step with a parallel_for (the loop whose "
        "outputs it merges)");
  CHECK(
      error_of(with_steps(
          shard + "    - {name: agg, after: [shard], parallel_for: {count: 2}, fan_in: {arity: 2}}\n")) ==
      "bad.yaml:8:61: pipeline.steps[1].fan_in: a step with a parallel_for cannot have fan_in; put fan_in on "
      "the step after the loop that merges it");
  CHECK(error_of(with_steps(shard + "    - {name: more, parallel_for: {count: 2}}\n" +
                            "    - {name: agg, after: [shard, more], fan_in: {arity: 2}}\n")) ==
        "bad.yaml:9:41: pipeline.steps[2].fan_in: waits for two loops (shard and more); fan_in merges one");
  CHECK(error_of(with_steps("    - {name: g, parallel_for: {count: 2}, steps: [{name: x}]}\n"
                            "    - {name: agg, after: [g], fan_in: {arity: 2}}\n")) ==
        "bad.yaml:8:31: pipeline.steps[1].fan_in: merges the outputs of a component loop; \"g\" is a group");
  // A looped group beside the component loop is waited for by the root, as any other `after` step (it
  // was refused as a second loop).
  {
    const Scenario sc = load_scenario_text(
        with_steps(shard + "    - {name: g, parallel_for: {count: 3}, steps: [{name: x}]}\n" +
                   "    - {name: agg, after: [g, shard], fan_in: {arity: 2}}\n"),
        "ok.yaml");
    CHECK(sc.pipeline.steps[2].fan_in_of == 0);
  }
  CHECK(error_of(
            with_steps("    - {name: g, steps: [{name: x, parallel_for: {count: 4}}, {name: y, after: [x], "
                       "fan_in: {arity: 2}}]}\n")) ==
        "bad.yaml:7:84: pipeline.steps[0].steps[1].fan_in: fan_in is supported on top-level steps only (not "
        "inside a group)");
  CHECK(error_of(with_steps("    - {name: g, steps: [{name: x}], fan_in: {arity: 2}}\n")) ==
        "bad.yaml:7:37: pipeline.steps[0].fan_in: a group (a step with steps:) cannot have component key "
        "\"fan_in\"; put it on the steps inside");

  CHECK(error_of(with_steps("    - {name: s, parallel_for: {count: 8, workers: 0}}\n")) ==
        "bad.yaml:7:51: pipeline.steps[0].parallel_for.workers: must be >= 1, got 0");
  CHECK(error_of(with_steps("    - {name: s, parallel_for: {count: 8, workers: 1.5}}\n")) ==
        "bad.yaml:7:51: pipeline.steps[0].parallel_for.workers: expected an integer, got \"1.5\"");
  CHECK(error_of(with_steps("    - {name: g, parallel_for: {count: 2, workers: 2}, steps: [{name: x}]}\n")) ==
        "bad.yaml:7:42: pipeline.steps[0].parallel_for.workers: a work queue runs a component's items in "
        "worker "
        "pods; a group's loop cannot have workers");
  CHECK(error_of(with_steps("    - {name: g, steps: [{name: x, parallel_for: {count: 2, workers: 2}}]}\n")) ==
        "bad.yaml:7:60: pipeline.steps[0].steps[0].parallel_for.workers: workers is supported on top-level "
        "steps "
        "only (not inside a group)");

  CHECK(error_of(with_steps("    - {name: s, parallel_for: {count: 8}, input: {total: -1}}\n")) ==
        "bad.yaml:7:58: pipeline.steps[0].input.total: must be >= 0, got -1");
  CHECK(error_of(with_steps("    - {name: s, parallel_for: {count: 8}, input: {total: lots}}\n")) ==
        "bad.yaml:7:58: pipeline.steps[0].input.total: expected a size such as 16Gi, 512Mi, 10GiB or 1e9, "
        "got \"lots\"");
  CHECK(error_of(with_steps("    - {name: s, parallel_for: {count: 8}, input: {total: [1GiB]}}\n")) ==
        "bad.yaml:7:58: pipeline.steps[0].input.total: expected a size, got a list");
  CHECK(error_of(with_steps("    - {name: s, input: {total: 1GiB}}\n")) ==
        "bad.yaml:7:25: pipeline.steps[0].input.total: a total is split over the step's own parallel_for "
        "items; this step has no parallel_for (use size)");
  CHECK(
      error_of(with_steps("    - {name: s, parallel_for: {count: 8}, input: {size: 1GiB, total: 8GiB}}\n")) ==
      "bad.yaml:7:63: pipeline.steps[0].input.total: give either size (per item) or total (split over the "
      "items), not both");
}

TEST_CASE("Strategies: workers on a loop reaches the Plan, which keeps one task per item", "[core]") {
  const Scenario s = load_scenario_text(
      with_steps("    - {name: s, parallel_for: {count: 8, workers: 3, parallelism: 2}}\n"), "t.yaml");
  REQUIRE(s.pipeline.steps[0].loop);
  CHECK(s.pipeline.steps[0].loop->workers == 3);
  CHECK(s.pipeline.steps[0].loop->workers_where.line == 7);
  const Plan p = Plan::unroll(s.pipeline);
  CHECK(p.size() == 8);
  CHECK(p.steps()[0].workers == 3);
  CHECK(p.limiters() == std::vector<std::uint32_t>{2});  // parallelism stays the loop's own limit
}

TEST_CASE("Strategies: bad speculation values get file:line:col errors naming the field", "[core]") {
  const auto spec = [](const std::string& value) {
    return error_of(with_steps("    - {name: s, parallel_for: {count: 8}, speculation: " + value + "}\n"));
  };
  // Column 64 is `after`'s value, 75 `max`'s (the 4-space indent, then the flow mapping).
  CHECK(
      spec("{after: 0.5x, max: 1}") ==
      "bad.yaml:7:64: pipeline.steps[0].speculation.after: must be > 1x (a backup starts when a run is this "
      "much slower), got 0.5x");
  CHECK(
      spec("{after: 1x}") ==
      "bad.yaml:7:64: pipeline.steps[0].speculation.after: must be > 1x (a backup starts when a run is this "
      "much slower), got 1x");
  CHECK(spec("{after: abc}") ==
        "bad.yaml:7:64: pipeline.steps[0].speculation.after: expected a factor such as 1.5x, got \"abc\"");
  CHECK(spec("{after: 1.5x, max: -1}") ==
        "bad.yaml:7:75: pipeline.steps[0].speculation.max: must be >= 0, got -1");
  CHECK(spec("{after: 1.5x, max: 17}") ==
        "bad.yaml:7:75: pipeline.steps[0].speculation.max: must be <= 16, got 17");
  CHECK(spec("{after: 1.5x, maks: 1}") ==
        "bad.yaml:7:70: pipeline.steps[0].speculation.maks: unknown key \"maks\" (did you mean \"max\"?)");
  CHECK(spec("{max: 1}") == "bad.yaml:7:56: pipeline.steps[0].speculation: missing required key \"after\"");
  CHECK(spec("1.5x") == "bad.yaml:7:56: pipeline.steps[0].speculation: expected a mapping, got \"1.5x\"");
  CHECK(error_of(with_steps("    - {name: s, speculation: {after: 1.5x}}\n")) ==
        "bad.yaml:7:17: pipeline.steps[0].speculation: speculation needs a parallel_for on the same step "
        "(backups start relative to the median run time of the loop's finished iterations)");
  CHECK(error_of(with_steps(
            "    - {name: s, parallel_for: {count: 8, workers: 2}, speculation: {after: 2x}}\n")) ==
        "bad.yaml:7:55: pipeline.steps[0].speculation: speculation cannot be combined with "
        "parallel_for.workers");
  CHECK(error_of(with_steps(
            "    - {name: g, steps: [{name: x, parallel_for: {count: 2}, speculation: {after: 2x}}]}\n")) ==
        "bad.yaml:7:61: pipeline.steps[0].steps[0].speculation: speculation is supported on top-level steps "
        "only (not inside a group)");
}

TEST_CASE("Strategies: speculation reaches the Plan, max defaults to 1, and a factor needs no x", "[core]") {
  const auto plan_of = [](const std::string& value) {
    const Scenario sc = load_scenario_text(
        with_steps("    - {name: s, parallel_for: {count: 8}, speculation: " + value + "}\n"), "ok.yaml",
        LoadOptions{});
    return Plan::unroll(sc.pipeline);
  };
  const Plan a = plan_of("{after: 1.5x}");
  CHECK(a.steps()[0].speculation_after == 1.5);
  CHECK(a.steps()[0].speculation_max == 1);
  const Plan b = plan_of("{after: 2, max: 3}");
  CHECK(b.steps()[0].speculation_after == 2);
  CHECK(b.steps()[0].speculation_max == 3);
  CHECK(plan_of("{after: 1.5x, max: 0}").steps()[0].speculation_max == 0);
  CHECK(a.task_count() == 8);  // one task per item, as without speculation
}
