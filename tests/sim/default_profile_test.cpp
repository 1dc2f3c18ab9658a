// The simulator's scheduler scores with kube-scheduler v1.36's default profile (sim/scoring_plugins.hpp):
// NodeResourcesFit + BalancedAllocation + TaintToleration x3 + NodeAffinity x2 + ImageLocality, each
// decision checked on hand-computed totals, with both node searches (score trees and the index scan).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim_builders.hpp"

using namespace shardflow;
using namespace shardflow::simtest;

namespace {

// The node each attempt of `step` ran on, the same with both node searches.
std::vector<std::string> nodes_of(const Scenario& sc, std::uint32_t step, std::uint64_t seed = 1) {
  const Plan plan = Plan::unroll(sc.pipeline);
  std::vector<std::string> per_search[2];
  for (int i = 0; i < 2; ++i) {
    sim::SimOptions opt{seed, {}, Duration::from_s(3600)};
    opt.node_search = i == 0 ? sim::NodeSearch::score_tree : sim::NodeSearch::node_index;
    const Trace t = sim::simulate(sc, plan, opt);
    for (const AttemptRecord& a : t.attempts)
      if (a.step == step) per_search[i].push_back(t.nodes.at(static_cast<std::size_t>(a.node)).name);
  }
  REQUIRE(per_search[0] == per_search[1]);
  return per_search[0];
}

// Node x (4 CPU, 8 GiB) holds a pinned pod of 2000m and 1 GiB; node y (16 CPU, 4 GiB) is empty. The pod
// asks for 1000m and 4 GiB. kube-scheduler's integer arithmetic:
//   NodeResourcesFit, LeastAllocated (cpu, memory -> average):
//     x: (4000-3000)*100/4000 = 25, (8-5)*100/8 = 37 (37.5)   -> 62/2 = 31
//     y: (16000-1000)*100/16000 = 93 (93.75), (4-4)*100/4 = 0 -> 93/2 = 46
//   BalancedAllocation v1.36, 50 + (50 + B_with - B_without)/2, B = int((1 - |f_cpu - f_mem|/2) * 100):
//     x: without 0.5, 0.125 -> 81 (81.25); with 0.75, 0.625 -> 93 (93.75); 50 + 62/2 = 81
//     y: without 0, 0 -> 100; with 0.0625, 1 -> 53 (53.125); 50 + 3/2 = 51
//   LeastAllocated alone picks y (46 > 31); with BalancedAllocation x wins (31 + 81 = 112 > 46 + 51 = 97).
//   TaintToleration adds 3 x 100 to both (no PreferNoSchedule taints); the rest add 0.
Scenario two_nodes() {
  Step pin = task("pin", 100, {}, 2000);
  pin.component.node_selector["name"] = "x";
  Step pod = task("pod", 10, {}, 1000);
  pod.component.resources.memory = 4 * kGiB;
  NodePool x = pool("x", 1, 4000, 8 * kGiB);
  x.labels["name"] = "x";
  NodePool y = pool("y", 1, 16000, 4 * kGiB);
  y.labels["name"] = "y";
  return scenario({pin, pod}, {x, y});
}

}  // namespace

TEST_CASE("Scheduler: LeastAllocated + BalancedAllocation choose another node than LeastAllocated alone",
          "[sim]") {
  Scenario sc = two_nodes();
  CHECK(nodes_of(sc, 0) == std::vector<std::string>{"x-0"});
  SECTION("the default profile: x, 112 against 97") {
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("score_weights turning BalancedAllocation off: the old least-allocated choice, y") {
    sc.cluster.scheduler.score_weights.node_resources_balanced_allocation = 0;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"y-0"});
  }
  SECTION("policy: balanced-allocation is BalancedAllocation without NodeResourcesFit: x, 81 against 51") {
    sc.cluster.scheduler.policy = ScorePolicy::balanced_allocation;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("MostAllocated + BalancedAllocation") {
    // MostAllocated: x: 3000*100/4000 = 75, 5*100/8 = 62 (62.5) -> 137/2 = 68; y: 1000*100/16000 = 6
    // (6.25), 100 -> 106/2 = 53. x: 68 + 81 = 149, y: 53 + 51 = 104.
    sc.cluster.scheduler.policy = ScorePolicy::most_allocated;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION(
      "NodeResourcesFit weighted 1,000,000 (the largest score_weights takes): y, 46,000,051 against "
      "31,000,081") {
    // Scores far above ScoreBuckets::kMaxScore: the class's search turns from buckets to the tree.
    sc.cluster.scheduler.score_weights.node_resources_fit = 1'000'000;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"y-0"});
  }
  SECTION("NodeResourcesFit weighted 3: y, 3 x 46 + 51 = 189 against 3 x 31 + 81 = 174") {
    sc.cluster.scheduler.score_weights.node_resources_fit = 3;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"y-0"});
  }
}

