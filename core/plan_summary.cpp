#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/text.hpp>

namespace shardflow {
namespace {

void loop_limits(const std::vector<Step>& steps, std::vector<std::uint32_t>& out) {
  for (const Step& s : steps) {
    if (s.is_group())
      loop_limits(s.steps, out);
    else
      out.push_back(s.loop ? s.loop->parallelism : 0);
  }
}

// Seconds for people: whole milliseconds, the largest units first ("1h2m30s", "12.5s").
std::string human(double seconds) {
  // Past 10^8 s (27,778 h) whole hours: a Duration holds only 292 years, and seconds would be noise.
  if (seconds >= 1e8) {
    char buf[64];
    // Past 10^30 h, in powers of ten: the digits would fill the line and say nothing more.
    std::snprintf(buf, sizeof buf, seconds / 3600 < 1e30 ? "%.0fh" : "%.3gh", seconds / 3600);
    return buf;
  }
  return format_duration(Duration::from_ms(static_cast<std::int64_t>(std::llround(seconds * 1000))));
}

std::string plural(std::uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// A count that saturated at 2^64 - 1 is not that number: it is more.
constexpr const char* kMoreThan64Bits = "more than 18446744073709551615";

bool has_node_overhead(const Cluster& c) {
  return std::any_of(c.node_pools.begin(), c.node_pools.end(),
                     [](const NodePool& p) { return p.has_overhead(); });
}

// PlanSummary::limit_bound_s from the plan, each node's mean duration (0 for a join) and its finish along
// its longest path from the start.
void limit_bound(const Plan& plan, const std::vector<double>& duration, const std::vector<double>& finish,
                 PlanSummary& s) {
  const std::size_t steps = plan.steps().size();
  std::vector<std::uint32_t> limit(steps, 0);
  bool any = false;
  for (std::size_t i = 0; i < steps; ++i) {
    const StepSummary& st = s.steps[i];
    const std::uint32_t workers = plan.steps()[i].workers;
    std::uint32_t l = st.parallelism;
    if (workers != 0 && (l == 0 || workers < l)) l = workers;
    // A loop inside a looped group is limited per run of the group: not counted here.
    if (l != 0 && st.instances == st.loop_count && l < st.instances) limit[i] = l, any = true;
  }
  if (!any) return;
  const std::uint32_t n = plan.size();
  std::vector<double> tail(n, 0.0);  // the longest path from the node's end to the plan's end
  for (TaskId t = n; t-- > 0;)
    for (TaskId c : plan.succs(t)) tail[t] = std::max(tail[t], tail[c] + duration[c]);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  struct Span {
    double start = kInf, tail = kInf, shortest = kInf, longest = 0;
  };
  std::vector<Span> span(steps);
  for (TaskId t = 0; t < n; ++t) {
    if (plan.is_join(t) || limit[plan.step_of(t)] == 0) continue;
    Span& sp = span[plan.step_of(t)];
    const double d = duration[t];
    sp.start = std::min(sp.start, finish[t] - d);
    sp.tail = std::min(sp.tail, tail[t]);
    sp.shortest = std::min(sp.shortest, d);
    sp.longest = std::max(sp.longest, d);
  }
  for (std::size_t i = 0; i < steps; ++i) {
    if (limit[i] == 0) continue;
    const StepSummary& st = s.steps[i];
    const Span& sp = span[i];
    const std::uint64_t waves = st.instances / limit[i] + (st.instances % limit[i] != 0 ? 1 : 0);
    const double least = sp.shortest == sp.longest
                             ? static_cast<double>(waves) * sp.longest
                             : std::max(st.work_s / static_cast<double>(limit[i]), sp.longest);
    const double bound = sp.start + least + sp.tail;
    if (bound > s.limit_bound_s) {
      s.limit_bound_s = bound;
      s.limit_step = st.path;
      s.limit_tasks = st.instances;
      s.limit = limit[i];
      s.limit_step_s = least;
    }
  }
}

}  // namespace

double cpu_capacity_bound_s(const PlanSummary& s, const Cluster& cluster) {
  double cores = 0;
  for (const NodePool& p : cluster.node_pools) {
    const int nodes = std::max(p.count, p.autoscaling.max);
    cores += static_cast<double>(p.pod_cpu()) / 1000.0 * nodes * p.speed;  // allocatable, less DaemonSets
  }
  return cores > 0 ? s.total_cpu_core_s / cores : 0;
}

double mean_task_seconds(const Plan& plan, TaskId t) {
  const Component& c = plan.steps()[plan.step_of(t)].component;
  const double bytes =
      c.input.per_item.empty() ? c.input.dist.mean() : static_cast<double>(c.input.per_item[plan.item(t)]);
  const double mean = c.duration.mean_seconds(bytes);
  return c.tree.total == 0 ? mean : mean * c.tree.share(plan.item(t));  // a tree fan-in task's share
}

double critical_path_seconds(const Plan& plan) {
  std::vector<double> finish(plan.size(), 0.0);
  double longest = 0;
  for (TaskId t = 0; t < plan.size(); ++t) {  // ids are a topological order
    double start = 0;
    for (TaskId p : plan.preds(t)) start = std::max(start, finish[p]);
    finish[t] = start + (plan.is_join(t) ? 0.0 : mean_task_seconds(plan, t));
    longest = std::max(longest, finish[t]);
  }
  return longest;
}

double fastest_speed(const Cluster& cluster) {
  double fastest = 0;
  for (const NodePool& p : cluster.node_pools)
    if (p.may_have_nodes()) fastest = std::max(fastest, p.speed);
  return fastest;
}

namespace {

// Component steps depth first, as Plan::unroll registers them. `outer`: instances of the enclosing
// group; `item_loop`: the nearest loop (a component without its own loop takes its enclosing item).
// `outer_exact`: the same count as a double, which does not saturate (a work sum over 2^64 tasks stays
// right to a double's precision).
void summarize_steps(const std::vector<Step>& steps, const std::string& prefix, std::uint64_t outer,
                     double outer_exact, const Loop* item_loop, PlanSummary& s) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const Step& step : steps) {
    const std::string path = prefix.empty() ? step.name : prefix + "/" + step.name;
    const std::uint64_t k = std::max<std::uint32_t>(1, step.iterations());
    const bool saturated = outer == kMax || outer > kMax / k;
    const std::uint64_t instances = saturated ? kMax : outer * k;
    const double instances_exact = outer_exact * static_cast<double>(k);
    const Loop* loop = step.loop ? &*step.loop : item_loop;
    if (step.is_group()) {
      summarize_steps(step.steps, path, instances, instances_exact, loop, s);
      continue;
    }
    const Component& c = step.component;
    StepSummary st;
    st.path = path;
    st.instances = instances;
    st.saturated = saturated;
    st.loop_count = step.iterations();
    st.parallelism = step.loop ? step.loop->parallelism : 0;
    st.cpu = c.resources.cpu;
    st.memory = c.resources.memory;
    st.gpu = c.resources.gpu;
    if (c.input.per_item.empty() || loop == nullptr) {
      st.mean_duration_s = c.duration.mean_seconds(c.input.dist.mean());
    } else {
      // Every item of the nearest loop appears instances / count times.
      double sum = 0;
      for (ByteCount b : c.input.per_item) sum += c.duration.mean_seconds(static_cast<double>(b));
      st.mean_duration_s = sum / static_cast<double>(c.input.per_item.size());
    }
    st.work_s = st.mean_duration_s * instances_exact;
    s.tasks_saturated = s.tasks_saturated || saturated || instances > kMax - s.tasks;
    s.tasks = s.tasks_saturated ? kMax : s.tasks + instances;
    s.total_work_s += st.work_s;
    s.total_cpu_core_s += st.work_s * static_cast<double>(st.cpu) / 1000.0;
    s.steps.push_back(std::move(st));
  }
}

// Group steps depth first, each with the index of its first component step (in Plan::unroll's order,
// which summarize_steps follows too) and its runs counted as summarize_steps counts instances.
void summarize_groups(const std::vector<Step>& steps, const std::string& prefix, std::uint64_t outer,
                      std::size_t& component, PlanSummary& s) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const Step& step : steps) {
    if (!step.is_group()) {
      ++component;
      continue;
    }
    const std::uint64_t k = std::max<std::uint32_t>(1, step.iterations());
    GroupSummary g;
    g.path = prefix.empty() ? step.name : prefix + "/" + step.name;
    g.saturated = outer == kMax || outer > kMax / k;
    g.instances = g.saturated ? kMax : outer * k;
    g.loop_count = step.iterations();
    g.parallelism = step.loop ? step.loop->parallelism : 0;
    g.group_parallelism = step.parallelism;
    g.first_step = component;
    const std::string path = g.path;
    const std::uint64_t runs = g.instances;
    s.groups.push_back(std::move(g));
    summarize_groups(step.steps, path, runs, component, s);
  }
}

