#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/plan.hpp>

namespace shardflow {

// Builds a Plan in one pass over the pipeline. Node ids are handed out in creation order, and a node is
// created only after all its predecessors, so ids are a topological order and the predecessor lists can
// be appended as we go; successor lists are filled by a counting sort at the end.
class PlanBuilder {
 public:
  Plan build(const Pipeline& pipeline) {
    plan_.name_ = pipeline.name;
    plan_.scopes_.push_back(Scope{kNone, ""});
    plan_.pred_begin_.push_back(0);
    StepIndexMap index;
    register_steps(pipeline.steps, "", index);
    register_tree_levels(pipeline.steps);
    // Room for every node up front, so that a fan-out of n tasks fills the arrays in place instead of
    // growing them by doubling (a copy of each, and its pages touched twice). Joins are extra nodes, and
    // the usual fan-in has about one edge per node: both are guesses, and past them the arrays grow.
    // (A plan too large to build gets its error from add_node, not a failed allocation here.)
    if (const std::uint64_t nodes = count_step_tasks(pipeline.steps); nodes < kNone - 1) {
      const std::size_t room = nodes + nodes / 8 + 16;
      for (auto* v : {&plan_.step_, &plan_.item_, &plan_.scope_, &plan_.unit_, &plan_.preds_})
        v->reserve(room);
      plan_.pred_begin_.reserve(room + 1);
    }
    std::size_t next = 0;
    unroll_siblings(pipeline.steps, {}, 0, kNone, kNone, 0, next);
    finish_successors();
    return std::move(plan_);
  }

 private:
  using StepIndexMap = std::vector<std::uint32_t>;

  // Component steps get PlanStep entries in declaration order (depth first), before unrolling, so that
  // step indices do not depend on the order in which instances are created.
  void register_steps(const std::vector<Step>& steps, const std::string& prefix, StepIndexMap& out,
                      const std::vector<std::string>* enclosing_items = nullptr) {
    for (const Step& s : steps) {
      const std::string path = prefix.empty() ? s.name : prefix + "/" + s.name;
      const std::vector<std::string>* items = s.loop ? &s.loop->items : enclosing_items;
      if (s.is_group()) {
        register_steps(s.steps, path, out, items);
      } else {
        PlanStep ps;
        ps.path = path;
        ps.component = s.component;
        ps.has_loop = s.loop.has_value();
        ps.workers = s.loop ? s.loop->workers : 0;
        ps.speculation_after = s.speculation_after;
        ps.speculation_max = s.speculation_max;
        ps.loop_count = s.iterations();
        if (items != nullptr) ps.items = *items;
        component_index_.push_back(static_cast<std::uint32_t>(plan_.steps_.size()));
        plan_.steps_.push_back(std::move(ps));
      }
    }
  }

  // Tree fan-in: the intermediate levels of every top-level `fan_in` step get PlanSteps after all the
  // component steps (so that adding a tree does not renumber them), "aggregate.level1" and so on; the
  // step's own PlanStep becomes the root and reads the last level. A loop of n <= arity items needs no
  // level: the step stays a flat fan-in, unchanged.
  void register_tree_levels(const std::vector<Step>& steps) {
    std::size_t c = 0;
    for (const Step& s : steps) {
      const std::size_t own = c;
      c += count_components(s);
      if (s.fan_in_arity == 0) continue;
      const std::uint32_t k = s.fan_in_arity, total = steps[s.fan_in_of].iterations();
      TreeLevels levels;
      levels.first_step = static_cast<std::uint32_t>(plan_.steps_.size());
      PlanStep& root = plan_.steps_[component_index_[own]];
      const PlanStep base = root;
      std::uint32_t inputs = total;
      while (inputs > k) {
        const std::uint32_t tasks = inputs / k + (inputs % k != 0 ? 1 : 0);
        PlanStep ps;
        ps.path = base.path + ".level" + std::to_string(levels.count + 1);
        ps.component = base.component;
        ps.component.tree = TreeShare{inputs, k, total};
        ps.has_loop = true;
        ps.loop_count = tasks;
        ps.tree_root = component_index_[own];
        plan_.steps_.push_back(std::move(ps));
        ++levels.count;
        inputs = tasks;
      }
      if (levels.count > 0) plan_.steps_[component_index_[own]].component.tree = TreeShare{inputs, k, total};
      tree_levels_.emplace(&s, levels);
    }
  }

