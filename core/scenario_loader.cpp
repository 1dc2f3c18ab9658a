#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <shardflow/core/machine.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>

#include "kfp_import.hpp"
#include "scenario_document.hpp"
#include "wfcommons_import.hpp"

namespace shardflow {
namespace {

using YAML::Node;
using Keys = std::span<const std::string_view>;

// Aliases can make a small file expand to a huge tree (and `&a [*a]` is a cycle), so every recursive
// walk has a depth limit and the expanding ones a budget.
using detail::kMaxGroupDepth;
using detail::kMaxItemDepth;
using detail::kMaxItemValues;
using detail::kMaxSteps;

constexpr std::string_view kTopKeys[] = {"name", "description", "seed", "pipeline", "cluster", "overheads"};
constexpr std::string_view kPipelineKeys[] = {"steps"};
constexpr std::string_view kComponentKeys[] = {"input",         "output",  "resources",     "duration",
                                               "failure",       "retries", "image",         "image_size",
                                               "command",       "kernel",  "node_selector", "tolerations",
                                               "node_affinity", "fan_in",  "speculation"};
constexpr std::string_view kStepKeys[] = {
    "name",      "after",         "parallel_for", "steps",         "parallelism", "input",      "output",
    "resources", "duration",      "failure",      "retries",       "image",       "image_size", "command",
    "kernel",    "node_selector", "tolerations",  "node_affinity", "fan_in",      "speculation"};
constexpr std::string_view kNodeAffinityKeys[] = {"preferred"};
constexpr std::string_view kPreferredTermKeys[] = {"weight", "match_labels"};
constexpr std::string_view kLoopKeys[] = {"count", "items", "parallelism", "workers"};
constexpr std::string_view kDataSizeKeys[] = {"size", "total"};
constexpr std::string_view kFanInKeys[] = {"arity"};
constexpr std::string_view kSpeculationKeys[] = {"after", "max"};
constexpr std::string_view kDistributionKeys[] = {"distribution", "value", "median", "sigma",
                                                  "min",          "max",   "mean",   "stddev"};
constexpr std::string_view kResourceKeys[] = {"cpu", "memory", "gpu"};
constexpr std::string_view kDurationKeys[] = {"base", "per_gib", "noise", "straggler"};
constexpr std::string_view kNoiseKeys[] = {"lognormal_sigma"};
constexpr std::string_view kStragglerKeys[] = {"p", "factor"};
constexpr std::string_view kFailureKeys[] = {"p"};
constexpr std::string_view kRetryKeys[] = {"max", "backoff", "factor", "max_backoff"};
constexpr std::string_view kTolerationKeys[] = {"key", "operator", "value", "effect"};
constexpr std::string_view kClusterKeys[] = {"node_pools", "scheduler", "storage"};
constexpr std::string_view kPoolKeys[] = {"name",           "cpu",         "memory",  "gpu",    "count",
                                          "price_per_hour", "speed",       "labels",  "taints", "mtbf",
                                          "spot",           "autoscaling", "max_pods"};
constexpr std::string_view kTaintKeys[] = {"key", "value", "effect"};
constexpr std::string_view kSpotKeys[] = {"discount", "mean_reclaim"};
constexpr std::string_view kAutoscalingKeys[] = {"min", "max", "scale_up_delay", "boot_time",
                                                 "scale_down_idle"};
constexpr std::string_view kSchedulerKeys[] = {"policy",
                                               "percentage_of_nodes_to_score",
                                               "decisions_per_second",
                                               "bind_latency",
                                               "initial_backoff",
                                               "max_backoff",
                                               "score_weights",
                                               "fit_resource_weights",
                                               "requested_to_capacity_ratio"};
// kube-scheduler's score plugin names, as a profile's plugins.score lists them.
constexpr std::string_view kScorePlugins[] = {"NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                              "TaintToleration",  "NodeAffinity",
                                              "ImageLocality",    "PodTopologySpread",
                                              "InterPodAffinity"};
constexpr std::string_view kFitResources[] = {"cpu", "memory", "nvidia.com/gpu"};
constexpr std::string_view kRequestedToCapacityRatioKeys[] = {"shape"};
constexpr std::string_view kShapePointKeys[] = {"utilization", "score"};
constexpr std::string_view kStorageKeys[] = {"read_bandwidth", "write_bandwidth"};
constexpr std::string_view kOverheadKeys[] = {
    "orchestrator",  "pods_per_task",        "driver_pod", "driver_resources",
    "sandbox_start", "image_pull_bandwidth", "image_size", "serialize_image_pulls",
    "job_sync",      "control_plane",        "preset",     "repeat_first_attempt"};
constexpr std::string_view kControlPlaneKeys[] = {
    "sync_period",         "scope",      "create_batch", "max_creates_per_sync", "failure_backoff",
    "max_failure_backoff", "follow_pods"};

std::string got(const Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "got nothing (null)";
    case YAML::NodeType::Scalar:
      return "got " + quote(n.Scalar());
    case YAML::NodeType::Sequence:
      return "got a list";
    case YAML::NodeType::Map:
      return "got a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "got nothing";
}

std::string join(std::span<const std::string> names) {
  std::string out;
  for (const auto& s : names) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}
std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

// Reads one scenario document, remembering the file name for every message.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[nodiscard]] SourceLocation at(const Node& n) const {
    // Newest first: a --set that replaced an overlay's value names the --set.
    for (auto it = overridden_.rbegin(); it != overridden_.rend(); ++it)
      if (it->first.is(n)) return it->second;
    YAML::Mark m = n.Mark();
    if (n.IsNull()) {
      // An empty value's mark is the next token, often on a later line; the key is where the user looks.
      for (const auto& [value, key_mark] : null_values_)
        if (value.is(n)) m = key_mark;
    }
    if (m.is_null() || m.line < 0) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const Node& n, const std::string& field, const std::string& message) const {
    throw InputError(at(n), field, message);
  }
  [[nodiscard]] const std::string& file() const { return file_; }
  void note_null_value(const Node& value, const YAML::Mark& key_mark) const {
    null_values_.emplace_back(value, key_mark);
  }
  // A node that came from a command-line override, an overlay or a preset: errors about it name that,
  // not the file.
  void note_override(const Node& n, const SourceLocation& where) const { overridden_.emplace_back(n, where); }

 private:
  const std::string& file_;
  mutable std::vector<std::pair<Node, YAML::Mark>> null_values_;
  mutable std::vector<std::pair<Node, SourceLocation>> overridden_;
};

// One YAML mapping, checked once for duplicate and unknown keys, then read by key.
class Map {
 public:
  Map(const Reader& r, const Node& node, std::string path, Keys known)
      : r_(r), node_(node), path_(std::move(path)) {
    if (!node.IsMap()) r.fail(node, path_, "expected a mapping, " + got(node));
    for (auto it = node.begin(); it != node.end(); ++it) {
      const Node k = it->first;
      if (!k.IsScalar()) r.fail(k, path_, "a key must be a plain name, " + got(k));
      const std::string& name = k.Scalar();
      if (const auto dup = index_.find(name); dup != index_.end())
        r.fail(k, key_path(path_, name),
               "duplicate key " + quote(name) + " (first at line " +
                   std::to_string(r.at(entries_[dup->second].key_node).line) + ")");
      if (!known.empty() && std::find(known.begin(), known.end(), name) == known.end())
        r.fail(k, key_path(path_, name), unknown_key_message(name, known));
      if (it->second.IsNull()) r.note_null_value(it->second, k.Mark());
      index_.emplace(name, entries_.size());
      entries_.push_back({name, k, it->second});
    }
  }

  static std::string unknown_key_message(const std::string& name, Keys known) {
    return unknown_name_message("key", name, known);
  }
  /// "unknown WHAT "name" (did you mean "x"?)", or the list of known names when none is close.
  static std::string unknown_name_message(std::string_view what, const std::string& name, Keys known) {
    std::string_view best;
    std::size_t best_d = std::numeric_limits<std::size_t>::max();
    for (auto k : known) {
      const std::size_t d = edit_distance(name, k);
      if (d < best_d) {
        best_d = d;
        best = k;
      }
    }
    const std::string head = "unknown " + std::string(what) + " " + quote(name);
    if (best_d <= std::max<std::size_t>(2, name.size() / 3))
      return head + " (did you mean \"" + std::string(best) + "\"?)";
    std::string list;
    for (auto k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return head + " (expected one of: " + list + ")";
  }

  [[nodiscard]] std::optional<Node> get(std::string_view key) const {
    const auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    return entries_[it->second].value;
  }
  [[nodiscard]] Node require(std::string_view key) const {
    if (auto v = get(key)) return *v;
    r_.fail(node_, path_, "missing required key \"" + std::string(key) + "\"");
  }
  [[nodiscard]] bool has(std::string_view key) const { return get(key).has_value(); }
  [[nodiscard]] Node key_node(std::string_view key) const {
    const auto it = index_.find(key);
    return it == index_.end() ? node_ : entries_[it->second].key_node;
  }
  [[nodiscard]] std::string field(std::string_view key) const { return key_path(path_, key); }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const Node& node() const { return node_; }

  struct Entry {
    std::string key;
    Node key_node;
    Node value;
  };
  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }

 private:
  const Reader& r_;
  Node node_;
  std::string path_;
  std::vector<Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // key -> entry; big mappings stay fast
};

// ---- scalars ----------------------------------------------------------------------------------------

const std::string& scalar(const Reader& r, const Node& n, const std::string& field, std::string_view what) {
  if (!n.IsScalar()) r.fail(n, field, "expected " + std::string(what) + ", " + got(n));
  return n.Scalar();
}

std::string get_string(const Reader& r, const Node& n, const std::string& field) {
  return scalar(r, n, field, "a string");
}

std::string get_nonempty_string(const Reader& r, const Node& n, const std::string& field) {
  std::string s = get_string(r, n, field);
  if (s.empty()) r.fail(n, field, "must not be empty");
  return s;
}

std::int64_t get_int(const Reader& r, const Node& n, const std::string& field, std::int64_t min,
                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const std::string& s = scalar(r, n, field, "an integer");
  std::string_view v = s;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  std::int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size()) r.fail(n, field, "expected an integer, got " + quote(s));
  if (ec == std::errc::result_out_of_range) r.fail(n, field, "integer " + quote(s) + " is too large");
  if (out < min) r.fail(n, field, "must be >= " + std::to_string(min) + ", got " + s);
  if (out > max) r.fail(n, field, "must be <= " + std::to_string(max) + ", got " + s);
  return out;
}

double get_number(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a number");
  std::string_view v = s;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  double out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size() || ec != std::errc() || !std::isfinite(out))
    r.fail(n, field, "expected a number, got " + quote(s));
  return out;
}

