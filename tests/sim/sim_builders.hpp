// Helpers to build scenarios in code for the simulator tests: zero overheads unless a test sets them,
// so that makespans are exact.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/sim/simulator.hpp>

#include "core/pipeline_builders.hpp"

namespace shardflow::simtest {

inline Step task(std::string name, double seconds, std::vector<StepIndex> deps = {}, MilliCpu cpu = 1000) {
  Step s;
  s.name = std::move(name);
  s.deps = std::move(deps);
  s.component.duration.base = Duration::from_seconds(seconds);
  s.component.resources.cpu = cpu;
  s.component.resources.memory = kGiB;
  return s;
}

// Loops and groups are built as in the core tests.
using testing::group;
inline Step loop(Step s, std::uint32_t count, std::uint32_t parallelism = 0) {
  return testing::with_loop(std::move(s), count, parallelism);
}

inline NodePool pool(std::string name, int count, MilliCpu cpu, ByteCount memory = 64 * kGiB) {
  NodePool p;
  p.name = std::move(name);
  p.count = count;
  p.cpu = cpu;
  p.memory = memory;
  return p;
}

inline Scenario scenario(std::vector<Step> steps, std::vector<NodePool> pools) {
  Scenario s;
  s.name = "test";
  s.pipeline = Pipeline{"test", std::move(steps)};
  s.cluster.node_pools = std::move(pools);
  return s;
}

inline Trace run(const Scenario& s, std::uint64_t seed = 1) {
  const Plan plan = Plan::unroll(s.pipeline);
  return sim::simulate(s, plan, sim::SimOptions{seed, {}, Duration::from_s(10LL * 365 * 24 * 3600)});
}

inline SimTime makespan(const Trace& t) {
  SimTime m = SimTime::zero();
  for (const AttemptRecord& a : t.attempts) m = std::max(m, a.finished);
  return m;
}

inline std::size_t count_outcome(const Trace& t, Outcome o) {
  return static_cast<std::size_t>(std::count_if(t.attempts.begin(), t.attempts.end(),
                                                [o](const AttemptRecord& a) { return a.outcome == o; }));
}

/// The most attempts of `step` running (started..finished) at any instant.
inline int max_concurrent(const Trace& t, std::uint32_t step) {
  std::vector<std::pair<std::int64_t, int>> ev;
  for (const AttemptRecord& a : t.attempts)
    if (a.step == step && a.started != kNever) {
      ev.emplace_back(a.started.ns(), 1);
      ev.emplace_back(a.finished.ns(), -1);
    }
  std::sort(ev.begin(), ev.end());  // at equal times, ends (-1) come before starts
  int cur = 0, best = 0;
  for (auto& e : ev) best = std::max(best, cur += e.second);
  return best;
}

}  // namespace shardflow::simtest
