#include "validate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/taint.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/trace.hpp>

#include "yaml_reader.hpp"

namespace shardflow {

namespace {

void clear_step_places(std::vector<Step>& steps) {
  for (Step& s : steps) {
    s.where = s.loop_where = s.fan_in_where = s.speculation_where = {};
    if (s.loop) s.loop->workers_where = {};
    KernelSpec& k = s.component.kernel;
    k.where = k.name_where = {};
    k.param_where.clear();
    clear_step_places(s.steps);
  }
}

}  // namespace

void clear_places(Scenario& s) {
  s.file.clear();
  for (NodePool& p : s.cluster.node_pools) p.where = {};
  for (DaemonSet& d : s.cluster.daemonsets) d.where = {};
  clear_step_places(s.pipeline.steps);
}

namespace {

Duration scaled_by(Duration d, double scale) {
  return delay_from_ns(static_cast<double>(d.ns()) * scale);
}

void scale_steps(std::vector<Step>& steps, double scale,
                 const std::function<bool(const Component&)>& scaled) {
  for (Step& s : steps) {
    Component& c = s.component;
    if (scaled(c)) {
      c.duration.base = scaled_by(c.duration.base, scale);
      c.duration.per_gib = scaled_by(c.duration.per_gib, scale);
    }
    // The retry waits; not max_duration, a deadline in real time.
    c.retries.backoff = scaled_by(c.retries.backoff, scale);
    c.retries.max_backoff = scaled_by(c.retries.max_backoff, scale);
    scale_steps(s.steps, scale, scaled);
  }
}

}  // namespace

void apply_time_scale(Scenario& s, double scale, const std::function<bool(const Component&)>& scaled) {
  if (scale != 1) scale_steps(s.pipeline.steps, scale, scaled);
}

bool pool_admits(const NodePool& pool, const std::map<std::string, std::string>& node_selector,
                 const std::vector<Toleration>& tolerations) {
  const bool selected = std::all_of(node_selector.begin(), node_selector.end(), [&](const auto& kv) {
    const auto it = pool.labels.find(kv.first);
    return it != pool.labels.end() && it->second == kv.second;
  });
  return selected && detail::untolerated_taint(pool, tolerations) == nullptr;
}

namespace detail {

const Taint* untolerated_taint(const NodePool& pool, const std::vector<Toleration>& tolerations) {
  const auto tolerated = [&](const Taint& taint) {
    return std::any_of(tolerations.begin(), tolerations.end(),
                       [&](const Toleration& t) { return tolerates(t, taint); });
  };
  const auto it = std::find_if(pool.taints.begin(), pool.taints.end(), [&](const Taint& t) {
    return t.effect != "PreferNoSchedule" && !tolerated(t);
  });
  return it == pool.taints.end() ? nullptr : &*it;
}

namespace {

std::string describe(const Resources& res) {
  return "cpu " + format_cpu(res.cpu) + ", memory " + format_bytes(res.memory) + ", gpu " +
         std::to_string(res.gpu);
}

// The pools with nodes, each with why it refuses the step (shortened names; at most 10, then how many).
std::string pool_refusals(const Cluster& cluster, const Component& c) {
  std::vector<const NodePool*> with_nodes;
  for (const NodePool& p : cluster.node_pools)
    if (p.may_have_nodes()) with_nodes.push_back(&p);
  constexpr std::size_t kShown = 10;
  std::string out;
  for (std::size_t i = 0; i < with_nodes.size() && i < kShown; ++i)
    out +=
        (i ? ", " : "") + shortened(with_nodes[i]->name) + ": " + shortened(pool_refusal(*with_nodes[i], c));
  if (with_nodes.size() > kShown) out += ", and " + with_commas(with_nodes.size() - kShown) + " more";
  return out;
}

}  // namespace

// A task that no node could ever hold would wait forever in every backend; say so at load time.
std::optional<std::string> fit_problem(const Cluster& cluster, const Step& step) {
  const Component& c = step.component;
  const NodePool* largest = nullptr;
  for (const auto& pool : cluster.node_pools) {
    if (!pool.may_have_nodes()) continue;
    if (!pool_admits(pool, c.node_selector, c.tolerations)) continue;
    if (c.resources.cpu <= pool.pod_cpu() && c.resources.memory <= pool.pod_memory() &&
        c.resources.gpu <= pool.pod_gpu() && pool.max_pods > 0)
      return std::nullopt;
    if (!largest || std::tuple(pool.pod_cpu(), pool.pod_memory(), pool.pod_gpu()) >
                        std::tuple(largest->pod_cpu(), largest->pod_memory(), largest->pod_gpu()))
      largest = &pool;
  }
  if (!largest)
    return "step " + quote(step.name) +
           " fits no node pool: its node_selector and tolerations match none of the pools with nodes (" +
           pool_refusals(cluster, c) + ")";
  // Room enough, but no pod slot left (the daemonsets take all of max_pods): said as that.
  if (c.resources.cpu <= largest->pod_cpu() && c.resources.memory <= largest->pod_memory() &&
      c.resources.gpu <= largest->pod_gpu())
    return "step " + quote(step.name) + " (" + describe(step.component.resources) +
           ") fits no node it may use: on pool " + quote(largest->name) +
           ", the largest, the daemonsets take all of its max_pods";
  // Pools large enough that the step may not use (a taint, a selector): the fix may be there, not a size.
  std::string refusing;
  std::size_t refused = 0;
  for (const NodePool& pool : cluster.node_pools)
    if (pool.may_have_nodes() && !pool_admits(pool, c.node_selector, c.tolerations) &&
        c.resources.cpu <= pool.pod_cpu() && c.resources.memory <= pool.pod_memory() &&
        c.resources.gpu <= pool.pod_gpu() && pool.max_pods > 0 && refused++ < 3)
      refusing +=
          (refusing.empty() ? "" : ", ") + shortened(pool.name) + ": " + shortened(pool_refusal(pool, c));
  if (refused > 3) refusing += ", and " + with_commas(refused - 3) + " more";
  return "step " + quote(step.name) + " asks for " + describe(step.component.resources) +
         ", more than any node it may use can hold (largest: pool " + quote(largest->name) + " with " +
         describe(Resources{largest->pod_cpu(), largest->pod_memory(), largest->pod_gpu()}) +
         (largest->has_overhead() ? " for pods, after its reserved resources and daemonsets" : "") +
         (largest->max_pods <= 0 ? ", and its daemonsets take all of its max_pods" : "") + ")" +
         (refusing.empty() ? "" : "; large enough but not for it: " + refusing);
}

std::optional<std::string> driver_fit_problem(const Cluster& cluster, const Overheads& o) {
  const auto untainted = [](const NodePool& p) { return pool_admits(p, {}, {}); };
  const bool any_untainted = std::any_of(cluster.node_pools.begin(), cluster.node_pools.end(), untainted);
  const NodePool* largest = nullptr;
  for (const auto& pool : cluster.node_pools) {
    if (!pool.may_have_nodes() || (any_untainted && !untainted(pool))) continue;
    if (o.driver_cpu <= pool.pod_cpu() && o.driver_memory <= pool.pod_memory() && pool.max_pods > 0)
      return std::nullopt;
    if (!largest ||
        std::tuple(pool.pod_cpu(), pool.pod_memory()) > std::tuple(largest->pod_cpu(), largest->pod_memory()))
      largest = &pool;
  }
  if (!largest)
    return "the driver pod fits no node pool: it tolerates no taints, and the pools without NoSchedule or "
           "NoExecute taints have no nodes";
  // Room enough, but no pod slot left (the daemonsets take all of max_pods): said as that.
  const bool fits_room = o.driver_cpu <= largest->pod_cpu() && o.driver_memory <= largest->pod_memory();
  if (fits_room)
    return "the driver pod (cpu " + format_cpu(o.driver_cpu) + ", memory " + format_bytes(o.driver_memory) +
           ") fits no node it may use: on pool " + quote(largest->name) +
           ", the largest, the daemonsets take all of its max_pods";
  return "the driver pod asks for cpu " + format_cpu(o.driver_cpu) + ", memory " +
         format_bytes(o.driver_memory) + ", more than any node it may use can hold (largest: pool " +
         quote(largest->name) + " with cpu " + format_cpu(largest->pod_cpu()) + ", memory " +
         format_bytes(largest->pod_memory()) +
         (largest->has_overhead() ? " for pods, after its reserved resources and daemonsets" : "") +
         (largest->max_pods <= 0 ? ", and its daemonsets take all of its max_pods" : "") + ")";
}

std::string unknown_step_message(const std::string& want, const std::vector<std::string_view>& others) {
  // A step's name close to it (a typo): said first, as for a misspelled key.
  // Close: a few edits of a name of 3 letters or more ("x" is not "s0" misspelled).
  if (const auto meant = Map::closest_name(want, others);
      meant && want.size() >= 3 && edit_distance(want, *meant) <= std::max<std::size_t>(1, want.size() / 4))
    return "unknown step " + quote(want) + " (did you mean \"" + std::string(*meant) + "\"?)";
  // A message, not a listing of a huge group: the first 10 of the other steps.
  return "unknown step " + quote(want) +
         (others.empty() ? std::string(" (no other steps here)")
                         : " (steps here: " + listed(others.size(), [&](std::size_t k) {
                             return std::string(others[k]);
                           }) + ")");
}

std::optional<StepProblem> resolve_dependencies(std::vector<Step>& steps, const StepNames& by_name,
                                                const std::vector<std::string>& in_order) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (std::size_t j = 0; j < steps[i].after.size(); ++j) {
      const std::string& want = steps[i].after[j];
      if (want == steps[i].name)
        return StepProblem{i, j, "step " + quote(want) + " cannot wait for itself", {}};
      const auto it = by_name.find(want);
      if (it == by_name.end()) {
        // The other steps in file order (not the one asking).
        std::vector<std::string_view> names;
        if (in_order.empty()) {
          for (std::size_t k = 0; k < steps.size(); ++k)
            if (k != i) names.push_back(steps[k].name);
        } else {
          for (const std::string& n : in_order)
            if (n != steps[i].name) names.push_back(n);
        }
        return StepProblem{i, j, unknown_step_message(want, names), {}};
      }
      steps[i].deps.push_back(static_cast<StepIndex>(it->second));
    }
  }
  return find_cycle(steps);
}

