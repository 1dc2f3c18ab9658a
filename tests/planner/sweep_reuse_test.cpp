// A sweep simulates configurations that differ only in what the simulator does not read (prices, spot
// discounts, free text) once per replication, and prices each one's trace itself: the results must be
// those of simulating every configuration, to the bit.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/planner/sweep.hpp>
#include <shardflow/sim/simulator.hpp>

#include "../../planner/view_fingerprint.hpp"  // private to planner/

using namespace shardflow;
using namespace shardflow::planner;

namespace {

// Noisy tasks on an on-demand pool `n` and a spot pool `s` whose nodes are reclaimed (and replaced),
// so that costs are sums over many nodes of different lifetimes and prices.
const std::string kMixed =
    "name: mixed\n"
    "description: on-demand and spot nodes\n"
    "seed: 7\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 40, parallelism: 12}\n"
    "      duration: {base: 30s, noise: {lognormal_sigma: 0.4}}\n"
    "      resources: {cpu: 4}\n"
    "    - name: merge\n"
    "      after: [w]\n"
    "      duration: {base: 20s}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 0.77}\n"
    "    - {name: s, cpu: 16, memory: 64Gi, count: 2, price_per_hour: 1.3,\n"
    "       spot: {discount: 0.6, mean_reclaim: 90s}}\n";

std::string json(const SweepResult& r) {
  std::ostringstream out;
  write_sweep_json(out, r);
  return out.str();
}
std::string csv(const SweepResult& r) {
  std::ostringstream out;
  write_sweep_csv(out, r);
  return out.str();
}
std::string table(const SweepResult& r) {
  std::ostringstream out;
  print_sweep(out, r);
  return out.str();
}

SweepSpec price_and_count_spec() {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3"),
                     parse_dimension("cluster.node_pools[n].price_per_hour=0.77,1.1,2.5,3.3")};
  spec.replications = 5;
  spec.deadline_s = 150;
  return spec;
}

}  // namespace

TEST_CASE("Sweep reuse: price-only variants give the bytes of simulating each, and the costs of each trace",
          "[planner]") {
  SweepSpec spec = price_and_count_spec();
  spec.dimensions.push_back(parse_dimension("cluster.node_pools[s].spot.discount=0.6,0.25"));
  const SweepResult shared = run_sweep_text(kMixed, "mixed.yaml", spec);
  spec.reuse = false;
  const SweepResult each = run_sweep_text(kMixed, "mixed.yaml", spec);
  REQUIRE(shared.configs.size() == 24);
  CHECK(json(shared) == json(each));
  CHECK(csv(shared) == csv(each));
  CHECK(table(shared) == table(each));
  CHECK(shared.simulations == 24 * 5);
  CHECK(each.simulations == 24 * 5);
  CHECK(shared.distinct_simulations == 3 * 5);  // one per node count and replication
  CHECK(each.distinct_simulations == 24 * 5);

  // Computed another way: each configuration loaded and simulated on its own, priced by
  // shardflow::cost(); the sweep's figures are their summaries exactly.
  for (std::size_t c = 0; c < shared.configs.size(); ++c) {
    const ConfigResult& cr = shared.configs[c];
    LoadOptions options;
    for (std::size_t d = 0; d < spec.dimensions.size(); ++d)
      options.sets.push_back(spec.dimensions[d].path + "=" + cr.values[d]);
    const Scenario sc = load_scenario_text(kMixed, "mixed.yaml", options);
    const Plan plan = Plan::unroll(sc.pipeline);
    std::vector<double> costs, makespans;
    for (std::uint64_t r = 0; r < 5; ++r) {
      const Trace t = sim::simulate(sc, plan, sim::SimOptions::with_seed(7 + r));
      costs.push_back(cost(t));
      makespans.push_back(makespan_s(t));
    }
    INFO("configuration " << c);
    CHECK(cr.cost.mean == summarize(costs).mean);
    CHECK(cr.cost.p95 == summarize(costs).p95);
    CHECK(cr.makespan_s.mean == summarize(makespans).mean);
  }
  // The prices matter: the same node count at 0.77 and at 3.3 an hour costs differently.
  CHECK(shared.configs[0].cost.mean < shared.configs[6].cost.mean);
  CHECK(shared.configs[0].makespan_s.mean == shared.configs[6].makespan_s.mean);
}

