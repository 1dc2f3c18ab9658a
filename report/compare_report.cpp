#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <ostream>

#include <shardflow/report/html_report.hpp>

#include "html.hpp"

namespace shardflow::report {

namespace {

using namespace detail;

// A quantity of a variant, as the charts read it.
struct Quantity {
  std::string title;  // "mean makespan"
  bool time = false;  // a duration (human axis) or a number
  std::string unit;   // of a number: "seconds", "price units"
  std::function<const planner::Summary&(const planner::VariantResult&)> get;
};

std::string value_text(double v, bool time, int decimals = 2) {
  return time ? human_duration(v) : num(v, decimals);
}
std::string signed_text(double v, bool time, int decimals) {
  return (v < 0 ? "−" : "+") + value_text(std::abs(v), time, decimals);
}
// A paired difference, its mean then its interval's bounds, with the decimals that show a significant
// one (planner::difference_decimals).
std::array<std::string, 3> diff_texts(const planner::Summary& d, bool time) {
  const int decimals = planner::difference_decimals(d, 2);
  return {signed_text(d.mean, time, decimals), signed_text(d.ci95_low, time, decimals),
          signed_text(d.ci95_high, time, decimals)};
}

// Horizontal bars from 0 to each variant's mean, with the 95% interval of the mean as a whisker.
void mean_bars(std::string& b, const planner::CompareResult& r, const Quantity& q, const std::string& cls) {
  const std::size_t n = r.variants.size();
  Frame f;
  f.left = 150;
  f.top = 8;
  f.height = f.top + f.bottom + 30.0 * static_cast<double>(n);
  double hi = 0;
  for (const planner::VariantResult& v : r.variants) hi = std::max({hi, q.get(v).ci95_high, q.get(v).mean});
  if (hi <= 0) hi = 1;
  const std::vector<double> xt = q.time ? time_ticks(0, hi * 1.08, 8) : nice_ticks(0, hi * 1.08, 8);
  const Scale x{0, std::max(hi * 1.08, xt.empty() ? 0 : xt.back()), f.left, f.width - f.right};
  open_svg(b, f, "bars " + cls, q.title + " per variant with its 95% confidence interval",
           " data-bars=\"" + std::to_string(n) + "\"");
  for (std::size_t i = 0; i < n; ++i) {
    const planner::VariantResult& v = r.variants[i];
    const planner::Summary& s = q.get(v);
    const double y0 = f.top + 30.0 * static_cast<double>(i);
    const std::string ci = s.n < 2 ? std::string(" (one run: no interval)")
                                   : " (95% CI " + value_text(s.ci95_low, q.time) + " to " +
                                         value_text(s.ci95_high, q.time) + ")";
    const std::string tip = v.name + "\n" + q.title + " " + value_text(s.mean, q.time) + ci + "\np50 " +
                            value_text(s.p50, q.time) + ", p95 " + value_text(s.p95, q.time) + " over " +
                            std::to_string(v.runs.size()) + " runs";
    b += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y0 + 19) + "\" text-anchor=\"end\">" + esc(v.name) +
         "</text>\n";
    b += "<rect class=\"cbar\" x=\"" + num(x(0)) + "\" y=\"" + num(y0 + 6) + "\" width=\"" +
         num(std::max(0.0, x(s.mean) - x(0))) + "\" height=\"18\" fill=\"" + palette(i) + "\"><title>" +
         esc(tip) + "</title></rect>\n";
    const double yc = y0 + 15, lo = x(s.ci95_low), hi_px = x(s.ci95_high);
    b += "<path class=\"ci\" d=\"M" + num(lo) + " " + num(yc) + "H" + num(hi_px) + "M" + num(lo) + " " +
         num(yc - 6) + "V" + num(yc + 6) + "M" + num(hi_px) + " " + num(yc - 6) + "V" + num(yc + 6) +
         "\"/>\n";
  }
  x_axis(b, f, x, xt, q.time, q.title + (q.unit.empty() ? "" : " (" + q.unit + ")") + ", with 95% CI");
  b += "</svg>\n";
}

// Each variant's paired difference to the baseline: a point at the mean, the 95% interval as a line, a
// line at 0; a filled point when the interval excludes 0.
void diff_chart(std::string& b, const planner::CompareResult& r, const Quantity& q, const std::string& cls) {
  const std::size_t n = r.variants.size() - 1;
  Frame f;
  f.left = 150;
  f.top = 8;
  f.height = f.top + f.bottom + 30.0 * static_cast<double>(n);
  double lo = 0, hi = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    lo = std::min(lo, q.get(r.variants[i]).ci95_low);
    hi = std::max(hi, q.get(r.variants[i]).ci95_high);
  }
  if (hi == lo) hi = lo + 1;
  const double pad = (hi - lo) * 0.08;
  const std::vector<double> xt = nice_ticks(lo - pad, hi + pad, 8);
  const Scale x{lo - pad, hi + pad, f.left, f.width - f.right};
  open_svg(b, f, "diffs " + cls, q.title + " minus the baseline's, paired by seed, with 95% intervals",
           " data-diffs=\"" + std::to_string(n) + "\"");
  b += "<line class=\"zero\" x1=\"" + num(x(0)) + "\" x2=\"" + num(x(0)) + "\" y1=\"" + num(f.top) +
       "\" y2=\"" + num(f.top + f.plot_height()) + "\"/>\n";
  for (std::size_t i = 1; i <= n; ++i) {
    const planner::VariantResult& v = r.variants[i];
    const planner::Summary& d = q.get(v);
    const bool sig = planner::significant(d);
    const double yc = f.top + 30.0 * static_cast<double>(i - 1) + 15;
    b += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(yc + 4) + "\" text-anchor=\"end\">" + esc(v.name) +
         "</text>\n";
    b += "<path class=\"ci\" d=\"M" + num(x(d.ci95_low)) + " " + num(yc) + "H" + num(x(d.ci95_high)) + "M" +
         num(x(d.ci95_low)) + " " + num(yc - 6) + "V" + num(yc + 6) + "M" + num(x(d.ci95_high)) + " " +
         num(yc - 6) + "V" + num(yc + 6) + "\"/>\n";
    const auto [mean, low, high] = diff_texts(d, q.time);
    const std::string tip = d.n < 2 ? v.name + " − " + r.variants.front().name + ": " + mean +
                                          " (one run: no interval, nothing is significant)"
                                    : v.name + " − " + r.variants.front().name + ": " + mean + " (95% CI " +
                                          low + " to " + high + ")\n" +
                                          (sig ? "significant: the interval excludes 0"
                                               : "not significant: the interval holds 0");
    b += std::string("<circle class=\"diff") + (sig ? " sig" : "") + "\" cx=\"" + num(x(d.mean)) +
         "\" cy=\"" + num(yc) + "\" r=\"6\"><title>" + esc(tip) + "</title></circle>\n";
  }
  std::vector<double> ticks = xt;
  x_axis(b, f, x, ticks, false,
         "difference in " + q.title + (q.unit.empty() ? "" : " (" + q.unit + ")") + " to " +
             r.variants.front().name);
  b += "</svg>\n";
}

}  // namespace

