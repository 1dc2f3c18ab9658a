#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include <shardflow/core/error.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/planner/calibrate.hpp>

namespace shardflow::planner {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// The points of one step: input GiB and run time in nanoseconds on a node of speed 1.
struct Points {
  std::vector<double> gib;
  std::vector<double> run_ns;
};

StepFit fit_step(const std::string& path, const Points& p) {
  StepFit f;
  f.path = path;
  const std::size_t n = p.run_ns.size();
  f.attempts = n;
  if (n == 0) return f;
  const Eigen::Map<const Eigen::VectorXd> x(p.gib.data(), static_cast<Eigen::Index>(n));
  const Eigen::Map<const Eigen::VectorXd> y(p.run_ns.data(), static_cast<Eigen::Index>(n));
  const double mean_y = y.mean();
  f.sizes_vary = (x.array() != x[0]).any();
  double base = mean_y, per_gib = 0;
  if (f.sizes_vary) {
    Eigen::MatrixXd a(static_cast<Eigen::Index>(n), 2);
    a.col(0).setOnes();
    a.col(1) = x;
    const Eigen::Vector2d c = a.colPivHouseholderQr().solve(y);
    base = c[0];
    per_gib = c[1];
    if (per_gib < 0) {  // no dependence on size: the mean
      per_gib = 0;
      base = mean_y;
    } else if (base < 0) {  // through the origin
      base = 0;
      per_gib = x.dot(y) / x.squaredNorm();
    }
  }
  f.base = delay_from_ns(base);
  f.per_gib = delay_from_ns(per_gib);
  const Eigen::VectorXd fitted =
      (static_cast<double>(f.base.ns()) + static_cast<double>(f.per_gib.ns()) * x.array()).matrix();
  const double ss_res = (y - fitted).squaredNorm();
  const double ss_tot = (y.array() - mean_y).matrix().squaredNorm();
  f.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
  f.mean_measured_s = mean_y * 1e-9;
  f.mean_fitted_s = fitted.mean() * 1e-9;

  std::vector<double> logs;
  for (std::size_t i = 0; i < n; ++i)
    if (y[static_cast<Eigen::Index>(i)] > 0 && fitted[static_cast<Eigen::Index>(i)] > 0)
      logs.push_back(std::log(y[static_cast<Eigen::Index>(i)] / fitted[static_cast<Eigen::Index>(i)]));
  if (logs.size() >= 3) {
    const Eigen::Map<const Eigen::VectorXd> l(logs.data(), static_cast<Eigen::Index>(logs.size()));
    const double sd =
        std::sqrt((l.array() - l.mean()).matrix().squaredNorm() / static_cast<double>(logs.size() - 1));
    f.lognormal_sigma = sd < 1e-3 ? 0 : sd;
  }
  return f;
}

}  // namespace

CalibrationResult calibrate(const Scenario& scenario, const Plan& plan, const std::vector<Trace>& traces,
                            const std::vector<std::string>& trace_names) {
  CalibrationResult r;
  r.scenario = scenario.name;
  std::vector<std::string> plan_steps;
  for (const PlanStep& s : plan.steps()) plan_steps.push_back(s.path);
  std::map<std::string, double> pool_speed;
  for (const NodePool& p : scenario.cluster.node_pools) pool_speed[p.name] = p.speed;

  std::vector<Points> points(plan_steps.size());
  std::vector<double> dispatch_ns;
  for (std::size_t k = 0; k < traces.size(); ++k) {
    const Trace& t = traces[k];
    const std::string name = k < trace_names.size() ? trace_names[k] : "trace " + std::to_string(k + 1);
    r.traces.push_back(name);
    if (t.steps != plan_steps)
      throw InputError(
          {name, 0, 0}, "steps",
          "the trace's steps (" + join(t.steps) + ") are not the scenario's (" + join(plan_steps) + ")");
    std::vector<double> speed(t.nodes.size(), 1.0);
    for (std::size_t i = 0; i < t.nodes.size(); ++i)
      if (const auto it = pool_speed.find(t.nodes[i].pool); it != pool_speed.end()) speed[i] = it->second;
    for (std::size_t i = 0; i < t.attempts.size(); ++i) {
      const AttemptRecord& a = t.attempts[i];
      if (a.task >= plan.size() || plan.is_join(a.task) || plan.step_of(a.task) != a.step ||
          plan.item(a.task) != a.item)
        throw InputError({name, 0, 0}, "attempts[" + std::to_string(i) + "].task",
                         "task " + std::to_string(a.task) + " (step " + t.steps[a.step] + ", item " +
                             std::to_string(a.item) +
                             ") is not a task of the scenario's plan (a run of another scenario, or of "
                             "other settings?)");
      if (a.started == kNever || (a.outcome != Outcome::succeeded && a.outcome != Outcome::failed)) continue;
      const double run = static_cast<double>((a.finished - a.started - a.output_write).ns());
      const double s = a.node >= 0 && static_cast<std::size_t>(a.node) < speed.size() ? speed[a.node] : 1.0;
      points[a.step].gib.push_back(sample_input_bytes(plan, a.task, t.seed) / static_cast<double>(kGiB));
      points[a.step].run_ns.push_back(std::max(0.0, run) * s);
      const SimTime placed = a.scheduled != kNever ? a.scheduled : a.submitted;
      dispatch_ns.push_back(static_cast<double>((a.started - placed - a.image_pull - a.input_read).ns()));
    }
  }
  for (std::size_t s = 0; s < plan_steps.size(); ++s) {
    r.steps.push_back(fit_step(plan_steps[s], points[s]));
    r.steps.back().straggler_reset = plan.steps()[s].component.duration.straggler_p > 0;
  }
  if (!dispatch_ns.empty()) {
    std::sort(dispatch_ns.begin(), dispatch_ns.end());
    // 10th percentile, nearest rank: the smallest value at or above 10% of the samples.
    const auto rank = static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(dispatch_ns.size())));
    r.sandbox_start = delay_from_ns(dispatch_ns[std::max<std::size_t>(rank, 1) - 1]);
    r.dispatch_samples = dispatch_ns.size();
  }
  return r;
}

