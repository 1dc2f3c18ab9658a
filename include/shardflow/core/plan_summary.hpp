// What a Plan unrolls to, before running it: counts, widths, the critical-path lower bound and the total
// work from mean durations. `shardflow explain` prints this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/plan.hpp>

namespace shardflow {

struct StepSummary {
  std::string path;
  std::uint64_t instances = 0;    // tasks of this step in the plan (2^64 - 1 when more: `saturated`)
  bool saturated = false;         // more than 2^64 - 1 instances (counted, never unrolled)
  std::uint32_t loop_count = 1;   // iterations of its own loop
  std::uint32_t parallelism = 0;  // its loop's limit, 0 = unlimited
  double mean_duration_s = 0;     // mean over its instances (speed-1 node, no overheads)
  double work_s = 0;              // sum over its instances
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
};

/// A group step (a sub-DAG, looped or not): how often its sub-DAG runs and what limits it. The limits a
/// component inside it runs under are its own loop's and those of every group on its path.
struct GroupSummary {
  std::string path;
  std::uint64_t instances = 0;    // runs of its sub-DAG in the plan (2^64 - 1 when more: `saturated`)
  bool saturated = false;         // more than 2^64 - 1 runs
  std::uint32_t loop_count = 1;   // iterations of its own loop
  std::uint32_t parallelism = 0;  // its loop's limit (iterations at once), 0 = unlimited
  /// The group's own `parallelism`: how many of its direct steps run at once in each run, 0 = unlimited.
  std::uint32_t group_parallelism = 0;
  std::size_t first_step = 0;  // index in PlanSummary::steps of its first component step
};

struct PlanSummary {
  std::string pipeline;
  std::uint64_t tasks = 0;  // 2^64 - 1 when there are more (tasks_saturated)
  bool tasks_saturated = false;
  /// Join nodes: the barriers the plan adds where a step waits for a loop or group (not tasks).
  std::uint64_t joins = 0;
  std::uint64_t edges = 0;                 // dependency edges between the plan's nodes, joins included
  std::uint64_t max_fan_out = 0;           // the most successors of any node
  std::uint64_t max_fan_in = 0;            // the most predecessors of any node
  double critical_path_s = 0;              // longest path by mean durations: a lower bound on the makespan
  double total_work_s = 0;                 // sum of mean durations
  double total_cpu_core_s = 0;             // sum of mean duration x requested cores
  std::vector<std::string> critical_path;  // task names along it
  /// The loop limits' bound (unrolled plans only; 0 when no step's loop is limited below its width): a
  /// step whose loop runs at most L of its n tasks at once (`parallelism`, or `workers` for a work queue)
  /// takes at least ceil(n/L) x their mean when they are equal (else the larger of its work / L and its
  /// longest task); with the earliest its first task can start and the shortest path after its tasks, the
  /// makespan's lower bound through that step. The largest over the steps whose loop is not inside a looped
  /// group, by mean durations on speed-1 nodes without overheads.
  double limit_bound_s = 0;
  std::string limit_step;         // the step it comes from
  std::uint64_t limit_tasks = 0;  // its tasks
  std::uint32_t limit = 0;        // at most this many at once
  double limit_step_s = 0;        // its tasks' least time, with the limit
  std::vector<StepSummary> steps;
  /// Depth first, as the pipeline nests them: an enclosing group before the groups inside it.
  std::vector<GroupSummary> groups;
  /// false: made from the pipeline alone (summarize_pipeline); joins, edges, fan widths and the critical
  /// path are then unknown (0 and empty), and the printers say so.
  bool unrolled = true;
  /// When not unrolled: why, for the printers ("over the --max-tasks limit").
  std::string not_unrolled_because = "over the --max-tasks limit";
  /// ... and what would show what is not known without unrolling.
  std::string unroll_advice = "raise --max-tasks to see them";
};

/// Mean duration of one task on a speed-1 node, without overheads.
double mean_task_seconds(const Plan& plan, TaskId t);

/// The longest chain of mean task durations along the plan's edges on speed-1 nodes, without overheads
/// (PlanSummary::critical_path_s). Divided by fastest_speed of a cluster: on average, no run of the plan
/// on that cluster ends sooner, whatever its node counts and limits.
double critical_path_seconds(const Plan& plan);

/// The largest `speed` of the cluster's pools that may have nodes (0 if none may).
double fastest_speed(const Cluster& cluster);

/// Summarizes a plan. Loop parallelism limits are taken from the pipeline (the plan keeps only limiters).
PlanSummary summarize(const Plan& plan, const Pipeline& pipeline);

/// What can be known without unrolling, in O(steps + listed items): the task count, and per step its
/// instances, loop, limit, resources, mean duration and work (so total work and core-hours too). For a
/// pipeline too large to unroll (LoadOptions::max_tasks).
PlanSummary summarize_pipeline(const Pipeline& pipeline);

/// A second lower bound on the makespan: the requested core-seconds divided by the cluster's cores (every
/// pool at its largest size, times its speed). 0 for a cluster without CPUs.
double cpu_capacity_bound_s(const PlanSummary& s, const Cluster& cluster);

/// Human-readable, for `shardflow explain`; `cpu_bound_s` is printed when > 0.
void print_summary(std::ostream& out, const PlanSummary& s, double cpu_bound_s = 0,
                   const Cluster* cluster = nullptr);
/// Machine-readable, for `shardflow explain --json`.
void write_summary_json(std::ostream& out, const PlanSummary& s, double cpu_bound_s = 0,
                        const Cluster* cluster = nullptr);

}  // namespace shardflow
