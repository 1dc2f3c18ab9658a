#include <cmath>

#include <catch2/catch.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/sampling.hpp>

#include "core/pipeline_builders.hpp"

using namespace shardflow;
using namespace shardflow::testing;

namespace {

// The seed scenario's shape: 100 preprocess shards (at most 50 at once) -> aggregate -> 3 trainings.
Pipeline seed_shape() {
  return pipeline({with_loop(component("preprocess", 30), 100, 50), component("aggregate", 300, {0}),
                   with_loop(component("train", 2700, {1}), 3, 3)},
                  "seed");
}

std::vector<std::string> pred_names(const Plan& p, TaskId t) {
  std::vector<std::string> out;
  for (TaskId q : p.preds(t)) out.push_back(p.task_name(q));
  return out;
}

TaskId find(const Plan& p, const std::string& name) {
  for (TaskId t = 0; t < p.size(); ++t)
    if (p.task_name(t) == name) return t;
  FAIL("no task named " << name);
  return kNone;
}

}  // namespace

TEST_CASE("Plan: a fan-out/fan-in pipeline unrolls to tasks, one join and exact edges", "[core][plan]") {
  const Plan p = Plan::unroll(seed_shape());
  CHECK(p.task_count() == 104);
  CHECK(p.size() == 105);        // one join collects the 100 shards for aggregate; train is a sink, no join
  CHECK(p.edge_count() == 104);  // 100 into the join, 1 into aggregate, 3 out of aggregate
  REQUIRE(p.steps().size() == 3);
  CHECK(p.steps()[0].instances == 100);
  CHECK(p.steps()[2].instances == 3);

  const TaskId agg = find(p, "aggregate");
  REQUIRE(pred_names(p, agg) == std::vector<std::string>{"join:preprocess"});
  const TaskId join = p.preds(agg)[0];
  CHECK(p.is_join(join));
  CHECK(p.preds(join).size() == 100);
  CHECK(p.succs(agg).size() == 3);
  CHECK(p.task_name(p.succs(agg)[2]) == "train[2]");
  CHECK(p.item(p.succs(agg)[2]) == 2);

  SECTION("limiters and units") {
    REQUIRE(p.limiters() == std::vector<std::uint32_t>{50, 3});
    CHECK(p.units().size() == 103);  // one per limited iteration
    const TaskId shard7 = find(p, "preprocess[7]");
    const Unit& u = p.units()[p.unit_of(shard7)];
    CHECK(u.limiter == 0);
    CHECK(u.parent == kNone);
    CHECK(u.tasks == 1);
    CHECK(p.unit_of(agg) == kNone);
    CHECK(p.unit_of(join) == kNone);
  }
}

TEST_CASE("Plan: node ids are a topological order", "[core][plan]") {
  const Plan p = Plan::unroll(
      pipeline({with_loop(group("outer", {component("a", 1), with_loop(component("b", 1, {0}), 4)}), 3, 2),
                component("c", 1, {0}), component("d", 1), component("e", 1, {1, 2})}));
  for (TaskId t = 0; t < p.size(); ++t) {
    for (TaskId q : p.preds(t)) CHECK(q < t);
    for (TaskId s : p.succs(t)) CHECK(s > t);
  }
}

TEST_CASE("Plan: nested loops name tasks by scope and share the outer iteration's unit", "[core][plan]") {
  // outer: 3 iterations, at most 2 at once; each runs a, then 4 b's; c waits for all of it.
  const Plan p = Plan::unroll(
      pipeline({with_loop(group("outer", {component("a", 1), with_loop(component("b", 1, {0}), 4)}), 3, 2),
                component("c", 1, {0})}));
  CHECK(p.task_count() == 3 * 5 + 1);
  REQUIRE(p.steps().size() == 3);
  CHECK(p.steps()[0].path == "outer/a");
  CHECK(p.steps()[1].path == "outer/b");
  CHECK(p.steps()[1].instances == 12);

  const TaskId b = find(p, "outer[1]/b[2]");
  CHECK(p.item(b) == 2);
  CHECK(pred_names(p, b) == std::vector<std::string>{"outer[1]/a"});
  const TaskId a = find(p, "outer[1]/a");
  CHECK(p.item(a) == 1);  // a has no loop of its own: its item is the outer iteration
  CHECK(p.unit_of(a) == p.unit_of(b));
  REQUIRE(p.unit_of(a) != kNone);
  CHECK(p.units()[p.unit_of(a)].tasks == 5);
  CHECK(p.limiters() == std::vector<std::uint32_t>{2});

  const TaskId c = find(p, "c");
  REQUIRE(p.preds(c).size() == 1);
  CHECK(p.is_join(p.preds(c)[0]));
  CHECK(p.preds(p.preds(c)[0]).size() == 12);  // the sinks of every iteration: the b's
}

