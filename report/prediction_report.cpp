#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include <shardflow/report/html_report.hpp>

#include "gantt.hpp"
#include "html.hpp"
#include "run_charts.hpp"

namespace shardflow::report {

std::string time_scale_caveat(const Trace& run, const Trace& other) {
  // A run at a time scale is in real time, its sampled-time steps F times the model's: against a run in
  // model time (a prediction), every error is the scale's.
  if (run.time_scale == 1 || run.time_scale == other.time_scale) return "";
  std::ostringstream text;
  text << "ran at time scale " << run.time_scale
       << " (run --time-scale): its sampled-time steps took that times their model time, so the errors are "
          "mostly the scale's";
  return text.str();
}

void write_prediction_report(std::ostream& out, const RunData& predicted, const RunData& measured,
                             const ReportOptions& o) {
  using namespace detail;
  const Trace& pt = predicted.trace;
  const Trace& mt = measured.trace;
  const Metrics& pm = predicted.metrics;
  const Metrics& mm = measured.metrics;
  Page page("shardflow prediction against measurement: " + mt.scenario,
            predicted.label + ": " + run_facts(pt) + " · " + measured.label + ": " + run_facts(mt) +
                " · shardflow " + (o.version.empty() ? "?" : o.version));
  page.add_css(step_css(std::max(pt.steps.size(), mt.steps.size())));
  std::string& b = page.body();
  // The error of a prediction, relative to the measurement.
  const auto error = [](double p, double m) {
    return m != 0 ? num((p - m) / m * 100, 1) + "%" : std::string("-");
  };
  b += cards({{"makespan, " + predicted.label, human_duration(pm.makespan_s), ""},
              {"makespan, " + measured.label, human_duration(mm.makespan_s), ""},
              {"makespan error", error(pm.makespan_s, mm.makespan_s), "(predicted - measured) / measured"},
              {"critical path error", error(pm.critical_path_s, mm.critical_path_s),
               human_duration(pm.critical_path_s) + " against " + human_duration(mm.critical_path_s)}});

  if (pt.scenario != mt.scenario)
    b += "<p class=\"note\">The two runs are of differently named scenarios: " + esc(predicted.label) +
         " of " + esc(pt.scenario) + ", " + esc(measured.label) + " of " + esc(mt.scenario) +
         ". Their steps are matched by name.</p>\n";
  for (const auto& [r, other] : {std::pair{&predicted, &mt}, {&measured, &pt}})
    if (const std::string caveat = time_scale_caveat(r->trace, *other); !caveat.empty())
      b += "<p class=\"note\">The " + esc(r->label) + " run " + esc(caveat) +
           ". Compare it with its prediction from compare --backend local, or turn it back into model time "
           "with shardflow calibrate.</p>\n";
  b += "<h2>Error per step</h2>\n<table class=\"sortable errors\"><thead><tr><th>step</th><th class=\"n\">"
       "attempts</th><th class=\"n\">run p50, " +
       esc(predicted.label) + "</th><th class=\"n\">run p50, " + esc(measured.label) +
       "</th><th class=\"n\">p50 error</th><th class=\"n\">run p95, " + esc(predicted.label) +
       "</th><th class=\"n\">run p95, " + esc(measured.label) +
       "</th><th class=\"n\">p95 error</th></tr></thead><tbody>\n";
  const auto cell = [](double seconds) {
    return "<td class=\"n\" data-v=\"" + num(seconds, 6) + "\">" + esc(human_duration(seconds)) + "</td>";
  };
  const auto error_cell = [&](double p, double m) {
    return "<td class=\"n\" data-v=\"" + num(m != 0 ? std::abs(p - m) / m : 0, 6) + "\">" + error(p, m) +
           "</td>";
  };
  for (const StepMetrics& ms : mm.per_step) {
    const auto ps = std::find_if(pm.per_step.begin(), pm.per_step.end(),
                                 [&](const StepMetrics& s) { return s.step == ms.step; });
    if (ps == pm.per_step.end()) {
      b += "<tr><td>" + esc(ms.step) + "</td><td colspan=\"7\">not in the prediction</td></tr>\n";
      continue;
    }
    b += "<tr><td>" + esc(ms.step) + "</td><td class=\"n\">" + count(ps->attempts) + " / " +
         count(ms.attempts) + "</td>";
    if (ps->succeeded == 0 || ms.succeeded == 0) {  // no run times on one side: nothing to compare
      b += "<td colspan=\"6\">no successful attempt " +
           std::string(ps->succeeded == 0 && ms.succeeded == 0 ? "in either"
                       : ps->succeeded == 0                    ? "in the prediction"
                                                               : "measured") +
           "</td></tr>\n";
      continue;
    }
    b += cell(ps->run_seconds.p50) + cell(ms.run_seconds.p50) +
         error_cell(ps->run_seconds.p50, ms.run_seconds.p50) + cell(ps->run_seconds.p95) +
         cell(ms.run_seconds.p95) + error_cell(ps->run_seconds.p95, ms.run_seconds.p95) + "</tr>\n";
  }
  b += "</tbody></table>\n";

  const double end = std::max(pm.makespan_s, mm.makespan_s);
  b += "<h2>Pods by node, on one time axis</h2>\n";
  gantt(b, pt, pm.critical_path, {predicted.label + ": pods by node", end, o.max_bars / 2});
  gantt(b, mt, mm.critical_path, {measured.label + ": pods by node", end, o.max_bars / 2});
  page.write(out);
}

}  // namespace shardflow::report
