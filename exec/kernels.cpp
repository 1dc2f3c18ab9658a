#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <optional>
#include <signal.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>

#include <nlohmann/json.hpp>
#include <tbb/parallel_invoke.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/leftovers.hpp>
#include <shardflow/core/placeholders.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/exec/kernels.hpp>

extern char** environ;  // NOLINT: POSIX

namespace shardflow::exec {
namespace {

using Clock = std::chrono::steady_clock;

// ---- text helpers ---------------------------------------------------------------------------------------

// A number as printf's %g writes it: "0.1", "1e-06", "0.0100312".
std::string fmt_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The whole text as an unsigned integer, or nothing.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The whole text as a finite number, or nothing.
std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// ---- the kernels and their parameters -------------------------------------------------------------------

enum class ParamType : std::uint8_t {
  rows,             // integer 1..1e12 (rows a kernel generates)
  nonneg_int,       // integer >= 0
  features,         // integer 1..1000
  nonneg_number,    // number >= 0
  positive_number,  // number > 0
  text,             // non-empty string
  duration,         // a duration >= 0
};

struct ParamSpec {
  std::string_view name;
  ParamType type;
};

struct KernelInfo {
  std::string_view name;
  std::vector<ParamSpec> params;  // sorted by name
};

constexpr int kMaxFeatures = 1000;
constexpr std::uint64_t kMaxRows = 1'000'000'000'000;

const std::vector<KernelInfo>& kernel_table() {
  static const std::vector<KernelInfo> table = {
      {"aggregate", {{"fail_attempts", ParamType::nonneg_int}}},
      {"command", {{"fail_attempts", ParamType::nonneg_int}}},
      {"evaluate",
       {{"fail_attempts", ParamType::nonneg_int},
        {"features", ParamType::features},
        {"holdout_item", ParamType::nonneg_int},
        {"noise", ParamType::nonneg_number},
        {"rows", ParamType::rows}}},
      {"noop", {{"fail_attempts", ParamType::nonneg_int}}},
      {"ridge_solve",
       {{"fail_attempts", ParamType::nonneg_int},
        {"lambda", ParamType::nonneg_number},
        {"lambda_key", ParamType::text}}},
      {"select_best", {{"fail_attempts", ParamType::nonneg_int}}},
      {"shard_stats",
       {{"fail_attempts", ParamType::nonneg_int},
        {"features", ParamType::features},
        {"noise", ParamType::nonneg_number},
        {"rows", ParamType::rows},
        {"rows_per_gib", ParamType::positive_number}}},
      {"sleep", {{"fail_attempts", ParamType::nonneg_int}}},
      {"spin", {{"fail_attempts", ParamType::nonneg_int}, {"seconds", ParamType::duration}}},
  };
  return table;
}

// What is wrong with `value` for a parameter of type `t`, or nothing.
std::optional<std::string> type_error(ParamType t, const std::string& value) {
  switch (t) {
    case ParamType::rows: {
      // The limit rows_per_gib has too: past it a shard's generation would run for days, and 2^64 - 1
      // rows made the reduction's recursion overflow the stack.
      const auto v = parse_u64(value);
      if (!v || *v < 1 || *v > kMaxRows)
        return "expected an integer from 1 to 1000000000000 (1e12), got " + quote(value);
      return std::nullopt;
    }
    case ParamType::nonneg_int:
      if (!parse_u64(value)) return "expected an integer >= 0, got " + quote(value);
      return std::nullopt;
    case ParamType::features: {
      const auto v = parse_u64(value);
      if (!v || *v < 1 || *v > kMaxFeatures)
        return "expected an integer from 1 to " + std::to_string(kMaxFeatures) + ", got " + quote(value);
      return std::nullopt;
    }
    case ParamType::nonneg_number: {
      const auto v = parse_number(value);
      if (!v || *v < 0) return "expected a number >= 0, got " + quote(value);
      return std::nullopt;
    }
    case ParamType::positive_number: {
      const auto v = parse_number(value);
      if (!v || *v <= 0) return "expected a number > 0, got " + quote(value);
      return std::nullopt;
    }
    case ParamType::text:
      if (value.empty()) return std::string("expected a non-empty string, got \"\"");
      return std::nullopt;
    case ParamType::duration:
      try {
        if (parse_duration(value) < Duration::zero()) return "expected a duration >= 0, got " + quote(value);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::string param_field(const KernelSpec& k, const std::string& name) {
  return k.field.empty() ? name : k.field + "." + name;
}

[[noreturn]] void param_fail(const KernelSpec& k, const std::string& name, const std::string& message) {
  const auto it = k.param_where.find(name);
  throw InputError(it != k.param_where.end() ? it->second : k.where, param_field(k, name), message);
}

[[noreturn]] void kernel_fail(const KernelSpec& k, const std::string& message) {
  throw InputError(k.where, k.field, message);
}

// The kernel's entry in the table, or null for an unknown name. An empty name is sleep.
const KernelInfo* kernel_info(const KernelSpec& k) {
  const std::string_view name = k.name.empty() ? std::string_view("sleep") : std::string_view(k.name);
  for (const auto& info : kernel_table())
    if (info.name == name) return &info;
  return nullptr;
}

// The kernel's entry in the table; throws InputError for an unknown name. An empty name is sleep.
const KernelInfo& find_kernel(const KernelSpec& k) {
  if (const KernelInfo* info = kernel_info(k)) return *info;
  const std::string_view name = k.name.empty() ? std::string_view("sleep") : std::string_view(k.name);
  const auto& table = kernel_table();
  std::string_view best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  std::string list;
  for (const auto& info : table) {
    const std::size_t d = edit_distance(name, info.name);
    if (d < best_d) {
      best_d = d;
      best = info.name;
    }
    if (!list.empty()) list += ", ";
    list += info.name;
  }
  const std::string field = k.field.empty() ? "name" : k.field + ".name";
  // At the name (or the --set that gave it); a spec built in code may know only the mapping's place.
  const SourceLocation& at = k.name_where.file.empty() ? k.where : k.name_where;
  if (best_d <= std::max<std::size_t>(2, name.size() / 3))
    throw InputError(at, field,
                     "unknown kernel " + quote(name) + " (did you mean \"" + std::string(best) + "\"?)");
  throw InputError(at, field, "unknown kernel " + quote(name) + " (the kernels are: " + list + ")");
}

// The kernel's entry, after checking that every parameter is known and of the right type.
const KernelInfo& check_params(const KernelSpec& k) {
  const KernelInfo& info = find_kernel(k);
  for (const auto& [name, value] : k.params) {
    const auto spec = std::find_if(info.params.begin(), info.params.end(),
                                   [&](const ParamSpec& p) { return p.name == name; });
    if (spec == info.params.end()) {
      std::string list;
      for (const auto& p : info.params) {
        if (!list.empty()) list += ", ";
        list += p.name;
      }
      param_fail(k, name,
                 "unknown parameter " + quote(name) + " for kernel " + std::string(info.name) +
                     " (expected one of: " + list + ")");
    }
    if (auto why = type_error(spec->type, value)) param_fail(k, name, *why);
  }
  return info;
}

const std::string* raw_param(const KernelSpec& k, const std::string& name) {
  const auto it = k.params.find(name);
  return it == k.params.end() ? nullptr : &it->second;
}

// A typed parameter (checked again here, so that run_kernel is safe without check_kernels).
std::uint64_t int_param(const KernelSpec& k, const std::string& name, ParamType t, std::uint64_t fallback) {
  const std::string* v = raw_param(k, name);
  if (!v) return fallback;
  if (auto why = type_error(t, *v)) param_fail(k, name, *why);
  return *parse_u64(*v);
}
std::optional<double> number_param(const KernelSpec& k, const std::string& name, ParamType t) {
  const std::string* v = raw_param(k, name);
  if (!v) return std::nullopt;
  if (auto why = type_error(t, *v)) param_fail(k, name, *why);
  return *parse_number(*v);
}
std::string text_param(const KernelSpec& k, const std::string& name, const std::string& fallback) {
  const std::string* v = raw_param(k, name);
  if (!v) return fallback;
  if (auto why = type_error(ParamType::text, *v)) param_fail(k, name, *why);
  return *v;
}
int features_param(const KernelSpec& k, int fallback) {
  return static_cast<int>(
      int_param(k, "features", ParamType::features, static_cast<std::uint64_t>(fallback)));
}

// ---- the program of a command --------------------------------------------------------------------------

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Where execvp would find `program`: itself when it has a '/', else the first match on PATH.
std::optional<std::string> find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (is_executable_file(program)) return program;
    return std::nullopt;
  }
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

// ---- checks of one component ----------------------------------------------------------------------------

void check_ridge_lambda(const KernelSpec& k, const Loop* loop) {
  if (raw_param(k, "lambda")) return;
  const std::string key = text_param(k, "lambda_key", "lambda");
  if (!loop || loop->items.empty())
    kernel_fail(k,
                "ridge_solve needs a lambda: give the parameter lambda, or run the step in a loop over "
                "items with a key " +
                    quote(key));
  for (std::size_t i = 0; i < loop->items.size(); ++i) {
    const auto item = nlohmann::json::parse(loop->items[i], nullptr, false);
    const bool has_key = item.is_object() && item.contains(key);
    if (!has_key)
      kernel_fail(k, "ridge_solve takes lambda from the loop item's key " + quote(key) + ", but item " +
                         std::to_string(i) + " (" + loop->items[i] + ") has no such key");
    const auto& v = item.at(key);
    if (!v.is_number() || v.get<double>() < 0)
      kernel_fail(k, "ridge_solve takes lambda from the loop item's key " + quote(key) + ", but item " +
                         std::to_string(i) + " has " + v.dump() + " there, not a number >= 0");
  }
}

// Every {{item.KEY}} of the command has a value in every item of the step's loop.
void check_command_items(const KernelSpec& k, const Component& c, const Loop* loop) {
  for (const auto& key : item_keys_named(c.command)) {
    const std::string placeholder = "{{item." + key + "}}";
    if (!loop || loop->items.empty())
      kernel_fail(k, "the command uses " + placeholder + ", but the step's loop has no items (" +
                         (loop ? "a count: loop" : "no loop") + ")");
    for (std::size_t i = 0; i < loop->items.size(); ++i) {
      const auto item = nlohmann::json::parse(loop->items[i], nullptr, false);
      if (!item.is_object() || !item.contains(key))
        kernel_fail(k, "the command uses " + placeholder + ", but item " + std::to_string(i) + " (" +
                           loop->items[i] + ") has no key " + quote(key));
    }
  }
}

// `programs`: also that a command's program exists here (the local backend runs it; validate, which
// may run on another machine, does not ask).
void check_component(const Component& c, const Loop* loop, bool programs) {
  const KernelSpec& k = c.kernel;
  const KernelInfo& info = check_params(k);
  if (info.name == "shard_stats") {
    const bool rows = raw_param(k, "rows") != nullptr;
    const bool per_gib = raw_param(k, "rows_per_gib") != nullptr;
    if (rows && per_gib) kernel_fail(k, "shard_stats takes rows or rows_per_gib, not both");
    if (!rows && !per_gib)
      kernel_fail(k,
                  "shard_stats needs rows (a row count) or rows_per_gib (rows per GiB of the task's input)");
  } else if (info.name == "ridge_solve") {
    check_ridge_lambda(k, loop);
  } else if (info.name == "command") {
    if (c.command.empty()) kernel_fail(k, "kernel command needs the step's command");
    const std::string& program = c.command.front();
    if (programs && program.find("{{") == std::string::npos && !find_program(program)) {
      if (program.find('/') != std::string::npos)
        kernel_fail(k, "command " + quote(program) + " is not an executable file");
      kernel_fail(k, "command " + quote(program) + " not found on PATH");
    }
    check_command_items(k, c, loop);
  }
}

// Calls check(component, its nearest loop) for every component step, depth first.
template <typename Check>
void check_steps(const std::vector<Step>& steps, const Loop* enclosing, const Check& check) {
  for (const Step& s : steps) {
    const Loop* loop = s.loop ? &*s.loop : enclosing;
    if (s.is_group())
      check_steps(s.steps, loop, check);
    else
      check(s.component, loop);
  }
}

// ---- row generation ------------------------------------------------------------------------------------

struct RowGen {
  std::uint64_t seed = 1;
  std::uint64_t item = 0;
  std::uint64_t rows = 0;
  int features = 1;
  double noise = 0;
  Eigen::VectorXd w;  // true weights

  [[nodiscard]] std::uint64_t blocks() const { return (rows + kRowsPerBlock - 1) / kRowsPerBlock; }
  [[nodiscard]] Eigen::Index rows_in(std::uint64_t b) const {
    return static_cast<Eigen::Index>(std::min(kRowsPerBlock, rows - b * kRowsPerBlock));
  }
  // Block b's rows into x and y from row `at` on.
  void fill(std::uint64_t b, Eigen::MatrixXd& x, Eigen::VectorXd& y, Eigen::Index at) const {
    Rng rng = Rng::stream(seed, Stream::data, item, b);
    const Eigen::Index n = rows_in(b);
    for (Eigen::Index r = 0; r < n; ++r) {
      double dot = 0;
      for (Eigen::Index j = 0; j < features; ++j) {
        const double v = rng.normal();
        x(at + r, j) = v;
        dot += v * w[j];
      }
      y[at + r] = dot + noise * rng.normal();
    }
  }
  void block(std::uint64_t b, Eigen::MatrixXd& x, Eigen::VectorXd& y) const {
    x.resize(rows_in(b), features);
    y.resize(rows_in(b));
    fill(b, x, y, 0);
  }
};

void check_stop(const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) throw KernelCancelled("cancelled");
}

// Reduces leaf(b) over blocks [lo, hi) by halving, combining left then right: the same tree, so the same
// bits, whether the halves run in parallel or not.
template <class T, class Leaf, class Combine>
T tree_reduce(std::uint64_t lo, std::uint64_t hi, bool parallel, const Leaf& leaf, const Combine& combine) {
  if (hi - lo == 1) return leaf(lo);
  const std::uint64_t mid = lo + (hi - lo) / 2;
  T left;
  T right;
  if (parallel) {
    tbb::parallel_invoke([&] { left = tree_reduce<T>(lo, mid, parallel, leaf, combine); },
                         [&] { right = tree_reduce<T>(mid, hi, parallel, leaf, combine); });
  } else {
    left = tree_reduce<T>(lo, mid, parallel, leaf, combine);
    right = tree_reduce<T>(mid, hi, parallel, leaf, combine);
  }
  combine(left, right);
  return left;
}

struct Stats {
  Eigen::MatrixXd xtx;
  Eigen::VectorXd xty;
  double yty = 0;
  std::uint64_t rows = 0;
};

// ---- the kernels ---------------------------------------------------------------------------------------

std::shared_ptr<const Value> run_shard_stats(const KernelSpec& k, const KernelContext& ctx) {
  const int features = features_param(k, 8);
  const double noise = number_param(k, "noise", ParamType::nonneg_number).value_or(0.1);
  std::uint64_t rows = 0;
  const bool has_rows = raw_param(k, "rows") != nullptr;
  const auto per_gib = number_param(k, "rows_per_gib", ParamType::positive_number);
  if (has_rows && per_gib) kernel_fail(k, "shard_stats takes rows or rows_per_gib, not both");
  if (has_rows) {
    rows = int_param(k, "rows", ParamType::rows, 1);
  } else if (per_gib) {
    const double r = std::round(*per_gib * ctx.input_bytes / static_cast<double>(kGiB));
    if (!(r <= static_cast<double>(kMaxRows)))
      throw std::runtime_error("shard_stats would generate " + fmt_g(r) + " rows (limit 1e+12)");
    rows = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max(0.0, r)));
  } else {
    kernel_fail(k, "shard_stats needs rows (a row count) or rows_per_gib (rows per GiB of the task's input)");
  }
  const std::uint32_t item = ctx.plan ? ctx.plan->item(ctx.task) : 0;
  const RowGen gen{ctx.seed, item, rows, features, noise, true_weights(ctx.seed, features)};
  const auto leaf = [&](std::uint64_t b) {
    check_stop(ctx.stop);
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    gen.block(b, x, y);
    Stats s;
    s.xtx.noalias() = x.transpose() * x;
    s.xty.noalias() = x.transpose() * y;
    s.yty = y.squaredNorm();
    s.rows = static_cast<std::uint64_t>(x.rows());
    return s;
  };
  const auto combine = [](Stats& a, const Stats& b) {
    a.xtx += b.xtx;
    a.xty += b.xty;
    a.yty += b.yty;
    a.rows += b.rows;
  };
  Stats s = tree_reduce<Stats>(0, gen.blocks(), ctx.threads > 1, leaf, combine);
  auto out = std::make_shared<ShardStats>();
  out->xtx = std::move(s.xtx);
  out->xty = std::move(s.xty);
  out->yty = s.yty;
  out->rows = s.rows;
  return out;
}

// The sum of every ShardStats upstream, in upstream order; nothing when there is none.
std::optional<ShardStats> sum_stats(const KernelContext& ctx, std::string_view kernel) {
  std::optional<ShardStats> sum;
  for (const auto& v : ctx.upstream) {
    const auto* s = dynamic_cast<const ShardStats*>(v.get());
    if (!s) continue;
    if (!sum) {
      sum = *s;
      continue;
    }
    if (s->xty.size() != sum->xty.size())
      throw std::runtime_error(std::string(kernel) + ": upstream statistics have " +
                               std::to_string(sum->xty.size()) + " and " + std::to_string(s->xty.size()) +
                               " features");
    sum->xtx += s->xtx;
    sum->xty += s->xty;
    sum->yty += s->yty;
    sum->rows += s->rows;
  }
  return sum;
}

std::shared_ptr<const Value> run_aggregate(const KernelContext& ctx) {
  auto sum = sum_stats(ctx, "aggregate");
  if (!sum) throw std::runtime_error("aggregate: no upstream task produced shard statistics");
  return std::make_shared<ShardStats>(std::move(*sum));
}

double lambda_of(const KernelSpec& k, const KernelContext& ctx) {
  if (auto l = number_param(k, "lambda", ParamType::nonneg_number)) return *l;
  const std::string key = text_param(k, "lambda_key", "lambda");
  if (!ctx.plan)
    throw std::runtime_error("ridge_solve: no parameter lambda and no loop item to take it from");
  const std::string text = item_json(*ctx.plan, ctx.task);
  const auto item = nlohmann::json::parse(text, nullptr, false);
  if (!item.is_object() || !item.contains(key))
    throw std::runtime_error("ridge_solve: no parameter lambda, and the loop item " + text + " has no key " +
                             quote(key));
  const auto& v = item.at(key);
  if (!v.is_number() || v.get<double>() < 0)
    throw std::runtime_error("ridge_solve: the loop item's " + quote(key) + " is " + v.dump() +
                             ", not a number >= 0");
  return v.get<double>();
}

std::shared_ptr<const Value> run_ridge_solve(const KernelSpec& k, const KernelContext& ctx) {
  const double lambda = lambda_of(k, ctx);
  const auto sum = sum_stats(ctx, "ridge_solve");
  if (!sum) throw std::runtime_error("ridge_solve: no upstream task produced shard statistics");
  const Eigen::Index n = sum->xty.size();
  Eigen::MatrixXd a = sum->xtx;
  a.diagonal().array() += lambda;
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(a);
  auto out = std::make_shared<RidgeModel>();
  out->lambda = lambda;
  out->w = ldlt.solve(sum->xty);
  if (ldlt.info() != Eigen::Success || out->w.size() != n || !out->w.allFinite())
    throw std::runtime_error("ridge_solve: X'X + " + fmt_g(lambda) + " I is singular (" +
                             std::to_string(sum->rows) + " rows, " + std::to_string(n) + " features)");
  return out;
}

std::shared_ptr<const Value> run_evaluate(const KernelSpec& k, const KernelContext& ctx) {
  std::vector<const RidgeModel*> models;
  for (const auto& v : ctx.upstream)
    if (const auto* m = dynamic_cast<const RidgeModel*>(v.get())) models.push_back(m);
  if (models.empty()) throw std::runtime_error("evaluate: no upstream task produced a ridge model");
  const int features = features_param(k, static_cast<int>(models.front()->w.size()));
  for (const auto* m : models)
    if (m->w.size() != features)
      throw std::runtime_error("evaluate: the model for lambda " + fmt_g(m->lambda) + " has " +
                               std::to_string(m->w.size()) + " weights, but features is " +
                               std::to_string(features));
  const std::uint64_t rows = int_param(k, "rows", ParamType::rows, 10000);
  const double noise = number_param(k, "noise", ParamType::nonneg_number).value_or(0.1);
  const std::uint64_t holdout = int_param(k, "holdout_item", ParamType::nonneg_int, 4294967295ULL);
  const RowGen gen{ctx.seed, holdout, rows, features, noise, true_weights(ctx.seed, features)};
  using Sums = std::vector<double>;  // squared error per model
  const auto leaf = [&](std::uint64_t b) {
    check_stop(ctx.stop);
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    gen.block(b, x, y);
    Sums s(models.size());
    for (std::size_t i = 0; i < models.size(); ++i) s[i] = (x * models[i]->w - y).squaredNorm();
    return s;
  };
  const auto combine = [](Sums& a, const Sums& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  };
  const Sums sse = tree_reduce<Sums>(0, gen.blocks(), ctx.threads > 1, leaf, combine);
  auto out = std::make_shared<Evaluation>();
  for (std::size_t i = 0; i < models.size(); ++i)
    out->entries.push_back({models[i]->lambda, sse[i] / static_cast<double>(rows), models[i]->w});
  return out;
}

std::shared_ptr<const Value> run_select_best(const KernelContext& ctx) {
  const Evaluation::Entry* best = nullptr;
  for (const auto& v : ctx.upstream) {
    const auto* e = dynamic_cast<const Evaluation*>(v.get());
    if (!e) continue;
    for (const auto& entry : e->entries)
      if (!best || entry.mse < best->mse || (entry.mse == best->mse && entry.lambda < best->lambda))
        best = &entry;
  }
  if (!best) throw std::runtime_error("select_best: no upstream task produced an evaluation");
  auto out = std::make_shared<Selection>();
  out->lambda = best->lambda;
  out->mse = best->mse;
  out->w = best->w;
  for (const auto& v : ctx.upstream) {
    const auto* m = dynamic_cast<const RidgeModel*>(v.get());
    if (m && m->lambda == best->lambda) {
      out->w = m->w;
      break;
    }
  }
  return out;
}

// ---- spin and sleep ------------------------------------------------------------------------------------

std::atomic<std::uint64_t> g_spin_sink{0};

// A fixed arithmetic loop (xorshift64): its result is stored, so it cannot be optimized away.
[[gnu::noinline]] std::uint64_t spin_loop(std::uint64_t n, std::uint64_t x) {
  for (std::uint64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Iterations of spin_loop per second, measured once (on the first call) over ~10 ms.
double spin_rate() {
  static const double rate = [] {
    std::uint64_t n = 1024;
    for (;;) {
      const auto t0 = Clock::now();
      g_spin_sink.fetch_xor(spin_loop(n, 0x9E3779B97F4A7C15ULL + n), std::memory_order_relaxed);
      const double dt = seconds_since(t0);
      if (dt >= 0.01) return static_cast<double>(n) / dt;
      n *= 2;
    }
  }();
  return rate;
}

std::shared_ptr<const Value> run_spin(const KernelSpec& k, const KernelContext& ctx) {
  double seconds = ctx.run_seconds;
  if (const std::string* s = raw_param(k, "seconds")) {
    if (auto why = type_error(ParamType::duration, *s)) param_fail(k, "seconds", *why);
    seconds = parse_duration(*s).seconds();
  }
  const double rate = spin_rate();
  const auto t0 = Clock::now();
  std::uint64_t x = 0x2545F4914F6CDD1DULL;
  for (;;) {
    const double left = seconds - seconds_since(t0);
    if (left <= 0) break;
    check_stop(ctx.stop);
    const double chunk = std::min(0.01, left) * rate;
    x = spin_loop(std::max<std::uint64_t>(1, static_cast<std::uint64_t>(chunk)), x);
  }
  g_spin_sink.fetch_xor(x, std::memory_order_relaxed);
  return nullptr;
}

std::shared_ptr<const Value> run_sleep(const KernelContext& ctx) {
  const auto t0 = Clock::now();
  for (;;) {
    const double left = ctx.run_seconds - seconds_since(t0);
    if (left <= 0) break;
    check_stop(ctx.stop);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.01, left)));
  }
  return nullptr;
}