void summarize_groups(const Pipeline& pipeline, PlanSummary& s) {
  std::size_t component = 0;
  summarize_groups(pipeline.steps, "", 1, component, s);
}

std::size_t component_steps(const Step& step) {
  if (!step.is_group()) return 1;
  std::size_t n = 0;
  for (const Step& c : step.steps) n += component_steps(c);
  return n;
}

}  // namespace

PlanSummary summarize_pipeline(const Pipeline& pipeline) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  PlanSummary s;
  s.pipeline = pipeline.name;
  s.unrolled = false;
  summarize_steps(pipeline.steps, "", 1, 1.0, nullptr, s);
  summarize_groups(pipeline, s);
  // Tree fan-ins (top-level steps only): Plan::unroll appends their levels after every component step;
  // a level that merges `inputs` of the loop's `total` outputs does inputs/total of the flat step's work,
  // and the root does what the last level leaves.
  std::size_t component = 0;
  std::vector<StepSummary> levels;
  for (const Step& step : pipeline.steps) {
    if (step.is_group()) {
      component += component_steps(step);
      continue;
    }
    StepSummary& root = s.steps[component++];
    if (step.fan_in_arity == 0) continue;
    const std::uint32_t k = step.fan_in_arity, total = pipeline.steps[step.fan_in_of].iterations();
    const double flat = root.work_s;
    std::uint32_t inputs = total;
    for (int level = 1; inputs > k; ++level) {
      StepSummary st = root;
      st.path = root.path + ".level" + std::to_string(level);
      st.instances = inputs / k + (inputs % k != 0 ? 1 : 0);
      st.loop_count = static_cast<std::uint32_t>(st.instances);
      st.parallelism = 0;
      st.work_s = flat * inputs / total;
      st.mean_duration_s = st.work_s / static_cast<double>(st.instances);
      s.tasks_saturated = s.tasks_saturated || st.instances > kMax - s.tasks;
      s.tasks = s.tasks_saturated ? kMax : s.tasks + st.instances;
      s.total_work_s += st.work_s;
      s.total_cpu_core_s += st.work_s * static_cast<double>(st.cpu) / 1000.0;
      levels.push_back(std::move(st));
      inputs = static_cast<std::uint32_t>(levels.back().instances);
    }
    const double root_work = flat * inputs / total;
    s.total_work_s += root_work - root.work_s;
    s.total_cpu_core_s += (root_work - root.work_s) * static_cast<double>(root.cpu) / 1000.0;
    root.work_s = root.mean_duration_s = root_work;
  }
  for (StepSummary& st : levels) s.steps.push_back(std::move(st));
  return s;
}