  // Adds the tree levels of `s` over the loop tasks [first, first + n): returns the last level's tasks,
  // which the root reads instead of every loop task.
  std::vector<TaskId> add_tree_levels(const Step& s, TaskId first, std::uint32_t n, std::uint32_t scope,
                                      UnitId unit) {
    std::vector<TaskId> inputs(n), next, preds;
    std::iota(inputs.begin(), inputs.end(), first);
    const TreeLevels& levels = tree_levels_.at(&s);
    const std::uint32_t k = s.fan_in_arity;
    for (std::uint32_t l = 0; l < levels.count; ++l) {
      next.clear();
      for (std::size_t i = 0; i * k < inputs.size(); ++i) {
        const auto from = inputs.begin() + static_cast<std::ptrdiff_t>(i * k);
        preds.assign(from,
                     from + static_cast<std::ptrdiff_t>(std::min<std::size_t>(k, inputs.size() - i * k)));
        next.push_back(add_node(levels.first_step + l, static_cast<std::uint32_t>(i), scope, unit, preds));
      }
      inputs.swap(next);
    }
    return inputs;
  }

  // One step instance's exit: the nodes whose completion means the instance completed, and the single
  // node standing for them (itself, or a join made the first time a dependent asks).
  struct Exit {
    std::vector<TaskId> nodes;
    TaskId node = kNone;
    std::string name;
    TaskId first_task = kNone;  // a component step's tasks are first_task .. first_task + tasks - 1
    std::uint32_t tasks = 0;
  };

  struct TreeLevels {
    std::uint32_t first_step = 0;  // PlanStep index of level 1
    std::uint32_t count = 0;       // intermediate levels (0: a flat fan-in)
  };

  TaskId exit_node(Exit& e) {
    if (e.node != kNone) return e.node;
    if (e.nodes.size() == 1) {
      e.node = e.nodes.front();
    } else {
      const auto join_index = static_cast<std::uint32_t>(plan_.join_names_.size());
      plan_.join_names_.push_back("join:" + e.name);
      e.node = add_node(kNone, join_index, 0, kNone, e.nodes);
    }
    std::vector<TaskId>().swap(e.nodes);
    return e.node;
  }

  TaskId add_node(std::uint32_t step, std::uint32_t item, std::uint32_t scope, UnitId unit,
                  const std::vector<TaskId>& preds) {
    const std::size_t id = plan_.step_.size();
    if (id >= kNone - 1)
      throw InputError({}, "pipeline", "the plan would have more than 2^32 - 2 task instances");
    if (plan_.preds_.size() + preds.size() >= std::numeric_limits<std::uint32_t>::max())
      throw InputError({}, "pipeline", "the plan would have more than 2^32 - 1 dependency edges");
    plan_.step_.push_back(step);
    plan_.item_.push_back(item);
    plan_.scope_.push_back(scope);
    plan_.unit_.push_back(unit);
    plan_.preds_.insert(plan_.preds_.end(), preds.begin(), preds.end());
    plan_.pred_begin_.push_back(static_cast<std::uint32_t>(plan_.preds_.size()));
    if (step != kNone) {
      ++plan_.task_count_;
      ++plan_.steps_[step].instances;
      for (UnitId u = unit; u != kNone; u = plan_.units_[u].parent) ++plan_.units_[u].tasks;
    }
    return static_cast<TaskId>(id);
  }