// ---- command -------------------------------------------------------------------------------------------

// The last `n` bytes of a file, trailing white space dropped.
std::string file_tail(const std::filesystem::path& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
  const std::size_t start = size > n ? size - n : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  // Cut where a character starts (the tail's first bytes may be the end of one), and as UTF-8: the text
  // goes into trace.json and trace.csv, which are UTF-8 (RFC 8259).
  std::size_t from = 0;
  if (start > 0)
    while (from < text.size() && from < 3 && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return valid_utf8(std::string_view(text).substr(std::min(from, text.size())));
}

// Owns the posix_spawn structures.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Owns a file descriptor.
struct Fd {
  int fd = -1;
  Fd() = default;
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::shared_ptr<const Value> run_command(const KernelContext& ctx) {
  if (!ctx.plan) throw std::runtime_error("command: no plan to take the step's command from");
  const Plan& plan = *ctx.plan;
  const PlanStep& step = plan.steps()[plan.step_of(ctx.task)];
  if (step.component.command.empty()) throw std::runtime_error("kernel command needs the step's command");
  const std::string item = item_json(plan, ctx.task);
  std::vector<std::string> args;
  for (const auto& a : step.component.command)
    args.push_back(fill_placeholders(a, item, plan.item(ctx.task)));

  const std::filesystem::path dir = ctx.out_dir.empty() ? std::filesystem::path(".") : ctx.out_dir;
  if (std::error_code ec; !std::filesystem::create_directories(dir, ec) && ec)
    throw std::runtime_error("cannot make " + dir.string() + " for the command's output: " + ec.message());
  const std::string base = command_log_base(plan, ctx.task, ctx.attempt);
  auto result = std::make_shared<CommandResult>();
  result->stdout_path = dir / (base + ".stdout");
  result->stderr_path = dir / (base + ".stderr");

  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view v(*e);
    if (!v.starts_with("SHARDFLOW_ITEM=") && !v.starts_with("SHARDFLOW_ATTEMPT=")) env.emplace_back(v);
  }
  env.push_back("SHARDFLOW_ITEM=" + item);
  env.push_back("SHARDFLOW_ATTEMPT=" + std::to_string(ctx.attempt));
  std::vector<char*> argv;
  std::vector<char*> envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  SpawnSetup setup;
  // The output files are opened here, so that one that cannot be (a directory in the way, a full or
  // read-only disk) is said as such, not as a command that could not start.
  Fd out_fd, err_fd;
  for (auto [fd, path] :
       {std::pair{&out_fd, &result->stdout_path}, std::pair{&err_fd, &result->stderr_path}}) {
    fd->fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd->fd < 0)
      throw std::runtime_error("cannot write the command's output file " + path->string() + ": " +
                               std::generic_category().message(errno));
  }
  posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out_fd.fd, 1);
  posix_spawn_file_actions_adddup2(&setup.actions, err_fd.fd, 2);
  // Its own process group (so that cancelling stops its children too), default signals, nothing blocked.
  sigset_t none;
  sigset_t defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &setup.actions, &setup.attr, argv.data(), envp.data());
  out_fd.reset();  // the command has its own copies
  err_fd.reset();
  if (rc != 0)
    throw std::runtime_error("command " + quote(args[0]) +
                             " could not start: " + std::generic_category().message(rc));
  // Its process group, killed if a signal ends this process at once (a second Ctrl-C), not left running.
  struct Registered {
    int slot;
    ~Registered() { leftovers::remove_group(slot); }
  } const registered{leftovers::add_group(pid)};

  int status = 0;
  std::optional<Clock::time_point> term_sent;
  bool kill_sent = false;
  auto pause = std::chrono::microseconds(250);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      throw std::runtime_error("command " + quote(args[0]) +
                               ": waitpid failed: " + std::generic_category().message(errno));
    if (ctx.stop && ctx.stop->load(std::memory_order_relaxed) && !term_sent) {
      ::kill(-pid, SIGTERM);
      term_sent = Clock::now();
    }
    if (term_sent && !kill_sent && Clock::now() - *term_sent >= std::chrono::seconds(2)) {
      ::kill(-pid, SIGKILL);
      kill_sent = true;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return result;
  std::string message = WIFEXITED(status)
                            ? "command exited with status " + std::to_string(WEXITSTATUS(status))
                            : "command killed by signal " + std::to_string(WTERMSIG(status));
  if (term_sent) message += " (cancelled)";
  const std::string tail = file_tail(result->stderr_path, 500);
  if (!tail.empty()) message += "; stderr: " + tail;
  if (term_sent) throw KernelCancelled(message);
  throw std::runtime_error(message);
}

}  // namespace