PlanSummary summarize(const Plan& plan, const Pipeline& pipeline) {
  PlanSummary s;
  s.pipeline = plan.pipeline_name();
  s.tasks = plan.task_count();
  s.joins = plan.size() - plan.task_count();
  s.edges = plan.edge_count();
  std::vector<std::uint32_t> limits;
  loop_limits(pipeline.steps, limits);
  for (std::size_t i = 0; i < plan.steps().size(); ++i) {
    const PlanStep& ps = plan.steps()[i];
    StepSummary st;
    st.path = ps.path;
    st.instances = ps.instances;
    st.loop_count = ps.loop_count;
    st.parallelism = i < limits.size() ? limits[i] : 0;
    st.cpu = ps.component.resources.cpu;
    st.memory = ps.component.resources.memory;
    st.gpu = ps.component.resources.gpu;
    s.steps.push_back(st);
  }
  summarize_groups(pipeline, s);
  // Longest path by mean durations; ids are a topological order, so one forward pass suffices.
  const std::uint32_t n = plan.size();
  std::vector<double> finish(n, 0.0), duration(n, 0.0);
  std::vector<TaskId> via(n, kNone);
  TaskId last = kNone;
  for (TaskId t = 0; t < n; ++t) {
    double start = 0;
    for (TaskId p : plan.preds(t))
      if (via[t] == kNone || finish[p] > start) {
        start = finish[p];
        via[t] = p;
      }
    double d = 0;
    if (!plan.is_join(t)) {
      d = mean_task_seconds(plan, t);
      StepSummary& st = s.steps[plan.step_of(t)];
      st.work_s += d;
      s.total_work_s += d;
      s.total_cpu_core_s += d * static_cast<double>(st.cpu) / 1000.0;
    }
    duration[t] = d;
    finish[t] = start + d;
    if (last == kNone || finish[t] > finish[last]) last = t;
    s.max_fan_in = std::max<std::uint64_t>(s.max_fan_in, plan.preds(t).size());
    s.max_fan_out = std::max<std::uint64_t>(s.max_fan_out, plan.succs(t).size());
  }
  for (StepSummary& st : s.steps)
    st.mean_duration_s = st.instances ? st.work_s / static_cast<double>(st.instances) : 0;
  limit_bound(plan, duration, finish, s);
  if (last != kNone) {
    s.critical_path_s = finish[last];
    for (TaskId t = last; t != kNone; t = via[t])
      if (!plan.is_join(t)) s.critical_path.push_back(plan.task_name(t));
    std::reverse(s.critical_path.begin(), s.critical_path.end());
  }
  return s;
}

