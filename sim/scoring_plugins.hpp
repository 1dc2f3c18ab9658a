// kube-scheduler v1.36's score plugins, as pure functions in the scheduler's own arithmetic (int64
// with truncating division; float64 where the plugin uses it, in the same order of operations), and
// their weighted sum. Sources (pkg/scheduler/...): apis/config/v1/default_plugins.go (weights),
// framework/plugins/noderesources/{least_allocated,most_allocated,requested_to_capacity_ratio,
// balanced_allocation,resource_allocation}.go, tainttoleration/taint_toleration.go,
// nodeaffinity/node_affinity.go, imagelocality/image_locality.go, helper/{normalize_score,
// shape_score}.go, schedule_one.go and framework/runtime (RunScorePlugins).
//
// How kube-scheduler combines them (RunScorePlugins): each enabled plugin scores every feasible node
// (0..100); a plugin with a NormalizeScore extension then rescales its scores over the feasible nodes;
// the node's total is the sum of weight_p * score_p; the highest total wins, ties broken uniformly at
// random (selectHost). A plugin whose PreScore returns Skip adds nothing (as if it scored 0 everywhere).
//
// ---- Which plugins are per-node keys (for the simulator's score tree) ---------------------------------
//
// The simulator finds the best node with a tree over a per-node key, updated when a node's usage
// changes. A plugin fits that if its normalized score is a function of the node alone (its pool's shape,
// its usage, its images, labels and taints) for a given pod shape.
//
//   NodeResourcesFit (LeastAllocated, MostAllocated, RequestedToCapacityRatio)  PER NODE.
//       f(allocatable, node's non-zero requests + pod's non-zero requests, resource weights). No
//       normalization. Changes only when the node's usage changes.
//   NodeResourcesBalancedAllocation (v1.36)  PER NODE.
//       f(allocatable, node's plain requests with and without the pod). No normalization. Skipped
//       (0 everywhere) for a pod that requests nothing.
//   ImageLocality  PER NODE, WITH GLOBAL INPUTS.
//       f(images on the node, each image's spread = nodes having it / all nodes in the cluster, the
//       pod's container count). No normalization, but when an image reaches one more node (a pull
//       finishes) or the node count changes (autoscaling, failures), the key of every node holding
//       that image (or every node) changes; those nodes need re-keying.
//   TaintToleration  NOT PER NODE: needs the max over the feasible nodes.
//       raw = number of PreferNoSchedule taints the pod does not tolerate (per pool: taints are a
//       pool's); score = 100 - 100 * raw / max(raw over feasible nodes), or 100 for all when that max
//       is 0 (DefaultNormalizeScore, reversed). The max moves with the feasible set, so the trade-off
//       against the other plugins does too.
//   NodeAffinity (preferred terms)  NOT PER NODE: needs the max over the feasible nodes.
//       raw = sum of the weights of the preferred terms whose match_labels the node's labels satisfy
//       (per pool); score = 100 * raw / max(raw over feasible nodes), 0 for all when that max is 0
//       (DefaultNormalizeScore, not reversed). Skipped when the pod has no preferred terms.
//   PodTopologySpread, InterPodAffinity  CONSTANT for shardflow's pods: they can be left out.
//       PodTopologySpread scores only with topologySpreadConstraints; the pods our orchestrators create
//       (Argo workflow pods, KFP driver/executor pods, Job pods) have none, and the system default
//       constraints (hostname maxSkew 3, zone maxSkew 5) apply only to pods selected by a Service,
//       ReplicationController, ReplicaSet or StatefulSet (helper.DefaultSelector): with an empty
//       selector PreScore returns Skip. InterPodAffinity scores from the incoming pod's preferred
//       (anti-)affinity terms and from existing pods' affinity terms that match it; none of our pods
//       carry any, so PreScore returns Skip too. Both add the same amount (0) to every node, so they
//       cannot change the argmax. (A user-made headless Service selecting an indexed Job's pods would
//       bring the default spread constraints in; shardflow does not create one.)
//   DynamicResources (weight 2 when the DynamicResourceAllocation gate is on, the default since v1.34)
//   and VolumeBinding (scores only with StorageCapacityScoring) skip pods without resource claims or
//   volume claims; ours have none, so they are not modelled.
//
// Both normalized plugins depend on the node only through its pool (taints and labels are per pool).
// With every eligible pool's raw equal (no PreferNoSchedule taints, no preferred affinity, the common
// case) they are constants, and the simulator adds them to the key. Otherwise sim/scheduler.hpp
// normalizes them at the decision over the nodes the search found (Scheduler::pick_normalized),
// visiting each: O(numFeasibleNodesToFind), what kube-scheduler itself spends. (Indexing them per
// pool, one tree per pool and class, would make that O(pools x log nodes); not needed so far.)
//
//   std::array<FitResource, 3> r = fit_resources(weights, node, pod);
//   std::int64_t fit = fit_least_allocated(r);
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/pipeline.hpp>
#include <shardflow/core/taint.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::sim::plugins {