double get_number_min(const Reader& r, const Node& n, const std::string& field, double min, bool inclusive) {
  const double v = get_number(r, n, field);
  if (inclusive ? v < min : v <= min) {
    std::ostringstream m;
    m << "must be " << (inclusive ? ">= " : "> ") << min << ", got " << n.Scalar();
    r.fail(n, field, m.str());
  }
  return v;
}

double get_probability(const Reader& r, const Node& n, const std::string& field) {
  const double v = get_number(r, n, field);
  if (v < 0 || v > 1) r.fail(n, field, "must be a probability between 0 and 1, got " + n.Scalar());
  return v;
}

Duration get_duration(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a duration");
  Duration d;
  try {
    d = parse_duration(s);
  } catch (const std::invalid_argument& e) {
    r.fail(n, field, e.what());
  }
  if (d < Duration::zero()) r.fail(n, field, "must be >= 0, got " + s);
  return d;
}

ByteCount get_bytes(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a size");
  ByteCount b = 0;
  try {
    b = parse_bytes(s);
  } catch (const std::invalid_argument& e) {
    r.fail(n, field, e.what());
  }
  if (b < 0) r.fail(n, field, "must be >= 0, got " + s);
  return b;
}

MilliCpu get_cpu(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a CPU quantity");
  MilliCpu c = 0;
  try {
    c = parse_cpu(s);
  } catch (const std::invalid_argument& e) {
    r.fail(n, field, e.what());
  }
  if (c <= 0) r.fail(n, field, "must be > 0, got " + s);
  return c;
}

double get_rate(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a rate");
  double v = 0;
  try {
    v = parse_rate(s);
  } catch (const std::invalid_argument& e) {
    r.fail(n, field, e.what());
  }
  if (v < 0) r.fail(n, field, "must be >= 0, got " + s);
  return v;
}

// The YAML 1.2 core schema's booleans; "yes", "on", 1 and the like are rejected rather than guessed.
bool get_bool(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "true or false");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  r.fail(n, field, "expected true or false, got " + quote(s));
}

std::map<std::string, std::string> get_string_map(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  std::map<std::string, std::string> out;
  for (const auto& e : m.entries()) {
    if (e.key.empty()) r.fail(e.key_node, field, "a key must not be empty");
    out[e.key] = get_string(r, e.value, m.field(e.key));
  }
  return out;
}

const Node& expect_list(const Reader& r, const Node& n, const std::string& field) {
  if (!n.IsSequence()) r.fail(n, field, "expected a list, " + got(n));
  return n;
}

// ---- loop items as JSON -------------------------------------------------------------------------------

// A plain YAML scalar resolved by the YAML 1.2 core schema; quoted scalars stay strings.
nlohmann::ordered_json scalar_to_json(const Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() != "?") return s;  // quoted, or an explicit tag: keep the text
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view v = s;
  if (v.front() == '+') v.remove_prefix(1);
  if (!v.empty() && v.front() != '+') {
    std::int64_t i = 0;
    const auto [iend, iec] = std::from_chars(v.data(), v.data() + v.size(), i);
    if (iec == std::errc() && iend == v.data() + v.size()) return i;
    double d = 0;
    const auto [dend, dec] = std::from_chars(v.data(), v.data() + v.size(), d, std::chars_format::general);
    const bool digits = std::any_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (dec == std::errc() && dend == v.data() + v.size() && std::isfinite(d) && digits) return d;
  }
  return s;
}

class ItemConverter {
 public:
  explicit ItemConverter(const Reader& r) : r_(r) {}
  nlohmann::ordered_json convert(const Node& n, const std::string& field, int depth) {
    if (++values_ > kMaxItemValues)
      r_.fail(n, field, "loop items are too large (more than " + std::to_string(kMaxItemValues) + " values)");
    if (depth > kMaxItemDepth)
      r_.fail(n, field, "nested too deeply (more than " + std::to_string(kMaxItemDepth) + " levels)");
    switch (n.Type()) {
      case YAML::NodeType::Scalar:
        return scalar_to_json(n);
      case YAML::NodeType::Sequence: {
        auto out = nlohmann::ordered_json::array();
        std::size_t i = 0;
        for (const auto& c : n) out.push_back(convert(c, index_path(field, i++), depth + 1));
        return out;
      }
      case YAML::NodeType::Map: {
        const Map m(r_, n, field, {});
        auto out = nlohmann::ordered_json::object();
        for (const auto& e : m.entries()) out[e.key] = convert(e.value, m.field(e.key), depth + 1);
        return out;
      }
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        break;
    }
    return nullptr;
  }

 private:
  const Reader& r_;
  std::size_t values_ = 0;
};

// ---- pipeline -------------------------------------------------------------------------------------------

// Also sets `at`'s loop_where and loop_field to its count: or items: value.
Loop read_loop(const Reader& r, ItemConverter& items, const Node& n, const std::string& field, Step& at) {
  const Map m(r, n, field, kLoopKeys);
  Loop loop;
  const auto count = m.get("count");
  const auto list = m.get("items");
  if (count && list) r.fail(m.key_node("items"), m.field("items"), "give either count or items, not both");
  if (!count && !list) r.fail(n, field, "needs count (a number of iterations) or items (a list)");
  at.loop_where = r.at(count ? *count : *list);
  at.loop_field = m.field(count ? "count" : "items");
  if (count) {
    loop.count = static_cast<std::uint32_t>(
        get_int(r, *count, m.field("count"), 1, std::numeric_limits<std::uint32_t>::max()));
  } else {
    const std::string f = m.field("items");
    expect_list(r, *list, f);
    if (list->size() == 0) r.fail(*list, f, "must not be empty (an empty loop runs nothing)");
    if (list->size() > std::numeric_limits<std::uint32_t>::max()) r.fail(*list, f, "too many items");
    std::size_t i = 0;
    for (const auto& item : *list) {
      const auto json = items.convert(item, index_path(f, i), 0);
      try {
        loop.items.push_back(json.dump());
      } catch (const nlohmann::json::type_error&) {
        // YAML text must be Unicode; yaml-cpp passes other bytes through, JSON cannot hold them.
        r.fail(item, index_path(f, i), "is not valid UTF-8 text");
      }
      ++i;
    }
    loop.count = static_cast<std::uint32_t>(loop.items.size());
  }
  if (auto p = m.get("parallelism"))
    loop.parallelism = static_cast<std::uint32_t>(
        get_int(r, *p, m.field("parallelism"), 0, std::numeric_limits<std::uint32_t>::max()));
  if (auto w = m.get("workers")) {
    loop.workers = static_cast<std::uint32_t>(
        get_int(r, *w, m.field("workers"), 1, std::numeric_limits<std::uint32_t>::max()));
    loop.workers_where = r.at(m.key_node("workers"));
  }
  return loop;
}

// `parallel_for.workers` (a work queue) is for a component's loop at the top level of the pipeline.
void check_workers(const Reader& r, const Node& loop_node, const std::string& loop_field, bool group,
                   int depth) {
  if (!loop_node.IsMap() || !loop_node["workers"]) return;
  const Map m(r, loop_node, loop_field, kLoopKeys);
  const std::string f = m.field("workers");
  if (group)
    r.fail(m.key_node("workers"), f,
           "a work queue runs a component's items in worker pods; a group's loop cannot have workers");
  if (depth > 0)
    r.fail(m.key_node("workers"), f, "workers is supported on top-level steps only (not inside a group)");
}

Distribution read_distribution(const Reader& r, const Map& m) {
  const Node kind_node = m.require("distribution");
  const std::string kind = get_string(r, kind_node, m.field("distribution"));
  Distribution d;
  std::vector<std::string_view> keys;
  if (kind == "constant") {
    d.kind = Distribution::Kind::constant;
    keys = {"value"};
  } else if (kind == "uniform") {
    d.kind = Distribution::Kind::uniform;
    keys = {"min", "max"};
  } else if (kind == "normal") {
    d.kind = Distribution::Kind::normal;
    keys = {"mean", "stddev"};
  } else if (kind == "lognormal") {
    d.kind = Distribution::Kind::lognormal;
    keys = {"median", "sigma"};
  } else if (kind == "exponential") {
    d.kind = Distribution::Kind::exponential;
    keys = {"mean"};
  } else {
    r.fail(kind_node, m.field("distribution"),
           "unknown distribution " + quote(kind) +
               " (expected constant, uniform, normal, lognormal or exponential)");
  }
  for (const auto& e : m.entries()) {
    if (e.key == "distribution" || std::find(keys.begin(), keys.end(), e.key) != keys.end()) continue;
    std::string expected;
    for (auto k : keys) {
      if (!expected.empty()) expected += " and ";
      expected += k;
    }
    r.fail(e.key_node, m.field(e.key),
           "does not apply to a " + kind + " distribution (it takes " + expected + ")");
  }
  const auto size = [&](std::string_view k) {
    return static_cast<double>(get_bytes(r, m.require(k), m.field(k)));
  };
  switch (d.kind) {
    case Distribution::Kind::constant:
      d.a = size("value");
      break;
    case Distribution::Kind::uniform:
      d.a = size("min");
      d.b = size("max");
      if (d.b < d.a)
        r.fail(m.require("max"), m.field("max"), "must be >= min (" + m.require("min").Scalar() + ")");
      break;
    case Distribution::Kind::normal:
      d.a = size("mean");
      d.b = size("stddev");
      break;
    case Distribution::Kind::lognormal: {
      d.a = size("median");
      const Node s = m.require("sigma");
      d.b = get_number_min(r, s, m.field("sigma"), 0, true);
      if (d.b > 4) r.fail(s, m.field("sigma"), "must be <= 4, got " + s.Scalar());
      break;
    }
    case Distribution::Kind::exponential:
      d.a = size("mean");
      break;
  }
  return d;
}

// Re-sharding: `input: {total: 1TiB}` on a loop gives each of its `count` items total/count bytes, so a
// --set or --vary of the count keeps the data constant (overrides are applied before this is read).
DataSize read_total_size(const Reader& r, const Map& m, const std::optional<Loop>& loop) {
  if (m.has("size"))
    r.fail(m.key_node("total"), m.field("total"),
           "give either size (per item) or total (split over the items), not both");
  const Node total = m.require("total");
  const std::string f = m.field("total");
  if (!total.IsScalar()) r.fail(total, f, "expected a size, " + got(total));
  const ByteCount bytes = get_bytes(r, total, f);
  if (!loop)
    r.fail(
        m.key_node("total"), f,
        "a total is split over the step's own parallel_for items; this step has no parallel_for (use size)");
  DataSize out;
  out.dist.a = static_cast<double>(bytes) / static_cast<double>(loop->count);
  return out;
}

// `fan_in: {arity: k}`: the number of inputs each task of the merge tree reads (at least 2).
std::uint32_t read_fan_in(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kFanInKeys);
  const Node arity = m.require("arity");
  return static_cast<std::uint32_t>(
      get_int(r, arity, m.field("arity"), 2, std::numeric_limits<std::uint32_t>::max()));
}

