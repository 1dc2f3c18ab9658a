#include "gantt.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include <shardflow/report/html_report.hpp>

#include "html.hpp"
#include "lanes.hpp"

namespace shardflow::report::detail {

namespace {

constexpr std::size_t kAggregateBins = 200;
// The aggregated rows' rectangles in all: with thousands of aggregated nodes each gets fewer bins (at least
// kMinAggregateBins), so that the page stays some megabytes (200 bins of 10,000 nodes made 300 MB).
constexpr std::size_t kAggregateRects = 40'000, kMinAggregateBins = 4;

// A time in a bar's tooltip: to the millisecond (1 ms and up; below it, to the microsecond), as the trace
// has it, where the page's other figures round to what matters at their size (human_duration: 3.975 s is
// "4s" there, and a tooltip's "started 4s, ended 4s" would say nothing of a 25 ms run).
std::string tip_time(std::int64_t ns) {
  const std::int64_t unit = ns >= 1'000'000 || ns <= -1'000'000 ? 1'000'000 : 1'000;
  const std::int64_t rounded = (ns >= 0 ? ns + unit / 2 : ns - unit / 2) / unit * unit;
  return format_duration(Duration::from_ns(rounded));
}

double sec(SimTime t) {
  return t.seconds();
}

// What hovering a bar shows, appended to `s`.
void append_bar_tip(std::string& s, const Trace& t, const AttemptRecord& a) {
  if (a.step < t.steps.size())
    s += t.steps[a.step];
  else
    s += "step " + std::to_string(a.step);
  s += '[';
  s += std::to_string(a.item);
  s += "] (task ";
  s += std::to_string(a.task);
  s += "), attempt ";
  s += std::to_string(a.attempt);
  if (a.kind != AttemptKind::first) {
    s += " (";
    s += to_string(a.kind);
    s += ')';
  }
  s += '\n';
  const std::string pod = t.pod_name(a);
  if (!pod.empty()) {
    s += "pod ";
    s += pod;
    s += ' ';
  }
  s += "on ";
  s += t.nodes[static_cast<std::size_t>(a.node)].name;
  s += "\ncreated ";
  s += tip_time(a.submitted.ns());
  s += ", bound ";
  s += tip_time(a.scheduled.ns());
  if (a.started != kNever) {
    s += ", started ";
    s += tip_time(a.started.ns());
  }
  s += ", ended ";
  s += tip_time(a.finished.ns());
  s += '\n';
  if (a.started != kNever) {
    s += "ran ";
    s += tip_time((a.finished - a.started).ns());
    s += "; ";
  }
  s += to_string(a.outcome);
  const std::string_view error = t.error_text(a);
  if (!error.empty()) {
    s += ": ";
    s += error.substr(0, 100);
  }
}

}  // namespace

std::string gantt_legend(const Trace& trace, const std::vector<std::size_t>& drawn) {
  std::vector<LegendEntry> entries;
  for (const std::size_t i : drawn) entries.push_back({trace.steps[i], swatch_fill(palette(i))});
  if (drawn.size() < trace.steps.size())
    entries.push_back({"and " + std::to_string(trace.steps.size() - drawn.size()) +
                           " more steps (the colours repeat every " + std::to_string(kPaletteSize) +
                           " steps; grey in aggregated rows)",
                       swatch_fill("#999")});
  entries.push_back({"retry, backup or replacement (attempt > 0)",
                     "<rect x=\"1\" y=\"1\" width=\"10\" height=\"10\" fill=\"#ccc\" stroke=\"#000\" "
                     "stroke-dasharray=\"2 1.5\"/>"});
  entries.push_back({"failed, evicted or cancelled", "<path class=\"x\" d=\"M2 2l8 8m0-8l-8 8\"/>"});
  entries.push_back({"critical path",
                     "<rect x=\"1\" y=\"1\" width=\"10\" height=\"10\" fill=\"#ccc\" "
                     "stroke=\"#000\" stroke-width=\"2\"/>"});
  return legend(entries);
}

void gantt(std::string& out, const Trace& t, std::span<const TaskId> critical, const GanttOptions& o) {
  const std::size_t nodes = t.nodes.size();
  std::vector<std::vector<Interval>> per_node(nodes);
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    const AttemptRecord& a = t.attempts[i];
    if (a.node < 0 || static_cast<std::size_t>(a.node) >= nodes || a.scheduled == kNever) continue;
    per_node[static_cast<std::size_t>(a.node)].push_back({a.scheduled.ns(), a.finished.ns(), i});
  }