TEST_CASE("Sweep reuse: distinct simulations are one per group of price-only variants", "[planner]") {
  SweepSpec spec = price_and_count_spec();  // 3 counts x 4 prices
  SweepResult r = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(r.simulations == 12 * 5);
  CHECK(r.distinct_simulations == 3 * 5);
  // Free text is not simulated either.
  spec.dimensions.push_back(parse_dimension("description=first,second"));
  r = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(r.simulations == 24 * 5);
  CHECK(r.distinct_simulations == 3 * 5);
  // A slice shares within itself: configurations 0, 2, 4, ... of 24 (the last dimension fastest) are
  // every node count and price with the first description: again 3 groups.
  spec.shard = Shard{0, 2};
  r = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(r.configs.size() == 12);
  CHECK(r.distinct_simulations == 3 * 5);
}

TEST_CASE("Sweep reuse: fields the simulator reads are never shared", "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].cpu=16,32"),
                     parse_dimension("cluster.node_pools[s].count=1,2"),
                     parse_dimension("cluster.node_pools[s].spot.mean_reclaim=90s,10m"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=12,13")};
  spec.replications = 3;
  SweepResult r = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(r.distinct_simulations == 16 * 3);
  spec.dimensions = {parse_dimension("pipeline.steps[w].duration.base=30s,31s"), parse_dimension("name=a,b")};
  r = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(r.distinct_simulations == 4 * 3);

  // The views themselves: equal for what the simulator does not read, different for what it does.
  const Scenario base = load_scenario_text(kMixed, "mixed.yaml");
  const auto with = [&](const std::string& set) {
    LoadOptions options;
    options.sets = {set};
    return sim::simulation_view(load_scenario_text(kMixed, "mixed.yaml", options));
  };
  const Scenario view = sim::simulation_view(base);
  CHECK(view == with("cluster.node_pools[n].price_per_hour=9"));
  CHECK(view == with("cluster.node_pools[s].spot.discount=0.1"));
  CHECK(view == with("description=other"));
  CHECK_FALSE(view == with("cluster.node_pools[n].count=2"));
  CHECK_FALSE(view == with("cluster.node_pools[n].cpu=8"));
  CHECK_FALSE(view == with("cluster.node_pools[s].spot.mean_reclaim=1h"));
  CHECK_FALSE(view == with("cluster.node_pools[n].speed=2"));
  CHECK_FALSE(view == with("pipeline.steps[w].duration.base=31s"));
  CHECK_FALSE(view == with("cluster.storage={read_bandwidth: 2GiB/s}"));
  CHECK_FALSE(view == with("cluster.autoscaler.scale_down_delay_after_add=5m"));
  CHECK_FALSE(view == with("name=other"));
  // The view keeps `spot` (spot nodes are reclaimed) and the prices' effect on a node is
  // node_price_per_hour: the discount applies to spot pools only.
  CHECK(view.cluster.node_pools[1].spot);
  CHECK(view.cluster.node_pools[1].price_per_hour == 0);
  CHECK(sim::node_price_per_hour(base.cluster.node_pools[0]) == 0.77);
  CHECK(sim::node_price_per_hour(base.cluster.node_pools[1]) == 1.3 * (1 - 0.6));
}

TEST_CASE("Sweep reuse: the auto search gives the same bytes with fewer simulations", "[planner]") {
  SweepSpec spec = price_and_count_spec();
  spec.search = Search::automatic;
  spec.replications = 8;
  const SweepResult shared = run_sweep_text(kMixed, "mixed.yaml", spec);
  spec.reuse = false;
  const SweepResult each = run_sweep_text(kMixed, "mixed.yaml", spec);
  CHECK(json(shared) == json(each));
  CHECK(table(shared) == table(each));
  CHECK(each.distinct_simulations == each.simulations);
  CHECK(shared.distinct_simulations < shared.simulations);
  CHECK(shared.distinct_simulations <= 3 * 8);
}

