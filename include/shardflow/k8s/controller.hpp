// The Kubernetes backend: runs a Plan on a live cluster as Jobs, and records what happened as a Trace.
//
//   k8s::ControllerOptions o;
//   o.namespace_name = "ml";
//   o.emulate = true;                                   // KWOK test cluster: sampled durations as
//   annotations std::unique_ptr<Backend> b = k8s::make_backend(o);  // reads the kubeconfig ($KUBECONFIG,
//   current context) Trace trace = b->run(scenario, plan, run_options, &observer);
//
// The controller creates one ConfigMap `sf-<run id>` that owns the run, then the run's Jobs
// (manifests.hpp) in DAG order: a Job is created when core's Execution admits its first task, so
// dependencies, group `parallelism` and loops over groups are held by the controller, and a loop's own
// `parallelism` by its Indexed Job (the Job controller starts at most that many pods at once; Execution
// mirrors it). Retries are the Job controller's (backoffLimitPerIndex / backoffLimit = retries.max,
// with its own exponential backoff, not the step's); a disrupted pod (DisruptionTarget) is recorded as
// evicted and does not use up a retry.
//
// It follows the run's Jobs and Pods with list + watch (label selector shardflow.io/run=<id>, from the
// list's resourceVersion, with bookmarks; a dropped stream reconnects with backoff from the last
// resourceVersion seen; 410 Gone lists again). Each pod is an attempt: created, bound to a node,
// container started and terminated are the receive times of the events that showed them (or the API
// server's timestamps, 1 s resolution, for a transition that was not seen as it happened); the node is
// the real one, a failure's error is the container's exit code, reason and message.
//
// When the run ends its objects are deleted (the owner, with propagation Background) unless
// `keep`; when it is stopped (RunOptions::stop) they are left running: `shardflow k8s cleanup RUN_ID`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <shardflow/core/backend.hpp>
#include <shardflow/k8s/client.hpp>
#include <shardflow/k8s/kubeconfig.hpp>

namespace shardflow::k8s {

struct ControllerOptions {
  std::string kubeconfig;      // "" = $KUBECONFIG or ~/.kube/config
  std::string context;         // "" = current-context
  std::string namespace_name;  // "" = the context's namespace
  std::string run_id;          // "" = 8 random hex digits
  bool emulate = false;        // manifests for the KWOK test cluster (see manifests.hpp)
  bool keep = false;           // leave the run's objects when it ends
  double qps = 50;
  int burst = 100;
  std::string out_dir;  // where run.json goes (the run's id, namespace, server; for `k8s status`); "" none
  nlohmann::json invocation;  // kept in run.json as is: how to make the same Plan again (for --resume)
  /// Resume the run `run_id` that began then (run.json's started_unix_ns): its owner and Jobs exist; the
  /// lists of its Jobs and pods bring back what happened, only the missing Jobs are created, and the
  /// trace keeps the first start as time 0. 0: a new run.
  std::int64_t resume_started_unix_ns = 0;
  /// Told what a user should know while the run goes on (a pod the scheduler cannot place yet); none: quiet.
  std::function<void(const std::string&)> warn;
  /// Told, once the kubeconfig is read, the command that deletes this run's objects (cleanup_command with
  /// the files, context and namespace the run uses), for a caller that prints it after the run.
  std::function<void(const std::string&)> cleanup;
};

/// The Kubernetes backend. check() reads the kubeconfig and builds the manifests (InputError);
/// run() first checks the cluster: the namespace exists, the credentials are accepted, and every step's
/// request fits on some node that its node selector allows (InputError when none can hold it).
std::unique_ptr<Backend> make_backend(const ControllerOptions& options);

/// The credentials to use: `kubeconfig` and `context` (load_kubeconfig), or the pod's service account when
/// both are "", $KUBECONFIG is unset, ~/.kube/config does not exist and the process runs in a pod.
Credentials credentials_for(const std::string& kubeconfig, const std::string& context);

/// What delete_run did.
struct CleanupResult {
  std::size_t deleted = 0;  // delete requests that found their object
  std::size_t left = 0;     // objects with the label still there at the end (0 after a wait that succeeded)
};
/// Deletes run `run_id` ("" = every shardflow run of the namespace): the owners (ConfigMaps labelled with
/// it) and the run's Jobs that have no owner, with `propagation` ("Background" or "Foreground"; the garbage
/// collector then deletes the Jobs and their pods). With `wait`, polls until no Job, Pod or ConfigMap with
/// the label is left or `timeout` has passed. Throws ApiError / TransportError as the client does.
CleanupResult delete_run(Client& client, const std::string& namespace_name, const std::string& run_id,
                         const std::string& propagation, bool wait, Duration timeout);

/// The pool a cluster's node belongs to, for the trace (NodeRecord::pool; calibrate matches it to the
/// scenario's pools by name): the first of its labels shardflow.io/pool (tools/k8s-testenv's pools),
/// cloud.google.com/gke-nodepool, eks.amazonaws.com/nodegroup, kubernetes.azure.com/agentpool, agentpool,
/// karpenter.sh/nodepool and node.kubernetes.io/instance-type that it has; "" if none. `node` is a Node
/// object as the API server gives it.
std::string node_pool_label(const nlohmann::json& node);

/// The label selector of a run's objects ("shardflow.io/run=ID"), or of every run ("" id).
std::string run_selector(const std::string& run_id);

/// The command that deletes run `run_id`'s objects, as a user would type it where shardflow ran: `shardflow
/// k8s cleanup ID`, with `--kubeconfig`, `--context` when given ("" = left out) and `--namespace`, each
/// value quoted for a POSIX shell when it needs it. Printed after an interrupted or kept run, by `k8s
/// status`, and when the API server is away: as printed, it reaches the same cluster.
/// A run's controller as run.json names it (host name, process id, start time) still runs: on this
/// machine, a live process of that id that started at `start` (process_start_ticks), or, for a file
/// without a start (start < 0; written before 2026-12-05), whose name is shardflow's. False for another
/// machine (it cannot be told from here).
bool controller_running(const std::string& host, std::int64_t pid, std::int64_t start = -1);
/// When process `pid` started, in clock ticks after boot (/proc/PID/stat's starttime); -1 if unknown.
std::int64_t process_start_ticks(std::int64_t pid);

std::string cleanup_command(const std::string& run_id, const std::string& kubeconfig,
                            const std::string& context, const std::string& namespace_name);

}  // namespace shardflow::k8s