void print_summary(std::ostream& out, const PlanSummary& s, double cpu_bound_s, const Cluster* cluster) {
  if (s.unrolled) {
    // A join node is the plan's own barrier, not a fan-in of the workflow: a WfCommons task with a thousand
    // parents has a fan-in of 1000 and no join. So joins are named as nodes, and only when there are any.
    out << "pipeline " << one_line(printable(s.pipeline)) << ": " << plural(s.tasks, "task") << ", "
        << plural(s.edges, "dependency edge") << " (widest fan-out " << s.max_fan_out << ", widest fan-in "
        << s.max_fan_in << ")\n";
    if (s.joins != 0)
      out << "and " << plural(s.joins, "join node") << " (where a step waits for a whole loop or group)\n";
    out << "\n";
  } else {
    out << "pipeline " << one_line(printable(s.pipeline)) << ": "
        << (s.tasks_saturated ? std::string(kMoreThan64Bits) + " tasks" : plural(s.tasks, "task"))
        << " (counted, not unrolled: " << s.not_unrolled_because << ")\n\n";
  }
  const auto loop_text = [](std::uint32_t count, std::uint32_t parallelism) {
    return count > 1 || parallelism ? std::to_string(count) : std::string("-");
  };
  const auto limit_text = [](std::uint32_t parallelism) {
    return parallelism ? std::to_string(parallelism) : std::string("-");
  };
  // The rows in order, each cell as text, then each column as wide as its widest cell (a 20-digit task
  // count or a 10-digit loop widens its column, the others stay in line). A group's row comes just
  // before its first component step's, so that the loop and limit that apply to a component are on its
  // row or on the rows of the groups its path names; its last cell is a note, written out in full.
  constexpr std::size_t kColumns = 9;
  std::vector<std::array<std::string, kColumns>> rows;
  std::vector<std::string> notes;  // a group row's note, "" for a step's row
  rows.push_back({"step", "tasks", "loop", "parallelism", "mean", "work", "cpu", "memory", "gpu"});
  notes.emplace_back();
  std::size_t group = 0;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    for (; group < s.groups.size() && s.groups[group].first_step == i; ++group) {
      const GroupSummary& g = s.groups[group];
      rows.push_back({g.path, "-", loop_text(g.loop_count, g.parallelism), limit_text(g.parallelism)});
      notes.push_back(g.group_parallelism
                          ? "group, at most " + std::to_string(g.group_parallelism) +
                                (g.group_parallelism == 1 ? " step at once" : " steps at once")
                          : std::string("group"));
    }
    const StepSummary& st = s.steps[i];
    rows.push_back({st.path, st.saturated ? "> 2^64-1" : std::to_string(st.instances),
                    loop_text(st.loop_count, st.parallelism), limit_text(st.parallelism),
                    human(st.mean_duration_s), human(st.work_s), format_cpu(st.cpu), format_bytes(st.memory),
                    std::to_string(st.gpu)});
    notes.emplace_back();
  }
  // The widths the table had before it adapted: every column at least that wide.
  std::array<std::size_t, kColumns> width = {4, 10, 8, 11, 10, 12, 6, 8, 4};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line = "  " + rows[r][0] + std::string(width[0] - rows[r][0].size(), ' ');
    // A group's row: tasks, loop and parallelism, then its note after two spaces.
    const std::size_t cells = notes[r].empty() ? kColumns : 4;
    for (std::size_t c = 1; c < cells; ++c)
      line += std::string(width[c] - rows[r][c].size() + 1, ' ') + rows[r][c];
    if (!notes[r].empty()) line += "  " + notes[r];
    out << line << '\n';
  }
  if (s.unrolled) {
    // Run times are divided by the node's speed: a cluster with faster (or only slower) nodes has its own
    // bound, the path on its fastest nodes.
    double fastest = 0;
    if (cluster != nullptr)
      for (const NodePool& p : cluster->node_pools) fastest = std::max(fastest, p.speed);
    const bool scaled = fastest > 0 && fastest != 1;
    char speed[32];
    std::snprintf(speed, sizeof speed, "%g", fastest);
    if (scaled) {
      out << "\ncritical path (mean durations at speed 1, no overheads): " << human(s.critical_path_s)
          << "; on this cluster's fastest nodes (speed " << speed
          << "): " << human(s.critical_path_s / fastest) << "  -- it cannot finish sooner\n  ";
    } else {
      out << "\ncritical path (mean durations, no overheads): " << human(s.critical_path_s)
          << "  -- no cluster can finish sooner\n  ";
    }
    const std::size_t shown = std::min<std::size_t>(s.critical_path.size(), 12);
    for (std::size_t i = 0; i < shown; ++i) out << (i ? " -> " : "") << s.critical_path[i];
    if (shown < s.critical_path.size()) out << " -> ... (" << s.critical_path.size() - shown << " more)";
    // Only when it says more than the critical path (by more than a millisecond of rounding).
    if (s.limit_bound_s > s.critical_path_s + 1e-3) {
      out << "\nwith the loop limits (mean durations" << (scaled ? " at speed 1" : "")
          << ", no overheads): " << human(s.limit_bound_s) << "  -- " << one_line(printable(s.limit_step))
          << "'s " << plural(s.limit_tasks, "task") << ", at most " << s.limit << " at once, take at least "
          << human(s.limit_step_s);
      if (scaled) out << "; on nodes of speed " << speed << ": " << human(s.limit_bound_s / fastest);
    }
  } else {
    out << "\ncritical path, join nodes and edges: not known without unrolling (" << s.unroll_advice << ")";
  }
  char buf[128];
  const double core_hours = s.total_cpu_core_s / 3600.0;  // two decimals, or two digits when smaller
  std::snprintf(buf, sizeof buf,
                core_hours > 0 && core_hours < 0.01 ? "%.2g"
                : core_hours < 1e30                 ? "%.2f"
                                                    : "%.3g",
                core_hours);
  out << "\ntotal work: " << human(s.total_work_s) << " of task time, " << buf << " core-hours requested\n";
  if (cpu_bound_s > 0)
    out << "CPU capacity bound: " << human(cpu_bound_s)
        << "  -- the requested core-hours spread over every core of the cluster (at its largest)\n";
  if (cluster == nullptr || !has_node_overhead(*cluster)) return;
  out << "\nwhat pods can use of a node (reserved resources and DaemonSets):\n";
  for (const NodePool& p : cluster->node_pools) {
    out << "  pool " << one_line(printable(p.name)) << ": cpu " << format_cpu(p.capacity_cpu()) << ", memory "
        << format_bytes(p.capacity_memory());
    if (p.reserved_cpu != 0 || p.reserved_memory != 0)
      out << "; allocatable cpu " << format_cpu(p.cpu) << ", memory " << format_bytes(p.memory);
    if (p.daemon_pods != 0)
      out << "; for the pipeline, beside " << p.daemon_pods << " DaemonSet pod"
          << (p.daemon_pods == 1 ? "" : "s") << ": cpu " << format_cpu(p.pod_cpu()) << ", memory "
          << format_bytes(p.pod_memory()) << ", " << plural(static_cast<std::uint64_t>(p.max_pods), "pod");
    out << "\n";
  }
}

