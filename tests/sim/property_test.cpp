// Invariants that hold for every scenario, checked on 1,000 random ones.
#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim/score_buckets.hpp"
#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

Step random_component(Rng& r, const std::string& name, MilliCpu max_cpu) {
  Step s = task(name, static_cast<double>(1 + r.below(20)), {},
                static_cast<MilliCpu>(250 * (1 + r.below(static_cast<std::uint64_t>(max_cpu / 250)))));
  s.component.resources.memory = static_cast<ByteCount>(1 + r.below(4)) * kGiB;
  if (r.below(3) == 0) s.component.duration.lognormal_sigma = 0.5;
  if (r.below(4) == 0) {
    s.component.duration.straggler_p = 0.2;
    s.component.duration.straggler_factor = 3;
  }
  if (r.below(4) == 0) {
    s.component.failure.p = 0.3;
    s.component.retries.max = static_cast<int>(r.below(3));
    s.component.retries.backoff = Duration::from_s(static_cast<std::int64_t>(r.below(5)));
  }
  if (r.below(3) == 0) s.component.input.dist = {Distribution::Kind::exponential, 0.5 * kGiB, 0};
  if (r.below(3) == 0) s.component.output.dist = {Distribution::Kind::uniform, 0, 0.5 * kGiB};
  if (r.below(3) == 0) s.component.duration.per_gib = Duration::from_s(4);
  if (r.below(2) == 0) s.component.image = "img" + std::to_string(r.below(2));
  if (r.below(3) == 0)
    s.loop = Loop{static_cast<std::uint32_t>(1 + r.below(12)), {}, static_cast<std::uint32_t>(r.below(4))};
  return s;
}

std::vector<Step> random_steps(Rng& r, int depth, MilliCpu max_cpu) {
  std::vector<Step> steps;
  const int n = 1 + static_cast<int>(r.below(4));
  for (int i = 0; i < n; ++i) {
    const std::string name = "s" + std::to_string(i);
    Step s;
    if (depth < 2 && r.below(4) == 0) {
      s = group(name, random_steps(r, depth + 1, max_cpu), {}, static_cast<std::uint32_t>(r.below(3)));
      if (r.below(2) == 0)
        s.loop = Loop{static_cast<std::uint32_t>(1 + r.below(5)), {}, static_cast<std::uint32_t>(r.below(3))};
    } else {
      s = random_component(r, name, max_cpu);
    }
    for (int j = 0; j < i; ++j)
      if (r.below(2) == 0) s.deps.push_back(static_cast<StepIndex>(j));
    steps.push_back(std::move(s));
  }
  return steps;
}

// What the default profile's other plugins score: PreferNoSchedule taints (tolerated by some steps),
// pool labels that preferred node-affinity terms match, image sizes, and other weights.
void add_scoring_inputs(Rng& r, Scenario& sc) {
  std::vector<Step*> components;
  const auto collect = [&](auto& self, std::vector<Step>& steps) -> void {
    for (Step& s : steps) {
      if (s.steps.empty())
        components.push_back(&s);
      else
        self(self, s.steps);
    }
  };
  collect(collect, sc.pipeline.steps);
  for (NodePool& p : sc.cluster.node_pools) {
    if (r.below(3) == 0) p.taints.push_back(Taint{"slow", "", "PreferNoSchedule"});
    if (r.below(4) == 0) p.taints.push_back(Taint{"old", "yes", "PreferNoSchedule"});
    p.labels["zone"] = r.below(2) == 0 ? "a" : "b";
    if (r.below(2) == 0) p.labels["disk"] = "ssd";
  }
  for (Step* s : components) {
    Component& c = s->component;
    if (r.below(3) == 0) c.tolerations.push_back(Toleration{"slow", "Exists", "", ""});
    if (r.below(3) == 0)
      c.preferred_node_affinity.push_back(PreferredSchedulingTerm{static_cast<int>(1 + r.below(100)),
                                                                  {{"zone", r.below(2) == 0 ? "a" : "b"}}});
    if (r.below(4) == 0) c.preferred_node_affinity.push_back(PreferredSchedulingTerm{5, {{"disk", "ssd"}}});
    if (r.below(2) == 0) c.image_size = static_cast<ByteCount>(r.below(3)) * 1500 * kMiB;  // 0, 1.5 or 3 GiB
  }
  ScoreWeights& w = sc.cluster.scheduler.score_weights;
  if (r.below(4) == 0) w.node_resources_balanced_allocation = 0;
  if (r.below(4) == 0) w.image_locality = static_cast<int>(r.below(4));
  if (r.below(5) == 0) w.node_resources_fit = static_cast<int>(r.below(4));
  if (r.below(6) == 0) {
    sc.cluster.scheduler.fit_strategy = FitStrategy::requested_to_capacity_ratio;
    sc.cluster.scheduler.requested_to_capacity_ratio_shape = {{0, 0}, {60, 10}, {100, 2}};
  }
  if (r.below(6) == 0) sc.cluster.scheduler.fit_resource_weights = {1, 3, 0};
}

