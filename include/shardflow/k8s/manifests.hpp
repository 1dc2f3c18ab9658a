// The Kubernetes objects a run creates: one batch/v1 Job per component step instance.
//
//   auto jobs = k8s::job_manifests(scenario, plan, {.run_id = "r1", .namespace_name = "ml"});
//   std::cout << k8s::to_yaml_stream(jobs);   // what `shardflow run --backend k8s --dry-run` prints
//
// A step instance is a (step, group iteration) pair of the Plan: a step outside any looped group has one;
// a step inside `outer` (a loop of 3) has three, whose Job names end in "-outer-0", "-outer-1", ...
//   * a step with its own loop is an Indexed Job: completions = the loop's count, parallelism = its
//     `parallelism` (all at once when 0), backoffLimitPerIndex = retries.max; {{item.index}} in its
//     command becomes $(JOB_COMPLETION_INDEX) and its items are in the env var SHARDFLOW_ITEMS (a JSON
//     array). A Job's pod template is shared by all its indexes, so a looped step whose command uses
//     {{item}} or {{item.KEY}} becomes one plain Job per item instead (name suffix "-<index>");
//   * any other step is a plain Job with backoffLimit = retries.max and SHARDFLOW_ITEM (the item JSON).
// Every Job has restartPolicy Never and a podFailurePolicy that ignores disruptions (DisruptionTarget),
// so a preempted or evicted pod does not use up a retry. Dependencies and group `parallelism` are not in
// the manifests: the runner creates a Job when its predecessors are done.
//
// Under `emulate` (the KWOK test cluster, tools/k8s-testenv), a step without an image gets
// registry.k8s.io/pause:3.10, and the pod template carries the sampled outcome of attempt 0
// (core/sampling.hpp, options' seed) as annotations the KWOK Stages read: shardflow.io/duration-ms (index
// 0's run time in ms), for Indexed Jobs shardflow.io/duration-ms-by-index ("2000,1500,...", one per
// index) and shardflow.io/fail-indexes (indexes whose attempt 0 fails), for plain Jobs shardflow.io/fail.
// Later attempts reuse the template: they run as long as attempt 0 and fail as it did.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>

namespace shardflow::k8s {

inline constexpr const char* kEmulationImage = "registry.k8s.io/pause:3.10";

struct ManifestOptions {
  std::string run_id;  // a DNS-1123 label of at most 20 characters: it is part of every name
  std::string namespace_name = "default";
  bool emulate = false;
  std::uint64_t seed = 1;  // for the emulate annotations
};

/// One Job of a run and the Plan's tasks it runs: an Indexed Job's tasks by completion index, a plain
/// Job's one task.
struct RunJob {
  nlohmann::json manifest;
  std::vector<TaskId> tasks;
  bool indexed = false;
};

/// The Jobs of a run with their tasks, in the order of the Plan's task ids (see job_manifests).
std::vector<RunJob> run_jobs(const Scenario& scenario, const Plan& plan, const ManifestOptions& options);

/// The object that owns a run: a ConfigMap `sf-<run id>` with the run's labels (shardflow.io/step: run).
/// Every Job of the run names it as owner (set_owner), so deleting it deletes the run (the garbage
/// collector removes the Jobs, and with them their pods).
nlohmann::json run_owner_manifest(const ManifestOptions& options, const std::string& scenario_name);
/// Makes `owner` (an object as the API server returned it: with its uid) the owner of `object`.
void set_owner(nlohmann::json& object, const nlohmann::json& owner);

/// The Jobs of a run, in the order of the Plan's task ids. Throws InputError for a step without an image
/// (unless emulate), a bad run id or namespace, two instances whose names collide, and a {{item.KEY}}
/// that an item lacks.
std::vector<nlohmann::json> job_manifests(const Scenario& scenario, const Plan& plan,
                                          const ManifestOptions& options);

/// `text` as Kubernetes should pass it on in a container's command, args or env value, where it expands
/// $(VAR) and turns $$ into $: each `$` doubled ("price$5" -> "price$$5").
std::string escape_expansion(std::string_view text);

/// Why `image` is not an image reference a kubelet can pull, [REGISTRY[:PORT]/]NAME[:TAG][@DIGEST] as the
/// container runtimes' reference grammar has it (a NAME of lower-case components; a first component with a
/// '.' or ':', or `localhost`, or capitals, is the registry), or "" when it is one.
std::string image_reference_problem(std::string_view image);

/// `text` as a DNS-1123 label: lower case, runs of anything but [a-z0-9] as one '-', no '-' at either end;
/// longer than `max` characters: its first max-9 characters, '-' and 8 hex digits of a hash of `text`.
std::string dns_label(std::string_view text, std::size_t max = 63);
/// A run id and a namespace go into API paths: each must be an RFC 1123 label (a-z, 0-9 and '-', starting
/// and ending with a letter or digit) of at most 20 and 63 characters. Throws InputError at `where`.
void check_run_id(const std::string& id, const SourceLocation& where, const std::string& field = "");
void check_namespace(const std::string& ns, const SourceLocation& where);
/// Whether `s` is an RFC 1123 label of at most `max` characters (the rule of check_run_id/check_namespace).
bool is_label(std::string_view s, std::size_t max);

/// One YAML document (block style; strings quoted when a plain scalar would read differently).
std::string to_yaml(const nlohmann::json& value);
/// Documents separated by "---" lines, as `kubectl apply -f -` reads them.
std::string to_yaml_stream(const std::vector<nlohmann::json>& documents);

}  // namespace shardflow::k8s
