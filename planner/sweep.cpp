#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iomanip>
#include <mutex>
#include <numeric>
#include <ostream>

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/planner/sweep.hpp>
#include <shardflow/sim/simulator.hpp>

namespace shardflow::planner {

namespace {

std::string trim(std::string s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

// Two-sided 95% Student-t critical values t_{0.975, df} for df = 1..30.
constexpr double kT975[] = {12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
                            2.262157,  2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
                            2.109816,  2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
                            2.059539,  2.055529, 2.051831, 2.048407, 2.045230, 2.042272};

double t975(int df) {
  if (df <= 30) return kT975[df - 1];
  // Cornish-Fisher expansion around the normal quantile: within 1e-4 of the exact value for df > 30.
  const double z = 1.959963985;
  const double n = df;
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

std::string assignment_text(const std::vector<Dimension>& dims, const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t d = 0; d < dims.size(); ++d) out += (d ? ", " : "") + dims[d].path + "=" + values[d];
  return out;
}

}  // namespace

Dimension parse_dimension(const std::string& text) {
  const SourceLocation where{"--vary " + text, 0, 0};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(where, "", "expected PATH=V1,V2,..., as in cluster.node_pools[cpu].count=10,20,40");
  Dimension d;
  d.path = trim(text.substr(0, eq));
  std::string cur;
  int depth = 0;
  char quote = 0;
  const std::string values = text.substr(eq + 1);
  for (char c : values) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      d.values.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  d.values.push_back(trim(cur));
  for (std::size_t i = 0; i < d.values.size(); ++i)
    if (d.values[i].empty())
      throw InputError(
          where, d.path,
          "value " + std::to_string(i + 1) + " of " + std::to_string(d.values.size()) + " is empty");
  return d;
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  if (values.empty()) return s;
  const auto n = static_cast<double>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.stddev = values.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  s.p50 = percentile(values, 50);
  s.p95 = percentile(values, 95);
  const double half =
      values.size() > 1 ? t975(static_cast<int>(values.size()) - 1) * s.stddev / std::sqrt(n) : 0;
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  return s;
}

SweepResult run_sweep_text(const std::string& yaml, const std::string& file, const SweepSpec& spec,
                           const std::function<void(double)>& progress, const BackendFactory& backend) {
  if (spec.replications < 1 || spec.replications > 100000)
    throw InputError({"--replications", 0, 0}, "",
                     "must be from 1 to 100000, got " + std::to_string(spec.replications));
  if (spec.quantile <= 0 || spec.quantile > 100)
    throw InputError({"--quantile", 0, 0}, "", "must be in (0, 100]");
  SweepResult result;
  result.dimensions = spec.dimensions;
  result.replications = spec.replications;
  result.deadline_s = spec.deadline_s;
  result.quantile = spec.quantile;

  // Count before making them: a few long --vary lists multiply quickly.
  std::uint64_t count = 1;
  for (const Dimension& d : spec.dimensions) {
    count *= d.values.size();
    if (count * static_cast<std::uint64_t>(spec.replications) > 10'000'000)
      throw InputError({"--vary", 0, 0}, "",
                       "the combinations of the values times " + std::to_string(spec.replications) +
                           " replications make more than 10,000,000 runs");
  }
  // Every combination, the last dimension fastest.
  std::vector<std::vector<std::string>> combos(1);
  for (const Dimension& d : spec.dimensions) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : combos)
      for (const std::string& v : d.values) {
        next.push_back(c);
        next.back().push_back(v);
      }
    combos.swap(next);
  }

