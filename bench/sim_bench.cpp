// Simulator benchmarks.
//   sim_bench                       Google Benchmark: event queues (hold model), end-to-end runs, Complexity
//   sim_bench --rss TASKS NODES     one end-to-end run in a child process; prints seconds and peak RSS (JSON)
//   sim_bench --simpy-cold TASKS NODES  one run of the SimPy workload (as sim_cold, but in this dynamically
//                                       linked binary: kept to compare with builds before sim_cold)
//
// The hold model: a queue holding P pending events; each step pops the earliest event and pushes one a
// random (exponential-like) time later, so the queue stays at P. Items per second = events per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim_workloads.hpp"

using namespace shardflow;
using namespace shardflow::sim;
using shardflow::bench::fan_out;
using shardflow::bench::many_steps;
using shardflow::bench::simpy_workload;

namespace {

// Increments with mean ~1 ms from a fixed table (so that drawing them costs next to nothing).
struct Increments {
  static constexpr std::size_t kSize = 1 << 16;
  std::int64_t v[kSize]{};
  Increments() {
    Rng r(12345);
    for (auto& x : v) x = static_cast<std::int64_t>(r.exponential(1e6));
  }
};
const Increments& increments() {
  static const Increments inc;
  return inc;
}

template <class Q>
void BM_Hold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const Increments& inc = increments();
  Q q;
  q.reserve(pending + 1);
  std::uint64_t seq = 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < pending; ++i)
    q.push(Event::make(SimTime::from_ns(inc.v[k++ & (Increments::kSize - 1)]), seq++, 1, 0));
  for (auto _ : state) {
    const Event e = q.pop();
    q.push(Event::make(SimTime::from_ns(e.time + inc.v[k++ & (Increments::kSize - 1)]), seq++, 1, e.target));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK_TEMPLATE(BM_Hold, BinaryHeap)->Arg(1000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_Hold, QuaternaryHeap)->Arg(1000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_Hold, DaryHeap<8>)->Arg(1000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_Hold, PairingHeap)->Arg(1000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_Hold, RadixHeap)->Arg(1000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_Hold, LaneQueue<RadixHeap>)->Arg(1000)->Arg(100'000)->Arg(1'000'000);

// The same hold model through the Engine (clock, sequence numbers, handler dispatch).
void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<std::uint32_t>(state.range(0));
  const Increments& inc = increments();
  for (auto _ : state) {
    state.PauseTiming();
    Engine engine;
    engine.reserve(pending + 1);
    std::size_t k = 0;
    for (std::uint32_t i = 0; i < pending; ++i)
      engine.schedule(Duration::from_ns(inc.v[k++ & (Increments::kSize - 1)]), 1, i);
    const std::uint64_t target_events = 10'000'000;
    state.ResumeTiming();
    engine.run([&](const Event& e) {
      if (engine.events_processed() >= target_events) {
        engine.stop();
        return;
      }
      engine.schedule(Duration::from_ns(inc.v[k++ & (Increments::kSize - 1)]), 1, e.target);
    });
    benchmark::DoNotOptimize(engine.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 10'000'000);
}
BENCHMARK(BM_EngineHold)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(3);

void report(benchmark::State& state, const Trace& t, const SimStats& st) {
  state.counters["makespan_s"] = makespan_s(t);
  state.counters["attempts"] = static_cast<double>(t.attempts.size());
  state.counters["tasks_failed"] = static_cast<double>(t.tasks_failed);
  state.counters["events"] = static_cast<double>(st.events);
  state.counters["sched_attempts"] = static_cast<double>(st.scheduling_attempts);
  state.counters["nodes_scored_per_decision"] =
      static_cast<double>(st.nodes_scored) /
      static_cast<double>(std::max<std::uint64_t>(1, st.scheduling_attempts));
}

// The timed loop shared by the end-to-end benchmarks: unroll once, simulate per iteration, report.
void simulate_and_report(benchmark::State& state, const Scenario& sc, const SimOptions& options = {}) {
  const Plan plan = Plan::unroll(sc.pipeline);
  Trace t;
  SimStats st;
  for (auto _ : state) {
    t = simulate(sc, plan, options, st);
    benchmark::DoNotOptimize(t.attempts.data());
  }
  report(state, t, st);
}

void BM_Simulate(benchmark::State& state) {
  const auto tasks = static_cast<std::uint32_t>(state.range(0));
  simulate_and_report(state, fan_out(tasks, static_cast<int>(state.range(1))));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * tasks);
}
// A 10,000-task scenario (target: under 50 ms), and the target case: 1M tasks on 10,000 nodes (under 10 s).
BENCHMARK(BM_Simulate)->Args({10'000, 100})->Args({1'000'000, 10'000})->Unit(benchmark::kMillisecond);

// The same without attempt records (SimOptions::records false), as a sweep runs each configuration.
void BM_SimulateSummary(benchmark::State& state) {
  const auto tasks = static_cast<std::uint32_t>(state.range(0));
  SimOptions o;
  o.records = false;
  simulate_and_report(state, fan_out(tasks, static_cast<int>(state.range(1))), o);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * tasks);
}
BENCHMARK(BM_SimulateSummary)->Args({10'000, 100})->Args({1'000'000, 10'000})->Unit(benchmark::kMillisecond);