// `speculation: {after: 1.5x, max: 1}` on a step with a loop: the factor (> 1) and the backups per task
// (0 to 16, default 1).
void read_speculation(const Reader& r, const Node& n, const std::string& field, Step& step) {
  const Map m(r, n, field, kSpeculationKeys);
  const Node after = m.require("after");
  const std::string f = m.field("after");
  const std::string& s = scalar(r, after, f, "a factor such as 1.5x");
  std::string_view v = s;
  if (!v.empty() && (v.back() == 'x' || v.back() == 'X')) v.remove_suffix(1);
  double factor = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), factor);
  if (v.empty() || end != v.data() + v.size() || ec != std::errc() || !std::isfinite(factor))
    r.fail(after, f, "expected a factor such as 1.5x, got " + quote(s));
  if (factor <= 1)
    r.fail(after, f, "must be > 1x (a backup starts when a run is this much slower), got " + s);
  step.speculation_after = factor;
  step.speculation_max = 1;
  if (auto mx = m.get("max"))
    step.speculation_max = static_cast<std::uint32_t>(get_int(r, *mx, m.field("max"), 0, 16));
}

// A step's `input` or `output`: the bytes each task reads or writes.
DataSize read_data_size(const Reader& r, const Node& n, const std::string& field,
                        const std::optional<Loop>& loop) {
  const Map m(r, n, field, kDataSizeKeys);
  DataSize in;
  if (m.has("total")) return read_total_size(r, m, loop);
  const Node size = m.require("size");
  const std::string f = m.field("size");
  if (size.IsSequence()) {
    std::size_t i = 0;
    for (const auto& s : size) in.per_item.push_back(get_bytes(r, s, index_path(f, i++)));
    if (!loop)
      r.fail(size, f,
             "a list of sizes needs a parallel_for (one size per item); use one size for a single task");
    if (in.per_item.size() != loop->count)
      r.fail(size, f,
             "has " + std::to_string(in.per_item.size()) + " sizes but the loop has " +
                 std::to_string(loop->count) + " items");
  } else if (size.IsMap()) {
    in.dist = read_distribution(r, Map(r, size, f, kDistributionKeys));
  } else {
    in.dist.a = static_cast<double>(get_bytes(r, size, f));
  }
  return in;
}

// Pod requests over `res`, the defaults; for a step's pods and for the driver pod.
Resources read_resources(const Reader& r, const Node& n, const std::string& field, Resources res) {
  const Map m(r, n, field, kResourceKeys);
  if (auto v = m.get("cpu")) res.cpu = get_cpu(r, *v, m.field("cpu"));
  if (auto v = m.get("memory")) res.memory = get_bytes(r, *v, m.field("memory"));
  if (auto v = m.get("gpu")) res.gpu = static_cast<int>(get_int(r, *v, m.field("gpu"), 0, 1'000'000));
  return res;
}

DurationModel read_duration(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kDurationKeys);
  DurationModel d;
  if (auto v = m.get("base")) d.base = get_duration(r, *v, m.field("base"));
  if (auto v = m.get("per_gib")) d.per_gib = get_duration(r, *v, m.field("per_gib"));
  if (auto v = m.get("noise")) {
    const Map noise(r, *v, m.field("noise"), kNoiseKeys);
    if (auto s = noise.get("lognormal_sigma")) {
      d.lognormal_sigma = get_number_min(r, *s, noise.field("lognormal_sigma"), 0, true);
      if (d.lognormal_sigma > 4)
        r.fail(*s, noise.field("lognormal_sigma"), "must be <= 4, got " + s->Scalar());
    }
  }
  if (auto v = m.get("straggler")) {
    const Map st(r, *v, m.field("straggler"), kStragglerKeys);
    if (auto p = st.get("p")) d.straggler_p = get_probability(r, *p, st.field("p"));
    if (auto f = st.get("factor")) d.straggler_factor = get_number_min(r, *f, st.field("factor"), 1, true);
  }
  return d;
}

RetryPolicy read_retries(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kRetryKeys);
  RetryPolicy p;
  if (auto v = m.get("max")) p.max = static_cast<int>(get_int(r, *v, m.field("max"), 0, 1000));
  if (auto v = m.get("backoff")) p.backoff = get_duration(r, *v, m.field("backoff"));
  if (auto v = m.get("factor")) p.factor = get_number_min(r, *v, m.field("factor"), 1, true);
  if (auto v = m.get("max_backoff")) {
    p.max_backoff = get_duration(r, *v, m.field("max_backoff"));
    if (p.max_backoff < p.backoff)
      r.fail(*v, m.field("max_backoff"),
             "must be >= backoff (" + m.require("backoff").Scalar() + "), got " + v->Scalar());
  } else {
    p.max_backoff = std::max(p.max_backoff, p.backoff);
  }
  return p;
}

std::vector<Toleration> read_tolerations(const Reader& r, const Node& n, const std::string& field) {
  expect_list(r, n, field);
  std::vector<Toleration> out;
  std::size_t i = 0;
  for (const auto& t : n) {
    const Map m(r, t, index_path(field, i++), kTolerationKeys);
    Toleration tol;
    if (auto v = m.get("key")) tol.key = get_string(r, *v, m.field("key"));
    if (auto v = m.get("operator")) {
      tol.op = get_string(r, *v, m.field("operator"));
      if (tol.op != "Equal" && tol.op != "Exists")
        r.fail(*v, m.field("operator"), "must be Equal or Exists, got " + quote(tol.op));
    }
    if (auto v = m.get("value")) {
      tol.value = get_string(r, *v, m.field("value"));
      if (tol.op == "Exists" && !tol.value.empty())
        r.fail(*v, m.field("value"), "must be empty when the operator is Exists");
    }
    if (auto v = m.get("effect")) {
      tol.effect = get_string(r, *v, m.field("effect"));
      if (!tol.effect.empty() && tol.effect != "NoSchedule" && tol.effect != "PreferNoSchedule" &&
          tol.effect != "NoExecute")
        r.fail(
            *v, m.field("effect"),
            "must be NoSchedule, PreferNoSchedule or NoExecute (or empty for any), got " + quote(tol.effect));
    }
    if (tol.key.empty() && tol.op != "Exists")
      r.fail(m.node(), m.path(), "a toleration without a key must use operator Exists");
    out.push_back(std::move(tol));
  }
  return out;
}

// A component's node_affinity: {preferred: [{weight: 1-100, match_labels: {key: value, ...}}, ...]}.
std::vector<PreferredSchedulingTerm> read_node_affinity(const Reader& r, const Node& n,
                                                        const std::string& field) {
  const Map m(r, n, field, kNodeAffinityKeys);
  std::vector<PreferredSchedulingTerm> out;
  if (auto v = m.get("preferred")) {
    const std::string f = m.field("preferred");
    expect_list(r, *v, f);
    std::size_t i = 0;
    for (const auto& t : *v) {
      const Map tm(r, t, index_path(f, i++), kPreferredTermKeys);
      PreferredSchedulingTerm term;
      term.weight = static_cast<int>(get_int(r, tm.require("weight"), tm.field("weight"), 1, 100));
      const Node labels = tm.require("match_labels");
      term.match_labels = get_string_map(r, labels, tm.field("match_labels"));
      if (term.match_labels.empty())
        r.fail(labels, tm.field("match_labels"), "must not be empty (an empty term matches no node)");
      out.push_back(std::move(term));
    }
  }
  return out;
}

KernelSpec read_kernel(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  KernelSpec k;
  k.name = get_nonempty_string(r, m.require("name"), m.field("name"));
  k.field = field;
  k.where = r.at(n);
  for (const auto& e : m.entries()) {
    if (e.key == "name") continue;
    k.params[e.key] = scalar(r, e.value, m.field(e.key), "a number or a string");
    k.param_where[e.key] = r.at(e.value);
  }
  return k;
}

std::string describe(const Resources& res) {
  return "cpu " + format_cpu(res.cpu) + ", memory " + format_bytes(res.memory) + ", gpu " +
         std::to_string(res.gpu);
}

// A task that no node could ever hold would wait forever in every backend; say so at load time.
void check_fits(const Reader& r, const Cluster& cluster, const Step& step, const Node& at,
                const std::string& field) {
  const Component& c = step.component;
  const NodePool* largest = nullptr;
  std::vector<std::string> names;
  for (const auto& pool : cluster.node_pools) {
    names.push_back(pool.name);
    if (pool.count == 0 && !pool.autoscaling.enabled()) continue;
    if (!pool_admits(pool, c.node_selector, c.tolerations)) continue;
    if (c.resources.cpu <= pool.cpu && c.resources.memory <= pool.memory && c.resources.gpu <= pool.gpu)
      return;
    if (!largest ||
        std::tie(pool.cpu, pool.memory, pool.gpu) > std::tie(largest->cpu, largest->memory, largest->gpu))
      largest = &pool;
  }
  if (!largest)
    r.fail(at, field,
           "step " + quote(step.name) +
               " fits no node pool: its node_selector and tolerations match none of the " +
               "pools with nodes (" + join(names) + ")");
  r.fail(at, field,
         "step " + quote(step.name) + " asks for " + describe(step.component.resources) +
             ", more than any node it may use can hold (largest: pool " + quote(largest->name) + " with " +
             describe(Resources{largest->cpu, largest->memory, largest->gpu}) + ")");
}

// Like check_fits, for the driver pod: it has no node_selector or tolerations, so it may use the pools
// without NoSchedule/NoExecute taints, or every pool when all are tainted (as the simulator places it).
void check_driver_fits(const Reader& r, const Cluster& cluster, const Overheads& o, const Node& at) {
  const auto untainted = [](const NodePool& p) { return pool_admits(p, {}, {}); };
  const bool any_untainted = std::any_of(cluster.node_pools.begin(), cluster.node_pools.end(), untainted);
  const NodePool* largest = nullptr;
  for (const auto& pool : cluster.node_pools) {
    if ((pool.count == 0 && !pool.autoscaling.enabled()) || (any_untainted && !untainted(pool))) continue;
    if (o.driver_cpu <= pool.cpu && o.driver_memory <= pool.memory) return;
    if (!largest || std::tie(pool.cpu, pool.memory) > std::tie(largest->cpu, largest->memory))
      largest = &pool;
  }
  if (!largest)
    r.fail(at, "overheads.driver_resources",
           "the driver pod fits no node pool: it tolerates no taints, and the pools without NoSchedule or "
           "NoExecute taints have no nodes");
  r.fail(at, "overheads.driver_resources",
         "the driver pod asks for cpu " + format_cpu(o.driver_cpu) + ", memory " +
             format_bytes(o.driver_memory) + ", more than any node it may use can hold (largest: pool " +
             quote(largest->name) + " with cpu " + format_cpu(largest->cpu) + ", memory " +
             format_bytes(largest->memory) + ")");
}

