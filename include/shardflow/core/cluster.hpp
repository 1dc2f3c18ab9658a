// The cluster a pipeline runs on, and the overheads the simulator charges. Every overhead has a
// documented default (docs/scenario-format.md) and can be set to zero so that analytic cases are exact.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/taint.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow {

/// Scale the pool between min and max nodes: add nodes when pods stay unschedulable for
/// `scale_up_delay`; remove nodes idle for `scale_down_idle`. Disabled when max == 0.
struct Autoscaling {
  int min = 0;
  int max = 0;
  Duration scale_up_delay = Duration::from_s(10);
  Duration boot_time = Duration::from_s(60);
  Duration scale_down_idle = Duration::from_s(600);
  [[nodiscard]] bool enabled() const { return max > 0; }
  friend bool operator==(const Autoscaling&, const Autoscaling&) = default;
};

/// What kube-scheduler's scoring counts for a pod that requests no cpu or no memory (its non-zero
/// requests): the simulator's scoring, and the DaemonSet pods' part of a node's usage.
inline constexpr MilliCpu kDefaultMilliCpuRequest = 100;
inline constexpr ByteCount kDefaultMemoryRequest = 200 * kMiB;

/// A set of identical nodes.
struct NodePool {
  std::string name;
  SourceLocation where;
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
  int count = 0;              // nodes at the start of the run
  double price_per_hour = 0;  // per node, before any spot discount
  double speed = 1.0;         // run times are divided by this
  int max_pods = 110;         // the pipeline's pods a node runs at once: kubelet maxPods less daemon_pods
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  Duration mtbf = Duration::zero();  // mean time between node failures; 0 = nodes never fail
  bool spot = false;
  double spot_discount = 0.0;                     // fraction taken off price_per_hour for spot nodes
  Duration spot_mean_reclaim = Duration::zero();  // mean time until a spot node is reclaimed; 0 = never
  Autoscaling autoscaling;
  // What each node keeps for itself (`reserved`: kube-reserved, system-reserved and the eviction
  // threshold). `cpu` and `memory` above are what is left, the node's allocatable, which is what
  // kube-scheduler fits and scores against; the node's capacity (in the trace, and what is paid for) is
  // allocatable + reserved.
  MilliCpu reserved_cpu = 0;
  ByteCount reserved_memory = 0;
  // The DaemonSet pods on each node of the pool (cluster.daemonsets): there from the node's start, their
  // requests part of what kube-scheduler counts as the node's requested (the non-zero ones as its
  // scoring counts a pod without requests: 100m, 200Mi); their number is taken off max_pods.
  MilliCpu daemon_cpu = 0;
  ByteCount daemon_memory = 0;
  int daemon_gpu = 0;
  MilliCpu daemon_nonzero_cpu = 0;
  ByteCount daemon_nonzero_memory = 0;
  int daemon_pods = 0;
  /// What pods can have on an empty node of the pool: allocatable less the DaemonSet pods' requests.
  [[nodiscard]] MilliCpu pod_cpu() const { return cpu - daemon_cpu; }
  [[nodiscard]] ByteCount pod_memory() const { return memory - daemon_memory; }
  [[nodiscard]] int pod_gpu() const { return gpu - daemon_gpu; }
  /// Whether the pool has nodes now or may get some (autoscaling): a step may be placed on it.
  [[nodiscard]] bool may_have_nodes() const { return count > 0 || autoscaling.enabled(); }
  /// The machine's (what the trace records and the cost counts): allocatable and what it reserves.
  [[nodiscard]] MilliCpu capacity_cpu() const { return cpu + reserved_cpu; }
  [[nodiscard]] ByteCount capacity_memory() const { return memory + reserved_memory; }
  /// Whether reserved resources or DaemonSets take part of the node.
  [[nodiscard]] bool has_overhead() const {
    return reserved_cpu != 0 || reserved_memory != 0 || daemon_pods != 0;
  }
  friend bool operator==(const NodePool&, const NodePool&) = default;
};