// How the cost per task grows with the number of tasks (fixed 1,000 nodes)...
void BM_SimulateTasks(benchmark::State& state) {
  BM_Simulate(state);
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_SimulateTasks)
    ->ArgsProduct({{10'000, 30'000, 100'000, 300'000}, {1000}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

// ...and with the number of nodes (fixed 100,000 tasks).
void BM_SimulateNodes(benchmark::State& state) {
  BM_Simulate(state);
  state.SetComplexityN(state.range(1));
}
BENCHMARK(BM_SimulateNodes)
    ->ArgsProduct({{100'000}, {100, 1000, 3000, 10'000}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

// The two node searches that make the same decisions, side by side: per-class score trees (the default)
// and the node-by-node scan of kube-scheduler's window (NodeSearch::node_index). Arg 2: 0 tree, 1 scan.
void BM_NodeSearch(benchmark::State& state) {
  SimOptions o;
  o.node_search = state.range(2) == 0 ? NodeSearch::score_tree : NodeSearch::node_index;
  state.SetLabel(state.range(2) == 0 ? "score_tree" : "node_index");
  simulate_and_report(
      state, fan_out(static_cast<std::uint32_t>(state.range(0)), static_cast<int>(state.range(1))), o);
}
BENCHMARK(BM_NodeSearch)->ArgsProduct({{100'000}, {1000, 10'000}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_SimpyWorkload(benchmark::State& state) {
  simulate_and_report(
      state, simpy_workload(static_cast<std::uint32_t>(state.range(0)), static_cast<int>(state.range(1))));
}
BENCHMARK(BM_SimpyWorkload)
    ->Args({20'000, 100})
    ->Args({2000, 20})
    ->Args({20'000, 1000})
    ->Args({100'000, 1000})
    ->Unit(benchmark::kMillisecond);

// The same without attempt records (the cold comparison runs both).
void BM_SimpyWorkloadSummary(benchmark::State& state) {
  SimOptions o;
  o.records = false;
  simulate_and_report(
      state, simpy_workload(static_cast<std::uint32_t>(state.range(0)), static_cast<int>(state.range(1))), o);
}
BENCHMARK(BM_SimpyWorkloadSummary)->Args({20'000, 100})->Args({20'000, 1000})->Unit(benchmark::kMillisecond);

// Thousands of one-task steps (a WfCommons import's shape): arg 1 = 1 keeps the classes in trees
// (ClassChoice::automatic above 16 classes), 0 scans them at every decision (what the simulator did
// before), side by side in one run.
void BM_ManySteps(benchmark::State& state) {
  SimOptions o;
  o.records = false;
  o.class_choice = state.range(1) != 0 ? sim::ClassChoice::automatic : sim::ClassChoice::scan;
  simulate_and_report(state, many_steps(static_cast<std::uint32_t>(state.range(0)), 10), o);
}
BENCHMARK(BM_ManySteps)->ArgsProduct({{1000, 4000}, {0, 1}})->Unit(benchmark::kMillisecond);

// Seconds and peak RSS of one run in a fresh child process.
int rss_mode(std::uint32_t tasks, int nodes) {
  const pid_t pid = fork();
  if (pid == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const Scenario sc = fan_out(tasks, nodes);
    const Plan plan = Plan::unroll(sc.pipeline);
    const auto t1 = std::chrono::steady_clock::now();
    SimStats st;
    const Trace t = simulate(sc, plan, SimOptions{}, st);
    const auto t2 = std::chrono::steady_clock::now();
    SimTime end = SimTime::zero();
    for (const AttemptRecord& a : t.attempts) end = std::max(end, a.finished);
    std::printf(
        "{\"tasks\": %u, \"nodes\": %d, \"unroll_seconds\": %.3f, \"simulate_seconds\": %.3f, \"events\": "
        "%llu, "
        "\"attempts\": %zu, \"tasks_failed\": %llu, \"makespan_s\": %.1f, ",
        tasks, nodes, std::chrono::duration<double>(t1 - t0).count(),
        std::chrono::duration<double>(t2 - t1).count(), static_cast<unsigned long long>(st.events),
        t.attempts.size(), static_cast<unsigned long long>(t.tasks_failed), end.seconds());
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  std::printf("\"peak_rss_mib\": %.1f}\n", static_cast<double>(u.ru_maxrss) / 1024.0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "--simpy-cold") == 0)
    return shardflow::bench::simpy_cold_run(static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10)),
                                            std::atoi(argv[3]));
  if (argc >= 2 && std::strcmp(argv[1], "--rss") == 0) {
    const auto tasks = static_cast<std::uint32_t>(argc >= 3 ? std::strtoul(argv[2], nullptr, 10) : 1'000'000);
    const int nodes = argc >= 4 ? std::atoi(argv[3]) : 10'000;
    return rss_mode(tasks, nodes);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
