// Unrolling speed and memory: how long a ParallelFor of N instances takes to become a Plan, and how many
// bytes per instance it holds. Run `bench_plan --rss` for the peak-RSS figure (measured in a child process
// so that nothing else the benchmark allocated counts).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <shardflow/core/plan.hpp>

using namespace shardflow;

namespace {

// The seed scenario's shape at scale: N shards (at most 1000 at once) -> aggregate -> 3 trainings.
Pipeline fan_out_fan_in(std::uint32_t n) {
  Pipeline p;
  p.name = "bench";
  Step shard;
  shard.name = "preprocess";
  shard.loop = Loop{n, {}, 1000};
  shard.component.resources.cpu = 4000;
  shard.component.duration.base = Duration::from_s(30);
  Step agg;
  agg.name = "aggregate";
  agg.deps = {0};
  Step train;
  train.name = "train";
  train.deps = {1};
  train.loop = Loop{3, {}, 3};
  p.steps = {shard, agg, train};
  return p;
}

void BM_UnrollParallelFor(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const Pipeline p = fan_out_fan_in(n);
  std::size_t bytes = 0;
  for (auto _ : state) {
    Plan plan = Plan::unroll(p);
    bytes = plan.memory_bytes();
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetComplexityN(n);
  state.counters["plan_bytes_per_instance"] = static_cast<double>(bytes) / n;
}
BENCHMARK(BM_UnrollParallelFor)
    ->RangeMultiplier(10)
    ->Range(1000, 1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Peak RSS growth of a fresh process that unrolls one million instances, per instance.
int measure_rss() {
  constexpr std::uint32_t kN = 1'000'000;
  const Pipeline p = fan_out_fan_in(kN);
  const pid_t child = fork();
  if (child == 0) {
    const long before = max_rss_kib();
    const auto t0 = std::chrono::steady_clock::now();
    Plan plan = Plan::unroll(p);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long after = max_rss_kib();
    benchmark::DoNotOptimize(plan);
    std::printf(
        "{\"instances\": %u, \"unroll_seconds\": %.4f, \"peak_rss_growth_bytes\": %ld, "
        "\"bytes_per_instance_peak_rss\": %.1f, \"bytes_per_instance_plan\": %.1f}\n",
        kN, secs, (after - before) * 1024L, static_cast<double>(after - before) * 1024.0 / kN,
        static_cast<double>(plan.memory_bytes()) / kN);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--rss") == 0) return measure_rss();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