TEST_CASE("Scheduler: a PreferNoSchedule taint the pod does not tolerate turns it away", "[sim]") {
  Scenario sc = two_nodes();
  sc.cluster.node_pools[0].taints.push_back(Taint{"slow", "yes", "PreferNoSchedule"});
  // Raw: x 1, y 0; normalized reversed over the two feasible nodes: x 100 - 100*1/1 = 0, y 100.
  // x: 112 + 3 x 0 = 112; y: 97 + 3 x 100 = 397.
  SECTION("not tolerated: y") {
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"y-0"});
  }
  SECTION("tolerated: raw 0 on both, 100 each; x as without the taint") {
    sc.pipeline.steps[1].component.tolerations.push_back(
        Toleration{"slow", "Exists", "", "PreferNoSchedule"});
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("TaintToleration off: x") {
    sc.cluster.scheduler.score_weights.taint_toleration = 0;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("a NoSchedule taint would filter; PreferNoSchedule only scores: the pinned pod still runs on x") {
    CHECK(nodes_of(sc, 0) == std::vector<std::string>{"x-0"});
  }
}

TEST_CASE("Scheduler: a preferred node-affinity term draws the pod to the matching nodes", "[sim]") {
  Scenario sc = two_nodes();
  Component& pod = sc.pipeline.steps[1].component;
  SECTION("preferring y (weight 10): raw y 10, x 0 -> y 100*10/10 = 100, x 0; y: 97 + 2 x 100 = 297 > 112") {
    pod.preferred_node_affinity.push_back(PreferredSchedulingTerm{10, {{"name", "y"}}});
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"y-0"});
  }
  SECTION("preferring x: x 112 + 200, y 97") {
    pod.preferred_node_affinity.push_back(PreferredSchedulingTerm{10, {{"name", "x"}}});
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("two terms: y by weight 1 (raw 1, normalized 100*1/5 = 20), x by weight 5 (100)") {
    // x: 112 + 2 x 100 = 312; y: 97 + 2 x 20 = 137.
    pod.preferred_node_affinity.push_back(PreferredSchedulingTerm{1, {{"name", "y"}}});
    pod.preferred_node_affinity.push_back(PreferredSchedulingTerm{5, {{"name", "x"}}});
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
  SECTION("NodeAffinity off: x") {
    pod.preferred_node_affinity.push_back(PreferredSchedulingTerm{10, {{"name", "y"}}});
    sc.cluster.scheduler.score_weights.node_affinity = 0;
    CHECK(nodes_of(sc, 1) == std::vector<std::string>{"x-0"});
  }
}

TEST_CASE("Scheduler: ImageLocality sends the next pod to the node whose pull finished", "[sim]") {
  // Two equal empty nodes; step a (1 CPU, 1 GiB, 10 s), then step b, both with a 2000 MiB image pulled in
  // 2 s. When b is created (at 12 s) both nodes are empty again and tie on every other plugin; the
  // node that pulled for a has the image: spread 1 of 2 nodes, int(2000 MiB * 0.5) = 1000 MiB, clamped
  // to [23 MiB, 1000 MiB] -> 100 * (1000 - 23) / (1000 - 23) = 100. The other scores 0.
  Step a = task("a", 10);
  a.component.image = "big:1";
  a.component.image_size = 2000 * kMiB;
  Step b = task("b", 10, {0});
  b.component.image = "big:1";
  b.component.image_size = 2000 * kMiB;
  Scenario sc = scenario({a, b}, {pool("p", 2, 4000, 16 * kGiB)});
  sc.overheads.image_pull_bytes_per_second = 1000.0 * kMiB;
  int same = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const Trace t = run(sc, seed);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[1].submitted == SimTime::from_s(12));
    same += t.attempts[0].node == t.attempts[1].node ? 1 : 0;
    // b finds its image on the node: no pull.
    if (t.attempts[0].node == t.attempts[1].node) CHECK(t.attempts[1].image_pull == Duration::zero());
  }
  SECTION("on: every seed reuses the node") {
    CHECK(same == 16);
  }
  SECTION("off: the tie is drawn at random, some seeds move") {
    sc.cluster.scheduler.score_weights.image_locality = 0;
    int same_off = 0;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      const Trace t = run(sc, seed);
      same_off += t.attempts[0].node == t.attempts[1].node ? 1 : 0;
    }
    CHECK(same_off < 16);
    CHECK(same_off > 0);
  }
  SECTION("both node searches agree") {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) CHECK(nodes_of(sc, 1, seed) == nodes_of(sc, 0, seed));
  }
  SECTION("an untagged name is its :latest, for the score and the pull") {
    // kube-scheduler's normalizedImageName: `ghcr.io/acme/app` and `ghcr.io/acme/app:latest` are one image
    // (they were two: b went anywhere and pulled again). A registry's port is not a tag.
    for (const auto& [first, second] : {std::pair{"ghcr.io/acme/app", "ghcr.io/acme/app:latest"},
                                        std::pair{"reg:5000/app", "reg:5000/app:latest"}}) {
      Scenario named = sc;
      named.pipeline.steps[0].component.image = first;
      named.pipeline.steps[1].component.image = second;
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const Trace t = run(named, seed);
        CHECK(t.attempts[0].node == t.attempts[1].node);
        CHECK(t.attempts[1].image_pull == Duration::zero());
      }
    }
  }
}

