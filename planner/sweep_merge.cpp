// merge_sweeps: the slices of one sweep (`sweep --shard I/N`) back into the whole (`shardflow merge`).
#include <string>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::planner {

namespace {

std::string dims_text(const std::vector<Dimension>& dims) {
  std::string s;
  for (const Dimension& d : dims) {
    s += (s.empty() ? "" : " ") + d.path + "=";
    for (std::size_t i = 0; i < d.values.size(); ++i) s += (i ? "," : "") + d.values[i];
  }
  return s;
}

std::string num(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

SweepResult merge_sweeps(const std::vector<SweepResult>& slices, const std::vector<std::string>& files) {
  if (slices.empty()) throw InputError({}, "merge", "no slices to merge");
  const SweepResult& first = slices.front();
  const auto differs = [&](std::size_t i, const std::string& field, const std::string& mine,
                           const std::string& theirs) {
    return InputError(
        {files[i], 0, 0}, field,
        "is " + mine + " here but " + theirs + " in " + files[0] + ": these are not slices of one sweep");
  };
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const SweepResult& s = slices[i];
    if (!s.shard)
      throw InputError({files[i], 0, 0}, "shard",
                       "missing: not a slice (run `shardflow sweep ... --shard I/N` for each slice)");
    if (i == 0) continue;
    if (s.inputs_hash != first.inputs_hash)
      throw differs(i, "inputs_hash", s.inputs_hash,
                    first.inputs_hash +
                        " (the scenario text, an overlay, a --set, --cluster or "
                        "--param differ, or --cluster local was run on machines of different CPUs or "
                        "memory)");
    if (s.scenario != first.scenario)
      throw differs(i, "scenario", shortened(s.scenario), shortened(first.scenario));
    if (s.dimensions.size() != first.dimensions.size() ||
        dims_text(s.dimensions) != dims_text(first.dimensions))
      throw differs(i, "dimensions", "\"" + shortened(dims_text(s.dimensions)) + "\"",
                    "\"" + shortened(dims_text(first.dimensions)) + "\"");
    for (std::size_t d = 0; d < s.dimensions.size(); ++d)
      if (s.dimensions[d].path != first.dimensions[d].path ||
          s.dimensions[d].values != first.dimensions[d].values)
        throw differs(i, "dimensions", "\"" + shortened(dims_text(s.dimensions)) + "\"",
                      "\"" + shortened(dims_text(first.dimensions)) + "\"");
    if (s.replications != first.replications)
      throw differs(i, "replications", std::to_string(s.replications), std::to_string(first.replications));
    if (s.base_seed != first.base_seed)
      throw differs(i, "base_seed", std::to_string(s.base_seed), std::to_string(first.base_seed));
    if (s.quantile != first.quantile) throw differs(i, "quantile", num(s.quantile), num(first.quantile));
    if (s.confidence != first.confidence)
      throw differs(i, "confidence", s.confidence ? num(*s.confidence) : "none",
                    first.confidence ? num(*first.confidence) : "none");
    if (s.budget != first.budget)
      throw differs(i, "budget", s.budget ? num(*s.budget) : "none",
                    first.budget ? num(*first.budget) : "none");
    if (s.deadline_s != first.deadline_s)
      throw differs(i, "deadline_s", s.deadline_s ? num(*s.deadline_s) : "none",
                    first.deadline_s ? num(*first.deadline_s) : "none");
    if (s.shard->count != first.shard->count)
      throw differs(i, "shard", "a slice of " + std::to_string(s.shard->count),
                    "a slice of " + std::to_string(first.shard->count));
  }
  const auto n = static_cast<std::size_t>(first.shard->count);
  std::vector<const SweepResult*> by_index(n, nullptr);
  std::vector<std::size_t> file_of(n, 0);
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const auto k = static_cast<std::size_t>(slices[i].shard->index);
    if (by_index[k] != nullptr && files[file_of[k]] == files[i])
      throw InputError({files[i], 0, 0}, "", "given twice: name each slice's directory once");
    if (by_index[k] != nullptr)
      throw InputError({files[i], 0, 0}, "shard",
                       "slice " + std::to_string(k) + "/" + std::to_string(n) + " again (also in " +
                           files[file_of[k]] + ")");
    by_index[k] = &slices[i];
    file_of[k] = i;
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (by_index[k] != nullptr) continue;
    // No file is at fault: the merge is, so it names the slices it was given.
    std::string given;
    for (std::size_t j = 0; j < n; ++j)
      if (by_index[j] != nullptr)
        given += (given.empty() ? "" : ", ") + std::to_string(j) + "/" + std::to_string(n) + " in " +
                 files[file_of[j]];
    throw InputError({}, "merge",
                     "slice " + std::to_string(k) + "/" + std::to_string(n) +
                         " is missing: give every slice (given: " + given + ")");
  }

  SweepResult r = first;
  r.shard.reset();
  r.configs.clear();
  r.simulations = 0;
  const std::size_t total = first.configurations_in_space;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t expect = total / n + (k < total % n ? 1 : 0);  // configurations k, k+n, ...
    if (by_index[k]->configs.size() != expect || by_index[k]->configurations_in_space != total)
      throw InputError({files[file_of[k]], 0, 0}, "configurations",
                       "holds " + std::to_string(by_index[k]->configs.size()) + " configurations, slice " +
                           std::to_string(k) + "/" + std::to_string(n) + " of " + std::to_string(total) +
                           " has " + std::to_string(expect));
    r.simulations += by_index[k]->simulations;
  }
  for (std::size_t c = 0; c < total; ++c) {
    // Configuration c of the grid has these values (the last dimension fastest, as the sweep makes them):
    // a slice edited or mixed up by hand says so rather than put a row under another configuration's name.
    const ConfigResult& cr = by_index[c % n]->configs[c / n];
    std::size_t rest = c;
    for (std::size_t d = first.dimensions.size(); d-- > 0;) {
      const std::vector<std::string>& vals = first.dimensions[d].values;
      const std::string& want = vals[rest % vals.size()];
      rest /= vals.size();
      if (d >= cr.values.size() || cr.values[d] != want)
        throw InputError({files[file_of[c % n]], 0, 0},
                         "configurations[" + std::to_string(c / n) + "].values[" + std::to_string(d) + "]",
                         (d < cr.values.size() ? "\"" + cr.values[d] + "\"" : std::string("nothing")) +
                             " is not the value of configuration " + std::to_string(c) + " of the sweep (" +
                             first.dimensions[d].path + "=" + want + ")");
    }
    r.configs.push_back(cr);
  }
  finish_sweep(r);
  return r;
}

}  // namespace shardflow::planner