namespace {

// The shortest way d reaches s through waits-for edges (a breadth-first search from d, so that a short
// cycle is not shown the long way round the depth-first search went): s, the step that waits for s, ...,
// d. With "s waits for d" it closes a cycle.
std::vector<std::size_t> cycle_chain(const std::vector<Step>& steps, std::size_t s, std::size_t d) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> reached_from(steps.size(), kNone);
  std::vector<std::size_t> queue{d};
  reached_from[d] = d;
  for (std::size_t head = 0; head < queue.size() && reached_from[s] == kNone; ++head)
    for (const StepIndex next : steps[queue[head]].deps)
      if (reached_from[next] == kNone) {
        reached_from[next] = queue[head];
        queue.push_back(next);
      }
  std::vector<std::size_t> chain;
  for (std::size_t at = s; at != d; at = reached_from[at]) chain.push_back(at);
  chain.push_back(d);
  return chain;
}

// The cycle of `chain` named in run order, d first; at most kShown steps, then how many more.
std::string describe_cycle(const std::vector<Step>& steps, const std::vector<std::size_t>& chain) {
  constexpr std::size_t kShown = 10;  // a message, not a listing of a huge cycle
  // d waits for ... waits for s, and s waits for d: in run order d, s, ..., the step d waits for.
  std::vector<std::size_t> order{chain.back()};
  order.insert(order.end(), chain.begin(), chain.end() - 1);
  std::string out;
  for (std::size_t i = 0; i < order.size() && i < kShown; ++i)
    out += (i ? " -> " : "") + shortened(steps[order[i]].name);
  if (order.size() > kShown) out += " -> ... (and " + with_commas(order.size() - kShown) + " more)";
  return out + " -> " + shortened(steps[chain.back()].name);
}

