#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iomanip>
#include <numeric>
#include <ostream>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>
#include <shardflow/sim/simulator.hpp>

#include "planner_text.hpp"
#include "progress.hpp"
#include "variant_name.hpp"

namespace shardflow::planner {

namespace {

using detail::trim;

}  // namespace

Variant parse_variant(const std::string& text) {
  Variant v;
  v.where = {flag_place("--variant", text), 0, 0};
  const std::size_t colon = text.find(':');
  v.name = trim(text.substr(0, colon));
  // No name, or a name that holds an assignment (`wide=pipeline...=100`: the colon forgotten).
  if (colon == 0 || v.name.empty() || v.name.find('=') != std::string::npos)
    throw InputError(v.where, "",
                     "expected NAME:PATH=VALUE[,PATH=VALUE...], the variant's name, a colon, then the fields "
                     "it changes, as in wide:pipeline.steps[shard].parallel_for.parallelism=20");
  check_variant_name(v.name, v.where);
  if (colon == std::string::npos || trim(text.substr(colon + 1)).empty()) return v;  // the scenario as is
  const std::vector<std::string> parts = detail::split_top_level(text.substr(colon + 1));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const std::size_t eq = p.find('=');
    if (p.empty())
      throw InputError(
          v.where, "",
          "assignment " + std::to_string(i + 1) + " of " + std::to_string(parts.size()) + " is empty");
    if (eq == std::string::npos || eq == 0)
      throw InputError(v.where, "",
                       quote(p) + " is not PATH=VALUE (a comma inside a value needs [...], {...} or quotes)");
    v.sets.push_back(trim(p.substr(0, eq)) + "=" + trim(p.substr(eq + 1)));
    v.set_where.push_back(v.where);
  }
  return v;
}

// An error met loading or checking variant `var`'s scenario (file `file`), said as the variant's.
InputError as_variant_error(const Variant& var, const InputError& e, const std::string& file) {
  // An error in one of the variant's own sets: name where the variant gave it, not a --set flag that
  // the user never typed.
  for (std::size_t i = 0; i < var.sets.size(); ++i)
    if (e.where().file == flag_place("--set", var.sets[i]) && e.where().line == 0) {
      // The loader places a fault of the set's value at the value's column, one of its path at 0.
      const bool value = e.where().column > 0 && i < var.set_value_where.size();
      const SourceLocation& w = value                      ? var.set_value_where[i]
                                : i < var.set_where.size() ? var.set_where[i]
                                                           : var.where;
      return InputError(w, e.field(), "variant " + var.name + ": " + e.message());
    }
  // A fault of the file's own fields that this variant's sets bring out (a pool's CPUs a step's request
  // no longer fits, a count of 0 nodes): say which variant, and name the sets the message names ("pool
  // "n" has cpu 500m from --set ...") where the variant gave them.
  if (!var.sets.empty() && e.where().file == file) {
    std::string paths, message = e.message();
    for (std::size_t i = 0; i < var.sets.size(); ++i) {
      paths += (i == 0 ? "" : ", ") + shortened(var.sets[i]);
      const SourceLocation& w = i < var.set_where.size() ? var.set_where[i] : var.where;
      message = detail::replace_all(message, "from " + flag_place("--set", var.sets[i]), "from " + w.str());
    }
    return InputError(e.where(), e.field(), message + " (in variant " + var.name + ": " + paths + ")");
  }
  return e;
}

Scenario load_variant(const std::string& yaml, const std::string& file, const CompareSpec& spec,
                      std::size_t v, const std::string& extra_cluster,
                      const std::vector<std::string>& extra_sets) {
  const Variant& var = spec.variants[v];
  LoadOptions options = detail::common_load_options(spec);
  options.first_layer = {options.overlays.size(), options.sets.size()};  // the variant's own override them
  options.overlays.insert(options.overlays.end(), var.overlays.begin(), var.overlays.end());
  options.sets.insert(options.sets.end(), var.sets.begin(), var.sets.end());
  options.sets.insert(options.sets.end(), extra_sets.begin(), extra_sets.end());
  if (!extra_cluster.empty()) options.cluster = extra_cluster;
  // One field set twice in a variant, in any spelling ([cpu] or [0]): the first would be lost. (The
  // common --set come first and a variant's own sets override them, as documented.)
  const std::size_t first = spec.sets.size();
  std::vector<std::string> fields(var.sets.size());
  options.set_field = [&](std::size_t i, const std::string& field) {
    if (i < first || i - first >= var.sets.size()) return;
    fields[i - first] = field;
    if (field == "seed") {
      const std::size_t k = i - first;
      throw InputError(k < var.set_where.size() ? var.set_where[k] : var.where, field,
                       "variant " + var.name +
                           ": the seed is not a strategy to compare: every variant runs the same seeds "
                           "(--seed, then one more per -r run); leave it out of the variant");
    }
    for (std::size_t j = 0; j < i - first; ++j)
      if (fields[j] == field) {
        const std::size_t k = i - first;
        const SourceLocation& w = k < var.set_where.size() ? var.set_where[k] : var.where;
        throw InputError(w, field,
                         "variant " + var.name + ": this field is set twice, by " + shortened(var.sets[j]) +
                             " and by " + shortened(var.sets[k]) + "; give it once");
      }
  };
  try {
    return load_scenario_text(yaml, file, options);
  } catch (const InputError& e) {
    throw as_variant_error(var, e, file);
  }
}