  // Load and unroll every configuration (in parallel: parsing is a good part of a small sweep), then
  // report the first bad one in order, whatever thread met it.
  std::vector<Scenario> scenarios(combos.size());
  std::vector<Plan> plans(combos.size());
  std::vector<std::exception_ptr> errors(combos.size());
  tbb::parallel_for(std::size_t{0}, combos.size(), [&](std::size_t k) {
    try {
      LoadOptions options;
      options.overlays = spec.overlays;
      options.sets = spec.sets;
      options.cluster = spec.cluster;
      options.params = spec.params;
      for (std::size_t d = 0; d < combos[k].size(); ++d)
        options.sets.push_back(spec.dimensions[d].path + "=" + combos[k][d]);
      scenarios[k] = load_scenario_text(yaml, file, options);
      plans[k] = Plan::unroll(scenarios[k].pipeline);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  result.scenario = scenarios.front().name;
  result.base_seed = spec.base_seed.value_or(scenarios.front().seed);

  const std::size_t runs = combos.size() * static_cast<std::size_t>(spec.replications);
  std::vector<double> makespan(runs), cost(runs);
  std::vector<std::uint8_t> failed(runs);
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  const BackendFactory make = backend ? backend : [] { return sim::make_backend(); };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, runs),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      const std::unique_ptr<Backend> b = make();
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        const std::size_t c = i / static_cast<std::size_t>(spec.replications);
                        const std::uint64_t r = i % static_cast<std::size_t>(spec.replications);
                        RunOptions o;
                        o.seed = result.base_seed + r;
                        const Trace t = b->run(scenarios[c], plans[c], o);
                        makespan[i] = makespan_s(t);
                        cost[i] = shardflow::cost(t);
                        failed[i] = t.tasks_failed > 0 ? 1 : 0;
                        const std::size_t k = ++done;
                        if (progress && (k % std::max<std::size_t>(1, runs / 100) == 0 || k == runs)) {
                          const std::lock_guard<std::mutex> lock(progress_mutex);
                          progress(static_cast<double>(k) / static_cast<double>(runs));
                        }
                      }
                    });

  for (std::size_t c = 0; c < combos.size(); ++c) {
    const auto first = c * static_cast<std::size_t>(spec.replications);
    const auto last = first + static_cast<std::size_t>(spec.replications);
    const std::vector<double> ms(makespan.begin() + static_cast<std::ptrdiff_t>(first),
                                 makespan.begin() + static_cast<std::ptrdiff_t>(last));
    const std::vector<double> cs(cost.begin() + static_cast<std::ptrdiff_t>(first),
                                 cost.begin() + static_cast<std::ptrdiff_t>(last));
    ConfigResult cr;
    cr.values = combos[c];
    cr.makespan_s = summarize(ms);
    cr.cost = summarize(cs);
    cr.quantile_makespan_s = percentile(ms, spec.quantile);
    for (std::size_t i = first; i < last; ++i) cr.runs_with_failed_tasks += failed[i];
    if (spec.deadline_s) {
      const auto ok = std::count_if(ms.begin(), ms.end(), [&](double v) { return v <= *spec.deadline_s; });
      cr.p_meets_deadline = static_cast<double>(ok) / static_cast<double>(ms.size());
      cr.meets = cr.quantile_makespan_s <= *spec.deadline_s && cr.runs_with_failed_tasks == 0;
    }
    result.configs.push_back(std::move(cr));
  }
  for (std::size_t c = 0; c < result.configs.size(); ++c) {
    const ConfigResult& cr = result.configs[c];
    if (!cr.meets) continue;
    if (!result.recommended) {
      result.recommended = c;
      continue;
    }
    const ConfigResult& best = result.configs[*result.recommended];
    if (cr.cost.mean < best.cost.mean ||
        (cr.cost.mean == best.cost.mean && cr.quantile_makespan_s < best.quantile_makespan_s))
      result.recommended = c;
  }
  return result;
}

SweepResult run_sweep(const std::string& scenario_file, const SweepSpec& spec,
                      const std::function<void(double)>& progress, const BackendFactory& backend) {
  return run_sweep_text(read_scenario_file(scenario_file), scenario_file, spec, progress, backend);
}

