// kube-scheduler v1.36's score plugins (sim/scoring_plugins.hpp): exact integers on
// hand-computed nodes, normalization, the weighted sum, and the scenario keys that configure them.
#include "sim/scoring_plugins.hpp"

#include <array>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

using namespace shardflow;
using namespace shardflow::sim::plugins;

namespace {

std::vector<UtilizationShapePoint> shape(std::initializer_list<UtilizationShapePoint> points) {
  return points;
}

std::string error_of(const std::string& yaml) {
  try {
    (void)load_scenario_text(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

// A valid scenario with `scheduler` as cluster.scheduler's flow mapping (line 5, column 14).
std::string with_scheduler(const std::string& scheduler) {
  return "name: t\n"
         "pipeline: {steps: [{name: a}]}\n"
         "cluster:\n"
         "  node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1, labels: {zone: a}}]\n"
         "  scheduler: " +
         scheduler + "\n";
}

// A valid scenario whose one step is `step` (line 7, column 7).
std::string with_step(const std::string& step) {
  return "name: t\n"
         "cluster:\n"
         "  node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1, labels: {zone: a}}]\n"
         "pipeline:\n"
         "  steps:\n"
         "    -\n"
         "      " +
         step + "\n";
}

}  // namespace

TEST_CASE("NodeResourcesFit: LeastAllocated and MostAllocated with resource weights", "[sim]") {
  // Node: cpu 4000m, memory 8Gi, gpu 4; with the pod: cpu 1500m, memory 3Gi, gpu 2.
  // Weights cpu 1, memory 2, gpu 3.
  const std::array<FitResource, 3> r{FitResource{1500, 4000, 1}, FitResource{3 * kGiB, 8 * kGiB, 2},
                                     FitResource{2, 4, 3}};
  // Least: cpu (4000-1500)*100/4000 = 62 (62.5); memory (8-3)*100/8 = 62 (62.5); gpu (4-2)*100/4 = 50.
  //        (62*1 + 62*2 + 50*3) / 6 = 336 / 6 = 56.
  CHECK(fit_least_allocated(r) == 56);
  // Most: cpu 1500*100/4000 = 37; memory 3*100/8 = 37; gpu 2*100/4 = 50; (37 + 74 + 150) / 6 = 43 (43.5).
  CHECK(fit_most_allocated(r) == 43);
  // A resource with allocatable 0 is left out, weight and all: (62 + 124) / 3 = 62.
  const std::array<FitResource, 3> no_gpu{r[0], r[1], FitResource{0, 0, 3}};
  CHECK(fit_least_allocated(no_gpu) == 62);
  CHECK(fit_least_allocated({}) == 0);
  // Weights 1, 1 and no gpu: cpu (4000-1500)*100/4000 = 62, memory (10-3)*100/10 = 70 -> 132/2 = 66;
  // most: cpu 37, memory 30 -> 67/2 = 33.
  const std::array<FitResource, 2> cm{FitResource{1500, 4000, 1}, FitResource{3 * kGiB, 10 * kGiB, 1}};
  CHECK(fit_least_allocated(cm) == 66);
  CHECK(fit_most_allocated(cm) == 33);
  // Over capacity: least gives 0 for that resource, most caps at 100.
  CHECK(least_requested_score(5000, 4000) == 0);
  CHECK(most_requested_score(5000, 4000) == 100);
}

TEST_CASE("NodeResourcesFit: fit_resources uses non-zero requests and scores gpu only when requested",
          "[sim]") {
  NodeUsage node;
  node.cpu_allocatable = 4000;
  node.memory_allocatable = 8 * kGiB;
  node.gpu_allocatable = 4;
  node.cpu_nonzero_requested = 1000;
  node.memory_nonzero_requested = 2 * kGiB;
  node.gpu_requested = 1;
  const FitResourceWeights w{1, 2, 3};
  const auto r = fit_resources(w, node, {500, kGiB, 1});
  CHECK(r[0].requested == 1500);
  CHECK(r[1].requested == 3 * kGiB);
  CHECK(r[2].requested == 2);
  CHECK(fit_least_allocated(r) == 56);  // the case above
  // The pod asks for no gpu: the gpu is not scored (allocatable 0).
  CHECK(fit_resources(w, node, {500, kGiB, 0})[2].allocatable == 0);
  CHECK(fit_least_allocated(fit_resources(w, node, {500, kGiB, 0})) == 62);
  // The default weights score cpu and memory only.
  CHECK(fit_resources(FitResourceWeights{}, node, {500, kGiB, 1})[2].allocatable == 0);
  // A pod without requests counts as 100m and 200Mi: on an empty 1000m / 1Gi node,
  // cpu (1000-100)*100/1000 = 90, memory (1024-200)*100/1024 = 80 (80.47); (90 + 80) / 2 = 85.
  NodeUsage small;
  small.cpu_allocatable = 1000;
  small.memory_allocatable = kGiB;
  CHECK(fit_least_allocated(fit_resources(FitResourceWeights{}, small, {0, 0, 0})) == 85);
}

TEST_CASE("NodeResourcesFit: RequestedToCapacityRatio's broken-linear shape, scaled by 10", "[sim]") {
  // Shape {0: 0, 50: 10, 100: 3} scales to {0: 0, 50: 100, 100: 30}.
  const auto s = shape({{0, 0}, {50, 10}, {100, 3}});
  CHECK(broken_linear(s, 0, 10) == 0);
  CHECK(broken_linear(s, 25, 10) == 50);   // 0 + 100*25/50
  CHECK(broken_linear(s, 75, 10) == 65);   // 100 + (30-100)*(75-50)/50 = 100 - 1750/50 = 65
  CHECK(broken_linear(s, 77, 10) == 63);   // 100 + (-70*27)/50 = 100 + (-1890/50 = -37.8 -> -37, toward 0)
  CHECK(broken_linear(s, 100, 10) == 30);  // the last point
  CHECK(broken_linear(shape({{20, 4}, {80, 8}}), 5, 10) == 40);   // below the first point: its score
  CHECK(broken_linear(shape({{20, 4}, {80, 8}}), 95, 10) == 80);  // above the last: its score

  // Shape {0: 10, 100: 0} (prefers empty nodes): cpu 1500/4000 -> utilization 37 -> 100 - 3700/100 = 63;
  // memory 3Gi/8Gi -> 37 -> 63; (63 + 63) / 2 = 63.
  const std::array<FitResource, 2> r{FitResource{1500, 4000, 1}, FitResource{3 * kGiB, 8 * kGiB, 1}};
  CHECK(fit_requested_to_capacity_ratio(r, shape({{0, 10}, {100, 0}})) == 63);
  // Rounded, not truncated: shape {0: 0, 100: 10}; cpu 1000/4000 -> 25; memory 9Gi/25Gi -> 36;
  // (25 + 36) / 2 = 30.5 -> 31 (math.Round).
  const std::array<FitResource, 2> half{FitResource{1000, 4000, 1}, FitResource{9 * kGiB, 25 * kGiB, 1}};
  CHECK(fit_requested_to_capacity_ratio(half, shape({{0, 0}, {100, 10}})) == 31);
  // A resource that scores 0 drops out of the average with its weight: cpu 0/4000 -> 0 (dropped),
  // memory 4Gi/8Gi -> 50; 50 / 1 = 50, not 25.
  const std::array<FitResource, 2> idle_cpu{FitResource{0, 4000, 1}, FitResource{4 * kGiB, 8 * kGiB, 1}};
  CHECK(fit_requested_to_capacity_ratio(idle_cpu, shape({{0, 0}, {100, 10}})) == 50);
  // Over capacity scores f(100).
  const std::array<FitResource, 1> over{FitResource{5000, 4000, 1}};
  CHECK(fit_requested_to_capacity_ratio(over, shape({{0, 0}, {100, 10}})) == 100);
  CHECK(fit_score(FitStrategy::requested_to_capacity_ratio, r, shape({{0, 10}, {100, 0}})) == 63);
  CHECK(fit_score(FitStrategy::least_allocated, r) == fit_least_allocated(r));
}

TEST_CASE("BalancedAllocation v1.36 scores the pod's improvement of the node's balance", "[sim]") {
  // Node cpu 4000m, memory 8Gi; cpu 2000m and memory 2Gi requested: fractions 0.5, 0.25,
  // B_without = (1 - 0.25/2) * 100 = 87 (87.5). The pod (cpu 0, memory 2Gi) makes them 0.5, 0.5:
  // B_with = 100. Score 50 + (50 + 100 - 87) / 2 = 50 + 31 = 81 (the old formula: 100).
  const std::array<BalanceResource, 2> evens{BalanceResource{2000, 2000, 4000},
                                             BalanceResource{2 * kGiB, 4 * kGiB, 8 * kGiB}};
  CHECK(balance_score(evens, false) == 87);
  CHECK(balance_score(evens, true) == 100);
  CHECK(balanced_allocation_score_v136(evens) == 81);
  CHECK(balanced_allocation_before_v136(evens) == 100);
  // No change in balance: 75. An empty node and a pod with equal fractions: B 100 both ways.
  const std::array<BalanceResource, 2> same{BalanceResource{0, 1000, 4000},
                                            BalanceResource{0, 2 * kGiB, 8 * kGiB}};
  CHECK(balanced_allocation_score_v136(same) == 75);
  // Fractions are capped at 1: with cpu 9000/4000 -> 1 and memory 1Gi/10Gi -> 0.1, B = 55 as before.
  const std::array<BalanceResource, 2> over{BalanceResource{0, 9000, 4000},
                                            BalanceResource{0, kGiB, 10 * kGiB}};
  CHECK(balance_score(over, true) == 55);
  // One resource (the other has allocatable 0): std 0, B = 100.
  const std::array<BalanceResource, 2> one{BalanceResource{0, 3000, 4000}, BalanceResource{0, kGiB, 0}};
  CHECK(balance_score(one, true) == 100);
  // Three resources: the population standard deviation. Fractions 0.5, 0.5, 1 (1.5 capped): mean 2/3,
  // variance (1/36 + 1/36 + 1/9) / 3 = 1/18, std 0.2357, B = 76 (76.43); without the pod all 0: 100.
  // Score 50 + (50 + 76 - 100) / 2 = 63.
  const std::array<BalanceResource, 3> three{
      BalanceResource{0, 2000, 4000}, BalanceResource{0, 4 * kGiB, 8 * kGiB}, BalanceResource{0, 3, 2}};
  CHECK(balance_score(three, true) == 76);
  CHECK(balanced_allocation_score_v136(three) == 63);
  // Plain requests, no non-zero defaults; a pod that requests nothing is skipped (adds 0).
  NodeUsage node;
  node.cpu_allocatable = 4000;
  node.memory_allocatable = 8 * kGiB;
  node.cpu_requested = 2000;
  node.memory_requested = 2 * kGiB;
  node.cpu_nonzero_requested = 2100;  // not used by BalancedAllocation
  const auto b = balance_resources(node, {0, 2 * kGiB, 0});
  CHECK(b[0].allocated == 2000);
  CHECK(b[0].requested == 2000);
  CHECK(b[1].requested == 4 * kGiB);
  CHECK(balanced_allocation_score_v136(b) == 81);
  CHECK(balanced_allocation_skips({0, 0, 0}));
  CHECK_FALSE(balanced_allocation_skips({0, kGiB, 0}));
}

TEST_CASE("BalancedAllocation: v1.36 and the old formula rank two nodes the other way round", "[sim]") {
  // Both nodes: cpu 4000m, memory 8Gi. The pod: cpu 1000m (+0.25), memory 1Gi (+0.125).
  // X is empty: B_without = 100; with the pod 0.25, 0.125 -> std 0.0625 -> B_with = 93 (93.75).
  //   old = 93; v1.36 = 50 + (50 + 93 - 100) / 2 = 50 + 21 = 71.
  // Y has memory 4Gi requested: 0, 0.5 -> B_without = 75; with the pod 0.25, 0.625 -> std 0.1875 ->
  //   B_with = 81 (81.25). old = 81; v1.36 = 50 + (50 + 81 - 75) / 2 = 50 + 28 = 78.
  // The old formula prefers X (the most balanced result); v1.36 prefers Y (the pod improves it).
  const std::array<BalanceResource, 2> x{BalanceResource{0, 1000, 4000}, BalanceResource{0, kGiB, 8 * kGiB}};
  const std::array<BalanceResource, 2> y{BalanceResource{0, 1000, 4000},
                                         BalanceResource{4 * kGiB, 5 * kGiB, 8 * kGiB}};
  CHECK(balanced_allocation_before_v136(x) == 93);
  CHECK(balanced_allocation_before_v136(y) == 81);
  CHECK(balanced_allocation_score_v136(x) == 71);
  CHECK(balanced_allocation_score_v136(y) == 78);
}

TEST_CASE("TaintToleration: intolerable PreferNoSchedule taints, normalized reversed", "[sim]") {
  const std::vector<Taint> taints{
      {"a", "x", "PreferNoSchedule"}, {"b", "y", "PreferNoSchedule"}, {"c", "z", "NoSchedule"}};
  CHECK(taint_toleration_raw(taints, {}) == 2);  // NoSchedule is the filter's business
  CHECK(taint_toleration_raw(taints, {{"a", "Equal", "x", ""}}) == 1);
  CHECK(taint_toleration_raw(taints, {{"a", "Equal", "other", ""}}) == 2);        // wrong value
  CHECK(taint_toleration_raw(taints, {{"a", "Exists", "", "NoSchedule"}}) == 2);  // other effect
  CHECK(taint_toleration_raw(taints, {{"b", "Exists", "", "PreferNoSchedule"}}) == 1);
  CHECK(taint_toleration_raw(taints, {{"", "Exists", "", ""}}) == 0);  // tolerates everything
  CHECK(taint_toleration_raw({}, {}) == 0);
  // Raw 0, 1, 2, 3 -> max 3: 100 - 100*r/3 = 100, 100 - 33 = 67, 100 - 66 = 34, 0.
  std::vector<std::int64_t> s{0, 1, 2, 3};
  normalize_taint_toleration(s);
  CHECK(s == std::vector<std::int64_t>{100, 67, 34, 0});
  // All 0: every node gets 100.
  std::vector<std::int64_t> zero{0, 0, 0};
  normalize_taint_toleration(zero);
  CHECK(zero == std::vector<std::int64_t>{100, 100, 100});
  CHECK(normalize_score(1, 3, true) == 67);
}

TEST_CASE("tolerates: one ToleratesTaint for the filter (core) and the score (sim)", "[sim]") {
  const Taint gpu{"nvidia.com/gpu", "present", "NoSchedule"};
  CHECK(tolerates({"nvidia.com/gpu", "Exists", "", ""}, gpu));
  CHECK(tolerates({"nvidia.com/gpu", "Equal", "present", "NoSchedule"}, gpu));
  CHECK_FALSE(tolerates({"nvidia.com/gpu", "Equal", "absent", ""}, gpu));      // value
  CHECK_FALSE(tolerates({"nvidia.com/gpu", "Exists", "", "NoExecute"}, gpu));  // effect
  CHECK_FALSE(tolerates({"other", "Exists", "", ""}, gpu));                    // key
  CHECK(tolerates({"", "Exists", "", ""}, gpu));                               // every key
  CHECK(tolerates({"", "Exists", "", "NoSchedule"}, gpu));
  CHECK_FALSE(tolerates({"", "Exists", "", "PreferNoSchedule"}, gpu));
  // The filter uses the same test: a pool with that taint admits exactly the tolerating pods.
  NodePool pool;
  pool.taints = {gpu};
  CHECK(pool_admits(pool, {}, {{"nvidia.com/gpu", "Exists", "", ""}}));
  CHECK_FALSE(pool_admits(pool, {}, {{"nvidia.com/gpu", "Equal", "absent", ""}}));
  CHECK_FALSE(pool_admits(pool, {}, {}));
}

TEST_CASE("NodeAffinity: sum of matching preferred terms' weights, normalized", "[sim]") {
  const std::vector<PreferredSchedulingTerm> terms{
      {50, {{"zone", "a"}}}, {30, {{"zone", "a"}, {"disk", "ssd"}}}, {20, {{"gpu", "true"}}}};
  CHECK(node_affinity_raw({{"zone", "a"}, {"disk", "ssd"}}, terms) == 80);  // 50 + 30
  CHECK(node_affinity_raw({{"zone", "a"}}, terms) == 50);                   // the second needs disk too
  CHECK(node_affinity_raw({{"zone", "b"}}, terms) == 0);
  CHECK(node_affinity_raw({{"zone", "a"}, {"gpu", "true"}}, terms) == 70);  // 50 + 20
  CHECK(node_affinity_raw({{"zone", "a"}}, {}) == 0);
  CHECK(node_affinity_skips({}));
  CHECK_FALSE(preferred_term_matches({{"zone", "a"}}, PreferredSchedulingTerm{10, {}}));  // empty: no node
  // Raw 80, 50, 0, 70 -> max 80: 100*r/80 = 100, 62 (62.5), 0, 87 (87.5).
  std::vector<std::int64_t> s{80, 50, 0, 70};
  normalize_node_affinity(s);
  CHECK(s == std::vector<std::int64_t>{100, 62, 0, 87});
  std::vector<std::int64_t> zero{0, 0};
  normalize_node_affinity(zero);
  CHECK(zero == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("ImageLocality: scaled image sizes between 23 MiB and 1000 MiB per container", "[sim]") {
  // 500 MiB on 4 of 10 nodes: spread 0.4 -> 200 MiB = 209715200 bytes. One container: thresholds
  // 23 MiB = 24117248 and 1000 MiB = 1048576000; 100 * (209715200 - 24117248) / (1048576000 - 24117248)
  // = 18559795200 / 1024458752 = 18 (18.1).
  CHECK(image_scaled_score(500 * kMiB, 4, 10) == 200 * kMiB);
  const std::array<ImageOnNode, 1> one{ImageOnNode{500 * kMiB, 4}};
  CHECK(image_locality_score(one, 10, 1) == 18);
  // The spread is float64 and truncated: 1000 bytes on 1 of 3 nodes -> 333.
  CHECK(image_scaled_score(1000, 1, 3) == 333);
  // Below 23 MiB: 0. Above 1000 MiB per container: 100.
  CHECK(image_locality_score(std::array{ImageOnNode{20 * kMiB, 10}}, 10, 1) == 0);
  CHECK(image_locality_score(std::array{ImageOnNode{2000 * kMiB, 10}}, 10, 1) == 100);
  // Two containers raise the ceiling to 2000 MiB: 1200 MiB everywhere -> 100 * 1177 / 1977 = 59 (59.5).
  CHECK(image_locality_score(std::array{ImageOnNode{1200 * kMiB, 10}}, 10, 2) == 59);
  // Two images are summed: 600 MiB on 5/10 (300) + 400 MiB on 10/10 (400) = 700 MiB;
  // 100 * (700 - 23) / (2000 - 23) = 67700 / 1977 = 34 (34.2).
  CHECK(image_locality_score(std::array{ImageOnNode{600 * kMiB, 5}, ImageOnNode{400 * kMiB, 10}}, 10, 2) ==
        34);
  CHECK(image_locality_score({}, 10, 1) == 0);  // no image on the node
}

TEST_CASE("Score weights: the v1.36 defaults and the weighted sum over four feasible nodes", "[sim]") {
  const ScoreWeights w;
  CHECK(w.node_resources_fit == 1);
  CHECK(w.node_resources_balanced_allocation == 1);
  CHECK(w.taint_toleration == 3);
  CHECK(w.node_affinity == 2);
  CHECK(w.image_locality == 1);
  CHECK(w.pod_topology_spread == 2);
  CHECK(w.inter_pod_affinity == 2);
  CHECK(FitResourceWeights{} == FitResourceWeights{1, 1, 0});
  CHECK(SchedulerConfig{}.fit_strategy == FitStrategy::least_allocated);

  // fit, balanced, taint raw, affinity raw, image (balanced and image from the cases above).
  const std::vector<NodeScores> nodes{
      {70, 75, 0, 50, 0},    // n0
      {90, 81, 1, 0, 0},     // n1
      {50, 71, 0, 80, 18},   // n2
      {60, 78, 2, 80, 100},  // n3
  };
  // TaintToleration: max raw 2 -> 100, 100 - 50 = 50, 100, 0.  NodeAffinity: max 80 -> 62, 0, 100, 100.
  // n0: 70 + 75 + 3*100 + 2*62  + 0   = 569
  // n1: 90 + 81 + 3*50  + 2*0   + 0   = 321
  // n2: 50 + 71 + 3*100 + 2*100 + 18  = 639   <- the best
  // n3: 60 + 78 + 3*0   + 2*100 + 100 = 438
  CHECK(weighted_totals(w, nodes) == std::vector<std::int64_t>{569, 321, 639, 438});
  // Without n3 the taint max is 1: n1's TaintToleration drops from 50 to 0 (normalization needs the
  // feasible set, so it is not a per-node key): n1 = 90 + 81 + 0 + 0 + 0 = 171.
  CHECK(weighted_totals(w, std::span(nodes).first(3)) == std::vector<std::int64_t>{569, 171, 639});
  // Disabling TaintToleration and NodeAffinity (weight 0): fit + balanced + image = 145, 171, 139, 238.
  ScoreWeights resources_only;
  resources_only.taint_toleration = 0;
  resources_only.node_affinity = 0;
  CHECK(weighted_totals(resources_only, nodes) == std::vector<std::int64_t>{145, 171, 139, 238});
  // One node's total from its normalized scores.
  CHECK(weighted_total(w, NormalizedScores{50, 71, 100, 100, 18}) == 639);
}

TEST_CASE("Scenario keys: score_weights, fit_resource_weights, requested_to_capacity_ratio, node_affinity",
          "[sim]") {
  SECTION("defaults") {
    const Scenario s = load_scenario_text(with_scheduler("{}"), "t.yaml");
    CHECK(s.cluster.scheduler.score_weights == ScoreWeights{});
    CHECK(s.cluster.scheduler.fit_resource_weights == FitResourceWeights{});
    CHECK(s.cluster.scheduler.fit_strategy == FitStrategy::least_allocated);
    CHECK(s.cluster.scheduler.requested_to_capacity_ratio_shape.empty());
    CHECK(s.pipeline.steps[0].component.preferred_node_affinity.empty());
  }
  SECTION("every key") {
    const Scenario s = load_scenario_text(
        "name: t\n"
        "pipeline:\n"
        "  steps:\n"
        "    - name: a\n"
        "      node_affinity:\n"
        "        preferred:\n"
        "          - {weight: 50, match_labels: {zone: a}}\n"
        "          - {weight: 1, match_labels: {zone: a, disk: ssd}}\n"
        "cluster:\n"
        "  node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]\n"
        "  scheduler:\n"
        "    policy: requested-to-capacity-ratio\n"
        "    requested_to_capacity_ratio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: "
        "0}]}\n"
        "    score_weights: {NodeResourcesFit: 2, TaintToleration: 0, ImageLocality: 5}\n"
        "    fit_resource_weights: {cpu: 3, nvidia.com/gpu: 100}\n",
        "t.yaml");
    const SchedulerConfig& sc = s.cluster.scheduler;
    CHECK(sc.fit_strategy == FitStrategy::requested_to_capacity_ratio);
    CHECK(sc.policy == ScorePolicy::least_allocated);  // the simulator's single score is unchanged
    CHECK(sc.requested_to_capacity_ratio_shape == shape({{0, 10}, {100, 0}}));
    ScoreWeights expected;
    expected.node_resources_fit = 2;
    expected.taint_toleration = 0;
    expected.image_locality = 5;
    CHECK(sc.score_weights == expected);
    CHECK(sc.fit_resource_weights == FitResourceWeights{3, 0, 100});  // replaces the default list
    const auto& terms = s.pipeline.steps[0].component.preferred_node_affinity;
    REQUIRE(terms.size() == 2);
    CHECK(terms[0] == PreferredSchedulingTerm{50, {{"zone", "a"}}});
    CHECK(terms[1] == PreferredSchedulingTerm{1, {{"zone", "a"}, {"disk", "ssd"}}});
  }
  SECTION("most-allocated sets both the policy and the fit strategy") {
    const Scenario s = load_scenario_text(with_scheduler("{policy: most-allocated}"), "t.yaml");
    CHECK(s.cluster.scheduler.policy == ScorePolicy::most_allocated);
    CHECK(s.cluster.scheduler.fit_strategy == FitStrategy::most_allocated);
  }
}

TEST_CASE("Scenario keys: errors name the file, line, column and field", "[sim]") {
  struct Case {
    const char* name;
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases{
      {"unknown plugin, close to a known one", with_scheduler("{score_weights: {TaintTolerations: 1}}"),
       "bad.yaml:5:31: cluster.scheduler.score_weights.TaintTolerations: unknown score plugin "
       "\"TaintTolerations\" (did you mean \"TaintToleration\"?)"},
      {"unknown plugin, far from every known one", with_scheduler("{score_weights: {VolumeBinding: 1}}"),
       "bad.yaml:5:31: cluster.scheduler.score_weights.VolumeBinding: unknown score plugin \"VolumeBinding\" "
       "(expected one of: NodeResourcesFit, NodeResourcesBalancedAllocation, TaintToleration, NodeAffinity, "
       "ImageLocality, PodTopologySpread, InterPodAffinity)"},
      {"negative weight", with_scheduler("{score_weights: {NodeAffinity: -1}}"),
       "bad.yaml:5:45: cluster.scheduler.score_weights.NodeAffinity: must be >= 0, got -1"},
      {"weight not an integer", with_scheduler("{score_weights: {NodeAffinity: 1.5}}"),
       "bad.yaml:5:45: cluster.scheduler.score_weights.NodeAffinity: expected an integer, got \"1.5\""},
      {"unknown resource", with_scheduler("{fit_resource_weights: {gpu: 1}}"),
       "bad.yaml:5:38: cluster.scheduler.fit_resource_weights.gpu: unknown resource \"gpu\" (did you mean "
       "\"nvidia.com/gpu\"?)"},
      {"resource weight 0", with_scheduler("{fit_resource_weights: {memory: 0}}"),
       "bad.yaml:5:46: cluster.scheduler.fit_resource_weights.memory: a resource weight must be 1 to 100 "
       "(leave the resource out to not score it), got 0"},
      {"no resources", with_scheduler("{fit_resource_weights: {}}"),
       "bad.yaml:5:37: cluster.scheduler.fit_resource_weights: must name at least one resource (cpu, memory, "
       "nvidia.com/gpu)"},
      {"requested-to-capacity-ratio without a shape", with_scheduler("{policy: requested-to-capacity-ratio}"),
       "bad.yaml:5:23: cluster.scheduler.policy: requested-to-capacity-ratio needs "
       "cluster.scheduler.requested_to_capacity_ratio.shape"},
      {"a shape with another policy",
       with_scheduler(
           "{policy: most-allocated, requested_to_capacity_ratio: {shape: [{utilization: 0, score: 1}]}}"),
       "bad.yaml:5:39: cluster.scheduler.requested_to_capacity_ratio: applies only with policy: "
       "requested-to-capacity-ratio"},
      {"an empty shape",
       with_scheduler("{policy: requested-to-capacity-ratio, requested_to_capacity_ratio: {shape: []}}"),
       "bad.yaml:5:89: cluster.scheduler.requested_to_capacity_ratio.shape: needs at least one point"},
      {"a shape score above 10",
       with_scheduler(
           "{policy: requested-to-capacity-ratio, requested_to_capacity_ratio: {shape: [{utilization: 0, "
           "score: 11}]}}"),
       "bad.yaml:5:114: cluster.scheduler.requested_to_capacity_ratio.shape[0].score: must be <= 10, got 11"},
      {"shape utilizations not increasing",
       with_scheduler(
           "{policy: requested-to-capacity-ratio, requested_to_capacity_ratio: {shape: [{utilization: 50, "
           "score: 1}, {utilization: 50, score: 2}]}}"),
       "bad.yaml:5:133: cluster.scheduler.requested_to_capacity_ratio.shape[1].utilization: utilizations "
       "must "
       "increase, got 50 after 50"},
      {"node affinity weight 0",
       with_step("{name: a, node_affinity: {preferred: [{weight: 0, match_labels: {zone: a}}]}}"),
       "bad.yaml:7:54: pipeline.steps[0].node_affinity.preferred[0].weight: must be >= 1, got 0"},
      {"node affinity weight 101",
       with_step("{name: a, node_affinity: {preferred: [{weight: 101, match_labels: {zone: a}}]}}"),
       "bad.yaml:7:54: pipeline.steps[0].node_affinity.preferred[0].weight: must be <= 100, got 101"},
      {"node affinity without match_labels",
       with_step("{name: a, node_affinity: {preferred: [{weight: 5}]}}"),
       "bad.yaml:7:45: pipeline.steps[0].node_affinity.preferred[0]: missing required key \"match_labels\""},
      {"node affinity with empty match_labels",
       with_step("{name: a, node_affinity: {preferred: [{weight: 5, match_labels: {}}]}}"),
       "bad.yaml:7:71: pipeline.steps[0].node_affinity.preferred[0].match_labels: must not be empty (an "
       "empty "
       "term matches no node)"},
      {"node affinity: unknown key", with_step("{name: a, node_affinity: {required: []}}"),
       "bad.yaml:7:33: pipeline.steps[0].node_affinity.required: unknown key \"required\" (expected one of: "
       "preferred)"},
      {"node_affinity on a group", with_step("{name: g, steps: [{name: a}], node_affinity: {}}"),
       "bad.yaml:7:37: pipeline.steps[0].node_affinity: a group (a step with steps:) cannot have component "
       "key "
       "\"node_affinity\"; put it on the steps inside"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(error_of(c.yaml) == c.message);
  }
}
