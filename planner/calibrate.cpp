#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include <shardflow/core/error.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/planner/calibrate.hpp>

namespace shardflow::planner {
namespace {

// A scenario's largest noise.lognormal_sigma (docs/scenario-format.md).
constexpr double kMaxLognormalSigma = 4;

// A fitted number (sigma, a straggler's p or factor) as the overlay and the messages write it.
std::string sigma_text(double sigma) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", sigma);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// The first five, then how many more.
std::string join_some(const std::vector<std::string>& v) {
  if (v.size() <= 5) return join(v);
  return join({v.begin(), v.begin() + 5}) + " and " + std::to_string(v.size() - 5) + " more";
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// How a scaled run's times were converted.
std::string conversion_text(const ScaledTrace& s) {
  const std::string x = number_text(s.time_scale);
  if (s.scaled_steps.empty())
    return "a run at time scale " + x +
           ", but none of its steps sleeps or spins (what --time-scale scales): every run time is real, and "
           "fitted as measured";
  return "a run at time scale " + x + ": the run times of " + join_some(s.scaled_steps) +
         " (sleep and spin, which --time-scale scales) are divided by " + x + ", into model time; " +
         (s.real_steps.empty() ? std::string()
                               : join_some(s.real_steps) + " (other kernels, not scaled) and ") +
         "the dispatch times are fitted as measured";
}

// What a scaled run's real-time latency amounts to once divided by its time scale.
std::string latency_warning(const ScaledTrace& s) {
  std::string text =
      s.trace + ": each attempt of " + join_some(s.scaled_steps) +
      " also holds real-time latency (timer wake-up, thread hand-off), which is divided by " +
      number_text(s.time_scale) + " with its run time: it counts " + number_text(1 / s.time_scale) +
      " times over in the fit; the shortest of those attempts ran " + number_text(s.shortest_scaled_s) + " s";
  if (s.shortest_scaled_s > 0) {
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.2g%%", 0.1 / s.shortest_scaled_s);
    text += std::string(", so 1 ms of latency adds ") + percent + " to it";
  }
  return text;
}

// The points of one step: input GiB and run time in nanoseconds on a node of speed 1.
struct Points {
  std::vector<double> gib;
  std::vector<double> run_ns;
};

// Least squares of run = base + per_gib * GiB over the points `use` selects (a coefficient that comes out
// negative is set to 0 and the other refitted; only base, the mean, when the sizes do not vary).
std::pair<double, double> linear_fit(const Points& p, const std::vector<char>& use, bool sizes_vary) {
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < p.run_ns.size(); ++i)
    if (use[i] != 0) {
      xs.push_back(p.gib[i]);
      ys.push_back(p.run_ns[i]);
    }
  const auto n = static_cast<Eigen::Index>(ys.size());
  const Eigen::Map<const Eigen::VectorXd> x(xs.data(), n);
  const Eigen::Map<const Eigen::VectorXd> y(ys.data(), n);
  const double mean_y = y.mean();
  if (!sizes_vary || (x.array() == x[0]).all()) return {mean_y, 0};
  Eigen::MatrixXd a(n, 2);
  a.col(0).setOnes();
  a.col(1) = x;
  const Eigen::Vector2d c = a.colPivHouseholderQr().solve(y);
  if (c[1] < 0) return {mean_y, 0};                      // no dependence on size: the mean
  if (c[0] < 0) return {0, x.dot(y) / x.squaredNorm()};  // through the origin
  return {c[0], c[1]};
}

double sample_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const Eigen::Map<const Eigen::VectorXd> l(v.data(), static_cast<Eigen::Index>(v.size()));
  return std::sqrt((l.array() - l.mean()).matrix().squaredNorm() / static_cast<double>(v.size() - 1));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// `stragglers`: the scenario's model has stragglers, so the points are a mixture: runs of the model, and
// a fraction p of them `factor` times longer. Those far above the rest (log(run / fitted) more than
// max(3 robust sigmas, log 1.25) above the median) are taken as stragglers; the line and sigma are fitted
// to the others, and again until the split stops changing.
StepFit fit_step(const std::string& path, const Points& p, bool stragglers) {
  StepFit f;
  f.path = path;
  const std::size_t n = p.run_ns.size();
  f.attempts = n;
  if (n == 0) return f;
  f.sizes_vary = std::any_of(p.gib.begin(), p.gib.end(), [&](double g) { return g != p.gib[0]; });
  std::vector<char> normal(n, 1);
  auto [base, per_gib] = linear_fit(p, normal, f.sizes_vary);
  const auto log_ratio = [&](std::size_t i, double b, double g) {
    const double fitted = b + g * p.gib[i];
    return p.run_ns[i] > 0 && fitted > 0 ? std::optional<double>(std::log(p.run_ns[i] / fitted))
                                         : std::nullopt;
  };
  if (stragglers && n >= 3) {
    for (int iter = 0; iter < 50; ++iter) {
      std::vector<double> logs;
      for (std::size_t i = 0; i < n; ++i)
        if (normal[i] != 0)
          if (const auto l = log_ratio(i, base, per_gib)) logs.push_back(*l);
      if (logs.size() < 3) break;
      const double m = median(logs);
      std::vector<double> dev;
      for (double l : logs) dev.push_back(std::abs(l - m));
      const double threshold = m + std::max(3 * 1.4826 * median(dev), std::log(1.25));
      std::vector<char> next(n, 1);
      for (std::size_t i = 0; i < n; ++i)
        if (const auto l = log_ratio(i, base, per_gib); l && *l > threshold) next[i] = 0;
      if (std::count(next.begin(), next.end(), 1) < 2) break;  // not a mixture of a few stragglers
      if (next == normal) break;
      normal = next;
      std::tie(base, per_gib) = linear_fit(p, normal, f.sizes_vary);
    }
    const auto slow = static_cast<std::size_t>(std::count(normal.begin(), normal.end(), 0));
    if (slow > 0) {
      double ratio_slow = 0, ratio_normal = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double fitted = base + per_gib * p.gib[i];
        if (fitted <= 0) continue;
        (normal[i] != 0 ? ratio_normal : ratio_slow) += p.run_ns[i] / fitted;
      }
      ratio_slow /= static_cast<double>(slow);
      ratio_normal /= static_cast<double>(n - slow);
      f.straggler_p = static_cast<double>(slow) / static_cast<double>(n);
      f.straggler_factor = ratio_normal > 0 ? std::max(1.0, ratio_slow / ratio_normal) : 1;
    }
  }
  f.base = delay_from_ns(base);
  f.per_gib = delay_from_ns(per_gib);
  const double b = static_cast<double>(f.base.ns()), g = static_cast<double>(f.per_gib.ns());
  double ss_res = 0, ss_tot = 0, sum_y = 0, sum_fit = 0, sum_normal_y = 0;
  std::size_t normals = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum_y += p.run_ns[i];
    sum_fit += b + g * p.gib[i];
    if (normal[i] != 0) {
      sum_normal_y += p.run_ns[i];
      ++normals;
    }
  }
  const double mean_normal_y = sum_normal_y / static_cast<double>(normals);
  std::vector<double> logs;
  for (std::size_t i = 0; i < n; ++i) {
    if (normal[i] == 0) continue;
    const double fitted = b + g * p.gib[i];
    ss_res += (p.run_ns[i] - fitted) * (p.run_ns[i] - fitted);
    ss_tot += (p.run_ns[i] - mean_normal_y) * (p.run_ns[i] - mean_normal_y);
    if (const auto l = log_ratio(i, b, g)) logs.push_back(*l);
  }
  f.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
  f.mean_measured_s = sum_y / static_cast<double>(n) / 1e9;
  f.mean_fitted_s = sum_fit / static_cast<double>(n) * (1 + f.straggler_p * (f.straggler_factor - 1)) / 1e9;
  if (logs.size() >= 3) {
    const double sd = sample_sd(logs);
    f.lognormal_sigma = sd < 1e-3 ? 0 : sd;
  }
  return f;
}

}  // namespace

