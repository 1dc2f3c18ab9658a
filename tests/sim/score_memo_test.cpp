// A pod class memoizes its node-only score (Scheduler::memoized_node_part, keyed by the node's pool and
// usage): on every node state tried, the memoized score must equal the one computed afresh
// (Scheduler::node_part), whichever states collide in the class's table or evict each other.
#include <cstdint>

#include <catch2/catch.hpp>

#include <shardflow/core/random.hpp>
#include <shardflow/core/scenario.hpp>

#include "sim/scheduler.hpp"

using namespace shardflow;
using namespace shardflow::sim;

TEST_CASE("Scheduler: a class's memoized node score equals the score computed afresh", "[sim]") {
  // Two pools of different shapes (the same usage scores differently on each), classes with and without
  // a GPU, the default profile (NodeResourcesFit LeastAllocated + BalancedAllocation: memoized).
  const Scenario sc = load_scenario_text(R"(name: memo
pipeline:
  steps:
    - name: cpu
      parallel_for: {count: 4}
      duration: {base: 10s}
      resources: {cpu: 1500m, memory: 3Gi}
    - name: gpu
      after: [cpu]
      duration: {base: 10s}
      resources: {cpu: 4, memory: 16Gi, gpu: 1}
    - name: small
      after: [gpu]
      duration: {base: 10s}
      resources: {cpu: 250m}
cluster:
  node_pools:
    - {name: a, cpu: 16, memory: 64Gi, count: 3}
    - {name: b, cpu: 32, memory: 128Gi, gpu: 4, count: 3}
)",
                                         "memo.yaml");
  const Plan plan = Plan::unroll(sc.pipeline);
  const Scheduler sched(sc, plan, Rng(1));
  Nodes nodes(sc.cluster.node_pools, 6, true, sched.size(), sched.images());
  std::uint32_t record = 0;
  for (std::uint32_t p = 0; p < 2; ++p)
    for (int n = 0; n < initial_count(sc.cluster.node_pools[p]); ++n) nodes.open_slot(p, record++);
  REQUIRE(record == 6);
  std::uint32_t memoized = 0;
  for (std::uint32_t c = 0; c < sched.size(); ++c) memoized += sched.cls(c).memoize ? 1 : 0;
  REQUIRE(memoized == sched.size());  // the step classes and the driver class

  Rng rng(2026);
  std::uint64_t checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto slot = static_cast<std::uint32_t>(rng.below(6));
    Slot& s = nodes.slot(slot);
    // Few values per field, so that states repeat (memo hits) and many differ (misses, evictions);
    // the non-zero requests move apart from the plain ones as pods without requests would make them.
    s.cpu_used = static_cast<MilliCpu>(rng.below(33)) * 500;
    s.memory_used = static_cast<ByteCount>(rng.below(17)) * 4 * kGiB;
    s.gpu_used = static_cast<int>(rng.below(3));
    s.nz_cpu = s.cpu_used + static_cast<MilliCpu>(rng.below(3)) * 100;
    s.nz_memory = s.memory_used + static_cast<ByteCount>(rng.below(3)) * 200 * kMiB;
    for (std::uint32_t c = 0; c < sched.size(); ++c) {
      const PodClass& pc = sched.cls(c);
      INFO("slot " << slot << " class " << c << " cpu " << s.cpu_used << " memory " << s.memory_used
                   << " gpu " << s.gpu_used << " nz " << s.nz_cpu << " " << s.nz_memory);
      REQUIRE(sched.score_node(pc, slot, nodes) == sched.node_part(pc, s, nodes));
      ++checked;
    }
  }
  CHECK(checked == 20000 * sched.size());
}
