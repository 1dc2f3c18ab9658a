// compare's files: the variants file it reads, and compare.json / compare.csv it writes (and reads back
// for `shardflow report DIR`). The JSON schema is docs/compare-format.md.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>

#include "planner_text.hpp"
#include "variant_name.hpp"

namespace shardflow::planner {

void check_variant_name(const std::string& name, const SourceLocation& where, const std::string& field) {
  if (name.empty()) throw InputError(where, field, "the variant has no name");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw InputError(where, field,
                       "\"" + name + "\": a variant's name is letters, digits, '-', '_' and '.' only");
  // It names a directory (compare --backend local's command logs): "." and ".." are not theirs to take.
  if (name.find_first_not_of('.') == std::string::npos)
    throw InputError(where, field, "\"" + name + "\": a variant's name is not dots alone");
}

namespace {

SourceLocation at(const YAML::Node& n, const std::string& file) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

std::string flow_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

}  // namespace

std::vector<Variant> read_variants_text(const std::string& yaml, const std::string& file,
                                        const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(at(root, file), "variants", "the file needs a `variants:` list");
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it->first.Scalar() != "variants")
      throw InputError(at(it->first, file), it->first.Scalar(),
                       "unknown key; a variants file has `variants:` only");
  if (!root["variants"]) throw InputError(at(root, file), "variants", "the file needs a `variants:` list");
  const YAML::Node list = root["variants"];
  if (!list.IsSequence())
    throw InputError(at(list, file), "variants", "must be a list of variants, each {name, set, overlay}");
  if (list.size() == 0)
    throw InputError(at(list, file), "variants",
                     "is empty: list the variants to compare, each {name, set, overlay}, the baseline first");
  std::vector<Variant> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string field = "variants[" + std::to_string(i) + "]";
    if (!item.IsMap()) throw InputError(at(item, file), field, "must be a mapping {name, set, overlay}");
    Variant v;
    v.where = at(item, file);
    for (auto it = item.begin(); it != item.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node value = it->second;
      if (key == "name") {
        if (!value.IsScalar()) throw InputError(at(value, file), field + ".name", "must be a name");
        v.name = value.Scalar();
        check_variant_name(v.name, at(value, file), field + ".name");
      } else if (key == "set") {
        if (value.IsNull()) continue;
        if (!value.IsMap())
          throw InputError(at(value, file), field + ".set",
                           "must be a mapping of PATH: VALUE, as in {cluster.node_pools[cpu].count: 20}");
        for (auto s = value.begin(); s != value.end(); ++s) {
          if (!s->first.IsScalar() || s->first.Scalar().empty())
            throw InputError(at(s->first, file), field + ".set", "a key must be a PATH as for --set");
          if (s->second.IsNull())
            throw InputError(at(s->first, file), field + ".set." + s->first.Scalar(), "has no value");
          v.sets.push_back(s->first.Scalar() + "=" + flow_text(s->second));
          v.set_where.push_back(at(s->first, file));
          v.set_value_where.push_back(at(s->second, file));
        }
      } else if (key == "overlay") {
        if (!value.IsScalar() || value.Scalar().empty())
          throw InputError(at(value, file), field + ".overlay", "must be a file name");
        const std::filesystem::path p = std::filesystem::path(value.Scalar()).is_absolute()
                                            ? std::filesystem::path(value.Scalar())
                                            : std::filesystem::path(base_dir) / value.Scalar();
        // Read as --overlay reads its file: a directory, a device or a FIFO is refused, not read as empty
        // (or waited on).
        try {
          v.overlays.push_back({p.string(), read_scenario_file(p.string())});
          // Shown as the file gives it (relative to the variants file), whatever directory compare runs in.
          v.overlays_given.push_back(value.Scalar());
        } catch (const InputError& e) {
          throw InputError(at(value, file), field + ".overlay", p.string() + ": " + e.message());
        }
      } else {
        throw InputError(at(it->first, file), field + "." + key,
                         "unknown key; a variant has name, set and overlay");
      }
    }
    if (v.name.empty()) throw InputError(v.where, field + ".name", "every variant needs a name");
    for (const Variant& o : out)
      if (o.name == v.name)
        throw InputError(at(item["name"], file), field + ".name",
                         "variant name \"" + v.name + "\" is given twice");
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<Variant> read_variants_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError({"--variants " + path, 0, 0}, "",
                     "is a directory; name a variants file in it (YAML with a `variants:` list)");
  // /dev/zero and the like never end.
  if (std::filesystem::is_character_file(path, ec) || std::filesystem::is_block_file(path, ec))
    throw InputError({"--variants " + path, 0, 0}, "", "is a device, not a variants file");
  std::ifstream in(path);
  if (!in)
    throw InputError({"--variants " + path, 0, 0}, "",
                     "cannot open the file (it does not exist or is not readable)");
  std::ostringstream text;
  text << in.rdbuf();
  return read_variants_text(text.str(), path, std::filesystem::path(path).parent_path().string());
}