CalibrationResult calibrate(const Scenario& scenario, const Plan& plan, const std::vector<Trace>& traces,
                            const std::vector<std::string>& trace_names) {
  CalibrationResult r;
  r.scenario = scenario.name;
  Overheads without_sandbox = scenario.overheads;
  without_sandbox.sandbox_start = Duration::zero();
  r.overheads_none = without_sandbox == Overheads{};
  std::vector<std::string> plan_steps;
  for (const PlanStep& s : plan.steps()) plan_steps.push_back(s.path);
  std::map<std::string, double> pool_speed;
  for (const NodePool& p : scenario.cluster.node_pools) pool_speed[p.name] = p.speed;

  // Per step, the runs of succeeded attempts, and of failed ones: a failure may end a run early (a crash
  // at start-up, an injected failure), so failed runs are fitted only for a step none of whose attempts
  // succeeded.
  std::vector<Points> points(plan_steps.size()), failed_points(plan_steps.size());
  std::vector<double> dispatch_ns;
  for (std::size_t k = 0; k < traces.size(); ++k) {
    const Trace& t = traces[k];
    const std::string name = k < trace_names.size() ? trace_names[k] : "trace " + std::to_string(k + 1);
    r.traces.push_back(name);
    if (t.steps != plan_steps)
      throw TraceMismatchError(
          k, {name, 0, 0}, "steps",
          "the trace's steps (" + join(t.steps) + ") are not the scenario's (" + join(plan_steps) + ")");
    if (t.attempts.empty())
      throw TraceMismatchError(k, {name, 0, 0}, "attempts", "the trace has no attempts: nothing ran to fit");
    if (t.backend == "sim")
      r.warnings.push_back(
          name +
          ": a simulation's trace (backend sim): fitted to it, the model is fitted to its own "
          "prediction; calibrate is for measured runs (run --backend local or k8s)");
    // A run at another time scale: its time-scaled steps' run times go back into model time.
    std::vector<char> scaled(t.steps.size(), 0);
    for (std::uint32_t s : t.time_scaled_steps)
      if (s < scaled.size()) scaled[s] = 1;
    std::vector<char> ran(t.steps.size(), 0);  // steps with attempts fitted from this trace
    double shortest_scaled_ns = -1;
    std::vector<double> speed(t.nodes.size(), 1.0);
    for (std::size_t i = 0; i < t.nodes.size(); ++i)
      if (const auto it = pool_speed.find(t.nodes[i].pool); it != pool_speed.end()) speed[i] = it->second;
    // Attempts cancelled while running, of tasks that did not succeed (a backup's loser is cancelled too,
    // and says nothing): the run stopped under them, and the fit lacks how long they would have taken.
    std::vector<char> succeeded(plan.size(), 0);
    for (const AttemptRecord& a : t.attempts)
      if (a.outcome == Outcome::succeeded && a.task < plan.size()) succeeded[a.task] = 1;
    std::vector<std::uint64_t> cut_short(t.steps.size(), 0);
    std::unordered_set<std::string> worker_pods;  // work-queue pods whose first item was seen
    for (std::size_t i = 0; i < t.attempts.size(); ++i) {
      const AttemptRecord& a = t.attempts[i];
      if (a.task >= plan.size() || plan.is_join(a.task) || plan.step_of(a.task) != a.step ||
          plan.item(a.task) != a.item)
        throw TraceMismatchError(
            k, {name, 0, 0}, "attempts[" + std::to_string(i) + "].task",
            "task " + std::to_string(a.task) + " (step " + t.steps[a.step] + ", item " +
                std::to_string(a.item) +
                ") is not a task of the scenario's plan (a run of another scenario, or of "
                "other settings?)");
      if (a.started != kNever && a.outcome == Outcome::cancelled && succeeded[a.task] == 0)
        ++cut_short[a.step];
      if (a.started == kNever || (a.outcome != Outcome::succeeded && a.outcome != Outcome::failed)) continue;
      double run = std::max(0.0, static_cast<double>((a.finished - a.started - a.output_write).ns()));
      ran[a.step] = 1;
      if (scaled[a.step] != 0) {
        shortest_scaled_ns = shortest_scaled_ns < 0 ? run : std::min(shortest_scaled_ns, run);
        run /= t.time_scale;
      }
      const double s = a.node >= 0 && static_cast<std::size_t>(a.node) < speed.size() ? speed[a.node] : 1.0;
      // A tree fan-in's tasks each do a share of the root step's work (core/sampling.hpp): scaled back to
      // the whole, they are samples of the root's duration model, fitted with the root's own attempts.
      const PlanStep& ps = plan.steps()[a.step];
      const std::uint32_t fit_as = ps.tree_root != kNone ? ps.tree_root : a.step;
      const double share = ps.component.tree.total != 0 ? ps.component.tree.share(a.item) : 1.0;
      const double bytes = ps.component.tree.total != 0
                               ? sample_data_bytes(ps.component.input, a.item, a.task, t.seed, Stream::input)
                               : sample_input_bytes(plan, a.task, t.seed);
      Points& into = a.outcome == Outcome::succeeded ? points[fit_as] : failed_points[fit_as];
      into.gib.push_back(bytes / static_cast<double>(kGiB));
      into.run_ns.push_back(run * s / share);
      // A work-queue item that a worker pod took after another has no sandbox start (the pod runs
      // already, docs/scenario-format.md): only a pod's first item, its first record, times a dispatch.
      const bool later_item = ps.workers != 0 && !worker_pods.insert(t.pod_name(a)).second;
      const SimTime placed = a.scheduled != kNever ? a.scheduled : a.submitted;
      if (!later_item)
        dispatch_ns.push_back(static_cast<double>((a.started - placed - a.image_pull - a.input_read).ns()));
    }
    for (std::size_t s = 0; s < cut_short.size(); ++s)
      if (cut_short[s] > 0)
        r.warnings.push_back(name + ": " + std::to_string(cut_short[s]) +
                             (cut_short[s] == 1 ? " attempt of step " : " attempts of step ") + t.steps[s] +
                             (cut_short[s] == 1 ? " was" : " were") +
                             " still running when the run stopped (interrupted?): left out of the fit, "
                             "which may then lack the step's longest runs");
    if (t.time_scale != 1) {
      ScaledTrace st;
      st.trace = name;
      st.time_scale = t.time_scale;
      for (std::size_t s = 0; s < t.steps.size(); ++s)
        if (ran[s] != 0) (scaled[s] != 0 ? st.scaled_steps : st.real_steps).push_back(t.steps[s]);
      st.shortest_scaled_s = std::max(0.0, shortest_scaled_ns) / 1e9;
      // Slowed down (a scale above 1), the latency is divided down too: nothing to warn of.
      if (!st.scaled_steps.empty() && t.time_scale < 1) r.warnings.push_back(latency_warning(st));
      r.scaled_traces.push_back(std::move(st));
    }
  }
  for (std::size_t s = 0; s < plan_steps.size(); ++s) {
    if (plan.steps()[s].tree_root != kNone) continue;  // fitted as its root step (no key of its own)
    const bool stragglers = plan.steps()[s].component.duration.straggler_p > 0;
    const bool only_failed = points[s].run_ns.empty() && !failed_points[s].run_ns.empty();
    r.steps.push_back(fit_step(plan_steps[s], only_failed ? failed_points[s] : points[s], stragglers));
    StepFit& f = r.steps.back();
    f.straggler_reset = stragglers;
    if (only_failed)
      r.warnings.push_back("step " + plan_steps[s] + ": no attempt succeeded; fitted to its " +
                           std::to_string(f.attempts) + " failed attempts, whose runs may have ended early");
    // The scenario format's limit: a wider spread is written at it, and said.
    if (f.lognormal_sigma > kMaxLognormalSigma) {
      r.warnings.push_back("step " + plan_steps[s] + ": the runs spread more than a lognormal of sigma " +
                           sigma_text(kMaxLognormalSigma) + " (fitted " + sigma_text(f.lognormal_sigma) +
                           "); written as " + sigma_text(kMaxLognormalSigma) + ", the most a scenario takes");
      f.lognormal_sigma = kMaxLognormalSigma;
    }
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

std::string straggler_text(const StepFit& f) {
  if (f.straggler_p <= 0) return ", straggler: {p: 0}";
  char buf[96];
  std::snprintf(buf, sizeof buf, ", straggler: {p: %.6g, factor: %.6g}", f.straggler_p, f.straggler_factor);
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
          << (s->fit->straggler_reset ? straggler_text(*s->fit) : "") << "}\n";
    if (!s->steps.empty()) write_steps(out, s->steps, indent + "    ");
  }
}

}  // namespace

