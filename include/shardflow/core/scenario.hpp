// A Scenario: one pipeline, one cluster, the overheads and a seed; what a scenario file holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/error.hpp>
#include <shardflow/core/pipeline.hpp>

namespace shardflow {

struct Scenario {
  std::string name;
  std::string description;  // free text from the file, for people and reports
  std::string file;         // where it was loaded from ("" when built in code)
  std::uint64_t seed = 1;
  Pipeline pipeline;
  Cluster cluster;
  Overheads overheads;
  friend bool operator==(const Scenario&, const Scenario&) = default;
};

/// The scenario without the places its values were written at (every SourceLocation of its steps, kernels,
/// node pools and DaemonSets cleared, and `file`): two loads of one scenario from other files, overlays
/// or --set spellings then compare equal. (Step::resources_where compares equal already.)
void clear_places(Scenario& s);

/// The scenario as a run at time scale `scale` lives it (the local backend's --time-scale): the run times
/// (duration.base and per_gib) of the steps whose component `scaled` says (the kernels that run for the
/// sampled time: exec::kernel_runs_sampled_time), and every step's retry waits, times `scale`; the other
/// kernels run at their own speed, and retries.max_duration stays (a deadline in real time). Simulated,
/// it predicts such a run.
void apply_time_scale(Scenario& s, double scale, const std::function<bool(const Component&)>& scaled);

/// Whether a pod with this node selector and these tolerations may run on the pool's nodes: every
/// selector label matches, and every NoSchedule/NoExecute taint is tolerated (PreferNoSchedule only
/// steers scoring). The loader checks with it that every step fits somewhere; backends place pods by it.
bool pool_admits(const NodePool& pool, const std::map<std::string, std::string>& node_selector,
                 const std::vector<Toleration>& tolerations);
/// Why the pool refuses the component's pods, as a message says it: the first node_selector label it lacks
/// ("no label accel=a100", "label accel=t4, not a100"), or the first NoSchedule/NoExecute taint not
/// tolerated ("taint spot=true:NoSchedule not tolerated"); "" when pool_admits.
std::string pool_refusal(const NodePool& pool, const Component& c);

/// Loads and validates a scenario file, or a compiled Kubeflow Pipelines PipelineSpec (known by its
/// `pipelineInfo`, `root` and `deploymentSpec`; see docs/kfp-import.md). Throws InputError naming
/// file:line:column and the field for any problem: YAML syntax, unknown keys, wrong types, out-of-range
/// values, unknown or cyclic dependencies, empty loops, tasks that fit on no node.
Scenario load_scenario_file(const std::string& path);

/// A scenario file's text, unparsed (for callers that load it many times with different overrides).
/// Throws InputError for a directory or a file that cannot be read.
std::string read_scenario_file(const std::string& path);

/// The same, from text; `file` is the name used in error messages.
Scenario load_scenario_text(std::string_view yaml, const std::string& file);

/// The same, with changes to the file's content applied first (what-ifs from the command line, sweeps).
/// Each is PATH=VALUE: PATH names a key with dots and a list element with [index] or [name] (the
/// element whose `name` is that); VALUE is YAML. Missing keys along PATH are made; list elements must
/// exist. Errors in or about a value set this way name the override ("--set PATH=VALUE: field: ...").
///   cluster.node_pools[gpu].count=4
///   pipeline.steps[preprocess].parallel_for.parallelism=20
///   cluster.storage={read_bandwidth: 2GiB/s}
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides);
Scenario load_scenario_text(std::string_view yaml, const std::string& file,
                            const std::vector<std::string>& overrides);

/// A file already read (read_scenario_file, read_overlay_file): its path, for messages, and its text.
struct ScenarioFile {
  std::string path;
  std::string text;
};

