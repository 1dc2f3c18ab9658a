// The simulator benchmarks' workloads, shared by sim_bench (Google Benchmark, warm) and sim_cold (one run
// in a fresh, statically linked process, for cold comparisons with SimPy).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

namespace shardflow::bench {

// The end-to-end workload: a ParallelFor of N shards (1 CPU, 2 GiB, 60 s lognormal, 2% stragglers x3,
// 1% failures with 3 retries, input 64 MiB (exponential) read from shared storage at 100 GiB/s) -> aggregate
// -> 3 trainings, on `nodes` nodes of 16 CPU / 64 GiB with the full scheduler model (kube-scheduler's default
// profile: LeastAllocated + BalancedAllocation + ImageLocality, the others constant here; adaptive
// percentageOfNodesToScore, 1,000 decisions/s, 10 ms bind), image pulls and sandbox start.
inline Scenario fan_out(std::uint32_t tasks, int nodes) {
  Scenario sc;
  sc.name = "bench-fan-out";
  sc.pipeline.name = "bench";
  Step shard;
  shard.name = "preprocess";
  shard.loop = Loop{tasks, {}, 0};
  Component& c = shard.component;
  c.resources = {1000, 2 * kGiB, 0};
  c.duration.base = Duration::from_s(50);
  c.duration.per_gib = Duration::from_s(40);
  c.duration.lognormal_sigma = 0.3;
  c.duration.straggler_p = 0.02;
  c.duration.straggler_factor = 3;
  c.failure.p = 0.01;
  c.retries.max = 3;
  c.retries.backoff = Duration::from_s(5);
  c.input.dist = {Distribution::Kind::exponential, 64.0 * kMiB, 0};
  c.image = "preprocess:1";
  Step agg;
  agg.name = "aggregate";
  agg.deps = {0};
  agg.component.resources = {4000, 16 * kGiB, 0};
  agg.component.duration.base = Duration::from_s(60);
  agg.component.image = "aggregate:1";
  Step train;
  train.name = "train";
  train.deps = {1};
  train.loop = Loop{3, {}, 3};
  train.component.resources = {8000, 32 * kGiB, 0};
  train.component.duration.base = Duration::from_s(600);
  train.component.image = "train:1";
  sc.pipeline.steps = {shard, agg, train};
  NodePool p;
  p.name = "n2-standard-16";
  p.count = nodes;
  p.cpu = 16000;
  p.memory = 64 * kGiB;
  p.price_per_hour = 0.78;
  sc.cluster.node_pools = {p};
  sc.cluster.scheduler.decisions_per_second = 1000;
  sc.cluster.scheduler.bind_latency = Duration::from_ms(10);
  sc.cluster.storage.read_bytes_per_second = 100.0 * kGiB;
  sc.overheads.image_pull_bytes_per_second = 200.0 * kMiB;
  sc.overheads.default_image_size = kGiB;
  sc.overheads.sandbox_start = Duration::from_s(1);
  return sc;
}

// The workload compared with SimPy (bench/simpy_compare.sh, ../shared/peers/simpy_strong.py): the same
// shape with constant durations, 5 s pulls, no storage, no failures, so both must give the same makespan.
// A DAG of many one-task steps, as a WfCommons import is (a step per task): `steps` steps of 1 CPU for 10 s
// to 29 s, each after up to two of the 50 before it, on `nodes` nodes of 8 CPUs: most steps wait at once,
// and the scheduler picks among thousands of classes.
inline Scenario many_steps(std::uint32_t steps, int nodes) {
  Scenario sc;
  sc.name = "bench-many-steps";
  sc.pipeline.name = "bench";
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  const auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (std::uint32_t i = 0; i < steps; ++i) {
    Step s;
    s.name = "t" + std::to_string(i);
    s.component.resources = {1000, kGiB, 0};
    s.component.duration.base = Duration::from_s(10 + static_cast<std::int64_t>(next() % 20));
    for (int d = 0; d < 2 && i > 0; ++d)
      if (next() % 3 == 0) {
        const auto dep = static_cast<StepIndex>(i - 1 - next() % std::min<std::uint32_t>(i, 50));
        if (std::find(s.deps.begin(), s.deps.end(), dep) == s.deps.end()) s.deps.push_back(dep);
      }
    for (const StepIndex d : s.deps) s.after.push_back("t" + std::to_string(d));
    sc.pipeline.steps.push_back(std::move(s));
  }
  NodePool p;
  p.name = "default";
  p.count = nodes;
  p.cpu = 8000;
  p.memory = 64 * kGiB;
  sc.cluster.node_pools.push_back(p);
  return sc;
}

inline Scenario simpy_workload(std::uint32_t tasks, int nodes) {
  Scenario sc = fan_out(tasks, nodes);
  Component& c = sc.pipeline.steps[0].component;
  c.duration = DurationModel{};
  c.duration.base = Duration::from_s(60);
  c.failure.p = 0;
  c.input = DataSize{};
  sc.cluster.storage.read_bytes_per_second = 0;
  sc.overheads.default_image_size = 1000 * kMiB;            // 5 s at 200 MiB/s
  sc.cluster.scheduler.percentage_of_nodes_to_score = 100;  // the SimPy model scores every node
  // The SimPy model scores with LeastAllocated alone (the simulator's scoring before the default
  // profile): BalancedAllocation and ImageLocality off. TaintToleration and NodeAffinity are constants
  // here (no taints, no preferred terms).
  sc.cluster.scheduler.score_weights.node_resources_balanced_allocation = 0;
  sc.cluster.scheduler.score_weights.image_locality = 0;
  return sc;
}

// One run of the SimPy workload in this process, for cold-process comparisons: the caller measures the
// whole process's CPU time (start-up, building the scenario, unrolling, simulating). `records`: the
// trace with its attempt records, or the run's summary only (SimOptions::records false, as a sweep runs).
// Prints the makespan and the counts both sides must agree on, as one JSON line.
inline int simpy_cold_run(std::uint32_t tasks, int nodes, bool records = true) {
  const Scenario sc = simpy_workload(tasks, nodes);
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimStats st;
  sim::SimOptions o;
  o.records = records;
  const Trace t = sim::simulate(sc, plan, o, st);
  std::printf("{\"makespan_s\": %.3f, \"decisions\": %llu, \"events\": %llu, \"attempt_records\": %zu}\n",
              makespan_s(t), static_cast<unsigned long long>(st.scheduling_attempts),
              static_cast<unsigned long long>(st.events), t.attempts.size());
  return 0;
}

}  // namespace shardflow::bench