Scenario random_scenario(std::uint64_t k) {
  Rng r = Rng::stream(k, Stream::scheduler, 12345);
  std::vector<NodePool> pools;
  const int npools = 1 + static_cast<int>(r.below(3));
  MilliCpu max_cpu = 0;
  for (int p = 0; p < npools; ++p) {
    NodePool np = pool("p" + std::to_string(p), 1 + static_cast<int>(r.below(5)),
                       static_cast<MilliCpu>(1000 * (1 + r.below(8))), 16 * kGiB);
    if (r.below(3) == 0) np.speed = 0.5 + 0.5 * static_cast<double>(r.below(3));
    if (r.below(6) == 0) np.mtbf = Duration::from_s(300);
    if (r.below(6) == 0) {
      np.autoscaling.max = np.count + 3;
      np.autoscaling.scale_down_idle = Duration::from_s(30);
    }
    np.autoscaling.boot_time = Duration::from_s(20);
    max_cpu = std::max(max_cpu, np.cpu);
    pools.push_back(np);
  }
  Scenario sc = scenario(random_steps(r, 0, max_cpu), pools);
  sc.cluster.scheduler.policy = static_cast<ScorePolicy>(r.below(3));
  if (r.below(3) == 0) sc.cluster.storage.read_bytes_per_second = static_cast<double>(kGiB);
  if (r.below(3) == 0) sc.cluster.storage.write_bytes_per_second = 0.5 * kGiB;
  if (r.below(3) == 0) {
    sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
    sc.overheads.default_image_size = kGiB;
    sc.overheads.sandbox_start = Duration::from_ms(500);
  }
  if (r.below(4) == 0) sc.cluster.scheduler.decisions_per_second = 50;
  if (r.below(4) == 0) sc.cluster.scheduler.bind_latency = Duration::from_ms(20);
  if (r.below(5) == 0) {
    sc.overheads.pods_per_task = 2;
    sc.overheads.driver_pod_duration = Duration::from_s(2);
  }
  add_scoring_inputs(r, sc);
  return sc;
}

struct Interval {
  std::int64_t begin, end;
};

// The most intervals open at once (half-open: an interval ending at t does not overlap one starting at t).
int max_overlap(const std::vector<Interval>& iv) {
  std::vector<std::pair<std::int64_t, int>> ev;
  for (const Interval& i : iv) {
    ev.emplace_back(i.begin, 1);
    ev.emplace_back(i.end, -1);
  }
  std::sort(ev.begin(), ev.end());
  int cur = 0, best = 0;
  for (auto& e : ev) best = std::max(best, cur += e.second);
  return best;
}

