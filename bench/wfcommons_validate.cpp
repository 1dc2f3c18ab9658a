// The WfCommons validation (reports/wfcommons-validation.md, scripts/wfcommons-validation-report): each
// instance's recorded makespan against shardflow's simulated one, with no overheads and with per-task
// overheads fitted by least squares on the other instances of the same workflow system (leave-one-out).
//
//   wfcommons_validate tests/data/wfcommons/*.json     # prints the report's tables as markdown
//
// The overhead model has three terms, each a knob of the simulator:
//   dispatch  a s per task, one task at a time (the workflow system's scheduler and job submission):
//             cluster.scheduler.decisions_per_second = 1/a;
//   latency   b s per task before it runs (staging in, job start-up), on every task, so b x the number of
//             tasks on the longest chain on the critical path: overheads.sandbox_start = b;
//   data      c s per GB read and written through one shared storage: cluster.storage bandwidth 1/c.
// The fit is linear: recorded - zero-overhead makespan ~ a x tasks + b x depth + c x GB, the best
// non-negative least-squares solution (Eigen, every subset of terms tried), on the other instances of
// the system. The simulator then runs the left-out instance with the fitted a, b, c. The fit is made twice:
// in seconds (every row as it is, so the longest runs weigh most), and in relative error (each row
// divided by its recorded makespan: the error the report's mean absolute percentage error counts).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

using namespace shardflow;

namespace {

struct Instance {
  std::string file, name, system;
  double recorded = 0;
  double zero = 0;  // simulated, no overheads
  double tasks = 0, depth = 0, gb = 0;
  double fitted = 0;  // simulated with the fitted overheads
  Eigen::Vector3d coef = Eigen::Vector3d::Zero();
  double fitted2 = 0;  // with dispatch and latency only
  Eigen::Vector3d coef2 = Eigen::Vector3d::Zero();
  // The same two models fitted in relative error.
  double rel_fitted = 0, rel_fitted2 = 0;
  Eigen::Vector3d rel_coef = Eigen::Vector3d::Zero(), rel_coef2 = Eigen::Vector3d::Zero();
  std::string fitted_on;
};

struct Fit {
  Eigen::Vector3d coef = Eigen::Vector3d::Zero();
};

double simulate_with(Scenario s, const Eigen::Vector3d& c) {
  if (c[0] > 0) s.cluster.scheduler.decisions_per_second = 1.0 / c[0];
  s.overheads.sandbox_start = Duration::from_ns(static_cast<std::int64_t>(std::llround(c[1] * 1e9)));
  if (c[2] > 0) {
    s.cluster.storage.read_bytes_per_second = 1e9 / c[2];
    s.cluster.storage.write_bytes_per_second = 1e9 / c[2];
  }
  const Plan plan = Plan::unroll(s.pipeline);
  return makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed)));
}

double simulate_with(const std::string& file, const Eigen::Vector3d& c) {
  return simulate_with(load_scenario_file(file), c);
}

// The lowest mean absolute percentage error any non-negative a, b, c reach on `rows` at once, each row
// simulated (not the linear model): fitted on the rows it is then measured on, so a bound that no
// leave-one-out fit of these terms is expected to beat. A deterministic search: a grid, then coordinate
// steps halved until they are small.
struct Best {
  Eigen::Vector3d coef = Eigen::Vector3d::Zero();
  double mape = 0;
  std::vector<double> simulated;
};

Best best_in_sample(const std::vector<const Instance*>& rows, const std::vector<Scenario>& scenarios) {
  const auto score = [&](const Eigen::Vector3d& c, std::vector<double>* out) {
    double sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double m = simulate_with(scenarios[i], c);
      if (out != nullptr) out->push_back(m);
      sum += std::abs(m - rows[i]->recorded) / rows[i]->recorded;
    }
    return sum / static_cast<double>(rows.size());
  };
  Best best;
  best.mape = score(best.coef, nullptr);
  for (double a = 0; a <= 4.0001; a += 0.25)
    for (double b = 0; b <= 200.0001; b += 10)
      for (double c : {0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
        const Eigen::Vector3d k(a, b, c);
        const double m = score(k, nullptr);
        if (m < best.mape) best.mape = m, best.coef = k;
      }
  Eigen::Vector3d step(0.125, 5, 4);
  while (step[0] > 1e-3) {
    bool moved = false;
    for (int j = 0; j < 3; ++j)
      for (double sign : {1.0, -1.0}) {
        Eigen::Vector3d k = best.coef;
        k[j] = std::max(0.0, k[j] + sign * step[j]);
        const double m = score(k, nullptr);
        if (m < best.mape - 1e-12) best.mape = m, best.coef = k, moved = true;
      }
    if (!moved) step /= 2;
  }
  best.mape = score(best.coef, &best.simulated);
  return best;
}