TEST_CASE("Plan: the Argo parallelism-nested-dag shape", "[core][plan]") {
  // A (parallelism 2) runs b1; then b2, b3, b4; then b5. Each b is c1 -> {c2, c3}.
  auto b = [](const std::string& name, std::vector<StepIndex> deps) {
    return group(name, {component("c1", 10), component("c2", 10, {0}), component("c3", 10, {0})},
                 std::move(deps));
  };
  const Pipeline pl = pipeline(
      {group("A", {b("b1", {}), b("b2", {0}), b("b3", {0}), b("b4", {0}), b("b5", {1, 2, 3})}, {}, 2)});
  const Plan p = Plan::unroll(pl);
  CHECK(p.task_count() == 15);
  CHECK(p.limiters() == std::vector<std::uint32_t>{2});
  CHECK(p.units().size() == 5);
  for (const Unit& u : p.units()) {
    CHECK(u.limiter == 0);
    CHECK(u.tasks == 3);
  }
  const TaskId b2c1 = find(p, "A/b2/c1");
  REQUIRE(p.preds(b2c1).size() == 1);
  CHECK(p.task_name(p.preds(b2c1)[0]) == "join:A/b1");
  CHECK(pred_names(p, p.preds(b2c1)[0]) == std::vector<std::string>{"A/b1/c2", "A/b1/c3"});
  CHECK(p.unit_of(b2c1) != p.unit_of(find(p, "A/b3/c1")));

  const PlanSummary s = summarize(p, pl);
  CHECK(s.critical_path_s == Approx(60.0));  // b1, b2, b5: 20 s each, before the limit of 2
  CHECK(s.total_work_s == Approx(150.0));
}

TEST_CASE("Plan: a million-task ParallelFor unrolls with linear edges", "[core][plan]") {
  const Pipeline pl = pipeline({with_loop(component("map", 1), 1'000'000, 1000), component("reduce", 1, {0}),
                                with_loop(component("score", 1, {1}), 1'000'000)});
  const Plan p = Plan::unroll(pl);
  CHECK(p.task_count() == 2'000'001);
  CHECK(p.size() == 2'000'002);
  CHECK(p.edge_count() == 2'000'001);
  CHECK(p.units().size() == 1'000'000);
  CHECK(p.memory_bytes() < 2'000'002u * 100u);
}

TEST_CASE("PlanSummary: critical path and total work of a hand-built diamond", "[core][plan]") {
  // a (10 s) -> {b (20 s), c (5 s)} -> d (1 s): the critical path is a, b, d = 31 s; work 36 s.
  const Pipeline pl = pipeline(
      {component("a", 10), component("b", 20, {0}), component("c", 5, {0}), component("d", 1, {1, 2})});
  const Plan p = Plan::unroll(pl);
  const PlanSummary s = summarize(p, pl);
  CHECK(s.critical_path_s == 31.0);
  CHECK(s.critical_path == std::vector<std::string>{"a", "b", "d"});
  CHECK(s.total_work_s == 36.0);
  CHECK(s.total_cpu_core_s == 36.0);
  CHECK(s.max_fan_out == 2);
  CHECK(s.max_fan_in == 2);
}