bool valid_step_name(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

class PipelineReader {
 public:
  PipelineReader(const Reader& r, const Cluster& cluster) : r_(r), cluster_(cluster), items_(r) {}

  std::vector<Step> read_steps(const Node& n, const std::string& field, int depth) {
    expect_list(r_, n, field);
    if (n.size() == 0) r_.fail(n, field, "must not be empty (a group needs at least one step)");
    if (depth > kMaxGroupDepth)
      r_.fail(n, field, "groups nest too deeply (more than " + std::to_string(kMaxGroupDepth) + " levels)");
    std::vector<Step> steps;
    std::vector<Pending> pending;
    Names by_name;
    std::size_t i = 0;
    for (const auto& s : n) {
      if (++total_steps_ > kMaxSteps)
        r_.fail(s, index_path(field, i),
                "the pipeline has more than " + std::to_string(kMaxSteps) + " steps");
      Pending p;
      steps.push_back(read_step(s, index_path(field, i), depth, p));
      const auto [first, added] = by_name.emplace(steps.back().name, steps.size() - 1);
      if (!added)
        r_.fail(*p.name_node, p.path + ".name",
                "duplicate step name " + quote(steps.back().name) + " (first at line " +
                    std::to_string(steps[first->second].where.line) + ")");
      pending.push_back(std::move(p));
      ++i;
    }
    resolve(steps, pending, by_name);
    resolve_fan_in(steps, pending);
    return steps;
  }

 private:
  using Names = std::map<std::string, std::size_t, std::less<>>;

  struct Pending {
    std::string path;
    std::optional<Node> name_node;  // optional: yaml-cpp's Node::operator= rewrites the node it refers to
    std::vector<Node> after_nodes;
    std::optional<Node> fan_in_key;  // the `fan_in` key, when the step has one
  };

  Step read_step(const Node& n, const std::string& path, int depth, Pending& p) {
    const Map m(r_, n, path, kStepKeys);
    Step step;
    step.where = r_.at(n);
    p.path = path;
    const Node& name_node = p.name_node.emplace(m.require("name"));
    step.name = get_nonempty_string(r_, name_node, m.field("name"));
    if (!valid_step_name(step.name))
      r_.fail(name_node, m.field("name"),
              "must contain only letters, digits, '-' and '_', got " + quote(step.name));
    if (auto a = m.get("after")) {
      const std::string f = m.field("after");
      expect_list(r_, *a, f);
      std::set<std::string, std::less<>> seen;
      std::size_t i = 0;
      for (const auto& dep : *a) {
        std::string name = get_nonempty_string(r_, dep, index_path(f, i));
        if (!seen.insert(name).second) r_.fail(dep, index_path(f, i), quote(name) + " is listed twice");
        step.after.push_back(std::move(name));
        p.after_nodes.push_back(dep);
        ++i;
      }
    }
    if (auto l = m.get("parallel_for")) {
      step.loop = read_loop(r_, items_, *l, m.field("parallel_for"), step);
      check_workers(r_, *l, m.field("parallel_for"), m.has("steps"), depth);
    }

    if (auto group = m.get("steps")) {
      for (auto k : kComponentKeys) {
        if (m.has(k))
          r_.fail(m.key_node(k), m.field(k),
                  "a group (a step with steps:) cannot have component key \"" + std::string(k) +
                      "\"; put it on the steps inside");
      }
      if (auto par = m.get("parallelism"))
        step.parallelism = static_cast<std::uint32_t>(
            get_int(r_, *par, m.field("parallelism"), 0, std::numeric_limits<std::uint32_t>::max()));
      step.steps = read_steps(*group, m.field("steps"), depth + 1);
      return step;
    }
    if (m.has("parallelism"))
      r_.fail(m.key_node("parallelism"), m.field("parallelism"),
              "only a group (a step with steps:) has parallelism; for a loop use parallel_for.parallelism");

    Component& c = step.component;
    c.resources.cpu = 1000;
    const std::optional<Node> res = m.get("resources");
    if (res) c.resources = read_resources(r_, *res, m.field("resources"), c.resources);
    if (auto v = m.get("fan_in")) read_step_fan_in(m, *v, depth, step, p);
    if (auto v = m.get("speculation")) read_step_speculation(m, *v, depth, step);
    if (auto v = m.get("input")) c.input = read_data_size(r_, *v, m.field("input"), step.loop);
    if (auto v = m.get("output")) c.output = read_data_size(r_, *v, m.field("output"), step.loop);
    if (auto v = m.get("duration")) c.duration = read_duration(r_, *v, m.field("duration"));
    if (auto v = m.get("failure")) {
      const Map f(r_, *v, m.field("failure"), kFailureKeys);
      if (auto pr = f.get("p")) c.failure.p = get_probability(r_, *pr, f.field("p"));
    }
    if (auto v = m.get("retries")) c.retries = read_retries(r_, *v, m.field("retries"));
    if (auto v = m.get("image")) c.image = get_nonempty_string(r_, *v, m.field("image"));
    if (auto v = m.get("image_size")) c.image_size = get_bytes(r_, *v, m.field("image_size"));
    if (auto v = m.get("command")) {
      const std::string f = m.field("command");
      expect_list(r_, *v, f);
      std::size_t i = 0;
      for (const auto& arg : *v) c.command.push_back(get_string(r_, arg, index_path(f, i++)));
    }
    if (auto v = m.get("kernel")) c.kernel = read_kernel(r_, *v, m.field("kernel"));
    if (auto v = m.get("node_selector")) c.node_selector = get_string_map(r_, *v, m.field("node_selector"));
    if (auto v = m.get("tolerations")) c.tolerations = read_tolerations(r_, *v, m.field("tolerations"));
    if (auto v = m.get("node_affinity"))
      c.preferred_node_affinity = read_node_affinity(r_, *v, m.field("node_affinity"));
    if (res)
      check_fits(r_, cluster_, step, *res, m.field("resources"));
    else
      check_fits(r_, cluster_, step, n, path);
    return step;
  }

  // `speculation` on a component: a top-level step with a static parallel_for (not a work queue).
  void read_step_speculation(const Map& m, const Node& v, int depth, Step& step) const {
    const std::string f = m.field("speculation");
    read_speculation(r_, v, f, step);
    step.speculation_where = r_.at(m.key_node("speculation"));
    if (!step.loop)
      r_.fail(m.key_node("speculation"), f,
              "speculation needs a parallel_for on the same step (backups start relative to the median run "
              "time of the loop's finished iterations)");
    if (step.loop->workers != 0)
      r_.fail(m.key_node("speculation"), f, "speculation cannot be combined with parallel_for.workers");
    if (depth > 0)
      r_.fail(m.key_node("speculation"), f,
              "speculation is supported on top-level steps only (not inside a group)");
  }

  // `fan_in` on a component: its arity, and the checks that need only the step itself.
  void read_step_fan_in(const Map& m, const Node& v, int depth, Step& step, Pending& p) const {
    const std::string f = m.field("fan_in");
    step.fan_in_arity = read_fan_in(r_, v, f);
    step.fan_in_where = r_.at(m.key_node("fan_in"));
    p.fan_in_key.emplace(m.key_node("fan_in"));
    if (step.loop)
      r_.fail(m.key_node("fan_in"), f,
              "a step with a parallel_for cannot have fan_in; put fan_in on the step after the loop that "
              "merges it");
    if (depth > 0)
      r_.fail(m.key_node("fan_in"), f, "fan_in is supported on top-level steps only (not inside a group)");
  }

  // The loop a `fan_in` step merges: exactly one of its `after` steps is a component with a parallel_for.
  void resolve_fan_in(std::vector<Step>& steps, const std::vector<Pending>& pending) const {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      Step& s = steps[i];
      if (s.fan_in_arity == 0) continue;
      const Node& at = *pending[i].fan_in_key;
      const std::string f = pending[i].path + ".fan_in";
      std::vector<StepIndex> loops;
      for (StepIndex d : s.deps)
        if (steps[d].loop) loops.push_back(d);
      if (loops.empty())
        r_.fail(at, f, "needs an `after` step with a parallel_for (the loop whose outputs it merges)");
      if (loops.size() > 1)
        r_.fail(at, f,
                "waits for two loops (" + steps[loops[0]].name + " and " + steps[loops[1]].name +
                    "); fan_in merges one");
      if (steps[loops[0]].is_group())
        r_.fail(at, f,
                "merges the outputs of a component loop; " + quote(steps[loops[0]].name) + " is a group");
      s.fan_in_of = loops[0];
    }
  }

  // Resolves `after` names into sibling indices, then rejects cycles, naming one.
  void resolve(std::vector<Step>& steps, const std::vector<Pending>& pending, const Names& by_name) const {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      for (std::size_t j = 0; j < steps[i].after.size(); ++j) {
        const std::string& want = steps[i].after[j];
        const std::string f = index_path(pending[i].path + ".after", j);
        const Node& at = pending[i].after_nodes[j];
        if (want == steps[i].name) r_.fail(at, f, "step " + quote(want) + " cannot wait for itself");
        const auto it = by_name.find(want);
        if (it == by_name.end()) {
          constexpr std::size_t kListed = 10;  // a message, not a listing of a huge group
          std::vector<std::string> others;
          for (const auto& s : steps)
            if (&s != &steps[i] && others.size() < kListed) others.push_back(s.name);
          const std::size_t rest = steps.size() - 1 - others.size();
          r_.fail(at, f,
                  "unknown step " + quote(want) +
                      (others.empty() ? std::string(" (no other steps here)")
                                      : " (steps here: " + join(others) +
                                            (rest ? ", and " + std::to_string(rest) + " more" : "") + ")"));
        }
        steps[i].deps.push_back(static_cast<StepIndex>(it->second));
      }
    }
    // Iterative depth-first search over "waits for" edges; a grey step met again closes a cycle.
    enum : std::uint8_t { white, grey, black };
    std::vector<std::uint8_t> color(steps.size(), white);
    std::vector<std::pair<std::size_t, std::size_t>> stack;  // (step, next dep)
    for (std::size_t root = 0; root < steps.size(); ++root) {
      if (color[root] != white) continue;
      stack.emplace_back(root, 0);
      color[root] = grey;
      while (!stack.empty()) {
        auto& [s, next] = stack.back();
        if (next == steps[s].deps.size()) {
          color[s] = black;
          stack.pop_back();
          continue;
        }
        const std::size_t dep_pos = next++;
        const std::size_t d = steps[s].deps[dep_pos];
        if (color[d] == white) {
          color[d] = grey;
          stack.emplace_back(d, 0);
        } else if (color[d] == grey) {
          // Waits-for chain d ... s, then s waits for d. In run order that is d -> s -> ... -> d.
          std::string cycle = steps[d].name;
          for (auto it = stack.rbegin(); it != stack.rend() && it->first != d; ++it)
            cycle += " -> " + steps[it->first].name;
          cycle += " -> " + steps[d].name;
          r_.fail(pending[s].after_nodes[dep_pos], index_path(pending[s].path + ".after", dep_pos),
                  "dependency cycle: " + cycle + " (each step runs before the next)");
        }
      }
    }
  }

  const Reader& r_;
  const Cluster& cluster_;
  ItemConverter items_;
  std::size_t total_steps_ = 0;
};