namespace {

using ojson = nlohmann::ordered_json;

using detail::summary_json;

ojson diff_json(const Summary& s) {
  return {{"mean", s.mean},
          {"stddev", s.stddev},
          {"ci95_low", s.ci95_low},
          {"ci95_high", s.ci95_high},
          {"skewness", s.skewness},
          {"significant", significant(s)},
          {"pairs", s.n}};
}

ojson index_or_null(const std::optional<std::size_t>& i) {
  return i ? ojson(*i) : ojson(nullptr);
}

}  // namespace

void write_compare_json(std::ostream& out, const CompareResult& r) {
  ojson j;
  j["kind"] = "compare";
  j["scenario"] = r.scenario;
  j["replications"] = r.replications;
  j["base_seed"] = r.base_seed;
  j["quantile"] = r.quantile;
  if (r.deadline_s) j["deadline_s"] = *r.deadline_s;
  j["baseline"] = r.variants.empty() ? "" : r.variants.front().name;
  auto& vs = j["variants"] = ojson::array();
  for (const VariantResult& v : r.variants) {
    ojson vj;
    vj["name"] = v.name;
    vj["set"] = v.sets;
    if (!v.overlays.empty()) vj["overlay"] = v.overlays;
    vj["makespan_s"] = summary_json(v.makespan_s);
    vj["quantile_makespan_s"] = v.quantile_makespan_s;
    vj["cost"] = summary_json(v.cost);
    vj["finished_cost_mean"] = v.finished_cost_mean;
    vj["cpu_utilization"] = summary_json(v.cpu_utilization);
    vj["runs_with_failed_tasks"] = v.runs_with_failed_tasks;
    // The quantile is then a failed run's (ranked last): no makespan, whatever quantile_makespan_s says.
    vj["quantile_on_failed_run"] =
        failures_reach_quantile(v.runs_with_failed_tasks, r.replications, r.quantile);
    if (r.deadline_s) {
      vj["p_meets_deadline"] = v.p_meets_deadline;
      const ShareInterval ci = detail::share_interval(v.p_meets_deadline, r.replications);
      vj["p_meets_deadline_ci95"] = {ci.low, ci.high};
      vj["meets"] = v.meets;
    }
    vj["diff_makespan_s"] = diff_json(v.diff_makespan_s);
    vj["diff_cost"] = diff_json(v.diff_cost);
    auto& runs = vj["runs"] = ojson::array();
    for (const CompareRun& run : v.runs)
      runs.push_back({{"seed", run.seed},
                      {"makespan_s", run.makespan_s},
                      {"cost", run.cost},
                      {"cpu_utilization", run.cpu_utilization},
                      {"failed", run.failed}});
    if (v.measured) {
      const Measurement& m = *v.measured;
      vj["measured"] = {{"backend", m.backend},
                        {"seeds", m.seeds},
                        {"measured_makespan_s", m.measured_makespan_s},
                        {"predicted_makespan_s", m.predicted_makespan_s},
                        {"measured_tasks_failed", m.measured_tasks_failed},
                        {"measured_mean_s", m.measured_mean()},
                        {"predicted_mean_s", m.predicted_mean()}};
    }
    vs.push_back(std::move(vj));
  }
  j["fastest"] = index_or_null(r.fastest);
  j["cheapest"] = index_or_null(r.cheapest);
  j["recommended"] = index_or_null(r.recommended);
  out << j.dump(2) << "\n";
}