void check_invariants(const Scenario& sc, const Plan& plan, const Trace& t) {
  const std::uint32_t n = plan.size();
  // Per task: its attempts, its successful finish.
  std::vector<std::vector<const AttemptRecord*>> by_task(n);
  for (const AttemptRecord& a : t.attempts) by_task.at(a.task).push_back(&a);
  std::vector<std::int64_t> done(n, -1);    // finish of the node, -1 if it never completed
  std::vector<std::int64_t> longest(n, 0);  // longest chain of run times ending at the node
  std::uint64_t failed_tasks = 0;
  for (TaskId id = 0; id < n; ++id) {
    std::int64_t ready = 0, chain = 0;
    bool blocked = false;
    for (TaskId p : plan.preds(id)) {
      if (done[p] < 0) blocked = true;
      ready = std::max(ready, done[p]);
      chain = std::max(chain, longest[p]);
    }
    if (plan.is_join(id)) {
      done[id] = blocked ? -1 : ready;
      longest[id] = chain;
      continue;
    }
    const Component& c = plan.steps()[plan.step_of(id)].component;
    const std::uint32_t spec_max = plan.steps()[plan.step_of(id)].speculation_max;
    int failures = 0;
    for (const AttemptRecord* a : by_task[id]) {
      REQUIRE(!blocked);  // never runs after a failed predecessor
      REQUIRE(a->submitted.ns() >= ready);
      if (a->scheduled != kNever) REQUIRE(a->scheduled >= a->submitted);
      if (a->started != kNever) REQUIRE(a->started >= a->scheduled);
      REQUIRE(a->finished >= a->submitted);
      // Output is written after a successful run only, within the attempt.
      REQUIRE(a->output_write >= Duration::zero());
      if (a->output_write > Duration::zero()) {
        REQUIRE(a->outcome != Outcome::failed);
        REQUIRE(a->started != kNever);
        REQUIRE(a->finished - a->output_write >= a->started);
      }
      // Only a speculative step's losing attempts are cancelled (checked below, once done[id] is known).
      if (a->outcome == Outcome::cancelled) REQUIRE(spec_max > 0);
      if (a->outcome == Outcome::failed) ++failures;
      if (a->outcome == Outcome::succeeded) {
        REQUIRE(done[id] == -1);
        done[id] = a->finished.ns();
        longest[id] = chain + (a->finished - a->started).ns();
      }
    }
    // Kinds: attempts are numbered in the order they were made, only attempt 0 is the first; each retry
    // follows a failure (at most retries.max of them), each replacement an eviction, and backups come
    // only from a speculative step (at most `max` per task).
    int retries = 0, backups = 0, replacements = 0, evictions = 0, failed_before = 0;
    for (std::size_t k = 0; k < by_task[id].size(); ++k) {
      const AttemptRecord* a = by_task[id][k];
      REQUIRE(a->attempt == k);
      REQUIRE((a->kind == AttemptKind::first) == (k == 0));
      if (a->kind == AttemptKind::retry) REQUIRE(++retries <= failed_before);
      if (a->kind == AttemptKind::replacement) REQUIRE(++replacements <= evictions);
      if (a->kind == AttemptKind::backup) ++backups;
      failed_before += a->outcome == Outcome::failed ? 1 : 0;
      evictions += a->outcome == Outcome::evicted ? 1 : 0;
    }
    REQUIRE(retries <= c.retries.max);
    REQUIRE(backups <= static_cast<int>(spec_max));
    // A backup that fails while another attempt runs is not a retry: at most `max` such failures more.
    REQUIRE(failures <= c.retries.max + 1 + static_cast<int>(spec_max));
    // A cancelled attempt lost to a sibling that succeeded, and ended when it won (or, created by the
    // controller afterwards, when it was created).
    for (const AttemptRecord* a : by_task[id])
      if (a->outcome == Outcome::cancelled) {
        REQUIRE(done[id] >= 0);
        REQUIRE(a->finished.ns() >= done[id]);
        if (a->scheduled != kNever) REQUIRE(a->finished.ns() == done[id]);
      }
    if (!blocked && done[id] < 0) {
      ++failed_tasks;  // it must have been reported
      REQUIRE(!by_task[id].empty());
    }
  }
  REQUIRE(t.tasks_failed == failed_tasks);

  const std::int64_t span = makespan(t).ns();
  // Critical path of the actual run times.
  REQUIRE(span >= *std::max_element(longest.begin(), longest.end()));
  // Total work fits in the capacity the nodes offered.
  double cpu_work = 0, capacity = 0;
  for (const AttemptRecord& a : t.attempts)
    if (a.started != kNever)
      cpu_work += static_cast<double>((a.finished - a.started).ns()) *
                  static_cast<double>(plan.steps()[a.step].component.resources.cpu);
  for (const NodeRecord& nd : t.nodes)
    capacity += static_cast<double>((nd.down - nd.up).ns()) * static_cast<double>(nd.cpu);
  REQUIRE(cpu_work <= capacity * (1 + 1e-12));

  // No node is over-committed at any instant, and pods run only while their node is up.
  std::map<std::int32_t, std::vector<const AttemptRecord*>> on_node;
  for (const AttemptRecord& a : t.attempts)
    if (a.node >= 0) on_node[a.node].push_back(&a);
  for (auto& [node, attempts] : on_node) {
    const NodeRecord& nd = t.nodes.at(static_cast<std::size_t>(node));
    std::vector<std::tuple<std::int64_t, int, MilliCpu, ByteCount>> ev;
    for (const AttemptRecord* a : attempts) {
      REQUIRE(a->scheduled >= nd.up);
      REQUIRE(a->finished <= nd.down);
      const Resources& req = plan.steps()[a->step].component.resources;
      ev.emplace_back(a->scheduled.ns(), 1, req.cpu, req.memory);
      ev.emplace_back(a->finished.ns(), 0, -req.cpu, -req.memory);
    }
    std::sort(ev.begin(), ev.end());  // ends (0) before starts (1) at equal times
    MilliCpu cpu = 0;
    ByteCount mem = 0;
    for (auto& [time, kind, dc, dm] : ev) {
      cpu += dc;
      mem += dm;
      REQUIRE(cpu <= nd.cpu);
      REQUIRE(mem <= nd.memory);
    }
  }

  // Parallelism limits: each limiter's units are active from their first pod to their last finish.
  std::vector<Interval> unit_span(plan.units().size(), Interval{INT64_MAX, INT64_MIN});
  for (const AttemptRecord& a : t.attempts)
    for (UnitId u = plan.unit_of(a.task); u != kNone; u = plan.units()[u].parent) {
      unit_span[u].begin = std::min(unit_span[u].begin, a.submitted.ns());
      unit_span[u].end = std::max(unit_span[u].end, a.finished.ns());
    }
  std::vector<std::vector<Interval>> per_limiter(plan.limiters().size());
  for (std::size_t u = 0; u < unit_span.size(); ++u)
    if (unit_span[u].begin != INT64_MAX) per_limiter[plan.units()[u].limiter].push_back(unit_span[u]);
  for (std::size_t l = 0; l < per_limiter.size(); ++l)
    if (plan.limiters()[l] != 0) REQUIRE(max_overlap(per_limiter[l]) <= static_cast<int>(plan.limiters()[l]));
  (void)sc;
}

}  // namespace

