// Private to planner/: the pieces sweep and compare share to read their flags and to write and read their
// JSON files, so the two commands split `--vary`/`--variant` text and store a Summary the same way.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/planner/sweep.hpp>

#include "../core/json_reader.hpp"  // core's reader of the JSON files shardflow writes

namespace shardflow::planner::detail {

/// The shortest text that reads back to the same double, as JSON writes it: a deadline of 25ms in seconds
/// is "0.025", of 1h30m "5400"; sweep.csv's figures.
inline std::string shortest(double s) {
  return shortest_text(s);
}

/// "seeds 42..51", or "seed 42" for one replication: the seeds a sweep's or comparison's runs used.
inline std::string seeds_text(std::uint64_t first, int replications) {
  if (replications == 1) return "seed " + std::to_string(first);
  return "seeds " + std::to_string(first) + ".." +
         std::to_string(first + static_cast<std::uint64_t>(replications) - 1);
}

/// A cost for the tables: two decimals, or two significant digits below 0.1 (a cheap run's 0.0028 read as
/// 0.00, beside a "cheapest" mark), as simulate prints one.
inline std::string cost_text(double cost) {
  char buf[32];
  std::snprintf(buf, sizeof buf, cost > 0 && cost < 0.1 ? "%.2g" : "%.2f", cost);
  return buf;
}

/// The load options a sweep's or a comparison's spec gives every run before its own values (a
/// configuration's --vary, a variant's sets): overlays, --set, --cluster, --param, --max-tasks.
template <class Spec>
LoadOptions common_load_options(const Spec& spec) {
  LoadOptions options;
  options.overlays = spec.overlays;
  options.sets = spec.sets;
  options.cluster = spec.cluster;
  options.params = spec.params;
  options.max_tasks = spec.max_tasks;
  return options;
}

/// `text` with every `from` replaced by `to`.
inline std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); !from.empty() && at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// "p95", "p99.9": the name of the makespan quantile a deadline is judged by, in the tables' heads.
inline std::string quantile_label(double quantile) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", quantile);
  return buf;
}

/// The share of runs that met the deadline: those that ended by then with no task failed (a run whose
/// tasks failed ends early). `failed(k)` is nonzero for a run with failed tasks.
template <class Failed>
double share_meeting(const std::vector<double>& makespans, double deadline_s, Failed failed) {
  std::size_t ok = 0;
  for (std::size_t k = 0; k < makespans.size(); ++k) ok += makespans[k] <= deadline_s && !failed(k) ? 1 : 0;
  return makespans.empty() ? 0.0 : static_cast<double>(ok) / static_cast<double>(makespans.size());
}

/// The quantile (nearest rank) of the makespans with each run whose tasks failed counted as late: after
/// every run that finished. When the rank falls on one of those, the slowest run's makespan (the quantile
/// is past the deadline's reach whatever it is, and at least that). `failed(k)`: run k had failed tasks.
template <class Failed>
double late_quantile(const std::vector<double>& makespans, double quantile, Failed failed) {
  std::vector<double> finished;
  double slowest = 0;
  for (std::size_t k = 0; k < makespans.size(); ++k) {
    slowest = std::max(slowest, makespans[k]);
    if (!failed(k)) finished.push_back(makespans[k]);
  }
  if (makespans.empty()) return 0;
  const std::size_t rank = nearest_rank(quantile, makespans.size());
  if (rank > finished.size()) return slowest;
  std::nth_element(finished.begin(), finished.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   finished.end());
  return finished[rank - 1];
}

/// The mean cost of the runs that finished (no task failed): a run whose tasks failed ended early and
/// cheap, and a plan cannot count on that. The mean of all runs when none finished.
template <class Failed>
double finished_mean(const std::vector<double>& costs, Failed failed) {
  std::vector<double> finished;
  for (std::size_t k = 0; k < costs.size(); ++k)
    if (!failed(k)) finished.push_back(costs[k]);
  // summarize's mean (doubles, in order: the same bits on every machine), of all runs when none finished.
  return summarize(finished.empty() ? costs : finished).mean;
}

