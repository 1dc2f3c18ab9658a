#include "cluster_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline_reader.hpp"
#include "validate.hpp"

namespace shardflow::detail {

// ---- presets: docs/scenario-format.md, "Control-plane latencies" and "Overhead presets" ----------------

ControlPlane indexed_job_control_plane() {
  // kube-controller-manager v1.36 pkg/controller/job/job_controller.go: SyncJobBatchPeriod,
  // MaxPodCreateDeletePerSync, DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff.
  ControlPlane c;
  c.sync_period = Duration::from_s(1);
  c.scope = ControlPlane::Scope::step;
  c.create_batch = Duration::from_ms(5);
  c.max_creates_per_sync = 500;
  c.failure_backoff = Duration::from_s(10);
  c.max_failure_backoff = Duration::from_s(600);
  // cmd/kube-controller-manager/app/options: --kube-api-qps 20, --kube-api-burst 30 (each controller's
  // client has its own limiter with these).
  c.api_qps = 20;
  c.api_burst = 30;
  return c;
}

ControlPlane argo_control_plane() {
  // Argo Workflows v3 workflow/controller: pod events requeue the workflow with AddRateLimited, whose
  // fixedItemIntervalRateLimiter waits DEFAULT_REQUEUE_TIME (10 s). KFP v2 runs on Argo.
  ControlPlane c;
  c.sync_period = Duration::from_s(10);
  c.scope = ControlPlane::Scope::run;
  return c;
}

ControlPlane control_plane_for(const std::string& orchestrator) {
  if (orchestrator == "indexed-job") return indexed_job_control_plane();
  if (orchestrator == "argo" || orchestrator == "kfp-v2") return argo_control_plane();
  return ControlPlane{};  // none: no controller lag
}

Overheads no_overheads() {
  return Overheads{};  // the struct's defaults switch every overhead off
}

Overheads kfp_v2_overheads() {
  Overheads o;
  o.orchestrator = "kfp-v2";
  o.pods_per_task = 2;
  o.driver_pod_duration = Duration::from_s(3);
  o.sandbox_start = Duration::from_s(1);
  o.image_pull_bytes_per_second = static_cast<double>(100 * kMiB);
  o.default_image_size = kGiB;
  o.control_plane = control_plane_for(o.orchestrator);
  return o;
}

Overheads kwok_testenv_overheads() {
  // `run --backend k8s --emulate` on tools/k8s-testenv: shardflow's controller driving Indexed Jobs of
  // kube-controller-manager v1.36, KWOK's fake nodes (no image pulls; Running ~15 ms after the binding),
  // the emulated pods repeating attempt 0's draws. The scheduler's defaults: kwok_testenv_scheduler().
  Overheads o = kfp_v2_overheads();
  o.preset = "kwok-testenv";
  o.orchestrator = "indexed-job";
  o.pods_per_task = 1;
  o.driver_pod_duration = Duration::zero();
  o.sandbox_start = Duration::from_ms(15);
  o.image_pull_bytes_per_second = 0;
  o.default_image_size = 0;
  o.repeat_first_attempt = true;
  o.control_plane = control_plane_for(o.orchestrator);
  o.control_plane.follow_pods = true;  // shardflow's controller watches pods
  return o;
}

SchedulerConfig free_scheduler() {
  return SchedulerConfig{};  // decisions and bindings take no time
}

SchedulerConfig default_scheduler() {
  SchedulerConfig s;
  s.decisions_per_second = 100;
  s.bind_latency = Duration::from_ms(20);
  return s;
}

SchedulerConfig kwok_testenv_scheduler() {
  // kube-scheduler on the test machine: about 2 ms per decision, the binding seen ~10 ms later
  // (issue 9's measurements: creation -> scheduled 12-13 ms).
  SchedulerConfig s;
  s.decisions_per_second = 500;
  s.bind_latency = Duration::from_ms(10);
  return s;
}

namespace {

using YAML::Node;

constexpr std::string_view kClusterKeys[] = {"node_pools", "scheduler", "storage", "autoscaler",
                                             "daemonsets"};
constexpr std::string_view kReservedKeys[] = {"cpu", "memory"};
constexpr std::string_view kDaemonSetKeys[] = {"name", "cpu", "memory", "gpu", "tolerations", "pools"};
constexpr std::string_view kAutoscalerKeys[] = {"scale_down_delay_after_add", "scan_interval"};
constexpr std::string_view kPoolKeys[] = {"name",           "cpu",         "memory",   "gpu",     "count",
                                          "price_per_hour", "speed",       "labels",   "taints",  "mtbf",
                                          "spot",           "autoscaling", "max_pods", "reserved"};
constexpr std::string_view kTaintKeys[] = {"key", "value", "effect"};
constexpr std::string_view kSpotKeys[] = {"discount", "mean_reclaim"};
constexpr std::string_view kAutoscalingKeys[] = {"min", "max", "scale_up_delay", "boot_time",
                                                 "scale_down_idle"};
constexpr std::string_view kSchedulerKeys[] = {"policy",
                                               "percentage_of_nodes_to_score",
                                               "decisions_per_second",
                                               "bind_latency",
                                               "initial_backoff",
                                               "max_backoff",
                                               "backoff_window",
                                               "score_weights",
                                               "fit_resource_weights",
                                               "requested_to_capacity_ratio"};
// kube-scheduler's score plugin names, as a profile's plugins.score lists them.
constexpr std::string_view kScorePlugins[] = {"NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                              "TaintToleration",  "NodeAffinity",
                                              "ImageLocality",    "PodTopologySpread",
                                              "InterPodAffinity"};
constexpr std::string_view kFitResources[] = {"cpu", "memory", "nvidia.com/gpu"};
constexpr std::string_view kRequestedToCapacityRatioKeys[] = {"shape"};
constexpr std::string_view kShapePointKeys[] = {"utilization", "score"};
constexpr std::string_view kStorageKeys[] = {"read_bandwidth", "write_bandwidth"};
constexpr std::string_view kOverheadKeys[] = {
    "orchestrator",  "pods_per_task",        "driver_pod", "driver_resources",
    "sandbox_start", "image_pull_bandwidth", "image_size", "serialize_image_pulls",
    "job_sync",      "control_plane",        "preset",     "repeat_first_attempt"};
constexpr std::string_view kControlPlaneKeys[] = {
    "sync_period",         "scope",       "create_batch", "max_creates_per_sync", "failure_backoff",
    "max_failure_backoff", "follow_pods", "sync_latency", "complete_latency",     "timestamp_resolution",
    "clock_phase",         "api_qps",     "api_burst"};

void read_control_plane(const Reader& r, const Node& n, const std::string& field, ControlPlane& c) {
  const Map m(r, n, field, kControlPlaneKeys);
  if (auto v = m.get("sync_period")) c.sync_period = get_duration(r, *v, m.field("sync_period"));
  if (auto v = m.get("scope")) {
    const std::string s = get_string(r, *v, m.field("scope"));
    if (s == "step")
      c.scope = ControlPlane::Scope::step;
    else if (s == "run")
      c.scope = ControlPlane::Scope::run;
    else
      r.fail(*v, m.field("scope"), "expected step or run, got " + quote(s));
  }
  if (auto v = m.get("create_batch")) c.create_batch = get_duration(r, *v, m.field("create_batch"));
  if (auto v = m.get("max_creates_per_sync"))
    c.max_creates_per_sync =
        static_cast<int>(get_int(r, *v, m.field("max_creates_per_sync"), 0, std::numeric_limits<int>::max()));
  if (auto v = m.get("failure_backoff")) c.failure_backoff = get_duration(r, *v, m.field("failure_backoff"));
  if (auto v = m.get("max_failure_backoff"))
    c.max_failure_backoff = get_duration(r, *v, m.field("max_failure_backoff"));
  if (auto v = m.get("follow_pods")) c.follow_pods = get_bool(r, *v, m.field("follow_pods"));
  if (auto v = m.get("complete_latency"))
    c.complete_latency = get_duration(r, *v, m.field("complete_latency"));
  if (auto v = m.get("timestamp_resolution"))
    c.timestamp_resolution = get_duration(r, *v, m.field("timestamp_resolution"));
  if (auto v = m.get("clock_phase")) {
    // After timestamp_resolution, whichever comes first in the mapping (the presets' phase is 0).
    c.clock_phase = get_duration(r, *v, m.field("clock_phase"));
    if (c.clock_phase > Duration::zero() && c.clock_phase >= c.timestamp_resolution)
      r.fail(*v, m.field("clock_phase"),
             "must be less than timestamp_resolution (" + format_duration(c.timestamp_resolution) +
                 "): the wall clock's time past a multiple of it at simulated time 0");
  }
  if (auto v = m.get("api_qps")) c.api_qps = get_number_min(r, *v, m.field("api_qps"), 0, true);
  if (auto v = m.get("api_burst"))
    c.api_burst = static_cast<int>(get_int(r, *v, m.field("api_burst"), 1, 1'000'000'000));
  if (c.api_qps > 0 && c.api_burst < 1) c.api_burst = 1;
  if (auto v = m.get("sync_latency")) {
    c.sync_latency = get_duration(r, *v, m.field("sync_latency"));
    if (c.sync_latency > Duration::zero() && c.sync_latency >= c.sync_period)
      r.fail(*v, m.field("sync_latency"),
             "must be less than sync_period (" + format_duration(c.sync_period) +
                 "): a sync's writes land before the next sync it asks for");
  }
}

}  // namespace

Overheads read_overheads(const Reader& r, const std::optional<Node>& n) {
  if (n && n->IsScalar()) {
    if (n->Scalar() != "none")
      r.fail(*n, "overheads", "expected a mapping or \"none\", got " + quote(n->Scalar()));
    return no_overheads();
  }
  Overheads o = kfp_v2_overheads();
  if (!n) return o;
  const Map m(r, *n, "overheads", kOverheadKeys, Map::Kind::read_on);
  Parts part(m);  // each key on its own: an unknown orchestrator does not hide a bad sandbox_start before it
  if (auto v = m.get("preset"))
    part([&] {
      // Named sets of defaults; the keys below still apply over them.
      const std::string preset = get_string(r, *v, m.field("preset"));
      if (preset == "none") {
        o = no_overheads();  // `overheads: none` (preset ""), with the keys below over it
      } else if (preset == "kwok-testenv") {
        o = kwok_testenv_overheads();
      } else {
        r.fail(*v, m.field("preset"), "unknown preset " + quote(preset) + " (expected none or kwok-testenv)");
      }
    });
  if (auto v = m.get("orchestrator"))
    part([&] {
      const std::string orchestrator = get_string(r, *v, m.field("orchestrator"));
      if (orchestrator == "argo" || orchestrator == "indexed-job" || orchestrator == "none") {
        o.pods_per_task = 1;
        o.driver_pod_duration = Duration::zero();
      } else if (orchestrator == "kfp-v2") {
        // Its driver pod, over a preset without one (`preset: none` kept one pod per task and no driver:
        // KFP's controller with Argo's pods, and driver_pod refused beside it).
        o.pods_per_task = 2;
        if (o.driver_pod_duration == Duration::zero())
          o.driver_pod_duration = kfp_v2_overheads().driver_pod_duration;
      } else {
        r.fail(
            *v, m.field("orchestrator"),
            "unknown orchestrator " + quote(orchestrator) + " (expected kfp-v2, argo, indexed-job or none)");
      }
      o.orchestrator = orchestrator;
    });
  if (auto v = m.get("pods_per_task"))
    part([&] {
      // The model knows one driver pod at most: 3 and more behaved as 2, silently.
      o.pods_per_task = static_cast<int>(get_int(r, *v, m.field("pods_per_task"), 1, 16));
      if (o.pods_per_task > 2)
        r.fail(*v, m.field("pods_per_task"),
               "must be 1 (the task's pod alone) or 2 (a driver pod, then the executor pod, as KFP v2 runs a "
               "task), got " +
                   v->Scalar());
    });
  if (auto v = m.get("driver_pod"))
    part([&] {
      if (o.pods_per_task < 2)
        r.fail(*v, m.field("driver_pod"),
               "applies only with a driver pod (orchestrator kfp-v2, or pods_per_task >= 2)");
      o.driver_pod_duration = get_duration(r, *v, m.field("driver_pod"));
    });
  if (auto v = m.get("driver_resources"))
    part([&] {
      if (o.pods_per_task < 2)
        r.fail(*v, m.field("driver_resources"),
               "applies only with a driver pod (orchestrator kfp-v2, or pods_per_task >= 2)");
      const std::string f = m.field("driver_resources");
      // The driver is a small Go program: the simulator gives its pod no GPUs, so asking for one is a
      // mistake.
      if (const Node& d = *v; d.IsMap()) {
        for (auto it = d.begin(); it != d.end(); ++it)
          if (it->first.IsScalar() && it->first.Scalar() == "gpu")
            r.fail(it->first, key_path(f, "gpu"), "a driver pod requests no GPUs (only cpu and memory)");
      }
      const Resources res = read_resources(r, *v, f, {o.driver_cpu, o.driver_memory, 0});
      o.driver_cpu = res.cpu;
      o.driver_memory = res.memory;
    });
  if (auto v = m.get("sandbox_start"))
    part([&] { o.sandbox_start = get_duration(r, *v, m.field("sandbox_start")); });
  if (auto v = m.get("image_pull_bandwidth"))
    part([&] { o.image_pull_bytes_per_second = get_rate(r, *v, m.field("image_pull_bandwidth")); });
  if (auto v = m.get("image_size"))
    part([&] { o.default_image_size = get_bytes(r, *v, m.field("image_size")); });
  if (auto v = m.get("serialize_image_pulls"))
    part([&] { o.serialize_image_pulls = get_bool(r, *v, m.field("serialize_image_pulls")); });
  if (auto v = m.get("repeat_first_attempt"))
    part([&] { o.repeat_first_attempt = get_bool(r, *v, m.field("repeat_first_attempt")); });
  part.done();
  o.control_plane = control_plane_for(o.orchestrator);
  if (o.preset == "kwok-testenv") o.control_plane.follow_pods = true;  // shardflow's controller watches pods
  // job_sync: the first name of control_plane.sync_period.
  if (auto v = m.get("job_sync")) o.control_plane.sync_period = get_duration(r, *v, m.field("job_sync"));
  if (auto v = m.get("control_plane")) {
    const Duration job_sync = o.control_plane.sync_period;
    read_control_plane(r, *v, m.field("control_plane"), o.control_plane);
    // Both names of one setting, with two values: one would be dropped without a word.
    if (const auto js = m.get("job_sync");
        js && v->IsMap() && (*v)["sync_period"].IsDefined() && o.control_plane.sync_period != job_sync)
      r.fail(*js, m.field("job_sync"),
             "is the former name of control_plane.sync_period, which is given too, with another value (" +
                 format_duration(job_sync) + " here, " + format_duration(o.control_plane.sync_period) +
                 " there): keep one");
  }
  return o;
}

namespace {

// cluster.scheduler.score_weights: {PluginName: weight}; plugins not named keep their default weight.
ScoreWeights read_score_weights(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  ScoreWeights w;
  for (const auto& e : m.entries()) {
    const std::string f = m.field(e.key);
    if (std::find(std::begin(kScorePlugins), std::end(kScorePlugins), e.key) == std::end(kScorePlugins))
      r.fail(e.key_node, f, Map::unknown_name_message("score plugin", e.key, kScorePlugins));
    const int v = static_cast<int>(get_int(r, e.value, f, 0, 1'000'000));
    if (e.key == "NodeResourcesFit")
      w.node_resources_fit = v;
    else if (e.key == "NodeResourcesBalancedAllocation")
      w.node_resources_balanced_allocation = v;
    else if (e.key == "TaintToleration")
      w.taint_toleration = v;
    else if (e.key == "NodeAffinity")
      w.node_affinity = v;
    else if (e.key == "ImageLocality")
      w.image_locality = v;
    else if (e.key == "PodTopologySpread")
      w.pod_topology_spread = v;
    else
      w.inter_pod_affinity = v;
  }
  return w;
}

// cluster.scheduler.fit_resource_weights: {resource: weight}; replaces the default {cpu: 1, memory: 1}.
FitResourceWeights read_fit_resource_weights(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  if (m.entries().empty()) r.fail(n, field, "must name at least one resource (cpu, memory, nvidia.com/gpu)");
  FitResourceWeights w{0, 0, 0};
  for (const auto& e : m.entries()) {
    const std::string f = m.field(e.key);
    if (std::find(std::begin(kFitResources), std::end(kFitResources), e.key) == std::end(kFitResources))
      r.fail(e.key_node, f, Map::unknown_name_message("resource", e.key, kFitResources));
    const std::int64_t v = get_int(r, e.value, f, std::numeric_limits<std::int64_t>::min());
    if (v < 1 || v > 100)
      r.fail(e.value, f,
             "a resource weight must be 1 to 100 (leave the resource out to not score it), got " +
                 e.value.Scalar());
    (e.key == "cpu" ? w.cpu : e.key == "memory" ? w.memory : w.gpu) = static_cast<int>(v);
  }
  return w;
}

// cluster.scheduler.requested_to_capacity_ratio: {shape: [{utilization: U, score: S}, ...]}.
std::vector<UtilizationShapePoint> read_requested_to_capacity_ratio(const Reader& r, const Node& n,
                                                                    const std::string& field) {
  const Map m(r, n, field, kRequestedToCapacityRatioKeys);
  const Node shape = m.require("shape");
  const std::string f = m.field("shape");
  expect_list(r, shape, f);
  if (shape.size() == 0) r.fail(shape, f, "needs at least one point");
  std::vector<UtilizationShapePoint> out;
  std::size_t i = 0;
  for (const auto& pt : shape) {
    const Map p(r, pt, index_path(f, i++), kShapePointKeys);
    const Node u = p.require("utilization");
    UtilizationShapePoint point;
    point.utilization = static_cast<int>(get_int(r, u, p.field("utilization"), 0, 100));
    point.score = static_cast<int>(get_int(r, p.require("score"), p.field("score"), 0, 10));
    if (!out.empty() && point.utilization <= out.back().utilization)
      r.fail(u, p.field("utilization"),
             "utilizations must increase, got " + std::to_string(point.utilization) + " after " +
                 std::to_string(out.back().utilization));
    out.push_back(point);
  }
  return out;
}

SchedulerConfig read_scheduler(const Reader& r, const std::optional<Node>& n, const std::string& field,
                               bool no_overheads, const std::string& preset) {
  SchedulerConfig s = preset == "kwok-testenv" ? kwok_testenv_scheduler()
                      : no_overheads           ? free_scheduler()
                                               : default_scheduler();
  if (!n) return s;
  const Map m(r, *n, field, kSchedulerKeys);
  if (auto v = m.get("policy")) {
    const std::string p = get_string(r, *v, m.field("policy"));
    if (p == "least-allocated") {
      s.policy = ScorePolicy::least_allocated;
      s.fit_strategy = FitStrategy::least_allocated;
    } else if (p == "most-allocated") {
      s.policy = ScorePolicy::most_allocated;
      s.fit_strategy = FitStrategy::most_allocated;
    } else if (p == "balanced-allocation") {
      s.policy = ScorePolicy::balanced_allocation;
    } else if (p == "list") {
      s.policy = ScorePolicy::list;
    } else if (p == "requested-to-capacity-ratio") {
      s.fit_strategy = FitStrategy::requested_to_capacity_ratio;  // `policy` keeps least-allocated
      if (!m.has("requested_to_capacity_ratio"))
        r.fail(*v, m.field("policy"),
               "requested-to-capacity-ratio needs cluster.scheduler.requested_to_capacity_ratio.shape");
    } else {
      r.fail(*v, m.field("policy"),
             "unknown policy " + quote(p) +
                 " (expected least-allocated, most-allocated, balanced-allocation, "
                 "requested-to-capacity-ratio or list)");
    }
  }
  if (auto v = m.get("requested_to_capacity_ratio")) {
    if (s.fit_strategy != FitStrategy::requested_to_capacity_ratio)
      r.fail(m.key_node("requested_to_capacity_ratio"), m.field("requested_to_capacity_ratio"),
             "applies only with policy: requested-to-capacity-ratio");
    s.requested_to_capacity_ratio_shape =
        read_requested_to_capacity_ratio(r, *v, m.field("requested_to_capacity_ratio"));
  }
  if (auto v = m.get("score_weights")) s.score_weights = read_score_weights(r, *v, m.field("score_weights"));
  if (auto v = m.get("fit_resource_weights"))
    s.fit_resource_weights = read_fit_resource_weights(r, *v, m.field("fit_resource_weights"));
  if (auto v = m.get("percentage_of_nodes_to_score"))
    s.percentage_of_nodes_to_score =
        static_cast<int>(get_int(r, *v, m.field("percentage_of_nodes_to_score"), 0, 100));
  if (auto v = m.get("decisions_per_second"))
    s.decisions_per_second = get_number_min(r, *v, m.field("decisions_per_second"), 0, true);
  if (auto v = m.get("bind_latency")) s.bind_latency = get_duration(r, *v, m.field("bind_latency"));
  if (auto v = m.get("initial_backoff")) s.initial_backoff = get_duration(r, *v, m.field("initial_backoff"));
  if (auto v = m.get("backoff_window")) s.backoff_window = get_duration(r, *v, m.field("backoff_window"));
  if (auto v = m.get("max_backoff")) {
    s.max_backoff = get_duration(r, *v, m.field("max_backoff"));
    if (s.max_backoff < s.initial_backoff)
      r.fail(*v, m.field("max_backoff"),
             "must be >= initial_backoff (" + format_duration(s.initial_backoff) + ")");
  } else {
    s.max_backoff = std::max(s.max_backoff, s.initial_backoff);
  }
  return s;
}

// GKE's reservation for a node of `cpu` millicores (docs.cloud.google.com/kubernetes-engine/docs/concepts/
// plan-node-sizes, "Memory and CPU reservations"): 6% of the first core, 1% of the second, 0.5% of the
// third and fourth, 0.25% of every core above four; each part rounded down to a millicore.
MilliCpu gke_reserved_cpu(MilliCpu cpu) {
  const auto part = [&](MilliCpu from, MilliCpu to) {
    return std::clamp<MilliCpu>(cpu - from, 0, to - from);
  };
  return part(0, 1000) * 6 / 100 + part(1000, 2000) / 100 + part(2000, 4000) * 5 / 1000 +
         part(4000, std::numeric_limits<MilliCpu>::max()) * 25 / 10000;
}

// GKE's memory reservation (the same page): 255 MiB on a machine of less than 1 GiB, else 25% of the first
// 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112 and 2% above 128 GiB, each part rounded
// down to a byte; plus the 100 MiB of kubelet's eviction threshold on every node.
ByteCount gke_reserved_memory(ByteCount memory) {
  constexpr ByteCount kEviction = 100 * kMiB;
  if (memory < kGiB) return 255 * kMiB + kEviction;
  const auto part = [&](ByteCount from, ByteCount to) {
    return std::clamp<ByteCount>(memory - from, 0, to - from);
  };
  constexpr ByteCount kEnd = std::numeric_limits<ByteCount>::max();
  return part(0, 4 * kGiB) / 4 + part(4 * kGiB, 8 * kGiB) / 5 + part(8 * kGiB, 16 * kGiB) / 10 +
         part(16 * kGiB, 128 * kGiB) * 6 / 100 + part(128 * kGiB, kEnd) / 50 + kEviction;
}

// The EKS AMIs' reservation (their bootstrap's kubeReserved; Bottlerocket computes the same): memory
// 11 MiB per pod of the node's maxPods plus 255 MiB, CPU as GKE's rates; plus kubelet's default 100 MiB
// eviction threshold.
ByteCount eks_reserved_memory(int max_pods) {
  return (11 * ByteCount{max_pods} + 255 + 100) * kMiB;
}

// AKS's reservation on Kubernetes 1.29 and later (learn.microsoft.com/azure/aks/node-resource-reservations).
// CPU: the page's table for 1, 2, 4, 8, 16, 32 and 64 cores (60m, 100m, 140m, 180m, 260m, 420m, 740m),
// which these rates give at every one of its points and which fill it in between (and above 64 cores):
// 6% of the first core, 4% of the second, 2% of the third and fourth, 1% of every core above four
// (Azure/karpenter-provider-azure's reservedCPUTaxVCPU); each part rounded down to a millicore.
MilliCpu aks_reserved_cpu(MilliCpu cpu) {
  const auto part = [&](MilliCpu from, MilliCpu to) {
    return std::clamp<MilliCpu>(cpu - from, 0, to - from);
  };
  return part(0, 1000) * 6 / 100 + part(1000, 2000) * 4 / 100 + part(2000, 4000) * 2 / 100 +
         part(4000, std::numeric_limits<MilliCpu>::max()) / 100;
}

// AKS's memory reservation (the same page): the lesser of 20 MB per pod of max_pods + 50 MB and 25% of the
// node's memory (rounded down to a byte), plus kubelet's 100 MiB eviction threshold. The page's MB are
// taken as MiB: AKS gives kubelet its kube-reserved memory in Mi (`--kube-reserved=cpu=100m,memory=1638Mi`),
// and the rates the page gave before 1.29, in GB, are what nodes reserved in GiB (a 7 GiB DS2 v2 node kept
// 1638 MiB: 25% of 4 GiB and 20% of 3 GiB). No 1.29 node's flags were found to check the new rates' unit.
ByteCount aks_reserved_memory(ByteCount memory, int max_pods) {
  return std::min((20 * ByteCount{max_pods} + 50) * kMiB, memory / 4) + 100 * kMiB;
}

// `reserved`: what the node keeps for itself, taken off cpu and memory (which become the allocatable).
void read_reserved(const Reader& r, const Node& v, const std::string& field, NodePool& p) {
  if (v.IsScalar()) {
    const std::string preset = v.Scalar();
    if (preset == "gke") {
      p.reserved_cpu = gke_reserved_cpu(p.cpu);
      p.reserved_memory = gke_reserved_memory(p.memory);
    } else if (preset == "eks") {
      p.reserved_cpu = gke_reserved_cpu(p.cpu);
      p.reserved_memory = eks_reserved_memory(p.max_pods);
    } else if (preset == "aks") {
      p.reserved_cpu = aks_reserved_cpu(p.cpu);
      p.reserved_memory = aks_reserved_memory(p.memory, p.max_pods);
    } else if (preset != "none") {
      r.fail(v, field,
             "unknown preset " + quote(preset) +
                 " (expected gke, eks, aks, none, or a mapping {cpu: ..., memory: ...})");
    }
  } else {
    const Map m(r, v, field, kReservedKeys);
    // 0 reserves none, as memory: 0 does (it was refused as "must be > 0").
    if (auto c = m.get("cpu")) p.reserved_cpu = get_cpu_or_zero(r, *c, m.field("cpu"));
    if (auto b = m.get("memory")) p.reserved_memory = get_bytes(r, *b, m.field("memory"));
  }
  if (p.reserved_cpu >= p.cpu)
    r.fail(v, field,
           "reserves cpu " + format_cpu(p.reserved_cpu) + " of the node's " + format_cpu(p.cpu) +
               ": nothing is left for pods");
  if (p.reserved_memory >= p.memory)
    r.fail(v, field,
           "reserves memory " + format_bytes(p.reserved_memory) + " of the node's " + format_bytes(p.memory) +
               ": nothing is left for pods");
  p.cpu -= p.reserved_cpu;
  p.memory -= p.reserved_memory;
}

// The tolerations the DaemonSet controller adds to every DaemonSet pod (kube-controller-manager's
// pkg/controller/daemon/util/daemonset_util.go, AddOrUpdateDaemonPodTolerations, as of v1.32): the
// taints of node conditions. It adds network-unavailable to hostNetwork pods only; node agents are.
std::vector<Toleration> daemon_pod_tolerations(std::vector<Toleration> own) {
  constexpr std::string_view kAdded[][2] = {{"node.kubernetes.io/not-ready", "NoExecute"},
                                            {"node.kubernetes.io/unreachable", "NoExecute"},
                                            {"node.kubernetes.io/disk-pressure", "NoSchedule"},
                                            {"node.kubernetes.io/memory-pressure", "NoSchedule"},
                                            {"node.kubernetes.io/pid-pressure", "NoSchedule"},
                                            {"node.kubernetes.io/unschedulable", "NoSchedule"},
                                            {"node.kubernetes.io/network-unavailable", "NoSchedule"}};
  for (const auto& [key, effect] : kAdded)
    own.push_back({std::string(key), "Exists", "", std::string(effect)});
  return own;
}

// `cluster.daemonsets`: each one's requests added to the pools it runs on.
void read_daemonset(const Reader& r, const Node& d, const std::string& f, std::vector<NodePool>& pools,
                    const std::vector<std::string>& names, std::vector<DaemonSet>& out);

// `names`: every node pool's name in the file's order, `pools` those read. Collecting, a pool with a
// problem is left out of `pools`: a DaemonSet that names it is read on the others (naming it is not a
// problem of its own).
std::vector<DaemonSet> read_daemonsets(const Reader& r, const Node& v, const std::string& field,
                                       std::vector<NodePool>& pools, const std::vector<std::string>& names) {
  expect_list(r, v, field);
  std::vector<DaemonSet> out;
  std::size_t i = 0;
  for (const auto& d : v) {
    const std::string f = index_path(field, i++);
    // Collecting: a DaemonSet with a problem is reported and the next one read.
    r.attempt([&] { read_daemonset(r, d, f, pools, names, out); });
  }
  // max_pods counts the DaemonSet pods (kubelet's maxPods): what is left is the pipeline's.
  for (NodePool& pool : pools) pool.max_pods -= pool.daemon_pods;
  return out;
}

// One DaemonSet `d` at `f`, appended to `out`, its pods' requests added to the pools it runs on.
void read_daemonset(const Reader& r, const Node& d, const std::string& f, std::vector<NodePool>& pools,
                    const std::vector<std::string>& names, std::vector<DaemonSet>& out) {
  const Map m(r, d, f, kDaemonSetKeys);
  DaemonSet ds;
  ds.where = r.at(d);
  ds.name = get_nonempty_string(r, m.require("name"), m.field("name"));
  for (const DaemonSet& other : out)
    if (other.name == ds.name)
      r.fail(d, m.field("name"), "duplicate daemonset name " + quote(ds.name) + first_at(other.where.line));
  if (auto c = m.get("cpu")) ds.cpu = get_cpu(r, *c, m.field("cpu"));
  if (auto b = m.get("memory")) ds.memory = get_bytes(r, *b, m.field("memory"));
  if (auto g = m.get("gpu")) ds.gpu = static_cast<int>(get_int(r, *g, m.field("gpu"), 0, 1'000'000));
  if (auto t = m.get("tolerations")) ds.tolerations = read_tolerations(r, *t, m.field("tolerations"));
  const std::vector<Toleration> tolerations = daemon_pod_tolerations(ds.tolerations);
  std::vector<bool> on(pools.size(), false);
  if (auto ps = m.get("pools")) {
    const std::string pf = m.field("pools");
    expect_list(r, *ps, pf);
    std::size_t k = 0;
    for (const auto& name_node : *ps) {
      const std::string name = get_nonempty_string(r, name_node, index_path(pf, k++));
      const auto it =
          std::find_if(pools.begin(), pools.end(), [&](const NodePool& p) { return p.name == name; });
      if (it == pools.end() && std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (it == pools.end())
        r.fail(name_node, index_path(pf, k - 1),
               "no node pool named " + quote(name) +
                   " (pools: " + listed(names.size(), [&](std::size_t j) { return names[j]; }) + ")");
      if (const Taint* taint = untolerated_taint(*it, tolerations))
        r.fail(name_node, index_path(pf, k - 1),
               "daemonset " + quote(ds.name) + " does not tolerate pool " + quote(name) + "'s taint " +
                   taint_text(*taint) + " (give it a toleration of that taint, or leave the pool out)");
      on[static_cast<std::size_t>(it - pools.begin())] = true;
      ds.pools.push_back(name);
    }
  } else {
    for (std::size_t p = 0; p < pools.size(); ++p)
      on[p] = untolerated_taint(pools[p], tolerations) == nullptr;
  }
  const MilliCpu nonzero_cpu = ds.cpu != 0 ? ds.cpu : kDefaultMilliCpuRequest;
  const ByteCount nonzero_memory = ds.memory != 0 ? ds.memory : kDefaultMemoryRequest;
  for (std::size_t p = 0; p < pools.size(); ++p) {
    if (!on[p]) continue;
    NodePool& pool = pools[p];
    pool.daemon_cpu += ds.cpu;
    pool.daemon_memory += ds.memory;
    pool.daemon_gpu += ds.gpu;
    pool.daemon_nonzero_cpu += nonzero_cpu;
    pool.daemon_nonzero_memory += nonzero_memory;
    ++pool.daemon_pods;
    const auto over = [&](const char* what, const std::string& need, const std::string& have) {
      r.fail_infeasible(d, f,
                        "the daemonsets up to " + quote(ds.name) + " need more " + what +
                            " than a node of pool " + quote(pool.name) + " has for pods (" + need + " of " +
                            have + "); leave it off that pool with `pools:`");
    };
    if (pool.daemon_cpu > pool.cpu) over("cpu", format_cpu(pool.daemon_cpu), format_cpu(pool.cpu));
    if (pool.daemon_memory > pool.memory)
      over("memory", format_bytes(pool.daemon_memory), format_bytes(pool.memory));
    if (pool.daemon_gpu > pool.gpu) over("gpu", std::to_string(pool.daemon_gpu), std::to_string(pool.gpu));
    if (pool.daemon_pods > pool.max_pods)
      over("max_pods", std::to_string(pool.daemon_pods) + " pods", std::to_string(pool.max_pods));
  }
  out.push_back(std::move(ds));
}

NodePool read_pool(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kPoolKeys, Map::Kind::read_on);
  Parts part(m);  // each key on its own (a bad label does not hide a bad taint before it), in file order
  NodePool p;
  p.where = r.at(n);
  part([&] { p.name = get_nonempty_string(r, m.require("name"), m.field("name")); });
  const bool cpu_ok = part([&] { p.cpu = get_cpu(r, m.require("cpu"), m.field("cpu")); });
  const bool memory_ok = part([&] {
    const Node memory = m.require("memory");
    p.memory = get_bytes(r, memory, m.field("memory"));
    // Scores multiply a node's memory by 100 in 64-bit integers, as kube-scheduler's do: a node of more
    // than about 80 PiB would overflow them. 1 PiB is forty times the largest machine sold today.
    if (constexpr ByteCount kMaxNodeMemory = 1024 * 1024 * kGiB; p.memory > kMaxNodeMemory)
      r.fail(memory, m.field("memory"), "must be at most 1Pi (a node's memory), got " + memory.Scalar());
  });
  if (auto v = m.get("gpu"))
    part([&] { p.gpu = static_cast<int>(get_int(r, *v, m.field("gpu"), 0, 1'000'000)); });
  if (auto v = m.get("price_per_hour"))
    part([&] {
      p.price_per_hour = get_number_min(r, *v, m.field("price_per_hour"), 0, true);
      // So that a run's cost (price x hours x nodes) stays a finite number.
      if (p.price_per_hour > 1e9)
        r.fail(*v, m.field("price_per_hour"), "must be at most 1e9 (per node-hour), got " + v->Scalar());
    });
  if (auto v = m.get("speed")) part([&] { p.speed = get_number_min(r, *v, m.field("speed"), 0, false); });
  if (auto v = m.get("max_pods"))
    part([&] { p.max_pods = static_cast<int>(get_int(r, *v, m.field("max_pods"), 1, 1'000'000)); });
  // Reserved resources are a share of the node's: read once its size is known.
  if (auto v = m.get("reserved"); v && cpu_ok && memory_ok)
    part([&] { read_reserved(r, *v, m.field("reserved"), p); });
  if (auto v = m.get("labels")) part([&] { p.labels = get_string_map(r, *v, m.field("labels")); });
  if (auto v = m.get("taints"))
    part([&] {
      const std::string f = m.field("taints");
      expect_list(r, *v, f);
      std::size_t i = 0;
      for (const auto& t : *v) {
        const Map tm(r, t, index_path(f, i++), kTaintKeys);
        Taint taint;
        taint.key = get_nonempty_string(r, tm.require("key"), tm.field("key"));
        if (auto tv = tm.get("value")) taint.value = get_string(r, *tv, tm.field("value"));
        if (auto e = tm.get("effect")) {
          taint.effect = get_string(r, *e, tm.field("effect"));
          if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" &&
              taint.effect != "NoExecute")
            r.fail(*e, tm.field("effect"),
                   "must be NoSchedule, PreferNoSchedule or NoExecute, got " + quote(taint.effect));
        }
        p.taints.push_back(std::move(taint));
      }
    });
  if (auto v = m.get("mtbf")) part([&] { p.mtbf = get_duration(r, *v, m.field("mtbf")); });
  if (auto v = m.get("spot"))
    part([&] {
      // Each key on its own: an unknown key or a bad discount does not hide a bad mean_reclaim.
      const Map s(r, *v, m.field("spot"), kSpotKeys, Map::Kind::read_on);
      Parts sub(s);
      p.spot = true;
      if (auto d = s.get("discount"))
        sub([&] {
          p.spot_discount = get_number(r, *d, s.field("discount"));
          if (p.spot_discount < 0 || p.spot_discount >= 1)
            r.fail(*d, s.field("discount"),
                   "must be >= 0 and < 1 (a fraction of the price), got " + d->Scalar());
        });
      if (auto d = s.get("mean_reclaim"))
        sub([&] { p.spot_mean_reclaim = get_duration(r, *d, s.field("mean_reclaim")); });
      sub.done();
    });
  bool autoscaling_ok = true;
  if (auto v = m.get("autoscaling"))
    autoscaling_ok = part([&] {
      // Each key on its own (min and max together): an unknown key or a bad max does not hide a bad
      // duration.
      const Map a(r, *v, m.field("autoscaling"), kAutoscalingKeys, Map::Kind::read_on);
      Autoscaling& as = p.autoscaling;
      Parts sub(a);
      sub([&] {
        const auto min_node = a.get("min");
        if (min_node) as.min = static_cast<int>(get_int(r, *min_node, a.field("min"), 0, 1'000'000));
        const Node max_node = a.require("max");
        as.max = static_cast<int>(get_int(r, max_node, a.field("max"), 1, 1'000'000));
        // At the min when a --set or an overlay gave it over the file's max; else at the max.
        if (as.max < as.min && min_node && r.at(*min_node).file != r.file() &&
            r.at(max_node).file == r.file())
          r.fail(*min_node, a.field("min"), "must be <= max (" + std::to_string(as.max) + ")");
        if (as.max < as.min)
          r.fail(max_node, a.field("max"), "must be >= min (" + std::to_string(as.min) + ")");
      });
      if (auto x = a.get("scale_up_delay"))
        sub([&] { as.scale_up_delay = get_duration(r, *x, a.field("scale_up_delay")); });
      if (auto x = a.get("boot_time")) sub([&] { as.boot_time = get_duration(r, *x, a.field("boot_time")); });
      if (auto x = a.get("scale_down_idle"))
        sub([&] { as.scale_down_idle = get_duration(r, *x, a.field("scale_down_idle")); });
      sub.done();
    });
  // The count is checked against the autoscaling range, when that was read.
  if (autoscaling_ok)
    part([&] {
      if (auto v = m.get("count")) {
        p.count = static_cast<int>(get_int(r, *v, m.field("count"), 0, 1'000'000));
        if (p.autoscaling.enabled() && (p.count < p.autoscaling.min || p.count > p.autoscaling.max))
          r.fail(*v, m.field("count"),
                 "must be between autoscaling.min and autoscaling.max (" + std::to_string(p.autoscaling.min) +
                     ".." + std::to_string(p.autoscaling.max) + "), got " + v->Scalar());
      } else if (p.autoscaling.enabled()) {
        p.count = p.autoscaling.min;
      } else if (!m.misspelled("count")) {
        r.fail(n, field, "missing required key \"count\" (or autoscaling)");
      } else {
        throw AlreadyReported(r.at(n), field, "missing required key \"count\"");
      }
    });
  part.done();
  return p;
}

}  // namespace

Cluster read_cluster(const Reader& r, const Node& n, bool no_overheads, const std::string& preset) {
  const Map m(r, n, "cluster", kClusterKeys, Map::Kind::section);
  Cluster c;
  bool pools_broken = false;
  std::vector<std::string> pool_names;  // every pool's, read or left out, in the file's order
  bool pools_listed = false;            // whether every pool was looked at, each named (for DaemonSets)
  const auto read_pools = [&] {
    const Node pools = m.require("node_pools");
    const std::string f = m.field("node_pools");
    expect_list(r, pools, f);
    if (pools.size() == 0) r.fail(pools, f, "needs at least one node pool");
    std::int64_t nodes = 0, most_nodes = 0;
    bool unnamed = false;  // a pool left out whose name could not be read
    std::optional<Node> given_count;
    std::string given_count_path;
    std::size_t i = 0;
    for (auto it = pools.begin(); it != pools.end(); ++it, ++i) {
      const Node& p = *it;
      // The simulator's pool sets are 64-bit masks (sim/model.hpp checks it too).
      if (i == 64) r.fail(p, index_path(f, i), "at most 64 node pools, got " + std::to_string(pools.size()));
      NodePool pool;
      // Collecting: a pool with a problem is left out, and the checks of the whole cluster are not made.
      if (!r.attempt([&] { pool = read_pool(r, p, index_path(f, i)); })) {
        pools_broken = true;
        if (const Node name = p.IsMap() ? p["name"] : Node();
            name && name.IsScalar() && !name.Scalar().empty()) {
          if (std::find(pool_names.begin(), pool_names.end(), name.Scalar()) == pool_names.end())
            pool_names.push_back(name.Scalar());
        } else {
          unnamed = true;
        }
        continue;
      }
      const auto other = std::find_if(c.node_pools.begin(), c.node_pools.end(),
                                      [&](const NodePool& o) { return o.name == pool.name; });
      if (other != c.node_pools.end()) {
        r.report(p, index_path(f, i) + ".name",
                 "duplicate pool name " + quote(pool.name) + first_at(other->where.line));
        continue;
      }
      // A count that an overlay or a --set gave, not the file: where a cluster of no nodes is reported.
      if (const Node v = p["count"]; v && r.at(v).file != r.file()) {
        given_count = v;
        given_count_path = index_path(f, i) + ".count";
      }
      nodes += pool.count + pool.autoscaling.max;
      most_nodes += std::max(pool.count, pool.autoscaling.max);
      pool_names.push_back(pool.name);
      c.node_pools.push_back(std::move(pool));
    }
    pools_listed = !unnamed;
    if (nodes == 0 && !pools_broken) {
      const std::string no_nodes = "the cluster has no nodes (every pool has count 0 and no autoscaling)";
      if (given_count) r.fail_infeasible(*given_count, given_count_path, no_nodes);
      r.fail_infeasible(pools, f, no_nodes);
    }
    // Each node costs the simulator memory and its trace a record: 64 pools of 1M nodes took 10 GB.
    if (constexpr std::int64_t kMaxNodes = 1'000'000; most_nodes > kMaxNodes)
      r.fail(pools, f,
             "the cluster has up to " + std::to_string(most_nodes) +
                 " nodes (each pool's count, or autoscaling.max); the limit is " + std::to_string(kMaxNodes));
  };
  // Collecting: without its node pools (`node_pools` missing, say) the rest of the cluster is still read.
  if (!r.attempt(read_pools)) pools_broken = true;
  // DaemonSets name pools: they are read on the pools that were, a pool left out by name is not
  // reported missing; without the list, or with a pool whose name is unknown, they are not read.
  if (auto d = m.get("daemonsets"); d && pools_listed)
    r.attempt(
        [&] { c.daemonsets = read_daemonsets(r, *d, m.field("daemonsets"), c.node_pools, pool_names); });
  r.attempt([&] {
    c.scheduler = read_scheduler(r, m.get("scheduler"), m.field("scheduler"), no_overheads, preset);
  });
  if (auto s = m.get("storage"))
    r.attempt([&] {
      const Map sm(r, *s, m.field("storage"), kStorageKeys);
      if (auto b = sm.get("read_bandwidth"))
        c.storage.read_bytes_per_second = get_rate(r, *b, sm.field("read_bandwidth"));
      if (auto b = sm.get("write_bandwidth"))
        c.storage.write_bytes_per_second = get_rate(r, *b, sm.field("write_bandwidth"));
    });
  if (auto a = m.get("autoscaler"))
    r.attempt([&] {
      const Map am(r, *a, m.field("autoscaler"), kAutoscalerKeys);
      if (auto d = am.get("scale_down_delay_after_add"))
        c.autoscaler.scale_down_delay_after_add = get_duration(r, *d, am.field("scale_down_delay_after_add"));
      if (auto d = am.get("scan_interval"))
        c.autoscaler.scan_interval = get_duration(r, *d, am.field("scan_interval"));
    });
  return c;
}

void check_driver_pod(const Reader& r, const Cluster& cluster, const Overheads& o,
                      const std::optional<Node>& over, const Node& cluster_node) {
  if (o.pods_per_task < 2) return;
  const auto problem = driver_fit_problem(cluster, o);
  if (!problem) return;
  // Point at the requests if the file gives them, else at what holds the defaults.
  std::optional<Node> at;
  if (over && over->IsMap()) at = Map(r, *over, "overheads", kOverheadKeys).get("driver_resources");
  r.fail_infeasible(at ? *at : over ? *over : cluster_node, "overheads.driver_resources", *problem);
}

}  // namespace shardflow::detail
