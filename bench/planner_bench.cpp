// Sweep throughput: simulation runs per second of wall time on the seed scenario (104 tasks, 22 nodes),
// 9 configurations x 8 replications per sweep, with one thread and with every core, side by side.
//   build/bench/bench/planner_bench            # scripts/bench planner writes reports/planner-sweep.md
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <shardflow/planner/sweep.hpp>

namespace {

using namespace shardflow::planner;

const std::string& seed_scenario() {
  static const std::string text = [] {
    std::ifstream in(std::string(SHARDFLOW_SOURCE_DIR) + "/scenarios/shard-preprocess-train.yaml");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  return text;
}

void BM_Sweep(benchmark::State& state) {
  const auto threads = static_cast<std::size_t>(state.range(0));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[cpu].count=10,20,40"),
                     parse_dimension("pipeline.steps[preprocess].parallel_for.parallelism=25,50,100")};
  spec.replications = 8;
  spec.deadline_s = 5400;
  std::size_t runs = 0;
  for (auto _ : state) {
    const SweepResult r = run_sweep_text(seed_scenario(), "shard-preprocess-train.yaml", spec);
    benchmark::DoNotOptimize(r.recommended);
    runs += r.configs.size() * static_cast<std::size_t>(r.replications);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(runs));
  state.counters["threads"] = static_cast<double>(threads);
}
BENCHMARK(BM_Sweep)
    ->Arg(1)
    ->Arg(static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency())))
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