TEST_CASE(
    "Sweep reuse: the view fingerprint tells apart views that differ in the fields sweeps vary, and "
    "equal views share it",
    "[planner]") {
  const auto view = [](const std::string& set) {
    LoadOptions options;
    if (!set.empty()) options.sets = {set};
    return sim::simulation_view(load_scenario_text(kMixed, "mixed.yaml", options));
  };
  const std::size_t base = view_fingerprint(view(""));
  // Each a field the sweep would otherwise tell apart by comparing whole scenarios, configuration by
  // configuration (3,000 values of one cost a second of comparisons).
  for (const char* set : {"seed=8",
                          "cluster.node_pools[n].count=2",
                          "cluster.node_pools[n].max_pods=50",
                          "cluster.node_pools[n].speed=2",
                          "cluster.node_pools[n].mtbf=1h",
                          "cluster.node_pools[s].spot.mean_reclaim=1h",
                          "cluster.node_pools[n].autoscaling={min: 1, max: 4}",
                          "cluster.scheduler.policy=most-allocated",
                          "cluster.scheduler.decisions_per_second=50",
                          "cluster.scheduler.bind_latency=20ms",
                          "cluster.storage={read_bandwidth: 2GiB/s}",
                          "overheads={sandbox_start: 2s}",
                          "pipeline.steps[w].parallel_for.parallelism=13",
                          "pipeline.steps[w].resources.memory=3Gi",
                          "pipeline.steps[w].duration.base=31s",
                          "pipeline.steps[w].duration.noise.lognormal_sigma=0.5",
                          "pipeline.steps[w].failure.p=0.1",
                          "pipeline.steps[w].retries={max: 2}",
                          "pipeline.steps[w].retries={max: 2, backoff: 5s}",
                          "pipeline.steps[merge].input={size: 1Gi}"}) {
    INFO(set);
    CHECK(view_fingerprint(view(set)) != base);
  }
  // Equal views, equal fingerprints: prices are not in the view, and 0 and -0 are the same value.
  CHECK(view_fingerprint(view("cluster.node_pools[n].price_per_hour=9")) == base);
  CHECK(view("pipeline.steps[w].failure.p=-0") == view("pipeline.steps[w].failure.p=0"));
  CHECK(view_fingerprint(view("pipeline.steps[w].failure.p=-0")) ==
        view_fingerprint(view("pipeline.steps[w].failure.p=0")));
}

TEST_CASE("Sweep: configurations with equal pipelines share one plan, and give what each loaded alone gives",
          "[planner]") {
  // Two pipeline fields and two cluster fields: 2 x 2 x 2 x 2 configurations, four distinct pipelines. With
  // the simulator the sweep keeps one copy of each pipeline and its plan; a backend of the caller's gets
  // every configuration's own scenario, so that sweep shares nothing: their results are the same bytes.
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].duration.base=60s,45s"),
                     parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("pipeline.steps[merge].resources.cpu=1,2"),
                     parse_dimension("cluster.node_pools[s].spot.discount=0.6,0.25")};
  spec.replications = 3;
  spec.deadline_s = 200;
  const SweepResult shared = run_sweep_text(kMixed, "mixed.yaml", spec);
  const SweepResult each = run_sweep_text(kMixed, "mixed.yaml", spec, {}, [] { return sim::make_backend(); });
  REQUIRE(shared.configs.size() == 16);
  CHECK(json(shared) == json(each));
  CHECK(table(shared) == table(each));
  CHECK(shared.distinct_simulations == 8 * 3);  // the spot discount is a price
  CHECK(each.distinct_simulations == 16 * 3);
  // Each configuration's critical path, from its shared plan: a w task (60 s or 45 s), then merge's 20 s.
  for (const ConfigResult& c : shared.configs) {
    INFO(c.values[0]);
    CHECK(c.critical_path_s == (c.values[0] == "60s" ? 80 : 65));
  }
  // A pipeline value given twice in two spellings is still found (the shared copies are compared).
  spec.dimensions = {parse_dimension("pipeline.steps[w].duration.base=60s,45s,1m")};
  CHECK_THROWS_WITH(
      run_sweep_text(kMixed, "mixed.yaml", spec),
      "--vary pipeline.steps[w].duration.base=60s,45s,1m: pipeline.steps[w].duration.base: values "
      "60s and 1m are the same setting (the scenario is the same with either): give it once");
}