inline constexpr std::int64_t kMaxNodeScore = 100;
/// config.MaxCustomPriorityScore: RequestedToCapacityRatio's shape scores run 0..10.
inline constexpr std::int64_t kMaxCustomPriorityScore = 10;
/// What kube-scheduler counts for a container without a cpu or memory request (NodeResourcesFit only).
using shardflow::kDefaultMemoryRequest;
using shardflow::kDefaultMilliCpuRequest;

// ---- NodeResourcesFit ------------------------------------------------------------------------------

/// One resource as NodeResourcesFit sees it on one node (resource_allocation.go's requested[i] and
/// allocatable[i]). `allocatable` 0 leaves the resource out: a resource the node does not have, or an
/// extended resource the pod does not request (the plugin returns (0, 0) for those).
struct FitResource {
  std::int64_t requested = 0;    // the node's non-zero requests plus the pod's
  std::int64_t allocatable = 0;  // 0 = not scored
  std::int64_t weight = 1;
};

/// The node's usage, for building FitResource and BalanceResource.
struct NodeUsage {
  std::int64_t cpu_allocatable = 0;  // millicores
  std::int64_t memory_allocatable = 0;
  std::int64_t gpu_allocatable = 0;
  std::int64_t cpu_requested = 0;  // sum of the pods' plain requests
  std::int64_t memory_requested = 0;
  std::int64_t gpu_requested = 0;
  std::int64_t cpu_nonzero_requested = 0;  // sum of the pods' non-zero requests (NodeInfo.NonZeroRequested)
  std::int64_t memory_nonzero_requested = 0;
};

/// One pod's plain requests (one container; Resources holds the pod's total).
struct PodRequests {
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
  std::int64_t gpu = 0;
};

/// The non-zero request of a one-container pod: 100m and 200 MiB stand in for missing requests.
constexpr std::int64_t nonzero_cpu(std::int64_t cpu) {
  return cpu == 0 ? kDefaultMilliCpuRequest : cpu;
}
constexpr std::int64_t nonzero_memory(std::int64_t memory) {
  return memory == 0 ? kDefaultMemoryRequest : memory;
}

/// NodeResourcesFit's resources for one node and pod, in the order cpu, memory, nvidia.com/gpu. A
/// resource with weight 0 (not configured) or a gpu the pod does not request is left out.
constexpr std::array<FitResource, 3> fit_resources(const FitResourceWeights& w, const NodeUsage& node,
                                                   const PodRequests& pod) {
  std::array<FitResource, 3> r{};
  if (w.cpu > 0) r[0] = {node.cpu_nonzero_requested + nonzero_cpu(pod.cpu), node.cpu_allocatable, w.cpu};
  if (w.memory > 0)
    r[1] = {node.memory_nonzero_requested + nonzero_memory(pod.memory), node.memory_allocatable, w.memory};
  if (w.gpu > 0 && pod.gpu > 0) r[2] = {node.gpu_requested + pod.gpu, node.gpu_allocatable, w.gpu};
  return r;
}

/// leastRequestedScore: (capacity - requested) * 100 / capacity; 0 when over capacity.
constexpr std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

/// mostRequestedScore: requested * 100 / capacity, requested capped at capacity.
constexpr std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0) return 0;
  return std::min(requested, capacity) * kMaxNodeScore / capacity;
}

/// sum(score(requested_i, allocatable_i) * weight_i) / sum(weight_i) over the scored resources (0 if none):
/// how LeastAllocated and MostAllocated combine their per-resource scores.
template <class Score>
constexpr std::int64_t fit_weighted_average(std::span<const FitResource> resources, Score score_of) {
  std::int64_t score = 0, weights = 0;
  for (const FitResource& r : resources) {
    if (r.allocatable == 0) continue;
    score += score_of(r.requested, r.allocatable) * r.weight;
    weights += r.weight;
  }
  return weights == 0 ? 0 : score / weights;
}

/// LeastAllocated: the weighted average of least_requested_score.
constexpr std::int64_t fit_least_allocated(std::span<const FitResource> resources) {
  return fit_weighted_average(resources, least_requested_score);
}

