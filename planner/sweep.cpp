#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <exception>
#include <iomanip>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/machine.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/planner/pareto.hpp>
#include <shardflow/planner/sweep.hpp>
#include <shardflow/sim/simulator.hpp>

#include "planner_text.hpp"
#include "progress.hpp"
#include "view_fingerprint.hpp"

namespace shardflow::planner {

namespace {

using detail::trim;

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

// Where a message names a --vary: the flag, its path and values, shortened (a list of 10,000 values is
// not repeated in every message about it).
SourceLocation vary_place(const Dimension& dim) {
  std::string values;
  for (const std::string& v : dim.values) values += (values.empty() ? "" : ",") + v;
  return {flag_place("--vary", dim.path + "=" + values), 0, 0};
}

// Whether some value of `dim` (a mapping, for a --vary of one) gives the first key of `rest`, a path
// inside the mapping (".count" or ".parallel_for.parallelism"); a list index ("[0]") counts as given.
bool gives_key(const Dimension& dim, const std::string& rest) {
  if (rest.empty() || rest[0] != '.') return true;
  const std::string key = rest.substr(1, rest.find_first_of(".[", 1) - 1);
  for (const std::string& v : dim.values) {
    try {
      const YAML::Node n = YAML::Load(v);
      if (!n.IsMap()) return true;  // not a mapping: it replaces whatever is inside
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == key) return true;
    } catch (const YAML::Exception&) {
      return true;  // the loader reports the value itself
    }
  }
  return false;
}

// A field given by `later` (a --vary) after `earlier` (a --vary or a --set, named by its place): one of
// them would set it in every configuration alone. `field` is what both set, when their spellings differ.
InputError given_twice(const Dimension& later, const std::string& earlier, bool earlier_is_set,
                       const std::string& field) {
  const std::string both = field.empty() ? "" : " (both set " + field + ")";
  if (earlier_is_set)
    return InputError(vary_place(later), later.path,
                      "this field is also given by " + earlier + both +
                          ", which no configuration would use; leave out the --set");
  return InputError(
      vary_place(later), later.path,
      "this field is varied twice, here and by " + earlier + both + "; give its values in one --vary");
}

// Makespans within 0.1% of the largest of them count as equal: a 0.1 s wiggle on 6,000 s is not a trend.
double makespan_tolerance(const std::vector<double>& q) {
  return q.empty() ? 0.0 : 1e-3 * *std::max_element(q.begin(), q.end());
}

// The first index from which every makespan is within the tolerance of the last (q.size() - 1: only it).
std::size_t flat_from(const std::vector<double>& q) {
  const double tol = makespan_tolerance(q);
  std::size_t from = q.empty() ? 0 : q.size() - 1;
  while (from > 0 && std::abs(q[from - 1] - q.back()) <= tol) --from;
  return from;
}

// A varied value that is zero ("0", "0.0", "0s", "0ms", "0Gi"...): no scenario field takes less, so advice
// to try below it would be advice to try what cannot be given.
bool is_zero_value(const std::string& v) {
  std::size_t i = 0;
  bool digit = false;
  for (; i < v.size() && (v[i] == '0' || v[i] == '.'); ++i) digit = digit || v[i] == '0';
  if (!digit) return false;
  while (i < v.size() && std::isalpha(static_cast<unsigned char>(v[i])) != 0) ++i;
  return i == v.size();
}

// A parallelism limit of 0 is no limit: the most of it there is.
bool is_no_limit(const std::string& path, const std::string& value) {
  return path.ends_with(".parallelism") && is_zero_value(value);
}

// The iterations of the loop whose limit `path` is (pipeline.steps[X].steps[Y]...parallel_for.parallelism,
// X a step's name or index), in `p`; none for any other path.
std::optional<std::uint32_t> limited_loop_count(const Pipeline& p, std::string_view path) {
  constexpr std::string_view kHead = "pipeline.", kTail = ".parallel_for.parallelism";
  if (!path.starts_with(kHead) || !path.ends_with(kTail)) return std::nullopt;
  std::string_view rest = path.substr(kHead.size(), path.size() - kHead.size() - kTail.size());
  const std::vector<Step>* steps = &p.steps;
  const Step* step = nullptr;
  while (!rest.empty()) {
    if (!rest.starts_with("steps[")) return std::nullopt;
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view sel = rest.substr(6, close - 6);
    step = nullptr;
    std::uint64_t index = 0;
    const auto [end, ec] = std::from_chars(sel.data(), sel.data() + sel.size(), index);
    if (ec == std::errc() && end == sel.data() + sel.size()) {
      if (index < steps->size()) step = &(*steps)[index];
    } else {
      for (const Step& s : *steps)
        if (s.name == sel) step = &s;
    }
    if (step == nullptr) return std::nullopt;
    rest.remove_prefix(close + 1);
    if (rest.starts_with(".")) rest.remove_prefix(1);
    steps = &step->steps;
  }
  if (step == nullptr || !step->loop) return std::nullopt;
  return step->loop->count;
}

// Per dimension of a configuration: whether its value is a parallelism that limits nothing, 0 or at
// least its loop's iterations (a sweep's advice must not say "try beyond" a limit that limits nothing).
std::vector<bool> no_limits(const std::vector<Dimension>& dims, const std::vector<std::string>& values,
                            const Pipeline& p) {
  std::vector<bool> out(dims.size(), false);
  for (std::size_t d = 0; d < dims.size() && d < values.size(); ++d) {
    if (!dims[d].path.ends_with(".parallelism")) continue;
    if (is_zero_value(values[d])) {
      out[d] = true;
      continue;
    }
    std::uint64_t v = 0;
    const std::string& text = values[d];
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) continue;
    if (const auto count = limited_loop_count(p, dims[d].path)) out[d] = v >= *count;
  }
  return out;
}

// Where each of a field's values lies on its scale, when they all are quantities of one kind: CPUs for a
// `cpu` field, else durations (a bare number is one too), else data sizes; none for other values
// (names, mappings), which have no order.
std::optional<std::vector<double>> value_scale(const std::string& path,
                                               const std::vector<std::string>& values) {
  const auto all = [&](const auto& parse) -> std::optional<std::vector<double>> {
    std::vector<double> out;
    try {
      for (const std::string& v : values)
        out.push_back(is_no_limit(path, v) ? std::numeric_limits<double>::infinity() : parse(v));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return out;
  };
  if (path.ends_with("cpu"))
    return all([](const std::string& v) { return static_cast<double>(parse_cpu(v)); });
  if (auto d = all([](const std::string& v) { return parse_duration(v).seconds(); })) return d;
  return all([](const std::string& v) { return static_cast<double>(parse_bytes(v)); });
}

}  // namespace

Dimension parse_dimension(const std::string& text) {
  const SourceLocation where{flag_place("--vary", text), 0, 0};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(where, "", "expected PATH=V1,V2,..., as in cluster.node_pools[cpu].count=10,20,40");
  Dimension d;
  d.path = trim(text.substr(0, eq));
  d.values = detail::split_top_level(std::string_view(text).substr(eq + 1));
  for (std::size_t i = 0; i < d.values.size(); ++i)
    if (d.values[i].empty())
      throw InputError(
          where, d.path,
          "value " + std::to_string(i + 1) + " of " + std::to_string(d.values.size()) + " is empty");
  return d;
}

// The 95% interval of the mean is Hall's skewness-corrected t interval: Hall, P. (1992) "On the
// removal of skewness by transformation", JRSS B 54(1), 221-228, building on Johnson, N. J. (1978)
// "Modified t tests and confidence intervals for asymmetrical populations", JASA 73, 536-544.
//
// With W = (mean - mu) / s, the studentized mean sqrt(n) W has mean -g/(2 sqrt n) and skewness
// -2g/sqrt n to first order, g being the skewness of the data (its Edgeworth expansion has the term
// n^-1/2 g (2x^2 + 1) phi(x) / 6). Hall removes both with the monotone transform
//   T = sqrt(n) (f(W) + g/(6n)),  f(w) = w + g w^2/3 + g^2 w^3/27 = ((1 + g w/3)^3 - 1) / (g/3),
// whose cube term keeps f increasing, so f^-1(y) = (3/g) ((1 + g y)^(1/3) - 1) is defined for every
// y. Then P(-t <= T <= t) = 95% with t = t(0.975, n - 1) gives
//   mu in [mean - s f^-1(t/sqrt n - g/(6n)),  mean - s f^-1(-t/sqrt n - g/(6n))].
// For g > 0 (a long right tail, as makespans with stragglers have) both ends move to the right. For
// g = 0, f is the identity and the interval is exactly the Student-t interval mean -+ s t/sqrt n.
// g is the sample skewness G1 = n/((n-1)(n-2)) sum (x - mean)^3 / s^3, which needs n >= 3 and s > 0.
// The correction is made from kMinSkewCorrected values on, the fewest the coverage study measured it with
// (docs/compare-format.md): the skewness of fewer runs is noise (3 runs of a right-skewed makespan can
// give g = -0.7), and a noisy g far from 0 stretches one end by several times t s/sqrt(n), past every
// value seen. Below that, and for g = 0, the interval is the plain t interval (just the mean, for one
// value or zero variance); `skewness` is reported either way.
Summary summarize(const std::vector<double>& values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  if (s.min == s.max) {  // all equal: the value itself (a sum and a division can be off it by an ulp,
    s.mean = s.p50 = s.p95 = s.ci95_low = s.ci95_high = s.min;  // which read as a spread and a skew)
    return s;
  }
  const auto n = static_cast<double>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double ss = 0;
  double s3 = 0;
  for (double v : values) {
    const double d = v - s.mean;
    ss += d * d;
    s3 += d * d * d;
  }
  s.stddev = values.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.p50 = percentile(values, 50);
  s.p95 = percentile(values, 95);
  if (values.size() < 2 || s.stddev == 0) {
    s.ci95_low = s.ci95_high = s.mean;
    return s;
  }
  if (values.size() > 2) s.skewness = n / ((n - 1) * (n - 2)) * s3 / (s.stddev * s.stddev * s.stddev);
  const double g = values.size() >= kMinSkewCorrected ? s.skewness : 0;
  // f^-1(y) = (3/g)((1 + g y)^(1/3) - 1), written as y / ((c^2 + c + 1)/3) with c = (1 + g y)^(1/3)
  // (as c^3 - 1 = (c - 1)(c^2 + c + 1)): no cancellation for small g, and exactly y for g = 0.
  const auto f_inverse = [g](double y) {
    const double c = std::cbrt(1 + g * y);
    return y / ((c * c + c + 1) / 3);
  };
  const double q = t975(static_cast<int>(values.size()) - 1) / std::sqrt(n);
  const double bias = g / (6 * n);
  s.ci95_low = s.mean - s.stddev * f_inverse(q - bias);
  s.ci95_high = s.mean - s.stddev * f_inverse(-q - bias);
  return s;
}