CompareResult read_compare_json(std::istream& in, const std::string& file) {
  using detail::read_summary;
  const std::string text = read_json_input(in, file, "comparison");
  const JsonDocument d = parse_json_input(text, file);
  const JsonReader r(d, text);
  const JsonValue& doc = r.object(d.root(), "the top level");
  // `compare` writes kind "compare"; a file without it is read on (older ones have none).
  if (const JsonValue* kind = r.optional(doc, "kind");
      kind != nullptr && r.string(*kind, "kind") != "compare")
    r.fail(*kind, "kind",
           "expected \"compare\" (a comparison's result, as `shardflow compare` writes it), got " +
               r.got(*kind));
  CompareResult res;
  detail::read_run_header(r, doc, res);
  const JsonValue& variants = r.array(r.get(doc, "variants", ""), "variants");
  for (std::uint32_t i = 0; i < variants.count; ++i) {
    const std::string p = "variants[" + std::to_string(i) + "]";
    const JsonValue& vj = r.object(r.item(variants, i), p);
    VariantResult v;
    v.name = r.string(r.get(vj, "name", p), p + ".name");
    v.sets = r.strings(r.get(vj, "set", p), p + ".set");
    if (const JsonValue* o = r.optional(vj, "overlay")) v.overlays = r.strings(*o, p + ".overlay");
    v.makespan_s = read_summary(r, r.get(vj, "makespan_s", p), p + ".makespan_s", true);
    v.quantile_makespan_s = r.non_negative(r.get(vj, "quantile_makespan_s", p), p + ".quantile_makespan_s");
    v.cost = read_summary(r, r.get(vj, "cost", p), p + ".cost", true);
    v.cpu_utilization = read_summary(r, r.get(vj, "cpu_utilization", p), p + ".cpu_utilization", true);
    v.runs_with_failed_tasks = static_cast<int>(r.integer(
        r.get(vj, "runs_with_failed_tasks", p), p + ".runs_with_failed_tasks", 0, res.replications));
    detail::check_quantile_on_failed_run(r, vj, p, v.runs_with_failed_tasks, res);
    if (const JsonValue* x = r.optional(vj, "p_meets_deadline")) {
      v.p_meets_deadline = r.number(*x, p + ".p_meets_deadline");
      if (v.p_meets_deadline < 0 || v.p_meets_deadline > 1)
        r.fail(*x, p + ".p_meets_deadline", "must be from 0 to 1, got " + r.got(*x));
    }
    if (const JsonValue* x = r.optional(vj, "meets")) v.meets = r.boolean(*x, p + ".meets");
    v.diff_makespan_s = read_summary(r, r.get(vj, "diff_makespan_s", p), p + ".diff_makespan_s", false);
    v.diff_cost = read_summary(r, r.get(vj, "diff_cost", p), p + ".diff_cost", false);
    for (Summary* x : {&v.makespan_s, &v.cost, &v.cpu_utilization, &v.diff_makespan_s, &v.diff_cost})
      x->n = static_cast<std::size_t>(res.replications);
    // Written since differences leave out seeds with failed tasks (older files paired every seed).
    for (const auto& [diff, key] :
         {std::pair{&v.diff_makespan_s, "diff_makespan_s"}, {&v.diff_cost, "diff_cost"}})
      if (const JsonValue* n = r.find(r.get(vj, key, p), "pairs"))
        diff->n = static_cast<std::size_t>(r.integer(*n, p + "." + key + ".pairs", 0, res.replications));
    v.finished_cost_mean = v.cost.mean;
    if (const JsonValue* x = r.optional(vj, "finished_cost_mean"))
      v.finished_cost_mean = r.non_negative(*x, p + ".finished_cost_mean");
    const JsonValue& runs = r.array(r.get(vj, "runs", p), p + ".runs");
    for (std::uint32_t k = 0; k < runs.count; ++k) {
      const std::string q = p + ".runs[" + std::to_string(k) + "]";
      const JsonValue& run = r.object(r.item(runs, k), q);
      v.runs.push_back({r.unsigned64_at(run, "seed", q),
                        r.non_negative(r.get(run, "makespan_s", q), q + ".makespan_s"),
                        r.non_negative(r.get(run, "cost", q), q + ".cost"),
                        r.non_negative(r.get(run, "cpu_utilization", q), q + ".cpu_utilization"),
                        r.boolean(r.get(run, "failed", q), q + ".failed")});
    }
    // The figures above follow from the runs: a file edited into disagreeing with itself is refused.
    if (runs.count != static_cast<std::uint32_t>(res.replications))
      r.fail(runs, p + ".runs",
             "has " + std::to_string(runs.count) + " runs for " + std::to_string(res.replications) +
                 " replications");
    const auto failed_runs = static_cast<int>(
        std::count_if(v.runs.begin(), v.runs.end(), [](const CompareRun& run) { return run.failed; }));
    if (failed_runs != v.runs_with_failed_tasks)
      r.fail(r.get(vj, "runs_with_failed_tasks", p), p + ".runs_with_failed_tasks",
             "does not follow from the runs (" + std::to_string(failed_runs) + " of them failed)");
    if (const JsonValue* mj = r.optional(vj, "measured")) {
      const std::string q = p + ".measured";
      r.object(*mj, q);
      Measurement m;
      m.backend = r.string(r.get(*mj, "backend", q), q + ".backend");
      const JsonValue& seeds = r.array(r.get(*mj, "seeds", q), q + ".seeds");
      for (std::uint32_t k = 0; k < seeds.count; ++k)
        m.seeds.push_back(r.unsigned64(r.item(seeds, k), q + ".seeds[" + std::to_string(k) + "]"));
      // One value per seed: `read` turns each item into what `to` holds.
      const auto per_seed = [&](const JsonValue& xs, const std::string& f, auto& to, auto read) {
        r.array(xs, f);
        if (xs.count != seeds.count)
          r.fail(xs, f,
                 "has " + std::to_string(xs.count) + " values for " + std::to_string(seeds.count) + " seeds");
        for (std::uint32_t k = 0; k < xs.count; ++k)
          to.push_back(read(r.item(xs, k), f + "[" + std::to_string(k) + "]"));
      };
      const auto number = [&](const JsonValue& x, const std::string& f) { return r.non_negative(x, f); };
      for (auto [key, to] : {std::pair{"measured_makespan_s", &m.measured_makespan_s},
                             std::pair{"predicted_makespan_s", &m.predicted_makespan_s}})
        per_seed(r.get(*mj, key, q), q + "." + key, *to, number);
      // Written since the runs' failures were kept; an older file's runs count as without failures.
      if (const JsonValue* fj = r.optional(*mj, "measured_tasks_failed"))
        per_seed(*fj, q + ".measured_tasks_failed", m.measured_tasks_failed,
                 [&](const JsonValue& x, const std::string& f) { return r.unsigned64(x, f); });
      else
        m.measured_tasks_failed.assign(m.seeds.size(), 0);
      v.measured = std::move(m);
    }
    res.variants.push_back(std::move(v));
  }
  // `why_not` says why variant i cannot be the one named (empty: it can).
  const auto index = [&](const char* key, const auto& why_not) -> std::optional<std::size_t> {
    const JsonValue& x = r.get(doc, key, "");
    if (x.kind == JsonValue::Kind::null) return std::nullopt;
    const auto i = static_cast<std::size_t>(r.unsigned64(x, key));
    if (i >= res.variants.size())
      r.fail(x, key,
             "is not an index into variants (there are " + std::to_string(res.variants.size()) + "), got " +
                 r.got(x));
    if (const std::string why = why_not(res.variants[i]); !why.empty())
      r.fail(x, key, "is variant " + std::to_string(i) + " (" + res.variants[i].name + "), " + why);
    return i;
  };
  const auto no_failed_runs = [](const VariantResult& v) {
    return v.runs_with_failed_tasks == 0
               ? std::string()
               : "which has runs whose tasks failed (only variants without are named)";
  };
  res.fastest = index("fastest", no_failed_runs);
  res.cheapest = index("cheapest", no_failed_runs);
  res.recommended = index("recommended", [&](const VariantResult& v) {
    return !res.deadline_s ? "but there is no deadline"
           : v.meets       ? std::string()
                           : "which does not meet the deadline";
  });
  return res;
}