  // n tasks of component step `step` with the same scope, unit and predecessors, appended to `out`: the
  // same plan as n calls of add_node (the same errors, for the first task that would fail), filled a
  // whole array at a time. Their items are 0 to n-1 (`numbered`: a loop's own tasks), or all `item`.
  void add_loop_nodes(std::uint32_t step, std::uint32_t n, bool numbered, std::uint32_t item,
                      std::uint32_t scope, UnitId unit, const std::vector<TaskId>& preds,
                      std::vector<TaskId>& out) {
    const std::uint64_t first = plan_.step_.size(), p = preds.size(), edges = plan_.preds_.size();
    constexpr std::uint64_t kMaxEdges = std::numeric_limits<std::uint32_t>::max();
    // add_node's checks for task k: first + k >= kNone - 1, then edges + (k + 1) * p >= kMaxEdges.
    const std::uint64_t bad_id = first + 1 >= kNone ? 0 : kNone - 1 - first;
    const std::uint64_t bad_edges = edges >= kMaxEdges ? 0 : p == 0 ? n : (kMaxEdges - edges + p - 1) / p - 1;
    if (std::min(bad_id, bad_edges) < n) {
      for (std::uint32_t k = 0; k < n; ++k) add_node(step, numbered ? k : item, scope, unit, preds);
      return;  // not reached: add_node throws for the first task past a limit
    }
    plan_.step_.insert(plan_.step_.end(), n, step);
    const std::size_t items = plan_.item_.size();
    plan_.item_.resize(items + n, item);
    if (numbered) std::iota(plan_.item_.begin() + static_cast<std::ptrdiff_t>(items), plan_.item_.end(), 0u);
    plan_.scope_.insert(plan_.scope_.end(), n, scope);
    plan_.unit_.insert(plan_.unit_.end(), n, unit);
    if (p == 0) {
      plan_.pred_begin_.insert(plan_.pred_begin_.end(), n, static_cast<std::uint32_t>(edges));
    } else {
      for (std::uint32_t k = 0; k < n; ++k) {
        plan_.preds_.insert(plan_.preds_.end(), preds.begin(), preds.end());
        plan_.pred_begin_.push_back(static_cast<std::uint32_t>(plan_.preds_.size()));
      }
    }
    plan_.task_count_ += n;
    plan_.steps_[step].instances += n;
    for (UnitId u = unit; u != kNone; u = plan_.units_[u].parent) plan_.units_[u].tasks += n;
    const std::size_t nodes = out.size();
    out.resize(nodes + n);
    std::iota(out.begin() + static_cast<std::ptrdiff_t>(nodes), out.end(), static_cast<TaskId>(first));
  }

  UnitId add_unit(LimiterId limiter, UnitId parent) {
    plan_.units_.push_back(Unit{limiter, parent, 0});
    return static_cast<UnitId>(plan_.units_.size() - 1);
  }

  LimiterId add_limiter(std::uint32_t capacity) {
    plan_.limiters_.push_back(capacity);
    return static_cast<LimiterId>(plan_.limiters_.size() - 1);
  }

  std::uint32_t add_scope(std::uint32_t parent, std::string name) {
    plan_.scopes_.push_back(Scope{parent, std::move(name)});
    return static_cast<std::uint32_t>(plan_.scopes_.size() - 1);
  }

  // Siblings in a topological order of their `deps` (declaration order among ready ones).
  static std::vector<std::size_t> sibling_order(const std::vector<Step>& steps) {
    std::vector<std::size_t> indegree(steps.size(), 0), order;
    std::vector<std::vector<std::size_t>> users(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i)
      for (StepIndex d : steps[i].deps) {
        ++indegree[i];
        users[d].push_back(i);
      }
    // Among ready steps the earliest declared goes first (a min-heap keeps this O(n log n)).
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (indegree[i] == 0) ready.push(i);
    while (!ready.empty()) {
      const std::size_t i = ready.top();
      ready.pop();
      order.push_back(i);
      for (std::size_t u : users[i])
        if (--indegree[u] == 0) ready.push(u);
    }
    if (order.size() != steps.size())
      throw InputError({}, "pipeline", "dependency cycle among steps (the scenario was not validated)");
    return order;
  }

