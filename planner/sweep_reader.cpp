// read_sweep_json: the inverse of write_sweep_json (planner/sweep.cpp), for `shardflow report DIR`.
#include <istream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::planner {

namespace {

using nlohmann::json;

Summary read_summary(const json& j) {
  Summary s;
  s.mean = j.at("mean").get<double>();
  s.stddev = j.at("stddev").get<double>();
  s.min = j.at("min").get<double>();
  s.p50 = j.at("p50").get<double>();
  s.p95 = j.at("p95").get<double>();
  s.max = j.at("max").get<double>();
  s.ci95_low = j.at("ci95_low").get<double>();
  s.ci95_high = j.at("ci95_high").get<double>();
  return s;
}

}  // namespace

SweepResult read_sweep_json(std::istream& in, const std::string& file) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError({file, 0, 0}, "", "cannot read the sweep");
  // nlohmann's messages name the key or the byte ("key 'cost' not found", "type must be number, but is
  // string"): enough for a file that shardflow wrote and someone edited.
  try {
    const json j = json::parse(text);
    SweepResult r;
    r.scenario = j.at("scenario").get<std::string>();
    r.replications = j.at("replications").get<int>();
    r.base_seed = j.at("base_seed").get<std::uint64_t>();
    r.quantile = j.at("quantile").get<double>();
    if (j.contains("deadline_s")) r.deadline_s = j.at("deadline_s").get<double>();
    for (const json& d : j.at("dimensions"))
      r.dimensions.push_back(
          {d.at("path").get<std::string>(), d.at("values").get<std::vector<std::string>>()});
    for (const json& c : j.at("configurations")) {
      ConfigResult cr;
      cr.values = c.at("values").get<std::vector<std::string>>();
      cr.makespan_s = read_summary(c.at("makespan_s"));
      cr.quantile_makespan_s = c.at("quantile_makespan_s").get<double>();
      cr.cost = read_summary(c.at("cost"));
      cr.runs_with_failed_tasks = c.at("runs_with_failed_tasks").get<int>();
      cr.p_meets_deadline = c.value("p_meets_deadline", 0.0);
      cr.meets = c.value("meets", false);
      r.configs.push_back(std::move(cr));
    }
    if (const json& rec = j.at("recommended"); !rec.is_null()) {
      r.recommended = rec.get<std::size_t>();
      if (*r.recommended >= r.configs.size())
        throw InputError({file, 0, 0}, "recommended", "is not an index into configurations");
    }
    return r;
  } catch (const json::exception& e) {
    throw InputError({file, 0, 0}, "", std::string("not a sweep.json: ") + e.what());
  }
}

}  // namespace shardflow::planner
