// The simulator backend: runs a Plan on a discrete-event model of the scenario's Kubernetes cluster
// and returns the Trace a real run would have produced (backend "sim").
//
//   Scenario s = load_scenario_file("scenarios/argo-parallelism-limit.yaml");
//   Plan plan = Plan::unroll(s.pipeline);
//   Trace trace = sim::simulate(s, plan, {.seed = s.seed});
//
// What is modelled (docs in reports/sim-model.md; every overhead can be set to zero):
// - Node pools (cpu, memory, GPUs, max pods, labels, taints, speed, price), node failures (MTBF,
//   exponential) and spot reclaims: the node's pods are evicted and run again as new attempts, and
//   the pool replaces the node after its boot time. An autoscaler adds nodes to a pool when pods of a
//   class stay unschedulable for `scale_up_delay` and the free room of the nodes up cannot take them
//   (Cluster Autoscaler's filter-out-schedulable step; they come up after `boot_time`) and removes nodes
//   idle for `scale_down_idle`, none within `scale_down_delay_after_add` of a scale-up (any pool's).
//   Cost is billed per node-second, after any spot discount.
// - A kube-scheduler: one decision at a time (1 / decisions_per_second each), FIFO by pod creation (a pod
//   that failed scheduling as of its failure, as kube-scheduler refreshes its queue timestamp);
//   filter (resources, node selector, NoSchedule/NoExecute taints), score as kube-scheduler v1.36's
//   default profile: the weighted sum (cluster.scheduler.score_weights) of NodeResourcesFit x1 (its
//   strategy from `policy`: LeastAllocated, MostAllocated or RequestedToCapacityRatio, with resource
//   weights), NodeResourcesBalancedAllocation x1 (v1.36: the pod's change of the node's balance),
//   TaintToleration x3 (PreferNoSchedule taints) and NodeAffinity x2 (preferred terms), both normalized
//   over the nodes found, and ImageLocality x1 (an image counts on a node once its pull is done), in
//   kube-scheduler's integer arithmetic. PodTopologySpread and InterPodAffinity give every node the same
//   score for the pods the orchestrators create, so they are left out: why is at the top of
//   sim/scoring_plugins.hpp. percentageOfNodesToScore with a rotating start index, ties broken
//   uniformly (selectHost's reservoir sampling, drawn once from the run's seeded RNG), then a bind latency.
//   Unschedulable pods wait for a cluster change (a pod ends, a node is added, or the 5-minute flush) with
//   backoff doubling from podInitialBackoff to podMaxBackoff; when nothing else is queued a pod is taken from
//   the backoff queue early (SchedulerPopFromBackoffQ, Kubernetes 1.33+). Pods with identical requirements
//   (one class per step) share this state: once the oldest pod of a class does not fit, the younger ones are
//   not tried until the cluster changes (they would fail too).
// - Pod lifecycle: [driver pod, for kfp-v2] -> created -> bound -> image pull (per-node cache, pulls
//   on a node serialized unless serialize_image_pulls is false, a pod needing an image being pulled
//   waits for that pull) -> sandbox start
//   -> input read from shared storage (bandwidth shared equally by concurrent readers) -> run
//   (DurationModel, divided by node speed) -> succeeded, or failed and retried per the RetryPolicy.
// - Parallelism limits (Plan limiters and units) and fan-in through joins; tasks are admitted (their
//   first pod created) by ready time, then task id.
//
// Determinism: random numbers come from streams keyed by (seed, what, ids), so the same scenario and
// seed give the same trace on any machine, whatever the event interleaving.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include <shardflow/core/backend.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow::sim {

/// How the scheduler model finds and ranks nodes. Both give identical decisions (tested); score_tree
/// costs O(log nodes) per decision, node_index visits the nodes kube-scheduler would score (up to
/// max(100, 5-50% of them)). score_tree is used for up to 16 pod classes (steps), node_index beyond.
enum class NodeSearch : std::uint8_t { score_tree, node_index };
/// How the scheduler finds the class (step) of the next pod to decide: `automatic` scans the classes when
/// there are few (up to 16) and keeps them in trees when there are more (O(log classes) a decision, for
/// pipelines of thousands of steps); `scan` or `tree` always (the same decisions: tests compare them).
enum class ClassChoice : std::uint8_t { automatic, scan, tree };