TEST_CASE("Simulator: invariants hold on 1,000 random scenarios", "[sim]") {
  std::uint64_t evicted = 0, failed = 0, tasks_failed = 0, limited = 0, writes = 0;
  for (std::uint64_t k = 0; k < 1000; ++k) {
    INFO("scenario " << k);
    const Scenario sc = random_scenario(k);
    const Plan plan = Plan::unroll(sc.pipeline);
    const Trace t =
        sim::simulate(sc, plan, sim::SimOptions{k + 1, {}, Duration::from_s(10LL * 365 * 24 * 3600)});
    check_invariants(sc, plan, t);
    evicted += count_outcome(t, Outcome::evicted);
    failed += count_outcome(t, Outcome::failed);
    tasks_failed += t.tasks_failed;
    for (std::uint32_t cap : plan.limiters()) limited += cap > 0 ? 1 : 0;
    for (const AttemptRecord& a : t.attempts) writes += a.output_write > Duration::zero() ? 1 : 0;
  }
  // The random scenarios do exercise evictions, failures, reported task failures and limits.
  CHECK(evicted > 0);
  CHECK(failed > 0);
  CHECK(tasks_failed > 0);
  CHECK(limited > 0);
  CHECK(writes > 0);
}

namespace {

// Gives a tree fan-in of arity 2 to 4 to every top-level component without a loop that waits for exactly
// one component loop (as the loader resolves `fan_in`), and 1 to 4 workers (a work queue) to half of the
// top-level component loops; returns how many trees it made.
int add_strategies(Rng& r, Scenario& sc) {
  int trees = 0;
  std::vector<Step>& steps = sc.pipeline.steps;
  for (Step& s : steps)
    if (!s.is_group() && s.loop && r.below(2) == 0)
      s.loop->workers = static_cast<std::uint32_t>(1 + r.below(4));
  for (Step& s : steps) {
    if (s.is_group() || s.loop) continue;
    std::vector<StepIndex> loops;
    for (StepIndex d : s.deps)
      if (steps[d].loop) loops.push_back(d);
    if (loops.size() != 1 || steps[loops[0]].is_group()) continue;
    s.fan_in_arity = static_cast<std::uint32_t>(2 + r.below(3));
    s.fan_in_of = loops[0];
    ++trees;
  }
  return trees;
}

// The tree levels: each task reads at most `arity` tasks, as many as its share says, and the shares of a
// level's tasks add up to its inputs' share of the whole (1 at the first level, whose inputs are the
// loop's items).
void check_tree_levels(const Plan& plan) {
  std::map<std::uint32_t, double> share_sum;
  for (TaskId t = 0; t < plan.size(); ++t) {
    if (plan.is_join(t)) continue;
    const TreeShare& tree = plan.steps()[plan.step_of(t)].component.tree;
    if (tree.total == 0 || !plan.steps()[plan.step_of(t)].has_loop) continue;
    REQUIRE(plan.preds(t).size() <= tree.arity);
    REQUIRE(plan.preds(t).size() == static_cast<std::size_t>(tree.share(plan.item(t)) * tree.total + 0.5));
    share_sum[plan.step_of(t)] += tree.share(plan.item(t));
  }
  for (const auto& [step, sum] : share_sum) {
    const TreeShare& tree = plan.steps()[step].component.tree;
    REQUIRE(sum == Approx(static_cast<double>(tree.inputs) / tree.total).epsilon(1e-12));
    if (plan.steps()[step].path.ends_with(".level1")) REQUIRE(tree.inputs == tree.total);
  }
}

// Work queues: a pod's items run one after another on one node (each taken when the last ended), and at
// no instant do more than `workers` pods of the step exist (from their first item's creation to their
// last item's end).
void check_work_queues(const Plan& plan, const Trace& t, int& handed) {
  std::map<std::string, std::vector<const AttemptRecord*>> by_pod;
  for (const AttemptRecord& a : t.attempts) {
    if (plan.steps()[a.step].workers == 0) continue;
    by_pod[t.pod_name(a)].push_back(&a);
    REQUIRE(a.input_read >= Duration::zero());  // an item after the first has no sandbox start to take out
  }
  std::map<std::uint32_t, std::vector<Interval>> pods_of_step;
  for (const auto& [pod, items] : by_pod) {
    for (std::size_t i = 1; i < items.size(); ++i) {
      REQUIRE(items[i]->node == items[0]->node);
      REQUIRE(items[i - 1]->outcome != Outcome::evicted);
      REQUIRE(items[i]->scheduled == items[i - 1]->finished);
      ++handed;
    }
    pods_of_step[items[0]->step].push_back({items[0]->submitted.ns(), items.back()->finished.ns()});
  }
  for (const auto& [step, pods] : pods_of_step)
    REQUIRE(max_overlap(pods) <= static_cast<int>(plan.steps()[step].workers));
}

}  // namespace