/// A summary of amounts that cannot be negative (makespans, costs, utilizations): its interval's low end
/// at least 0 (two runs' Student-t interval reached -492 s).
inline Summary summarize_amounts(const std::vector<double>& values) {
  Summary s = summarize(values);
  s.ci95_low = std::max(0.0, s.ci95_low);
  return s;
}

/// How many of n runs a share of them (share_meeting's) is.
inline std::size_t runs_meeting(double share, std::size_t n) {
  return static_cast<std::size_t>(std::llround(share * static_cast<double>(n)));
}

/// The 95% interval of a share of `replications` runs (share_meeting's).
inline ShareInterval share_interval(double share, int replications) {
  const auto n = static_cast<std::size_t>(replications);
  return share_interval95(runs_meeting(share, n), n);
}

/// Not meeting the deadline only for its failed runs: had they been on time, `needed` of the n runs would
/// have been by it. `failed_by_deadline`: how many of the failed runs ended by the deadline (at most); one
/// that ended past it (a failed run ends early, so it would have ended later still) was late anyway.
inline bool failures_keep_out(bool meets, std::size_t failed_by_deadline, double share, std::size_t n,
                              std::size_t needed) {
  return !meets && failed_by_deadline > 0 && runs_meeting(share, n) + failed_by_deadline >= needed;
}

/// " (of its 19 runs that finished)" after a mean cost of the finished runs, when some but not all failed.
inline std::string finished_runs_text(int runs_with_failed_tasks, int replications) {
  if (runs_with_failed_tasks <= 0 || runs_with_failed_tasks >= replications) return "";
  return " (of its " + std::to_string(replications - runs_with_failed_tasks) + " runs that finished)";
}

/// The line sweep and compare print under their heading when the replications are too few for the
/// intervals' skewness correction (2 to kMinSkewCorrected - 1), or for one run (no interval, and every
/// percentile is that run's); "" otherwise.
inline std::string few_replications_note(int replications) {
  if (replications == 1)
    return "note: one replication: each figure is one run's (its p50, p95 and any deadline verdict too), "
           "with no interval; -r 2 or more gives intervals, -r " +
           std::to_string(kMinSkewCorrected) +
           " or more corrects them for skew, -r 20 or more narrows them\n";
  if (replications < 2 || replications >= static_cast<int>(kMinSkewCorrected)) return "";
  return "note: with fewer than " + std::to_string(kMinSkewCorrected) +
         " replications the 95% intervals are plain Student-t intervals, wide and not corrected for the "
         "makespan's skew (too few runs to estimate it); -r " +
         std::to_string(kMinSkewCorrected) + " or more corrects them, -r 20 or more narrows them\n";
}

/// Replication k runs seed first + k: refuses a first seed whose `replications` seeds would pass 2^64 - 1
/// (they wrapped to 0 and were printed "seeds 18446744073709551615..1"). `where` is --seed when given
/// there, else the scenario file (its `seed`).
inline void check_seed_range(std::uint64_t first, int replications, const std::string& where, bool flag) {
  const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t most = last - static_cast<std::uint64_t>(replications > 0 ? replications - 1 : 0);
  if (first <= most) return;
  throw InputError({flag ? std::string("--seed") : where, 0, 0}, flag ? "" : "seed",
                   "replication k runs seed " + std::to_string(first) + " + k, and " +
                       std::to_string(replications) + " replications would pass " + std::to_string(last) +
                       " (2^64 - 1): give a seed of at most " + std::to_string(most));
}

/// `s` without leading and trailing blanks and tabs.
inline std::string trim(std::string_view s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string_view::npos) return "";
  const auto b = s.find_last_not_of(" \t");
  return std::string(s.substr(a, b - a + 1));
}

