#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <ostream>

#include <shardflow/core/text.hpp>
#include <shardflow/report/html_report.hpp>

#include "html.hpp"

namespace shardflow::report {

void write_sweep_report(std::ostream& out, const planner::SweepResult& r, const ReportOptions& o) {
  using namespace detail;
  const std::string q = "p" + num(r.quantile, r.quantile == static_cast<int>(r.quantile) ? 0 : 1);
  std::string dims;
  for (const planner::Dimension& d : r.dimensions) dims += (dims.empty() ? "" : ", ") + d.path;
  Page page(
      "shardflow sweep: " + r.scenario,
      "scenario " + r.scenario + " · " + count(r.configs.size()) +
          (r.configs.size() == 1 ? " configuration of " : " configurations of ") + dims + " · " +
          count(static_cast<std::uint64_t>(r.replications)) +
          (r.replications == 1 ? " run each, seeds from " : " runs each, seeds from ") +
          std::to_string(r.base_seed) +
          (r.deadline_s ? " · deadline " + human_duration(*r.deadline_s) + " at the " + q : "") +
          (r.budget ? " · budget " + shortest_text(*r.budget) : "") +
          (r.confidence
               ? ", " + num(*r.confidence, *r.confidence == std::floor(*r.confidence) ? 0 : 3) + "% sure"
               : "") +
          " · shardflow " + (o.version.empty() ? "?" : o.version));
  std::string& b = page.body();

  std::vector<CostTime> pts;
  for (const planner::ConfigResult& c : r.configs)
    pts.push_back({c.finished_cost_mean, c.quantile_makespan_s});
  const std::vector<std::size_t>& front =
      r.pareto;  // finish_sweep's: without configurations whose quantile is a failed run
  std::vector<bool> on_front(pts.size(), false);
  for (std::size_t i : front) on_front[i] = true;
  const auto config_text = [&](std::size_t i) {
    std::string s;
    for (std::size_t d = 0; d < r.dimensions.size() && d < r.configs[i].values.size(); ++d)
      s += (s.empty() ? "" : ", ") + r.dimensions[d].path + " = " + r.configs[i].values[d];
    return s;
  };

  // The configurations that ran (one that cannot run has no point: it is in the table, with why).
  std::vector<std::size_t> ran;
  for (std::size_t i = 0; i < r.configs.size(); ++i)
    if (r.configs[i].infeasible.empty()) ran.push_back(i);
  std::vector<Card> cs;
  if (r.recommended) {
    const planner::ConfigResult& c = r.configs[*r.recommended];
    cs.push_back({"recommended", config_text(*r.recommended),
                  "cost " + num(c.finished_cost_mean, 2) + ", " + q + " makespan " +
                      human_duration(c.quantile_makespan_s)});
  } else {
    cs.push_back({"recommended", "none",
                  !r.configs.empty() && ran.empty() ? "no configuration can run"
                  : r.deadline_s                    ? "no configuration meets the deadline"
                  : r.budget                        ? "no configuration is within the budget"
                                                    : "no --deadline or --budget given"});
  }
  cs.push_back(
      {"Pareto front", count(front.size()) + " of " + count(pts.size()), "configurations nothing beats"});
  if (ran.size() < r.configs.size())
    cs.push_back({"cannot run", count(r.configs.size() - ran.size()) + " of " + count(r.configs.size()),
                  "configurations whose cluster cannot run the pipeline (not simulated; why in the table)"});
  b += cards(cs);

  b += "<h2>Cost against " + esc(q) + " makespan</h2>\n";
  Frame f;
  f.height = 420;
  f.left = 80;
  double cmin = 0, cmax = 1, tmax = 1;
  if (!ran.empty()) {
    cmin = cmax = pts[ran[0]].cost;
    tmax = 0;
  }
  for (const std::size_t i : ran) {
    cmin = std::min(cmin, pts[i].cost);
    cmax = std::max(cmax, pts[i].cost);
    tmax = std::max(tmax, pts[i].time);
  }
  if (r.deadline_s) tmax = std::max(tmax, *r.deadline_s);
  const double pad = std::max((cmax - cmin) * 0.08, std::max(cmax * 0.02, 1e-6));
  const double c_lo = std::max(0.0, cmin - pad), c_hi = cmax + pad;
  const std::vector<double> xt = nice_ticks(c_lo, c_hi, 8), yt = time_ticks(0, tmax * 1.08, 6);
  const Scale x{c_lo, c_hi, f.left, f.width - f.right};
  const Scale y{0, std::max(tmax * 1.08, yt.empty() ? 0 : yt.back()), f.top + f.plot_height(), f.top};
  std::vector<LegendEntry> le = {
      {"configuration", "<circle cx=\"6\" cy=\"6\" r=\"5\" fill=\"#999\"/>"},
      {"on the Pareto front", "<circle cx=\"6\" cy=\"6\" r=\"5\" fill=\"#0072B2\"/>"}};
  if (r.deadline_s)
    le.push_back({"deadline " + human_duration(*r.deadline_s), "<path class=\"deadline\" d=\"M0 6H12\"/>"});
  if (r.recommended)
    le.push_back({"recommended",
                  "<circle cx=\"6\" cy=\"6\" r=\"5\" fill=\"#009E73\" stroke=\"#000\" stroke-width=\"2\"/>"});
  b += legend(le);
  open_svg(b, f, "scatter", "cost against " + q + " makespan",
           " data-points=\"" + std::to_string(ran.size()) + "\" data-front=\"" +
               std::to_string(front.size()) + "\"");
  y_axis(b, f, y, yt, true, q + " makespan");
  if (r.deadline_s)
    b += "<line class=\"deadline\" x1=\"" + num(f.left) + "\" x2=\"" + num(f.width - f.right) + "\" y1=\"" +
         num(y(*r.deadline_s)) + "\" y2=\"" + num(y(*r.deadline_s)) + "\"><title>deadline " +
         esc(human_duration(*r.deadline_s)) + "</title></line>\n";
  if (!front.empty()) {
    std::string d;  // a staircase: each front point holds until the next, cheaper-and-slower one
    for (std::size_t k = 0; k < front.size(); ++k) {
      const CostTime& p = pts[front[k]];
      d += (k == 0 ? "M" : "V") + (k == 0 ? num(x(p.cost)) + " " + num(y(p.time)) : num(y(p.time)));
      if (k + 1 < front.size()) d += "H" + num(x(pts[front[k + 1]].cost));
    }
    b += "<path class=\"front\" d=\"" + d + "\"/>\n";
  }
  for (const std::size_t i : ran) {
    const planner::ConfigResult& c = r.configs[i];
    const bool rec = r.recommended == i;
    // A quantile that falls on a run whose tasks failed is no makespan (the terminal's "none").
    const std::string quantile_text =
        c.quantile_on_failed_run ? "none (a run whose tasks failed)" : human_duration(c.quantile_makespan_s);
    // The point's cost is that of the runs whose tasks all finished; the table's is of every run.
    const std::string cost_text = c.runs_with_failed_tasks == 0
                                      ? "mean cost " + num(c.finished_cost_mean, 2)
                                      : "mean cost of the runs whose tasks all finished " +
                                            num(c.finished_cost_mean, 2) + " (of all runs " +
                                            num(c.cost.mean, 2) + ")";
    std::string tip = config_text(i) + "\n" + cost_text + "; " + q + " makespan " + quantile_text +
                      "; mean makespan " + human_duration(c.makespan_s.mean) +
                      (c.makespan_s.n < 2 ? std::string(" (one run)")
                                          : " (95% CI " + human_duration(c.makespan_s.ci95_low) + " to " +
                                                human_duration(c.makespan_s.ci95_high) + ")");
    if (r.deadline_s) tip += "\nmeets the deadline in " + percent(c.p_meets_deadline) + " of runs";
    if (on_front[i]) tip += "\non the Pareto front";
    if (rec) tip += "\nrecommended: the cheapest that meets the deadline";
    b += std::string("<circle class=\"pt") + (on_front[i] ? " pareto" : "") + (rec ? " rec" : "") +
         "\" cx=\"" + num(x(pts[i].cost)) + "\" cy=\"" + num(y(pts[i].time)) + "\" r=\"" + (rec ? "7" : "5") +
         "\"><title>" + esc(tip) + "</title></circle>\n";
    if (rec)
      b += "<text x=\"" + num(x(pts[i].cost) + 10) + "\" y=\"" + num(y(pts[i].time) - 8) +
           "\">recommended</text>\n";
  }
  x_axis(b, f, x, xt, false, "mean cost (price units)");
  b += "</svg>\n";

  b += "<h2>Configurations</h2>\n<table class=\"sortable configs\"><thead><tr><th class=\"n\">#</th>";
  for (const planner::Dimension& d : r.dimensions) b += "<th>" + esc(d.path) + "</th>";
  b += "<th class=\"n\">mean makespan</th><th class=\"n\">95% CI</th><th class=\"n\">" + esc(q) +
       " makespan</th><th class=\"n\">mean cost</th>";
  if (r.deadline_s) b += "<th class=\"n\">meets deadline</th>";
  b += "<th class=\"n\">runs with failed tasks</th><th>Pareto</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < r.configs.size(); ++i) {
    const planner::ConfigResult& c = r.configs[i];
    // A row without figures stays last, however the table is sorted (the page's script).
    b += std::string("<tr") + (r.recommended == i ? " class=\"rec\" title=\"recommended\"" : "") +
         (c.infeasible.empty() ? "" : " data-last") + "><td class=\"n\" data-v=\"" + std::to_string(i) +
         "\">" + std::to_string(i) + "</td>";
    // A number sorts as one (1, 2, 10, not 1, 10, 2); other values as text.
    for (const std::string& v : c.values) {
      double parsed = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
      const bool number =
          !v.empty() && ec == std::errc() && end == v.data() + v.size() && std::isfinite(parsed);
      b += (number ? "<td data-v=\"" + esc(v) + "\">" : std::string("<td>")) + esc(v) + "</td>";
    }
    if (!c.infeasible.empty()) {  // not simulated: why, across the figures' columns
      b += "<td class=\"infeasible\" colspan=\"" + std::to_string(r.deadline_s ? 7 : 6) +
           "\">cannot run: " + esc(c.infeasible) + "</td></tr>\n";
      continue;
    }
    b += "<td class=\"n\" data-v=\"" + num(c.makespan_s.mean, 6) + "\">" +
         esc(human_duration(c.makespan_s.mean)) + "</td><td class=\"n\" data-v=\"" +
         num(c.makespan_s.ci95_high - c.makespan_s.ci95_low, 6) + "\">" +
         esc(c.makespan_s.n < 2
                 ? std::string("n/a (one run)")
                 : human_duration(c.makespan_s.ci95_low) + " – " + human_duration(c.makespan_s.ci95_high)) +
         "</td><td class=\"n\" data-v=\"" +
         (c.quantile_on_failed_run ? std::string("Infinity") : num(c.quantile_makespan_s, 6)) + "\">" +
         esc(c.quantile_on_failed_run ? std::string("none (a failed run)")
                                      : human_duration(c.quantile_makespan_s)) +
         "</td><td class=\"n\" data-v=\"" + num(c.cost.mean, 6) + "\">" + num(c.cost.mean, 2) + "</td>";
    if (r.deadline_s)
      b += "<td class=\"n\" data-v=\"" + num(c.p_meets_deadline, 4) + "\">" + percent(c.p_meets_deadline) +
           (c.meets ? " ✓" : "") + "</td>";
    b += "<td class=\"n\" data-v=\"" + std::to_string(c.runs_with_failed_tasks) + "\">" +
         std::to_string(c.runs_with_failed_tasks) + "</td><td>" + (on_front[i] ? "yes" : "") +
         (r.recommended == i ? " (recommended)" : "") + "</td></tr>\n";
  }
  b += "</tbody></table>\n";
  page.write(out);
}

}  // namespace shardflow::report
