// The local backend's own cost, side by side with oneTBB doing the same empty work by hand.
//
//   BM_Backend_ParallelFor/N   one ParallelFor of N empty tasks (kernel `noop`, 1 CPU each) through
//                              run_local on 2 cores, trace recording included
//   BM_TaskGroup_ParallelFor/N the same N empty functions through a plain tbb::task_group
//   BM_TbbParallelFor/N        for context: tbb::parallel_for over N items (no task per item)
//   BM_Backend_RandomDag/N     a random DAG of N empty tasks (up to 3 predecessors each among the 1,000
//                              before it) through run_local
//   BM_FlowGraph_RandomDag/N   the same DAG as a tbb::flow::graph of continue_nodes
//   BM_SharDStats/cores        compute-bound shard_stats shards with --cores 1 and --cores 2
//
// Build with the `bench` preset; bench/local_report runs this and writes reports/local-backend.md.
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/exec/local_backend.hpp>

using namespace shardflow;

namespace {

constexpr int kCores = 2;

const char* const kCluster = R"(
cluster:
  node_pools:
    - {name: local, cpu: 64, memory: 64Gi, count: 1, max_pods: 1000000}
overheads: none
)";

// The DAG's edges: node i depends on up to 3 distinct nodes among the 1,000 before it.
std::vector<std::vector<std::uint32_t>> random_dag(std::uint32_t n) {
  Rng rng(12345);
  std::vector<std::vector<std::uint32_t>> preds(n);
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint64_t k = rng.below(4);
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::uint32_t window = std::min<std::uint32_t>(i, 1000);
      const auto p = static_cast<std::uint32_t>(i - 1 - rng.below(window));
      bool dup = false;
      for (std::uint32_t q : preds[i]) dup = dup || q == p;
      if (!dup) preds[i].push_back(p);
    }
  }
  return preds;
}

Scenario dag_scenario(std::uint32_t n) {
  const auto preds = random_dag(n);
  std::string y = "name: dag\npipeline:\n  steps:\n";
  y.reserve(n * 80);
  for (std::uint32_t i = 0; i < n; ++i) {
    y += "    - {name: t" + std::to_string(i) + ", kernel: {name: noop}";
    if (!preds[i].empty()) {
      y += ", after: [";
      for (std::size_t j = 0; j < preds[i].size(); ++j) y += (j ? ", t" : "t") + std::to_string(preds[i][j]);
      y += "]";
    }
    y += "}\n";
  }
  return load_scenario_text(y + kCluster, "dag.yaml");
}

exec::LocalOptions options(int cores) {
  exec::LocalOptions lo;
  lo.cores = cores;
  lo.memory = 64 * kGiB;
  return lo;
}

// The timed part of a backend benchmark: run_local of the scenario's n tasks (unrolled once, outside).
void run_backend(benchmark::State& state, const Scenario& s, std::uint32_t n) {
  const Plan plan = Plan::unroll(s.pipeline);
  for (auto _ : state) {
    const exec::LocalResult r = exec::run_local(s, plan, RunOptions{}, options(kCores));
    benchmark::DoNotOptimize(r.trace.attempts.data());
    if (r.trace.attempts.size() != n) state.SkipWithError("wrong attempt count");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

void BM_Backend_ParallelFor(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const Scenario s = load_scenario_text(
      "name: pf\npipeline:\n  steps:\n    - {name: empty, parallel_for: {count: " + std::to_string(n) +
          "}, kernel: {name: noop}}\n" + kCluster,
      "pf.yaml");
  run_backend(state, s, n);
}

void BM_TaskGroup_ParallelFor(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, kCores);
  tbb::task_arena arena(kCores);
  for (auto _ : state) {
    arena.execute([&] {
      tbb::task_group tg;
      for (std::uint32_t i = 0; i < n; ++i) tg.run([] { benchmark::ClobberMemory(); });
      tg.wait();
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

// For context: what oneTBB's best tool for independent items costs per item (ranges split across threads,
// no task per item). Not the backend's comparison: the backend makes and records one task per item.
void BM_TbbParallelFor(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, kCores);
  tbb::task_arena arena(kCores);
  for (auto _ : state)
    arena.execute(
        [&] { tbb::parallel_for(std::uint32_t{0}, n, [](std::uint32_t) { benchmark::ClobberMemory(); }); });
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

void BM_Backend_RandomDag(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const Scenario s = dag_scenario(n);
  run_backend(state, s, n);
}

void BM_FlowGraph_RandomDag(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const auto preds = random_dag(n);
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, kCores);
  tbb::task_arena arena(kCores);
  for (auto _ : state) {
    arena.execute([&] {
      tbb::flow::graph g;
      std::vector<tbb::flow::continue_node<tbb::flow::continue_msg>> nodes;
      nodes.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i)
        nodes.emplace_back(g, [](const tbb::flow::continue_msg&) { benchmark::ClobberMemory(); });
      for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t p : preds[i]) tbb::flow::make_edge(nodes[p], nodes[i]);
      for (std::uint32_t i = 0; i < n; ++i)
        if (preds[i].empty()) nodes[i].try_put(tbb::flow::continue_msg());
      g.wait_for_all();
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

// Compute-bound shards, 1 CPU each: --cores 1 runs them one at a time, --cores 2 two at a time.
void BM_ShardStats(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  const Scenario s = load_scenario_text(
      "name: stats\npipeline:\n  steps:\n    - {name: shard, parallel_for: {count: 16}, "
      "kernel: {name: shard_stats, rows: 40000, features: 32}}\n" +
          std::string(kCluster),
      "stats.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  for (auto _ : state) {
    const exec::LocalResult r = exec::run_local(s, plan, RunOptions{}, options(cores));
    if (r.trace.tasks_failed != 0) state.SkipWithError("a shard failed");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 16);
}

}  // namespace

BENCHMARK(BM_Backend_ParallelFor)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TaskGroup_ParallelFor)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TbbParallelFor)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Backend_RandomDag)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FlowGraph_RandomDag)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ShardStats)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