/// least/most/balanced: kube-scheduler's scoring (below). `list`: not kube-scheduler but the list
/// scheduling of workflow simulators (WRENCH, DSLab), for comparing with them: pending pods in the string
/// order of their step's path (driver pods first, a step's pods in creation order), the first one to the
/// node with the most idle CPU (ties: the lowest node slot), and none after it while it fits nowhere.
enum class ScorePolicy : std::uint8_t { least_allocated, most_allocated, balanced_allocation, list };

/// NodeResourcesFit's scoringStrategy.type, set by the same `policy` key as ScorePolicy (least-allocated,
/// most-allocated, requested-to-capacity-ratio). The simulator takes requested_to_capacity_ratio from
/// here and least/most from `policy`; `policy: balanced-allocation` turns NodeResourcesFit off (the
/// score is then BalancedAllocation and the other plugins). See sim/scoring_plugins.hpp.
enum class FitStrategy : std::uint8_t { least_allocated, most_allocated, requested_to_capacity_ratio };

/// The weight of each kube-scheduler score plugin (a profile's plugins.score.enabled[].weight); 0 = the
/// plugin is disabled. The defaults are v1.36's (pkg/scheduler/apis/config/v1/default_plugins.go).
/// PodTopologySpread and InterPodAffinity give every node the same score for the pods shardflow's
/// orchestrators create (no spread constraints, no affinity terms, no owner that gets the system
/// default constraints), so their weights cannot change which node wins; they are kept for completeness.
struct ScoreWeights {
  int node_resources_fit = 1;
  int node_resources_balanced_allocation = 1;
  int taint_toleration = 3;
  int node_affinity = 2;
  int image_locality = 1;
  int pod_topology_spread = 2;
  int inter_pod_affinity = 2;
  friend bool operator==(const ScoreWeights&, const ScoreWeights&) = default;
};

/// NodeResourcesFit's scoringStrategy.resources: the weight of each resource (1 to 100); 0 = the
/// resource is not scored. v1.36's default is cpu 1, memory 1. An extended resource (gpu) counts only
/// for pods that request it.
struct FitResourceWeights {
  int cpu = 1;
  int memory = 1;
  int gpu = 0;  // nvidia.com/gpu
  friend bool operator==(const FitResourceWeights&, const FitResourceWeights&) = default;
};

/// One point of RequestedToCapacityRatio's shape: utilization 0 to 100 (percent), score 0 to 10 (the
/// plugin scales it by 10 to kube-scheduler's 0 to 100).
struct UtilizationShapePoint {
  int utilization = 0;
  int score = 0;
  friend bool operator==(const UtilizationShapePoint&, const UtilizationShapePoint&) = default;
};

/// The kube-scheduler model's settings.
struct SchedulerConfig {
  ScorePolicy policy = ScorePolicy::least_allocated;
  /// Like kube-scheduler's percentageOfNodesToScore; 0 = its adaptive default
  /// (50 - nodes/125 percent, at least 5 percent, at least 100 nodes).
  int percentage_of_nodes_to_score = 0;
  /// Scheduling decisions per second (the cost of one decision is 1/rate); 0 = free.
  double decisions_per_second = 0;
  Duration bind_latency = Duration::zero();
  Duration initial_backoff = Duration::from_s(1);  // podInitialBackoffSeconds
  Duration max_backoff = Duration::from_s(10);     // podMaxBackoffSeconds
  /// kube-scheduler's backoff queue orders pods by windows of this length (v1.36's
  /// backoffQOrderingWindowDuration, with SchedulerPopFromBackoffQ): a pod backs off until the window
  /// after the one its backoff ends in, windows counted from simulated time 0. 0 = exact backoff.
  Duration backoff_window = Duration::from_s(1);
  // kube-scheduler v1.36's default profile, which the simulator's score is (sim/scheduler.hpp).
  FitStrategy fit_strategy = FitStrategy::least_allocated;
  ScoreWeights score_weights;
  FitResourceWeights fit_resource_weights;
  /// For fit_strategy requested_to_capacity_ratio (then non-empty, utilizations increasing).
  std::vector<UtilizationShapePoint> requested_to_capacity_ratio_shape;
  /// Policy list: the steps' paths in the order the list takes them; steps not named come after, in
  /// their paths' string order. Empty (every scenario file): the paths' string order. The WfCommons
  /// importer sets it when its step names differ from the task ids (characters replaced by '_'), so
  /// that the list keeps the ids' string order, as workflow simulators take them.
  std::vector<std::string> list_order;
  friend bool operator==(const SchedulerConfig&, const SchedulerConfig&) = default;
};