/// MostAllocated: the weighted average of most_requested_score.
constexpr std::int64_t fit_most_allocated(std::span<const FitResource> resources) {
  return fit_weighted_average(resources, most_requested_score);
}

/// helper.BuildBrokenLinearFunction: the shape's first score at or below its first utilization, its
/// last score above its last, linear in between with truncating integer division. `shape` holds
/// scores already scaled to 0..100 and utilizations in increasing order.
constexpr std::int64_t broken_linear(std::span<const UtilizationShapePoint> shape, std::int64_t p,
                                     std::int64_t score_scale = 1) {
  if (shape.empty()) return 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score * score_scale;
      const std::int64_t s0 = shape[i - 1].score * score_scale, s1 = shape[i].score * score_scale;
      const std::int64_t u0 = shape[i - 1].utilization, u1 = shape[i].utilization;
      return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
    }
  }
  return shape.back().score * score_scale;
}

/// RequestedToCapacityRatio. `shape` as configured (scores 0..10; the plugin multiplies them by
/// MaxNodeScore / MaxCustomPriorityScore = 10). Per resource: f(requested * 100 / capacity), or
/// f(100) when over capacity; resources scoring 0 are left out of the average (weight too); the
/// average is rounded to nearest (math.Round, halves away from zero).
inline std::int64_t fit_requested_to_capacity_ratio(std::span<const FitResource> resources,
                                                    std::span<const UtilizationShapePoint> shape) {
  constexpr std::int64_t kScale = kMaxNodeScore / kMaxCustomPriorityScore;
  constexpr std::int64_t kMaxUtilization = 100;
  std::int64_t score = 0, weights = 0;
  for (const FitResource& r : resources) {
    if (r.allocatable == 0) continue;
    const std::int64_t s = r.requested > r.allocatable
                               ? broken_linear(shape, kMaxUtilization, kScale)
                               : broken_linear(shape, r.requested * kMaxUtilization / r.allocatable, kScale);
    if (s > 0) {
      score += s * r.weight;
      weights += r.weight;
    }
  }
  if (weights == 0) return 0;
  return static_cast<std::int64_t>(std::round(static_cast<double>(score) / static_cast<double>(weights)));
}

/// NodeResourcesFit's score with the configured strategy.
inline std::int64_t fit_score(FitStrategy strategy, std::span<const FitResource> resources,
                              std::span<const UtilizationShapePoint> shape = {}) {
  switch (strategy) {
    case FitStrategy::least_allocated:
      return fit_least_allocated(resources);
    case FitStrategy::most_allocated:
      return fit_most_allocated(resources);
    case FitStrategy::requested_to_capacity_ratio:
      return fit_requested_to_capacity_ratio(resources, shape);
  }
  return 0;
}

// ---- NodeResourcesBalancedAllocation -----------------------------------------------------------------

/// One resource as BalancedAllocation (useRequested: plain requests, no non-zero defaults) sees it.
/// `allocatable` 0 leaves it out, as for FitResource.
struct BalanceResource {
  std::int64_t allocated = 0;  // the node's requests without the pod
  std::int64_t requested = 0;  // with the pod
  std::int64_t allocatable = 0;
};

/// BalancedAllocation's resources (its default args: cpu and memory) for one node and pod.
constexpr std::array<BalanceResource, 2> balance_resources(const NodeUsage& node, const PodRequests& pod) {
  return {
      BalanceResource{node.cpu_requested, node.cpu_requested + pod.cpu, node.cpu_allocatable},
      BalanceResource{node.memory_requested, node.memory_requested + pod.memory, node.memory_allocatable}};
}

/// PreScore returns Skip for a pod that requests none of the resources (a best-effort pod): the plugin
/// then adds 0 on every node.
constexpr bool balanced_allocation_skips(const PodRequests& pod) {
  return pod.cpu == 0 && pod.memory == 0;
}

