#include "html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/report/html_report.hpp>

namespace shardflow::report {

std::string human_duration(double seconds) {
  if (std::isnan(seconds)) return "?";
  if (seconds < 0) return "-" + human_duration(-seconds);
  if (seconds > 9e9) return detail::num(seconds / 3600, 0) + "h";  // beyond int64 nanoseconds
  // Round to what matters at this size, then let format_duration spell it ("1h15m", "4m3s", "2.5s").
  const double unit = seconds >= 3600   ? 60
                      : seconds >= 60   ? 1
                      : seconds >= 1    ? 0.1
                      : seconds >= 1e-3 ? 1e-3
                                        : 1e-6;
  const double rounded = std::round(seconds / unit) * unit;
  return format_duration(Duration::from_ns(std::llround(rounded * 1e9)));
}

}  // namespace shardflow::report

namespace shardflow::report::detail {

std::string esc(std::string_view s) {
  std::string out;
  append_esc(out, s);
  return out;
}

void append_esc(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size());
  // Runs of ordinary characters in one append each.
  std::size_t from = 0;
  char picture[3];  // a control character's picture, U+2400 + its code (U+2421 for DEL), in UTF-8
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char* entity = nullptr;
    const auto c = static_cast<unsigned char>(s[i]);
    // Control characters other than tab and line breaks are parse errors in HTML's text (a NUL becomes
    // U+FFFD, others show as nothing): a name that holds one shows its picture, ␁ for U+0001.
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      const unsigned code = c == 0x7F ? 0x2421 : 0x2400 + c;
      picture[0] = static_cast<char>(0xE0 | (code >> 12));
      picture[1] = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      picture[2] = static_cast<char>(0x80 | (code & 0x3F));
      out.append(s.data() + from, i - from);
      out.append(picture, 3);
      from = i + 1;
      continue;
    }
    switch (s[i]) {
      case '&':
        entity = "&amp;";
        break;
      case '<':
        entity = "&lt;";
        break;
      case '>':
        entity = "&gt;";
        break;
      case '"':
        entity = "&quot;";
        break;
      case '\'':
        entity = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.data() + from, i - from);
    out += entity;
    from = i + 1;
  }
  out.append(s.data() + from, s.size() - from);
}

std::string num(double v, int decimals) {
  return fixed_decimals(v, decimals);
}

std::string count(std::uint64_t n) {
  return with_commas(n);
}

std::string percent(double share) {
  return num(share * 100, 1) + "%";
}

const char* palette(std::size_t i) {
  // Okabe & Ito (2008), "Color Universal Design": orange, sky blue, bluish green, yellow, blue,
  // vermillion, reddish purple (black is kept for marks).
  static constexpr const char* kColors[kPaletteSize] = {"#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                                        "#0072B2", "#D55E00", "#CC79A7"};
  return kColors[i % kPaletteSize];
}

namespace {

std::vector<double> ticks_from(double lo, double hi, const std::vector<double>& steps, int max_ticks) {
  std::vector<double> t;
  if (!(hi > lo)) {
    t.push_back(lo);
    return t;
  }
  double step = steps.back();
  for (double s : steps)
    if ((hi - lo) / s <= max_ticks) {
      step = s;
      break;
    }
  while ((hi - lo) / step > max_ticks) step *= 10;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> steps;
  const double range = hi > lo ? hi - lo : 1;
  const double base = std::pow(10, std::floor(std::log10(range / max_ticks)));
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0}) steps.push_back(base * m);
  return ticks_from(lo, hi, steps, max_ticks);
}

std::vector<double> time_ticks(double lo, double hi, int max_ticks) {
  if (hi - lo < 1) return nice_ticks(lo, hi, max_ticks);
  static const std::vector<double> kSteps = {1,     2,     5,     10,    15,     30,    60,
                                             120,   300,   600,   900,   1800,   3600,  7200,
                                             10800, 21600, 43200, 86400, 172800, 604800};
  return ticks_from(lo, hi, kSteps, max_ticks);
}

Bins::Bins(double end, std::size_t bins)
    : end_(end > 0 ? end : 1),
      width_(end_ / static_cast<double>(bins)),
      sum_(bins, 0.0),
      full_(bins + 1, 0.0) {}

void Bins::add(double t0, double t1, double weight) {
  t0 = std::clamp(t0, 0.0, end_);
  t1 = std::clamp(t1, t0, end_);
  if (t1 <= t0) return;
  const std::size_t n = sum_.size();
  const auto bin = [&](double t) { return std::min(n - 1, static_cast<std::size_t>(t / width_)); };
  const std::size_t b0 = bin(t0), b1 = bin(t1);
  if (b0 == b1) {
    sum_[b0] += weight * (t1 - t0);
    return;
  }
  sum_[b0] += weight * (static_cast<double>(b0 + 1) * width_ - t0);
  sum_[b1] += weight * (t1 - static_cast<double>(b1) * width_);
  full_[b0 + 1] += weight;  // bins b0+1 .. b1-1 are covered whole
  full_[b1] -= weight;
}