// ---- cluster and overheads -------------------------------------------------------------------------

// The controllers' latencies, with where each number comes from in docs/scenario-format.md
// ("Control-plane latencies").
ControlPlane control_plane_preset(const std::string& orchestrator) {
  ControlPlane c;
  if (orchestrator == "indexed-job") {
    // kube-controller-manager v1.36 pkg/controller/job/job_controller.go: SyncJobBatchPeriod,
    // MaxPodCreateDeletePerSync, DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff.
    c.sync_period = Duration::from_s(1);
    c.scope = ControlPlane::Scope::step;
    c.create_batch = Duration::from_ms(5);
    c.max_creates_per_sync = 500;
    c.failure_backoff = Duration::from_s(10);
    c.max_failure_backoff = Duration::from_s(600);
  } else if (orchestrator == "argo" || orchestrator == "kfp-v2") {
    // Argo Workflows v3 workflow/controller: pod events requeue the workflow with AddRateLimited,
    // whose fixedItemIntervalRateLimiter waits DEFAULT_REQUEUE_TIME (10 s). KFP v2 runs on Argo.
    c.sync_period = Duration::from_s(10);
    c.scope = ControlPlane::Scope::run;
  }
  return c;
}

void read_control_plane(const Reader& r, const Node& n, const std::string& field, ControlPlane& c) {
  const Map m(r, n, field, kControlPlaneKeys);
  if (auto v = m.get("sync_period")) c.sync_period = get_duration(r, *v, m.field("sync_period"));
  if (auto v = m.get("scope")) {
    const std::string s = get_string(r, *v, m.field("scope"));
    if (s == "step")
      c.scope = ControlPlane::Scope::step;
    else if (s == "run")
      c.scope = ControlPlane::Scope::run;
    else
      r.fail(*v, m.field("scope"), "expected step or run, got " + quote(s));
  }
  if (auto v = m.get("create_batch")) c.create_batch = get_duration(r, *v, m.field("create_batch"));
  if (auto v = m.get("max_creates_per_sync"))
    c.max_creates_per_sync =
        static_cast<int>(get_int(r, *v, m.field("max_creates_per_sync"), 0, std::numeric_limits<int>::max()));
  if (auto v = m.get("failure_backoff")) c.failure_backoff = get_duration(r, *v, m.field("failure_backoff"));
  if (auto v = m.get("max_failure_backoff"))
    c.max_failure_backoff = get_duration(r, *v, m.field("max_failure_backoff"));
  if (auto v = m.get("follow_pods")) c.follow_pods = get_bool(r, *v, m.field("follow_pods"));
}

Overheads read_overheads(const Reader& r, const std::optional<Node>& n) {
  Overheads o;
  if (n && n->IsScalar()) {
    if (n->Scalar() != "none")
      r.fail(*n, "overheads", "expected a mapping or \"none\", got " + quote(n->Scalar()));
    return o;  // the struct's defaults switch every overhead off
  }
  o.orchestrator = "kfp-v2";
  o.pods_per_task = 2;
  o.driver_pod_duration = Duration::from_s(3);
  o.sandbox_start = Duration::from_s(1);
  o.image_pull_bytes_per_second = static_cast<double>(100 * kMiB);
  o.default_image_size = kGiB;
  o.control_plane = control_plane_preset(o.orchestrator);
  if (!n) return o;
  const Map m(r, *n, "overheads", kOverheadKeys);
  if (auto v = m.get("preset")) {
    // Named sets of defaults; the keys below still apply over them. Sources: docs/scenario-format.md
    // ("Overhead presets").
    o.preset = get_string(r, *v, m.field("preset"));
    if (o.preset == "kwok-testenv") {
      // `run --backend k8s --emulate` on tools/k8s-testenv: shardflow's controller driving Indexed Jobs
      // of kube-controller-manager v1.36, KWOK's fake nodes (no image pulls; Running ~15 ms after the
      // binding), the emulated pods repeating attempt 0's draws. The scheduler's defaults: read_scheduler.
      o.orchestrator = "indexed-job";
      o.pods_per_task = 1;
      o.driver_pod_duration = Duration::zero();
      o.sandbox_start = Duration::from_ms(15);
      o.image_pull_bytes_per_second = 0;
      o.default_image_size = 0;
      o.repeat_first_attempt = true;
    } else {
      r.fail(*v, m.field("preset"), "unknown preset " + quote(o.preset) + " (expected kwok-testenv)");
    }
  }
  if (auto v = m.get("orchestrator")) {
    o.orchestrator = get_string(r, *v, m.field("orchestrator"));
    if (o.orchestrator == "argo" || o.orchestrator == "indexed-job" || o.orchestrator == "none") {
      o.pods_per_task = 1;
      o.driver_pod_duration = Duration::zero();
    } else if (o.orchestrator != "kfp-v2") {
      r.fail(
          *v, m.field("orchestrator"),
          "unknown orchestrator " + quote(o.orchestrator) + " (expected kfp-v2, argo, indexed-job or none)");
    }
  }
  if (auto v = m.get("pods_per_task"))
    o.pods_per_task = static_cast<int>(get_int(r, *v, m.field("pods_per_task"), 1, 16));
  if (auto v = m.get("driver_pod")) {
    if (o.pods_per_task < 2)
      r.fail(*v, m.field("driver_pod"),
             "applies only with a driver pod (orchestrator kfp-v2, or pods_per_task >= 2)");
    o.driver_pod_duration = get_duration(r, *v, m.field("driver_pod"));
  }
  if (auto v = m.get("driver_resources")) {
    if (o.pods_per_task < 2)
      r.fail(*v, m.field("driver_resources"),
             "applies only with a driver pod (orchestrator kfp-v2, or pods_per_task >= 2)");
    const std::string f = m.field("driver_resources");
    // The driver is a small Go program: the simulator gives its pod no GPUs, so asking for one is a mistake.
    if (const Node& d = *v; d.IsMap()) {
      for (auto it = d.begin(); it != d.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == "gpu")
          r.fail(it->first, key_path(f, "gpu"), "a driver pod requests no GPUs (only cpu and memory)");
    }
    const Resources res = read_resources(r, *v, f, {o.driver_cpu, o.driver_memory, 0});
    o.driver_cpu = res.cpu;
    o.driver_memory = res.memory;
  }
  if (auto v = m.get("sandbox_start")) o.sandbox_start = get_duration(r, *v, m.field("sandbox_start"));
  if (auto v = m.get("image_pull_bandwidth"))
    o.image_pull_bytes_per_second = get_rate(r, *v, m.field("image_pull_bandwidth"));
  if (auto v = m.get("image_size")) o.default_image_size = get_bytes(r, *v, m.field("image_size"));
  if (auto v = m.get("serialize_image_pulls"))
    o.serialize_image_pulls = get_bool(r, *v, m.field("serialize_image_pulls"));
  if (auto v = m.get("repeat_first_attempt"))
    o.repeat_first_attempt = get_bool(r, *v, m.field("repeat_first_attempt"));
  o.control_plane = control_plane_preset(o.orchestrator);
  if (o.preset == "kwok-testenv") o.control_plane.follow_pods = true;  // shardflow's controller watches pods
  // job_sync: the first name of control_plane.sync_period.
  if (auto v = m.get("job_sync")) o.control_plane.sync_period = get_duration(r, *v, m.field("job_sync"));
  if (auto v = m.get("control_plane")) read_control_plane(r, *v, m.field("control_plane"), o.control_plane);
  return o;
}

// cluster.scheduler.score_weights: {PluginName: weight}; plugins not named keep their default weight.
ScoreWeights read_score_weights(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  ScoreWeights w;
  for (const auto& e : m.entries()) {
    const std::string f = m.field(e.key);
    if (std::find(std::begin(kScorePlugins), std::end(kScorePlugins), e.key) == std::end(kScorePlugins))
      r.fail(e.key_node, f, Map::unknown_name_message("score plugin", e.key, kScorePlugins));
    const int v = static_cast<int>(get_int(r, e.value, f, 0, 1'000'000));
    if (e.key == "NodeResourcesFit")
      w.node_resources_fit = v;
    else if (e.key == "NodeResourcesBalancedAllocation")
      w.node_resources_balanced_allocation = v;
    else if (e.key == "TaintToleration")
      w.taint_toleration = v;
    else if (e.key == "NodeAffinity")
      w.node_affinity = v;
    else if (e.key == "ImageLocality")
      w.image_locality = v;
    else if (e.key == "PodTopologySpread")
      w.pod_topology_spread = v;
    else
      w.inter_pod_affinity = v;
  }
  return w;
}

// cluster.scheduler.fit_resource_weights: {resource: weight}; replaces the default {cpu: 1, memory: 1}.
FitResourceWeights read_fit_resource_weights(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  if (m.entries().empty()) r.fail(n, field, "must name at least one resource (cpu, memory, nvidia.com/gpu)");
  FitResourceWeights w{0, 0, 0};
  for (const auto& e : m.entries()) {
    const std::string f = m.field(e.key);
    if (std::find(std::begin(kFitResources), std::end(kFitResources), e.key) == std::end(kFitResources))
      r.fail(e.key_node, f, Map::unknown_name_message("resource", e.key, kFitResources));
    const std::int64_t v = get_int(r, e.value, f, std::numeric_limits<std::int64_t>::min());
    if (v < 1 || v > 100)
      r.fail(e.value, f,
             "a resource weight must be 1 to 100 (leave the resource out to not score it), got " +
                 e.value.Scalar());
    (e.key == "cpu" ? w.cpu : e.key == "memory" ? w.memory : w.gpu) = static_cast<int>(v);
  }
  return w;
}

// cluster.scheduler.requested_to_capacity_ratio: {shape: [{utilization: U, score: S}, ...]}.
std::vector<UtilizationShapePoint> read_requested_to_capacity_ratio(const Reader& r, const Node& n,
                                                                    const std::string& field) {
  const Map m(r, n, field, kRequestedToCapacityRatioKeys);
  const Node shape = m.require("shape");
  const std::string f = m.field("shape");
  expect_list(r, shape, f);
  if (shape.size() == 0) r.fail(shape, f, "needs at least one point");
  std::vector<UtilizationShapePoint> out;
  std::size_t i = 0;
  for (const auto& pt : shape) {
    const Map p(r, pt, index_path(f, i++), kShapePointKeys);
    const Node u = p.require("utilization");
    UtilizationShapePoint point;
    point.utilization = static_cast<int>(get_int(r, u, p.field("utilization"), 0, 100));
    point.score = static_cast<int>(get_int(r, p.require("score"), p.field("score"), 0, 10));
    if (!out.empty() && point.utilization <= out.back().utilization)
      r.fail(u, p.field("utilization"),
             "utilizations must increase, got " + std::to_string(point.utilization) + " after " +
                 std::to_string(out.back().utilization));
    out.push_back(point);
  }
  return out;
}