// The cycle's edges, each (step, entry): "s waits for d" (s's entry dep_pos) first, then along the chain.
std::vector<std::pair<std::size_t, std::size_t>> cycle_edges(const std::vector<Step>& steps,
                                                             const std::vector<std::size_t>& chain,
                                                             std::size_t dep_pos) {
  std::vector<std::pair<std::size_t, std::size_t>> edges{{chain.front(), dep_pos}};
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) {  // chain[i + 1] waits for chain[i]
    const std::vector<StepIndex>& deps = steps[chain[i + 1]].deps;
    edges.emplace_back(
        chain[i + 1], static_cast<std::size_t>(std::find(deps.begin(), deps.end(), chain[i]) - deps.begin()));
  }
  return edges;
}

}  // namespace

std::optional<StepProblem> find_cycle(const std::vector<Step>& steps) {
  // Iterative depth-first search over "waits for" edges; a grey step met again closes a cycle.
  enum : std::uint8_t { white, grey, black };
  std::vector<std::uint8_t> color(steps.size(), white);
  std::vector<std::pair<std::size_t, std::size_t>> stack;  // (step, next dep)
  for (std::size_t root = 0; root < steps.size(); ++root) {
    if (color[root] != white) continue;
    stack.emplace_back(root, 0);
    color[root] = grey;
    while (!stack.empty()) {
      auto& [s, next] = stack.back();
      if (next == steps[s].deps.size()) {
        color[s] = black;
        stack.pop_back();
        continue;
      }
      const std::size_t dep_pos = next++;
      const std::size_t d = steps[s].deps[dep_pos];
      if (color[d] == white) {
        color[d] = grey;
        stack.emplace_back(d, 0);
      } else if (color[d] == grey) {
        // d is on the stack: d waits for ... waits for s, and s waits for d.
        const std::vector<std::size_t> chain = cycle_chain(steps, s, d);
        return StepProblem{
            s, dep_pos,
            "dependency cycle: " + describe_cycle(steps, chain) + " (each step runs before the next)",
            cycle_edges(steps, chain, dep_pos)};
      }
    }
  }
  return std::nullopt;
}