void Bins::settle() {
  double w = 0;
  for (std::size_t b = 0; b < sum_.size(); ++b) {
    w += full_[b];
    sum_[b] += w * width_;
    full_[b] = 0;
  }
  full_.back() = 0;
}

std::string tick_text(double v, bool time, bool as_percent) {
  if (time) return human_duration(v);
  if (as_percent) return num(v * 100, 0) + "%";
  const double a = std::abs(v);
  if (a >= 1e6) return num(v / 1e6, a >= 1e7 ? 0 : 1) + "M";
  if (a >= 1e4) return num(v / 1e3, 0) + "k";
  if (a == std::floor(a)) return num(v, 0);
  // Enough decimals for two significant digits of small values (a cost of 0.00012), at least 1-3.
  int decimals = a >= 10 ? 1 : a >= 1 ? 2 : 3;
  while (decimals < 12 && a > 0 && a < std::pow(10.0, 1 - decimals)) ++decimals;
  std::string text = num(v, decimals);
  while (text.back() == '0') text.pop_back();  // "0.6", not "0.600"
  return text;
}

void open_svg(std::string& out, const Frame& f, std::string_view cls, std::string_view label,
              std::string_view attrs) {
  out += "<svg class=\"chart " + std::string(cls) + "\" viewBox=\"0 0 " + num(f.width, 0) + " " +
         num(f.height, 0) + "\" role=\"img\" aria-label=\"" + esc(label) + "\"" + std::string(attrs) + ">\n";
}

void x_axis(std::string& out, const Frame& f, const Scale& x, const std::vector<double>& ticks, bool time,
            std::string_view title) {
  const double y0 = f.top + f.plot_height();
  out += "<g class=\"axis\"><line x1=\"" + num(f.left) + "\" y1=\"" + num(y0) + "\" x2=\"" +
         num(f.width - f.right) + "\" y2=\"" + num(y0) + "\"/>";
  for (double t : ticks) {
    const double px = x(t);
    out += "<line x1=\"" + num(px) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(px) + "\" y2=\"" + num(y0 + 5) +
           "\"/><text x=\"" + num(px) + "\" y=\"" + num(y0 + 17) + "\" text-anchor=\"middle\">" +
           esc(tick_text(t, time)) + "</text>";
  }
  out += "<text class=\"title\" x=\"" + num(f.left + f.plot_width() / 2) + "\" y=\"" + num(f.height - 4) +
         "\" text-anchor=\"middle\">" + esc(title) + "</text></g>\n";
}