std::string command_log_base(const Plan& plan, TaskId t, std::uint32_t attempt) {
  std::string base = plan.task_name(t);
  std::replace(base.begin(), base.end(), '/', '-');
  return base + ".attempt" + std::to_string(attempt);
}

std::set<std::string> command_log_names(const Plan& plan, const Trace& trace) {
  std::set<std::string> names;
  for (const AttemptRecord& a : trace.attempts)
    if (plan.steps()[a.step].component.kernel.name == "command") {
      const std::string base = command_log_base(plan, a.task, a.attempt);
      names.insert(base + ".stdout");
      names.insert(base + ".stderr");
    }
  return names;
}

bool is_command_log_name(std::string_view name) {
  for (const std::string_view end : {".stdout", ".stderr"}) {
    if (!name.ends_with(end)) continue;
    std::string_view rest = name.substr(0, name.size() - end.size());
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[rest.size() - 1 - digits])))
      ++digits;
    rest.remove_suffix(digits);
    return digits > 0 && rest.ends_with(".attempt") && rest.size() > 8;
  }
  return false;
}

// ---- Values --------------------------------------------------------------------------------------------

std::string ShardStats::describe() const {
  return std::to_string(rows) + " rows, " + std::to_string(xty.size()) + " features";
}

std::string RidgeModel::describe() const {
  return "lambda " + fmt_g(lambda) + ": " + std::to_string(w.size()) + " weights, |w| " + fmt_g(w.norm());
}