void resolve_all_dependencies(std::vector<Step>& steps, const StepNames& by_name,
                              const std::vector<std::string>& in_order,
                              const std::function<void(StepProblem&)>& report) {
  // The names listed for an unknown one: the siblings' in file order, but the asking step's own.
  std::vector<std::string_view> names;
  if (in_order.empty())
    for (const Step& st : steps) names.push_back(st.name);
  else
    names.assign(in_order.begin(), in_order.end());
  std::map<std::string_view, std::size_t> times;  // how often each name is among them
  for (const std::string_view n : names) ++times[n];
  std::size_t suggested = 0;
  const auto unknown = [&](const std::string& want, const std::string& own) {
    const std::size_t others = names.size() - (times.count(own) != 0 ? times[own] : 0);
    // A "did you mean" is a pass over every name: for the first kSuggested unknown names only, so that a
    // file with a typo in each of 30,000 steps is read in a second, not in hours.
    if (suggested < kSuggested) {
      ++suggested;
      std::vector<std::string_view> rest;
      rest.reserve(others);
      for (const std::string_view n : names)
        if (n != own) rest.push_back(n);
      return unknown_step_message(want, rest);
    }
    std::vector<std::string_view> first;  // enough for the listing's first 10
    for (std::size_t k = 0; k < names.size() && first.size() < 10; ++k)
      if (names[k] != own) first.push_back(names[k]);
    return "unknown step " + quote(want) +
           (others == 0 ? std::string(" (no other steps here)")
                        : " (steps here: " + listed(others, [&](std::size_t k) {
                            return std::string(first[k]);
                          }) + ")");
  };
  // The names, in reading order: the caller removes each entry at fault, and the next is looked at.
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].deps.clear();
    for (std::size_t j = 0; j < steps[i].after.size();) {
      const std::string& want = steps[i].after[j];
      std::optional<StepProblem> p;
      if (want == steps[i].name) {
        p = StepProblem{i, j, "step " + quote(want) + " cannot wait for itself", {}};
      } else if (const auto it = by_name.find(want); it == by_name.end()) {
        p = StepProblem{i, j, unknown(want, steps[i].name), {}};
      } else {
        steps[i].deps.push_back(static_cast<StepIndex>(it->second));
        ++j;
        continue;
      }
      const std::size_t before = steps[i].after.size();
      report(*p);
      if (steps[i].after.size() != before - 1)
        throw std::logic_error("resolve_all_dependencies: the report did not remove the entry");
    }
  }
  // Then cycles: one depth-first search, each cycle reported at the entry that closes it and broken there
  // (after[k] and deps[k] are the same entry now). The report may break it at another of its edges (one a
  // --set gave): the search starts again then, as one whose stack held that edge would be wrong.
  enum : std::uint8_t { white, grey, black };
  std::size_t cycles = 0;
  for (bool again = true; again;) {
    again = false;
    std::vector<std::uint8_t> color(steps.size(), white);
    std::vector<std::size_t> at(steps.size(), 0);            // a grey step's place on the stack
    std::vector<std::pair<std::size_t, std::size_t>> stack;  // (step, next dep)
    for (std::size_t root = 0; root < steps.size() && !again; ++root) {
      if (color[root] != white) continue;
      stack.assign(1, {root, 0});
      color[root] = grey;
      while (!stack.empty()) {
        auto& [s, next] = stack.back();
        if (next == steps[s].deps.size()) {
          color[s] = black;
          stack.pop_back();
          continue;
        }
        const std::size_t dep_pos = next++;
        const std::size_t d = steps[s].deps[dep_pos];
        if (color[d] == white) {
          color[d] = grey;
          at[d] = stack.size();
          stack.emplace_back(d, 0);
          continue;
        }
        if (color[d] != grey) continue;
        // d waits for ... waits for s (the stack from d), and s waits for d. Its shortest form (a search
        // over every step) for the first kShortest cycles, the stack's path for any more.
        std::vector<std::size_t> chain;
        if (cycles++ < kShortest) {
          chain = cycle_chain(steps, s, d);
        } else {
          for (std::size_t k = stack.size(); k-- > at[d];) chain.push_back(stack[k].first);
        }
        StepProblem p{
            s, dep_pos,
            "dependency cycle: " + describe_cycle(steps, chain) + " (each step runs before the next)",
            cycle_edges(steps, chain, dep_pos)};
        const std::size_t step = s;
        const std::size_t before = steps[step].after.size();
        report(p);
        if (p.step >= steps.size() || steps[p.step].after.size() != steps[p.step].deps.size() - 1 ||
            (p.step == step && steps[step].after.size() != before - 1))
          throw std::logic_error("resolve_all_dependencies: the report did not remove the entry");
        steps[p.step].deps.erase(steps[p.step].deps.begin() + static_cast<std::ptrdiff_t>(p.entry));
        if (p.step == step && p.entry == dep_pos) {
          --stack.back().second;  // the entry that followed is at dep_pos now
        } else {
          again = true;
          break;
        }
      }
    }
  }
}