TEST_CASE("PlanSummary: mean durations follow the duration model", "[core][plan]") {
  Step s = with_loop(component("preprocess", 30), 4);
  s.component.duration.per_gib = Duration::from_s(45);
  s.component.duration.straggler_p = 0.02;
  s.component.duration.straggler_factor = 4;
  s.component.duration.lognormal_sigma = 0.2;  // mean-preserving: no effect on the mean
  s.component.input.per_item = {kGiB, 2 * kGiB, 10 * kGiB, 0};
  const Pipeline pl = pipeline({s});
  const Plan p = Plan::unroll(pl);
  // (30 + 45 * GiB) * (1 + 0.02 * 3)
  CHECK(mean_task_seconds(p, 0) == Approx(75 * 1.06));
  CHECK(mean_task_seconds(p, 2) == Approx(480 * 1.06));
  CHECK(mean_task_seconds(p, 3) == Approx(30 * 1.06));
  const PlanSummary sum = summarize(p, pl);
  CHECK(sum.total_work_s == Approx((75 + 120 + 480 + 30) * 1.06));
  CHECK(sum.critical_path_s == Approx(480 * 1.06));
}

TEST_CASE("PlanSummary: the loop limits' bound: waves of equal tasks, work over the limit, per step",
          "[core][plan]") {
  // a (10 s) -> b: 7 tasks of 20 s, 3 at once: 3 waves, 60 s -> c (5 s): 75 s; the critical path 35 s.
  {
    const Pipeline pl =
        pipeline({component("a", 10), with_loop(component("b", 20, {0}), 7, 3), component("c", 5, {1})});
    const PlanSummary s = summarize(Plan::unroll(pl), pl);
    CHECK(s.critical_path_s == 35.0);
    CHECK(s.limit_bound_s == 75.0);
    CHECK(s.limit_step == "b");
    CHECK(s.limit_tasks == 7);
    CHECK(s.limit == 3);
    CHECK(s.limit_step_s == 60.0);
  }
  // A work queue of 4 workers over 10 tasks of 10 s, parallelism 5: 4 at once, 3 waves; beside it a step of
  // 25 s with no limit, and after both d (1 s): 31 s.
  {
    Step w = with_loop(component("w", 10), 10, 5);
    w.loop->workers = 4;
    const Pipeline pl = pipeline({w, component("x", 25), component("d", 1, {0, 1})});
    const PlanSummary s = summarize(Plan::unroll(pl), pl);
    CHECK(s.critical_path_s == 26.0);
    CHECK(s.limit_bound_s == 31.0);
    CHECK(s.limit == 4);
    CHECK(s.limit_step_s == 30.0);
  }
  // Unequal tasks (10 s per GiB of 1, 2, 3 and 4 GiB), 2 at once: the larger of work / 2 (50 s) and the
  // longest (40 s); with 3 at once, the longest (40 s) over work / 3 (33.3 s).
  for (const auto& [at_once, least] : {std::pair{2u, 50.0}, std::pair{3u, 40.0}}) {
    Step u = with_loop(component("u", 0), 4, at_once);
    u.component.duration.per_gib = Duration::from_s(10);
    u.component.input.per_item = {kGiB, 2 * kGiB, 3 * kGiB, 4 * kGiB};
    const Pipeline pl = pipeline({u});
    const PlanSummary s = summarize(Plan::unroll(pl), pl);
    CHECK(s.critical_path_s == 40.0);
    CHECK(s.limit_bound_s == least);
  }
  // No limit below the loop's width, or a limit inside a looped group (per run of the group): no bound.
  {
    const Pipeline wide = pipeline({with_loop(component("v", 10), 4, 4)});
    CHECK(summarize(Plan::unroll(wide), wide).limit_bound_s == 0);
    const Pipeline nested = pipeline({with_loop(group("g", {with_loop(component("leaf", 10), 6, 2)}), 3)});
    CHECK(summarize(Plan::unroll(nested), nested).limit_bound_s == 0);
  }
}