std::string Evaluation::describe() const {
  std::string out;
  for (const auto& e : entries) {
    if (!out.empty()) out += "; ";
    out += "lambda " + fmt_g(e.lambda) + ": held-out MSE " + fmt_g(e.mse);
  }
  return out;
}

std::string Selection::describe() const {
  return "chose lambda " + fmt_g(lambda) + ": held-out MSE " + fmt_g(mse);
}

std::string CommandResult::describe() const {
  return "exit status " + std::to_string(exit_status) + ", output in " + stdout_path.string();
}

// ---- the public functions ------------------------------------------------------------------------------

std::string item_json(const Plan& plan, TaskId t) {
  const PlanStep& step = plan.steps()[plan.step_of(t)];
  const std::uint32_t i = plan.item(t);
  if (!step.items.empty() && i < step.items.size()) return step.items[i];
  return std::to_string(i);
}

bool kernel_blocks(const KernelSpec& k) {
  return k.name == "command";
}
bool kernel_sleeps(const KernelSpec& k) {
  return k.name.empty() || k.name == "sleep";
}
bool kernel_runs_sampled_time(const KernelSpec& k) {
  return kernel_sleeps(k) || (k.name == "spin" && !k.params.contains("seconds"));
}
bool kernel_uses_upstream(const KernelSpec& k) {
  return k.name == "aggregate" || k.name == "ridge_solve" || k.name == "evaluate" || k.name == "select_best";
}
void prepare_kernel(const KernelSpec& k) {
  if (k.name == "spin") (void)spin_rate();
}
std::uint64_t kernel_fail_attempts(const KernelSpec& k) {
  return int_param(k, "fail_attempts", ParamType::nonneg_int, 0);
}
std::string injected_failure_text(std::uint64_t attempt, std::uint64_t fail_attempts) {
  return "injected failure: attempt " + std::to_string(attempt) + " of fail_attempts " +
         std::to_string(fail_attempts);
}
bool kernel_is_noop(const KernelSpec& k) {
  return k.name == "noop" && k.params.empty();
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> out;
  for (const auto& info : kernel_table()) out.emplace_back(info.name);
  return out;
}

