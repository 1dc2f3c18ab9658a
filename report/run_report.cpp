#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <unordered_set>
#include <vector>

#include <shardflow/report/html_report.hpp>

#include "gantt.hpp"
#include "html.hpp"
#include "run_charts.hpp"

namespace shardflow::report {

namespace detail {

namespace {

constexpr std::size_t kTimeBins = 400;

double run_s(const AttemptRecord& a) {
  return a.started == kNever || a.finished < a.started ? 0 : (a.finished - a.started).seconds();
}

// One line chart of series over time bins: each series a step line.
struct Series {
  std::string label;
  std::string color;
  std::vector<double> values;  // one per bin
};

void line_chart(std::string& out, const std::string& title, const std::string& cls, double end_s,
                const std::vector<Series>& series, const std::string& y_title, bool as_percent) {
  Frame f;
  f.height = 220;
  double top = as_percent ? 1 : 0;
  for (const Series& s : series)
    for (double v : s.values) top = std::max(top, v);
  if (!as_percent && top <= 0) top = 1;
  const std::vector<double> yt = nice_ticks(0, top, 5);
  const double y_hi = std::max(top, yt.empty() ? top : yt.back());
  const Scale x{0, end_s > 0 ? end_s : 1, f.left, f.width - f.right};
  const Scale y{0, y_hi, f.top + f.plot_height(), f.top};
  out += "<h3>" + esc(title) + "</h3>\n";
  std::vector<LegendEntry> le;
  for (const Series& s : series)
    le.push_back({s.label, "<rect y=\"5\" width=\"12\" height=\"3\" fill=\"" + s.color + "\"/>"});
  out += legend(le);
  open_svg(out, f, cls, title);
  y_axis(out, f, y, yt, false, y_title, as_percent);
  for (const Series& s : series) {
    if (s.values.empty()) continue;
    const double bw = x.d1 / static_cast<double>(s.values.size());
    std::string d;
    for (std::size_t b = 0; b < s.values.size(); ++b) {
      const double py = y(s.values[b]);
      d += (b == 0 ? "M" : "L") + num(x(bw * static_cast<double>(b))) + " " + num(py) + "H" +
           num(x(bw * static_cast<double>(b + 1)));
    }
    out += "<path class=\"line\" stroke=\"" + s.color + "\" d=\"" + d + "\"><title>" + esc(s.label) +
           "</title></path>\n";
  }
  x_axis(out, f, x, time_ticks(0, x.d1, 10), true, "time since the run started");
  out += "</svg>\n";
}

}  // namespace

std::string run_facts(const Trace& t) {
  std::unordered_set<TaskId> tasks;
  for (const AttemptRecord& a : t.attempts) tasks.insert(a.task);
  // The tasks that never ran (a task before them failed) have no attempt: said apart, where the trace
  // knows them (a run's own, not one read back from trace.json), so that "N tasks" is not read as the
  // pipeline's size.
  const std::size_t not_run = t.tasks_not_run.size();
  // A run that stopped with tasks unfinished (interrupted, or a simulation at its horizon) says so.
  const std::uint64_t unfinished = t.tasks_unfinished + t.tasks_waiting;
  // The tasks that waited (no attempt yet) are tasks of the run too: "4 tasks ... 5 unfinished" was said.
  return "seed " + std::to_string(t.seed) + " · backend " + t.backend + " · " +
         count(tasks.size() + t.tasks_waiting) + " tasks, " + count(t.attempts.size()) + " attempts on " +
         count(t.nodes.size()) + (t.nodes.size() == 1 ? " node" : " nodes") +
         (not_run == 0 ? ""
                       : " · " + count(not_run) + (not_run == 1 ? " task" : " tasks") +
                             " not run (a task before " + (not_run == 1 ? "it" : "them") + " failed)") +
         (unfinished == 0
              ? ""
              : " · stopped with " + count(unfinished) + (unfinished == 1 ? " task" : " tasks") +
                    " unfinished" + (t.stopped_early.empty() ? "" : " (" + t.stopped_early + ")"));
}

void utilization_charts(std::string& out, const Trace& t, const Metrics& m, double end_s) {
  Bins cap_cpu(end_s, kTimeBins), cap_mem(end_s, kTimeBins), cap_gpu(end_s, kTimeBins);
  Bins use_cpu(end_s, kTimeBins), use_mem(end_s, kTimeBins), use_gpu(end_s, kTimeBins),
      pending(end_s, kTimeBins);
  bool gpus = false;
  for (const NodeRecord& n : t.nodes) {
    cap_cpu.add(n.up.seconds(), n.down.seconds(), static_cast<double>(n.cpu));
    cap_mem.add(n.up.seconds(), n.down.seconds(), static_cast<double>(n.memory));
    cap_gpu.add(n.up.seconds(), n.down.seconds(), n.gpu);
    gpus = gpus || n.gpu > 0;
  }
  bool requests = false;
  for (const StepMetrics& s : m.per_step) requests = requests || s.requests.cpu > 0 || s.requests.memory > 0;
  for (const AttemptRecord& a : t.attempts) {
    const double end = a.finished.seconds();
    pending.add(a.submitted.seconds(), a.scheduled != kNever ? a.scheduled.seconds() : end, 1);
    if (a.scheduled == kNever || a.step >= m.per_step.size()) continue;
    const Resources& r = m.per_step[a.step].requests;
    use_cpu.add(a.scheduled.seconds(), end, static_cast<double>(r.cpu));
    use_mem.add(a.scheduled.seconds(), end, static_cast<double>(r.memory));
    use_gpu.add(a.scheduled.seconds(), end, r.gpu);
  }
  for (Bins* b : {&cap_cpu, &cap_mem, &cap_gpu, &use_cpu, &use_mem, &use_gpu, &pending}) b->settle();
  const auto ratio = [](const Bins& use, const Bins& cap) {
    std::vector<double> v(use.size());
    for (std::size_t b = 0; b < v.size(); ++b) v[b] = cap.mean(b) > 0 ? use.mean(b) / cap.mean(b) : 0;
    return v;
  };
  std::vector<Series> util = {{"CPU", palette(4), ratio(use_cpu, cap_cpu)},
                              {"memory", palette(0), ratio(use_mem, cap_mem)}};
  if (gpus) util.push_back({"GPU", palette(2), ratio(use_gpu, cap_gpu)});
  line_chart(out,
             "Utilization: resources requested by bound pods over those of the nodes up (mean over " +
                 human_duration(cap_cpu.width()) + " bins)",
             "util", end_s, util, "requested / available", true);
  if (!requests)
    out +=
        "<p class=\"note\">The metrics name no requests (a metrics.json from an older shardflow): "
        "utilization "
        "reads 0.</p>\n";
  std::vector<double> p(pending.size());
  for (std::size_t b = 0; b < p.size(); ++b) p[b] = pending.mean(b);
  line_chart(out,
             "Pending pods: created, not yet bound to a node (mean over " + human_duration(pending.width()) +
                 " bins)",
             "pending", end_s, {{"pending pods", palette(5), p}}, "pods", false);
}

void step_charts(std::string& out, const Trace& t, const Metrics& m) {
  std::vector<std::vector<double>> runs(t.steps.size()), waits(t.steps.size());
  std::vector<std::uint64_t> attempts_of(t.steps.size(), 0), failed_of(t.steps.size(), 0);
  for (const AttemptRecord& a : t.attempts) {
    if (a.step >= t.steps.size()) continue;
    ++attempts_of[a.step];
    if (a.scheduled != kNever) waits[a.step].push_back((a.scheduled - a.submitted).seconds());
    if (a.outcome == Outcome::succeeded)
      runs[a.step].push_back(run_s(a));
    else if (a.outcome != Outcome::cancelled)  // as metrics count failures: a cancelled attempt did not fail
      ++failed_of[a.step];
  }
  const std::vector<std::size_t> drawn = drawn_steps(t);
  const std::string more =
      drawn.size() < t.steps.size()
          ? "<p class=\"note\">" + count(drawn.size()) + " of the " + count(t.steps.size()) +
                " steps, those with the most run time; every step is in metrics.csv, every attempt in "
                "trace.csv.</p>\n"
          : std::string();
  out += "<h3>Run time of each step's successful attempts</h3>\n" + more + "<div class=\"grid2\">\n";
  constexpr std::size_t kBins = 20;
  for (const std::size_t s : drawn) {
    const std::vector<double>& v = runs[s];
    Frame f;
    f.width = 340;
    f.height = 170;
    f.left = 56;
    f.right = 12;
    f.top = 22;
    f.bottom = 36;
    const std::string title = t.steps[s] + ": " + count(v.size()) + (v.size() == 1 ? " run" : " runs");
    open_svg(out, f, "hist", title);
    out += "<text class=\"title\" x=\"" + num(f.left) + "\" y=\"14\">" + esc(title) + "</text>";
    if (v.empty()) {
      out += "<text x=\"" + num(f.left + 10) + "\" y=\"" + num(f.top + 30) +
             "\">no successful attempt</text></svg>\n";
      continue;
    }
    const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
    double lo = *lo_it, hi = *hi_it;
    if (hi - lo < 1e-9) {  // one value: a bin around it
      lo = std::max(0.0, lo - 0.5);
      hi = lo + 1;
    }
    const double bw = (hi - lo) / kBins;
    std::vector<std::size_t> n(kBins, 0);
    for (double x : v) ++n[std::min(kBins - 1, static_cast<std::size_t>((x - lo) / bw))];
    const std::size_t most = *std::max_element(n.begin(), n.end());
    std::vector<double> yt = nice_ticks(0, static_cast<double>(most), 4);
    std::erase_if(yt, [](double tick) { return tick != std::floor(tick); });  // counts: whole ticks only
    const Scale x{lo, hi, f.left, f.width - f.right};
    const Scale y{0, std::max(static_cast<double>(most), yt.back()), f.top + f.plot_height(), f.top};
    y_axis(out, f, y, yt, false, "attempts");
    for (std::size_t b = 0; b < kBins; ++b) {
      if (n[b] == 0) continue;
      const double x0 = x(lo + bw * static_cast<double>(b)), x1 = x(lo + bw * static_cast<double>(b + 1));
      out += "<rect class=\"hbar " + step_class(s) + "\" x=\"" + num(x0, 2) + "\" y=\"" +
             num(y(static_cast<double>(n[b])), 2) + "\" width=\"" + num(std::max(x1 - x0 - 1, 0.5), 2) +
             "\" height=\"" + num(y(0) - y(static_cast<double>(n[b])), 2) + "\"><title>" +
             esc(count(n[b]) + (n[b] == 1 ? " run of " : " runs of ") +
                 human_duration(lo + bw * static_cast<double>(b)) + " to " +
                 human_duration(lo + bw * static_cast<double>(b + 1))) +
             "</title></rect>";
    }
    x_axis(out, f, x, time_ticks(lo, hi, 4), true, "run time");
    out += "</svg>\n";
  }
  out +=
      "</div>\n<h3>Queue wait (created to bound) and run time by step</h3>\n" + more +
      "<table class=\"sortable steps\"><thead><tr><th>step</th><th class=\"n\">attempts</th><th class=\"n\">"
      "failed</th><th class=\"n\">wait p50</th><th class=\"n\">wait p95</th><th class=\"n\">wait p99</th><th "
      "class=\"n\">wait max</th><th class=\"n\">run p50</th><th class=\"n\">run p95</th><th class=\"n\">run "
      "max</th></tr></thead><tbody>\n";
  const auto cell = [](double seconds) {
    return "<td class=\"n\" data-v=\"" + num(seconds, 6) + "\">" + esc(human_duration(seconds)) + "</td>";
  };
  for (const std::size_t s : drawn) {
    const std::uint64_t attempts = attempts_of[s], failed = failed_of[s];
    const Percentiles run = s < m.per_step.size() ? m.per_step[s].run_seconds : Percentiles{};
    const std::vector<double>& w = waits[s];
    out += "<tr><td>" + esc(t.steps[s]) + "</td><td class=\"n\" data-v=\"" + std::to_string(attempts) +
           "\">" + count(attempts) + "</td><td class=\"n\" data-v=\"" + std::to_string(failed) + "\">" +
           count(failed) + "</td>" + cell(percentile(w, 50)) + cell(percentile(w, 95)) +
           cell(percentile(w, 99)) + cell(percentile(w, 100)) +
           (s < m.per_step.size() && m.per_step[s].succeeded == 0
                ? std::string("<td class=\"n\">—</td><td class=\"n\">—</td><td class=\"n\">—</td>")
                : cell(run.p50) + cell(run.p95) + cell(run.max)) +
           "</tr>\n";
  }
  out += "</tbody></table>\n";
}

void slowest_table(std::string& out, const Trace& t, std::size_t n) {
  std::vector<std::size_t> order(t.attempts.size());
  std::iota(order.begin(), order.end(), 0);
  n = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      const double ra = run_s(t.attempts[a]), rb = run_s(t.attempts[b]);
                      return ra != rb ? ra > rb : a < b;
                    });
  out +=
      "<table class=\"sortable slowest\"><thead><tr><th>task</th><th class=\"n\">attempt</th><th>node</th>"
      "<th class=\"n\">created</th><th class=\"n\">queue wait</th><th class=\"n\">run</th><th>outcome</th>"
      "</tr></thead><tbody>\n";
  for (std::size_t k = 0; k < n; ++k) {
    const AttemptRecord& a = t.attempts[order[k]];
    const std::string step = a.step < t.steps.size() ? t.steps[a.step] : std::to_string(a.step);
    const std::string node = a.node >= 0 && static_cast<std::size_t>(a.node) < t.nodes.size()
                                 ? t.nodes[static_cast<std::size_t>(a.node)].name
                                 : "-";
    const double wait = a.scheduled != kNever ? (a.scheduled - a.submitted).seconds() : 0;
    out += "<tr><td>" + esc(step + "[" + std::to_string(a.item) + "]") + "</td><td class=\"n\" data-v=\"" +
           std::to_string(a.attempt) + "\">" + std::to_string(a.attempt) + "</td><td>" + esc(node) +
           "</td><td class=\"n\" data-v=\"" + num(a.submitted.seconds(), 6) + "\">" +
           esc(human_duration(a.submitted.seconds())) + "</td><td class=\"n\" data-v=\"" + num(wait, 6) +
           "\">" + esc(human_duration(wait)) + "</td><td class=\"n\" data-v=\"" + num(run_s(a), 6) + "\">" +
           esc(human_duration(run_s(a))) + "</td><td>" + to_string(a.outcome) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
}

}  // namespace detail