void y_axis(std::string& out, const Frame& f, const Scale& y, const std::vector<double>& ticks, bool time,
            std::string_view title, bool as_percent) {
  out += "<g class=\"axis\"><line x1=\"" + num(f.left) + "\" y1=\"" + num(f.top) + "\" x2=\"" + num(f.left) +
         "\" y2=\"" + num(f.top + f.plot_height()) + "\"/>";
  for (double t : ticks) {
    const double py = y(t);
    out += "<line class=\"grid\" x1=\"" + num(f.left) + "\" y1=\"" + num(py) + "\" x2=\"" +
           num(f.width - f.right) + "\" y2=\"" + num(py) + "\"/><text x=\"" + num(f.left - 6) + "\" y=\"" +
           num(py + 4) + "\" text-anchor=\"end\">" + esc(tick_text(t, time, as_percent)) + "</text>";
  }
  out += "<text class=\"title\" transform=\"translate(14 " + num(f.top + f.plot_height() / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + esc(title) + "</text></g>\n";
}

std::string legend(const std::vector<LegendEntry>& entries) {
  std::string out = "<div class=\"legend\">";
  for (const LegendEntry& e : entries)
    out += "<span><svg width=\"14\" height=\"14\" viewBox=\"-1 -1 14 14\">" + e.swatch + "</svg>" +
           esc(e.label) + "</span>";
  return out + "</div>\n";
}

std::string swatch_fill(std::string_view color) {
  return "<rect width=\"12\" height=\"12\" fill=\"" + std::string(color) + "\"/>";
}

std::string step_css(std::size_t steps) {
  // One rule per colour, not per step: the palette repeats (step_class), and an imported workflow of
  // 50,000 steps made 50,000 rules.
  std::string css;
  for (std::size_t i = 0; i < std::min(steps, kPaletteSize); ++i)
    css += ".s" + std::to_string(i) + "{fill:" + palette(i) + "}";
  return css + "\n";
}

std::vector<std::size_t> drawn_steps(const Trace& t) {
  std::vector<std::size_t> steps(t.steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = i;
  if (steps.size() <= kMaxDrawnSteps) return steps;
  std::vector<std::int64_t> run(t.steps.size(), 0);
  for (const AttemptRecord& a : t.attempts)
    if (a.step < run.size() && a.started != kNever && a.finished != kNever)
      run[a.step] += (a.finished - a.started).ns();
  std::partial_sort(steps.begin(), steps.begin() + kMaxDrawnSteps, steps.end(),
                    [&](std::size_t a, std::size_t b) { return run[a] != run[b] ? run[a] > run[b] : a < b; });
  steps.resize(kMaxDrawnSteps);
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::string step_class(std::size_t step) {
  return "s" + std::to_string(step % kPaletteSize);
}

std::string cards(const std::vector<Card>& cs) {
  std::string out = "<div class=\"cards\">";
  for (const Card& c : cs)
    out += "<div class=\"card\"><div class=\"label\">" + esc(c.label) + "</div><div class=\"value\">" +
           esc(c.value) + "</div><div class=\"note\">" + esc(c.note) + "</div></div>";
  return out + "</div>\n";
}

namespace {

constexpr const char* kCss = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#222;margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:14px;margin:12px 0 4px}.meta{color:#555;margin:0 0 12px}.note{color:#555;font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:130px}
.card .label{font-size:12px;color:#555}.card .value{font-size:20px;font-weight:600}
svg.chart{width:100%;height:auto;display:block}svg text{font-size:11px;fill:#333}
.axis line{stroke:#666;stroke-width:1}.axis .grid{stroke:#e4e4e4}.axis .title{font-size:12px;fill:#222}
.node-sep{stroke:#ddd}.node-label{font-size:10px}.agg-label{font-size:10px;fill:#555;font-style:italic}.agg.other{fill:#999}
.bar{stroke:none}.bar.retry{stroke:#000;stroke-width:.8;stroke-dasharray:2 1.5}.bar.crit{stroke:#000;stroke-width:2}
.x{stroke:#000;stroke-width:1.5;fill:none}.deadline{stroke:#D55E00;stroke-width:1.5;stroke-dasharray:6 4}
.front{fill:none;stroke:#0072B2;stroke-width:1.5}.pt{fill:#999;stroke:#fff;stroke-width:1}.pt.pareto{fill:#0072B2}
.pt.rec{fill:#009E73;stroke:#000;stroke-width:2}.hbar{fill:#56B4E9}.line{fill:none;stroke-width:1.5}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:2px 0 6px}.legend svg{vertical-align:-2px;margin-right:4px}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:8px 16px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
tr.rec td{background:#e8f5ef;font-weight:600}
#tip{position:absolute;display:none;pointer-events:none;background:#fff;border:1px solid #888;border-radius:4px;padding:4px 7px;font-size:12px;white-space:pre;box-shadow:0 2px 6px rgba(0,0,0,.2);z-index:9}
footer{margin-top:30px;color:#777;font-size:12px}
@media print{#tip{display:none!important}body{max-width:none;padding:0}h2,svg.chart,table{break-inside:avoid}}
)";

// Tooltips: a hovered element's SVG <title> (the browser's own tooltip, slow to appear) is moved into a
// box that follows the pointer. Sortable tables: a click on a header sorts by that column (data-v holds
// a cell's number).
constexpr const char* kScript = R"(
(function(){
var tip=document.getElementById('tip');
document.addEventListener('mouseover',function(e){var el=e.target;if(!el.getAttribute)return;
var t=el.querySelector&&el.querySelector(':scope>title');if(t){el.setAttribute('data-tip',t.textContent);t.remove();}
var s=el.getAttribute('data-tip');if(s){tip.textContent=s;tip.style.display='block';}else tip.style.display='none';});
document.addEventListener('mousemove',function(e){tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+14)+'px';});
document.querySelectorAll('table.sortable').forEach(function(tb){var hs=tb.querySelectorAll('th');
hs.forEach(function(th,i){th.addEventListener('click',function(){var asc=th.getAttribute('aria-sort')!=='ascending';
hs.forEach(function(h){h.removeAttribute('aria-sort');});th.setAttribute('aria-sort',asc?'ascending':'descending');
var key=function(r){var c=r.cells[i];return c.hasAttribute('data-v')?parseFloat(c.getAttribute('data-v')):c.textContent;};
var rows=Array.prototype.slice.call(tb.tBodies[0].rows);
rows.sort(function(a,b){var la=a.hasAttribute('data-last'),lb=b.hasAttribute('data-last');if(la||lb)return la===lb?0:la?1:-1;
var x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*(asc?1:-1);});
rows.forEach(function(r){tb.tBodies[0].appendChild(r);});});});});
})();
)";

}  // namespace

Page::Page(std::string title, std::string meta) : title_(std::move(title)), meta_(std::move(meta)) {}

void Page::write(std::ostream& out) const {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" << esc(title_)
      << "</title>\n<style>" << kCss << css_ << "</style>\n</head>\n<body>\n<h1>" << esc(title_)
      << "</h1>\n<p class=\"meta\">" << esc(meta_) << "</p>\n"
      << body_
      << "<footer>Made by shardflow. One file: no network needed; hover a bar or a point for details; click "
      << "a table's header to sort it.</footer>\n<div id=\"tip\"></div>\n<script>" << kScript
      << "</script>\n</body>\n</html>\n";
}

}  // namespace shardflow::report::detail