void print_sweep(std::ostream& out, const SweepResult& r) {
  out << "sweep of " << r.scenario << ": " << r.configs.size() << " configuration"
      << (r.configs.size() == 1 ? "" : "s") << " x " << r.replications << " replication"
      << (r.replications == 1 ? "" : "s") << " (seeds " << r.base_seed << ".."
      << r.base_seed + r.replications - 1 << ", the same for every configuration)\n\n";
  std::vector<std::string> head;
  for (const Dimension& d : r.dimensions) head.push_back(d.path);
  char q[32];
  std::snprintf(q, sizeof q, "p%g", r.quantile);
  for (const char* h : {"makespan mean s", "95% CI", "p50", ""}) head.emplace_back(h);
  head.back() = q;
  head.emplace_back("cost mean");
  if (r.deadline_s) {
    head.emplace_back("P(by deadline)");
    head.emplace_back("meets");
  }
  std::vector<std::vector<std::string>> rows;
  char buf[64];
  const auto num = [&](double v, int decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  for (std::size_t c = 0; c < r.configs.size(); ++c) {
    const ConfigResult& cr = r.configs[c];
    std::vector<std::string> row = cr.values;
    row.push_back(num(cr.makespan_s.mean, 1));
    row.push_back(num(cr.makespan_s.ci95_low, 1) + ".." + num(cr.makespan_s.ci95_high, 1));
    row.push_back(num(cr.makespan_s.p50, 1));
    row.push_back(num(cr.quantile_makespan_s, 1));
    row.push_back(num(cr.cost.mean, 2));
    if (r.deadline_s) {
      row.push_back(num(cr.p_meets_deadline * 100, 0) + "%");
      row.push_back(std::string(cr.meets ? "yes" : "no") + (r.recommended == c ? " <- cheapest" : "") +
                    (cr.runs_with_failed_tasks > 0 ? " (tasks failed)" : ""));
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i)
      out << (i ? "  " : "  ") << std::setw(static_cast<int>(width[i]))
          << (i < r.dimensions.size() ? std::left : std::right) << cells[i];
    out << std::right << "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
  if (r.deadline_s) {
    out << "\n";
    if (r.recommended) {
      const ConfigResult& cr = r.configs[*r.recommended];
      out << "cheapest configuration with " << q << " makespan within the deadline (" << num(*r.deadline_s, 0)
          << " s): " << assignment_text(r.dimensions, cr.values) << "; mean cost " << num(cr.cost.mean, 2)
          << ", " << q << " makespan " << num(cr.quantile_makespan_s, 1) << " s\n";
    } else {
      out << "no configuration has its " << q << " makespan within the deadline (" << num(*r.deadline_s, 0)
          << " s) without failed tasks\n";
    }
  }
}

namespace {
nlohmann::ordered_json summary_json(const Summary& s) {
  return {{"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},           {"p50", s.p50},
          {"p95", s.p95},   {"max", s.max},       {"ci95_low", s.ci95_low}, {"ci95_high", s.ci95_high}};
}
}  // namespace

void write_sweep_json(std::ostream& out, const SweepResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["replications"] = r.replications;
  j["base_seed"] = r.base_seed;
  j["quantile"] = r.quantile;
  if (r.deadline_s) j["deadline_s"] = *r.deadline_s;
  auto& dims = j["dimensions"] = nlohmann::ordered_json::array();
  for (const Dimension& d : r.dimensions) dims.push_back({{"path", d.path}, {"values", d.values}});
  auto& configs = j["configurations"] = nlohmann::ordered_json::array();
  for (const ConfigResult& c : r.configs) {
    nlohmann::ordered_json cj;
    cj["values"] = c.values;
    cj["makespan_s"] = summary_json(c.makespan_s);
    cj["quantile_makespan_s"] = c.quantile_makespan_s;
    cj["cost"] = summary_json(c.cost);
    cj["runs_with_failed_tasks"] = c.runs_with_failed_tasks;
    if (r.deadline_s) {
      cj["p_meets_deadline"] = c.p_meets_deadline;
      cj["meets"] = c.meets;
    }
    configs.push_back(std::move(cj));
  }
  j["recommended"] = r.recommended ? nlohmann::ordered_json(*r.recommended) : nlohmann::ordered_json(nullptr);
  out << j.dump(2) << "\n";
}

void write_sweep_csv(std::ostream& out, const SweepResult& r) {
  const auto csv_text = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const Dimension& d : r.dimensions) out << csv_text(d.path) << ',';
  out << "makespan_mean_s,makespan_stddev_s,makespan_ci95_low_s,makespan_ci95_high_s,makespan_p50_s,makespan_"
         "p95_s,"
         "makespan_quantile_s,cost_mean,cost_p95,runs_with_failed_tasks,p_meets_deadline,meets,recommended\n";
  for (std::size_t c = 0; c < r.configs.size(); ++c) {
    const ConfigResult& cr = r.configs[c];
    for (const std::string& v : cr.values) out << csv_text(v) << ',';
    out << cr.makespan_s.mean << ',' << cr.makespan_s.stddev << ',' << cr.makespan_s.ci95_low << ','
        << cr.makespan_s.ci95_high << ',' << cr.makespan_s.p50 << ',' << cr.makespan_s.p95 << ','
        << cr.quantile_makespan_s << ',' << cr.cost.mean << ',' << cr.cost.p95 << ','
        << cr.runs_with_failed_tasks << ',' << (r.deadline_s ? std::to_string(cr.p_meets_deadline) : "")
        << ',' << (r.deadline_s ? (cr.meets ? "true" : "false") : "") << ','
        << (r.recommended == c ? "true" : "false") << '\n';
  }
}

}  // namespace shardflow::planner