void write_run_report(std::ostream& out, const Trace& t, const Metrics& m, const ReportOptions& o) {
  using namespace detail;
  Page page("shardflow run: " + t.scenario, "scenario " + t.scenario + " · " + run_facts(t) +
                                                " · shardflow " + (o.version.empty() ? "?" : o.version));
  page.add_css(step_css(t.steps.size()));
  std::string& b = page.body();
  std::vector<Card> cs = {
      {"makespan", human_duration(m.makespan_s), num(m.makespan_s, 3) + " s"},
      {"critical path", human_duration(m.critical_path_s), "longest chain of run times"},
      {"cost", num(m.cost, 2), "price units (node hours x price)"},
      {"CPU utilization", percent(m.mean_cpu_utilization), "mean; peak " + percent(m.peak_cpu_utilization)},
      {"retries", count(m.retries), count(m.attempts) + " attempts"},
      {"failures", count(m.failed_attempts),
       count(m.tasks_failed - std::min<std::uint64_t>(m.tasks_failed, t.tasks_unfinished + t.tasks_waiting)) +
           " tasks failed for good" +
           (t.tasks_unfinished + t.tasks_waiting == 0
                ? std::string()
                : "; " + count(t.tasks_unfinished + t.tasks_waiting) + " unfinished when the run stopped")}};
  // Only a run that had them: speculation's backups, pods replaced after their node went away.
  if (m.backups > 0) cs.push_back({"backups", count(m.backups), count(m.backups_won) + " won"});
  if (m.replacements > 0)
    cs.push_back({"replacements", count(m.replacements), "after a node failure, reclaim or eviction"});
  if (m.cancelled_attempts > 0)
    cs.push_back({"cancelled", count(m.cancelled_attempts),
                  "speculation's losers (originals or backups), or stopped by the run's end"});
  b += cards(cs);
  b += "<h2>Pods by node</h2>\n";
  gantt(b, t, m.critical_path,
        {"Gantt chart: each pod from binding to end, by node and lane", m.makespan_s, o.max_bars});
  b += "<h2>Cluster over time</h2>\n";
  utilization_charts(b, t, m, m.makespan_s);
  b += "<h2>Steps</h2>\n";
  step_charts(b, t, m);
  b += "<h2>Slowest attempts</h2>\n";
  slowest_table(b, t, 20);
  page.write(out);
}

}  // namespace shardflow::report
