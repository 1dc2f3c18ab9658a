// The scheduler's fast paths of kube-scheduler's scoring (the plugins themselves, as pure functions, are
// in scoring_plugins.hpp): NodeResourcesFit's per-resource scores with a precomputed divisor per pool
// capacity, and numFeasibleNodesToFind. A score is 0..100 (MaxNodeScore).
//
//   std::int64_t s = least_requested(cpu_requested, cpu_allocatable, Divisor(cpu_allocatable));
#pragma once

#include <algorithm>
#include <cstdint>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/units.hpp>

#include "divisor.hpp"

namespace shardflow::sim {

inline constexpr std::int64_t kMaxNodeScore = 100;
/// What kube-scheduler assumes for a pod that requests no CPU or memory, for scoring only (core's).
using shardflow::kDefaultMemoryRequest;
using shardflow::kDefaultMilliCpuRequest;

/// Requested and allocatable amounts of cpu (millicores) and memory (bytes) on one node.
struct CpuMem {
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
};

/// NodeResourcesFit's per-resource scores (plugins::least_requested_score and most_requested_score)
/// with `by_capacity` = Divisor(capacity): the same values without a divide instruction.
constexpr std::int64_t least_requested(std::int64_t requested, std::int64_t capacity,
                                       const Divisor& by_capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return by_capacity.divide((capacity - requested) * kMaxNodeScore);
}
constexpr std::int64_t most_requested(std::int64_t requested, std::int64_t capacity,
                                      const Divisor& by_capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return by_capacity.divide(requested * kMaxNodeScore);
}

/// kube-scheduler's numFeasibleNodesToFind: how many feasible nodes to find before scoring.
/// `percentage` 0 means the adaptive default 50 - nodes/125, at least 5 percent; never fewer than
/// 100 nodes (or all of them when there are fewer).
constexpr std::int64_t num_feasible_nodes_to_find(int percentage, std::int64_t all_nodes) {
  constexpr std::int64_t kMinFeasibleNodesToFind = 100;
  constexpr std::int64_t kMinFeasibleNodesPercentageToFind = 5;
  if (all_nodes < kMinFeasibleNodesToFind || percentage >= 100) return all_nodes;
  std::int64_t pct = percentage;
  if (pct <= 0) {
    pct = 50 - all_nodes / 125;
    if (pct < kMinFeasibleNodesPercentageToFind) pct = kMinFeasibleNodesPercentageToFind;
  }
  const std::int64_t n = all_nodes * pct / 100;
  return n < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : n;
}

}  // namespace shardflow::sim