TEST_CASE("PlanSummary: the CPU capacity bound spreads core-seconds over every core", "[core][plan]") {
  const Pipeline pl = pipeline(
      {component("a", 10), component("b", 20, {0}), component("c", 5, {0}), component("d", 1, {1, 2})});
  const PlanSummary s = summarize(Plan::unroll(pl), pl);
  Cluster c;
  c.node_pools.resize(2);
  c.node_pools[0].cpu = 2000;
  c.node_pools[0].count = 3;  // 6 cores
  c.node_pools[1].cpu = 1000;
  c.node_pools[1].count = 1;
  c.node_pools[1].autoscaling.max = 2;  // at its largest: 2 nodes of speed 3 = 6 core-equivalents
  c.node_pools[1].speed = 3;
  CHECK(cpu_capacity_bound_s(s, c) == 36.0 / 12.0);
  CHECK(cpu_capacity_bound_s(s, Cluster{}) == 0);
}

TEST_CASE("Plan::count_tasks equals the unrolled task count, and saturates", "[core][plan]") {
  // Seed shape: 100 + 1 + 3.
  CHECK(Plan::count_tasks(seed_shape()) == 104);
  CHECK(Plan::count_tasks(seed_shape()) == Plan::unroll(seed_shape()).task_count());
  // Nested: a 7-iteration group around a 5-wide loop and a plain step, then a fan-in: 7 * (5 + 1) + 1.
  Step g = with_loop(group("g", {with_loop(component("leaf", 1), 5, 2), component("post", 1, {0})}), 7, 3);
  const Pipeline nested = pipeline({g, component("merge", 1, {0})});
  CHECK(Plan::count_tasks(nested) == 43);
  CHECK(Plan::count_tasks(nested) == Plan::unroll(nested).task_count());
  // 4,000,000,000^3 does not fit in 64 bits: the count saturates rather than wrapping to a small number.
  const std::uint32_t w = 4'000'000'000u;
  const Pipeline huge =
      pipeline({with_loop(group("a", {with_loop(group("b", {with_loop(component("c", 1), w)}), w)}), w)});
  CHECK(Plan::count_tasks(huge) == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("PlanSummary: summarize_pipeline agrees with the unrolled summary without unrolling",
          "[core][plan]") {
  Step s = with_loop(component("preprocess", 30), 4);
  s.component.duration.per_gib = Duration::from_s(45);
  s.component.input.per_item = {kGiB, 2 * kGiB, 10 * kGiB, 0};
  s.component.resources.cpu = 2000;
  Step g = with_loop(group("g", {with_loop(component("leaf", 3), 5, 2), component("post", 2, {0})}), 7, 3);
  const Pipeline pl = pipeline({s, g, component("merge", 10, {0, 1})});
  const PlanSummary full = summarize(Plan::unroll(pl), pl);
  const PlanSummary counted = summarize_pipeline(pl);
  CHECK_FALSE(counted.unrolled);
  CHECK(counted.tasks == full.tasks);  // 4 + 7 * (5 + 1) + 1 = 47
  CHECK(counted.tasks == 47);
  REQUIRE(counted.steps.size() == full.steps.size());
  for (std::size_t i = 0; i < full.steps.size(); ++i) {
    CHECK(counted.steps[i].path == full.steps[i].path);
    CHECK(counted.steps[i].instances == full.steps[i].instances);
    CHECK(counted.steps[i].loop_count == full.steps[i].loop_count);
    CHECK(counted.steps[i].parallelism == full.steps[i].parallelism);
    CHECK(counted.steps[i].work_s == Approx(full.steps[i].work_s));
  }
  // The group g: 7 runs, at most 3 at once; its first component step is leaf, after preprocess.
  REQUIRE(full.groups.size() == 1);
  CHECK(full.groups[0].path == "g");
  CHECK(full.groups[0].instances == 7);
  CHECK(full.groups[0].loop_count == 7);
  CHECK(full.groups[0].parallelism == 3);
  CHECK(full.groups[0].group_parallelism == 0);
  CHECK(full.groups[0].first_step == 1);
  REQUIRE(counted.groups.size() == 1);
  CHECK(counted.groups[0].path == full.groups[0].path);
  CHECK(counted.groups[0].instances == full.groups[0].instances);
  CHECK(counted.groups[0].parallelism == full.groups[0].parallelism);
  CHECK(counted.groups[0].first_step == full.groups[0].first_step);
  // (75 + 120 + 480 + 30) * 2 cores for preprocess, then 7 * (5 * 3 + 2) + 10 seconds of one core.
  CHECK(counted.total_work_s == Approx(705 + 7 * 17 + 10));
  CHECK(counted.total_cpu_core_s == Approx(full.total_cpu_core_s));
  CHECK(counted.total_cpu_core_s == Approx(705 * 2 + 7 * 17 + 10));
}

TEST_CASE("Plan::count_tasks and summarize_pipeline count a tree fan-in's levels", "[core][plan]") {
  // 64 shards merged at arity 4: levels of 16 and 4 tasks, then the root: 64 + 16 + 4 + 1 = 85 tasks.
  // 10 shards at arity 4: levels of 3 (4 + 4 + 2), then the root: 10 + 3 + 1 = 14.
  for (const auto& [shards, tasks] : {std::pair<std::uint32_t, std::uint64_t>{64, 85}, {10, 14}, {4, 5}}) {
    Step agg = component("agg", 64);
    agg.deps = {0};
    agg.fan_in_arity = 4;
    agg.fan_in_of = 0;
    const Pipeline pl = pipeline({with_loop(component("shard", 1), shards), agg});
    CHECK(Plan::count_tasks(pl) == tasks);
    const Plan plan = Plan::unroll(pl);
    CHECK(plan.task_count() == tasks);
    const PlanSummary full = summarize(plan, pl);
    const PlanSummary counted = summarize_pipeline(pl);
    CHECK(counted.tasks == tasks);
    REQUIRE(counted.steps.size() == full.steps.size());
    for (std::size_t i = 0; i < full.steps.size(); ++i) {
      CHECK(counted.steps[i].path == full.steps[i].path);
      CHECK(counted.steps[i].instances == full.steps[i].instances);
      CHECK(counted.steps[i].work_s == Approx(full.steps[i].work_s));
    }
    CHECK(counted.total_work_s == Approx(full.total_work_s));
  }
}

// A normal size is drawn as max(0, X), X ~ N(mean, stddev) (sample_data_bytes): its mean is
// mean Phi(mean/stddev) + stddev phi(mean/stddev), not `mean` (with mean 0: stddev / sqrt(2 pi), not 0).
TEST_CASE("the mean of a normal size counts its draws below 0 as 0, as the sampler does", "[core][plan]") {
  const double gib = static_cast<double>(kGiB);
  const Distribution at_zero{Distribution::Kind::normal, 0, gib};
  CHECK(at_zero.mean() == Approx(gib * 0.3989422804014327).epsilon(1e-12));
  const Distribution far{Distribution::Kind::normal, 10 * gib, gib};  // 10 sd above 0: nothing clamped
  CHECK(far.mean() == Approx(10 * gib).epsilon(1e-12));
  const Distribution none{Distribution::Kind::normal, -gib, 0};  // no spread, below 0: always 0
  CHECK(none.mean() == 0);
  // The same figure another way: the average of the sampler's own draws (200,000 of them).
  DataSize in;
  in.dist = Distribution{Distribution::Kind::normal, gib, 2 * gib};
  double sum = 0;
  const int n = 200000;
  for (int t = 0; t < n; ++t) sum += sample_data_bytes(in, 0, static_cast<TaskId>(t), 7, Stream::input);
  CHECK(sum / n == Approx(in.dist.mean()).epsilon(0.01));
  CHECK(std::abs(sum / n - gib) > 0.2 * gib);  // the unclamped mean is far off
  // explain's figures: a step of 10 s per GiB of such an input has a mean task of 10 s x that mean.
  Step s = with_loop(component("read", 0), 4, 0);
  s.component.duration.base = Duration::zero();
  s.component.duration.per_gib = Duration::from_s(10);
  s.component.input.dist = at_zero;
  const Pipeline p = pipeline({s}, "normal-input");
  const PlanSummary sum_p = summarize(Plan::unroll(p), p);
  CHECK(sum_p.steps[0].mean_duration_s == Approx(10 * 0.3989422804014327).epsilon(1e-9));
  CHECK(sum_p.critical_path_s == Approx(10 * 0.3989422804014327).epsilon(1e-9));
}