Shard parse_shard(const std::string& text) {
  const auto bad = [&] {
    return InputError({}, "--shard", "expected I/N with 0 <= I < N, as in 2/8, got \"" + text + "\"");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  bool too_large = false;
  const auto number = [&](std::string_view t, int& v) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    too_large = too_large || (ec == std::errc::result_out_of_range && end == t.data() + t.size());
    return ec == std::errc() && end == t.data() + t.size() && !t.empty();
  };
  const bool index_ok = number(std::string_view(text).substr(0, slash), s.index);
  const bool count_ok = number(std::string_view(text).substr(slash + 1), s.count);
  if (too_large)
    throw InputError({}, "--shard",
                     "I and N must be at most " + std::to_string(std::numeric_limits<int>::max()) +
                         ", got \"" + text + "\"");
  if (!index_ok || !count_ok || s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

Search parse_search(const std::string& text) {
  if (text == "grid") return Search::grid;
  if (text == "auto") return Search::automatic;
  throw InputError({}, "--search", "expected grid or auto, got \"" + text + "\"");
}

namespace {

void hash_into(std::size_t& h, std::uint64_t v) {
  h = (h ^ v) * 1099511628211ULL;
}
void hash_duration(std::size_t& h, Duration d) {
  hash_into(h, static_cast<std::uint64_t>(d.ns()));
}
// A double by its bits, 0 and -0 alike (they are ==).
void hash_double(std::size_t& h, double v) {
  hash_into(h, v == 0 ? std::uint64_t{0} : std::bit_cast<std::uint64_t>(v));
}
void hash_distribution(std::size_t& h, const Distribution& d) {
  hash_into(h, static_cast<std::uint64_t>(d.kind));
  hash_double(h, d.a);
  hash_double(h, d.b);
}

void hash_steps(std::size_t& h, const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    hash_into(h, s.loop ? s.loop->count : 0);
    hash_into(h, s.loop ? s.loop->parallelism : 0);
    hash_into(h, s.loop ? s.loop->workers : 0);
    hash_into(h, s.parallelism);
    const Component& c = s.component;
    hash_into(h, static_cast<std::uint64_t>(c.resources.cpu));
    hash_into(h, static_cast<std::uint64_t>(c.resources.memory));
    hash_into(h, static_cast<std::uint64_t>(c.resources.gpu));
    hash_duration(h, c.duration.base);
    hash_duration(h, c.duration.per_gib);
    hash_double(h, c.duration.lognormal_sigma);
    hash_double(h, c.duration.straggler_p);
    hash_double(h, c.duration.straggler_factor);
    hash_distribution(h, c.input.dist);
    hash_distribution(h, c.output.dist);
    hash_double(h, c.failure.p);
    hash_into(h, static_cast<std::uint64_t>(c.retries.max));
    hash_duration(h, c.retries.backoff);
    hash_double(h, c.retries.factor);
    hash_duration(h, c.retries.max_backoff);
    hash_duration(h, c.retries.max_duration.value_or(kNever));
    hash_into(h, static_cast<std::uint64_t>(c.image_size));
    hash_steps(h, s.steps);
  }
}

}  // namespace

// view_fingerprint.hpp
std::size_t view_fingerprint(const Scenario& view) {
  std::size_t h = 14695981039346656037ULL;
  hash_into(h, view.seed);
  for (const NodePool& p : view.cluster.node_pools) {
    hash_into(h, static_cast<std::uint64_t>(p.count));
    hash_into(h, static_cast<std::uint64_t>(p.cpu));
    hash_into(h, static_cast<std::uint64_t>(p.memory));
    hash_into(h, static_cast<std::uint64_t>(p.gpu));
    hash_into(h, static_cast<std::uint64_t>(p.max_pods));
    hash_double(h, p.speed);
    hash_duration(h, p.mtbf);
    hash_into(h, std::uint64_t{p.spot});
    hash_duration(h, p.spot_mean_reclaim);
    hash_into(h, static_cast<std::uint64_t>(p.autoscaling.min));
    hash_into(h, static_cast<std::uint64_t>(p.autoscaling.max));
    hash_duration(h, p.autoscaling.scale_up_delay);
    hash_duration(h, p.autoscaling.boot_time);
    hash_duration(h, p.autoscaling.scale_down_idle);
  }
  const SchedulerConfig& sc = view.cluster.scheduler;
  hash_into(h, static_cast<std::uint64_t>(sc.policy));
  hash_into(h, static_cast<std::uint64_t>(sc.percentage_of_nodes_to_score));
  hash_double(h, sc.decisions_per_second);
  hash_duration(h, sc.bind_latency);
  hash_duration(h, sc.initial_backoff);
  hash_duration(h, sc.max_backoff);
  hash_duration(h, sc.backoff_window);
  hash_double(h, view.cluster.storage.read_bytes_per_second);
  hash_double(h, view.cluster.storage.write_bytes_per_second);
  const Overheads& ov = view.overheads;
  hash_into(h, static_cast<std::uint64_t>(ov.pods_per_task));
  hash_duration(h, ov.driver_pod_duration);
  hash_duration(h, ov.sandbox_start);
  hash_double(h, ov.image_pull_bytes_per_second);
  hash_into(h, static_cast<std::uint64_t>(ov.default_image_size));
  hash_steps(h, view.pipeline.steps);
  return h;
}

namespace {

// FNV-1a of `s` after `h`, then a 0xff byte: a separator, so that ("ab", "c") and ("a", "bc") differ.
std::uint64_t fnv1a(std::uint64_t h, std::string_view s) {
  return shardflow::fnv1a("\xff", shardflow::fnv1a(s, h));
}

std::string inputs_hash(const std::string& yaml, const SweepSpec& spec) {
  std::uint64_t h = fnv1a(kFnv1aBasis, yaml);
  for (const ScenarioFile& o : spec.overlays) h = fnv1a(h, o.text);
  h = fnv1a(h, "sets");
  for (const std::string& s : spec.sets) h = fnv1a(h, s);
  h = fnv1a(h, spec.cluster);
  // What --cluster stands for, which differs from machine to machine: `local`, the machine's shape (slices
  // run on machines of different shapes are different sweeps); a cluster file, its text.
  if (spec.cluster == "local") {
    h = fnv1a(h, std::to_string(machine_cores()) + " cores, " + std::to_string(machine_memory()) + " bytes");
  } else if (!spec.cluster.empty()) {
    try {
      h = fnv1a(h, read_scenario_file(spec.cluster));
    } catch (const InputError&) {  // loading the configurations reports it
    }
  }
  h = fnv1a(h, "params");
  for (const std::string& s : spec.params) h = fnv1a(h, s);
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// A field the auto search assumes the makespan falls along: a node pool's count or a parallelism limit.
bool monotone_path(const std::string& path) {
  return (path.starts_with("cluster.node_pools[") && path.ends_with("].count")) ||
         path.ends_with(".parallelism");
}

// The replications of the configurations a sweep runs, filled as they are simulated.
//
// Configurations whose simulation views are equal (sim::simulation_view: they differ only in prices or
// in text the simulator does not read) form a group, simulated once per replication by its first
// configuration (its representative); each member's cost is its own prices times the nodes' billed
// time in that trace, which is the cost its own simulation would have had to the bit. Without reuse
// (SweepSpec::reuse false, or a backend other than the simulator) every configuration is its own group.
// The most memory a batch of replications' draw tables takes (Runner::run): 64 MiB, 1.6 million tasks.
constexpr std::size_t kDrawTableBytes = std::size_t{64} << 20;

class Runner {
 public:
  // A runner that only loads configurations (check_all, load) looks for no simulation shares.
  enum Use { simulates, loads_only };
  Runner(const std::string& yaml, const std::string& file, const SweepSpec& spec,
         std::vector<std::vector<std::string>> combos, const BackendFactory& backend, Use use = simulates)
      : yaml_(yaml),
        file_(file),
        spec_(spec),
        combos_(std::move(combos)),
        make_(backend ? backend : [] { return sim::make_backend(); }),
        reuse_(spec.reuse && !backend && use == simulates),
        share_(!backend && use == simulates),
        scenarios_(combos_.size()),
        plans_(combos_.size()),
        pipeline_id_(combos_.size(), kOwnPipeline),
        critical_path_(combos_.size()),
        no_limit_(combos_.size()),
        loaded_(combos_.size()),
        group_of_(combos_.size()),
        makespan_(combos_.size()),
        cost_(combos_.size()),
        failed_(combos_.size()),
        infeasible_(combos_.size()) {}

  const std::vector<std::vector<std::string>>& combos() const { return combos_; }
  // How every configuration loads the scenario before its --vary values.
  LoadOptions base_options() const { return detail::common_load_options(spec_); }
  // Configuration k's: the base options, then its --vary values as --set, in --vary order.
  LoadOptions options_for(std::size_t k) const {
    LoadOptions options = base_options();
    for (std::size_t d = 0; d < combos_[k].size(); ++d)
      options.sets.push_back(spec_.dimensions[d].path + "=" + combos_[k][d]);
    return options;
  }
  std::size_t done(std::size_t c) const { return makespan_[c].size(); }
  // Configuration-replications evaluated, and the simulations run for them (fewer with reuse).
  std::uint64_t simulations() const { return simulations_; }
  std::uint64_t distinct_simulations() const { return distinct_; }

  // The error's message, where it names a value a --vary gave as the --set it was loaded by ("pool "n" has
  // cpu 500m from --set ..."), naming the --vary.
  std::string vary_named(const InputError& e, const std::vector<std::string>& values) const {
    std::string message = e.message();
    for (std::size_t d = 0; d < values.size(); ++d) {
      const Dimension& dim = spec_.dimensions[d];
      message = detail::replace_all(message, "from " + flag_place("--set", dim.path + "=" + values[d]),
                                    "from " + vary_place(dim).file);
    }
    return message;
  }

  // The error, named as in configuration k ("... (in the configuration PATH=V, ...)").
  [[noreturn]] void throw_in_configuration(const InputError& e, std::size_t k) const {
    std::string values;
    for (std::size_t d = 0; d < combos_[k].size(); ++d)
      values += (d == 0 ? "" : ", ") + spec_.dimensions[d].path + "=" + shortened(combos_[k][d]);
    throw InputError(e.where(), e.field(),
                     vary_named(e, combos_[k]) + " (in the configuration " + values + ")");
  }

  // Every problem of configuration k's scenario, read through as `validate` reads (empty if it loads).
  [[nodiscard]] std::vector<InputError> problems_of(std::size_t k) const {
    LoadOptions options = options_for(k);
    std::vector<InputError> problems;
    options.problems = &problems;
    try {
      (void)load_scenario_text(yaml_, file_, options);
    } catch (const InputError& e) {
      problems.push_back(e);
    }
    return problems;
  }

  // Whether the scenario with its overlays and --set but none of the --vary fails with the same error.
  bool same_without_vary(const InputError& e) const {
    try {
      (void)load_scenario_text(yaml_, file_, base_options());
    } catch (const InputError& base) {
      return base.where().file == e.where().file && base.where().line == e.where().line &&
             base.where().column == e.where().column && base.field() == e.field() &&
             base.message() == e.message();
    }
    return false;
  }

  // Loads every configuration as run() would, to report the first bad one, a batch at a time and
  // keeping none (sweep --emit-job: the sweep runs elsewhere, in slices).
  void check_all() {
    constexpr std::size_t kBatch = 1024;
    for (std::size_t from = 0; from < combos_.size(); from += kBatch) {
      std::vector<std::size_t> which;
      for (std::size_t c = from; c < std::min(combos_.size(), from + kBatch); ++c) which.push_back(c);
      load(which);
      for (std::size_t c : which) {
        scenarios_[c] = Scenario{};
        plans_[c].reset();
      }
    }
  }

  // Loads and unrolls the configurations not loaded yet (in parallel: parsing is a good part of a
  // small sweep), then reports the first bad one in order, whatever thread met it. Then puts each in
  // its group, in the order of `which` (so the groups do not depend on the threads).
  void load(const std::vector<std::size_t>& which) {
    std::vector<std::size_t> todo;
    for (std::size_t c : which)
      if (!loaded_[c]) todo.push_back(c);
    std::vector<std::exception_ptr> errors(todo.size());
    std::vector<Scenario> views(reuse_ ? todo.size() : 0);
    tbb::parallel_for(std::size_t{0}, todo.size(), [&](std::size_t i) {
      const std::size_t k = todo[i];
      try {
        LoadOptions options = options_for(k);
        options.warn = warn;  // set only to load one configuration (parallel loads would interleave them)
        // A --vary of a field that a --set or another --vary also gives, in any spelling ([cpu] or [0]):
        // the later would set it alone in every configuration, so the earlier is lost.
        const std::size_t ns = spec_.sets.size();
        std::vector<std::string> fields(options.sets.size());
        options.set_field = [&](std::size_t at, const std::string& field) {
          fields[at] = field;
          if (at < ns) return;
          const Dimension& later = spec_.dimensions[at - ns];
          if (field == "seed")
            throw InputError(vary_place(later), later.path,
                             "the seed is not a setting to compare: every configuration runs the same seeds "
                             "(--seed, then one more per -r run); leave it out of --vary");
          for (std::size_t j = 0; j < at; ++j) {
            const bool set = j < ns;
            // The same field, or one inside the other: a --vary of a mapping replaces what was given
            // inside it before, and a --vary inside a mapping varied before overrides that part of each
            // of its values, so the configurations would not be what their labels say. (A --set of a
            // mapping and a --vary inside it is fine: the --vary changes one part of it.)
            const auto inside = [](const std::string& inner, const std::string& outer) {
              return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
                     (inner[outer.size()] == '.' || inner[outer.size()] == '[');
            };
            if (fields[j] != field && !inside(fields[j], field) && (set || !inside(field, fields[j])))
              continue;
            // A --vary inside a mapping varied before is the documented way to cross a pool's shape with
            // its node count: fine while the mapping's values leave out the key it varies.
            if (!set && inside(field, fields[j]) &&
                !gives_key(spec_.dimensions[j - ns], field.substr(fields[j].size())))
              continue;
            const std::string earlier =
                set ? flag_place("--set", spec_.sets[j]) : vary_place(spec_.dimensions[j - ns]).file;
            const std::string& path =
                set ? spec_.sets[j].substr(0, spec_.sets[j].find('=')) : spec_.dimensions[j - ns].path;
            if (fields[j] == field)
              throw given_twice(later, earlier, set, trim(path) == later.path ? "" : field);
            if (set)
              throw InputError(
                  vary_place(later), later.path,
                  "each value of this --vary replaces the whole of " + field + ", and with it " + fields[j] +
                      " that " + earlier +
                      " gives, which no configuration would use; give it in the --vary's values");
            const bool later_outer = inside(fields[j], field);
            throw InputError(
                vary_place(later), later.path,
                "this --vary and " + earlier + " overlap (" + (later_outer ? fields[j] : field) +
                    " is inside " + (later_outer ? field : fields[j]) +
                    "): one would override part of the other in every configuration, which would "
                    "not be what its label says; vary the mapping alone, or the fields inside it");
          }
        };
        try {
          scenarios_[k] = load_scenario_text(yaml_, file_, options);
        } catch (const InputError& e) {
          // Well formed, but its cluster cannot run the pipeline (no nodes, a pod that fits no node) with
          // this configuration's values: a configuration that cannot run, said as such, and the others are
          // swept (its --vary values may be what another configuration changes: a pool's count or size).
          if (e.infeasible() && !combos_[k].empty()) {
            // Unless it has a problem of another kind too (a dependency cycle, an unknown step), which
            // the loader, stopping at the first, would not have met: read it through, as `validate` does.
            const std::vector<InputError> problems = problems_of(k);
            const auto other = std::find_if(problems.begin(), problems.end(),
                                            [](const InputError& p) { return !p.infeasible(); });
            if (other == problems.end()) {
              for (const InputError& p : problems.empty() ? std::vector<InputError>{e} : problems)
                infeasible_[k] += (infeasible_[k].empty() ? "" : "; ") + vary_named(p, combos_[k]);
              return;
            }
            // As below: in the first configuration, a fault the scenario has without the --vary is its own.
            if (k == 0 && same_without_vary(*other)) throw InputError(*other);
            throw_in_configuration(*other, k);
          }
          // An error in a value of --vary: name the --vary the user typed, not a --set they never did.
          for (std::size_t d = 0; d < combos_[k].size(); ++d) {
            const Dimension& dim = spec_.dimensions[d];
            if (e.where().line != 0 || e.where().file != flag_place("--set", dim.path + "=" + combos_[k][d]))
              continue;
            // A fault of the path (an unknown key it makes) is the same for every value: name none.
            const bool in_value = e.where().column > 0;
            // One value that looks like several (`=[10,20]`, `=10 20 40`): say how a --vary lists them.
            const std::string& v = combos_[k][d];
            const bool one_like_many = in_value && dim.values.size() == 1 &&
                                       (v.front() == '[' || (v.find(' ') != std::string::npos &&
                                                             v.find_first_of("{:") == std::string::npos));
            throw InputError(vary_place(dim), e.field(),
                             (in_value ? "value " + shortened(v) + ": " : std::string()) + e.message() +
                                 (one_like_many ? " (a --vary separates its values with commas, no brackets: "
                                                  "PATH=10,20,40)"
                                                : ""));
          }
          // A fault that the file, an overlay or a --set shows only with this configuration's values (a
          // pool's CPUs that a step's request no longer fits, a count of 0 nodes): say which configuration.
          // The first configuration is loaded first, alone: past it, a fault is one of the values. In the
          // first, one the scenario has without any --vary is said as it is.
          const bool at_a_vary =
              std::any_of(spec_.dimensions.begin(), spec_.dimensions.end(),
                          [&](const Dimension& d) { return e.where().file == vary_place(d).file; });
          if (!combos_[k].empty() && !at_a_vary && (k > 0 || !same_without_vary(e))) {
            throw_in_configuration(e, k);
          }
          throw;
        }
        no_limit_[k] = no_limits(spec_.dimensions, combos_[k], scenarios_[k].pipeline);
        if (share_) {
          // The simulator reads the plan, not the scenario's pipeline: configurations with equal pipelines
          // (those that vary the cluster) share one copy of it and one plan of it.
          share_pipeline(std::move(scenarios_[k].pipeline), pipeline_id_[k]);
          scenarios_[k].pipeline = Pipeline{};
        }
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    // A configuration that cannot run is loaded as it is: nothing to unroll, group or simulate.
    std::erase_if(todo, [&](std::size_t k) {
      if (infeasible_[k].empty()) return false;
      loaded_[k] = 1;
      return true;
    });
    check_memory(todo);
    tbb::parallel_for(std::size_t{0}, todo.size(), [&](std::size_t i) {
      const std::size_t k = todo[i];
      try {
        if (share_) {
          SharedPipeline& sp = shared_[pipeline_id_[k]];
          std::call_once(sp.unrolled, [&] {
            sp.plan = std::make_shared<const Plan>(Plan::unroll(sp.pipeline));
            sp.critical_path_s = critical_path_seconds(*sp.plan);
          });
          plans_[k] = sp.plan;
          critical_path_[k] = sp.critical_path_s;
        } else {
          plans_[k] = std::make_shared<const Plan>(Plan::unroll(scenarios_[k].pipeline));
          critical_path_[k] = critical_path_seconds(*plans_[k]);
        }
        // On the configuration's fastest nodes (the path itself is the plan's).
        if (const double fastest = fastest_speed(scenarios_[k].cluster); fastest > 0)
          critical_path_[k] /= fastest;
        if (reuse_) views[i] = sim::simulation_view(scenarios_[k]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    for (std::size_t i = 0; i < todo.size(); ++i) {
      const std::size_t c = todo[i];
      loaded_[c] = 1;
      std::optional<std::size_t> group;
      std::size_t fingerprint = 0;
      if (reuse_) {
        fingerprint = view_fingerprint(views[i]);
        hash_into(fingerprint, pipeline_id_[c]);
        const auto [first, last] = by_fingerprint_.equal_range(fingerprint);
        for (auto it = first; it != last && !group; ++it)
          if (groups_[it->second].view == views[i] &&
              pipeline_id_[groups_[it->second].representative] == pipeline_id_[c])
            group = it->second;
      }
      if (!group) {
        group = groups_.size();
        groups_.push_back({c, reuse_ ? std::move(views[i]) : Scenario{}, {}});
        if (reuse_) by_fingerprint_.emplace(fingerprint, *group);
      }
      group_of_[c] = *group;
      refuse_same_scenario(c);
    }
  }

  // A sweep holds the plan of every configuration that changes the pipeline (one per distinct pipeline)
  // for as long as it runs, and simulates several at a time: refused before any is unrolled when that would
  // not fit the memory (SweepSpec::memory_bytes, else this machine's), rather than killed part way. Each
  // configuration alone passed the loader's check. Only for the sweep that simulates here (share_).
  void check_memory(const std::vector<std::size_t>& todo) {
    const std::uint64_t memory = spec_.memory_bytes != 0 ? spec_.memory_bytes : machine_memory();
    if (!share_ || memory == 0) return;
    std::unordered_set<std::uint32_t> fresh;
    for (const std::size_t k : todo)
      if (shared_[pipeline_id_[k]].plan == nullptr && fresh.insert(pipeline_id_[k]).second) {
        const std::uint64_t tasks = Plan::count_tasks(shared_[pipeline_id_[k]].pipeline);
        held_tasks_ += tasks;
        largest_plan_ = std::max(largest_plan_, tasks);
        ++held_plans_;
      }
    if (fresh.empty()) return;
    const auto runs = static_cast<std::uint64_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
    const double need = static_cast<double>(held_tasks_) * kPlanBytesPerTask +
                        static_cast<double>(runs * largest_plan_) * kRunBytesPerTask;
    if (need <= static_cast<double>(memory)) return;
    char text[512];
    std::snprintf(
        text, sizeof text,
        "the sweep would hold %llu plan%s of %llu tasks in all (one for each pipeline its "
        "configurations make, all at once) and simulate %llu at a time of up to %llu tasks: about "
        "%.3g GB, more than the %.3g GB of memory %s; sweep fewer values at a time (--shard I/N runs "
        "one slice, merge joins the slices)",
        static_cast<unsigned long long>(held_plans_), held_plans_ == 1 ? "" : "s",
        static_cast<unsigned long long>(held_tasks_), static_cast<unsigned long long>(runs),
        static_cast<unsigned long long>(largest_plan_), need / 1e9, static_cast<double>(memory) / 1e9,
        spec_.memory_bytes != 0 ? "given (SweepSpec::memory_bytes)" : "this machine has");
    throw InputError({"--vary", 0, 0}, "", text);
  }
  // Measured: a plan takes ~22 bytes a task (a sweep of 16 loop widths of 1M tasks: +360 MB); a run without
  // attempt records ~95 (two at once beside one plan: 223 MB in all).
  static constexpr double kPlanBytesPerTask = 24, kRunBytesPerTask = 100;
  std::uint64_t held_tasks_ = 0, largest_plan_ = 0, held_plans_ = 0;

  // Two configurations whose scenarios are equal are one configuration given twice: values that differ
  // as text but not as settings (1 and 01, 2Gi and 2048Mi, 60s and 1m). Text that is equal is refused
  // before anything is loaded (checked_combinations); this is the rest. Hashed with the prices, so a
  // sweep of prices alone compares no two configurations.
  void refuse_same_scenario(std::size_t c) {
    const Scenario& s = scenarios_[c];
    std::size_t h = view_fingerprint(s);
    hash_into(h, pipeline_id_[c]);
    for (const NodePool& p : s.cluster.node_pools) {
      hash_into(h, std::bit_cast<std::uint64_t>(p.price_per_hour));
      hash_into(h, std::bit_cast<std::uint64_t>(p.spot_discount));
    }
    const auto [first, last] = by_scenario_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      const std::size_t other = it->second;
      // (Shared pipelines are compared by their copy: equal pipelines have one.)
      if (pipeline_id_[other] != pipeline_id_[c] || !(scenarios_[other] == s))
        continue;  // another configuration's, or one set aside (check_all)
      std::vector<std::size_t> differ;
      for (std::size_t d = 0; d < combos_[c].size(); ++d)
        if (combos_[c][d] != combos_[other][d]) differ.push_back(d);
      if (differ.size() == 1) {
        const Dimension& dim = spec_.dimensions[differ[0]];
        throw InputError(vary_place(dim), dim.path,
                         "values " + shortened(combos_[other][differ[0]]) + " and " +
                             shortened(combos_[c][differ[0]]) +
                             " are the same setting (the scenario is the same with either): give it once");
      }
      throw InputError({"--vary", 0, 0}, "",
                       "configurations " + shortened(assignment_text(spec_.dimensions, combos_[other])) +
                           " and " + shortened(assignment_text(spec_.dimensions, combos_[c])) +
                           " are the same scenario: vary one of the fields, not both");
    }
    by_scenario_.emplace(h, c);
  }

  // Brings each of `which` to `upto` replications (seeds base, base+1, ...): simulates, in parallel,
  // the replications of their groups not simulated yet, then fills each configuration's from them.
  void run(const std::vector<std::size_t>& which, std::size_t upto, std::uint64_t base_seed) {
    load(which);
    std::vector<std::pair<std::size_t, std::size_t>> jobs;  // (group, replication)
    for (std::size_t c : which) {
      if (!infeasible_[c].empty()) continue;
      Group& g = groups_[group_of_[c]];
      if (g.runs.size() < upto) g.runs.resize(upto);
      for (std::size_t r = makespan_[c].size(); r < upto; ++r)
        if (!g.runs[r].simulated) {
          g.runs[r].simulated = true;  // taken: a second member asking for it does not add a job
          jobs.emplace_back(group_of_[c], r);
        }
    }
    // The grid's one run() counts what it needs; auto's runs count against one estimate, across them.
    if (!progress_across_runs) gate_ = std::make_unique<ProgressGate>(progress, jobs.size());
    // The configurations of a replication share its seed, so their first attempts draw the same random
    // numbers (common random numbers): each replication simulated more than once gets them drawn once,
    // in a table its simulations read (AttemptDrawTable; the traces are the same to the bit). The jobs
    // go by replication, in batches whose tables fit kDrawTableBytes; each job writes its own result,
    // so their order changes nothing else.
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    for (std::size_t first = 0; first < jobs.size();) {
      std::vector<std::pair<std::size_t, std::size_t>> tables;  // (replication, the largest plan's group)
      std::size_t last = first, bytes = 0;
      while (last < jobs.size()) {
        std::size_t end = last, largest = jobs[last].first;
        for (; end < jobs.size() && jobs[end].second == jobs[last].second; ++end)
          if (plans_[groups_[jobs[end].first].representative]->size() >
              plans_[groups_[largest].representative]->size())
            largest = jobs[end].first;
        const std::size_t size =
            end - last < 2 ? 0 : plans_[groups_[largest].representative]->size() * sizeof(AttemptDraws);
        if (last > first && bytes + size > kDrawTableBytes) break;
        if (size > 0) tables.emplace_back(jobs[last].second, largest);
        bytes += size;
        last = end;
      }
      simulate(jobs, first, last, tables, base_seed);
      if (stopped()) throw Interrupted();  // a run stopped part way has no figures
      first = last;
    }
    distinct_ += jobs.size();
    for (std::size_t c : which) {
      const std::size_t from = makespan_[c].size();
      if (from >= upto) continue;
      makespan_[c].resize(upto);
      cost_[c].resize(upto);
      // A configuration that cannot run: each of its runs is one that did not finish (no simulation).
      failed_[c].resize(upto, infeasible_[c].empty() ? 0 : 1);
      if (!infeasible_[c].empty()) continue;
      const std::vector<NodePool>& pools = scenarios_[c].cluster.node_pools;
      for (std::size_t r = from; r < upto; ++r) {
        const GroupRun& g = groups_[group_of_[c]].runs[r];
        makespan_[c][r] = g.makespan_s;
        failed_[c][r] = g.failed;
        // shardflow::cost() of the trace this configuration's own simulation would give: the same nodes
        // in the same order, each at its pool's price here.
        CostSum cost;
        for (const auto& [pool, billed] : g.bills) cost.add(sim::node_price_per_hour(pools[pool]), billed);
        cost_[c][r] = cost.total();
      }
      simulations_ += upto - from;
    }
    // Without reuse no other configuration will ask for these runs: keep the figures, not the bills.
    if (!reuse_)
      for (const auto& [gi, r] : jobs)
        std::vector<std::pair<std::size_t, Duration>>().swap(groups_[gi].runs[r].bills);
  }

  // Simulates jobs [first, last) in parallel, with the draw tables of `tables` (replication, group whose
  // plan sizes the table) made first.
  void simulate(const std::vector<std::pair<std::size_t, std::size_t>>& jobs, std::size_t first,
                std::size_t last, const std::vector<std::pair<std::size_t, std::size_t>>& tables,
                std::uint64_t base_seed) {
    std::vector<AttemptDrawTable> draws(tables.size());
    tbb::parallel_for(std::size_t{0}, tables.size(), [&](std::size_t k) {
      draws[k] =
          make_draw_table(*plans_[groups_[tables[k].second].representative], base_seed + tables[k].first);
    });
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(first, last), [&](const tbb::blocked_range<std::size_t>& range) {
          const std::unique_ptr<Backend> b = make_();
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            if (stopped()) return;
            const auto [gi, r] = jobs[i];
            const Group& g = groups_[gi];
            RunOptions o;
            o.seed = base_seed + r;
            o.stop = spec_.stop;
            o.records = false;  // the makespan and the nodes are all a sweep reads of a run
            for (std::size_t k = 0; k < tables.size(); ++k)
              if (tables[k].first == r) o.draws = &draws[k];
            const Trace t = b->run(scenarios_[g.representative], *plans_[g.representative], o);
            if (stopped()) return;  // cut short by the stop: not a run done (nothing is written)
            GroupRun& out = groups_[gi].runs[r];
            out.makespan_s = makespan_s(t);
            out.failed = t.tasks_failed > 0 ? 1 : 0;
            out.bills.reserve(t.nodes.size());
            const std::vector<NodePool>& pools = scenarios_[g.representative].cluster.node_pools;
            for (const NodeRecord& n : t.nodes) {
              const auto pool =
                  static_cast<std::size_t>(std::find_if(pools.begin(), pools.end(),
                                                        [&](const NodePool& p) { return p.name == n.pool; }) -
                                           pools.begin());
              if (pool == pools.size())
                throw std::logic_error("sweep: the trace has a node of pool " + n.pool +
                                       ", which the scenario lacks");
              out.bills.emplace_back(pool, n.down - n.billed_from);
            }
            gate_->finished();
          }
        });
  }

  [[nodiscard]] bool stopped() const { return spec_.stop != nullptr && spec_.stop->load(); }

  // The mean cost of its first runs that finished (all of them when none did), as finished_cost_mean.
  double mean_cost(std::size_t c, std::size_t first_runs) const {
    double sum = 0, all = 0;
    std::size_t n = 0;
    for (std::size_t r = 0; r < first_runs; ++r) {
      all += cost_[c][r];
      if (failed_[c][r] == 0) {
        sum += cost_[c][r];
        ++n;
      }
    }
    return n == 0 ? all / static_cast<double>(first_runs) : sum / static_cast<double>(n);
  }

  // Whether configuration c can still meet the deadline after the replications run so far: no more runs
  // missed it (over it, or with a failed task) than runs_needed lets through.
  bool may_meet(std::size_t c) const {
    if (!infeasible_[c].empty()) return false;
    const auto reps = static_cast<std::size_t>(spec_.replications);
    const std::size_t needed = runs_needed(reps, spec_.quantile, spec_.confidence);
    if (needed > reps) return false;
    std::size_t missed = 0;
    for (std::size_t r = 0; r < makespan_[c].size(); ++r)
      missed += failed_[c][r] != 0 || makespan_[c][r] > *spec_.deadline_s ? 1 : 0;
    return missed <= reps - needed;
  }

  [[nodiscard]] bool infeasible(std::size_t c) const { return !infeasible_[c].empty(); }
  // Configuration c's scenario; one that cannot run read past its problems, as `validate` reads (its name,
  // seed and cluster are there).
  [[nodiscard]] Scenario scenario_read(std::size_t c) const {
    if (infeasible_[c].empty()) return scenarios_[c];
    LoadOptions options = options_for(c);
    std::vector<InputError> problems;
    options.problems = &problems;
    return load_scenario_text(yaml_, file_, options);
  }

  ConfigResult result(std::size_t c) const {
    ConfigResult cr;
    cr.values = combos_[c];
    if (!infeasible_[c].empty()) {  // no figures: it did not run
      cr.infeasible = infeasible_[c];
      return cr;
    }
    const std::vector<double>& ms = makespan_[c];
    const auto failed = [&](std::size_t r) { return failed_[c][r] != 0; };
    cr.makespan_s = detail::summarize_amounts(ms);
    cr.cost = detail::summarize_amounts(cost_[c]);
    cr.finished_cost_mean = detail::finished_mean(cost_[c], failed);
    cr.quantile_makespan_s = detail::late_quantile(ms, spec_.quantile, failed);
    cr.critical_path_s = critical_path_[c];
    cr.no_limit = no_limit_[c];
    for (std::uint8_t f : failed_[c]) cr.runs_with_failed_tasks += f;
    if (spec_.deadline_s) {
      cr.p_meets_deadline = detail::share_meeting(ms, *spec_.deadline_s, failed);
      cr.meets = detail::runs_meeting(cr.p_meets_deadline, ms.size()) >=
                 runs_needed(ms.size(), spec_.quantile, spec_.confidence);
    }
    return cr;
  }

  std::function<void(double)> progress;          // for a run() against the simulations it needs
  std::function<void(const std::string&)> warn;  // the importer's warnings (LoadOptions::warn), if wanted
  bool progress_across_runs = false;             // gate_ was set for every run() (the auto search's estimate)
  std::unique_ptr<ProgressGate> gate_;           // of the run() under way

 private:
  // One replication of a group, as simulated by its representative: what each member's figures need.
  struct GroupRun {
    bool simulated = false;
    double makespan_s = 0;
    std::uint8_t failed = 0;
    std::vector<std::pair<std::size_t, Duration>> bills;  // per node in trace order: its pool, billed time
  };
  struct Group {
    std::size_t representative = 0;  // the configuration simulated
    Scenario view;                   // its simulation view (with reuse)
    std::vector<GroupRun> runs;      // by replication
  };

  const std::string& yaml_;
  const std::string& file_;
  const SweepSpec& spec_;
  std::vector<std::vector<std::string>> combos_;
  BackendFactory make_;
  bool reuse_;
  bool share_ = false;  // configurations share equal pipelines and their plans (with the simulator)
  std::vector<Scenario> scenarios_;
  // Each configuration's plan. With the simulator (share_), a configuration's scenario has an empty
  // pipeline: its pipeline is shared_[pipeline_id_[c]], one copy per distinct pipeline, whose one plan
  // the configurations with it point to (a sweep of a 50,000-task import kept a copy of the pipeline,
  // its plan and its simulation view per configuration, 190 MB each).
  struct SharedPipeline {
    Pipeline pipeline;
    std::shared_ptr<const Plan> plan;
    double critical_path_s = 0;  // the plan's (critical_path_seconds), at speed 1
    std::once_flag unrolled;
  };
  static constexpr std::uint32_t kOwnPipeline = 0xFFFFFFFFu;  // not shared: the scenario has its own
  // The shared copy of pipeline p, made if no equal one is there yet; its id in `id`. (Its address
  // stays: a deque's elements do not move as it grows.)
  SharedPipeline& share_pipeline(Pipeline&& p, std::uint32_t& id) {
    std::size_t h = kFnv1aBasis;
    hash_steps(h, p.steps);
    const std::lock_guard lock(shared_mu_);
    const auto [first, last] = pipeline_by_hash_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (shared_[it->second].pipeline == p) {
        id = it->second;
        return shared_[id];
      }
    id = static_cast<std::uint32_t>(shared_.size());
    pipeline_by_hash_.emplace(h, id);
    SharedPipeline& sp = shared_.emplace_back();
    sp.pipeline = std::move(p);
    return sp;
  }
  std::deque<SharedPipeline> shared_;  // a deque: the loading threads hold references into it
  std::unordered_multimap<std::size_t, std::uint32_t> pipeline_by_hash_;
  std::mutex shared_mu_;
  std::vector<std::shared_ptr<const Plan>> plans_;
  std::vector<std::uint32_t> pipeline_id_;   // per configuration: its shared pipeline, or kOwnPipeline
  std::vector<double> critical_path_;        // each loaded configuration's, on its fastest nodes
  std::vector<std::vector<bool>> no_limit_;  // each loaded configuration's, per dimension (ConfigResult)
  std::vector<std::uint8_t> loaded_;
  std::vector<std::size_t> group_of_;
  std::vector<Group> groups_;
  std::unordered_multimap<std::size_t, std::size_t> by_fingerprint_;  // view_fingerprint -> group
  std::unordered_multimap<std::size_t, std::size_t> by_scenario_;     // with prices -> configuration
  std::vector<std::vector<double>> makespan_, cost_;
  std::vector<std::vector<std::uint8_t>> failed_;
  std::vector<std::string> infeasible_;  // per configuration: why it cannot run, or empty
  std::uint64_t simulations_ = 0;
  std::uint64_t distinct_ = 0;
};

// The auto search (docs/planner.md). Returns the configurations it ran with every replication.
std::vector<std::size_t> auto_search(Runner& run, const SweepSpec& spec, std::uint64_t base_seed) {
  const std::size_t ndims = spec.dimensions.size();
  const auto reps = static_cast<std::size_t>(spec.replications);
  // The monotone fields, each value's rank along the field (parallelism 0 is no limit: the highest).
  std::vector<int> mono;
  std::vector<std::vector<std::size_t>> rank_of(ndims);   // value position -> rank
  std::vector<std::vector<std::size_t>> value_at(ndims);  // rank -> value position
  for (std::size_t d = 0; d < ndims; ++d) {
    const Dimension& dim = spec.dimensions[d];
    if (!monotone_path(dim.path)) continue;
    std::vector<double> key;
    for (const std::string& v : dim.values) {
      double x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || end != v.data() + v.size() || x < 0)
        throw InputError({"--search", 0, 0}, "",
                         "auto needs numbers along " + dim.path + ", got \"" + v + "\"; use --search grid");
      const bool unlimited = x == 0 && dim.path.ends_with(".parallelism");
      key.push_back(unlimited ? std::numeric_limits<double>::infinity() : x);
    }
    std::vector<std::size_t> order(key.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    for (std::size_t i = 1; i < order.size(); ++i)
      if (key[order[i]] == key[order[i - 1]])
        throw InputError({"--search", 0, 0}, "",
                         "auto needs different values along " + dim.path + ", got \"" + dim.values[order[i]] +
                             "\" twice; use --search grid");
    value_at[d] = order;
    rank_of[d].resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) rank_of[d][order[i]] = i;
    mono.push_back(static_cast<int>(d));
  }
  if (mono.empty())
    throw InputError({"--search", 0, 0}, "",
                     "auto needs a --vary of a node pool's count or a parallelism (it assumes the makespan "
                     "does not grow along them); use --search grid");

  // The configuration index of a combination of value positions (the last dimension fastest).
  const auto index_of = [&](const std::vector<std::size_t>& pos) {
    std::size_t k = 0;
    for (std::size_t d = 0; d < ndims; ++d) k = k * spec.dimensions[d].values.size() + pos[d];
    return k;
  };
  // The bisected field: the monotone one with the most values (the first of those).
  std::size_t b = static_cast<std::size_t>(mono.front());
  for (int d : mono)
    if (spec.dimensions[static_cast<std::size_t>(d)].values.size() > spec.dimensions[b].values.size())
      b = static_cast<std::size_t>(d);
  const std::size_t nb = spec.dimensions[b].values.size();

  // Whether a configuration meets the deadline, with every replication; one that cannot is stopped
  // early, in blocks of 4 replications (a fixed block: the count of simulations is the same on any
  // number of threads).
  const auto meets = [&](std::size_t c) {
    for (std::size_t r = run.done(c); r < reps && run.may_meet(c);)
      run.run({c}, r = std::min(reps, r + 4), base_seed);
    return run.done(c) == reps && run.may_meet(c);
  };

  // Lines: every combination of the other fields; along each, the smallest rank of b that meets
  // (nb: none). A line's threshold is at most that of a line one rank lower in another monotone field
  // (monotonicity), so lines go in order of those ranks: galloping down from that bound, else bisection.
  std::vector<std::size_t> line_dims;
  for (std::size_t d = 0; d < ndims; ++d)
    if (d != b) line_dims.push_back(d);
  std::size_t nlines = 1;
  for (std::size_t d : line_dims) nlines *= spec.dimensions[d].values.size();
  // Lines by position in line_dims' mixed radix, where each monotone field counts in rank order: a
  // line's lower neighbours come before it.
  const auto line_pos = [&](std::size_t line) {
    std::vector<std::size_t> pos(ndims, 0);
    for (std::size_t i = line_dims.size(); i-- > 0;) {
      const std::size_t d = line_dims[i];
      const std::size_t n = spec.dimensions[d].values.size();
      pos[d] = line % n;
      line /= n;
    }
    return pos;  // ranks for monotone fields, positions for the others
  };
  const auto line_of = [&](const std::vector<std::size_t>& pos) {
    std::size_t line = 0;
    for (std::size_t d : line_dims) line = line * spec.dimensions[d].values.size() + pos[d];
    return line;
  };
  const auto config_at = [&](std::vector<std::size_t> pos, std::size_t rank_b) {
    for (int d : mono)
      if (static_cast<std::size_t>(d) != b)
        pos[static_cast<std::size_t>(d)] =
            value_at[static_cast<std::size_t>(d)][pos[static_cast<std::size_t>(d)]];
    pos[b] = value_at[b][rank_b];
    return index_of(pos);
  };
  std::vector<std::size_t> threshold(nlines, nb);
  // Lines that differ in a non-monotone field are independent: run those groups in parallel... but the
  // runner already runs each configuration's replications in parallel, and a fixed order keeps the count
  // of simulations deterministic, so the lines go one after another.
  for (std::size_t line = 0; line < nlines; ++line) {
    const std::vector<std::size_t> pos = line_pos(line);
    std::size_t hi = nb;  // known (or assumed) to meet at rank hi; nb: unknown
    bool bounded = false;
    for (int dm : mono) {
      const auto d = static_cast<std::size_t>(dm);
      if (d == b || pos[d] == 0) continue;
      std::vector<std::size_t> lower = pos;
      --lower[d];
      hi = std::min(hi, threshold[line_of(lower)]);
      bounded = true;
    }
    std::size_t lo = 0;
    if (bounded && hi < nb) {
      // Gallop down from hi: 1, 2, 4, ... ranks below it.
      std::size_t step = 1;
      while (hi >= step && meets(config_at(pos, hi - step))) {
        hi -= step;
        step *= 2;
      }
      lo = hi >= step ? hi - step + 1 : 0;
    }
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (meets(config_at(pos, mid)))
        hi = mid;
      else
        lo = mid + 1;
    }
    threshold[line] = hi;
  }

  // Candidates: every configuration at or above its line's threshold meets (by the assumption); the
  // cheapest is found by successive halving on mean cost over the first r replications (common random
  // numbers: every candidate on the same seeds), r growing 4-fold, a quarter (at least 16) kept each round.
  std::vector<std::size_t> candidates;
  for (std::size_t line = 0; line < nlines; ++line)
    for (std::size_t rb = threshold[line]; rb < nb; ++rb)
      if (const std::size_t c = config_at(line_pos(line), rb); !run.infeasible(c)) candidates.push_back(c);
  std::sort(candidates.begin(), candidates.end());
  for (std::size_t r = 1; candidates.size() > 1 && r < reps; r *= 4) {
    run.run(candidates, r, base_seed);
    std::vector<std::pair<double, std::size_t>> by_cost;
    for (std::size_t c : candidates) by_cost.emplace_back(run.mean_cost(c, r), c);
    std::sort(by_cost.begin(), by_cost.end());
    const std::size_t keep = std::min(by_cost.size(), std::max<std::size_t>(16, (by_cost.size() + 3) / 4));
    candidates.clear();
    for (std::size_t i = 0; i < keep; ++i) candidates.push_back(by_cost[i].second);
    std::sort(candidates.begin(), candidates.end());
  }
  run.run(candidates, reps, base_seed);
  if (candidates.empty()) {
    // Nothing meets the deadline. The nearest configuration and the trends along each field (finish_sweep)
    // are read from configurations run with every replication, and the probes were stopped early: run
    // each line's highest value of the bisected field (its best chance) in full; then, around the nearest
    // of those run in full, every value of each field with the others held, until the nearest stays the
    // same (each round's nearest is nearer than the last's, so this ends).
    std::vector<std::size_t> tops;
    for (std::size_t line = 0; line < nlines; ++line) tops.push_back(config_at(line_pos(line), nb - 1));
    run.run(tops, reps, base_seed);
    const auto order = [&](std::size_t c) {
      const ConfigResult r = run.result(c);
      return std::make_tuple(!r.infeasible.empty(), r.runs_with_failed_tasks, r.quantile_makespan_s,
                             r.finished_cost_mean, c);
    };
    for (;;) {
      std::size_t near = 0;
      std::optional<decltype(order(0))> best;  // the nearest's order, worked out once
      for (std::size_t c = 0; c < run.combos().size(); ++c)
        if (run.done(c) == reps)
          if (auto o = order(c); !best || o < *best) {
            best = std::move(o);
            near = c;
          }
      std::vector<std::size_t> pos(ndims);
      for (std::size_t d = ndims, k = near; d-- > 0;) {
        pos[d] = k % spec.dimensions[d].values.size();
        k /= spec.dimensions[d].values.size();
      }
      std::vector<std::size_t> cross;
      for (std::size_t d = 0; d < ndims; ++d)
        for (std::size_t v = 0; v < spec.dimensions[d].values.size(); ++v) {
          std::vector<std::size_t> at = pos;
          at[d] = v;
          if (const std::size_t c = index_of(at); run.done(c) < reps) cross.push_back(c);
        }
      if (cross.empty()) break;
      std::sort(cross.begin(), cross.end());
      cross.erase(std::unique(cross.begin(), cross.end()), cross.end());
      run.run(cross, reps, base_seed);
    }
  }

  std::vector<std::size_t> full;
  for (std::size_t c = 0; c < run.combos().size(); ++c)
    if (run.done(c) == reps) full.push_back(c);
  return full;
}

}  // namespace

// --confidence: about a deadline, below 100, and with enough replications to be that sure at all.
static void check_confidence(const SweepSpec& spec) {
  if (!spec.confidence) return;
  const double c = *spec.confidence;
  const std::string text = detail::shortest(c);
  if (!(c > 0 && c < 100))
    throw InputError({"--confidence", 0, 0}, "", std::string("must be above 0 and below 100, got ") + text);
  if (!spec.deadline_s)
    throw InputError({"--confidence", 0, 0}, "",
                     "is how sure to be that a configuration meets the deadline: give --deadline too");
  const std::string q = detail::shortest(spec.quantile);
  if (spec.quantile >= 100)
    throw InputError(
        {"--confidence", 0, 0}, "",
        std::string("no number of runs can show that every run meets the deadline (--quantile ") + q +
            "): give a --quantile below 100");
  const auto reps = static_cast<std::size_t>(spec.replications);
  if (runs_needed(reps, spec.quantile, spec.confidence) > reps) {
    const std::size_t least = replications_for_confidence(spec.quantile, c);
    throw InputError({"--confidence", 0, 0}, "",
                     std::string(text) + "% that " + q + "% of runs meet the deadline needs at least " +
                         std::to_string(least) + " replications, all of them by the deadline; -r is " +
                         std::to_string(spec.replications) + ": give -r " + std::to_string(least) +
                         " or more (more runs let a configuration miss now and then: with -r " +
                         std::to_string(4 * least) + ", " +
                         std::to_string(4 * least - runs_needed(4 * least, spec.quantile, spec.confidence)) +
                         " of them may miss)");
  }
}

// The checks run_sweep makes of its options before it loads anything, and every combination of the
// values, the last dimension fastest.
static std::vector<std::vector<std::string>> checked_combinations(const SweepSpec& spec) {
  if (spec.replications < 1 || spec.replications > 100000)
    throw InputError({"--replications", 0, 0}, "",
                     "must be from 1 to 100000, got " + std::to_string(spec.replications));
  if (spec.quantile <= 0 || spec.quantile > 100)
    throw InputError({"--quantile", 0, 0}, "", "must be in (0, 100]");
  check_confidence(spec);
  if (spec.budget && !(*spec.budget >= 0 && std::isfinite(*spec.budget)))
    throw InputError({"--budget", 0, 0}, "",
                     "must be a cost of 0 or more, got " + detail::shortest(*spec.budget));
  if (spec.budget && spec.deadline_s)
    throw InputError(
        {"--budget", 0, 0}, "",
        "is for a sweep without --deadline (the fastest configuration within the budget); with a "
        "deadline the sweep recommends the cheapest that meets it, and its cost says whether it "
        "fits");
  // A field varied twice would be set by the last --vary alone, and a value given twice makes the same
  // configuration twice: both are mistakes.
  // (The same field in two spellings, cluster.node_pools[cpu] and [0], is found as the scenario is
  // loaded: Runner::load.)
  for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
    const Dimension& dim = spec.dimensions[d];
    for (std::size_t e = 0; e < d; ++e)
      if (spec.dimensions[e].path == dim.path)
        throw given_twice(dim, vary_place(spec.dimensions[e]).file, false, "");
    std::unordered_set<std::string_view> seen;
    for (const std::string& v : dim.values)
      if (!seen.insert(v).second)
        throw InputError(vary_place(dim), dim.path, "value " + shortened(v) + " is given twice");
  }
  if (spec.search == Search::automatic && spec.budget)
    throw InputError({"--search", 0, 0}, "",
                     "auto searches for the cheapest configuration that meets a deadline; the fastest within "
                     "a --budget needs --search grid");
  if (spec.search == Search::automatic && !spec.deadline_s)
    throw InputError(
        {"--search", 0, 0}, "",
        "auto searches for the cheapest configuration that meets a deadline: give --deadline, or "
        "use --search grid");
  if (spec.search == Search::automatic && spec.shard)
    throw InputError(
        {"--search", 0, 0}, "",
        "auto decides what to run from what it has run, so it cannot be sliced with --shard; use "
        "--search grid");
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
  if (spec.shard && static_cast<std::size_t>(spec.shard->count) > combos.size())
    throw InputError({"--shard", 0, 0}, "",
                     std::to_string(spec.shard->index) + "/" + std::to_string(spec.shard->count) +
                         ": the sweep has " + std::to_string(combos.size()) + " configuration" +
                         (combos.size() == 1 ? "" : "s") + ", fewer than " +
                         std::to_string(spec.shard->count) + " slices");

  return combos;
}

SweepResult run_sweep_text(const std::string& yaml, const std::string& file, const SweepSpec& spec,
                           const std::function<void(double)>& progress, const BackendFactory& backend) {
  std::vector<std::vector<std::string>> combos = checked_combinations(spec);
  SweepResult result;
  result.dimensions = spec.dimensions;
  result.replications = spec.replications;
  result.deadline_s = spec.deadline_s;
  result.quantile = spec.quantile;
  result.confidence = spec.confidence;
  result.budget = spec.budget;
  result.search = spec.search;
  result.shard = spec.shard;
  result.inputs_hash = inputs_hash(yaml, spec);

  result.configurations_in_space = combos.size();
  Runner run(yaml, file, spec, combos, backend);
  // The first configuration names the scenario and its seed (loaded first: its errors come first).
  run.load({0});
  {
    const Scenario first = run.scenario_read(0);
    result.scenario = first.name;
    result.base_seed = spec.base_seed.value_or(first.seed);
  }
  detail::check_seed_range(result.base_seed, spec.replications, file, spec.base_seed.has_value());

  std::vector<std::size_t> full;
  if (spec.search == Search::automatic) {
    // Progress: against the grid's count, which auto stays well below.
    run.gate_ = std::make_unique<ProgressGate>(
        progress, combos.size() * static_cast<std::uint64_t>(spec.replications) / 5 + 1, true);
    run.progress_across_runs = true;
    full = auto_search(run, spec, result.base_seed);
  } else {
    for (std::size_t c = 0; c < combos.size(); ++c)
      if (!spec.shard ||
          c % static_cast<std::size_t>(spec.shard->count) == static_cast<std::size_t>(spec.shard->index))
        full.push_back(c);
    run.progress = progress;  // against the simulations it needs (run() counts them)
    run.run(full, static_cast<std::size_t>(spec.replications), result.base_seed);
  }
  if (progress) progress(1.0);
  for (std::size_t c : full) result.configs.push_back(run.result(c));
  result.simulations = run.simulations();
  result.distinct_simulations = run.distinct_simulations();
  finish_sweep(result);
  return result;
}

std::size_t configurations_that_cannot_run(const SweepResult& r) {
  return static_cast<std::size_t>(std::count_if(r.configs.begin(), r.configs.end(),
                                                [](const ConfigResult& c) { return !c.infeasible.empty(); }));
}

void finish_sweep(SweepResult& result) {
  for (ConfigResult& c : result.configs)
    c.quantile_on_failed_run =
        c.infeasible.empty() &&
        failures_reach_quantile(c.runs_with_failed_tasks, result.replications, result.quantile);
  result.recommended.reset();
  if (result.budget && !result.deadline_s)  // the fastest within the budget
    for (std::size_t c = 0; c < result.configs.size(); ++c) {
      const ConfigResult& cr = result.configs[c];
      if (!cr.infeasible.empty() || cr.finished_cost_mean > *result.budget ||
          failures_reach_quantile(cr.runs_with_failed_tasks, result.replications, result.quantile))
        continue;
      const ConfigResult* best = result.recommended ? &result.configs[*result.recommended] : nullptr;
      if (best == nullptr || cr.quantile_makespan_s < best->quantile_makespan_s ||
          (cr.quantile_makespan_s == best->quantile_makespan_s &&
           cr.finished_cost_mean < best->finished_cost_mean))
        result.recommended = c;
    }
  for (std::size_t c = 0; c < result.configs.size(); ++c) {
    const ConfigResult& cr = result.configs[c];
    if (!cr.meets || !cr.infeasible.empty()) continue;
    if (!result.recommended) {
      result.recommended = c;
      continue;
    }
    const ConfigResult& best = result.configs[*result.recommended];
    if (cr.finished_cost_mean < best.finished_cost_mean ||
        (cr.finished_cost_mean == best.finished_cost_mean &&
         cr.quantile_makespan_s < best.quantile_makespan_s))
      result.recommended = c;
  }
  std::vector<CostTime> pts;
  std::vector<bool> without_failures;
  for (const ConfigResult& c : result.configs) {
    pts.push_back({c.finished_cost_mean, c.quantile_makespan_s});
    without_failures.push_back(
        c.infeasible.empty() &&
        !failures_reach_quantile(c.runs_with_failed_tasks, result.replications, result.quantile));
  }
  result.pareto = pareto_front(pts, without_failures);

  result.nearest.reset();
  if (!result.deadline_s || result.recommended) return;
  // The nearest among the configurations that ran (none: nothing could run).
  std::optional<std::size_t> nearest;
  for (std::size_t c = 0; c < result.configs.size(); ++c) {
    const ConfigResult& a = result.configs[c];
    if (!a.infeasible.empty()) continue;
    const ConfigResult* m = nearest ? &result.configs[*nearest] : nullptr;
    if (m == nullptr ||
        std::tie(a.runs_with_failed_tasks, a.quantile_makespan_s, a.finished_cost_mean) <
            std::tie(m->runs_with_failed_tasks, m->quantile_makespan_s, m->finished_cost_mean))
      nearest = c;
  }
  if (!nearest) return;
  const std::size_t n = *nearest;
  Nearest near;
  near.config = n;
  near.over_deadline_s = result.configs[n].quantile_makespan_s - *result.deadline_s;
  const std::vector<std::string>& at = result.configs[n].values;
  for (std::size_t d = 0; d < result.dimensions.size(); ++d) {
    Nearest::Field f;
    f.path = result.dimensions[d].path;
    for (const std::string& v : result.dimensions[d].values) {
      std::vector<std::string> want = at;
      want[d] = v;
      for (const ConfigResult& c : result.configs)
        if (c.values == want && c.infeasible.empty()) {
          if (c.quantile_on_failed_run) {
            f.failed_values.push_back(v);
            break;
          }
          f.values.push_back(v);
          f.quantile_makespan_s.push_back(c.quantile_makespan_s);
          f.critical_path_s.push_back(c.critical_path_s);
          f.no_limit.push_back(d < c.no_limit.size() ? c.no_limit[d] : is_no_limit(f.path, v));
          break;
        }
    }
    // Along the field's scale (smallest first, no limit last), whatever order --vary gave them in;
    // values with no scale (names, mappings) have no trend, only a best.
    const std::optional<std::vector<double>> scale = value_scale(f.path, f.values);
    if (scale) {
      std::vector<std::size_t> order(f.values.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return (*scale)[a] < (*scale)[b]; });
      Nearest::Field sorted;
      sorted.path = f.path;
      sorted.failed_values = f.failed_values;
      for (std::size_t i : order) {
        sorted.values.push_back(f.values[i]);
        sorted.quantile_makespan_s.push_back(f.quantile_makespan_s[i]);
        sorted.critical_path_s.push_back(f.critical_path_s[i]);
        sorted.no_limit.push_back(f.no_limit[i]);
      }
      f = std::move(sorted);
    }
    const std::vector<double>& q = f.quantile_makespan_s;
    const double tol = makespan_tolerance(q);
    bool up = true, down = true;
    for (std::size_t i = 1; i < q.size(); ++i) {
      up = up && q[i] >= q[i - 1] - tol;
      down = down && q[i] <= q[i - 1] + tol;
    }
    // Falling, then flat over the last values: more of the field will not help.
    const bool levels_off = down && !up && q.size() >= 3 && flat_from(q) + 1 < q.size();
    f.trend = q.empty()      ? "none"
              : q.size() < 2 ? "one value"
              : up && down   ? "flat"
              : !scale       ? "unordered"
              : levels_off   ? "levels off"
              : down         ? "falls"
              : up           ? "rises"
                             : "lowest inside";
    near.fields.push_back(std::move(f));
  }
  result.nearest = std::move(near);
}

std::size_t check_sweep_text(const std::string& yaml, const std::string& file, const SweepSpec& spec) {
  std::vector<std::vector<std::string>> combos = checked_combinations(spec);
  const std::size_t n = combos.size();
  Runner run(yaml, file, spec, std::move(combos), {}, Runner::loads_only);
  run.check_all();
  // Nothing for the Job's pods to simulate: said now, not found in its results.
  std::size_t c = 0;
  while (c < n && run.infeasible(c)) ++c;
  if (c == n && n > 0)
    throw InputError({}, "--vary",
                     "no configuration of this sweep can run (the first: " + run.result(0).infeasible + ")");
  return n;
}

Scenario first_configuration(const std::string& yaml, const std::string& file, const SweepSpec& spec,
                             const std::function<void(const std::string&)>& warn) {
  std::vector<std::vector<std::string>> combos = checked_combinations(spec);
  combos.resize(1);
  Runner run(yaml, file, spec, std::move(combos), {}, Runner::loads_only);
  run.warn = warn;
  run.load({0});
  return run.scenario_read(0);
}

SweepResult run_sweep(const std::string& scenario_file, const SweepSpec& spec,
                      const std::function<void(double)>& progress, const BackendFactory& backend) {
  return run_sweep_text(read_scenario_file(scenario_file), scenario_file, spec, progress, backend);
}

// The 95% interval of a configuration's share of runs by the deadline.
static ShareInterval p_meets_interval(const ConfigResult& cr, int replications) {
  return detail::share_interval(cr.p_meets_deadline, replications);
}

// The sweep keeps no run's makespan: when even its fastest run ended past the deadline, no failed run was
// by it; else all of them may have been.
static bool failures_keep_out(const ConfigResult& c, std::size_t reps, std::size_t needed,
                              std::optional<double> deadline_s) {
  const auto failed = static_cast<std::size_t>(std::max(c.runs_with_failed_tasks, 0));
  const std::size_t by_deadline = deadline_s && c.makespan_s.min > *deadline_s ? 0 : failed;
  return detail::failures_keep_out(c.meets, by_deadline, c.p_meets_deadline, reps, needed);
}

void print_sweep(std::ostream& out, const SweepResult& r) {
  out << "sweep of " << one_line(printable(r.scenario)) << ": " << r.configs.size() << " configuration"
      << (r.configs.size() == 1 ? "" : "s") << " x " << r.replications << " replication"
      << (r.replications == 1 ? "" : "s") << " (" << detail::seeds_text(r.base_seed, r.replications)
      << ", the same for every configuration)\n"
      << detail::few_replications_note(r.replications);
  if (r.shard)
    out << "slice " << r.shard->index << "/" << r.shard->count << " of " << r.configurations_in_space
        << " configurations (configurations " << r.shard->index << ", " << r.shard->index + r.shard->count
        << ", ...; `shardflow merge` combines the slices)\n";
  if (r.search == Search::automatic) {
    const double grid = static_cast<double>(r.configurations_in_space) * r.replications;
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%",
                  grid > 0 ? 100.0 * static_cast<double>(r.simulations) / grid : 0.0);
    const std::size_t unable = configurations_that_cannot_run(r);
    out << "auto search: " << r.simulations << " simulations, " << share << " of the grid's "
        << static_cast<std::uint64_t>(grid) << (unable > 0 ? " (less those that cannot run)" : "")
        << "; the table shows the " << r.configs.size() - unable << " of " << r.configurations_in_space
        << " configurations run with every replication"
        << (unable > 0 ? " and " + std::to_string(unable) + " found unable to run" : std::string()) << "\n";
  }
  out << "\n";
  std::vector<std::string> head;
  for (const Dimension& d : r.dimensions) head.push_back(d.path);
  const std::string q = detail::quantile_label(r.quantile);
  for (const char* h : {"makespan mean s", "95% CI", "p50", "p95"}) head.emplace_back(h);
  // A --quantile other than 50 or 95 has a column of its own (it replaced p95, and --quantile 50 gave
  // two p50 columns and no p95).
  // Runs with failed tasks, when any had some: a makespan of runs whose tasks failed is no plan to meet.
  const bool any_failed = std::any_of(r.configs.begin(), r.configs.end(),
                                      [](const ConfigResult& c) { return c.runs_with_failed_tasks > 0; });
  // With failed runs the judged quantile (failed runs late) is not the p95 of every run: its own column
  // too, and the cost that picks beside the mean of every run.
  const bool own_quantile = (r.quantile != 50 && r.quantile != 95) || any_failed;
  if (own_quantile) head.push_back(any_failed ? q + ", failed late" : q);
  head.emplace_back("cost mean");
  if (any_failed) head.emplace_back("of finished runs");
  if (any_failed) head.emplace_back("runs with failed tasks");
  const auto reps = static_cast<std::size_t>(r.replications);
  const std::size_t needed = runs_needed(reps, r.quantile, r.confidence);
  if (r.deadline_s) {
    head.emplace_back("P(by deadline)");
    head.emplace_back("its 95% CI");
    head.emplace_back("meets");
  }
  std::vector<std::vector<std::string>> rows;
  char buf[64];
  const auto num = [&](double v, int decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  std::vector<std::size_t> cannot_run;
  for (std::size_t c = 0; c < r.configs.size(); ++c) {
    const ConfigResult& cr = r.configs[c];
    std::vector<std::string> row = cr.values;
    if (!cr.infeasible.empty()) {  // not simulated: no figures, and why below the table
      cannot_run.push_back(c);
      row.resize(head.size(), "-");
      if (r.deadline_s) row.back() = "no (cannot run)";
      rows.push_back(std::move(row));
      continue;
    }
    row.push_back(num(cr.makespan_s.mean, 1));
    row.push_back(cr.makespan_s.n < 2
                      ? std::string("n/a")
                      : num(cr.makespan_s.ci95_low, 1) + ".." + num(cr.makespan_s.ci95_high, 1));
    row.push_back(num(cr.makespan_s.p50, 1));
    row.push_back(num(cr.makespan_s.p95, 1));
    // "none": the quantile falls on a run whose tasks failed; "-": no run finished.
    if (own_quantile)
      row.push_back(failures_reach_quantile(cr.runs_with_failed_tasks, r.replications, r.quantile)
                        ? std::string("none")
                        : num(cr.quantile_makespan_s, 1));
    row.push_back(detail::cost_text(cr.cost.mean));
    if (any_failed)
      row.push_back(cr.runs_with_failed_tasks >= r.replications ? std::string("-")
                                                                : detail::cost_text(cr.finished_cost_mean));
    if (any_failed)
      row.push_back(cr.runs_with_failed_tasks == 0 ? std::string("-")
                                                   : std::to_string(cr.runs_with_failed_tasks) + " of " +
                                                         std::to_string(r.replications));
    if (r.deadline_s) {
      // One decimal: 18 runs of 19 are 94.7%, not a "95%" beside a "no".
      row.push_back(num(cr.p_meets_deadline * 100, 1) + "%");
      const ShareInterval ci = p_meets_interval(cr, r.replications);
      row.push_back(num(ci.low * 100, 1) + ".." + num(ci.high * 100, 1) + "%");
      // "(tasks failed)": the makespans alone would have met it; the failed runs, late, did not.
      row.push_back(std::string(cr.meets ? "yes" : "no") + (r.recommended == c ? " <- cheapest" : "") +
                    (failures_keep_out(cr, reps, needed, r.deadline_s) ? " (tasks failed)" : ""));
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
  if (!cannot_run.empty()) {
    out << "\n"
        << cannot_run.size() << " configuration" << (cannot_run.size() == 1 ? "" : "s") << " cannot run and "
        << (cannot_run.size() == 1 ? "was" : "were") << " not simulated:\n";
    constexpr std::size_t kShown = 5;
    for (std::size_t i = 0; i < cannot_run.size() && i < kShown; ++i)
      out << "  " << assignment_text(r.dimensions, r.configs[cannot_run[i]].values) << ": "
          << one_line(printable(r.configs[cannot_run[i]].infeasible)) << "\n";
    if (cannot_run.size() > kShown) out << "  and " << cannot_run.size() - kShown << " more (sweep.csv)\n";
  }
  const bool none_ran = !r.configs.empty() && cannot_run.size() == r.configs.size();
  // As given (99.999999, not the 100 of %g).
  const std::string quantile = detail::shortest(r.quantile) + "%";
  const std::string confidence = detail::shortest(r.confidence.value_or(0)) + "%";
  if (r.deadline_s) {
    out << "\n";
    if (r.recommended) {
      const ConfigResult& cr = r.configs[*r.recommended];
      const ShareInterval ci = p_meets_interval(cr, r.replications);
      out << "cheapest configuration " << (r.confidence ? "that " + confidence + " surely" : "with")
          << (r.confidence ? " finishes by the deadline in " + quantile + " of runs"
                           : " " + q + " makespan within the deadline")
          << " (" << detail::shortest(*r.deadline_s) << " s): " << assignment_text(r.dimensions, cr.values)
          << "; mean cost " << detail::cost_text(cr.finished_cost_mean)
          << detail::finished_runs_text(cr.runs_with_failed_tasks, r.replications) << ", " << q
          << " makespan " << num(cr.quantile_makespan_s, 1) << " s, by the deadline in "
          << detail::runs_meeting(cr.p_meets_deadline, reps) << " of " << reps << " runs (95% interval "
          << num(ci.low * 100, 1) << ".." << num(ci.high * 100, 1) << "%)\n";
      // Configurations that cost the same, to a billionth of it: the rule picked the fastest of them.
      std::vector<std::string> same;
      for (std::size_t c = 0; c < r.configs.size(); ++c)
        if (c != *r.recommended && r.configs[c].meets &&
            std::abs(r.configs[c].finished_cost_mean - cr.finished_cost_mean) <=
                1e-9 * std::max(1.0, std::abs(cr.finished_cost_mean)))
          same.push_back(assignment_text(r.dimensions, r.configs[c].values));
      if (!same.empty()) {
        out << "as cheap (mean cost " << detail::cost_text(cr.finished_cost_mean)
            << ") and meeting it too, none faster: ";
        for (std::size_t i = 0; i < same.size() && i < 5; ++i) out << (i ? "; " : "") << same[i];
        if (same.size() > 5) out << "; and " << same.size() - 5 << " more";
        out << "\n";
      }
      // At an end of a field's swept values: what lies past it was not tried (the cheapest may be there).
      std::vector<std::string> edges;
      for (std::size_t d = 0; d < r.dimensions.size() && d < cr.values.size(); ++d) {
        const Dimension& dim = r.dimensions[d];
        if (dim.values.size() < 2) continue;
        const std::optional<std::vector<double>> scale = value_scale(dim.path, dim.values);
        const auto at = std::find(dim.values.begin(), dim.values.end(), cr.values[d]);
        if (!scale || at == dim.values.end()) continue;
        const double v = (*scale)[static_cast<std::size_t>(at - dim.values.begin())];
        const auto [lo, hi] = std::minmax_element(scale->begin(), scale->end());
        if (v == *lo || v == *hi)
          edges.push_back(dim.path + "=" + cr.values[d] + " is the " + (v == *lo ? "smallest" : "largest") +
                          " value swept");
      }
      if (!edges.empty()) {
        out << "at the edge of the range: ";
        for (std::size_t i = 0; i < edges.size(); ++i) out << (i ? "; " : "") << edges[i];
        out << ": values past it were not tried, and one may be cheaper (sweep past it to see)\n";
      }
      // Its runs would not pass --confidence 90: they cannot tell it from a configuration that misses
      // more often, and the cheapest of many near the deadline is likely a lucky one. Not when every run
      // gave the same makespan with no failed task: nothing varies from run to run.
      const bool varies = reps < 2 || cr.makespan_s.min != cr.makespan_s.max || cr.runs_with_failed_tasks > 0;
      constexpr double kSuggested = 90;
      const std::size_t met = detail::runs_meeting(cr.p_meets_deadline, reps);
      if (!r.confidence && varies && met < runs_needed(reps, r.quantile, kSuggested)) {
        const bool enough = runs_needed(reps, r.quantile, kSuggested) <= reps;
        out << "how sure: " << met << " of " << reps << " runs by the deadline do not make it 90% sure to "
            << "finish by it in " << quantile
            << " of runs (the cheapest of several near it may be a lucky one): --confidence 90"
            << (enough ? std::string()
                       : " -r " + std::to_string(replications_for_confidence(r.quantile, kSuggested)))
            << " recommends only what 90% surely does\n";
      }
    } else if (r.confidence && needed <= reps) {
      out << "no configuration is " << confidence << " surely within the deadline ("
          << detail::shortest(*r.deadline_s) << " s) in " << quantile << " of runs: that takes "
          << (needed == reps ? "all " + std::to_string(reps) + " of its runs"
                             : std::to_string(needed) + " or more of its " + std::to_string(reps) + " runs")
          << " by the deadline" << (any_failed ? " (a run whose tasks failed is late)" : "")
          << "; more replications let a few runs miss (-r " << 4 * reps << ": "
          << 4 * reps - runs_needed(4 * reps, r.quantile, r.confidence) << " of them)\n";
    } else if (none_ran) {
      out << "no configuration can run, so none meets the deadline (" << detail::shortest(*r.deadline_s)
          << " s)\n";
    } else {
      out << "no configuration has its " << q << " makespan within the deadline ("
          << detail::shortest(*r.deadline_s) << " s)"
          << (any_failed ? " with runs whose tasks failed counted as late" : "") << "\n";
    }
  }
  if (r.budget && !r.deadline_s) {
    out << "\n";
    if (r.recommended) {
      const ConfigResult& cr = r.configs[*r.recommended];
      out << "fastest configuration within the budget (mean cost " << detail::shortest(*r.budget)
          << " or less): " << assignment_text(r.dimensions, cr.values) << "; " << q << " makespan "
          << num(cr.quantile_makespan_s, 1) << " s, mean cost " << detail::cost_text(cr.finished_cost_mean)
          << detail::finished_runs_text(cr.runs_with_failed_tasks, r.replications) << "\n";
    } else {
      // The cheapest there is, to say how far the budget is from anything; and the cheapest within it that
      // its failed runs kept out, which more budget would not bring in.
      std::optional<std::size_t> cheapest, failing;
      for (std::size_t c = 0; c < r.configs.size(); ++c) {
        const ConfigResult& cr = r.configs[c];
        if (!cr.infeasible.empty()) continue;
        if (failures_reach_quantile(cr.runs_with_failed_tasks, r.replications, r.quantile)) {
          if (cr.finished_cost_mean <= *r.budget &&
              (!failing || cr.finished_cost_mean < r.configs[*failing].finished_cost_mean))
            failing = c;
        } else if (!cheapest || cr.finished_cost_mean < r.configs[*cheapest].finished_cost_mean) {
          cheapest = c;
        }
      }
      if (failing)
        out << "no configuration within the budget (" << detail::shortest(*r.budget) << ") has a " << q
            << " makespan: " << assignment_text(r.dimensions, r.configs[*failing].values) << " costs "
            << detail::cost_text(r.configs[*failing].finished_cost_mean) << " but tasks failed in "
            << r.configs[*failing].runs_with_failed_tasks << " of " << r.replications << " runs, which its "
            << q << " falls on (look at failure.p and retries)\n";
      out << "no configuration's mean cost is within the budget (" << detail::shortest(*r.budget) << ")";
      if (failing) out << " with a " << q << " that is not a failed run";
      if (cheapest)
        out << ": the cheapest is " << assignment_text(r.dimensions, r.configs[*cheapest].values) << " at "
            << detail::cost_text(r.configs[*cheapest].finished_cost_mean);
      else if (none_ran)
        out << ": no configuration can run";
      else
        out << ": every configuration that ran has its " << q << " on a run whose tasks failed";
      out << "\n";
    }
  }
  if (r.nearest) {
    const Nearest& n = *r.nearest;
    const ConfigResult& cr = r.configs[n.config];
    // Its quantile on a run whose tasks failed: no makespan of it means anything.
    const bool on_failed = failures_reach_quantile(cr.runs_with_failed_tasks, r.replications, r.quantile);
    out << "nearest: " << assignment_text(r.dimensions, cr.values) << "; " << q << " makespan "
        << (on_failed ? std::string("none (a run whose tasks failed)")
                      : num(cr.quantile_makespan_s, 1) + " s, " +
                            (n.over_deadline_s > 0 ? num(n.over_deadline_s, 1) + " s over the deadline"
                                                   : std::string("within the deadline")))
        << (cr.runs_with_failed_tasks > 0 ? ", tasks failed in " + std::to_string(cr.runs_with_failed_tasks) +
                                                " of " + std::to_string(r.replications) + " runs"
                                          : std::string())
        // Within it by its quantile makespan, yet not meeting it: failed runs, or a confidence, need more.
        << (n.over_deadline_s <= 0 || on_failed
                ? ", by the deadline in " + std::to_string(detail::runs_meeting(cr.p_meets_deadline, reps)) +
                      " of " + std::to_string(reps) + " runs (" + std::to_string(needed) + " needed" +
                      (r.confidence ? std::string(" to be ") + confidence + " sure" : "") + ")"
                : std::string())
        << "; mean cost " << detail::cost_text(cr.finished_cost_mean) << "\n";
    // Over the deadline by its critical path alone: no number of nodes or limit can make it.
    const bool path_over = r.deadline_s && cr.critical_path_s > *r.deadline_s;
    if (path_over)
      out << "its critical path (mean run times on its fastest nodes, no overheads) is "
          << num(cr.critical_path_s, 1)
          << " s, over the deadline: more nodes or higher limits cannot meet it, "
          << "only shorter tasks on that path (finer shards, faster nodes)\n";
    // Within the deadline but for failed tasks: the fields' trends are about the makespan, which is not
    // what keeps it out; more nodes or higher limits do not make tasks succeed.
    const bool failures_out = failures_keep_out(cr, reps, needed, r.deadline_s);
    if (failures_out)
      out << "its runs that finished were by the deadline often enough, but tasks failed in "
          << cr.runs_with_failed_tasks << " of " << r.replications
          << " runs, which count as late (the pipeline did not finish), too many "
          << (r.confidence ? "to be " + confidence + " sure of the " : std::string("for the ")) << q
          << ": look at the steps' failure.p and retries (simulate it to see which tasks fail), not at "
             "these fields\n";
    else
      out << "what it would take, one field at a time (the others held at the nearest's values):\n";
    // A field's trend is about the makespan, not what keeps this one out.
    for (const Nearest::Field& f : n.fields) {
      if (failures_out) break;
      const auto at = [&](std::size_t i) {
        return num(f.quantile_makespan_s[i], 1) + " s at " + f.values[i];
      };
      out << "  " << f.path << ": none in the range; ";
      if (!f.failed_values.empty()) {
        out << "at ";
        for (std::size_t i = 0; i < f.failed_values.size(); ++i)
          out << (i == 0 ? "" : i + 1 == f.failed_values.size() ? " and " : ", ") << f.failed_values[i];
        out << " the " << q << " fell on a run with failed tasks (not a makespan; left out)"
            << (f.values.empty() ? "\n" : "; ");
      }
      if (f.values.empty()) continue;
      const std::size_t last = f.values.size() - 1;
      if (f.trend == "one value")
        out << "only " << f.values[0] << (f.failed_values.empty() ? " was run\n" : " is left\n");
      else if (f.trend == "flat")
        out << "no effect on the " << q << " makespan (" << at(0) << " and " << f.values[last] << ")\n";
      else if (f.trend == "levels off") {
        const std::size_t from = flat_from(f.quantile_makespan_s);
        out << "the " << q << " makespan falls, then levels off from " << f.values[from] << " (" << at(0)
            << ", " << at(from) << "): more of this field alone will not do it\n";
      } else if (f.trend == "falls" && is_no_limit(f.path, f.values[last]))
        out << "the " << q << " makespan falls along the values (" << at(0) << ", " << at(last)
            << "): it is lowest at " << f.values[last] << ", no limit: this field alone will not do it\n";
      else if (f.trend == "falls" && path_over && f.critical_path_s[last] > *r.deadline_s &&
               f.critical_path_s[last] >= f.critical_path_s[0] - makespan_tolerance(f.critical_path_s))
        // More of it brings the makespan down to the critical path, which it does not shorten.
        out << "the " << q << " makespan falls along the values (" << at(0) << ", " << at(last)
            << "), toward the critical path (" << num(f.critical_path_s[last], 1)
            << " s), which this field does not shorten: this field alone will not do it\n";
      else if (f.trend == "falls" && last < f.no_limit.size() && f.no_limit[last])
        out << "the " << q << " makespan falls along the values (" << at(0) << ", " << at(last)
            << "): it is lowest at " << f.values[last]
            << ", at least the loop's iterations, so no limit: this field alone will not do it\n";
      else if (f.trend == "falls")
        out << "the " << q << " makespan falls along the values (" << at(0) << ", " << at(last)
            << "): try beyond " << f.values[last] << "\n";
      else if (f.trend == "rises" && is_zero_value(f.values[0]))
        out << "the " << q << " makespan rises along the values (" << at(0) << ", " << at(last)
            << "): it is lowest at " << f.values[0]
            << ", the least there is: this field alone will not do it\n";
      else if (f.trend == "rises")
        out << "the " << q << " makespan rises along the values (" << at(0) << ", " << at(last)
            << "): try before " << f.values[0] << "\n";
      else {
        const std::size_t best = static_cast<std::size_t>(
            std::min_element(f.quantile_makespan_s.begin(), f.quantile_makespan_s.end()) -
            f.quantile_makespan_s.begin());
        if (f.trend == "unordered")
          out << "the " << q << " makespan is lowest at " << f.values[best] << " ("
              << num(f.quantile_makespan_s[best], 1)
              << " s; these values have no order to go beyond): this field alone will not do it\n";
        else
          out << "the " << q << " makespan is lowest inside the range (" << at(best)
              << "): this field alone will not do it\n";
      }
    }
  }
  const auto failing =
      static_cast<std::size_t>(std::count_if(r.configs.begin(), r.configs.end(), [&](const ConfigResult& c) {
        return failures_reach_quantile(c.runs_with_failed_tasks, r.replications, r.quantile);
      }));
  if (r.pareto.empty() && failing > 0) {
    out << "\nNo Pareto front: every configuration " << (cannot_run.empty() ? "" : "that ran ")
        << "had more runs with failed tasks than its " << q << " lets through\n";
  } else if (!r.pareto.empty()) {
    out << "\nPareto front of mean cost against " << q << " makespan (" << r.pareto.size() << " of "
        << r.configs.size() << " configuration" << (r.configs.size() == 1 ? "" : "s")
        << ": none is both cheaper and faster"
        << (failing > 0
                ? "; " + std::to_string(failing) + " left out, their " + q + " a run whose tasks failed"
                : std::string())
        << (cannot_run.empty() ? std::string() : "; " + std::to_string(cannot_run.size()) + " cannot run")
        << "):\n";
    for (std::size_t i : r.pareto)
      out << "  " << assignment_text(r.dimensions, r.configs[i].values) << ": cost "
          << detail::cost_text(r.configs[i].finished_cost_mean) << ", " << q << " "
          << num(r.configs[i].quantile_makespan_s, 1) << " s\n";
  }
}

using detail::summary_json;

void write_sweep_json(std::ostream& out, const SweepResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["replications"] = r.replications;
  j["base_seed"] = r.base_seed;
  j["quantile"] = r.quantile;
  if (r.confidence) j["confidence"] = *r.confidence;
  if (r.budget) j["budget"] = *r.budget;
  if (r.deadline_s) j["deadline_s"] = *r.deadline_s;
  j["inputs_hash"] = r.inputs_hash;
  j["search"] = r.search == Search::automatic ? "auto" : "grid";
  j["configurations_in_space"] = r.configurations_in_space;
  j["simulations"] = r.simulations;
  if (r.shard) j["shard"] = {{"index", r.shard->index}, {"count", r.shard->count}};
  auto& dims = j["dimensions"] = nlohmann::ordered_json::array();
  for (const Dimension& d : r.dimensions) dims.push_back({{"path", d.path}, {"values", d.values}});
  auto& configs = j["configurations"] = nlohmann::ordered_json::array();
  for (const ConfigResult& c : r.configs) {
    nlohmann::ordered_json cj;
    cj["values"] = c.values;
    if (!c.infeasible.empty()) {  // not simulated: why, and no figures
      cj["infeasible"] = c.infeasible;
      if (r.deadline_s) cj["meets"] = false;
      configs.push_back(std::move(cj));
      continue;
    }
    cj["makespan_s"] = summary_json(c.makespan_s);
    cj["quantile_makespan_s"] = c.quantile_makespan_s;
    cj["cost"] = summary_json(c.cost);
    cj["finished_cost_mean"] = c.finished_cost_mean;
    cj["runs_with_failed_tasks"] = c.runs_with_failed_tasks;
    cj["critical_path_s"] = c.critical_path_s;
    if (std::find(c.no_limit.begin(), c.no_limit.end(), true) != c.no_limit.end())
      cj["no_limit"] = c.no_limit;
    if (r.deadline_s) {
      cj["p_meets_deadline"] = c.p_meets_deadline;
      const ShareInterval ci = p_meets_interval(c, r.replications);
      cj["p_meets_deadline_ci95"] = {ci.low, ci.high};
      cj["meets"] = c.meets;
    }
    // The quantile falls on a run whose tasks failed: quantile_makespan_s is then the slowest run's, no
    // makespan to plan with (the table's "none").
    cj["quantile_on_failed_run"] = c.quantile_on_failed_run;
    configs.push_back(std::move(cj));
  }
  j["recommended"] = r.recommended ? nlohmann::ordered_json(*r.recommended) : nlohmann::ordered_json(nullptr);
  j["pareto_front"] = r.pareto;
  if (r.nearest) {
    nlohmann::ordered_json n;
    n["configuration"] = r.nearest->config;
    n["over_deadline_s"] = r.nearest->over_deadline_s;
    auto& fields = n["fields"] = nlohmann::ordered_json::array();
    for (const Nearest::Field& f : r.nearest->fields)
      fields.push_back({{"path", f.path},
                        {"meets_at", nullptr},
                        {"values", f.values},
                        {"quantile_makespan_s", f.quantile_makespan_s},
                        {"critical_path_s", f.critical_path_s},
                        {"trend", f.trend},
                        {"left_out_failed", f.failed_values}});
    j["nearest"] = std::move(n);
  }
  out << j.dump(2) << "\n";
}

void write_sweep_csv(std::ostream& out, const SweepResult& r) {
  const auto csv_text = [](const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  // Each figure as JSON has it: the shortest text that reads back to the same double.
  const auto num = detail::shortest;
  for (const Dimension& d : r.dimensions) out << csv_text(d.path) << ',';
  out << "makespan_mean_s,makespan_stddev_s,makespan_ci95_low_s,makespan_ci95_high_s,makespan_p50_s,makespan_"
         "p95_s,"
         "makespan_quantile_s,cost_mean,cost_p95,runs_with_failed_tasks,p_meets_deadline,meets,recommended,"
         "pareto,finished_cost_mean,p_meets_deadline_ci95_low,p_meets_deadline_ci95_high,infeasible,quantile_"
         "on_failed_run\n";
  std::vector<bool> on_front(r.configs.size(), false);
  for (std::size_t i : r.pareto) on_front[i] = true;
  for (std::size_t c = 0; c < r.configs.size(); ++c) {
    const ConfigResult& cr = r.configs[c];
    for (const std::string& v : cr.values) out << csv_text(v) << ',';
    if (!cr.infeasible.empty()) {  // not simulated: no figures (meets false with a deadline), and why
      out << std::string(11, ',') << (r.deadline_s ? "false" : "") << ",false,false,,,,"
          << csv_text(cr.infeasible) << ",\n";
      continue;
    }
    out << num(cr.makespan_s.mean) << ',' << num(cr.makespan_s.stddev) << ',' << num(cr.makespan_s.ci95_low)
        << ',' << num(cr.makespan_s.ci95_high) << ',' << num(cr.makespan_s.p50) << ','
        << num(cr.makespan_s.p95) << ',' << num(cr.quantile_makespan_s) << ',' << num(cr.cost.mean) << ','
        << num(cr.cost.p95) << ',' << cr.runs_with_failed_tasks << ','
        << (r.deadline_s ? num(cr.p_meets_deadline) : "") << ','
        << (r.deadline_s ? (cr.meets ? "true" : "false") : "") << ','
        << (r.recommended == c ? "true" : "false") << ',' << (on_front[c] ? "true" : "false") << ',';
    // Columns added since are at the end, so that the earlier ones keep their places.
    const ShareInterval ci = p_meets_interval(cr, r.replications);
    out << num(cr.finished_cost_mean) << ',' << (r.deadline_s ? num(ci.low) : "") << ','
        << (r.deadline_s ? num(ci.high) : "") << ",," << (cr.quantile_on_failed_run ? "true" : "false")
        << '\n';
  }
}

}  // namespace shardflow::planner