void write_summary_json(std::ostream& out, const PlanSummary& s, double cpu_bound_s, const Cluster* cluster) {
  nlohmann::ordered_json j;
  j["pipeline"] = s.pipeline;
  j["tasks"] = s.tasks;
  if (s.tasks_saturated) j["tasks_saturated"] = true;  // more than `tasks`, which is 2^64 - 1
  if (!s.unrolled) j["unrolled"] = false;  // joins, edges, fan widths and the critical path are left out
  if (s.unrolled) {
    j["joins"] = s.joins;
    j["edges"] = s.edges;
    j["max_fan_out"] = s.max_fan_out;
    j["max_fan_in"] = s.max_fan_in;
    j["critical_path_s"] = s.critical_path_s;
    if (s.limit_bound_s > 0)
      j["loop_limit_bound"] = {{"bound_s", s.limit_bound_s},
                               {"step", s.limit_step},
                               {"tasks", s.limit_tasks},
                               {"at_once", s.limit},
                               {"step_s", s.limit_step_s}};
  }
  j["total_work_s"] = s.total_work_s;
  j["total_cpu_core_s"] = s.total_cpu_core_s;
  if (cpu_bound_s > 0) j["cpu_capacity_bound_s"] = cpu_bound_s;
  if (s.unrolled) j["critical_path"] = s.critical_path;
  auto& steps = j["steps"] = nlohmann::ordered_json::array();
  for (const StepSummary& st : s.steps) {
    steps.push_back({{"path", st.path},
                     {"instances", st.instances},
                     {"loop_count", st.loop_count},
                     {"parallelism", st.parallelism},
                     {"mean_duration_s", st.mean_duration_s},
                     {"work_s", st.work_s},
                     {"cpu_milli", st.cpu},
                     {"memory_bytes", st.memory},
                     {"gpu", st.gpu}});
    if (st.saturated) steps.back()["instances_saturated"] = true;  // more than 2^64 - 1
  }
  auto& groups = j["groups"] = nlohmann::ordered_json::array();
  for (const GroupSummary& g : s.groups) {
    groups.push_back({{"path", g.path},
                      {"instances", g.instances},
                      {"loop_count", g.loop_count},
                      {"parallelism", g.parallelism},
                      {"group_parallelism", g.group_parallelism}});
    if (g.saturated) groups.back()["instances_saturated"] = true;  // more than 2^64 - 1 runs
  }
  if (cluster != nullptr && has_node_overhead(*cluster)) {
    auto& room = j["node_room"] = nlohmann::ordered_json::array();
    for (const NodePool& p : cluster->node_pools)
      room.push_back({{"pool", p.name},
                      {"capacity_cpu_milli", p.capacity_cpu()},
                      {"capacity_memory_bytes", p.capacity_memory()},
                      {"allocatable_cpu_milli", p.cpu},
                      {"allocatable_memory_bytes", p.memory},
                      {"daemonset_pods", p.daemon_pods},
                      {"pod_cpu_milli", p.pod_cpu()},
                      {"pod_memory_bytes", p.pod_memory()},
                      {"pod_gpu", p.pod_gpu()},
                      {"pods", p.max_pods}});
  }
  out << j.dump(2) << "\n";
}

}  // namespace shardflow