TEST_CASE("Simulator: invariants hold on 300 random scenarios with tree fan-ins and work queues", "[sim]") {
  int trees = 0, levels = 0, handed = 0;
  for (std::uint64_t k = 0; k < 300; ++k) {
    INFO("scenario " << k);
    Scenario sc = random_scenario(k);
    Rng r = Rng::stream(k, Stream::scheduler, 777);
    trees += add_strategies(r, sc);
    const Plan plan = Plan::unroll(sc.pipeline);
    for (const PlanStep& ps : plan.steps()) levels += ps.component.tree.total != 0 && ps.has_loop ? 1 : 0;
    check_tree_levels(plan);
    const Trace t =
        sim::simulate(sc, plan, sim::SimOptions{k + 1, {}, Duration::from_s(10LL * 365 * 24 * 3600)});
    check_invariants(sc, plan, t);
    check_work_queues(plan, t, handed);
  }
  // The random scenarios do make trees, trees with levels, and pods that run several items.
  CHECK(trees > 20);
  CHECK(levels > 20);
  CHECK(handed > 100);
}

namespace {

// Speculation (after 1.2x to 2.1x, max 0 to 2) on half of the top-level component loops without workers;
// a third of the scenarios get the orchestrator's controller (sync every 1 s), whose syncs create the
// backups.
int add_speculation(Rng& r, Scenario& sc) {
  int speculative = 0;
  for (Step& s : sc.pipeline.steps)
    if (!s.is_group() && s.loop && s.loop->workers == 0 && r.below(2) == 0) {
      s.speculation_after = 1.2 + 0.3 * static_cast<double>(r.below(4));
      s.speculation_max = static_cast<std::uint32_t>(r.below(3));
      speculative += s.speculation_max > 0 ? 1 : 0;
    }
  if (r.below(3) == 0) {
    sc.overheads.control_plane.sync_period = Duration::from_s(1);
    sc.overheads.control_plane.follow_pods = r.below(2) == 0;
  }
  return speculative;
}

}  // namespace

TEST_CASE("Simulator: invariants hold on 300 random scenarios with speculative execution", "[sim]") {
  int speculative = 0;
  std::size_t cancelled = 0, backups_won = 0;
  for (std::uint64_t k = 0; k < 300; ++k) {
    INFO("scenario " << k);
    Scenario sc = random_scenario(k);
    Rng r = Rng::stream(k, Stream::scheduler, 4242);
    speculative += add_speculation(r, sc);
    const Plan plan = Plan::unroll(sc.pipeline);
    const Trace t =
        sim::simulate(sc, plan, sim::SimOptions{k + 1, {}, Duration::from_s(10LL * 365 * 24 * 3600)});
    check_invariants(sc, plan, t);
    cancelled += count_outcome(t, Outcome::cancelled);
    // A backup (a later attempt than the first) that succeeded while an earlier attempt was cancelled.
    std::map<TaskId, std::pair<std::uint32_t, std::uint32_t>> won;  // task: (succeeded attempt, cancelled)
    for (const AttemptRecord& a : t.attempts) {
      if (a.outcome == Outcome::succeeded) won[a.task].first = a.attempt + 1;
      if (a.outcome == Outcome::cancelled) won[a.task].second = a.attempt + 1;
    }
    for (const auto& [task, w] : won) backups_won += w.first > w.second && w.second > 0 ? 1 : 0;
    // Determinism: the same seed gives the same trace.
    const Trace again =
        sim::simulate(sc, plan, sim::SimOptions{k + 1, {}, Duration::from_s(10LL * 365 * 24 * 3600)});
    std::ostringstream a, b;
    write_trace_json(a, t);
    write_trace_json(b, again);
    REQUIRE(a.str() == b.str());
  }
  // The random scenarios do speculate, cancel losers, and see backups win.
  CHECK(speculative > 50);
  CHECK(cancelled > 20);
  CHECK(backups_won > 10);
}