struct SimOptions {
  std::uint64_t seed = 1;                              // the lead passes scenario.seed or --seed
  std::function<void(double done_fraction)> progress;  // optional; called about every 1% of tasks
  /// Stop simulating at this simulated time even if tasks remain (they are reported cancelled).
  Duration horizon = Duration::from_s(10LL * 365 * 24 * 3600);
  NodeSearch node_search = NodeSearch::score_tree;
  ClassChoice class_choice = ClassChoice::automatic;
  /// Optional: when it becomes true (from another thread, a signal handler...), the run stops within a
  /// few thousand events; what had not finished is reported as with the horizon.
  const std::atomic<bool>* stop = nullptr;
  /// Optional: first attempts' draws made ahead for `seed` (RunOptions::draws); the trace is the same.
  const AttemptDrawTable* draws = nullptr;
  /// False: no attempt records (RunOptions::records): the trace's `attempts` and `pod_names` are empty,
  /// Trace::records false, and everything else the same as with them. Speculation (a step's
  /// `speculation`) reads its attempts' records: a run with it keeps them anyway.
  bool records = true;
  /// Nodes that go away faster than tasks finish are replaced for ever: the run stops (as at the horizon)
  /// once it has made 100,000 + 100 x (the pools' count + autoscaling.max) nodes, at most this many
  /// (10 million node records are some 3 GB).
  std::uint64_t most_nodes_made = 10'000'000;

  /// The defaults with this seed (`SimOptions{.seed = s}` trips -Wmissing-field-initializers on g++ 12).
  [[nodiscard]] static SimOptions with_seed(std::uint64_t s) {
    SimOptions o;
    o.seed = s;
    return o;
  }
};

/// Runs the plan on the scenario's cluster; returns the trace (backend "sim").
/// Tasks that can never be placed (no pool can hold them) fail without retries.
Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options);

/// Counters from the last run of a Simulator, for benchmarks and tests.
struct SimStats {
  std::uint64_t events = 0;
  std::uint64_t scheduling_attempts = 0;  // decisions, placed or not
  std::uint64_t nodes_scored = 0;         // feasible nodes scored, summed over decisions
  std::uint64_t nodes_added = 0;          // by the autoscaler and node replacement
  /// Per step, when its last task was resolved (succeeded or failed for good); kNever if never. With
  /// overheads.control_plane on, that is the controller's sync which marks an Indexed Job Complete
  /// (or Failed).
  std::vector<SimTime> step_done;
};

/// The same as simulate(), also returning counters.
Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options, SimStats& stats);

/// What a node of the pool costs per hour in a run (NodeRecord::price_per_hour): price_per_hour, less
/// spot_discount for a spot pool. Cost is the only use the simulator makes of the prices.
double node_price_per_hour(const NodePool& pool);

/// A copy of the scenario with the fields the simulator does not read set to fixed values, so that two
/// scenarios' views are equal (==) when the simulator gives them the same trace for the same seed, up to
/// the nodes' prices (NodeRecord::price_per_hour, node_price_per_hour): the pools' `price_per_hour` and
/// `spot_discount` (0), the `description` and the `file` (""). Everything else is kept, including what
/// only names things in the trace (the scenario's name, pool and step names) and where things were
/// written. A sweep simulates configurations with equal views once and prices each one's trace itself.
Scenario simulation_view(const Scenario& scenario);

/// The simulator as a Backend (name "sim"): run() is simulate() with the options' seed, stop token and
/// horizon. It reports no per-task events to an observer (a simulation outruns any display), only the
/// finished trace.
std::unique_ptr<Backend> make_backend(NodeSearch node_search = NodeSearch::score_tree);

}  // namespace shardflow::sim
