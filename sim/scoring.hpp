// kube-scheduler's resource scoring formulas, in the integer arithmetic kube-scheduler uses
// (pkg/scheduler/framework/plugins/noderesources). A score is 0..100 (MaxNodeScore).
//
// `requested` is what the node would have requested with the pod placed on it (the node's requests
// plus the pod's), `allocatable` what the node offers. NodeResourcesFit scores cpu and memory with
// weight 1 each and counts a container without requests as 100m CPU and 200 MiB (the "non-zero"
// requests); BalancedAllocation uses the plain requests.
//
//   std::int64_t s = least_allocated_score({cpu_req, mem_req}, {cpu_alloc, mem_alloc});
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <shardflow/core/units.hpp>

#include "divisor.hpp"

namespace shardflow::sim {

inline constexpr std::int64_t kMaxNodeScore = 100;
/// What kube-scheduler assumes for a pod that requests no CPU or memory, for scoring only.
inline constexpr MilliCpu kDefaultMilliCpuRequest = 100;
inline constexpr ByteCount kDefaultMemoryRequest = 200 * kMiB;

/// Requested and allocatable amounts of cpu (millicores) and memory (bytes) on one node.
struct CpuMem {
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
};

constexpr std::int64_t least_requested(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

constexpr std::int64_t most_requested(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return requested * kMaxNodeScore / capacity;
}

/// least_requested and most_requested with `by_capacity` = Divisor(capacity): the same values.
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

/// NodeResourcesFit, LeastAllocated: the weight-averaged free fraction (weights 1, 1).
constexpr std::int64_t least_allocated_score(CpuMem requested, CpuMem allocatable) {
  std::int64_t score = 0, weights = 0;
  if (allocatable.cpu != 0) score += least_requested(requested.cpu, allocatable.cpu), ++weights;
  if (allocatable.memory != 0) score += least_requested(requested.memory, allocatable.memory), ++weights;
  return weights == 2 ? score / 2 : weights == 1 ? score : 0;  // constant divisors: no division instruction
}

/// NodeResourcesFit, MostAllocated: the weight-averaged used fraction (weights 1, 1).
constexpr std::int64_t most_allocated_score(CpuMem requested, CpuMem allocatable) {
  std::int64_t score = 0, weights = 0;
  if (allocatable.cpu != 0) score += most_requested(requested.cpu, allocatable.cpu), ++weights;
  if (allocatable.memory != 0) score += most_requested(requested.memory, allocatable.memory), ++weights;
  return weights == 2 ? score / 2 : weights == 1 ? score : 0;
}

/// NodeResourcesBalancedAllocation: (1 - standard deviation of the requested fractions) * 100,
/// fractions capped at 1; with two resources the deviation is |f_cpu - f_mem| / 2.
inline std::int64_t balanced_allocation_score(CpuMem requested, CpuMem allocatable) {
  double f[2];
  int n = 0;
  if (allocatable.cpu != 0)
    f[n++] = std::min(1.0, static_cast<double>(requested.cpu) / static_cast<double>(allocatable.cpu));
  if (allocatable.memory != 0)
    f[n++] = std::min(1.0, static_cast<double>(requested.memory) / static_cast<double>(allocatable.memory));
  const double std_dev = n == 2 ? std::abs((f[0] - f[1]) / 2) : 0.0;
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
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
