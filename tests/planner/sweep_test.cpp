#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/sweep.hpp>

using namespace shardflow;
using namespace shardflow::planner;

namespace {

// Ten 10 s tasks with a parallelism limit on one node billed 3.6 an hour (0.001 a second).
const std::string kLimited =
    "name: limited\n"
    "seed: 5\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 10, parallelism: 2}\n"
    "      duration: {base: 10s}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string json(const SweepResult& r) {
  std::ostringstream out;
  write_sweep_json(out, r);
  return out.str();
}

}  // namespace

TEST_CASE("Sweep: summary statistics with a Student-t interval", "[planner]") {
  const Summary s = summarize({4, 1, 3, 2});
  CHECK(s.mean == 2.5);
  CHECK(s.stddev == Approx(std::sqrt(5.0 / 3.0)).epsilon(1e-15));
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.p50 == 2);  // nearest rank
  CHECK(s.p95 == 4);
  const double half = 3.182446 * std::sqrt(5.0 / 3.0) / 2;  // t(0.975, 3 degrees of freedom)
  CHECK(s.ci95_low == Approx(2.5 - half).epsilon(1e-12));
  CHECK(s.ci95_high == Approx(2.5 + half).epsilon(1e-12));
  const Summary one = summarize({7});
  CHECK(one.stddev == 0);
  CHECK(one.ci95_low == 7);
  CHECK(one.ci95_high == 7);
  // 41 values (40 degrees of freedom): past the table, t(0.975, 40) = 2.021075.
  std::vector<double> v;
  for (int i = 0; i <= 40; ++i) v.push_back(i);
  const Summary big = summarize(v);
  CHECK((big.ci95_high - big.mean) / (big.stddev / std::sqrt(41.0)) == Approx(2.021075).epsilon(1e-4));
}

TEST_CASE("Sweep: --vary values split at top-level commas", "[planner]") {
  const Dimension d = parse_dimension("cluster.node_pools[n].count=1, 2,3");
  CHECK(d.path == "cluster.node_pools[n].count");
  CHECK(d.values == std::vector<std::string>{"1", "2", "3"});
  CHECK(parse_dimension("a={x: 1, y: 2},[1, 2],'p,q'").values ==
        std::vector<std::string>{"{x: 1, y: 2}", "[1, 2]", "'p,q'"});
  CHECK(error_of([] { parse_dimension("a.b"); }) ==
        "--vary a.b: expected PATH=V1,V2,..., as in cluster.node_pools[cpu].count=10,20,40");
  CHECK(error_of([] { parse_dimension("a=1,,2"); }) == "--vary a=1,,2: a: value 2 of 3 is empty");
}

TEST_CASE("Sweep: exact makespans and costs, and the cheapest configuration that meets the deadline",
          "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
  spec.replications = 3;
  spec.deadline_s = 30;
  const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(r.configs.size() == 8);
  CHECK(r.scenario == "limited");
  CHECK(r.base_seed == 5);
  const double makespans[] = {100, 50, 20, 10};
  for (std::size_t c = 0; c < 8; ++c) {
    const ConfigResult& cr = r.configs[c];
    const double nodes = c < 4 ? 1 : 2;
    const double m = makespans[c % 4];
    INFO("configuration " << c);
    CHECK(cr.values == std::vector<std::string>{c < 4 ? "1" : "2", spec.dimensions[1].values[c % 4]});
    CHECK(cr.makespan_s.mean == m);
    CHECK(cr.makespan_s.ci95_low == m);  // no noise: every replication the same
    CHECK(cr.quantile_makespan_s == m);
    CHECK(cr.cost.mean == Approx(nodes * m * 0.001).epsilon(1e-12));  // every node billed for the run
    CHECK(cr.p_meets_deadline == (m <= 30 ? 1.0 : 0.0));
    CHECK(cr.meets == (m <= 30));
  }
  REQUIRE(r.recommended);
  CHECK(*r.recommended == 3);  // one node, parallelism 10: 10 s for 0.01
  std::ostringstream table;
  print_sweep(table, r);
  CHECK(table.str().find(
            "cheapest configuration with p95 makespan within the deadline (30 s): "
            "cluster.node_pools[n].count=1, pipeline.steps[w].parallel_for.parallelism=10; mean cost "
            "0.01, p95 makespan 10.0 s") != std::string::npos);
  SECTION("sweep.json reads back to the same result") {
    std::ostringstream json;
    write_sweep_json(json, r);
    std::istringstream in(json.str());
    const SweepResult back = read_sweep_json(in, "sweep.json");
    std::ostringstream again;
    write_sweep_json(again, back);
    CHECK(again.str() == json.str());
    std::istringstream bad("{\"scenario\": \"x\"}");
    CHECK_THROWS_AS(read_sweep_json(bad, "bad/sweep.json"), InputError);
  }
  SECTION("a deadline nobody meets") {
    spec.deadline_s = 5;
    CHECK_FALSE(run_sweep_text(kLimited, "limited.yaml", spec).recommended);
  }
  SECTION("no deadline, no recommendation") {
    spec.deadline_s.reset();
    CHECK_FALSE(run_sweep_text(kLimited, "limited.yaml", spec).recommended);
  }
}

