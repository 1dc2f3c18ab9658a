// The scenario checks that run on the model (Pipeline, Cluster, Overheads) rather than on YAML: every step
// fits some node pool, `after` names resolve to siblings without a cycle, a `fan_in` step merges exactly one
// component loop, the pipeline's task count is within the limit. The loader's readers call them, and so do
// importers that build a Pipeline in code, so that an imported pipeline's errors read the same way. Each
// check that needs a place returns the problem (which step, which `after` entry, the message) and the
// caller names the place: the reader a YAML node's file:line:col, an importer its own file's (Step::where).
// Private to core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/pipeline.hpp>

namespace shardflow::detail {

/// The first of the pool's NoSchedule/NoExecute taints that none of `tolerations` tolerates, or nullptr
/// (PreferNoSchedule only steers scoring). pool_admits, and the reader's check of a DaemonSet's pools.
const Taint* untolerated_taint(const NodePool& pool, const std::vector<Toleration>& tolerations);

/// Why no node of `cluster` could ever hold a task of component step `step` (its node_selector and
/// tolerations match no pool with nodes, or it asks for more than the largest pool it may use holds);
/// nullopt when one can. Pools with no nodes and no autoscaling do not count.
std::optional<std::string> fit_problem(const Cluster& cluster, const Step& step);

/// The same for the driver pod of `overheads` (pods_per_task >= 2): it has no node_selector or
/// tolerations, so it may use the pools without NoSchedule/NoExecute taints, or every pool when all are
/// tainted (as the simulator places it).
std::optional<std::string> driver_fit_problem(const Cluster& cluster, const Overheads& overheads);

/// A problem with one step of a list of siblings, or with one entry of its `after` list.
struct StepProblem {
  std::size_t step = 0;   // index among the siblings
  std::size_t entry = 0;  // index in the step's `after` (dependency problems only)
  std::string message;
  /// A dependency cycle's edges, each (step, entry) as above, (step, entry) among them: a reader may
  /// report the cycle at another of them (the one a --set gave).
  std::vector<std::pair<std::size_t, std::size_t>> cycle;
};

/// Sibling steps by name (first of a name), as the readers keep them while checking names are unique.
using StepNames = std::map<std::string, std::size_t, std::less<>>;

/// Resolves each step's `after` names into `deps` (indices among `steps`, named in `by_name`), then
/// looks for a dependency cycle. The first problem in reading order: a step waiting for itself, an
/// unknown name (listing up to 10 sibling names), or a cycle (reported at the entry that closes it: the
/// shortest cycle through that entry, named in run order, its first 10 steps and how many more).
/// `in_order`: the names of all sibling steps in file order, those a collecting reader left out for their
/// problems included, for the list of the steps here in an unknown step's message (empty: `steps`' names).
std::optional<StepProblem> resolve_dependencies(std::vector<Step>& steps, const StepNames& by_name,
                                                const std::vector<std::string>& in_order = {});

/// Every dependency problem of `steps`, each given to `report`, which must remove the `after` entry it
/// names (it may first move p.step and p.entry to another edge of p.cycle, one a --set gave): the steps
/// waiting for themselves and the unknown names in reading order, then each cycle (as find_cycle names it),
/// broken at the entry removed. Leaves `deps` resolved. The first problem is resolve_dependencies'.
/// Linear in steps and entries but for kSuggested unknown names' "did you mean" and kShortest cycles'
/// shortest forms, each a pass over the steps (a file of 30,000 typos took hours one problem at a time).
inline constexpr std::size_t kSuggested = 100, kShortest = 100;
void resolve_all_dependencies(std::vector<Step>& steps, const StepNames& by_name,
                              const std::vector<std::string>& in_order,
                              const std::function<void(StepProblem&)>& report);

/// "unknown step "x"" with the sibling name it is probably a typo of, else a list of the first 10 of
/// `others` (the names of the other steps here).
std::string unknown_step_message(const std::string& want, const std::vector<std::string_view>& others);

/// The first dependency cycle among `steps` (whose `deps` are resolved), as resolve_dependencies reports
/// it; one depth-first search, then one breadth-first search for the cycle's shortest form.
std::optional<StepProblem> find_cycle(const std::vector<Step>& steps);

/// Sets `fan_in_of` of each step with a `fan_in`: the one component loop among its `deps`. Every
/// problem, in step order: no loop among them, two loops, or a group's loop.
std::vector<StepProblem> resolve_fan_in(std::vector<Step>& steps);

/// An InputError at the widest loop (Step::loop_where; else `file`:1:1) when `pipeline` unrolls to more
/// than `max_tasks` task instances, with the memory simulating them would take.
void check_task_limit(const Pipeline& pipeline, std::uint64_t max_tasks, const std::string& file);
/// The same, counting once, then (memory_bytes > 0) check_task_memory's check: what the loader checks.
void check_task_limit(const Pipeline& pipeline, std::uint64_t max_tasks, std::uint64_t memory_bytes,
                      const std::string& file);
/// An InputError at the later step's name when two component steps (or a tree fan-in's levels) would give
/// pods the same names in a trace (Trace::pod_name): paths that differ only in case, '_', '/' or '.', or a
/// step in a looped group whose names meet another's ("inner" in outer[3] and a step "outer-inner-3").
void check_pod_names(const Pipeline& pipeline);
/// Every such clash (one per later step), in the order of the steps.
std::vector<InputError> pod_name_clashes(const Pipeline& pipeline);
/// Whether simulating `tasks` tasks fits in `memory_bytes` (0: not known, taken as fitting).
bool fits_memory(std::uint64_t tasks, std::uint64_t memory_bytes);

}  // namespace shardflow::detail