/// Shared storage that tasks read their input from and write their output to. Each direction has its
/// own bandwidth, shared fairly among the tasks using it at the time.
struct Storage {
  double read_bytes_per_second = 0;   // 0 = reading takes no time
  double write_bytes_per_second = 0;  // 0 = writing takes no time
  friend bool operator==(const Storage&, const Storage&) = default;
};

/// The orchestrator's controller as kube-controller-manager's Job controller (and Argo's workflow
/// controller) work: a work queue of keys (one per Job, or one per workflow) where every pod event asks
/// for a sync `sync_period` later and the earliest request wins. A pod's end is seen, its task counted
/// done or failed, its parallelism slot refilled and the Job completed only at the next sync; the pods
/// a sync creates go out in slow-start batches 1, 2, 4, ... (each after the previous one's API calls).
/// All zero (the struct's defaults, `overheads: none`): pods are seen and created at once.
struct ControlPlane {
  enum class Scope : std::uint8_t { step, run };
  Duration sync_period = Duration::zero();   // 0 = no controller lag
  Scope scope = Scope::step;                 // one queue key per step (a Job) or per run (a Workflow)
  Duration create_batch = Duration::zero();  // one batch of pod creations (API round trip)
  /// From a sync to its writes: the pods it creates and the tasks it counts done land this much later
  /// (the controller's watch, its work and its API writes on a loaded control plane). Less than
  /// sync_period; 0 in every preset.
  Duration sync_latency = Duration::zero();
  /// From the write of the sync that counted a Job's last pod to the Job's Complete (or Failed)
  /// condition: the controller removes the finished pods' tracking finalizers and writes the status
  /// first. A step's done time (SimStats::step_done, metrics) is its Job's condition; the steps after it
  /// still start at the write. Scope step without follow_pods only; 0 in every preset.
  Duration complete_latency = Duration::zero();
  int max_creates_per_sync = 0;                 // 0 = no limit (the Job controller: 500)
  Duration failure_backoff = Duration::zero();  // before a failed pod's replacement, doubling per failure
  Duration max_failure_backoff = Duration::zero();
  /// The resolution of the pod times the controller counts a failure's backoff from (a container's
  /// `finishedAt` is a metav1.Time, which the API stores in whole seconds): with R > 0 the backoff counts
  /// from the failed pod's end rounded down to the wall clock's multiples of R. 0 = exact; 0 in every
  /// preset.
  Duration timestamp_resolution = Duration::zero();
  /// The wall clock's time past a multiple of timestamp_resolution at simulated time 0 (when the run,
  /// or its Job, was created): in [0, timestamp_resolution); 0 when that is 0.
  Duration clock_phase = Duration::zero();
  /// The run's own controller follows the pods (shardflow's k8s backend, which watches them): a pod's
  /// end counts for its task at once (the steps after it may start), not at its Job's next sync; the
  /// Job controller still creates the pods, and a failed pod's replacement waits for its backoff only
  /// (`failure_backoff`, not the step's `retries.backoff`).
  bool follow_pods = false;
  /// The controller's client-side rate limit on its API calls (client-go's token bucket: `api_burst`
  /// calls at once, then `api_qps` a second; kube-controller-manager's --kube-api-qps 20 and
  /// --kube-api-burst 30 by default, which every controller of it has on its own client). A call waits
  /// for its token; the calls a Job controller makes, in the order it makes them: per pod created, the
  /// create and its event; per sync that saw pods end, a status write, a finalizer patch per pod, a
  /// second status write; per other sync that changed anything, a status write. Pods are created when
  /// their create's token comes. 0 = no limit.
  double api_qps = 0;
  int api_burst = 0;
  [[nodiscard]] bool enabled() const { return sync_period > Duration::zero(); }
  friend bool operator==(const ControlPlane&, const ControlPlane&) = default;
};

