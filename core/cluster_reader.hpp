// Reading a scenario's `cluster:` (node pools, the scheduler, storage, the autoscaler) and `overheads:`
// into the model, and the named presets their defaults come from. Private to core.
#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/cluster.hpp>

#include "yaml_reader.hpp"

namespace shardflow::detail {

// ---- presets: the values docs/scenario-format.md gives ("Control-plane latencies", "Overhead presets")

/// kube-controller-manager's Job controller (orchestrator indexed-job): sync 1 s, scope step, creation
/// batches of 5 ms, at most 500 creations per sync, failure backoff 10 s doubling to 10 min.
ControlPlane indexed_job_control_plane();
/// Argo's workflow controller (orchestrator argo, and kfp-v2 which runs on Argo): sync 10 s, scope run.
ControlPlane argo_control_plane();
/// The control plane of an orchestrator: one of the above, or ControlPlane{} (none: no controller lag).
ControlPlane control_plane_for(const std::string& orchestrator);

/// `overheads: none`: Overheads{} (orchestrator none, one pod per task, every overhead off).
Overheads no_overheads();
/// No `overheads:` in the file: KFP v2 on Argo (a 3 s driver pod before each executor pod, 1 s sandbox
/// start, image pulls of 1 GiB at 100 MiB/s, argo_control_plane()).
Overheads kfp_v2_overheads();
/// `overheads: {preset: kwok-testenv}`: `run --backend k8s --emulate` on tools/k8s-testenv (indexed-job
/// with follow_pods, 15 ms sandbox start, no image pulls, attempts repeating attempt 0's draws).
Overheads kwok_testenv_overheads();

/// With `overheads: none`: SchedulerConfig{} (decisions and bindings take no time).
SchedulerConfig free_scheduler();
/// Otherwise: 100 decisions per second, the binding seen 20 ms later.
SchedulerConfig default_scheduler();
/// With `overheads: {preset: kwok-testenv}`: 500 decisions per second, bindings seen 10 ms later.
SchedulerConfig kwok_testenv_scheduler();

// ---- readers --------------------------------------------------------------------------------------------

/// The top-level `overheads` value (absent: kfp_v2_overheads()).
Overheads read_overheads(const Reader& r, const std::optional<YAML::Node>& n);

/// The top-level `cluster` mapping; the scheduler's defaults follow the overheads (`overheads: none`
/// means a free scheduler; `preset` is Overheads::preset).
Cluster read_cluster(const Reader& r, const YAML::Node& n, bool no_overheads, const std::string& preset);

/// An InputError unless a node can hold the driver pod of `o` (when pods_per_task >= 2; validate.cpp's
/// driver_fit_problem), at the driver's requests if the file gives them, else at what holds the defaults
/// (`overheads`, else `cluster`).
void check_driver_pod(const Reader& r, const Cluster& cluster, const Overheads& o,
                      const std::optional<YAML::Node>& overheads, const YAML::Node& cluster_node);

}  // namespace shardflow::detail