  // Too many bars: each node may draw its share of max_bars; a node with more pods than that is drawn as
  // time bins (bars that thin would not be read one by one anyway).
  std::size_t drawn = 0;
  for (const auto& v : per_node) drawn += v.size();
  std::vector<bool> aggregated(nodes, false);
  std::size_t n_aggregated = 0;
  if (drawn > o.max_bars) {
    const std::size_t share = o.max_bars / nodes;
    for (std::size_t n = 0; n < nodes; ++n) {
      if (per_node[n].size() <= share) continue;
      aggregated[n] = true;
      drawn -= per_node[n].size();
      ++n_aggregated;
    }
  }

  // The steps drawn one by one (the legend's, each aggregated row's groups), worked out once.
  const std::vector<std::size_t> drawn_list = drawn_steps(t);
  const std::size_t bins =
      n_aggregated == 0 ? kAggregateBins
                        : std::clamp<std::size_t>(kAggregateRects / (n_aggregated * (drawn_list.size() + 1)),
                                                  kMinAggregateBins, kAggregateBins);

  std::vector<std::vector<int>> lanes(nodes);
  std::vector<int> rows(nodes, 1);  // lanes drawn per node
  int total_rows = 0;
  for (std::size_t n = 0; n < nodes; ++n) {
    lanes[n] = assign_lanes(per_node[n]);
    const int used = lanes[n].empty() ? 1 : *std::max_element(lanes[n].begin(), lanes[n].end()) + 1;
    rows[n] = aggregated[n] ? std::min(used, 12) : used;
    total_rows += rows[n];
  }
  const double lane_px = std::clamp(640.0 / std::max(total_rows, 1), 2.0, 12.0);

  Frame f;
  f.left = 150;
  f.height = f.top + f.bottom + lane_px * total_rows + 2;
  const Scale x{0, o.end_s > 0 ? o.end_s : 1, f.left, f.width - f.right};

  out += "<h3>" + esc(o.title) + "</h3>\n";
  if (n_aggregated > 0) {
    std::size_t most = 0;
    for (std::size_t n = 0; n < nodes; ++n)
      if (aggregated[n]) most = std::max(most, per_node[n].size());
    out += "<p class=\"note\">" + count(n_aggregated) + " of " + count(nodes) +
           " nodes have too many pods to draw one bar each (up to " + count(most) +
           " on one node): they are drawn " + "as " + count(bins) +
           " time bins, each column the mean number of running pods by step (marked " +
           "“aggregated”). Retries, failures and the critical path are not marked on them.</p>\n";
  }
  out += gantt_legend(t, drawn_list);
  open_svg(out, f, "gantt", o.title,
           " data-bars=\"" + std::to_string(drawn) + "\" data-aggregated-nodes=\"" +
               std::to_string(n_aggregated) + "\"");