/// How to change a scenario while loading it. The order is: the scenario file, then the `cluster`
/// preset, then the overlays in order, then the `sets`; the result is validated as one scenario file.
struct LoadOptions {
  /// Partial scenarios deep-merged in order over the scenario: mappings merge key by key; a list whose
  /// elements are all mappings with a `name` merges element by element with the base list's element of
  /// that name (a name the base list lacks is appended); anything else (a scalar, a list without names,
  /// a change of type) replaces. Errors about a value from an overlay name the overlay's file:line:col.
  std::vector<ScenarioFile> overlays;
  /// --set PATH=VALUE overrides (see above), applied after the overlays, in order: when two set one
  /// field, the last wins, whatever the spelling of its path.
  std::vector<std::string> sets;
  /// How many of `overlays` and of `sets` are a first layer, applied before the others: overlays[0,
  /// first) then sets[0, second), then the other overlays, then the other sets. compare's common
  /// --overlay and --set come before each variant's own overlays and sets, which override them.
  std::pair<std::size_t, std::size_t> first_layer{0, 0};
  /// If given, called as each of `sets` is applied, with its index and the field it sets, every list
  /// element by index ("cluster.node_pools[0].count" for cluster.node_pools[cpu].count when `cpu` is
  /// the first pool then): two spellings of one field give one text. A caller that must not let one
  /// set override another (sweep's --vary) compares them; an InputError it throws is the load's.
  std::function<void(std::size_t, const std::string&)> set_field;
  /// "" keeps the scenario's cluster. "local" replaces `cluster` and `overheads` with this machine: one
  /// node pool `local` (count 1, cpu = the CPUs this process may run on, memory = physical memory, no
  /// GPUs, price 0, no pod limit), a free scheduler, no storage model, and the overheads of the local
  /// backend (orchestrator none, no sandbox start, free image pulls). Overlays and sets still apply on
  /// top. Anything else is an InputError.
  std::string cluster;
  /// A compiled Kubeflow Pipelines file only (docs/kfp-import.md): pipeline parameters as NAME=VALUE
  /// (VALUE is YAML or JSON), and what the importer warns about (a default cluster or duration model it
  /// used), one line each; warnings are dropped when `warn` is empty. `cluster` may then also name a
  /// YAML file whose `cluster` (and `overheads`) are used.
  std::vector<std::string> params;
  std::function<void(const std::string&)> warn;
  /// A pipeline that unrolls to more task instances than this is an InputError at its widest loop
  /// (shardflow --max-tasks); the count is known before unrolling (Plan::count_tasks).
  std::uint64_t max_tasks = kDefaultMaxTasks;
  static constexpr std::uint64_t kDefaultMaxTasks = 50'000'000;
  /// A pipeline that unrolls to more tasks than this machine's memory holds (check_task_memory, for a
  /// --max-tasks raised past it) is an InputError at its widest loop, not a process the system kills
  /// while unrolling it. `explain`, which then counts without unrolling, turns it off.
  bool check_memory = true;
  /// Set by check_scenario_file: where the scenario reader records the problems it can read past.
  std::vector<InputError>* problems = nullptr;
};

Scenario load_scenario_file(const std::string& path, const LoadOptions& options);

/// An InputError at the pipeline's widest loop when simulating or running it would take more memory than
/// `memory_bytes` (about 205 bytes a task, the figure --max-tasks's message gives): a run the system
/// would kill for lack of memory, without a word, is refused with one. `file` names the scenario.
void check_task_memory(const Pipeline& pipeline, std::uint64_t memory_bytes, const std::string& file);
/// Whether check_task_memory would let the pipeline through (`explain` unrolls it only then).
bool task_memory_fits(const Pipeline& pipeline, std::uint64_t memory_bytes);
Scenario load_scenario_text(std::string_view yaml, const std::string& file, const LoadOptions& options);

/// An overlay file's text; like read_scenario_file, but its errors say it is the overlay
/// ("--overlay PATH: cannot open the file ...").
ScenarioFile read_overlay_file(const std::string& path);

/// What check_scenario_file found: the scenario when it loads, else every problem found.
struct ScenarioCheck {
  std::optional<Scenario> scenario;
  std::vector<InputError> problems;  // by place: options first, then the file by line and column
  /// With problems, what the load could read past them when it got to the end (the steps without
  /// problems, ...): for checks of their own that the loader does not make (validate's kernels).
  std::optional<Scenario> partial;
};

/// Loads like load_scenario_file, but reports every problem it can find in a scenario file rather than
/// the first (shardflow validate): a step, node pool or section with a problem is left out and the rest
/// is read; checks that need what was left out (a step's fit on a cluster whose pools had problems, the
/// `after` entries naming a step left out, a misspelled required key's absence) are skipped, so that
/// one mistake is one message. YAML syntax errors, problems with --set, --overlay or --cluster, and
/// imported formats (KFP, WfCommons) give one problem, their first.
ScenarioCheck check_scenario_file(const std::string& path, LoadOptions options);

/// Puts problems found in the scenario file `path` in ScenarioCheck::problems' order: the options'
/// problems (no line) first, then the file's, then any other file's (an overlay's), each by line and
/// column; one message for a place reported twice with the same text (read twice through a YAML alias).
void order_problems(std::vector<InputError>& problems, const std::string& path);

}  // namespace shardflow