CompareResult run_compare_text(const std::string& yaml, const std::string& file, const CompareSpec& spec,
                               const std::function<void(double)>& progress, const BackendFactory& backend) {
  if (spec.variants.size() < 2)
    throw InputError({"--variant", 0, 0}, "",
                     "give at least two variants (the first is the baseline the others are compared with); "
                     "got " +
                         std::to_string(spec.variants.size()));
  for (std::size_t i = 0; i < spec.variants.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (spec.variants[i].name == spec.variants[j].name)
        throw InputError(spec.variants[i].where, "name",
                         "variant name \"" + spec.variants[i].name + "\" is given twice");
  if (spec.replications < 1 || spec.replications > 100000)
    throw InputError({"--replications", 0, 0}, "",
                     "must be from 1 to 100000, got " + std::to_string(spec.replications));
  if (spec.quantile <= 0 || spec.quantile > 100)
    throw InputError({"--quantile", 0, 0}, "", "must be in (0, 100]");
  const std::size_t nv = spec.variants.size();
  const auto reps = static_cast<std::size_t>(spec.replications);
  if (nv * reps > 10'000'000)
    throw InputError({"--replications", 0, 0}, "",
                     "the variants times " + std::to_string(spec.replications) +
                         " replications make more than 10,000,000 runs");

  std::vector<Scenario> scenarios(nv);
  std::vector<Plan> plans(nv);
  std::vector<std::exception_ptr> errors(nv);
  tbb::parallel_for(std::size_t{0}, nv, [&](std::size_t v) {
    try {
      scenarios[v] = load_variant(yaml, file, spec, v);
      plans[v] = Plan::unroll(scenarios[v].pipeline);
    } catch (...) {
      errors[v] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  CompareResult result;
  result.scenario = scenarios.front().name;
  result.replications = spec.replications;
  result.base_seed = spec.base_seed.value_or(scenarios.front().seed);
  detail::check_seed_range(result.base_seed, spec.replications, file, spec.base_seed.has_value());
  result.deadline_s = spec.deadline_s;
  result.quantile = spec.quantile;

  const std::size_t runs = nv * reps;
  std::vector<CompareRun> out(runs);
  ProgressGate gate(progress, runs);
  const BackendFactory make = backend ? backend : [] { return sim::make_backend(); };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, runs),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      const std::unique_ptr<Backend> b = make();
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        if (spec.stop != nullptr && spec.stop->load()) return;
                        const std::size_t v = i / reps;
                        RunOptions o;
                        o.seed = result.base_seed + i % reps;
                        o.stop = spec.stop;
                        const Trace t = b->run(scenarios[v], plans[v], o);
                        if (spec.stop != nullptr && spec.stop->load()) return;  // cut short: not done
                        const Metrics m = compute_metrics(t, plans[v]);
                        out[i] = {o.seed, m.makespan_s, m.cost, m.mean_cpu_utilization, t.tasks_failed > 0};
                        gate.finished();
                      }
                    });
  if (spec.stop != nullptr && spec.stop->load()) throw Interrupted();  // its figures need every run

  const auto column = [&](std::size_t v, double CompareRun::*field) {
    std::vector<double> x(reps);
    for (std::size_t k = 0; k < reps; ++k) x[k] = out[v * reps + k].*field;
    return x;
  };
  const std::vector<double> base_ms = column(0, &CompareRun::makespan_s),
                            base_cost = column(0, &CompareRun::cost);
  for (std::size_t v = 0; v < nv; ++v) {
    VariantResult vr;
    vr.name = spec.variants[v].name;
    vr.sets = spec.variants[v].sets;
    const Variant& var = spec.variants[v];
    for (std::size_t i = 0; i < var.overlays.size(); ++i)
      vr.overlays.push_back(i < var.overlays_given.size() ? var.overlays_given[i] : var.overlays[i].path);
    vr.runs.assign(out.begin() + static_cast<std::ptrdiff_t>(v * reps),
                   out.begin() + static_cast<std::ptrdiff_t>((v + 1) * reps));
    const std::vector<double> ms = column(v, &CompareRun::makespan_s), cs = column(v, &CompareRun::cost);
    const auto failed = [&](std::size_t k) { return vr.runs[k].failed; };
    vr.makespan_s = detail::summarize_amounts(ms);
    vr.cost = detail::summarize_amounts(cs);
    vr.cpu_utilization = detail::summarize_amounts(column(v, &CompareRun::cpu_utilization));
    vr.finished_cost_mean = detail::finished_mean(cs, failed);
    vr.quantile_makespan_s = detail::late_quantile(ms, spec.quantile, failed);
    for (const CompareRun& r : vr.runs) vr.runs_with_failed_tasks += r.failed ? 1 : 0;
    // Paired over the seeds where both runs finished: a run whose tasks failed ended early, which is no
    // speed-up (a variant without retries was "603.9 s faster" from 14 such runs of 20).
    std::vector<double> dm, dc;
    for (std::size_t k = 0; k < reps; ++k)
      if (!out[k].failed && !vr.runs[k].failed) {
        dm.push_back(ms[k] - base_ms[k]);
        dc.push_back(cs[k] - base_cost[k]);
      }
    vr.diff_makespan_s = summarize(dm);
    vr.diff_cost = summarize(dc);
    if (spec.deadline_s) {
      vr.p_meets_deadline = detail::share_meeting(ms, *spec.deadline_s, failed);
      // As a sweep judges it: enough runs by the deadline, a run whose tasks failed being late.
      vr.meets = detail::runs_meeting(vr.p_meets_deadline, reps) >= runs_needed(reps, spec.quantile, {});
    }
    result.variants.push_back(std::move(vr));
  }
  const auto& vs = result.variants;
  for (std::size_t v = 0; v < nv; ++v) {
    const auto better_time = [&](std::size_t a, std::size_t b) {
      return vs[a].makespan_s.mean != vs[b].makespan_s.mean ? vs[a].makespan_s.mean < vs[b].makespan_s.mean
                                                            : vs[a].cost.mean < vs[b].cost.mean;
    };
    const auto better_cost = [&](std::size_t a, std::size_t b) {
      return vs[a].cost.mean != vs[b].cost.mean ? vs[a].cost.mean < vs[b].cost.mean
                                                : vs[a].makespan_s.mean < vs[b].makespan_s.mean;
    };
    // A run whose tasks failed ended early and cheap: such a variant is neither fastest nor cheapest.
    if (vs[v].runs_with_failed_tasks == 0) {
      if (!result.fastest || better_time(v, *result.fastest)) result.fastest = v;
      if (!result.cheapest || better_cost(v, *result.cheapest)) result.cheapest = v;
    }
    if (spec.deadline_s && vs[v].meets) {
      if (!result.recommended) {
        result.recommended = v;
      } else {
        const VariantResult& best = vs[*result.recommended];
        if (vs[v].finished_cost_mean < best.finished_cost_mean ||
            (vs[v].finished_cost_mean == best.finished_cost_mean &&
             vs[v].quantile_makespan_s < best.quantile_makespan_s))
          result.recommended = v;
      }
    }
  }
  return result;
}