  const std::unordered_set<TaskId> crit(critical.begin(), critical.end());
  // The aggregated rows' groups: each drawn step, then the rest as one.
  std::vector<std::size_t> group_of(t.steps.size(), drawn_list.size());
  for (std::size_t g = 0; g < drawn_list.size(); ++g) group_of[drawn_list[g]] = g;
  const std::size_t groups = drawn_list.size() + (drawn_list.size() < t.steps.size() ? 1 : 0);
  double y = f.top;
  double last_label = -100;
  std::string marks;  // crosses go over every bar
  std::string tip;    // a bar's hover text, reused
  for (std::size_t n = 0; n < nodes; ++n) {
    const double h = lane_px * rows[n];
    out += "<line class=\"node-sep\" x1=\"0\" x2=\"" + num(f.width - f.right) + "\" y1=\"" + num(y) +
           "\" y2=\"" + num(y) + "\"/>";
    if (y - last_label >= 11) {  // thin rows: a label where the last one leaves room
      out += "<text class=\"node-label\" x=\"" + num(f.left - 6) + "\" y=\"" +
             num(y + std::min(h, 12.0) - 2) + "\" text-anchor=\"end\">" + esc(t.nodes[n].name) +
             (aggregated[n] ? " (aggregated)" : "") + "</text>";
      last_label = y;
    }
    if (aggregated[n]) {
      // Mean running pods per step in each bin, stacked; the busiest bin fills the row. The steps the page
      // draws one by one (drawn_steps) each, the others (a run of thousands of steps) as one grey group.
      std::vector<Bins> per_group(groups, Bins(x.d1, bins));
      for (const Interval& iv : per_node[n]) {
        const AttemptRecord& a = t.attempts[iv.attempt];
        if (a.step < group_of.size())
          per_group[group_of[a.step]].add(a.scheduled.seconds(), a.finished.seconds(), 1);
      }
      for (Bins& b : per_group) b.settle();
      double peak = 0;
      for (std::size_t b = 0; b < bins; ++b) {
        double total = 0;
        for (const Bins& g : per_group) total += g.mean(b);
        peak = std::max(peak, total);
      }
      // A column the same as the one before it (every group's mean, to a hundredth of a pod) widens that
      // one: a node busy alike for the whole run is one rectangle per group, not one per bin.
      const auto same_column = [&](std::size_t b0, std::size_t b1) {
        for (const Bins& g : per_group)
          if (std::llround(g.mean(b0) * 100) != std::llround(g.mean(b1) * 100)) return false;
        return true;
      };
      const double bw = (x.r1 - x.r0) / static_cast<double>(bins);
      for (std::size_t b = 0; b < bins;) {
        std::size_t end = b + 1;
        while (end < bins && same_column(b, end)) ++end;
        double base = y + h;
        for (std::size_t g = 0; g < per_group.size(); ++g) {
          const double m = per_group[g].mean(b);
          if (m <= 0 || peak <= 0) continue;
          const double bh = m / peak * (h - 1);
          base -= bh;
          const bool other = g == drawn_list.size();
          out += "<rect class=\"agg " + (other ? std::string("other") : step_class(drawn_list[g])) +
                 "\" x=\"" + num(x.r0 + bw * static_cast<double>(b)) + "\" y=\"" + num(base, 2) +
                 "\" width=\"" + num(bw * static_cast<double>(end - b) + 0.05, 2) + "\" height=\"" +
                 num(bh, 2) + "\"><title>" +
                 esc(t.nodes[n].name + ", " + human_duration(per_group[g].width() * static_cast<double>(b)) +
                     " to " + human_duration(per_group[g].width() * static_cast<double>(end)) + ": " +
                     num(m, 1) + " " +
                     (other ? std::string("pods of other steps") : t.steps[drawn_list[g]] + " pods") +
                     " running on average") +
                 "</title></rect>";
        }
        b = end;
      }
      out += "\n";
    } else {
      for (std::size_t k = 0; k < per_node[n].size(); ++k) {
        const AttemptRecord& a = t.attempts[per_node[n][k].attempt];
        const double x0 = x(sec(a.scheduled)), x1 = std::max(x(sec(a.finished)), x0 + 0.5);
        const double by = y + lane_px * lanes[n][k] + (lane_px >= 4 ? 0.5 : 0);
        const double bh = lane_px >= 4 ? lane_px - 1 : lane_px;
        const bool on_path = a.outcome == Outcome::succeeded && crit.count(a.task) > 0;
        // Appended piece by piece: a report draws up to max_bars of these.
        out += "<rect class=\"bar ";
        out += step_class(a.step);
        if (a.attempt > 0) out += " retry";
        if (on_path) out += " crit";
        out += "\" x=\"";
        out += num(x0, 2);
        out += "\" y=\"";
        out += num(by, 2);
        out += "\" width=\"";
        out += num(x1 - x0, 2);
        out += "\" height=\"";
        out += num(bh, 2);
        out += "\"><title>";
        tip.clear();
        append_bar_tip(tip, t, a);
        append_esc(out, tip);
        out += "</title></rect>\n";
        if (a.outcome != Outcome::succeeded) {
          const double r = std::clamp(bh / 2, 2.0, 4.0), cy = by + bh / 2;
          marks += "<path class=\"x\" d=\"M" + num(x1 - r) + " " + num(cy - r) + "l" + num(2 * r) + " " +
                   num(2 * r) + "m0 " + num(-2 * r) + "l" + num(-2 * r) + " " + num(2 * r) + "\"/>\n";
        }
      }
    }
    y += h;
  }
  out += marks;
  x_axis(out, f, x, time_ticks(0, x.d1, 10), true, "time since the run started");
  out += "</svg>\n";
}

}  // namespace shardflow::report::detail
