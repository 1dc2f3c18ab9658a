// read_sweep_json: the inverse of write_sweep_json (planner/sweep.cpp), for `shardflow report DIR`.
#include <algorithm>
#include <istream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/sweep.hpp>

#include "planner_text.hpp"

namespace shardflow::planner {

namespace {

using nlohmann::json;

using detail::read_summary;

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
    // Written since the Pareto front and the slices (older files have none of these).
    r.inputs_hash = j.value("inputs_hash", std::string());
    if (j.value("search", std::string("grid")) == "auto") r.search = Search::automatic;
    if (j.contains("shard")) {
      r.shard = Shard{j.at("shard").at("index").get<int>(), j.at("shard").at("count").get<int>()};
      if (r.shard->count < 1 || r.shard->index < 0 || r.shard->index >= r.shard->count)
        throw InputError({file, 0, 0}, "shard", "index must be from 0 to count - 1");
    }
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
    r.configurations_in_space = j.value("configurations_in_space", r.configs.size());
    r.simulations = j.value("simulations", static_cast<std::uint64_t>(r.configs.size()) *
                                               static_cast<std::uint64_t>(std::max(0, r.replications)));
    for (const ConfigResult& c : r.configs)
      if (c.values.size() != r.dimensions.size())
        throw InputError({file, 0, 0}, "configurations",
                         "a configuration's values do not match the dimensions");
    finish_sweep(r);  // the Pareto front and the nearest configuration follow from the configurations
    r.recommended.reset();
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