TEST_CASE("Simulator: the same scenario and seed give the same trace, other seeds differ", "[sim]") {
  for (std::uint64_t k : {3u, 17u, 101u}) {
    const Scenario sc = random_scenario(k);
    const Plan plan = Plan::unroll(sc.pipeline);
    auto json = [&](std::uint64_t seed) {
      std::ostringstream out;
      write_trace_json(out, sim::simulate(sc, plan, sim::SimOptions{seed, {}, Duration::from_s(1LL << 30)}));
      return out.str();
    };
    CHECK(json(7) == json(7));
  }
  // A noisy fan-out: every task's duration depends on the seed.
  Step w = loop(task("w", 10), 50);
  w.component.duration.lognormal_sigma = 0.3;
  const Scenario sc = scenario({w}, {pool("p", 5, 4000)});
  CHECK(makespan(run(sc, 1)) != makespan(run(sc, 2)));
  const Trace a = run(sc, 5), b = run(sc, 5);
  REQUIRE(a.attempts.size() == b.attempts.size());
  for (std::size_t i = 0; i < a.attempts.size(); ++i) {
    CHECK(a.attempts[i].started == b.attempts[i].started);
    CHECK(a.attempts[i].finished == b.attempts[i].finished);
    CHECK(a.attempts[i].node == b.attempts[i].node);
  }
}

TEST_CASE("Simulator: common random numbers: a task's duration does not depend on the cluster", "[sim]") {
  Step w = loop(task("w", 10), 40);
  w.component.duration.lognormal_sigma = 0.5;
  w.component.duration.straggler_p = 0.1;
  w.component.duration.straggler_factor = 4;
  const Trace small = run(scenario({w}, {pool("p", 2, 2000)}), 9);
  const Trace large = run(scenario({w}, {pool("p", 20, 8000)}), 9);
  REQUIRE(small.attempts.size() == large.attempts.size());
  std::map<TaskId, Duration> d_small;
  for (const AttemptRecord& a : small.attempts) d_small[a.task] = a.finished - a.started;
  for (const AttemptRecord& a : large.attempts) CHECK(a.finished - a.started == d_small.at(a.task));
  CHECK(makespan(large) < makespan(small));
}

namespace {

// The trace of one run as JSON, for two ways of deciding compared byte for byte.
std::string trace_json(const Scenario& sc, const Plan& plan, const sim::SimOptions& opt,
                       sim::SimStats& stats) {
  std::ostringstream out;
  write_trace_json(out, sim::simulate(sc, plan, opt, stats));
  return out.str();
}

}  // namespace

TEST_CASE("Simulator: score trees and the node index scan make the same decisions", "[sim]") {
  for (std::uint64_t k = 0; k < 300; ++k) {
    INFO("scenario " << k);
    const Scenario sc = random_scenario(k);
    const Plan plan = Plan::unroll(sc.pipeline);
    auto json = [&](sim::NodeSearch search, sim::SimStats& stats) {
      sim::SimOptions opt = sim::SimOptions::with_seed(k + 1);
      opt.node_search = search;
      return trace_json(sc, plan, opt, stats);
    };
    sim::SimStats tree_stats, scan_stats;
    REQUIRE(json(sim::NodeSearch::score_tree, tree_stats) == json(sim::NodeSearch::node_index, scan_stats));
    REQUIRE(tree_stats.nodes_scored == scan_stats.nodes_scored);
    REQUIRE(tree_stats.scheduling_attempts == scan_stats.scheduling_attempts);
  }
  // And on a cluster large enough for percentageOfNodesToScore to matter, with two pod shapes.
  Step small = loop(task("small", 30), 3000);
  small.component.duration.lognormal_sigma = 0.4;
  Step big = loop(task("big", 50, {}, 6000), 200);
  Scenario sc = scenario({small, big, task("sum", 1, {0, 1})}, {pool("a", 300, 8000), pool("b", 200, 16000)});
  // The last two: PreferNoSchedule taints and preferred affinity that differ between the pools (the
  // decision normalizes over the nodes found), and images that score.
  for (int variant = 0; variant < 4; ++variant) {
    sc.cluster.scheduler.policy =
        variant % 2 == 0 ? ScorePolicy::least_allocated : ScorePolicy::most_allocated;
    if (variant == 2) {
      sc.cluster.node_pools[0].taints.push_back(Taint{"slow", "", "PreferNoSchedule"});
      sc.cluster.node_pools[1].labels["disk"] = "ssd";
      sc.pipeline.steps[1].component.preferred_node_affinity.push_back(
          PreferredSchedulingTerm{3, {{"disk", "ssd"}}});
      sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
      sc.overheads.default_image_size = 2 * kGiB;
      sc.pipeline.steps[0].component.image = "small:1";
      sc.pipeline.steps[1].component.image = "big:1";
    }
    const Plan plan = Plan::unroll(sc.pipeline);
    sim::SimOptions a, b;
    b.node_search = sim::NodeSearch::node_index;
    std::ostringstream ja, jb;
    write_trace_json(ja, sim::simulate(sc, plan, a));
    write_trace_json(jb, sim::simulate(sc, plan, b));
    CHECK(ja.str() == jb.str());
  }
  // And a cluster the autoscaler grows past ScoreBuckets::kMaxSlots (512, or 4,096 with POPCNT): each
  // class's search turns from score buckets to the score tree in the middle of the run, with the same
  // decisions. One pod a node: the fixed nodes hold fewer pods than there are items.
  constexpr int kSlots = static_cast<int>(sim::ScoreBuckets::kMaxSlots);
  Step wide = loop(task("wide", 40, {}, 4000), kSlots * 6);
  wide.component.duration.lognormal_sigma = 0.3;
  NodePool grow = pool("grow", 1, 4000);
  grow.autoscaling.min = 1;
  grow.autoscaling.max = 60;
  grow.autoscaling.boot_time = Duration::from_s(20);
  const Scenario autoscaled = scenario({wide, task("sum", 1, {0})}, {pool("fixed", kSlots - 32, 4000), grow});
  const Plan plan = Plan::unroll(autoscaled.pipeline);
  sim::SimOptions a, b;
  b.node_search = sim::NodeSearch::node_index;
  const Trace ta = sim::simulate(autoscaled, plan, a);
  REQUIRE(ta.nodes.size() > sim::ScoreBuckets::kMaxSlots);
  std::ostringstream ja, jb;
  write_trace_json(ja, ta);
  write_trace_json(jb, sim::simulate(autoscaled, plan, b));
  CHECK(ja.str() == jb.str());
}

