// The Plan: a Pipeline unrolled into an immutable DAG of task instances. Every backend runs a Plan.
//
//   Scenario s = load_scenario_file("scenarios/shard-preprocess-train.yaml");
//   Plan plan = Plan::unroll(s.pipeline);
//   for (TaskId t = 0; t < plan.size(); ++t)
//     if (!plan.is_join(t)) use(plan.step_of(t), plan.item(t), plan.preds(t));
//
// Layout. Nodes are numbered so that every predecessor has a smaller id than its successor (ids are a
// topological order). A node is either a task (one pod per attempt, from a component step) or a join:
// a zero-duration barrier that completes when its predecessors complete. Joins keep fan-in edges linear
// in size: a step after a loop of a million tasks depends on one join, not on a million tasks, and two
// million-task loops in a row cost two million edges, not 10^12.
//
// Parallelism limits. A limiter has a capacity (a loop's `parallelism`, a group's `parallelism`). Its
// children are units: the iterations of a limited loop, or the child step instances of a limited group.
// A unit is active from the moment its first task starts until its last task finishes; a task may start
// only if, for every unit on its chain (innermost first), that unit is already active or its limiter
// has a free slot. Starting the task activates every inactive unit on the chain.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <shardflow/core/pipeline.hpp>

namespace shardflow {

using TaskId = std::uint32_t;
using UnitId = std::uint32_t;
using LimiterId = std::uint32_t;
inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// A component step as the Plan sees it: its path ("train", "outer/inner") and what its tasks do.
struct PlanStep {
  std::string path;
  Component component;
  std::uint32_t loop_count = 1;  // iterations of its own loop (1 without a loop)
  bool has_loop = false;
  std::uint32_t workers = 0;          // its loop's `workers` (a work queue), 0 = one pod per item
  double speculation_after = 0;       // `speculation.after` (a factor > 1), with speculation_max > 0
  std::uint32_t speculation_max = 0;  // backups per task; 0 = no speculative execution
  std::uint64_t instances = 0;        // tasks of this step in the whole plan
  /// The items (JSON text) of the nearest loop around its tasks (its own, or its group's): task t's item
  /// is items[item(t)]. Empty for `count:` loops and steps outside any loop.
  std::vector<std::string> items;
  /// A level of a tree fan-in ("aggregate.level1"): the index of the step whose tree it is (the root);
  /// kNone for every other step. Its component's `tree` says which share of the root's work each task does.
  std::uint32_t tree_root = 0xFFFFFFFFu;
};

/// One iteration or child scope, for naming tasks inside groups: "outer[3]/inner[7]".
struct Scope {
  std::uint32_t parent = kNone;  // enclosing scope, kNone for the pipeline itself
  std::string name;              // "outer[3]" or "group"
};

struct Unit {
  LimiterId limiter = kNone;
  UnitId parent = kNone;    // next enclosing unit under a limiter, or kNone
  std::uint32_t tasks = 0;  // tasks under this unit (it finishes when all have finished)
};

class Plan {
 public:
  /// Unrolls a validated pipeline. Throws InputError if it would exceed 2^32 - 2 nodes or edges.
  static Plan unroll(const Pipeline& pipeline);
  /// The task instances unroll would make (loops multiplied out; joins are not tasks), without making
  /// them: O(steps). Saturates at 2^64 - 1.
  static std::uint64_t count_tasks(const Pipeline& pipeline);

  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(step_.size()); }
  [[nodiscard]] std::uint64_t task_count() const { return task_count_; }
  [[nodiscard]] std::uint64_t edge_count() const { return preds_.size(); }

  [[nodiscard]] bool is_join(TaskId t) const { return step_[t] == kNone; }
  /// Index into steps(); kNone for joins.
  [[nodiscard]] std::uint32_t step_of(TaskId t) const { return step_[t]; }
  /// Index of the task in its nearest enclosing loop (its own, or its group's), 0 without a loop.
  [[nodiscard]] std::uint32_t item(TaskId t) const { return item_[t]; }
  [[nodiscard]] std::uint32_t scope_of(TaskId t) const { return scope_[t]; }
  /// Innermost unit the node counts against, kNone if no limiter applies.
  [[nodiscard]] UnitId unit_of(TaskId t) const { return unit_[t]; }

  [[nodiscard]] std::span<const TaskId> preds(TaskId t) const {
    return {preds_.data() + pred_begin_[t], preds_.data() + pred_begin_[t + 1]};
  }
  [[nodiscard]] std::span<const TaskId> succs(TaskId t) const {
    return {succs_.data() + succ_begin_[t], succs_.data() + succ_begin_[t + 1]};
  }

  [[nodiscard]] const std::vector<PlanStep>& steps() const { return steps_; }
  [[nodiscard]] const std::vector<Scope>& scopes() const { return scopes_; }
  [[nodiscard]] const std::vector<Unit>& units() const { return units_; }
  /// Capacity of each limiter.
  [[nodiscard]] const std::vector<std::uint32_t>& limiters() const { return limiters_; }
  [[nodiscard]] const std::string& pipeline_name() const { return name_; }

  /// "preprocess[17]", "outer[2]/inner[3]", "aggregate", or "join:preprocess" for joins.
  [[nodiscard]] std::string task_name(TaskId t) const;

  /// Bytes held by this plan (its arrays' capacities), for the memory benchmarks.
  [[nodiscard]] std::size_t memory_bytes() const;

 private:
  friend class PlanBuilder;
  std::string name_;
  std::vector<PlanStep> steps_;
  std::vector<Scope> scopes_;
  std::vector<Unit> units_;
  std::vector<std::uint32_t> limiters_;
  std::vector<std::string> join_names_;  // a join's item() indexes this
  // Per node (structure of arrays).
  std::vector<std::uint32_t> step_;
  std::vector<std::uint32_t> item_;
  std::vector<std::uint32_t> scope_;
  std::vector<UnitId> unit_;
  std::vector<std::uint32_t> pred_begin_;  // size()+1
  std::vector<TaskId> preds_;
  std::vector<std::uint32_t> succ_begin_;  // size()+1
  std::vector<TaskId> succs_;
  std::uint64_t task_count_ = 0;
};

}  // namespace shardflow