namespace {

// A variant's overlays and sets, '; '-separated, each with its '\\' and ';' escaped by a '\\' so that a
// value holding "; " does not read as two changes.
std::string csv_changes(const VariantResult& v) {
  std::string out;
  const auto add = [&](const std::string& text) {
    if (!out.empty()) out += "; ";
    for (const char c : text) {
      if (c == '\\' || c == ';') out += '\\';
      out += c;
    }
  };
  for (const std::string& o : v.overlays) add("overlay " + o);
  for (const std::string& s : v.sets) add(s);
  return out;
}

}  // namespace

void write_compare_csv(std::ostream& out, const CompareResult& r) {
  const auto csv_text = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  out << "variant,set,makespan_mean_s,makespan_ci95_low_s,makespan_ci95_high_s,makespan_p50_s,makespan_p95_s,"
         "cost_mean,cost_ci95_low,cost_ci95_high,cost_p50,cost_p95,cpu_utilization_mean,runs_with_failed_"
         "tasks,"
         "diff_makespan_mean_s,diff_makespan_ci95_low_s,diff_makespan_ci95_high_s,diff_makespan_significant,"
         "diff_cost_mean,diff_cost_ci95_low,diff_cost_ci95_high,diff_cost_significant,meets,recommended,"
         "measured_mean_s,predicted_mean_s,makespan_quantile_s,measured_runs_with_failed_tasks,"
         "finished_cost_mean,diff_pairs,p_meets_deadline,p_meets_deadline_ci95_low,p_meets_deadline_ci95_"
         "high,quantile_on_failed_run\n";
  // Each figure as compare.json has it: the shortest text that reads back to the same double (the
  // stream's default 6 significant digits cut 6035.005025 to 6035.01, past a deadline of 6035.006 s).
  const auto num = detail::shortest;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const VariantResult& v = r.variants[i];
    out << csv_text(v.name) << ',' << csv_text(csv_changes(v)) << ',' << num(v.makespan_s.mean) << ','
        << num(v.makespan_s.ci95_low) << ',' << num(v.makespan_s.ci95_high) << ',' << num(v.makespan_s.p50)
        << ',' << num(v.makespan_s.p95) << ',' << num(v.cost.mean) << ',' << num(v.cost.ci95_low) << ','
        << num(v.cost.ci95_high) << ',' << num(v.cost.p50) << ',' << num(v.cost.p95) << ','
        << num(v.cpu_utilization.mean) << ',' << v.runs_with_failed_tasks << ','
        << num(v.diff_makespan_s.mean) << ',' << num(v.diff_makespan_s.ci95_low) << ','
        << num(v.diff_makespan_s.ci95_high) << ',' << (significant(v.diff_makespan_s) ? "true" : "false")
        << ',' << num(v.diff_cost.mean) << ',' << num(v.diff_cost.ci95_low) << ','
        << num(v.diff_cost.ci95_high) << ',' << (significant(v.diff_cost) ? "true" : "false") << ','
        << (r.deadline_s ? (v.meets ? "true" : "false") : "") << ','
        << (r.recommended == i ? "true" : "false") << ',';
    if (v.measured)
      out << num(v.measured->measured_mean()) << ',' << num(v.measured->predicted_mean());
    else
      out << ',';
    out << ',' << num(v.quantile_makespan_s) << ',';
    if (v.measured) out << v.measured->runs_with_failed_tasks();
    out << ',' << num(v.finished_cost_mean) << ',' << v.diff_makespan_s.n << ',';
    if (r.deadline_s) {
      const ShareInterval ci = detail::share_interval(v.p_meets_deadline, r.replications);
      out << num(v.p_meets_deadline) << ',' << num(ci.low) << ',' << num(ci.high);
    } else {
      out << ",,";
    }
    out << ','
        << (failures_reach_quantile(v.runs_with_failed_tasks, r.replications, r.quantile) ? "true" : "false")
        << '\n';
  }
}

}  // namespace shardflow::planner