void write_overlay_yaml(std::ostream& out, const CalibrationResult& r) {
  out << "# Calibration of scenario \"" << one_line(r.scenario) << "\" from " << r.traces.size()
      << (r.traces.size() == 1 ? " trace" : " traces") << ":\n";
  for (const std::string& t : r.traces) out << "#   " << one_line(t) << "\n";
  for (const ScaledTrace& st : r.scaled_traces)
    out << "# " << one_line(st.trace) << ": " << conversion_text(st) << "\n";
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
  if (r.sandbox_start)
    out << "overheads: {" << (r.overheads_none ? "preset: none, " : "")
        << "sandbox_start: " << format_duration(*r.sandbox_start) << "}\n";
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
  for (const StepFit& f : r.steps)
    if (f.straggler_reset && f.attempts > 0)
      out << f.path << ": stragglers p " << sigma_text(f.straggler_p) << ", factor "
          << sigma_text(f.straggler_factor) << " (the runs above; base and sigma fitted to the others)\n";
  if (r.sandbox_start)
    out << "sandbox_start " << format_duration(*r.sandbox_start) << " (10th percentile of "
        << r.dispatch_samples << " attempts' dispatch times)\n";
  for (const ScaledTrace& st : r.scaled_traces) out << st.trace << ": " << conversion_text(st) << "\n";
}

}  // namespace shardflow::planner