namespace {

// The steps of the overlay, nested as the scenario's groups are.
struct OverlayStep {
  std::string name;
  const StepFit* fit = nullptr;
  std::vector<std::unique_ptr<OverlayStep>> steps;

  OverlayStep& child(const std::string& n) {
    for (auto& c : steps)
      if (c->name == n) return *c;
    steps.push_back(std::make_unique<OverlayStep>());
    steps.back()->name = n;
    return *steps.back();
  }
};

std::string sigma_text(double sigma) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", sigma);
  return buf;
}

void write_steps(std::ostream& out, const std::vector<std::unique_ptr<OverlayStep>>& steps,
                 const std::string& indent) {
  out << indent << "steps:\n";
  for (const auto& s : steps) {
    out << indent << "  - name: " << s->name << "\n";
    if (s->fit)
      out << indent << "    duration: {base: " << format_duration(s->fit->base)
          << ", per_gib: " << format_duration(s->fit->per_gib)
          << ", noise: {lognormal_sigma: " << sigma_text(s->fit->lognormal_sigma) << "}"
          << (s->fit->straggler_reset ? ", straggler: {p: 0}" : "") << "}\n";
    if (!s->steps.empty()) write_steps(out, s->steps, indent + "    ");
  }
}

// Comment text on one line.
std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

}  // namespace

void write_overlay_yaml(std::ostream& out, const CalibrationResult& r) {
  out << "# Calibration of scenario \"" << one_line(r.scenario) << "\" from " << r.traces.size()
      << (r.traces.size() == 1 ? " trace" : " traces") << ":\n";
  for (const std::string& t : r.traces) out << "#   " << one_line(t) << "\n";
  if (!r.command.empty()) out << "# made by: " << one_line(r.command) << "\n";
  out << "# Lay it over the scenario: steps are matched by name (inside their groups).\n";
  OverlayStep root;
  for (const StepFit& f : r.steps) {
    if (f.attempts == 0) continue;
    OverlayStep* at = &root;
    std::size_t from = 0;
    for (;;) {
      const std::size_t slash = f.path.find('/', from);
      at = &at->child(f.path.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
      if (slash == std::string::npos) break;
      from = slash + 1;
    }
    at->fit = &f;
  }
  if (root.steps.empty() && !r.sandbox_start) {
    out << "{}\n";
    return;
  }
  if (!root.steps.empty()) {
    out << "pipeline:\n";
    write_steps(out, root.steps, "  ");
  }
  if (r.sandbox_start) out << "overheads: {sandbox_start: " << format_duration(*r.sandbox_start) << "}\n";
}

void print_calibration(std::ostream& out, const CalibrationResult& r) {
  std::size_t w = 4;
  for (const StepFit& f : r.steps) w = std::max(w, f.path.size());
  const auto row = [&](const std::string& step, const std::string& attempts, const std::string& base,
                       const std::string& per_gib, const std::string& sigma, const std::string& r2,
                       const std::string& measured, const std::string& fitted) {
    out << std::left << std::setw(static_cast<int>(w)) << step << std::right << ' ' << std::setw(8)
        << attempts << ' ' << std::setw(14) << base << ' ' << std::setw(14) << per_gib << ' ' << std::setw(8)
        << sigma << ' ' << std::setw(7) << r2 << ' ' << std::setw(14) << measured << ' ' << std::setw(14)
        << fitted << '\n';
  };
  const auto fixed = [](double v, int decimals, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, unit);
    return std::string(buf);
  };
  row("step", "attempts", "base", "per_gib", "sigma", "R^2", "measured mean", "fitted mean");
  for (const StepFit& f : r.steps) {
    if (f.attempts == 0) {
      out << std::left << std::setw(static_cast<int>(w)) << f.path << std::right
          << "        0   (no attempt ran: left as the scenario has it)\n";
      continue;
    }
    row(f.path, std::to_string(f.attempts), format_duration(f.base),
        f.sizes_vary ? format_duration(f.per_gib) : "- (one size)", sigma_text(f.lognormal_sigma),
        f.sizes_vary ? fixed(f.r_squared, 4, "") : "-", fixed(f.mean_measured_s, 3, " s"),
        fixed(f.mean_fitted_s, 3, " s"));
  }
  if (r.sandbox_start)
    out << "sandbox_start " << format_duration(*r.sandbox_start) << " (10th percentile of "
        << r.dispatch_samples << " attempts' dispatch times)\n";
}

}  // namespace shardflow::planner