// The loop a `fan_in` step merges: exactly one of its `after` steps is a component with a parallel_for.
std::vector<StepProblem> resolve_fan_in(std::vector<Step>& steps) {
  std::vector<StepProblem> problems;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    if (s.fan_in_arity == 0) continue;
    // Looped groups among the others are waited for by the root, as any other `after` step.
    std::vector<StepIndex> loops, looped_groups;
    for (StepIndex d : s.deps)
      if (steps[d].loop) (steps[d].is_group() ? looped_groups : loops).push_back(d);
    if (loops.size() > 1)
      problems.push_back({i,
                          0,
                          "waits for two loops (" + shortened(steps[loops[0]].name) + " and " +
                              shortened(steps[loops[1]].name) + "); fan_in merges one",
                          {}});
    else if (loops.size() == 1)
      s.fan_in_of = loops[0];
    else if (!looped_groups.empty())
      problems.push_back(
          {i,
           0,
           "merges the outputs of a component loop; " + quote(steps[looped_groups[0]].name) + " is a group",
           {}});
    else
      problems.push_back(
          {i, 0, "needs an `after` step with a parallel_for (the loop whose outputs it merges)", {}});
  }
  return problems;
}

namespace {

// Simulating a task costs about this much memory at its peak (trace, plan and simulator state:
// `simulate` of 1 and 2 million tasks on 2,000 nodes peaked at 205 bytes per task, 2026-11-30), and a task
// inside a looped group this much more (its pod's name is stored, with the groups' iteration numbers: 2
// million tasks as 2,000 x 1,000 peaked at 295 bytes a task where 2 million in one loop took 214,
// 2026-12-05).
constexpr double kSimulateBytesPerTask = 205, kLoopedGroupBytesPerTask = 95;

// Task instances inside looped groups (saturating).
std::uint64_t tasks_in_looped_groups(const std::vector<Step>& steps, std::uint64_t outer, bool looped) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t n = 0;
  for (const Step& s : steps) {
    const std::uint64_t k = std::max<std::uint32_t>(1, s.iterations());
    const std::uint64_t times = outer > kMax / k ? kMax : outer * k;
    const std::uint64_t these =
        s.is_group() ? tasks_in_looped_groups(s.steps, times, looped || s.loop) : (looped ? times : 0);
    n = these > kMax - n ? kMax : n + these;
  }
  return n;
}

