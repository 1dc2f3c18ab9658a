// The building blocks of the HTML reports: escaping and number text, the page shell (CSS, the inline
// script), the Okabe-Ito palette, scales and axis ticks, and time bins. Each kind of page (run, sweep,
// prediction; a comparison page for `compare` next) is a function that fills a Page with sections and
// charts made of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <shardflow/core/trace.hpp>

namespace shardflow::report::detail {

/// Text safe inside HTML elements and quoted attributes (& < > " ' escaped).
std::string esc(std::string_view s);
/// The same, appended to `out`.
void append_esc(std::string& out, std::string_view s);
/// A number with `decimals` decimals ("12.5"), for coordinates and table cells.
std::string num(double v, int decimals = 1);
/// An integer with thousands separators ("100,000").
std::string count(std::uint64_t n);
/// "12.3%" of a 0..1 share.
std::string percent(double share);

/// Okabe-Ito (colour-blind safe), without black: the colour of series i (cycling).
const char* palette(std::size_t i);
inline constexpr std::size_t kPaletteSize = 7;
/// The CSS class of step i's colour (step_css makes one rule per colour): "s" and i modulo the palette.
std::string step_class(std::size_t step);
/// How many steps a run report draws one by one (a histogram, a legend entry, a row of the steps' table):
/// those with the most run time, in step order; the page says how many more there are and where they
/// are (metrics.csv, trace.csv). A WfCommons import has a step per task: 50,000 of them made a 93 MB page.
inline constexpr std::size_t kMaxDrawnSteps = 40;
/// The steps a run report draws one by one: all, up to kMaxDrawnSteps; beyond, the kMaxDrawnSteps with the
/// most run time (summed over their attempts, then the lower index), in step order.
std::vector<std::size_t> drawn_steps(const Trace& t);

/// Linear map of [d0, d1] onto [r0, r1].
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  [[nodiscard]] double operator()(double v) const {
    return d1 == d0 ? r0 : r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  }
};

/// Round tick positions in [lo, hi]: at most about `max_ticks` of them, in steps of 1, 2 or 5 x 10^k,
/// or for times, of round durations (1 s, 15 s, 1 min, 15 min, 1 h, 6 h, 1 day...).
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
std::vector<double> time_ticks(double lo, double hi, int max_ticks);

/// Time-weighted sums over equal bins of [0, end): add(t0, t1, w) adds w x (the overlap of [t0, t1) with
/// each bin), in constant time; after settle(), mean(b) is bin b's sum over its width: the mean of the
/// added quantity in it.
class Bins {
 public:
  Bins(double end, std::size_t bins);
  void add(double t0, double t1, double weight);
  void settle();
  [[nodiscard]] std::size_t size() const { return sum_.size(); }
  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] double mean(std::size_t b) const { return sum_[b] / width_; }

 private:
  double end_;
  double width_;
  std::vector<double> sum_;
  std::vector<double> full_;  // weights of the whole bins an interval covers, as a difference array
};

/// An SVG chart with a plot area inside margins: the frame, axes with ticks and labels, written to `out`.
struct Frame {
  double width = 960, height = 300;
  double left = 70, right = 20, top = 10, bottom = 40;
  [[nodiscard]] double plot_width() const { return width - left - right; }
  [[nodiscard]] double plot_height() const { return height - top - bottom; }
};

/// Opens `<svg>` for a frame; `cls` and `attrs` go on the element (attrs: ` data-bars="3"`).
void open_svg(std::string& out, const Frame& f, std::string_view cls, std::string_view label,
              std::string_view attrs = {});
/// A horizontal axis at the bottom of the plot with a label per tick (tick_text) and a title.
void x_axis(std::string& out, const Frame& f, const Scale& x, const std::vector<double>& ticks, bool time,
            std::string_view title);
/// A vertical axis on the left with grid lines.
void y_axis(std::string& out, const Frame& f, const Scale& y, const std::vector<double>& ticks, bool time,
            std::string_view title, bool as_percent = false);
/// The text of a tick: a human duration for time axes, a short number otherwise.
std::string tick_text(double v, bool time, bool as_percent = false);

struct LegendEntry {
  std::string label;
  std::string swatch;  // the SVG of a 12 x 12 symbol at (0, 0)
};
/// A legend as an HTML row of swatches (wraps; prints).
std::string legend(const std::vector<LegendEntry>& entries);
/// A filled square swatch of a colour class or colour.
std::string swatch_fill(std::string_view color);

/// A page: a title, a line of facts under it, sections, then the shared CSS and script.
class Page {
 public:
  Page(std::string title, std::string meta);
  /// Appends HTML to the body.
  std::string& body() { return body_; }
  /// CSS rules for this page only (step colours).
  void add_css(std::string_view css) { css_ += css; }
  void write(std::ostream& out) const;

 private:
  std::string title_, meta_, css_, body_;
};

/// `.s0 {fill: ...}` rules for n steps, the bars' colours.
std::string step_css(std::size_t steps);

/// Headline figures: a row of cards (label, value, a note under it).
struct Card {
  std::string label, value, note;
};
std::string cards(const std::vector<Card>& cs);

}  // namespace shardflow::report::detail