/// balancedResourceScore: int64((1 - std) * 100) over the fractions amount/allocatable (capped at 1)
/// of the resources with allocatable != 0. Two fractions: std = |f0 - f1| / 2; more: the population
/// standard deviation; fewer: 0 (score 100). `with_pod` picks requested or allocated.
inline std::int64_t balance_score(std::span<const BalanceResource> resources, bool with_pod) {
  const auto fraction = [with_pod](const BalanceResource& r) {
    const double f =
        static_cast<double>(with_pod ? r.requested : r.allocated) / static_cast<double>(r.allocatable);
    return f > 1 ? 1.0 : f;
  };
  std::size_t n = 0;
  double total = 0, first = 0, second = 0;
  for (const BalanceResource& r : resources) {
    if (r.allocatable == 0) continue;
    const double f = fraction(r);
    total += f;
    if (n == 0)
      first = f;
    else if (n == 1)
      second = f;
    ++n;
  }
  double std_dev = 0.0;
  if (n == 2) {
    std_dev = std::abs((first - second) / 2);
  } else if (n > 2) {
    const double mean = total / static_cast<double>(n);
    double sum = 0;
    for (const BalanceResource& r : resources) {
      if (r.allocatable == 0) continue;
      const double f = fraction(r);
      sum = sum + (f - mean) * (f - mean);
    }
    std_dev = std::sqrt(sum / static_cast<double>(n));
  }
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

/// The score before v1.36 (and this repository's balanced_allocation_score): the balance with the pod.
inline std::int64_t balanced_allocation_before_v136(std::span<const BalanceResource> resources) {
  return balance_score(resources, true);
}

/// v1.36 (kubernetes PR #135573): the pod's improvement of the node's balance,
///   50 + (50 + B_with_pod - B_without_pod) / 2
/// with both B in 50..100, so the score is in 50..100 and 75 when the balance does not change.
inline std::int64_t balanced_allocation_score_v136(std::span<const BalanceResource> resources) {
  const std::int64_t with_pod = balance_score(resources, true);
  const std::int64_t without_pod = balance_score(resources, false);
  return kMaxNodeScore / 2 + (kMaxNodeScore / 2 + with_pod - without_pod) / 2;
}

// ---- TaintToleration ----------------------------------------------------------------------------------

/// The raw score: how many of the node's PreferNoSchedule taints no toleration of the pod tolerates
/// (only tolerations with an empty or PreferNoSchedule effect count, which the effect check implies).
inline std::int64_t taint_toleration_raw(const std::vector<Taint>& node_taints,
                                         const std::vector<Toleration>& tolerations) {
  std::int64_t n = 0;
  for (const Taint& taint : node_taints) {
    if (taint.effect != "PreferNoSchedule") continue;
    if (std::none_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return tolerates(t, taint); }))
      ++n;
  }
  return n;
}

// ---- NodeAffinity -------------------------------------------------------------------------------------

/// Whether the node's labels contain every match_labels pair (an empty term matches no node, as an
/// empty NodeSelectorTerm matches nothing; the loader rejects empty terms).
inline bool preferred_term_matches(const std::map<std::string, std::string>& node_labels,
                                   const PreferredSchedulingTerm& term) {
  if (term.match_labels.empty()) return false;
  return std::all_of(term.match_labels.begin(), term.match_labels.end(), [&](const auto& kv) {
    const auto it = node_labels.find(kv.first);
    return it != node_labels.end() && it->second == kv.second;
  });
}

/// The raw score: the sum of the weights of the matching preferred terms.
inline std::int64_t node_affinity_raw(const std::map<std::string, std::string>& node_labels,
                                      std::span<const PreferredSchedulingTerm> terms) {
  std::int64_t sum = 0;
  for (const PreferredSchedulingTerm& t : terms)
    if (preferred_term_matches(node_labels, t)) sum += t.weight;
  return sum;
}

/// PreScore returns Skip when the pod has no preferred terms: the plugin adds 0 on every node.
inline bool node_affinity_skips(std::span<const PreferredSchedulingTerm> terms) {
  return terms.empty();
}

// ---- Normalization (helper.DefaultNormalizeScore) -------------------------------------------------------

/// One node's normalized score given the max raw score over the feasible nodes:
/// 100 * raw / max_raw (reversed: 100 minus that); when max_raw is 0, 100 reversed and raw (0) otherwise.
constexpr std::int64_t normalize_score(std::int64_t raw, std::int64_t max_raw, bool reverse) {
  if (max_raw == 0) return reverse ? kMaxNodeScore : raw;
  const std::int64_t s = kMaxNodeScore * raw / max_raw;
  return reverse ? kMaxNodeScore - s : s;
}

/// DefaultNormalizeScore over the scores of all feasible nodes, in place.
constexpr void default_normalize_score(std::span<std::int64_t> scores, bool reverse) {
  std::int64_t max_raw = 0;
  for (const std::int64_t s : scores) max_raw = std::max(max_raw, s);
  for (std::int64_t& s : scores) s = normalize_score(s, max_raw, reverse);
}

/// TaintToleration's NormalizeScore: reversed.
constexpr void normalize_taint_toleration(std::span<std::int64_t> raw) {
  default_normalize_score(raw, true);
}
/// NodeAffinity's NormalizeScore: not reversed.
constexpr void normalize_node_affinity(std::span<std::int64_t> raw) {
  default_normalize_score(raw, false);
}