  // Unrolls one list of sibling steps inside a scope. `inherited` are the predecessors of the enclosing
  // group instance (they apply to siblings with no deps of their own). `group_limiter` is the enclosing
  // group's limiter (each sibling instance is one of its units). Returns the exit of every sink sibling.
  // `next_component` walks component_index_ in the same depth-first order as register_steps.
  std::vector<Exit> unroll_siblings(const std::vector<Step>& steps, const std::vector<TaskId>& inherited,
                                    std::uint32_t scope, UnitId parent_unit, LimiterId group_limiter,
                                    std::uint32_t enclosing_item, std::size_t& next_component) {
    // Component indices of each sibling (and of each nested component) in declaration order.
    std::vector<std::size_t> first_component(steps.size());
    {
      std::size_t c = next_component;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        first_component[i] = c;
        c += count_components(steps[i]);
      }
      next_component = c;
    }
    std::vector<Exit> exits(steps.size());
    std::vector<bool> used(steps.size(), false);
    for (const Step& s : steps)
      for (StepIndex d : s.deps) used[d] = true;

    for (std::size_t i : sibling_order(steps)) {
      const Step& s = steps[i];
      std::vector<TaskId> preds;
      const bool tree = s.fan_in_arity != 0 && tree_levels_.at(&s).count > 0;
      if (s.deps.empty()) {
        preds = inherited;
      } else {
        for (StepIndex d : s.deps) {
          if (tree && d == s.fan_in_of) {
            const Exit& loop = exits[d];
            const std::vector<TaskId> last =
                add_tree_levels(s, loop.first_task, loop.tasks, scope, parent_unit);
            preds.insert(preds.end(), last.begin(), last.end());
          } else {
            preds.push_back(exit_node(exits[d]));
          }
        }
        if (tree) std::sort(preds.begin(), preds.end());
      }
      const UnitId step_unit = group_limiter != kNone ? add_unit(group_limiter, parent_unit) : parent_unit;
      Exit& out = exits[i];
      out.name = plan_.scopes_[scope].name.empty() ? s.name : scope_path(scope) + "/" + s.name;
      const LimiterId loop_limiter =
          s.loop && s.loop->parallelism > 0 ? add_limiter(s.loop->parallelism) : kNone;
      const std::uint32_t n = s.iterations();
      if (!s.is_group()) {
        out.first_task = static_cast<TaskId>(plan_.step_.size());
        out.tasks = n;
      }
      for (std::uint32_t it = 0; it < n; ++it) {
        const UnitId unit = loop_limiter != kNone ? add_unit(loop_limiter, step_unit) : step_unit;
        const std::uint32_t item = s.loop ? it : enclosing_item;
        if (!s.is_group() && loop_limiter == kNone) {
          // The loop's tasks share everything but their item: add them all at once.
          add_loop_nodes(component_index_[first_component[i]], n, s.loop.has_value(), enclosing_item, scope,
                         unit, preds, out.nodes);
          break;
        }
        if (!s.is_group()) {
          out.nodes.push_back(add_node(component_index_[first_component[i]], item, scope, unit, preds));
        } else {
          const std::string scope_name = s.loop ? s.name + "[" + std::to_string(it) + "]" : s.name;
          const std::uint32_t child_scope = add_scope(scope, scope_name);
          const LimiterId inner = s.parallelism > 0 ? add_limiter(s.parallelism) : kNone;
          std::size_t c = first_component[i];
          std::vector<Exit> inner_exits = unroll_siblings(s.steps, preds, child_scope, unit, inner, item, c);
          for (Exit& e : inner_exits) {
            // Inner sinks are kept as plain nodes: a join is only made if someone depends on this step.
            if (e.node != kNone)
              out.nodes.push_back(e.node);
            else
              out.nodes.insert(out.nodes.end(), e.nodes.begin(), e.nodes.end());
          }
        }
      }
    }
    std::vector<Exit> sinks;
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (!used[i]) sinks.push_back(std::move(exits[i]));
    return sinks;
  }