// The memory simulating the pipeline's `tasks` takes.
double simulate_bytes(const Pipeline& pipeline, std::uint64_t tasks) {
  return static_cast<double>(tasks) * kSimulateBytesPerTask +
         static_cast<double>(tasks_in_looped_groups(pipeline.steps, 1, false)) * kLoopedGroupBytesPerTask;
}

// Along the path to the component step with the most task instances, the loop with the most iterations:
// the one to shrink when the pipeline is too large.
struct WidestLoop {
  std::uint64_t tasks = 0;
  const Step* step = nullptr;  // whose loop it is
};

void find_widest_loop(const std::vector<Step>& steps, std::uint64_t outer, const Step* widest,
                      WidestLoop& out) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const Step& s : steps) {
    const Step* w = widest;
    if (s.loop && (w == nullptr || s.loop->count > w->loop->count)) w = &s;
    const std::uint64_t k = std::max<std::uint32_t>(1, s.iterations());
    const std::uint64_t tasks = outer > kMax / k ? kMax : outer * k;
    if (s.is_group()) {
      find_widest_loop(s.steps, tasks, w, out);
    } else if (tasks > out.tasks) {
      out = WidestLoop{tasks, w};
    }
  }
}

}  // namespace

namespace {

// "1 MiB", "34 GiB": memory for a message.
std::string memory_text(double bytes) {
  std::ostringstream about;
  if (bytes < 1024.0 * 1024 * 1024)
    about << std::max<long long>(1, std::llround(bytes / (1024.0 * 1024))) << " MiB";
  else
    about << std::llround(bytes / (1024.0 * 1024 * 1024)) << " GiB";
  return about.str();
}

// "the pipeline unrolls to N tasks (about X of memory to simulate)" + `then`, at the widest loop.
[[noreturn]] void too_many_tasks(const Pipeline& pipeline, std::uint64_t tasks, const std::string& then,
                                 const std::string& file) {
  WidestLoop w;
  find_widest_loop(pipeline.steps, 1, nullptr, w);
  const std::string what =
      "the pipeline unrolls to " +
      (tasks == std::numeric_limits<std::uint64_t>::max() ? "more than " : std::string()) +
      with_commas(tasks) + " tasks (about " + memory_text(simulate_bytes(pipeline, tasks)) +
      " of memory to simulate); " + then;
  if (w.step == nullptr) throw InputError(SourceLocation{file, 1, 1}, "pipeline", what);
  throw InputError(w.step->loop_where, w.step->loop_field, what);
}

// A component step's pods as the trace names them (Trace::pod_name): pod_name_prefix(path), then the
// iteration numbers of its looped groups (outermost first; the innermost is the item of a step without a
// loop of its own), then item-attempt. `counts`: those groups' iteration counts.
struct PodNames {
  std::string prefix;
  std::vector<std::uint32_t> counts;
  const Step* step = nullptr;
  std::string field;   // the step's, e.g. pipeline.steps[1].steps[0]
  std::string path;    // "outer/inner", "aggregate.level1"
  bool level = false;  // a level of `step`'s tree fan-in
};

void collect_pod_names(const std::vector<Step>& steps, const std::string& field, const std::string& path,
                       std::vector<std::uint32_t>& chain, std::vector<PodNames>& out) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    // The place among the steps read (those kept) when the step does not know its field.
    const std::string f = s.named.field.empty() ? field + ".steps[" + std::to_string(i) + "]" : s.named.field;
    const std::string p = path.empty() ? s.name : path + "/" + s.name;
    if (s.is_group()) {
      if (s.loop) chain.push_back(s.loop->count);
      collect_pod_names(s.steps, f, p, chain, out);
      if (s.loop) chain.pop_back();
      continue;
    }
    std::vector<std::uint32_t> counts = chain;
    if (!s.loop && !counts.empty()) counts.pop_back();
    out.push_back({pod_name_prefix(p), counts, &s, f, p, false});
    // A tree fan-in's levels (top-level steps only), named as Plan::unroll names them.
    if (s.fan_in_arity == 0 || !path.empty() || s.fan_in_of >= steps.size()) continue;
    std::uint64_t inputs = steps[s.fan_in_of].iterations();
    for (int level = 1; inputs > s.fan_in_arity; ++level) {
      inputs = (inputs + s.fan_in_arity - 1) / s.fan_in_arity;
      const std::string lp = p + ".level" + std::to_string(level);
      out.push_back({pod_name_prefix(lp), {}, &s, f, lp, true});
    }
  }
}