TEST_CASE("Scheduler: the scenario keys reach the score (score_weights, taints, node_affinity.preferred)",
          "[sim]") {
  // two_nodes() written as a scenario file, scheduler and pod keys from the cases above.
  const auto node_of_pod = [](const std::string& scheduler, const std::string& pod_extra) {
    const std::string yaml =
        "name: t\n"
        "overheads: none\n"
        "pipeline:\n"
        "  steps:\n"
        "    - {name: pin, resources: {cpu: 2, memory: 1Gi}, node_selector: {name: x}, duration: {base: "
        "100s}}\n"
        "    - {name: pod, resources: {cpu: 1, memory: 4Gi}, duration: {base: 10s}" +
        pod_extra +
        "}\n"
        "cluster:\n"
        "  node_pools:\n"
        "    - {name: x, cpu: 4, memory: 8Gi, count: 1, labels: {name: x}}\n"
        "    - {name: y, cpu: 16, memory: 4Gi, count: 1, labels: {name: y}, taints: [{key: slow, effect: "
        "PreferNoSchedule}]}\n"
        "  scheduler: " +
        scheduler + "\n";
    const Scenario sc = load_scenario_text(yaml, "t.yaml");
    return nodes_of(sc, 1);
  };
  const std::vector<std::string> x{"x-0"}, y{"y-0"};
  // The taint is on y here: y loses 300 (x 112 + 300, y 97 + 0).
  CHECK(node_of_pod("{policy: least-allocated}", "") == x);
  // Without TaintToleration and BalancedAllocation: LeastAllocated alone, y (46 > 31).
  CHECK(node_of_pod("{score_weights: {TaintToleration: 0, NodeResourcesBalancedAllocation: 0}}", "") == y);
  // A tolerated taint, and a preferred term for y: y 97 + 300 + 200 = 597, x 112 + 300.
  CHECK(node_of_pod("{}",
                    ", tolerations: [{key: slow, operator: Exists}], node_affinity: {preferred: [{weight: 7, "
                    "match_labels: {name: y}}]}") == y);
}
