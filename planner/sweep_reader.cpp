// read_sweep_json: the inverse of write_sweep_json (planner/sweep.cpp), for `shardflow report DIR` and
// `shardflow merge`. A file someone edited gets each bad value at its file:line:col, with its field.
#include <algorithm>
#include <istream>
#include <limits>
#include <string>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/sweep.hpp>

#include "../core/json_reader.hpp"  // core's reader of the JSON files shardflow writes
#include "planner_text.hpp"

namespace shardflow::planner {

namespace {

using Kind = JsonValue::Kind;

}  // namespace

SweepResult read_sweep_json(std::istream& in, const std::string& file) {
  const std::string text = read_json_input(in, file, "sweep");
  const JsonDocument d = parse_json_input(text, file);
  const JsonReader r(d, text);
  const JsonValue& doc = r.object(d.root(), "the top level");
  SweepResult res;
  detail::read_run_header(r, doc, res);
  if (const JsonValue* v = r.optional(doc, "confidence")) {
    res.confidence = r.number(*v, "confidence");
    if (!(*res.confidence > 0 && *res.confidence < 100))
      r.fail(*v, "confidence", "must be above 0 and below 100, got " + r.got(*v));
  }
  if (const JsonValue* v = r.optional(doc, "budget")) res.budget = r.non_negative(*v, "budget");
  // Written since the Pareto front and the slices (older files have none of these).
  if (const JsonValue* v = r.optional(doc, "inputs_hash")) res.inputs_hash = r.string(*v, "inputs_hash");
  if (const JsonValue* v = r.optional(doc, "search")) {
    const std::string s = r.string(*v, "search");
    if (s != "grid" && s != "auto") r.fail(*v, "search", "expected \"grid\" or \"auto\", got " + r.got(*v));
    if (s == "auto") res.search = Search::automatic;
  }
  if (const JsonValue* v = r.optional(doc, "shard")) {
    r.object(*v, "shard");
    constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
    const JsonValue& count = r.get(*v, "count", "shard");
    const int n = static_cast<int>(r.integer(count, "shard.count", 1, kMaxInt));
    const int i = static_cast<int>(r.integer(r.get(*v, "index", "shard"), "shard.index", 0, kMaxInt));
    if (i >= n) r.fail(*v, "shard", "index must be from 0 to count - 1");
    res.shard = Shard{i, n};
  }
  const JsonValue& dims = r.array(r.get(doc, "dimensions", ""), "dimensions");
  for (std::uint32_t i = 0; i < dims.count; ++i) {
    const std::string p = "dimensions[" + std::to_string(i) + "]";
    const JsonValue& dj = r.object(r.item(dims, i), p);
    res.dimensions.push_back(
        {r.string(r.get(dj, "path", p), p + ".path"), r.strings(r.get(dj, "values", p), p + ".values")});
  }
  const JsonValue& configs = r.array(r.get(doc, "configurations", ""), "configurations");
  for (std::uint32_t i = 0; i < configs.count; ++i) {
    const std::string p = "configurations[" + std::to_string(i) + "]";
    const JsonValue& c = r.object(r.item(configs, i), p);
    ConfigResult cr;
    const JsonValue& values = r.get(c, "values", p);
    cr.values = r.strings(values, p + ".values");
    if (cr.values.size() != res.dimensions.size())
      r.fail(values, p + ".values",
             "has " + std::to_string(cr.values.size()) + " values for " +
                 std::to_string(res.dimensions.size()) +
                 (res.dimensions.size() == 1 ? " dimension" : " dimensions"));
    // A configuration that cannot run: why, and no figures.
    if (const JsonValue* v = r.optional(c, "infeasible")) {
      cr.infeasible = r.string(*v, p + ".infeasible");
      if (cr.infeasible.empty()) r.fail(*v, p + ".infeasible", "must say why it cannot run, got \"\"");
      if (const JsonValue* m = r.optional(c, "meets"); m && r.boolean(*m, p + ".meets"))
        r.fail(*m, p + ".meets", "a configuration that cannot run does not meet the deadline");
      for (std::uint32_t k = 0; k < c.count; ++k)
        if (const std::string_view key = d.key(c, k);
            key != "values" && key != "infeasible" && key != "meets")
          r.fail(d.item(c, k), p + "." + std::string(key),
                 "a configuration that cannot run (its `infeasible`) has no figures: it was not simulated");
      res.configs.push_back(std::move(cr));
      continue;
    }
    cr.makespan_s = detail::read_summary(r, r.get(c, "makespan_s", p), p + ".makespan_s", true);
    cr.quantile_makespan_s = r.non_negative(r.get(c, "quantile_makespan_s", p), p + ".quantile_makespan_s");
    cr.cost = detail::read_summary(r, r.get(c, "cost", p), p + ".cost", true);
    cr.makespan_s.n = cr.cost.n = static_cast<std::size_t>(res.replications);
    // Written since failed runs count as late (older files: their runs' mean, which was the rule then).
    cr.finished_cost_mean = cr.cost.mean;
    if (const JsonValue* v = r.optional(c, "finished_cost_mean"))
      cr.finished_cost_mean = r.non_negative(*v, p + ".finished_cost_mean");
    cr.runs_with_failed_tasks = static_cast<int>(
        r.integer(r.get(c, "runs_with_failed_tasks", p), p + ".runs_with_failed_tasks", 0, res.replications));
    if (const JsonValue* v = r.optional(c, "p_meets_deadline")) {
      cr.p_meets_deadline = r.number(*v, p + ".p_meets_deadline");
      if (cr.p_meets_deadline < 0 || cr.p_meets_deadline > 1)
        r.fail(*v, p + ".p_meets_deadline", "must be from 0 to 1, got " + r.got(*v));
    }
    if (const JsonValue* v = r.optional(c, "meets")) cr.meets = r.boolean(*v, p + ".meets");
    detail::check_quantile_on_failed_run(r, c, p, cr.runs_with_failed_tasks, res);
    if (const JsonValue* v = r.optional(c, "critical_path_s"))
      cr.critical_path_s = r.non_negative(*v, p + ".critical_path_s");
    if (const JsonValue* v = r.optional(c, "no_limit")) {
      const JsonValue& flags = r.array(*v, p + ".no_limit");
      if (flags.count != res.dimensions.size())
        r.fail(*v, p + ".no_limit",
               "has " + std::to_string(flags.count) + " values for " + std::to_string(res.dimensions.size()) +
                   (res.dimensions.size() == 1 ? " dimension" : " dimensions"));
      for (std::uint32_t f = 0; f < flags.count; ++f)
        cr.no_limit.push_back(r.boolean(r.item(flags, f), p + ".no_limit[" + std::to_string(f) + "]"));
    }
    res.configs.push_back(std::move(cr));
  }
  res.configurations_in_space = res.configs.size();
  if (const JsonValue* v = r.optional(doc, "configurations_in_space"))
    res.configurations_in_space = r.unsigned64(*v, "configurations_in_space");
  res.simulations =
      static_cast<std::uint64_t>(res.configs.size()) * static_cast<std::uint64_t>(res.replications);
  if (const JsonValue* v = r.optional(doc, "simulations")) res.simulations = r.unsigned64(*v, "simulations");
  finish_sweep(res);  // the Pareto front and the nearest configuration follow from the configurations
  res.recommended.reset();
  if (const JsonValue& rec = r.get(doc, "recommended", ""); rec.kind != Kind::null) {
    res.recommended = static_cast<std::size_t>(r.unsigned64(rec, "recommended"));
    if (*res.recommended >= res.configs.size())
      r.fail(rec, "recommended",
             "is not an index into configurations (there are " + std::to_string(res.configs.size()) +
                 "), got " + r.got(rec));
    if (!res.configs[*res.recommended].infeasible.empty())
      r.fail(rec, "recommended", "configuration " + r.got(rec) + " cannot run (its `infeasible`)");
  }
  return res;
}

}  // namespace shardflow::planner
