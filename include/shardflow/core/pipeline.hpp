// The Pipeline model: a DAG of steps, as a user describes it (before unrolling).
//
// A step is either a component (one pod per task: image, command, resources, a duration model, a
// failure model, retries, and the kernel the local backend runs) or a group of steps (a sub-DAG).
// Either may carry a ParallelFor loop: a component with `parallel_for` becomes one task per item; a
// group with `parallel_for` runs its whole sub-DAG once per item. A group without a loop may still
// limit how many of its direct children run at once (`parallelism`, as in an Argo DAG template).
//
// A step that depends on a loop waits for every iteration (fan-in, like KFP's dsl.Collected).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/taint.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow {

/// Resource requests of one pod.
struct Resources {
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
  friend bool operator==(const Resources&, const Resources&) = default;
};

/// A random quantity (sizes in bytes, factors). Constant unless a distribution is named.
struct Distribution {
  enum class Kind : std::uint8_t {
    constant,     // a
    uniform,      // uniform in [a, b)
    normal,       // mean a, standard deviation b; a draw below 0 is 0
    lognormal,    // median a, sigma b (of the underlying normal)
    exponential,  // mean a
  };
  Kind kind = Kind::constant;
  double a = 0;
  double b = 0;
  [[nodiscard]] double mean() const;
  friend bool operator==(const Distribution&, const Distribution&) = default;
};

/// Bytes each item of a step reads (its input) or writes (its output): one constant, a list (item i
/// reads or writes list[i]), or a distribution.
struct DataSize {
  Distribution dist;                // used when `per_item` is empty
  std::vector<ByteCount> per_item;  // when given, its length equals the loop's item count
  [[nodiscard]] double mean_bytes() const;
  friend bool operator==(const DataSize&, const DataSize&) = default;
};

/// How long one attempt of a task runs on a node of speed 1:
///   (base + per_gib * input_GiB) * noise * straggler
/// noise = exp(sigma * Z - sigma^2 / 2) with Z standard normal, so noise has mean 1;
/// straggler = factor with probability p, else 1. On a node of speed s the time is divided by s.
struct DurationModel {
  Duration base = Duration::zero();
  Duration per_gib = Duration::zero();
  double lognormal_sigma = 0;
  double straggler_p = 0;
  double straggler_factor = 1;
  /// The expected run time for an input of `input_bytes`, on a node of speed 1.
  [[nodiscard]] double mean_seconds(double input_bytes) const;
  friend bool operator==(const DurationModel&, const DurationModel&) = default;
};

/// Each attempt fails with probability p, at the end of its run time.
struct FailureModel {
  double p = 0;
  friend bool operator==(const FailureModel&, const FailureModel&) = default;
};