SchedulerConfig read_scheduler(const Reader& r, const std::optional<Node>& n, const std::string& field,
                               bool no_overheads, const std::string& preset) {
  SchedulerConfig s;
  if (preset == "kwok-testenv") {
    // kube-scheduler on the test machine: about 2 ms per decision, the binding seen ~10 ms later
    // (issue 9's measurements: creation -> scheduled 12-13 ms).
    s.decisions_per_second = 500;
    s.bind_latency = Duration::from_ms(10);
  } else if (!no_overheads) {
    s.decisions_per_second = 100;
    s.bind_latency = Duration::from_ms(20);
  }
  if (!n) return s;
  const Map m(r, *n, field, kSchedulerKeys);
  if (auto v = m.get("policy")) {
    const std::string p = get_string(r, *v, m.field("policy"));
    if (p == "least-allocated") {
      s.policy = ScorePolicy::least_allocated;
      s.fit_strategy = FitStrategy::least_allocated;
    } else if (p == "most-allocated") {
      s.policy = ScorePolicy::most_allocated;
      s.fit_strategy = FitStrategy::most_allocated;
    } else if (p == "balanced-allocation") {
      s.policy = ScorePolicy::balanced_allocation;
    } else if (p == "list") {
      s.policy = ScorePolicy::list;
    } else if (p == "requested-to-capacity-ratio") {
      s.fit_strategy = FitStrategy::requested_to_capacity_ratio;  // `policy` keeps least-allocated
      if (!m.has("requested_to_capacity_ratio"))
        r.fail(*v, m.field("policy"),
               "requested-to-capacity-ratio needs cluster.scheduler.requested_to_capacity_ratio.shape");
    } else {
      r.fail(*v, m.field("policy"),
             "unknown policy " + quote(p) +
                 " (expected least-allocated, most-allocated, balanced-allocation, "
                 "requested-to-capacity-ratio or list)");
    }
  }
  if (auto v = m.get("requested_to_capacity_ratio")) {
    if (s.fit_strategy != FitStrategy::requested_to_capacity_ratio)
      r.fail(m.key_node("requested_to_capacity_ratio"), m.field("requested_to_capacity_ratio"),
             "applies only with policy: requested-to-capacity-ratio");
    s.requested_to_capacity_ratio_shape =
        read_requested_to_capacity_ratio(r, *v, m.field("requested_to_capacity_ratio"));
  }
  if (auto v = m.get("score_weights")) s.score_weights = read_score_weights(r, *v, m.field("score_weights"));
  if (auto v = m.get("fit_resource_weights"))
    s.fit_resource_weights = read_fit_resource_weights(r, *v, m.field("fit_resource_weights"));
  if (auto v = m.get("percentage_of_nodes_to_score"))
    s.percentage_of_nodes_to_score =
        static_cast<int>(get_int(r, *v, m.field("percentage_of_nodes_to_score"), 0, 100));
  if (auto v = m.get("decisions_per_second"))
    s.decisions_per_second = get_number_min(r, *v, m.field("decisions_per_second"), 0, true);
  if (auto v = m.get("bind_latency")) s.bind_latency = get_duration(r, *v, m.field("bind_latency"));
  if (auto v = m.get("initial_backoff")) s.initial_backoff = get_duration(r, *v, m.field("initial_backoff"));
  if (auto v = m.get("max_backoff")) {
    s.max_backoff = get_duration(r, *v, m.field("max_backoff"));
    if (s.max_backoff < s.initial_backoff)
      r.fail(*v, m.field("max_backoff"),
             "must be >= initial_backoff (" + format_duration(s.initial_backoff) + ")");
  } else {
    s.max_backoff = std::max(s.max_backoff, s.initial_backoff);
  }
  return s;
}

NodePool read_pool(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kPoolKeys);
  NodePool p;
  p.where = r.at(n);
  p.name = get_nonempty_string(r, m.require("name"), m.field("name"));
  p.cpu = get_cpu(r, m.require("cpu"), m.field("cpu"));
  p.memory = get_bytes(r, m.require("memory"), m.field("memory"));
  if (auto v = m.get("gpu")) p.gpu = static_cast<int>(get_int(r, *v, m.field("gpu"), 0, 1'000'000));
  if (auto v = m.get("price_per_hour"))
    p.price_per_hour = get_number_min(r, *v, m.field("price_per_hour"), 0, true);
  if (auto v = m.get("speed")) p.speed = get_number_min(r, *v, m.field("speed"), 0, false);
  if (auto v = m.get("max_pods"))
    p.max_pods = static_cast<int>(get_int(r, *v, m.field("max_pods"), 1, 1'000'000));
  if (auto v = m.get("labels")) p.labels = get_string_map(r, *v, m.field("labels"));
  if (auto v = m.get("taints")) {
    const std::string f = m.field("taints");
    expect_list(r, *v, f);
    std::size_t i = 0;
    for (const auto& t : *v) {
      const Map tm(r, t, index_path(f, i++), kTaintKeys);
      Taint taint;
      taint.key = get_nonempty_string(r, tm.require("key"), tm.field("key"));
      if (auto tv = tm.get("value")) taint.value = get_string(r, *tv, tm.field("value"));
      if (auto e = tm.get("effect")) {
        taint.effect = get_string(r, *e, tm.field("effect"));
        if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" && taint.effect != "NoExecute")
          r.fail(*e, tm.field("effect"),
                 "must be NoSchedule, PreferNoSchedule or NoExecute, got " + quote(taint.effect));
      }
      p.taints.push_back(std::move(taint));
    }
  }
  if (auto v = m.get("mtbf")) p.mtbf = get_duration(r, *v, m.field("mtbf"));
  if (auto v = m.get("spot")) {
    const Map s(r, *v, m.field("spot"), kSpotKeys);
    p.spot = true;
    if (auto d = s.get("discount")) {
      p.spot_discount = get_number(r, *d, s.field("discount"));
      if (p.spot_discount < 0 || p.spot_discount >= 1)
        r.fail(*d, s.field("discount"), "must be >= 0 and < 1 (a fraction of the price), got " + d->Scalar());
    }
    if (auto d = s.get("mean_reclaim")) p.spot_mean_reclaim = get_duration(r, *d, s.field("mean_reclaim"));
  }
  if (auto v = m.get("autoscaling")) {
    const Map a(r, *v, m.field("autoscaling"), kAutoscalingKeys);
    Autoscaling& as = p.autoscaling;
    if (auto x = a.get("min")) as.min = static_cast<int>(get_int(r, *x, a.field("min"), 0, 1'000'000));
    const Node max_node = a.require("max");
    as.max = static_cast<int>(get_int(r, max_node, a.field("max"), 1, 1'000'000));
    if (as.max < as.min) r.fail(max_node, a.field("max"), "must be >= min (" + std::to_string(as.min) + ")");
    if (auto x = a.get("scale_up_delay")) as.scale_up_delay = get_duration(r, *x, a.field("scale_up_delay"));
    if (auto x = a.get("boot_time")) as.boot_time = get_duration(r, *x, a.field("boot_time"));
    if (auto x = a.get("scale_down_idle"))
      as.scale_down_idle = get_duration(r, *x, a.field("scale_down_idle"));
  }
  if (auto v = m.get("count")) {
    p.count = static_cast<int>(get_int(r, *v, m.field("count"), 0, 1'000'000));
    if (p.autoscaling.enabled() && (p.count < p.autoscaling.min || p.count > p.autoscaling.max))
      r.fail(*v, m.field("count"),
             "must be between autoscaling.min and autoscaling.max (" + std::to_string(p.autoscaling.min) +
                 ".." + std::to_string(p.autoscaling.max) + "), got " + v->Scalar());
  } else if (p.autoscaling.enabled()) {
    p.count = p.autoscaling.min;
  } else {
    r.fail(n, field, "missing required key \"count\" (or autoscaling)");
  }
  return p;
}

Cluster read_cluster(const Reader& r, const Node& n, bool no_overheads, const std::string& preset) {
  const Map m(r, n, "cluster", kClusterKeys);
  Cluster c;
  const Node pools = m.require("node_pools");
  const std::string f = m.field("node_pools");
  expect_list(r, pools, f);
  if (pools.size() == 0) r.fail(pools, f, "needs at least one node pool");
  std::size_t i = 0;
  std::int64_t nodes = 0;
  for (const auto& p : pools) {
    NodePool pool = read_pool(r, p, index_path(f, i));
    for (const auto& other : c.node_pools) {
      if (other.name == pool.name)
        r.fail(p, index_path(f, i) + ".name",
               "duplicate pool name " + quote(pool.name) + " (first at line " +
                   std::to_string(other.where.line) + ")");
    }
    nodes += pool.count + pool.autoscaling.max;
    c.node_pools.push_back(std::move(pool));
    ++i;
  }
  if (nodes == 0) r.fail(pools, f, "the cluster has no nodes (every pool has count 0 and no autoscaling)");
  c.scheduler = read_scheduler(r, m.get("scheduler"), m.field("scheduler"), no_overheads, preset);
  if (auto s = m.get("storage")) {
    const Map sm(r, *s, m.field("storage"), kStorageKeys);
    if (auto b = sm.get("read_bandwidth"))
      c.storage.read_bytes_per_second = get_rate(r, *b, sm.field("read_bandwidth"));
    if (auto b = sm.get("write_bandwidth"))
      c.storage.write_bytes_per_second = get_rate(r, *b, sm.field("write_bandwidth"));
  }
  return c;
}

// Simulating a task costs about this much memory at its peak (trace, plan and simulator state:
// `simulate` of 1 and 2 million tasks on 2,000 nodes peaked at 205 bytes per task, 2026-11-30).
constexpr double kSimulateBytesPerTask = 205;

// Along the path to the component step with the most task instances, the loop with the most iterations:
// the one to shrink when the pipeline is too large.
struct WidestLoop {
  std::uint64_t tasks = 0;
  const Step* step = nullptr;  // whose loop it is
};

void find_widest_loop(const std::vector<Step>& steps, std::uint64_t outer, const Step* widest,
                      WidestLoop& out) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const Step& s : steps) {
    const Step* w = widest;
    if (s.loop && (w == nullptr || s.loop->count > w->loop->count)) w = &s;
    const std::uint64_t k = std::max<std::uint32_t>(1, s.iterations());
    const std::uint64_t tasks = outer > kMax / k ? kMax : outer * k;
    if (s.is_group()) {
      find_widest_loop(s.steps, tasks, w, out);
    } else if (tasks > out.tasks) {
      out = WidestLoop{tasks, w};
    }
  }
}