namespace {

// What a run without records (SimOptions::records false) must give as a run with them does.
void check_same_summary(const Scenario& sc, const Plan& plan, std::uint64_t seed, bool speculates) {
  sim::SimOptions with = sim::SimOptions::with_seed(seed);
  sim::SimOptions without = with;
  without.records = false;
  sim::SimStats s_with, s_without;
  const Trace a = sim::simulate(sc, plan, with, s_with);
  const Trace b = sim::simulate(sc, plan, without, s_without);
  REQUIRE(a.records);
  // Speculation reads its attempts' records: such a run keeps them (and is then the same trace).
  CHECK(b.records == speculates);
  CHECK(b.attempts.size() == (speculates ? a.attempts.size() : 0));
  CHECK(b.pod_names.size() == (speculates ? a.pod_names.size() : 0));
  std::int64_t last = 0;
  for (const AttemptRecord& r : a.attempts) last = std::max(last, r.finished.ns());
  CHECK(a.last_finished.ns() == last);
  CHECK(b.last_finished.ns() == last);
  CHECK(makespan_s(b) == makespan_s(a));
  CHECK(cost(b) == cost(a));
  CHECK(b.tasks_failed == a.tasks_failed);
  CHECK(b.tasks_unfinished == a.tasks_unfinished);
  CHECK(b.tasks_waiting == a.tasks_waiting);
  CHECK(b.tasks_not_run == a.tasks_not_run);
  CHECK(b.stopped_early == a.stopped_early);
  CHECK(b.errors == a.errors);
  REQUIRE(b.nodes.size() == a.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(b.nodes[i].name == a.nodes[i].name);
    CHECK(b.nodes[i].up == a.nodes[i].up);
    CHECK(b.nodes[i].down == a.nodes[i].down);
    CHECK(b.nodes[i].billed_from == a.nodes[i].billed_from);
  }
  CHECK(s_without.events == s_with.events);
  CHECK(s_without.scheduling_attempts == s_with.scheduling_attempts);
  CHECK(s_without.nodes_scored == s_with.nodes_scored);
  CHECK(s_without.nodes_added == s_with.nodes_added);
  CHECK(s_without.step_done == s_with.step_done);
}

}  // namespace

TEST_CASE("Simulator: a run without records gives what a run with them gives on 1,200 random scenarios",
          "[sim]") {
  std::uint64_t evicted = 0, failed = 0, controlled = 0, handed = 0;
  for (std::uint64_t k = 0; k < 1200; ++k) {
    INFO("scenario " << k);
    Scenario sc = random_scenario(k);
    Rng r = Rng::stream(k, Stream::scheduler, 4242);
    // A quarter with tree fan-ins and work queues, a quarter with speculation, a third of all with the
    // orchestrator's controller (the Job controller's latencies and API rate limit, or a run's).
    bool speculates = false;
    if (k % 4 == 1) add_strategies(r, sc);
    if (k % 4 == 2) speculates = add_speculation(r, sc) > 0;
    if (k % 3 == 0) {
      ControlPlane& cp = sc.overheads.control_plane;
      cp.sync_period = Duration::from_ms(1000);
      cp.scope = r.below(2) == 0 ? ControlPlane::Scope::step : ControlPlane::Scope::run;
      cp.sync_latency = Duration::from_ms(static_cast<std::int64_t>(r.below(3)) * 100);
      cp.complete_latency = Duration::from_ms(static_cast<std::int64_t>(r.below(2)) * 1000);
      cp.failure_backoff = Duration::from_s(10);
      cp.max_failure_backoff = Duration::from_s(360);
      cp.timestamp_resolution = Duration::from_s(static_cast<std::int64_t>(r.below(2)));
      cp.follow_pods = r.below(3) == 0;
      cp.api_qps = r.below(2) == 0 ? 20 : 0;
      cp.api_burst = 30;
    }
    speculates = false;
    for (const Step& s : sc.pipeline.steps) speculates = speculates || s.speculation_max > 0;
    const Plan plan = Plan::unroll(sc.pipeline);
    check_same_summary(sc, plan, k + 1, speculates);
    const Trace t = sim::simulate(sc, plan, sim::SimOptions::with_seed(k + 1));
    evicted += count_outcome(t, Outcome::evicted);
    failed += count_outcome(t, Outcome::failed);
    controlled += sc.overheads.control_plane.enabled() && t.attempts.size() > 1 ? 1 : 0;
    for (const AttemptRecord& a : t.attempts) handed += a.pod != kNoPod ? 1 : 0;
  }
  // The scenarios do exercise evictions, failures, the controller and work-queue pods.
  CHECK(evicted > 0);
  CHECK(failed > 0);
  CHECK(controlled > 100);
  CHECK(handed > 100);
}