/// Retry k (1-based) waits min(backoff * factor^(k-1), max_backoff) after the failure. With max_duration
/// (Argo's retryStrategy.backoff.maxDuration, KFP's backoffMaxDuration), retrying ends at the task's first
/// attempt's creation + max_duration: no retry after a failure past it or whose wait would end past it, and
/// a retry still running at it is stopped there (failed).
struct RetryPolicy {
  int max = 0;
  Duration backoff = Duration::zero();
  double factor = 2;
  Duration max_backoff = Duration::from_s(300);
  std::optional<Duration> max_duration;
  [[nodiscard]] Duration delay_before_retry(int k) const;
  /// Whether max_duration ends retrying after failure k (1-based) of a task whose first attempt was
  /// created at `first`, as Argo decides: the failure seen (`now`) past the deadline, or the wait
  /// (delay_before_retry(k) times `wait_scale`, as a backend scales it) ending past it from `failed_at`.
  /// False without max_duration. Execution decides by it; a trace's reader tells by it why retries ended.
  [[nodiscard]] bool deadline_ends_retries(int k, SimTime first, SimTime failed_at, SimTime now,
                                           double wait_scale = 1) const;
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

/// What the local (oneTBB) backend runs for a task.
struct KernelSpec {
  std::string name;                           // empty: sleep for the sampled duration
  std::map<std::string, std::string> params;  // as written (numbers kept as text)
  // Where it was written, for the local backend's checks: the `kernel` mapping's field path
  // ("pipeline.steps[0].kernel") and location, the name's and each parameter's value location (a
  // --set that gave it, when one did).
  std::string field;
  SourceLocation where;
  SourceLocation name_where;
  std::map<std::string, SourceLocation> param_where;
  friend bool operator==(const KernelSpec&, const KernelSpec&) = default;
};

/// A preferredDuringSchedulingIgnoredDuringExecution node affinity term: nodes whose labels include
/// every match_labels pair get `weight` (1 to 100) added to their NodeAffinity score.
struct PreferredSchedulingTerm {
  int weight = 1;
  std::map<std::string, std::string> match_labels;  // non-empty
  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

/// Set by Plan::unroll on the intermediate levels and the root of a tree fan-in (`fan_in: {arity: k}`),
/// zero elsewhere. A level has `inputs` inputs; its task i reads inputs i*arity .. min((i+1)*arity,
/// inputs) - 1, so it merges share(i) = that count / `total` of the flat aggregate's work: its run time
/// is share(i) x the aggregate's sampled run time, and its input is share(i) x the aggregate's input.
struct TreeShare {
  std::uint32_t inputs = 0;  // inputs of this level (the loop's items at the first level)
  std::uint32_t arity = 0;
  std::uint32_t total = 0;  // 0: not a tree level; else the loop's item count (what the flat step reads)
  /// The fraction of the flat aggregate's work done by task `i` of this level.
  [[nodiscard]] double share(std::uint32_t i) const {
    const std::uint64_t first = static_cast<std::uint64_t>(i) * arity;
    const std::uint64_t n = first >= inputs ? 0 : std::min<std::uint64_t>(arity, inputs - first);
    return static_cast<double>(n) / static_cast<double>(total);
  }
  friend bool operator==(const TreeShare&, const TreeShare&) = default;
};

/// What one task of a component step asks for and does.
struct Component {
  Resources resources;
  DurationModel duration;
  DataSize input;   // read from shared storage before the run
  DataSize output;  // written to shared storage after a successful run
  FailureModel failure;
  RetryPolicy retries;
  std::string image;
  ByteCount image_size = -1;  // -1: the cluster's default image size
  std::vector<std::string> command;
  KernelSpec kernel;
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  std::vector<PreferredSchedulingTerm> preferred_node_affinity;  // node_affinity.preferred
  TreeShare tree;  // set by Plan::unroll on tree fan-in levels only (never by the loader)
  friend bool operator==(const Component&, const Component&) = default;
};

/// A ParallelFor: items given by count or as a list (each item kept as compact JSON text).
struct Loop {
  std::uint32_t count = 0;         // number of iterations (equals items.size() when items are given)
  std::vector<std::string> items;  // JSON text of each item, empty for `count:` loops
  std::uint32_t parallelism = 0;   // at most this many iterations at once; 0 = unlimited
  /// A work queue (components at the top level only): this many long-lived worker pods each take the
  /// next item when they finish one, until the queue is empty; 0 = one pod per item (static shards).
  std::uint32_t workers = 0;
  SourceLocation workers_where{};  // where `workers` was written, for backends that refuse it
  friend bool operator==(const Loop&, const Loop&) = default;
};

using StepIndex = std::uint32_t;

/// One step of a Pipeline or of a group.
struct Step {
  std::string name;
  SourceLocation where;  // where the step was declared
  /// Where its name was written (line 0: not known; `where` then) and its field, e.g.
  /// pipeline.steps[3].steps[0] (empty: not read from YAML), for errors found after reading (the index
  /// among the steps kept is not the file's when one was left out). Not part of a step's equality: an
  /// overlay that names the step names it elsewhere, and an import that makes the steps knows no field.
  struct Name {
    SourceLocation where;
    std::string field;
    friend bool operator==(const Name& /*a*/, const Name& /*b*/) { return true; }
  };
  Name named{};
  std::vector<std::string> after;  // names of sibling steps this one waits for
  std::vector<StepIndex> deps;     // the same, resolved to indices among the siblings
  std::optional<Loop> loop;
  SourceLocation loop_where;      // of the loop's count: or items: value, for errors about its size
  std::string loop_field;         // that value's field, e.g. pipeline.steps[0].parallel_for.count
  std::vector<Step> steps;        // non-empty: a group (sub-DAG); empty: a component
  std::uint32_t parallelism = 0;  // groups only: at most this many direct children at once
  Component component;            // components only
  /// `fan_in: {arity: k}` (components without a loop that wait for a component loop): the loop's
  /// outputs are merged by a tree of arity k instead of all by this one task. 0: a flat fan-in.
  std::uint32_t fan_in_arity = 0;
  StepIndex fan_in_of = 0;        // with fan_in_arity: the sibling loop step (one of `deps`) it merges
  SourceLocation fan_in_where{};  // where `fan_in` was written, for backends that refuse it
  /// `speculation: {after: F x, max: M}` (top-level components with a loop): a backup attempt of an
  /// iteration starts when its run exceeds F x the median run of the loop's finished iterations, at most
  /// M backups per task. speculation_max 0: no speculation.
  double speculation_after = 0;
  std::uint32_t speculation_max = 0;
  SourceLocation speculation_where{};  // where `speculation` was written, for backends that refuse it
  /// Where each request of `resources` was given (cpu, memory, gpu: its value, a --set's or an overlay's
  /// where one changed it; else the step's `resources`, else the step), for backends that cannot hold it.
  /// Not part of a step's equality: a --set and an overlay that give one value give one step.
  struct ResourcesWhere : std::array<SourceLocation, 3> {
    friend bool operator==(const ResourcesWhere& /*a*/, const ResourcesWhere& /*b*/) { return true; }
  };
  ResourcesWhere resources_where{};

  [[nodiscard]] bool is_group() const { return !steps.empty(); }
  [[nodiscard]] std::uint32_t iterations() const { return loop ? loop->count : 1; }
  friend bool operator==(const Step&, const Step&) = default;
};

/// The pipeline a user wrote: a DAG of steps (sibling dependencies only; deps are resolved).
struct Pipeline {
  std::string name;
  std::vector<Step> steps;
  friend bool operator==(const Pipeline&, const Pipeline&) = default;
};

}  // namespace shardflow