CompareResult run_compare(const std::string& scenario_file, const CompareSpec& spec,
                          const std::function<void(double)>& progress, const BackendFactory& backend) {
  return run_compare_text(read_scenario_file(scenario_file), scenario_file, spec, progress, backend);
}

void measure_variants(
    const std::string& yaml, const std::string& file, const CompareSpec& spec, CompareResult& result,
    const Backend& real, const std::string& backend_name, int runs, const std::string& predict_cluster,
    const std::vector<std::string>& predict_sets, double predict_scale,
    const std::function<bool(const Component&)>& time_scaled,
    const std::function<void(const std::string&)>& status,
    const std::function<std::string(std::size_t, std::uint64_t)>& files_dir,
    const std::function<void(std::size_t, std::uint64_t, const Plan&, const Trace&)>& measured_hook) {
  if (runs < 1 || runs > 1000)
    throw InputError({"--measure-runs", 0, 0}, "", "must be from 1 to 1000, got " + std::to_string(runs));
  detail::check_seed_range(result.base_seed, runs, file, spec.base_seed.has_value());
  // Check every variant before running any: a variant the backend cannot run is found in a second.
  std::vector<Scenario> real_s, pred_s;
  std::vector<Plan> real_p, pred_p;
  for (std::size_t v = 0; v < spec.variants.size(); ++v) {
    real_s.push_back(load_variant(yaml, file, spec, v));
    real_p.push_back(Plan::unroll(real_s.back().pipeline));
    try {
      real.check(real_s.back(), real_p.back());
    } catch (const InputError& e) {
      throw as_variant_error(spec.variants[v], e, file);
    }
    pred_s.push_back(load_variant(yaml, file, spec, v, predict_cluster, predict_sets));
    apply_time_scale(pred_s.back(), predict_scale, time_scaled);
    pred_p.push_back(Plan::unroll(pred_s.back().pipeline));
  }
  // One real run at a time: they would compete for the machine's cores otherwise.
  for (std::size_t v = 0; v < spec.variants.size(); ++v) {
    Measurement m;
    m.backend = backend_name;
    for (int k = 0; k < runs; ++k) {
      const std::uint64_t seed = result.base_seed + static_cast<std::uint64_t>(k);
      if (status)
        status("running " + result.variants[v].name + " on " + backend_name + " (seed " +
               std::to_string(seed) + ", run " + std::to_string(k + 1) + " of " + std::to_string(runs) + ")");
      RunOptions o;
      o.seed = seed;
      o.stop = spec.stop;
      if (files_dir) o.files_dir = files_dir(v, seed);
      const Trace measured = real.run(real_s[v], real_p[v], o);
      if (spec.stop != nullptr && spec.stop->load()) throw Interrupted();
      if (measured_hook) measured_hook(v, seed, real_p[v], measured);
      sim::SimOptions so;
      so.seed = seed;
      const Trace predicted = sim::simulate(pred_s[v], pred_p[v], so);
      m.seeds.push_back(seed);
      m.measured_makespan_s.push_back(makespan_s(measured));
      m.predicted_makespan_s.push_back(makespan_s(predicted));
      m.measured_tasks_failed.push_back(measured.tasks_failed);
    }
    result.variants[v].measured = std::move(m);
  }
}

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string signed_fixed(double v, int decimals) {
  return (v >= 0 ? "+" : "") + fixed(v, decimals);
}