// The best non-negative least-squares a, b, c over the rows: every subset of the three terms solved by
// Eigen's QR, the lowest residual among the solutions whose coefficients are all >= 0. `relative`: each
// row (its features and its gap) divided by the row's recorded makespan.
Eigen::Vector3d fit(const std::vector<const Instance*>& rows, int allowed, bool relative) {
  Eigen::Vector3d best = Eigen::Vector3d::Zero();
  double best_residual = 0;
  const auto weight = [relative](const Instance* r) { return relative ? 1.0 / r->recorded : 1.0; };
  for (const Instance* r : rows) best_residual += std::pow((r->recorded - r->zero) * weight(r), 2);
  for (int mask = 1; mask < 8; ++mask) {
    if ((mask & ~allowed) != 0) continue;
    std::vector<int> cols;
    for (int j = 0; j < 3; ++j)
      if (mask >> j & 1) cols.push_back(j);
    if (cols.size() > rows.size()) continue;
    Eigen::MatrixXd X(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols.size()));
    Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double f[3] = {rows[i]->tasks, rows[i]->depth, rows[i]->gb}, w = weight(rows[i]);
      for (std::size_t k = 0; k < cols.size(); ++k)
        X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = f[cols[k]] * w;
      y(static_cast<Eigen::Index>(i)) = (rows[i]->recorded - rows[i]->zero) * w;
    }
    const Eigen::VectorXd b = X.colPivHouseholderQr().solve(y);
    if ((b.array() < 0).any() || !b.allFinite()) continue;
    const double residual = (X * b - y).squaredNorm();
    if (residual < best_residual) {
      best_residual = residual;
      best.setZero();
      for (std::size_t k = 0; k < cols.size(); ++k) best[cols[k]] = b(static_cast<Eigen::Index>(k));
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Instance> all;
  for (int i = 1; i < argc; ++i) {
    Instance in;
    in.file = argv[i];
    std::ifstream f(in.file);
    const nlohmann::json j = nlohmann::json::parse(f);
    in.name = std::string(in.file.substr(in.file.find_last_of('/') + 1));
    in.name = in.name.substr(0, in.name.size() - 5);
    in.system = j.value("runtimeSystem", nlohmann::json::object()).value("name", std::string("?"));
    const auto& w = j.at("workflow");
    in.recorded = (w.contains("execution") ? w.at("execution") : w).at("makespanInSeconds").get<double>();
    const Scenario s = load_scenario_file(in.file);
    const Plan plan = Plan::unroll(s.pipeline);
    in.zero = makespan_s(sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed)));
    // Features: tasks; the longest chain, in tasks; GB read and written.
    std::vector<double> level(plan.size(), 0);
    for (TaskId t = 0; t < plan.size(); ++t) {
      double m = 0;
      for (TaskId p : plan.preds(t)) m = std::max(m, level[p]);
      level[t] = m + (plan.is_join(t) ? 0 : 1);
      in.depth = std::max(in.depth, level[t]);
    }
    in.tasks = static_cast<double>(plan.task_count());
    double bytes = 0;
    for (const PlanStep& st : plan.steps())
      bytes += (st.component.input.dist.a + st.component.output.dist.a) * static_cast<double>(st.instances);
    in.gb = bytes / 1e9;
    all.push_back(in);
  }
  for (Instance& in : all) {
    std::vector<const Instance*> rows;
    for (const Instance& o : all)
      if (&o != &in && o.system == in.system) rows.push_back(&o);
    in.fitted_on = std::to_string(rows.size()) + " other " + in.system;
    if (rows.empty()) {  // the only instance of its system: the others of every system
      for (const Instance& o : all)
        if (&o != &in) rows.push_back(&o);
      in.fitted_on = "no other " + in.system + " instance: the " + std::to_string(rows.size()) + " others";
    }
    in.coef = fit(rows, 7, false);
    in.fitted = simulate_with(in.file, in.coef);
    in.coef2 = fit(rows, 3, false);
    in.fitted2 = simulate_with(in.file, in.coef2);
    in.rel_coef = fit(rows, 7, true);
    in.rel_fitted = simulate_with(in.file, in.rel_coef);
    in.rel_coef2 = fit(rows, 3, true);
    in.rel_fitted2 = simulate_with(in.file, in.rel_coef2);
  }
  std::printf("Model A: dispatch + latency. Model B: dispatch + latency + data.\n");
  double mape0 = 0;
  for (const Instance& in : all) mape0 += std::abs((in.zero - in.recorded) / in.recorded);
  const double n = static_cast<double>(all.size());
  double mape[2][2] = {};  // [relative][model B]
  for (const bool relative : {false, true}) {
    std::printf(relative ? "\n### Fitted in relative error (each row divided by its recorded makespan)\n\n"
                         : "\n### Fitted in seconds\n\n");
    std::printf(
        "| instance | system | tasks | depth | GB | recorded s | zero-overhead s | error | fitted on | "
        "A: a s/task | A: b s | A: simulated s | A: error | B: a s/task | B: b s | B: c s/GB | B: simulated "
        "s "
        "| B: error |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Instance& in : all) {
      const Eigen::Vector3d& a = relative ? in.rel_coef2 : in.coef2;
      const Eigen::Vector3d& b = relative ? in.rel_coef : in.coef;
      const double sim_a = relative ? in.rel_fitted2 : in.fitted2,
                   sim_b = relative ? in.rel_fitted : in.fitted;
      const double e0 = (in.zero - in.recorded) / in.recorded, ea = (sim_a - in.recorded) / in.recorded;
      const double eb = (sim_b - in.recorded) / in.recorded;
      mape[relative][0] += std::abs(ea);
      mape[relative][1] += std::abs(eb);
      std::printf(
          "| %s | %s | %.0f | %.0f | %.3f | %.1f | %.3f | %+.1f%% | %s | %.3f | %.3f | %.1f | %+.1f%% | %.3f "
          "| "
          "%.3f | %.3f | %.1f | %+.1f%% |\n",
          in.name.c_str(), in.system.c_str(), in.tasks, in.depth, in.gb, in.recorded, in.zero, e0 * 100,
          in.fitted_on.c_str(), a[0], a[1], sim_a, ea * 100, b[0], b[1], b[2], sim_b, eb * 100);
    }
  }
  std::printf(
      "\nMean absolute percentage error over %zu instances: zero overhead %.1f%%; fitted in seconds, model A "
      "%.1f%%, model B %.1f%%; fitted in relative error, model A %.1f%%, model B %.1f%%\n",
      all.size(), mape0 / n * 100, mape[0][0] / n * 100, mape[0][1] / n * 100, mape[1][0] / n * 100,
      mape[1][1] / n * 100);

  // The bound: a, b, c fitted on every instance at once (and on the Pegasus ones alone), by the
  // simulated makespans' error itself.
  std::printf(
      "\n### The best any one a, b, c does, fitted on the instances it is measured on\n\n"
      "| fitted and measured on | a s/task | b s | c s/GB | mean absolute error |");
  for (const Instance& in : all) std::printf(" %s |", in.name.c_str());
  std::printf("\n|---|---|---|---|---|");
  for (std::size_t i = 0; i < all.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::map<std::string, int> systems;
  for (const Instance& in : all) ++systems[in.system];
  std::vector<std::pair<std::string, std::string>> sets = {{"", "all " + std::to_string(all.size())}};
  for (const auto& [system, count] : systems)
    if (count > 1 && count < static_cast<int>(all.size()))
      sets.emplace_back(system, "the " + std::to_string(count) + " " + system);
  for (const auto& [system, label] : sets) {
    std::vector<const Instance*> rows;
    std::vector<Scenario> scenarios;
    for (const Instance& in : all)
      if (system.empty() || in.system == system) {
        rows.push_back(&in);
        scenarios.push_back(load_scenario_file(in.file));
      }
    const Best b = best_in_sample(rows, scenarios);
    std::printf("| %s | %.3f | %.2f | %.3f | %.1f%% |", label.c_str(), b.coef[0], b.coef[1], b.coef[2],
                b.mape * 100);
    std::size_t r = 0;
    for (const Instance& in : all) {
      if (r < rows.size() && rows[r] == &in) {
        std::printf(" %+.1f%% |", (b.simulated[r] - in.recorded) / in.recorded * 100);
        ++r;
      } else {
        std::printf(" |");
      }
    }
    std::printf("\n");
  }
  return 0;
}