void upstream_tasks(const Plan& plan, TaskId t, std::vector<TaskId>& stack, std::vector<TaskId>& out) {
  const auto preds = plan.preds(t);
  out.clear();
  if (std::none_of(preds.begin(), preds.end(), [&](TaskId p) { return plan.is_join(p); })) {
    out.assign(preds.begin(), preds.end());  // ids are sorted already
    return;
  }
  stack.assign(preds.begin(), preds.end());
  while (!stack.empty()) {
    const TaskId p = stack.back();
    stack.pop_back();
    if (plan.is_join(p))
      stack.insert(stack.end(), plan.preds(p).begin(), plan.preds(p).end());
    else
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

namespace {

// What a kernel reads from the tasks before it, for the checks below: the kernels that make it, and how
// its messages name it.
struct Needs {
  std::string_view kernel;
  std::vector<std::string_view> made_by;
  std::string_view reads;  // "sums the shard statistics of the tasks before it"
};

const std::vector<Needs>& needs_table() {
  static const std::vector<Needs> table = {
      {"aggregate", {"shard_stats", "aggregate"}, "sums the shard statistics of the tasks before it"},
      {"ridge_solve", {"shard_stats", "aggregate"}, "sums the shard statistics of the tasks before it"},
      {"evaluate", {"ridge_solve"}, "scores the ridge models of the tasks before it"},
      {"select_best", {"evaluate"}, "picks the best of the evaluations of the tasks before it"},
  };
  return table;
}

const Needs* needs_of(const KernelSpec& k) {
  for (const Needs& n : needs_table())
    if (n.kernel == k.name) return &n;
  return nullptr;
}

// The plan's kernels, a step at a time: one task per step stands for it (its iterations and their levels
// are wired alike), with the tasks before it as the backend gathers the kernel's inputs.
class StepKernels {
 public:
  explicit StepKernels(const Plan& plan) : plan_(plan), first_(plan.steps().size(), kNone) {
    for (TaskId t = 0; t < plan.size(); ++t)
      if (!plan.is_join(t) && first_[plan.step_of(t)] == kNone) first_[plan.step_of(t)] = t;
    width_.assign(plan.steps().size(), kUnknown);
    before_.resize(plan.steps().size());
    before_known_.assign(plan.steps().size(), 0);
    mark_.assign(plan.steps().size(), 0);
  }
  [[nodiscard]] std::size_t steps() const { return first_.size(); }
  [[nodiscard]] bool runs(std::uint32_t s) const { return first_[s] != kNone; }
  [[nodiscard]] const KernelSpec& kernel(std::uint32_t s) const { return plan_.steps()[s].component.kernel; }
  [[nodiscard]] const std::string& path(std::uint32_t s) const { return plan_.steps()[s].path; }
  // The steps of the tasks before step s's task, in id order of their first such task, each once (worked
  // out once per step: the checks and the widths ask for the same steps' lists).
  [[nodiscard]] const std::vector<std::uint32_t>& before(std::uint32_t s) {
    std::vector<std::uint32_t>& out = before_[s];
    if (before_known_[s] != 0) return out;
    before_known_[s] = 1;
    upstream_tasks(plan_, first_[s], stack_, upstream_);
    for (TaskId p : upstream_)
      if (const std::uint32_t b = plan_.step_of(p); mark_[b] != s + 1) {
        mark_[b] = s + 1;  // s's stamp: b is in its list already
        out.push_back(b);
      }
    return out;
  }
  // How many features the statistics or ridge model step s hands on have (shard_stats: its `features`,
  // 8 if not given; aggregate and ridge_solve: those of the statistics before them); 0 when it hands on
  // neither or when that cannot be told (a bad parameter, an unknown kernel or statistics of different
  // widths before it: each has its own message).
  int width(std::uint32_t s) {
    if (width_[s] != kUnknown) return width_[s];
    width_[s] = 0;  // while working it out (the plan has no cycle: a guard only)
    const KernelSpec& k = kernel(s);
    int w = 0;
    if (k.name == "shard_stats") {
      w = features_of(k).value_or(0);
    } else if (k.name == "aggregate" || k.name == "ridge_solve") {
      const auto [a, b] = widths_before(s, {"shard_stats", "aggregate"});
      w = b.second == 0 ? a.second : 0;
    }
    return width_[s] = w;
  }
  // The widths of what the steps before s of the given kernels hand on: the first step's (step, width)
  // and, if another one's differs, that one too ({kNone, 0} otherwise). A width 0 (not known) makes
  // both {kNone, 0}: nothing can be said.
  using StepWidth = std::pair<std::uint32_t, int>;
  std::pair<StepWidth, StepWidth> widths_before(std::uint32_t s,
                                                const std::vector<std::string_view>& kernels) {
    StepWidth first{kNone, 0}, other{kNone, 0};
    for (const std::uint32_t b : before(s)) {
      if (std::find(kernels.begin(), kernels.end(), kernel(b).name) == kernels.end()) continue;
      const int w = width(b);
      if (w == 0) return {{kNone, 0}, {kNone, 0}};
      if (first.second == 0)
        first = {b, w};
      else if (w != first.second && other.second == 0)
        other = {b, w};
    }
    return {first, other};
  }
  // The `features` parameter as given: 8 if it is not; nothing if it is not a valid number.
  static std::optional<int> features_of(const KernelSpec& k) {
    const auto it = k.params.find("features");
    if (it == k.params.end()) return 8;
    if (type_error(ParamType::features, it->second)) return std::nullopt;
    return static_cast<int>(*parse_u64(it->second));
  }

 private:
  static constexpr int kUnknown = -1;
  const Plan& plan_;
  std::vector<TaskId> first_;
  std::vector<int> width_;
  std::vector<TaskId> stack_, upstream_;
  std::vector<std::vector<std::uint32_t>> before_;  // before(s), once known
  std::vector<char> before_known_;
  std::vector<std::uint32_t> mark_;  // per step: the s + 1 of the list it was last put in
};

// The problems of the kernels that read what the tasks before them make, in the plan's step order, into
// `out` (the first only if `first`): none of the tasks before makes what it reads (aggregate and
// ridge_solve read shard statistics, evaluate ridge models, select_best evaluations); the statistics or
// models it reads differ in their number of features; evaluate's `features` is not the models'.
void upstream_problems(const Plan& plan, std::vector<InputError>& out, bool first) {
  StepKernels steps(plan);
  for (std::uint32_t s = 0; s < steps.steps(); ++s) {
    if (!steps.runs(s)) continue;
    const KernelSpec& k = steps.kernel(s);
    const Needs* needs = needs_of(k);
    if (needs == nullptr) continue;
    const std::size_t had = out.size();
    const std::vector<std::uint32_t>& before = steps.before(s);
    // A kernel before it with an unknown name (a misspelled shard_stats?) has its own message; whether it
    // would make what this one reads cannot be told, so that one mistake is one message.
    const auto makes = [&](std::uint32_t b) {
      const KernelSpec& bk = steps.kernel(b);
      return kernel_info(bk) == nullptr ||
             std::find(needs->made_by.begin(), needs->made_by.end(), bk.name) != needs->made_by.end();
    };
    if (std::none_of(before.begin(), before.end(), makes)) {
      std::vector<std::string> paths;
      for (const std::uint32_t b : before) paths.push_back(steps.path(b));
      std::string kernels;  // "shard_stats or aggregate"
      for (const std::string_view m : needs->made_by) (kernels += kernels.empty() ? "" : " or ") += m;
      out.emplace_back(
          k.where, k.field,
          k.name + " " + std::string(needs->reads) + ", and none makes any: " +
              (paths.empty() ? std::string("no step runs before it")
                             : "the steps before it (" + listed(paths) + ") run no " + kernels + " kernel"));
    } else if (k.name != "select_best") {
      const auto [a, b] = steps.widths_before(s, needs->made_by);
      const bool models = k.name == "evaluate";
      const std::string unit = models ? " weights" : " features";
      if (b.second != 0) {
        out.emplace_back(k.where, k.field,
                         k.name + " " + std::string(needs->reads) + ", and they differ in width: step " +
                             steps.path(a.first) + "'s have " + std::to_string(a.second) + unit + ", step " +
                             steps.path(b.first) + "'s " + std::to_string(b.second) +
                             (models ? " (the features of the shard statistics before them)"
                                     : ": give the shard_stats steps one features value"));
      } else if (models && a.second != 0 && k.params.count("features") != 0) {
        const std::optional<int> f = StepKernels::features_of(k);
        if (f && *f != a.second) {
          const auto at = k.param_where.find("features");
          out.emplace_back(at != k.param_where.end() ? at->second : k.where,
                           k.field.empty() ? "features" : k.field + ".features",
                           "features is " + std::to_string(*f) +
                               ", but the ridge models evaluate scores (step " + steps.path(a.first) +
                               ") have " + std::to_string(a.second) +
                               " weights, from the shard statistics before them: leave features out to "
                               "take theirs, or make the shard_stats steps' features " +
                               std::to_string(*f));
        }
      }
    }
    if (first && out.size() > had) return;
  }
}

}  // namespace

void check_kernel_upstream(const Plan& plan) {
  std::vector<InputError> problems;
  upstream_problems(plan, problems, true);
  if (!problems.empty()) throw problems.front();
}

std::vector<InputError> kernel_spec_problems(const std::vector<Step>& steps) {
  std::vector<InputError> out;
  check_steps(steps, nullptr, [&](const Component& c, const Loop* loop) {
    try {
      check_component(c, loop, false);
    } catch (const InputError& e) {
      out.push_back(e);
    }
  });
  return out;
}

std::vector<InputError> kernel_problems(const Scenario& scenario, const Plan& plan) {
  std::vector<InputError> out = kernel_spec_problems(scenario.pipeline.steps);
  upstream_problems(plan, out, false);
  return out;
}

void check_kernels(const Scenario& scenario) {
  check_steps(scenario.pipeline.steps, nullptr,
              [](const Component& c, const Loop* loop) { check_component(c, loop, true); });
}

void check_kernel_specs(const Scenario& scenario) {
  check_steps(scenario.pipeline.steps, nullptr,
              [](const Component& c, const Loop* loop) { check_component(c, loop, false); });
}

std::shared_ptr<const Value> run_kernel(const KernelSpec& kernel, const KernelContext& ctx) {
  const KernelInfo& info = check_params(kernel);
  const std::uint64_t fail = int_param(kernel, "fail_attempts", ParamType::nonneg_int, 0);
  if (ctx.attempt < fail) throw std::runtime_error(injected_failure_text(ctx.attempt, fail));
  const std::string_view name = info.name;
  if (name == "shard_stats") return run_shard_stats(kernel, ctx);
  if (name == "aggregate") return run_aggregate(ctx);
  if (name == "ridge_solve") return run_ridge_solve(kernel, ctx);
  if (name == "evaluate") return run_evaluate(kernel, ctx);
  if (name == "select_best") return run_select_best(ctx);
  if (name == "spin") return run_spin(kernel, ctx);
  if (name == "command") return run_command(ctx);
  if (name == "noop") return nullptr;
  return run_sleep(ctx);
}

void generate_rows(std::uint64_t seed, std::uint64_t item, std::uint64_t rows, int features, double noise,
                   Eigen::MatrixXd& x, Eigen::VectorXd& y) {
  const RowGen gen{seed, item, rows, features, noise, true_weights(seed, features)};
  x.resize(static_cast<Eigen::Index>(rows), features);
  y.resize(static_cast<Eigen::Index>(rows));
  for (std::uint64_t b = 0; b < gen.blocks(); ++b)
    gen.fill(b, x, y, static_cast<Eigen::Index>(b * kRowsPerBlock));
}

Eigen::VectorXd true_weights(std::uint64_t seed, int features) {
  constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();
  Rng rng = Rng::stream(seed, Stream::data, kAll, kAll);
  Eigen::VectorXd w(features);
  for (int j = 0; j < features; ++j) w[j] = rng.normal();
  return w;
}

}  // namespace shardflow::exec