/// Per-task overheads of the orchestrator and the node, in the order a pod meets them.
struct Overheads {
  /// kfp-v2 (a driver pod, then the executor pod), argo (one pod), indexed-job (one pod), none.
  std::string orchestrator = "none";
  int pods_per_task = 1;                            // from the orchestrator preset unless set
  Duration driver_pod_duration = Duration::zero();  // run time of each extra (driver) pod
  MilliCpu driver_cpu = 100;                        // requests of each driver pod
  ByteCount driver_memory = 128 * kMiB;
  Duration sandbox_start = Duration::zero();  // pod sandbox and container start
  double image_pull_bytes_per_second = 0;     // per node; 0 = pulls take no time
  ByteCount default_image_size = 0;           // for components that do not set image_size
  bool serialize_image_pulls = true;          // kubelet serializeImagePulls: one pull at a time per node
  /// Every attempt of a task repeats attempt 0's sampled run time and outcome, as `run --backend k8s
  /// --emulate` does (a Job's pod template, which carries them, is shared by the attempts).
  bool repeat_first_attempt = false;
  /// The named preset the defaults came from (`overheads.preset`), "" for none.
  std::string preset;
  /// The orchestrator's controller (`overheads.control_plane`): when it sees pods end and creates pods.
  ControlPlane control_plane;
  friend bool operator==(const Overheads&, const Overheads&) = default;
};

/// The cluster autoscaler's cluster-wide settings (`cluster.autoscaler`); the per-pool ones are each
/// pool's Autoscaling. Read by the simulator only when some pool autoscales.
struct AutoscalerConfig {
  /// Cluster Autoscaler's `--scale-down-delay-after-add` (default 10 minutes): no node of any pool is
  /// removed until this long after the most recent scale-up of any pool. A node idle since t is removed
  /// at max(t + its pool's scale_down_idle, last scale-up + this), if still idle and its pool above min
  /// then. 0 = scale-downs do not wait for scale-ups.
  Duration scale_down_delay_after_add = Duration::from_s(600);
  /// Cluster Autoscaler's `--scan-interval` (its default: 10 s), for scale-down: a node due for removal
  /// goes at the first loop at or after that time, the loops at 0, S, 2S, ... of the run. 0 (the default
  /// here) = at the instant it is due. Scale-up checks keep their own timing (each pool's scale_up_delay,
  /// then every 10 s while a backlog lasts).
  Duration scan_interval = Duration::zero();
  friend bool operator==(const AutoscalerConfig&, const AutoscalerConfig&) = default;
};

/// Pods that run on every node of some pools (node agents: logging, monitoring, CNI, device plugins).
/// The loader adds their requests to each pool's daemon_* fields; the simulator reads those. Like the
/// DaemonSet controller, it puts them only on the pools whose NoSchedule/NoExecute taints they tolerate,
/// by their own tolerations or those the controller adds to every DaemonSet pod (the node.kubernetes.io
/// condition taints: docs/scenario-format.md).
struct DaemonSet {
  std::string name;
  SourceLocation where;
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
  std::vector<Toleration> tolerations;  // as written; without the controller's
  std::vector<std::string> pools;       // as written; empty: every pool whose taints it tolerates
  friend bool operator==(const DaemonSet&, const DaemonSet&) = default;
};

struct Cluster {
  std::vector<NodePool> node_pools;
  std::vector<DaemonSet> daemonsets;
  SchedulerConfig scheduler;
  Storage storage;
  AutoscalerConfig autoscaler;
  friend bool operator==(const Cluster&, const Cluster&) = default;
};

}  // namespace shardflow