void write_compare_report(std::ostream& out, const planner::CompareResult& r, const ReportOptions& o) {
  Page page("shardflow compare: " + r.scenario,
            "scenario " + r.scenario + " · " + count(r.variants.size()) + " variants · " +
                count(static_cast<std::uint64_t>(r.replications)) +
                (r.replications == 1 ? " run each, seeds from " : " runs each, seeds from ") +
                std::to_string(r.base_seed) + " (the same for every variant) · baseline " +
                (r.variants.empty() ? "-" : r.variants.front().name) +
                (r.deadline_s ? " · deadline " + human_duration(*r.deadline_s) : "") + " · shardflow " +
                (o.version.empty() ? "?" : o.version));
  page.add_css(
      ".cbar{stroke:none}.ci{stroke:#000;stroke-width:1.5;fill:none}.zero{stroke:#666;stroke-dasharray:4 3}"
      ".diff{fill:#fff;stroke:#0072B2;stroke-width:2}.diff.sig{fill:#0072B2}"
      ".mbar.measured{fill:#E69F00}.mbar.predicted{fill:#56B4E9}\n");
  std::string& b = page.body();
  if (r.variants.empty()) {
    b += "<p>No variants.</p>\n";
    page.write(out);
    return;
  }
  const Quantity makespan{
      "mean makespan", true, "",
      [](const planner::VariantResult& v) -> const planner::Summary& { return v.makespan_s; }};
  const Quantity cost{"mean cost", false, "price units",
                      [](const planner::VariantResult& v) -> const planner::Summary& { return v.cost; }};
  const Quantity dmakespan{
      "makespan", false, "seconds",
      [](const planner::VariantResult& v) -> const planner::Summary& { return v.diff_makespan_s; }};
  const Quantity dcost{
      "cost", false, "price units",
      [](const planner::VariantResult& v) -> const planner::Summary& { return v.diff_cost; }};

  std::vector<Card> cs;
  if (r.fastest)
    cs.push_back({"fastest", r.variants[*r.fastest].name,
                  "mean makespan " + human_duration(r.variants[*r.fastest].makespan_s.mean)});
  if (r.cheapest)
    cs.push_back(
        {"cheapest", r.variants[*r.cheapest].name, "mean cost " + num(r.variants[*r.cheapest].cost.mean, 2)});
  if (r.deadline_s)
    cs.push_back({"recommended", r.recommended ? r.variants[*r.recommended].name : "none",
                  r.recommended ? "the cheapest that meets the deadline" : "no variant meets the deadline"});
  std::size_t sig = 0;
  for (std::size_t i = 1; i < r.variants.size(); ++i)
    sig += (planner::significant(r.variants[i].diff_makespan_s) ? 1 : 0) +
           (planner::significant(r.variants[i].diff_cost) ? 1 : 0);
  cs.push_back({"significant differences",
                std::to_string(sig) + " of " + std::to_string(2 * (r.variants.size() - 1)),
                "makespan and cost against " + r.variants.front().name});
  b += cards(cs);

  std::vector<LegendEntry> le;
  for (std::size_t i = 0; i < r.variants.size(); ++i)
    le.push_back({r.variants[i].name + (i == 0 ? " (baseline)" : ""), swatch_fill(palette(i))});
  le.push_back({"95% confidence interval of the mean", "<path class=\"ci\" d=\"M0 6H12M0 2V10M12 2V10\"/>"});
  b += "<h2>Makespan</h2>\n" + legend(le);
  mean_bars(b, r, makespan, "makespan");
  b += "<h2>Cost</h2>\n" + legend(le);
  mean_bars(b, r, cost, "cost");

  if (r.variants.size() > 1) {
    b += "<h2>Differences to " + esc(r.variants.front().name) + ", paired by seed</h2>\n";
    b += "<p class=\"note\">Replication k of every variant ran with the same seed; each difference is taken "
         "per "
         "seed, so the noise the variants share cancels. A filled point: the 95% interval excludes 0 "
         "(significant).</p>\n";
    b += legend({{"significant", "<circle cx=\"6\" cy=\"6\" r=\"5\" class=\"diff sig\"/>"},
                 {"not significant", "<circle cx=\"6\" cy=\"6\" r=\"5\" class=\"diff\"/>"},
                 {"95% interval", "<path class=\"ci\" d=\"M0 6H12M0 2V10M12 2V10\"/>"}});
    b += "<h3>Makespan (seconds)</h3>\n";
    diff_chart(b, r, dmakespan, "makespan");
    b += "<h3>Cost (price units)</h3>\n";
    diff_chart(b, r, dcost, "cost");
  }

  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < r.variants.size(); ++i)
    if (r.variants[i].measured) measured.push_back(i);
  if (!measured.empty()) {
    b += "<h2>Measured next to predicted</h2>\n";
    b += "<p class=\"note\">Each variant run for real (" + esc(r.variants[measured[0]].measured->backend) +
         " backend), next to the simulator's makespan for the same seeds on a model of the machine it ran "
         "on.</p>\n";
    b += legend({{"measured", "<rect width=\"12\" height=\"12\" class=\"mbar measured\"/>"},
                 {"predicted", "<rect width=\"12\" height=\"12\" class=\"mbar predicted\"/>"}});
    Frame f;
    f.left = 150;
    f.top = 8;
    f.height = f.top + f.bottom + 40.0 * static_cast<double>(measured.size());
    double hi = 0;
    for (std::size_t i : measured)
      hi = std::max({hi, r.variants[i].measured->measured_mean(), r.variants[i].measured->predicted_mean()});
    if (hi <= 0) hi = 1;
    const std::vector<double> xt = time_ticks(0, hi * 1.08, 8);
    const Scale x{0, std::max(hi * 1.08, xt.empty() ? 0 : xt.back()), f.left, f.width - f.right};
    open_svg(b, f, "measured", "measured and predicted mean makespan per variant",
             " data-variants=\"" + std::to_string(measured.size()) + "\"");
    for (std::size_t k = 0; k < measured.size(); ++k) {
      const planner::VariantResult& v = r.variants[measured[k]];
      const planner::Measurement& m = *v.measured;
      const double y0 = f.top + 40.0 * static_cast<double>(k);
      const double meas = m.measured_mean(), pred = m.predicted_mean();
      const std::string err = meas > 0 ? ", error " + num((pred - meas) / meas * 100, 1) + "%" : "";
      b += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y0 + 24) + "\" text-anchor=\"end\">" +
           esc(v.name) + "</text>\n";
      b += "<rect class=\"mbar measured\" x=\"" + num(x(0)) + "\" y=\"" + num(y0 + 5) + "\" width=\"" +
           num(x(meas) - x(0)) + "\" height=\"14\"><title>" +
           esc(v.name + ": measured " + human_duration(meas) + " (mean of " + std::to_string(m.seeds.size()) +
               " runs)") +
           "</title></rect>\n";
      b += "<rect class=\"mbar predicted\" x=\"" + num(x(0)) + "\" y=\"" + num(y0 + 20) + "\" width=\"" +
           num(x(pred) - x(0)) + "\" height=\"14\"><title>" +
           esc(v.name + ": predicted " + human_duration(pred) + err) + "</title></rect>\n";
    }
    x_axis(b, f, x, xt, true, "mean makespan");
    b += "</svg>\n";
    // The variants whose real runs had failed tasks: their makespans are not the pipeline's.
    std::string failed;
    for (std::size_t i : measured)
      if (const std::size_t n = r.variants[i].measured->runs_with_failed_tasks(); n > 0)
        failed += (failed.empty() ? "" : ", ") + esc(r.variants[i].name) + " (" + std::to_string(n) + " of " +
                  std::to_string(r.variants[i].measured->seeds.size()) + " runs)";
    if (!failed.empty())
      b += "<p class=\"note\">Real runs with failed tasks: " + failed +
           ". Such a run ended early or did less work: its makespan is not the pipeline's.</p>\n";
  }

  b += "<h2>Variants</h2>\n<table class=\"sortable variants\"><thead><tr><th>variant</th><th>changes</th>"
       "<th class=\"n\">mean makespan</th><th class=\"n\">95% CI</th><th class=\"n\">p50</th><th "
       "class=\"n\">p95</th>"
       "<th class=\"n\">mean cost</th><th class=\"n\">95% CI</th><th class=\"n\">CPU utilization</th>"
       "<th class=\"n\">Δ makespan (95% CI)</th><th class=\"n\">Δ cost (95% CI)</th>";
  if (r.deadline_s) b += "<th class=\"n\">meets deadline</th>";
  b += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const planner::VariantResult& v = r.variants[i];
    const std::string sets = planner::variant_changes(v, ", ");
    const auto diff = [&](const planner::Summary& d, bool time) {
      if (i == 0) return std::string("<td class=\"n\" data-v=\"0\">baseline</td>");
      const auto [mean, low, high] = diff_texts(d, time);
      return "<td class=\"n\" data-v=\"" + num(d.mean, 6) + "\">" +
             esc(d.n < 2 ? mean : mean + " (" + low + " to " + high + ")") +
             (planner::significant(d) ? " *" : "") + "</td>";
    };
    b += std::string("<tr") + (r.recommended == i ? " class=\"rec\" title=\"recommended\"" : "") + "><td>" +
         esc(v.name) + "</td><td>" + esc(sets.empty() ? "(as the scenario is)" : sets) +
         "</td><td class=\"n\" data-v=\"" + num(v.makespan_s.mean, 6) + "\">" +
         esc(human_duration(v.makespan_s.mean)) + "</td><td class=\"n\" data-v=\"" +
         num(v.makespan_s.ci95_high - v.makespan_s.ci95_low, 6) + "\">" +
         esc(v.makespan_s.n < 2
                 ? std::string("n/a (one run)")
                 : human_duration(v.makespan_s.ci95_low) + " – " + human_duration(v.makespan_s.ci95_high)) +
         "</td><td class=\"n\" data-v=\"" + num(v.makespan_s.p50, 6) + "\">" +
         esc(human_duration(v.makespan_s.p50)) + "</td><td class=\"n\" data-v=\"" + num(v.makespan_s.p95, 6) +
         "\">" + esc(human_duration(v.makespan_s.p95)) + "</td><td class=\"n\" data-v=\"" +
         num(v.cost.mean, 6) + "\">" + num(v.cost.mean, 2) + "</td><td class=\"n\" data-v=\"" +
         num(v.cost.ci95_high - v.cost.ci95_low, 6) + "\">" + num(v.cost.ci95_low, 2) + " – " +
         num(v.cost.ci95_high, 2) + "</td><td class=\"n\" data-v=\"" + num(v.cpu_utilization.mean, 6) +
         "\">" + percent(v.cpu_utilization.mean) + "</td>" + diff(v.diff_makespan_s, true) +
         diff(v.diff_cost, false);
    if (r.deadline_s)
      b += "<td class=\"n\" data-v=\"" + num(v.p_meets_deadline, 4) + "\">" + percent(v.p_meets_deadline) +
           (v.meets ? " ✓" : "") + "</td>";
    b += "</tr>\n";
  }
  b += "</tbody></table>\n<p class=\"note\">Δ: the variant minus " + esc(r.variants.front().name) +
       ", paired by seed; * the 95% interval excludes 0.</p>\n";
  page.write(out);
}

}  // namespace shardflow::report