// The text of a non-negative decimal number without leading zeros, below `count`.
bool iteration_number(std::string_view digits, std::uint32_t count) {
  if (digits.empty() || digits.size() > 10 || (digits.size() > 1 && digits.front() == '0')) return false;
  std::uint64_t n = 0;
  for (const char c : digits) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  return n < count;
}

}  // namespace

std::vector<InputError> pod_name_clashes(const Pipeline& pipeline) {
  std::vector<InputError> clashes;
  std::vector<PodNames> names;
  std::vector<std::uint32_t> chain;
  collect_pod_names(pipeline.steps, "pipeline", "", chain, names);
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_prefix;
  for (std::size_t i = 0; i < names.size(); ++i) by_prefix[names[i].prefix].push_back(i);
  // Step b's names meet step a's when b's prefix is a's followed by a's outermost j group numbers (j =
  // a's groups - b's): both end in item-attempt, and numbers 0 exist on both sides. Either may come first
  // in the file; the clash is said at the later of the two, once per step.
  struct Clash {
    std::size_t earlier;
    std::string example;  // a pod name both give
  };
  std::map<std::size_t, Clash> at_later;
  for (std::size_t b = 0; b < names.size(); ++b) {
    const PodNames& nb = names[b];
    std::string_view x = nb.prefix;
    std::vector<std::string_view> stripped;  // innermost first
    bool found = false;
    for (;;) {
      if (const auto it = by_prefix.find(x); it != by_prefix.end())
        for (const std::size_t a : it->second) {
          const PodNames& na = names[a];
          if (a == b || na.counts.size() != nb.counts.size() + stripped.size()) continue;
          bool numbers = true;
          for (std::size_t k = 0; k < stripped.size() && numbers; ++k)
            numbers = iteration_number(stripped[stripped.size() - 1 - k], na.counts[k]);
          if (!numbers) continue;
          std::string example = nb.prefix;
          for (std::size_t k = 0; k < nb.counts.size(); ++k) example += "0-";
          example += "0-0";
          at_later.emplace(std::max(a, b), Clash{std::min(a, b), std::move(example)});
          found = true;
          break;
        }
      if (found) break;
      // Strip one more trailing "digits-" group, if x has one after a '-'.
      if (x.size() < 3 || x.back() != '-') break;
      std::size_t d = x.size() - 1;
      while (d > 0 && x[d - 1] >= '0' && x[d - 1] <= '9') --d;
      if (d == x.size() - 1 || d == 0 || x[d - 1] != '-') break;
      stripped.push_back(x.substr(d, x.size() - 1 - d));
      x = x.substr(0, d);
    }
  }
  const auto what = [](const PodNames& n) {
    return n.level ? n.path + " (a level of step " + n.step->name + "'s tree fan-in)" : n.path;
  };
  for (const auto& [later, clash] : at_later) {
    const PodNames& nl = names[later];
    const PodNames& ne = names[clash.earlier];
    // Where its name was given (a --set or an overlay names itself), else the step.
    const SourceLocation& name_at =
        !nl.step->named.where.file.empty() ? nl.step->named.where : nl.step->where;
    clashes.emplace_back(nl.level ? nl.step->fan_in_where : name_at,
                         nl.field + (nl.level ? ".fan_in" : ".name"),
                         "step " + what(nl) + " and step " + what(ne) +
                             " would give their pods the same names (both have " + clash.example +
                             "): a pod is named by its step's path in lower case, with '-' for '_', '/' "
                             "and '.', and its iteration numbers; rename one of the steps");
  }
  return clashes;
}