void check_task_limit(const Pipeline& pipeline, std::uint64_t max_tasks, const std::string& file) {
  const std::uint64_t tasks = Plan::count_tasks(pipeline);
  if (tasks <= max_tasks) return;
  WidestLoop w;
  find_widest_loop(pipeline.steps, 1, nullptr, w);
  const double bytes = static_cast<double>(tasks) * kSimulateBytesPerTask;
  std::ostringstream about;
  if (bytes < 1024.0 * 1024 * 1024)
    about << std::max<long long>(1, std::llround(bytes / (1024.0 * 1024))) << " MiB";
  else
    about << std::llround(bytes / (1024.0 * 1024 * 1024)) << " GiB";
  const std::string what =
      "the pipeline unrolls to " +
      (tasks == std::numeric_limits<std::uint64_t>::max() ? "more than " : std::string()) +
      with_commas(tasks) + " tasks (about " + about.str() + " of memory to simulate); the limit is " +
      with_commas(max_tasks) + " (--max-tasks raises it; `explain` counts without unrolling)";
  if (w.step == nullptr) throw InputError(SourceLocation{file, 1, 1}, "pipeline", what);
  throw InputError(w.step->loop_where, w.step->loop_field, what);
}

Scenario read_scenario(const Reader& r, const Node& root, std::uint64_t max_tasks) {
  if (!root.IsDefined() || root.IsNull())
    throw InputError(SourceLocation{r.file(), 1, 1}, "",
                     "the file is empty; expected a mapping with name, pipeline and cluster");
  if (!root.IsMap())
    r.fail(root, "", "the top level must be a mapping with name, pipeline and cluster, " + got(root));
  const Map m(r, root, "", kTopKeys);
  Scenario s;
  s.file = r.file();
  s.name = get_nonempty_string(r, m.require("name"), "name");
  if (auto d = m.get("description")) s.description = get_string(r, *d, "description");
  if (auto v = m.get("seed")) {
    const std::string& text = scalar(r, *v, "seed", "a non-negative integer");
    std::string_view t = text;
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), s.seed);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size())
      r.fail(*v, "seed", "expected an integer from 0 to 18446744073709551615, got " + quote(text));
  }
  const auto over = m.get("overheads");
  s.overheads = read_overheads(r, over);
  const bool no_overheads = over && over->IsScalar();
  const Node cluster_node = m.require("cluster");
  s.cluster = read_cluster(r, cluster_node, no_overheads, s.overheads.preset);
  if (s.overheads.pods_per_task >= 2) {
    // Point at the requests if the file gives them, else at what holds the defaults.
    std::optional<Node> at;
    if (over && over->IsMap()) at = Map(r, *over, "overheads", kOverheadKeys).get("driver_resources");
    check_driver_fits(r, s.cluster, s.overheads, at ? *at : over ? *over : cluster_node);
  }
  const Map p(r, m.require("pipeline"), "pipeline", kPipelineKeys);
  s.pipeline.name = s.name;
  PipelineReader pr(r, s.cluster);
  s.pipeline.steps = pr.read_steps(p.require("steps"), "pipeline.steps", 0);
  check_task_limit(s.pipeline, max_tasks, r.file());
  return s;
}

SourceLocation location_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null() || m.line < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, m.line + 1, m.column + 1};
}

// Records where each document starts; the events themselves are not needed.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnMapEnd() override {}
  std::vector<YAML::Mark> starts;
};

// A scenario is one YAML document. yaml-cpp's parser does not consume a stray flow token such as ","
// or "}" at the top level: it reports an empty document and then "another document" at the same place
// forever (YAML::LoadAll never returns, YAML::Load returns null). So we look at no more than three
// document starts and call a start that does not move a syntax error.
void check_single_document(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts docs;
  while (docs.starts.size() < 3 && parser.HandleNextDocument(docs)) {
    const auto n = docs.starts.size();
    if (n >= 2 && docs.starts[n - 1].pos == docs.starts[n - 2].pos) {
      const YAML::Mark& m = docs.starts.back();
      const std::string what = m.pos >= 0 && static_cast<std::size_t>(m.pos) < text.size()
                                   ? quote(text.substr(static_cast<std::size_t>(m.pos), 1))
                                   : "text";
      throw InputError(location_of(m, file), "", "YAML syntax error: unexpected " + what);
    }
  }
  if (docs.starts.size() > 1)
    throw InputError(location_of(docs.starts[1], file), "",
                     "expected one YAML document, found more than one");
}

// ---- overrides: PATH=VALUE applied to the document before it is read ---------------------------------

// Registers `n` and everything inside it (keys too) as coming from the override at `where`.
void note_override_tree(const Reader& r, const Node& n, const SourceLocation& where) {
  r.note_override(n, where);
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      note_override_tree(r, it->first, where);
      note_override_tree(r, it->second, where);
    }
  } else if (n.IsSequence()) {
    for (auto it = n.begin(); it != n.end(); ++it) note_override_tree(r, *it, where);
  }
}

struct PathPart {
  std::string key;       // a mapping key, or
  std::string selector;  // a list element: an index or the `name` of an element (key empty)
};

std::vector<PathPart> parse_override_path(std::string_view path, const SourceLocation& where) {
  std::vector<PathPart> parts;
  std::size_t i = 0;
  const auto bad = [&](const std::string& why) -> InputError { return InputError(where, "", why); };
  while (i < path.size()) {
    if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) throw bad("a '[' in the path has no ']'");
      if (close == i + 1) throw bad("empty [] in the path: give an index or a name, as in node_pools[0]");
      if (parts.empty()) throw bad("the path starts with [...]: it starts with a key, as in cluster");
      parts.push_back({"", std::string(path.substr(i + 1, close - i - 1))});
      i = close + 1;
      if (i < path.size() && path[i] == '.') {
        ++i;
        if (i == path.size()) throw bad("the path ends with '.'");
      }
      continue;
    }
    const std::size_t end = path.find_first_of(".[", i);
    const std::string_view key = path.substr(i, end == std::string_view::npos ? path.size() - i : end - i);
    if (key.empty()) throw bad("an empty key in the path (two dots, or a leading dot)");
    parts.push_back({std::string(key), ""});
    i = end == std::string_view::npos ? path.size() : end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) throw bad("the path ends with '.'");
    }
  }
  if (parts.empty()) throw bad("the path is empty");
  return parts;
}

// The field path as the loader names fields, for messages: cluster.node_pools[1].count
std::string parts_text(const std::vector<PathPart>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (!parts[i].key.empty())
      out += (out.empty() ? "" : ".") + parts[i].key;
    else
      out += "[" + parts[i].selector + "]";
  }
  return out;
}

void apply_override(const Reader& r, Node& root, const std::string& text) {
  const SourceLocation where{"--set " + text, 0, 0};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw InputError(where, "", "expected PATH=VALUE, as in cluster.node_pools[0].count=8");
  const std::vector<PathPart> parts = parse_override_path(std::string_view(text).substr(0, eq), where);
  Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw InputError(where, parts_text(parts, parts.size()), "the value is not valid YAML: " + e.msg);
  }
  if (!root.IsMap())
    throw InputError(where, "", "the scenario file is not a mapping, so nothing can be set in it");
  Node cur(root);  // a handle; reset() moves it, `=` would overwrite the node it refers to
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PathPart& p = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = parts_text(parts, i + 1);
    if (!p.key.empty()) {
      if (!cur.IsMap())
        throw InputError(where, parts_text(parts, i), "is not a mapping: it has no key " + quote(p.key));
      if (last) {
        cur[p.key] = value;
        for (auto it = cur.begin(); it != cur.end(); ++it)
          if (it->first.Scalar() == p.key) r.note_override(it->first, where);
      } else if (!cur[p.key] || cur[p.key].IsNull()) {
        cur[p.key] = Node(YAML::NodeType::Map);  // made, as a file would have it
        for (auto it = cur.begin(); it != cur.end(); ++it)
          if (it->first.Scalar() == p.key) r.note_override(it->first, where);
      }
      if (!last) cur.reset(cur[p.key]);
      continue;
    }
    if (!cur.IsSequence())
      throw InputError(where, parts_text(parts, i), "is not a list: [" + p.selector + "] selects nothing");
    std::size_t index = cur.size();
    if (p.selector.find_first_not_of("0123456789") == std::string::npos) {
      index = p.selector.size() <= 9 ? std::stoul(p.selector) : cur.size();
      if (index >= cur.size())
        throw InputError(where, here,
                         "no such element: " + parts_text(parts, i) + " has " + std::to_string(cur.size()) +
                             (cur.size() == 1 ? " element" : " elements"));
    } else {
      std::string names;
      for (std::size_t k = 0; k < cur.size() && index == cur.size(); ++k) {
        const Node e = cur[k];
        const Node name = e.IsMap() ? e["name"] : Node();
        if (name && name.IsScalar()) {
          if (name.Scalar() == p.selector) index = k;
          names += (names.empty() ? "" : ", ") + name.Scalar();
        }
      }
      if (index == cur.size())
        throw InputError(where, here,
                         "no element named " + quote(p.selector) + " in " + parts_text(parts, i) +
                             (names.empty() ? "" : " (names: " + names + ")"));
    }
    if (last)
      cur[index] = value;
    else
      cur.reset(cur[index]);
  }
  note_override_tree(r, value, where);
}

// ---- overlays and the local cluster preset: merged into the document before it is read --------------

// An overlay is merged with new container nodes (never by assigning into the scenario's nodes: yaml-cpp's
// `=` rewrites the node a handle refers to, and an alias shares it), so every node keeps its identity and
// so its registered place.
constexpr int kMaxOverlayDepth = 64;
constexpr std::size_t kMaxOverlayValues = 100'000;

Node parse_document(const std::string& text, const std::string& file) {
  try {
    check_single_document(text, file);
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(location_of(e.mark, file), "", "YAML syntax error: " + e.msg);
  }
}

// Registers an overlay's nodes (keys too) with their places in the overlay's file; an empty value at its
// key, as the scenario's own are. Aliases could make this walk endless or huge, hence the limits.
void note_overlay_tree(const Reader& r, const Node& n, const std::string& file, const YAML::Mark& mark,
                       int depth, std::size_t& count) {
  if (depth > kMaxOverlayDepth)
    throw InputError(
        location_of(mark, file), "",
        "the overlay nests too deeply (more than " + std::to_string(kMaxOverlayDepth) + " levels)");
  if (++count > kMaxOverlayValues)
    throw InputError(location_of(mark, file), "",
                     "the overlay is too large (more than " + std::to_string(kMaxOverlayValues) +
                         " values, counting what aliases repeat)");
  r.note_override(n, location_of(mark, file));
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      note_overlay_tree(r, it->first, file, it->first.Mark(), depth + 1, count);
      const Node v = it->second;
      note_overlay_tree(r, v, file, v.IsNull() ? it->first.Mark() : v.Mark(), depth + 1, count);
    }
  } else if (n.IsSequence()) {
    for (auto it = n.begin(); it != n.end(); ++it)
      note_overlay_tree(r, *it, file, it->Mark(), depth + 1, count);
  }
}