TEST_CASE("Simulator: a run stopped at its horizon without records ends where the run with them does",
          "[sim]") {
  // 40 tasks of 10 s on 2 nodes of 2 cores: at 25 s, 8 have ended, 4 are cut and 28 still queued; the
  // cut and queued attempts end then (cancelled), their 32 tasks unfinished.
  const Scenario sc = scenario({loop(task("w", 10), 40)}, {pool("p", 2, 2000)});
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions o = sim::SimOptions::with_seed(1);
  o.horizon = Duration::from_s(25);
  o.records = false;
  const Trace t = sim::simulate(sc, plan, o);
  CHECK_FALSE(t.records);
  CHECK(t.last_finished == SimTime::from_s(25));
  CHECK(makespan_s(t) == 25.0);
  CHECK(t.tasks_failed == 32);
  CHECK(t.tasks_unfinished == 32);
  CHECK(t.tasks_waiting == 0);
  CHECK_THROWS_WITH(compute_metrics(t, plan), "compute_metrics: the trace kept no attempt records");
  std::ostringstream out;
  CHECK_THROWS_WITH(write_trace_json(out, t), "write_trace_json: the trace kept no attempt records");
  CHECK_THROWS_WITH(write_trace_csv(out, t), "write_trace_csv: the trace kept no attempt records");
}

TEST_CASE("Simulator: the class trees and the scan of the classes decide the same pods", "[sim]") {
  // The random scenarios (few steps), then scenarios of 20 to 80 steps on small clusters, where classes wait
  // unschedulable or back off at once and the trees choose among many.
  const auto same = [](const Scenario& sc, std::uint64_t seed) {
    const Plan plan = Plan::unroll(sc.pipeline);
    auto json = [&](sim::ClassChoice choice, sim::SimStats& stats) {
      sim::SimOptions opt = sim::SimOptions::with_seed(seed);
      opt.class_choice = choice;
      return trace_json(sc, plan, opt, stats);
    };
    sim::SimStats scan_stats, tree_stats;
    REQUIRE(json(sim::ClassChoice::scan, scan_stats) == json(sim::ClassChoice::tree, tree_stats));
    REQUIRE(scan_stats.scheduling_attempts == tree_stats.scheduling_attempts);
    REQUIRE(scan_stats.events == tree_stats.events);
    return scan_stats.scheduling_attempts;
  };
  for (std::uint64_t k = 0; k < 300; ++k) {
    INFO("scenario " << k);
    same(random_scenario(k), k + 1);
  }
  std::uint64_t failed_decisions = 0;
  for (std::uint64_t k = 0; k < 60; ++k) {
    INFO("wide scenario " << k);
    Rng r = Rng::stream(k, Stream::scheduler, 777);
    std::vector<Step> steps;
    const int n = 20 + static_cast<int>(r.below(61));
    for (int i = 0; i < n; ++i) {
      Step s = random_component(r, "w" + std::to_string(i), 4000);
      for (int j = std::max(0, i - 5); j < i; ++j)
        if (r.below(6) == 0) s.deps.push_back(static_cast<StepIndex>(j));
      steps.push_back(std::move(s));
    }
    Scenario sc = scenario(std::move(steps), {pool("p", 1 + static_cast<int>(r.below(3)), 4000, 16 * kGiB)});
    sc.cluster.scheduler.policy = static_cast<ScorePolicy>(r.below(3));
    if (r.below(2) == 0) sc.cluster.scheduler.decisions_per_second = 100;
    if (r.below(3) == 0) {
      sc.overheads.pods_per_task = 2;
      sc.overheads.driver_pod_duration = Duration::from_s(1);
    }
    const Plan plan = Plan::unroll(sc.pipeline);
    const std::uint64_t decisions = same(sc, k + 1);
    failed_decisions += decisions - std::min<std::uint64_t>(decisions, plan.task_count());
  }
  CHECK(failed_decisions >
        1000);  // the wide scenarios do wait: the trees' unschedulable and backoff paths run
}