// ---- ImageLocality ------------------------------------------------------------------------------------

inline constexpr std::int64_t kImageLocalityMinThreshold = 23 * kMiB;
inline constexpr std::int64_t kImageLocalityMaxContainerThreshold = 1000 * kMiB;

/// An image the pod uses that the node already has: its size and on how many of the cluster's nodes it is.
struct ImageOnNode {
  std::int64_t size = 0;  // bytes
  std::int64_t nodes_with_image = 0;
};

/// scaledImageScore: int64(size * (nodes_with_image / total_nodes)), in float64.
inline std::int64_t image_scaled_score(std::int64_t size, std::int64_t nodes_with_image,
                                       std::int64_t total_nodes) {
  if (total_nodes <= 0) return 0;
  const double spread = static_cast<double>(nodes_with_image) / static_cast<double>(total_nodes);
  return static_cast<std::int64_t>(static_cast<double>(size) * spread);
}

/// calculatePriority: the summed scaled sizes clamped to [23 MiB, 1000 MiB * containers], mapped
/// linearly (truncating) onto 0..100. `containers` counts init containers too.
constexpr std::int64_t image_locality_priority(std::int64_t sum_scores, std::int64_t containers) {
  const std::int64_t max_threshold = kImageLocalityMaxContainerThreshold * containers;
  if (max_threshold <= kImageLocalityMinThreshold) return 0;
  sum_scores = std::clamp(sum_scores, kImageLocalityMinThreshold, max_threshold);
  return kMaxNodeScore * (sum_scores - kImageLocalityMinThreshold) /
         (max_threshold - kImageLocalityMinThreshold);
}

/// ImageLocality's score: one entry per container of the pod whose image the node has (an image used
/// by two containers counts twice, as in sumImageScores); `total_nodes` = all nodes in the cluster.
inline std::int64_t image_locality_score(std::span<const ImageOnNode> present, std::int64_t total_nodes,
                                         std::int64_t containers) {
  std::int64_t sum = 0;
  for (const ImageOnNode& im : present) sum += image_scaled_score(im.size, im.nodes_with_image, total_nodes);
  return image_locality_priority(sum, containers);
}

// ---- The weighted sum ---------------------------------------------------------------------------------

/// One node's scores from each plugin. fit, balanced and image are final (no normalization);
/// taint_raw and affinity_raw are raw and get normalized over the feasible nodes.
struct NodeScores {
  std::int64_t fit = 0;
  std::int64_t balanced = 0;
  std::int64_t taint_raw = 0;
  std::int64_t affinity_raw = 0;
  std::int64_t image = 0;
};

/// One node's normalized scores (each 0..100).
struct NormalizedScores {
  std::int64_t fit = 0;
  std::int64_t balanced = 0;
  std::int64_t taint = 0;
  std::int64_t affinity = 0;
  std::int64_t image = 0;
};

/// total = sum of weight_p * score_p over the plugins with weight > 0. PodTopologySpread and
/// InterPodAffinity are skipped for our pods and add 0.
constexpr std::int64_t weighted_total(const ScoreWeights& w, const NormalizedScores& s) {
  return w.node_resources_fit * s.fit + w.node_resources_balanced_allocation * s.balanced +
         w.taint_toleration * s.taint + w.node_affinity * s.affinity + w.image_locality * s.image;
}

/// The totals of all feasible nodes: normalizes TaintToleration (reversed) and NodeAffinity over
/// them, then sums with the weights. A disabled plugin (weight 0) adds nothing. A skipped plugin
/// scores 0: pass balanced = 0 when balanced_allocation_skips(pod); NodeAffinity without preferred
/// terms has raw 0 everywhere, which normalizes to 0 as Skip would.
inline std::vector<std::int64_t> weighted_totals(const ScoreWeights& w, std::span<const NodeScores> nodes) {
  std::int64_t max_taint = 0, max_affinity = 0;
  for (const NodeScores& n : nodes) {
    max_taint = std::max(max_taint, n.taint_raw);
    max_affinity = std::max(max_affinity, n.affinity_raw);
  }
  std::vector<std::int64_t> totals;
  totals.reserve(nodes.size());
  for (const NodeScores& n : nodes) {
    const NormalizedScores s{n.fit, n.balanced, normalize_score(n.taint_raw, max_taint, true),
                             normalize_score(n.affinity_raw, max_affinity, false), n.image};
    totals.push_back(weighted_total(w, s));
  }
  return totals;
}

}  // namespace shardflow::sim::plugins