// The `name` of a list element that is a mapping with a scalar name.
std::optional<std::string> element_name(const Node& e) {
  if (!e.IsMap()) return std::nullopt;
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar())
      return it->second.Scalar();
  return std::nullopt;
}

// `over` merged over `base`: mappings key by key (deeply unless `deep` is false: then a key's value is
// replaced), lists of named mappings element by element, anything else replaced. New containers take
// the place of the base's.
Node merge(const Reader& r, const Node& base, const Node& over, const std::string& path, int depth,
           bool deep = true) {
  if (depth > kMaxOverlayDepth)
    r.fail(over, "",
           "the overlay nests too deeply (more than " + std::to_string(kMaxOverlayDepth) + " levels)");
  if (base.IsMap() && over.IsMap()) {
    std::vector<Node> keys, values;  // Node handles: only push_back and reset(), never `=`
    std::map<std::string, std::size_t, std::less<>> first;  // a base key -> its first entry
    for (auto it = base.begin(); it != base.end(); ++it) {
      if (it->first.IsScalar()) first.emplace(it->first.Scalar(), keys.size());
      keys.push_back(it->first);
      values.push_back(it->second);
    }
    std::map<std::string, Node, std::less<>> seen;  // the overlay's keys
    for (auto it = over.begin(); it != over.end(); ++it) {
      const Node k = it->first;
      if (k.IsScalar()) {
        const std::string& name = k.Scalar();
        if (const auto [dup, added] = seen.emplace(name, k); !added)
          r.fail(k, key_path(path, name),
                 "duplicate key " + quote(name) + " (first at line " +
                     std::to_string(r.at(dup->second).line) + ")");
        if (const auto f = first.find(name); f != first.end()) {
          const std::size_t i = f->second;
          values[i].reset(deep ? merge(r, values[i], it->second, key_path(path, name), depth + 1)
                               : Node(it->second));
          continue;
        }
      }
      keys.push_back(k);  // a key the scenario lacks (or not a plain name: reading reports that)
      values.push_back(it->second);
    }
    Node out(YAML::NodeType::Map);
    for (std::size_t i = 0; i < keys.size(); ++i) out.force_insert(keys[i], values[i]);
    r.note_override(out, r.at(base));
    return out;
  }
  if (base.IsSequence() && over.IsSequence() && over.size() > 0 &&
      std::all_of(over.begin(), over.end(), [](const Node& e) { return element_name(e).has_value(); })) {
    std::vector<Node> elements;
    std::map<std::string, std::size_t, std::less<>> by_name;  // the base list's first element of a name
    for (auto it = base.begin(); it != base.end(); ++it) {
      if (const auto name = element_name(*it)) by_name.emplace(*name, elements.size());
      elements.push_back(*it);
    }
    for (auto it = over.begin(); it != over.end(); ++it) {
      if (const auto f = by_name.find(*element_name(*it)); f != by_name.end())
        elements[f->second].reset(merge(r, elements[f->second], *it, index_path(path, f->second), depth + 1));
      else
        elements.push_back(*it);
    }
    Node out(YAML::NodeType::Sequence);
    for (const Node& e : elements) out.push_back(e);
    r.note_override(out, r.at(base));
    return out;
  }
  return over;
}

void apply_overlay(const Reader& r, Node& root, const detail::ParsedOverlay& overlay) {
  const Node& o = overlay.root;
  std::size_t count = 0;
  note_overlay_tree(r, o, overlay.path, o.Mark(), 0, count);
  if (root.IsMap()) root.reset(merge(r, root, o, "", 0));  // else reading the scenario reports its own error
}

// `cluster` and `overheads` replaced by this machine and the local backend's (none), as YAML, so that
// overlays and --set apply on top of it as on a file.
void apply_cluster_preset(const Reader& r, Node& root, const std::string& cluster) {
  const SourceLocation where{"--cluster " + cluster, 0, 0};
  const ByteCount memory = machine_memory();
  if (memory <= 0) throw InputError(where, "", "cannot read this machine's physical memory");
  const std::string text =
      "cluster:\n"
      "  node_pools:\n"
      "    - name: local\n"
      "      count: 1\n"
      "      cpu: " +
      std::to_string(machine_cores()) +
      "\n"
      "      memory: " +
      std::to_string(memory) +
      "\n"
      "      gpu: 0\n"
      "      price_per_hour: 0\n"
      "      max_pods: 1000000\n"
      "  scheduler: {decisions_per_second: 0, bind_latency: 0s, initial_backoff: 0s, max_backoff: 0s}\n"
      "  storage: {read_bandwidth: 0/s, write_bandwidth: 0/s}\n"
      "overheads: {orchestrator: none, sandbox_start: 0s, image_pull_bandwidth: 0/s, image_size: 0}\n";
  const Node preset = YAML::Load(text);
  note_override_tree(r, preset, where);
  if (root.IsMap()) root.reset(merge(r, root, preset, "", 0, false));
}

}  // namespace

Scenario load_scenario_text(std::string_view yaml, const std::string& file) {
  return load_scenario_text(yaml, file, LoadOptions{});
}

Scenario load_scenario_text(std::string_view yaml, const std::string& file,
                            const std::vector<std::string>& overrides) {
  LoadOptions options;
  options.sets = overrides;
  return load_scenario_text(yaml, file, options);
}

namespace detail {

YAML::Node parse_yaml_document(const std::string& text, const std::string& file) {
  return parse_document(text, file);
}

ParsedOverlay parse_overlay(const ScenarioFile& overlay) {
  ParsedOverlay p{overlay.path, parse_document(overlay.text, overlay.path)};
  const Node& o = p.root;
  if (!o.IsDefined() || o.IsNull())
    throw InputError(SourceLocation{overlay.path, 1, 1}, "",
                     "the overlay is empty; expected a mapping of what to change, as in a scenario file");
  if (!o.IsMap())
    throw InputError(location_of(o.Mark(), overlay.path), "",
                     "an overlay must be a mapping of what to change, as in a scenario file, " + got(o));
  return p;
}

Scenario read_scenario_document(const ScenarioDocument& doc, const std::string& file,
                                const std::vector<ParsedOverlay>& overlays, const LoadOptions& options) {
  if (!options.cluster.empty() && options.cluster != "local")
    throw InputError({}, "--cluster", "expected \"local\", got " + quote(options.cluster));
  const Reader r(file);
  for (const auto& [n, where] : doc.origins) r.note_override(n, where);
  Node root = doc.root;
  if (!options.cluster.empty()) apply_cluster_preset(r, root, options.cluster);
  for (const ParsedOverlay& o : overlays) apply_overlay(r, root, o);
  for (const std::string& o : options.sets) apply_override(r, root, o);
  try {
    return read_scenario(r, root, options.max_tasks);
  } catch (const YAML::Exception& e) {
    // Only reached if a yaml-cpp accessor misbehaves; still a clear error rather than a crash.
    throw InputError(location_of(e.mark, file), "", e.msg);
  }
}

}  // namespace detail

Scenario load_scenario_text(std::string_view yaml, const std::string& file, const LoadOptions& options) {
  std::error_code ec;  // a file is a cluster for a KFP pipeline only, which is known after parsing
  if (!options.cluster.empty() && options.cluster != "local" &&
      !std::filesystem::is_regular_file(options.cluster, ec))
    throw InputError({}, "--cluster", "expected \"local\", got " + quote(options.cluster));
  if (looks_like_wfcommons(yaml)) return import_wfcommons(yaml, file, options);
  const Node root = parse_document(std::string(yaml), file);
  if (auto imported = import_foreign_document(root, file, options)) return std::move(*imported);
  std::vector<detail::ParsedOverlay> overlays;
  for (const ScenarioFile& o : options.overlays) overlays.push_back(detail::parse_overlay(o));
  return detail::read_scenario_document({root, {}}, file, overlays, options);
}

Scenario load_scenario_file(const std::string& path) {
  return load_scenario_file(path, LoadOptions{});
}

namespace {

// A scenario file's bytes. A regular file is read in one go into a buffer of its size that is not
// zero-filled first (a 2 MB WfCommons instance took 0.3 ms through a stringstream, and filling the
// buffer before reading into it is a pass over it for nothing); anything else (a pipe), or the rest of a
// file that grew while it was read, goes through the stream into `rest`.
struct FileBytes {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
  std::string rest;
  [[nodiscard]] bool whole() const { return rest.empty(); }
  [[nodiscard]] std::string_view view() const { return {data.get(), size}; }
  [[nodiscard]] std::string text() const { return std::string(view()) + rest; }
};

FileBytes read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(SourceLocation{path, 0, 0}, "", "is a directory, not a scenario file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(SourceLocation{path, 0, 0}, "",
                     "cannot open the file (it does not exist or is not readable)");
  FileBytes bytes;
  if (std::filesystem::is_regular_file(path, ec)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) {
      bytes.data.reset(new char[size + 1]);  // uninitialized, unlike a std::string of that size
      in.read(bytes.data.get(), static_cast<std::streamsize>(size));
      if (in.bad()) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read the file");
      bytes.size = static_cast<std::size_t>(in.gcount());
      if (in.peek() == std::char_traits<char>::eof()) return bytes;
      in.clear();  // the file grew while it was read: the rest through the stream
      std::ostringstream rest;
      rest << in.rdbuf();
      bytes.rest = rest.str();
      return bytes;
    }
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read the file");
  bytes.rest = text.str();
  return bytes;
}

}  // namespace

std::string read_scenario_file(const std::string& path) {
  const FileBytes bytes = read_file_bytes(path);
  if (bytes.size == 0) return bytes.rest;
  return bytes.text();
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides) {
  return load_scenario_text(read_scenario_file(path), path, overrides);
}

Scenario load_scenario_file(const std::string& path, const LoadOptions& options) {
  const FileBytes bytes = read_file_bytes(path);
  if (bytes.whole()) return load_scenario_text(bytes.view(), path, options);
  return load_scenario_text(bytes.text(), path, options);
}

ScenarioFile read_overlay_file(const std::string& path) {
  try {
    return ScenarioFile{path, read_scenario_file(path)};
  } catch (const InputError& e) {
    throw InputError(SourceLocation{"--overlay " + path, 0, 0}, "", e.message());
  }
}

}  // namespace shardflow