TEST_CASE("Sweep: configurations share their random numbers, and threads change nothing", "[planner]") {
  // Noisy durations; the price does not change the schedule, so with common random numbers every
  // configuration has the very same makespans.
  const std::string noisy = kLimited + "";
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].duration={base: 10s, noise: {lognormal_sigma: 0.5}}"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].price_per_hour=1,2,3")};
  spec.replications = 8;
  const SweepResult r = run_sweep_text(noisy, "noisy.yaml", spec);
  CHECK(r.configs[0].makespan_s.stddev > 0);
  for (const ConfigResult& cr : r.configs) {
    CHECK(cr.makespan_s.mean == r.configs[0].makespan_s.mean);
    CHECK(cr.makespan_s.p95 == r.configs[0].makespan_s.p95);
  }
  CHECK(r.configs[2].cost.mean == Approx(3 * r.configs[0].cost.mean).epsilon(1e-12));
  const std::string parallel = json(r);
  tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  CHECK(json(run_sweep_text(noisy, "noisy.yaml", spec)) == parallel);
}

TEST_CASE("Sweep: overlays reach every configuration, before --set and --vary", "[planner]") {
  SweepSpec spec;
  // 20 s tasks, and a parallelism the --vary values replace.
  spec.overlays = {{"slow.yaml",
                    "pipeline: {steps: [{name: w, duration: {base: 20s}, parallel_for: "
                    "{parallelism: 7}}]}\ncluster: {node_pools: [{name: n, price_per_hour: 7.2}]}\n"}};
  spec.sets = {"cluster.node_pools[n].price_per_hour=36"};
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
  spec.replications = 2;
  const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(r.configs.size() == 4);
  const double makespans[] = {200, 100, 40, 20};
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("configuration " << c);
    CHECK(r.configs[c].makespan_s.mean == makespans[c]);
    CHECK(r.configs[c].cost.mean == Approx(makespans[c] * 0.01).epsilon(1e-12));  // the --set price
  }
  spec.overlays = {{"bad.yaml", "pipeline: {steps: [{name: w, duration: {base: -1s}}]}\n"}};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "bad.yaml:1:47: pipeline.steps[0].duration.base: must be >= 0, got -1s");
}

TEST_CASE("Sweep: bad input names what is wrong", "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[gpu].count=1,2")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--set cluster.node_pools[gpu].count=1: cluster.node_pools[gpu]: no element named \"gpu\" in "
        "cluster.node_pools (names: n)");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,-1")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--set cluster.node_pools[n].count=-1: cluster.node_pools[0].count: must be >= 0, got -1");
  spec.replications = 0;
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--replications: must be from 1 to 100000, got 0");
  // 1,000^3 combinations: refused before any is made.
  std::string thousand = "cluster.node_pools[n].count=1";
  for (int i = 2; i <= 1000; ++i) thousand += "," + std::to_string(i);
  spec.replications = 1;
  spec.dimensions = {parse_dimension(thousand), parse_dimension(thousand), parse_dimension(thousand)};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary: the combinations of the values times 1 replications make more than 10,000,000 runs");
}