/// Splits at the commas outside [...], {...} and quotes, each part trimmed: "a=1,b={x: 1, y: 2}" gives
/// "a=1" and "b={x: 1, y: 2}" (a YAML value may hold commas). In double quotes a backslash escapes the
/// next character, as in YAML ("a\"b" is one string).
inline std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  bool escaped = false;
  for (char c : text) {
    if (quote != 0) {
      if (escaped)
        escaped = false;
      else if (quote == '"' && c == '\\')
        escaped = true;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(trim(cur));
  return out;
}

/// A Summary as sweep.json and compare.json hold it.
inline nlohmann::ordered_json summary_json(const Summary& s) {
  return {{"mean", s.mean},        {"stddev", s.stddev}, {"min", s.min},           {"p50", s.p50},
          {"p95", s.p95},          {"max", s.max},       {"ci95_low", s.ci95_low}, {"ci95_high", s.ci95_high},
          {"skewness", s.skewness}};
}

/// The inverse of summary_json; min, p50, p95 and max may be missing (0), as in a paired difference, and
/// so may skewness (0), as in files written before the interval corrected for it. Each bad value at its
/// file:line:col; `of_amounts`: a makespan, cost or
/// utilization (every statistic but the interval's ends and the skewness at least 0), not a paired
/// difference.
inline Summary read_summary(const JsonReader& r, const JsonValue& v, const std::string& field,
                            bool of_amounts) {
  r.object(v, field);
  const auto number = [&](const char* key, bool required, bool signed_ok) {
    const JsonValue* x = r.find(v, key);
    if (x == nullptr) {
      if (required) r.get(v, key, field);  // "missing"
      return 0.0;
    }
    const double d = r.number(*x, field + "." + key);
    if (of_amounts && !signed_ok && d < 0)
      r.fail(*x, field + "." + key, "must be at least 0, got " + r.got(*x));
    return d;
  };
  Summary s;
  s.mean = number("mean", true, false);
  s.stddev = number("stddev", true, false);
  if (const JsonValue* x = r.find(v, "stddev"); x != nullptr && s.stddev < 0)
    r.fail(*x, field + ".stddev", "must be at least 0, got " + r.got(*x));
  s.min = number("min", false, false);
  s.p50 = number("p50", false, false);
  s.p95 = number("p95", false, false);
  s.max = number("max", false, false);
  s.ci95_low = number("ci95_low", true, true);
  s.ci95_high = number("ci95_high", true, true);
  s.skewness = number("skewness", false, true);
  return s;
}

/// The fields sweep.json and compare.json both begin with, read into `out` (a SweepResult or a
/// CompareResult).
template <class Result>
void read_run_header(const JsonReader& r, const JsonValue& doc, Result& out) {
  out.scenario = r.string(r.get(doc, "scenario", ""), "scenario");
  out.replications = static_cast<int>(r.integer(r.get(doc, "replications", ""), "replications", 1, 100000));
  out.base_seed = r.unsigned64_at(doc, "base_seed", "");
  const JsonValue& q = r.get(doc, "quantile", "");
  out.quantile = r.number(q, "quantile");
  if (out.quantile <= 0 || out.quantile > 100) r.fail(q, "quantile", "must be in (0, 100], got " + r.got(q));
  if (const JsonValue* v = r.optional(doc, "deadline_s")) {
    out.deadline_s = r.number(*v, "deadline_s");
    if (*out.deadline_s <= 0) r.fail(*v, "deadline_s", "must be more than 0, got " + r.got(*v));
  }
}

/// A configuration's or variant's `quantile_on_failed_run` (object `obj`, field path `p`), read back: it
/// must be what its runs with failed tasks, the replications and the quantile of `res` give (older files
/// have none).
template <class Result>
void check_quantile_on_failed_run(const JsonReader& r, const JsonValue& obj, const std::string& p, int failed,
                                  const Result& res) {
  if (const JsonValue* x = r.optional(obj, "quantile_on_failed_run");
      x && r.boolean(*x, p + ".quantile_on_failed_run") !=
               failures_reach_quantile(failed, res.replications, res.quantile))
    r.fail(*x, p + ".quantile_on_failed_run",
           "does not follow from runs_with_failed_tasks, replications and quantile (" +
               std::to_string(failed) + " of " + std::to_string(res.replications) +
               " runs failed, quantile " + shortest(res.quantile) + ")");
}

}  // namespace shardflow::planner::detail