void check_pod_names(const Pipeline& pipeline) {
  if (std::vector<InputError> clashes = pod_name_clashes(pipeline); !clashes.empty()) throw clashes.front();
}

bool fits_memory(std::uint64_t tasks, std::uint64_t memory_bytes) {
  return memory_bytes == 0 ||
         static_cast<double>(tasks) * kSimulateBytesPerTask <= static_cast<double>(memory_bytes);
}

void check_task_limit(const Pipeline& pipeline, std::uint64_t max_tasks, std::uint64_t memory_bytes,
                      const std::string& file) {
  const std::uint64_t tasks = Plan::count_tasks(pipeline);
  if (tasks > max_tasks)
    too_many_tasks(pipeline, tasks,
                   "the limit is " + with_commas(max_tasks) +
                       " (--max-tasks raises it; `explain` counts without unrolling)",
                   file);
  if (memory_bytes != 0 && simulate_bytes(pipeline, tasks) > static_cast<double>(memory_bytes))
    too_many_tasks(pipeline, tasks,
                   "this machine has " + memory_text(static_cast<double>(memory_bytes)) +
                       ": shrink this loop (`explain` counts without unrolling)",
                   file);
}

void check_task_limit(const Pipeline& pipeline, std::uint64_t max_tasks, const std::string& file) {
  check_task_limit(pipeline, max_tasks, 0, file);
}

}  // namespace detail

void check_task_memory(const Pipeline& pipeline, std::uint64_t memory_bytes, const std::string& file) {
  detail::check_task_limit(pipeline, std::numeric_limits<std::uint64_t>::max(), memory_bytes, file);
}

bool task_memory_fits(const Pipeline& pipeline, std::uint64_t memory_bytes) {
  return memory_bytes == 0 ||
         detail::simulate_bytes(pipeline, Plan::count_tasks(pipeline)) <= static_cast<double>(memory_bytes);
}

std::string pool_refusal(const NodePool& pool, const Component& c) {
  for (const auto& [key, value] : c.node_selector)
    if (const auto it = pool.labels.find(key); it == pool.labels.end())
      return "no label " + key + "=" + value;
    else if (it->second != value)
      return "label " + key + "=" + it->second + ", not " + value;
  if (const Taint* t = detail::untolerated_taint(pool, c.tolerations))
    return "taint " + taint_text(*t) + " not tolerated";
  return "";
}

}  // namespace shardflow