void table(std::ostream& out, const std::vector<std::string>& head,
           const std::vector<std::vector<std::string>>& rows, std::size_t left_columns) {
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(width[i] - cells[i].size(), ' ');
      s += "  " + (i < left_columns ? cells[i] + pad : pad + cells[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
}

// A 95% interval's cell: "low..high", or "n/a" for one run, which has none.
std::string ci_cell(const Summary& s, int decimals) {
  return s.n < 2 ? "n/a" : fixed(s.ci95_low, decimals) + ".." + fixed(s.ci95_high, decimals);
}

// A cost's interval as its mean is printed (cost_text): a mean of 0.014 had the interval 0.01..0.01.
std::string cost_ci_cell(const Summary& s) {
  return s.n < 2 ? "n/a" : detail::cost_text(s.ci95_low) + ".." + detail::cost_text(s.ci95_high);
}

// A difference as a share of the baseline's mean ("-38.2%"), so that a significant +0.2 s of 1,577 s reads
// as the +0.0% it is; "" when the baseline's mean is 0.
std::string share_cell(const Summary& d, double base_mean) {
  if (base_mean == 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", d.mean / base_mean * 100);
  return buf;
}

std::string diff_cell(const Summary& d, int decimals) {
  if (d.n == 0) return "n/a";  // no seed where both runs finished
  if (d.n < 2) return signed_fixed(d.mean, decimals);
  decimals = difference_decimals(d, decimals);
  return signed_fixed(d.mean, decimals) + " (" + signed_fixed(d.ci95_low, decimals) + ".." +
         signed_fixed(d.ci95_high, decimals) + ")";
}

}  // namespace

void print_compare(std::ostream& out, const CompareResult& r) {
  const std::size_t nv = r.variants.size();
  out << "compare on " << one_line(printable(r.scenario)) << ": " << nv << " variants x " << r.replications
      << " replication" << (r.replications == 1 ? "" : "s") << " ("
      << detail::seeds_text(r.base_seed, r.replications) << ", the same for every variant); baseline "
      << r.variants.front().name << "\n";
  for (const VariantResult& v : r.variants) {
    const std::string changes = variant_changes(v, ", ");
    out << "  " << v.name << ": "
        << (changes.empty()
                ? "no changes of its own (the scenario as loaded, with any common --set and --overlay)"
                : changes)
        << "\n";
  }
  out << detail::few_replications_note(r.replications) << "\n";
  {
    std::vector<std::string> head = {"variant",   "makespan mean s", "95% CI", "p50", "p95",
                                     "cost mean", "95% CI",          "p50",    "p95", "CPU util"};
    // The quantile a deadline is judged by, when the table does not show it already.
    const bool own_quantile = r.quantile != 50 && r.quantile != 95;
    if (own_quantile) {
      head.insert(head.begin() + 5, detail::quantile_label(r.quantile));
    }
    if (r.deadline_s) {
      head.emplace_back("P(by deadline)");
      head.emplace_back("its 95% CI");
      head.emplace_back("meets");
    }
    const bool failures = std::any_of(r.variants.begin(), r.variants.end(),
                                      [](const VariantResult& v) { return v.runs_with_failed_tasks > 0; });
    if (failures) head.emplace_back("runs with failed tasks");
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < nv; ++i) {
      const VariantResult& v = r.variants[i];
      std::vector<std::string> row = {v.name,
                                      fixed(v.makespan_s.mean, 1),
                                      ci_cell(v.makespan_s, 1),
                                      fixed(v.makespan_s.p50, 1),
                                      fixed(v.makespan_s.p95, 1),
                                      detail::cost_text(v.cost.mean),
                                      cost_ci_cell(v.cost),
                                      detail::cost_text(v.cost.p50),
                                      detail::cost_text(v.cost.p95),
                                      fixed(v.cpu_utilization.mean * 100, 1) + "%"};
      // A quantile that falls on a run whose tasks failed is no makespan: "none", as a sweep shows it.
      if (own_quantile)
        row.insert(row.begin() + 5,
                   failures_reach_quantile(v.runs_with_failed_tasks, r.replications, r.quantile)
                       ? std::string("none")
                       : fixed(v.quantile_makespan_s, 1));
      if (r.deadline_s) {
        const auto n = static_cast<std::size_t>(r.replications);
        const ShareInterval ci = detail::share_interval(v.p_meets_deadline, r.replications);
        row.push_back(fixed(v.p_meets_deadline * 100, 1) + "%");
        row.push_back(fixed(ci.low * 100, 1) + ".." + fixed(ci.high * 100, 1) + "%");
        // As in a sweep: "(tasks failed)" when, had its failed runs been on time, enough would have been.
        const bool failures_out = detail::failures_keep_out(
            v.meets,
            static_cast<std::size_t>(std::count_if(
                v.runs.begin(), v.runs.end(),
                [&](const CompareRun& x) { return x.failed && x.makespan_s <= *r.deadline_s; })),
            v.p_meets_deadline, n, runs_needed(n, r.quantile, std::nullopt));
        row.push_back(std::string(v.meets ? "yes" : "no") + (r.recommended == i ? " <- cheapest" : "") +
                      (failures_out ? " (tasks failed)" : ""));
      }
      if (failures)
        row.push_back(v.runs_with_failed_tasks == 0 ? std::string("-")
                                                    : std::to_string(v.runs_with_failed_tasks) + " of " +
                                                          std::to_string(r.replications));
      rows.push_back(std::move(row));
    }
    table(out, head, rows, 1);
  }
  const bool one = r.replications < 2;
  if (one)
    out << "\ndifference to " << r.variants.front().name << ", one run each: no interval, so nothing is "
        << "significant (-r 2 or more for intervals; about 30 for narrow ones)\n";
  else
    out << "\ndifference to " << r.variants.front().name << " (variant minus " << r.variants.front().name
        << ": negative is faster or cheaper), paired by seed: mean (95% CI); significant: the interval "
        << "excludes 0\n";
  {
    const auto sig = [](const Summary& d) -> std::string {
      return d.n < 2 ? "n/a" : significant(d) ? "yes" : "no";  // one pair has no interval
    };
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 1; i < nv; ++i) {
      const VariantResult& v = r.variants[i];
      const VariantResult& base = r.variants.front();
      rows.push_back({v.name, diff_cell(v.diff_makespan_s, 1),
                      share_cell(v.diff_makespan_s, base.makespan_s.mean), sig(v.diff_makespan_s),
                      diff_cell(v.diff_cost, 2), share_cell(v.diff_cost, base.cost.mean), sig(v.diff_cost)});
    }
    table(out, {"variant", "makespan s", "of base", "significant", "cost", "of base", "significant"}, rows,
          1);
    // Seeds where either run had failed tasks are not paired: said per variant.
    for (std::size_t i = 1; i < nv; ++i) {
      const std::size_t pairs = r.variants[i].diff_makespan_s.n;
      if (pairs < static_cast<std::size_t>(r.replications))
        out << "  " << r.variants[i].name << ": paired over " << pairs << " of " << r.replications
            << " seeds; at the others it or " << r.variants.front().name
            << " had failed tasks (a run that ended early is no speed-up)\n";
    }
  }
  out << "\n";
  if (!r.fastest && !r.variants.empty())
    out << "fastest, cheapest: none (every variant had runs with failed tasks, which end early)\n";
  // Among the variants with no failed run: said when some had one, beside a table that shows them all.
  const bool some_failed = std::any_of(r.variants.begin(), r.variants.end(),
                                       [](const VariantResult& v) { return v.runs_with_failed_tasks > 0; });
  const char* among = some_failed ? " (of the variants with no run whose tasks failed)" : "";
  if (r.fastest)
    out << "fastest: " << r.variants[*r.fastest].name << " (mean makespan "
        << fixed(r.variants[*r.fastest].makespan_s.mean, 1) << " s)" << among << "\n";
  if (r.cheapest)
    out << "cheapest: " << r.variants[*r.cheapest].name << " (mean cost "
        << detail::cost_text(r.variants[*r.cheapest].cost.mean) << ")" << among << "\n";
  if (r.deadline_s) {
    const std::string q = detail::quantile_label(r.quantile);
    if (r.recommended) {
      const VariantResult& v = r.variants[*r.recommended];
      const auto reps = static_cast<std::size_t>(r.replications);
      const std::size_t met = detail::runs_meeting(v.p_meets_deadline, reps);
      const ShareInterval ci = share_interval95(met, reps);
      out << "cheapest variant with " << q << " makespan within the deadline ("
          << detail::shortest(*r.deadline_s) << " s): " << v.name << "; mean cost "
          << detail::cost_text(v.finished_cost_mean)
          << detail::finished_runs_text(v.runs_with_failed_tasks, r.replications) << ", " << q << " makespan "
          << fixed(v.quantile_makespan_s, 1) << " s, by the deadline in " << met << " of " << reps
          << " runs (95% interval " << fixed(ci.low * 100, 1) << ".." << fixed(ci.high * 100, 1) << "%)\n";
    } else {
      const bool failed = std::any_of(r.variants.begin(), r.variants.end(),
                                      [](const VariantResult& v) { return v.runs_with_failed_tasks > 0; });
      out << "no variant has its " << q << " makespan within the deadline ("
          << detail::shortest(*r.deadline_s) << " s)"
          << (failed ? " with runs whose tasks failed counted as late" : "") << "\n";
    }
  }
  bool any_measured = false;
  for (const VariantResult& v : r.variants) any_measured = any_measured || v.measured.has_value();
  if (any_measured) {
    bool any_failed = false;
    out << "\nmeasured next to predicted (the simulator on a model of the machine it ran on, same seeds):\n";
    std::vector<std::vector<std::string>> rows;
    for (const VariantResult& v : r.variants) {
      if (!v.measured) continue;
      const Measurement& m = *v.measured;
      const double meas = m.measured_mean(), pred = m.predicted_mean();
      const std::size_t failed = m.runs_with_failed_tasks();
      rows.push_back({v.name, m.backend, std::to_string(m.seeds.size()), fixed(meas, 3), fixed(pred, 3),
                      meas > 0 ? signed_fixed((pred - meas) / meas * 100, 1) + "%" : "-",
                      failed == 0 ? "0" : std::to_string(failed) + " of " + std::to_string(m.seeds.size())});
      any_failed = any_failed || failed > 0;
    }
    table(out,
          {"variant", "backend", "runs", "measured mean s", "predicted mean s", "error",
           "runs with failed tasks"},
          rows, 2);
    if (any_failed)
      out << "  (a real run with failed tasks ended early or did less work: its makespan is not the "
             "pipeline's;\n"
             "   its trace says which task failed and why)\n";
  }
}

}  // namespace shardflow::planner