  // Task instances of the steps (loops multiplied out), saturating at 2^64 - 1 rather than overflowing.
 public:
  static std::uint64_t count_step_tasks(const std::vector<Step>& steps) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t n = 0;
    for (const Step& s : steps) {
      const std::uint64_t one = s.is_group() ? count_step_tasks(s.steps) : 1;
      const std::uint64_t k = std::max<std::uint32_t>(1, s.iterations());
      const std::uint64_t these = one > kMax / k ? kMax : one * k;
      n = these > kMax - n ? kMax : n + these;
      if (s.fan_in_arity > 0)  // a tree fan-in's levels, as register_tree_levels makes them
        for (std::uint64_t inputs = steps[s.fan_in_of].iterations(); inputs > s.fan_in_arity;) {
          inputs = (inputs + s.fan_in_arity - 1) / s.fan_in_arity;
          n = inputs > kMax - n ? kMax : n + inputs;
        }
    }
    return n;
  }

 private:
  static std::size_t count_components(const Step& s) {
    if (!s.is_group()) return 1;
    std::size_t n = 0;
    for (const Step& c : s.steps) n += count_components(c);
    return n;
  }

  std::string scope_path(std::uint32_t scope) const {
    std::vector<const std::string*> parts;
    for (std::uint32_t s = scope; s != kNone && !plan_.scopes_[s].name.empty(); s = plan_.scopes_[s].parent)
      parts.push_back(&plan_.scopes_[s].name);
    std::string out;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (!out.empty()) out += "/";
      out += **it;
    }
    return out;
  }

  void finish_successors() {
    const std::size_t n = plan_.step_.size();
    plan_.succ_begin_.assign(n + 1, 0);
    for (TaskId p : plan_.preds_) ++plan_.succ_begin_[p + 1];
    std::partial_sum(plan_.succ_begin_.begin(), plan_.succ_begin_.end(), plan_.succ_begin_.begin());
    plan_.succs_.resize(plan_.preds_.size());
    std::vector<std::uint32_t> fill(plan_.succ_begin_.begin(), plan_.succ_begin_.end() - 1);
    for (std::size_t t = 0; t < n; ++t)
      for (std::uint32_t k = plan_.pred_begin_[t]; k < plan_.pred_begin_[t + 1]; ++k)
        plan_.succs_[fill[plan_.preds_[k]]++] = static_cast<TaskId>(t);
  }

  Plan plan_;
  std::vector<std::uint32_t> component_index_;
  std::map<const Step*, TreeLevels> tree_levels_;
};

Plan Plan::unroll(const Pipeline& pipeline) {
  return PlanBuilder().build(pipeline);
}

std::uint64_t Plan::count_tasks(const Pipeline& pipeline) {
  return PlanBuilder::count_step_tasks(pipeline.steps);
}

std::string Plan::task_name(TaskId t) const {
  if (is_join(t)) return join_names_[item_[t]];
  const PlanStep& ps = steps_[step_[t]];
  const std::size_t slash = ps.path.rfind('/');
  std::string leaf = slash == std::string::npos ? ps.path : ps.path.substr(slash + 1);
  if (ps.has_loop) leaf += "[" + std::to_string(item_[t]) + "]";
  std::vector<const std::string*> parts;
  for (std::uint32_t s = scope_[t]; s != kNone && !scopes_[s].name.empty(); s = scopes_[s].parent)
    parts.push_back(&scopes_[s].name);
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += **it + "/";
  return out + leaf;
}

std::size_t Plan::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t total = bytes(step_) + bytes(item_) + bytes(scope_) + bytes(unit_) + bytes(pred_begin_) +
                      bytes(preds_) + bytes(succ_begin_) + bytes(succs_) + bytes(units_) + bytes(limiters_) +
                      bytes(scopes_) + bytes(steps_) + bytes(join_names_);
  for (const Scope& s : scopes_) total += s.name.capacity();
  return total;
}

}  // namespace shardflow
