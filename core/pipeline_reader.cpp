#include "pipeline_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "scenario_document.hpp"
#include "validate.hpp"

namespace shardflow::detail {
namespace {

using YAML::Node;

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
constexpr std::string_view kRetryKeys[] = {"max", "backoff", "factor", "max_backoff", "max_duration"};
constexpr std::string_view kTolerationKeys[] = {"key", "operator", "value", "effect"};

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
      r_.fail(n, field,
              "the pipeline's loop items are too large (more than " + std::to_string(kMaxItemValues) +
                  " values in all its loops; an item that is a list or a mapping counts one, and one more "
                  "for each value in it)");
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
  const Map m(r, n, field, kLoopKeys, Map::Kind::read_on);
  Parts part(m);  // count or items, parallelism and workers each on its own
  Loop loop;
  const auto count = m.get("count");
  const auto list = m.get("items");
  if (count && list) {
    // At the items, unless they have no place (an imported loop's) and the count has one (a --set's).
    const SourceLocation items_at = r.at(m.key_node("items")), count_at = r.at(m.key_node("count"));
    const SourceLocation nowhere = r.at(YAML::Node());  // the file alone: a value made, not written
    const bool at_count = items_at == nowhere && count_at != nowhere;
    r.fail(m.key_node(at_count ? "count" : "items"), m.field(at_count ? "count" : "items"),
           "give either count or items, not both");
  }
  if (!count && !list) {
    if (m.bad_keys() != 0) throw AlreadyReported(r.at(n), field, "the mapping has keys that were reported");
    r.fail(n, field, "needs count (a number of iterations) or items (a list)");
  }
  at.loop_where = r.at(count ? *count : *list);
  at.loop_field = m.field(count ? "count" : "items");
  part([&] {
    if (count) {
      loop.count = static_cast<std::uint32_t>(
          get_int(r, *count, m.field("count"), 1, std::numeric_limits<std::uint32_t>::max()));
      return;
    }
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
  });
  if (auto p = m.get("parallelism"))
    part([&] {
      loop.parallelism = static_cast<std::uint32_t>(
          get_int(r, *p, m.field("parallelism"), 0, std::numeric_limits<std::uint32_t>::max()));
    });
  if (auto w = m.get("workers"))
    part([&] {
      loop.workers = static_cast<std::uint32_t>(
          get_int(r, *w, m.field("workers"), 1, std::numeric_limits<std::uint32_t>::max()));
      loop.workers_where = r.at(m.key_node("workers"));
    });
  part.done();
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

DurationModel read_duration(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kDurationKeys, Map::Kind::read_on);
  Parts part(m);
  DurationModel d;
  if (auto v = m.get("base")) part([&] { d.base = get_duration(r, *v, m.field("base")); });
  if (auto v = m.get("per_gib")) part([&] { d.per_gib = get_duration(r, *v, m.field("per_gib")); });
  if (auto v = m.get("noise"))
    part([&] {
      const Map noise(r, *v, m.field("noise"), kNoiseKeys);
      if (auto s = noise.get("lognormal_sigma")) {
        d.lognormal_sigma = get_number_min(r, *s, noise.field("lognormal_sigma"), 0, true);
        if (d.lognormal_sigma > 4)
          r.fail(*s, noise.field("lognormal_sigma"), "must be <= 4, got " + s->Scalar());
      }
    });
  if (auto v = m.get("straggler"))
    part([&] {
      const Map st(r, *v, m.field("straggler"), kStragglerKeys, Map::Kind::read_on);
      Parts st_part(st);
      if (auto p = st.get("p")) st_part([&] { d.straggler_p = get_probability(r, *p, st.field("p")); });
      if (auto f = st.get("factor"))
        st_part([&] { d.straggler_factor = get_number_min(r, *f, st.field("factor"), 1, true); });
      st_part.done();
    });
  part.done();
  return d;
}

RetryPolicy read_retries(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, kRetryKeys, Map::Kind::read_on);
  Parts part(m);
  RetryPolicy p;
  if (auto v = m.get("max")) part([&] { p.max = static_cast<int>(get_int(r, *v, m.field("max"), 0, 1000)); });
  const bool backoff_ok = !m.misspelled("backoff");
  if (auto v = m.get("backoff")) part([&] { p.backoff = get_duration(r, *v, m.field("backoff")); });
  if (auto v = m.get("factor")) part([&] { p.factor = get_number_min(r, *v, m.field("factor"), 1, true); });
  if (auto v = m.get("max_backoff")) {
    part([&] {
      p.max_backoff = get_duration(r, *v, m.field("max_backoff"));
      if (p.max_backoff < p.backoff && backoff_ok && part.ok())  // (a backoff with a problem is not known)
        r.fail(*v, m.field("max_backoff"),
               "must be >= backoff (" + m.require("backoff").Scalar() + "), got " + v->Scalar());
    });
  } else {
    p.max_backoff = std::max(p.max_backoff, p.backoff);
  }
  if (auto v = m.get("max_duration"))
    part([&] { p.max_duration = get_duration(r, *v, m.field("max_duration")); });
  part.done();
  return p;
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
  const Node name = m.require("name");
  k.name = get_nonempty_string(r, name, m.field("name"));
  k.field = field;
  k.where = r.at(n);
  k.name_where = r.at(name);
  for (const auto& e : m.entries()) {
    if (e.key == "name") continue;
    k.params[e.key] = scalar(r, e.value, m.field(e.key), "a number or a string");
    k.param_where[e.key] = r.at(e.value);
  }
  return k;
}

bool valid_step_name(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

class PipelineReader {
 public:
  PipelineReader(const Reader& r, const Cluster& cluster, bool check_fit, std::optional<Node> cluster_node)
      : r_(r), cluster_(cluster), check_fit_(check_fit), cluster_node_(std::move(cluster_node)), items_(r) {}

  std::vector<Step> read_steps(const Node& n, const std::string& field, int depth) {
    expect_list(r_, n, field);
    if (n.size() == 0) r_.fail(n, field, "must not be empty (a group needs at least one step)");
    if (depth > kMaxGroupDepth)
      r_.fail(n, field, "groups nest too deeply (more than " + std::to_string(kMaxGroupDepth) + " levels)");
    std::vector<Step> steps;
    std::vector<Pending> pending;
    Names by_name;
    std::set<std::string, std::less<>> broken;            // collecting: the steps left out for their problems
    std::map<std::string, int, std::less<>> broken_line;  // ... by name: the line of the first
    std::vector<std::pair<std::string, Pending>> broken_after;  // ... their `after` entries, looked at below
    bool unnamed_broken = false;                                // ... and one whose name could not be read
    std::vector<std::string> in_order;  // every step's name (kept or left out) in file order, once
    // A second step of a name (after one read, or one left out): reported at its name.
    const auto duplicate = [&](const Pending& p, const std::string& name) {
      int first_line = 0;
      if (const auto f = by_name.find(name); f != by_name.end())
        first_line = steps[f->second].where.line;
      else if (const auto b = broken_line.find(name); b != broken_line.end())
        first_line = b->second;
      else
        return false;
      r_.report(*p.name_node, p.path + ".name", "duplicate step name " + quote(name) + first_at(first_line));
      return true;
    };
    std::size_t i = 0;
    for (auto it = n.begin(); it != n.end(); ++it, ++i) {
      const Node& s = *it;
      if (++total_steps_ > kMaxSteps) {
        // Once: the lists around a group past the limit stop reading too, each at its next step.
        const std::string message = "the pipeline has more than " + std::to_string(kMaxSteps) + " steps";
        if (over_steps_) throw AlreadyReported(r_.at(s), index_path(field, i), message);
        over_steps_ = true;
        r_.fail(s, index_path(field, i), message);
      }
      Pending p;
      Step step;
      if (!r_.attempt([&] { step = read_step(s, index_path(field, i), depth, p); })) {
        // Collecting: the step is left out, and naming it in `after` is not a problem of its own; its name
        // and its own `after` entries are still looked at.
        if (p.name_node && p.name_node->IsScalar()) {
          const std::string name = p.name_node->Scalar();
          if (!duplicate(p, name)) {
            broken_line.emplace(name, r_.at(s).line);
            in_order.push_back(name);
          }
          broken.insert(name);
          if (!p.after_nodes.empty()) broken_after.emplace_back(name, std::move(p));
        } else {
          unnamed_broken = true;
        }
        continue;
      }
      if (duplicate(p, step.name)) continue;
      in_order.push_back(step.name);
      by_name.emplace(step.name, steps.size());
      steps.push_back(std::move(step));
      pending.push_back(std::move(p));
    }
    if (unnamed_broken) return steps;  // collecting: what `after` names cannot be told from a typo
    // A step left out waits for a step that is nowhere here: said as for the others.
    for (const auto& [name, p] : broken_after)
      for (std::size_t e = 0; e < p.after_nodes.size(); ++e) {
        const std::string want = p.after_nodes[e].Scalar();
        if (want == name || by_name.count(want) != 0 || broken.count(want) != 0) continue;
        std::vector<std::string_view> others;
        for (const std::string& o : in_order)
          if (o != name) others.push_back(o);
        r_.report(p.after_nodes[e], index_path(p.path + ".after", p.after_index[e]),
                  unknown_step_message(want, others));
      }
    // A fan_in step that waits for a step left out is not checked: that one may have been its loop.
    std::vector<bool> lost_after(steps.size(), false);
    for (std::size_t s = 0; s < steps.size(); ++s)
      for (const std::string& a : steps[s].after) lost_after[s] = lost_after[s] || broken.count(a) != 0;
    if (!broken.empty()) forget_broken(steps, pending, broken);
    resolve(steps, pending, by_name, in_order);
    resolve_fan_in(steps, pending, lost_after);
    return steps;
  }

 private:
  using Names = StepNames;

  struct Pending {
    std::string path;
    std::optional<Node> name_node;  // optional: yaml-cpp's Node::operator= rewrites the node it refers to
    std::vector<Node> after_nodes;
    std::vector<std::size_t> after_index;  // each entry's place in the file's `after` list
    std::optional<Node> fan_in_key;        // the `fan_in` key, when the step has one
  };

  Step read_step(const Node& n, const std::string& path, int depth, Pending& p) {
    // The name first: when the mapping has a problem of its own (an unknown key), the step is left out
    // by its name, so that `after` entries naming it are told from ones that name no step at all.
    if (n.IsMap())
      if (const Node name = n["name"]; name.IsDefined() && name.IsScalar()) p.name_node.emplace(name);
    // Collecting, a step with a bad key is read on, so that its other keys' problems are reported too, and
    // left out after (below); what a misspelled key was meant to give is missing, not absent, so what
    // depends on it is not checked.
    const Map m(r_, n, path, kStepKeys, Map::Kind::read_on);
    Step step;
    step.where = r_.at(n);
    step.named.field = path;
    p.path = path;
    // Collecting: each key is read on its own, so that one with a problem does not hide the next one's;
    // what needs a key that had one (the loop, for input sizes; the name, resources, node_selector and
    // tolerations, for the fit) is not checked. The step is then left out (AlreadyReported at the end).
    // Otherwise the first problem throws.
    bool ok = m.bad_keys() == 0;
    const auto part = [&](auto&& read) {
      const bool done = r_.attempt(read);
      ok = ok && done;
      return done;
    };
    const Node& name_node = p.name_node.emplace(m.require("name"));
    bool fit_inputs_ok = part([&] {
      step.name = get_nonempty_string(r_, name_node, m.field("name"));
      step.named.where = r_.at(name_node);
      if (!valid_step_name(step.name))
        r_.fail(name_node, m.field("name"),
                "must contain only ASCII letters, digits, '-' and '_', got " + quote(step.name));
    });
    if (m.misspelled("resources") || m.misspelled("node_selector") || m.misspelled("tolerations"))
      fit_inputs_ok = false;
    if (auto a = m.get("after"))
      part([&] {
        const std::string f = m.field("after");
        expect_list(r_, *a, f);
        std::set<std::string, std::less<>> seen;
        std::size_t i = 0;
        for (const auto& dep : *a) {
          std::string name = get_nonempty_string(r_, dep, index_path(f, i));
          if (!seen.insert(name).second) r_.fail(dep, index_path(f, i), quote(name) + " is listed twice");
          step.after.push_back(std::move(name));
          p.after_nodes.push_back(dep);
          p.after_index.push_back(i);
          ++i;
        }
      });
    bool loop_ok = !m.misspelled("parallel_for");
    if (auto l = m.get("parallel_for"))
      loop_ok = part([&] {
        step.loop = read_loop(r_, items_, *l, m.field("parallel_for"), step);
        check_workers(r_, *l, m.field("parallel_for"), m.has("steps"), depth);
      });

    if (auto group = m.get("steps")) {
      for (auto k : kComponentKeys) {
        if (m.has(k))
          part([&] {
            r_.fail(m.key_node(k), m.field(k),
                    "a group (a step with steps:) cannot have component key \"" + std::string(k) +
                        "\"; put it on the steps inside");
          });
      }
      if (auto par = m.get("parallelism"))
        part([&] {
          step.parallelism = static_cast<std::uint32_t>(
              get_int(r_, *par, m.field("parallelism"), 0, std::numeric_limits<std::uint32_t>::max()));
        });
      step.steps = read_steps(*group, m.field("steps"), depth + 1);
      if (!ok) throw AlreadyReported(step.where, path, "the step has problems that were reported");
      return step;
    }
    if (m.has("parallelism"))
      part([&] {
        r_.fail(m.key_node("parallelism"), m.field("parallelism"),
                "only a group (a step with steps:) has parallelism; for a loop use parallel_for.parallelism");
      });

    Component& c = step.component;
    c.resources.cpu = 1000;
    const std::optional<Node> res = m.get("resources");
    if (res && !part([&] { c.resources = read_resources(r_, *res, m.field("resources"), c.resources); }))
      fit_inputs_ok = false;
    step.resources_where.fill(res ? r_.at(*res) : step.where);
    if (res && res->IsMap())
      for (std::size_t k = 0; k < 3; ++k)
        if (const Node v = (*res)[std::array{"cpu", "memory", "gpu"}[k]]; v.IsDefined())
          step.resources_where[k] = r_.at(v);
    if (loop_ok) {  // these say what the loop allows
      if (auto v = m.get("fan_in")) part([&] { read_step_fan_in(m, *v, depth, step, p); });
      if (auto v = m.get("speculation")) part([&] { read_step_speculation(m, *v, depth, step); });
      if (auto v = m.get("input"))
        part([&] { c.input = read_data_size(r_, *v, m.field("input"), step.loop); });
      if (auto v = m.get("output"))
        part([&] { c.output = read_data_size(r_, *v, m.field("output"), step.loop); });
    }
    if (auto v = m.get("duration")) part([&] { c.duration = read_duration(r_, *v, m.field("duration")); });
    if (auto v = m.get("failure"))
      part([&] {
        const Map f(r_, *v, m.field("failure"), kFailureKeys);
        if (auto pr = f.get("p")) c.failure.p = get_probability(r_, *pr, f.field("p"));
      });
    if (auto v = m.get("retries")) part([&] { c.retries = read_retries(r_, *v, m.field("retries")); });
    if (auto v = m.get("image")) part([&] { c.image = get_nonempty_string(r_, *v, m.field("image")); });
    if (auto v = m.get("image_size")) part([&] { c.image_size = get_bytes(r_, *v, m.field("image_size")); });
    if (auto v = m.get("command"))
      part([&] {
        const std::string f = m.field("command");
        expect_list(r_, *v, f);
        std::size_t i = 0;
        for (const auto& arg : *v) c.command.push_back(get_string(r_, arg, index_path(f, i++)));
      });
    if (auto v = m.get("kernel")) part([&] { c.kernel = read_kernel(r_, *v, m.field("kernel")); });
    if (auto v = m.get("node_selector");
        v && !part([&] { c.node_selector = get_string_map(r_, *v, m.field("node_selector")); }))
      fit_inputs_ok = false;
    if (auto v = m.get("tolerations");
        v && !part([&] { c.tolerations = read_tolerations(r_, *v, m.field("tolerations")); }))
      fit_inputs_ok = false;
    if (auto v = m.get("node_affinity"))
      part([&] { c.preferred_node_affinity = read_node_affinity(r_, *v, m.field("node_affinity")); });
    if (fit_inputs_ok && check_fit_) part([&] { check_fit(n, path, m, res, step); });
    if (!ok) throw AlreadyReported(step.where, path, "the step has problems that were reported");
    return step;
  }

  // The step's requests against the nodes it may use: one no node can hold is reported at the `resources`
  // value a --set, an overlay or a variant gave, else at `resources`, else at the step; a step no pool
  // admits, at its node_selector or tolerations.
  void check_fit(const Node& n, const std::string& path, const Map& m, const std::optional<Node>& res,
                 const Step& step) const {
    const Component& c = step.component;
    if (auto problem = fit_problem(cluster_, step)) {
      // No pool with nodes admits the step: its node_selector (no pool has the labels), else the taints
      // it does not tolerate, not its resources, are what to look at.
      const auto& pools = cluster_.node_pools;
      if (std::none_of(pools.begin(), pools.end(), [&](const NodePool& pool) {
            return pool.may_have_nodes() && pool_admits(pool, c.node_selector, c.tolerations);
          })) {
        Toleration any;
        any.op = "Exists";  // tolerates every taint: the labels alone
        const bool labels_match = std::any_of(pools.begin(), pools.end(), [&](const NodePool& pool) {
          return pool.may_have_nodes() && pool_admits(pool, c.node_selector, {any});
        });
        if (!labels_match && m.has("node_selector"))
          r_.fail_infeasible(*m.get("node_selector"), m.field("node_selector"), *problem);
        if (labels_match && m.has("tolerations"))
          r_.fail_infeasible(*m.get("tolerations"), m.field("tolerations"), *problem);
        r_.fail_infeasible(n, path, *problem);
      }
      // A request no node it may use can hold on its own, given by a --set, an overlay or a variant: name
      // that, not the file's `resources` that it changed.
      if (res && res->IsMap())
        for (auto it = res->begin(); it != res->end(); ++it) {
          const std::string key = it->first.Scalar();
          if (r_.at(it->second).file == r_.file()) continue;
          const bool fits_some =
              std::any_of(cluster_.node_pools.begin(), cluster_.node_pools.end(), [&](const NodePool& pool) {
                return pool.may_have_nodes() && pool_admits(pool, c.node_selector, c.tolerations) &&
                       (key == "cpu"      ? c.resources.cpu <= pool.pod_cpu()
                        : key == "memory" ? c.resources.memory <= pool.pod_memory()
                                          : c.resources.gpu <= pool.pod_gpu());
              });
          if (!fits_some) r_.fail_infeasible(it->second, m.field("resources") + "." + key, *problem);
        }
      // Requests as the file has them: the pool sizes a --set or an overlay gave may be the cause.
      const std::string elsewhere = sizes_given_elsewhere(step);
      if (res) r_.fail_infeasible(*res, m.field("resources"), *problem + elsewhere);
      r_.fail_infeasible(n, path, *problem + elsewhere);
    }
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

  // The loop a `fan_in` step merges (validate.cpp), reported at the step's `fan_in` key.
  // `unchecked`: steps whose problems are not reported (they wait for a step left out).
  void resolve_fan_in(std::vector<Step>& steps, const std::vector<Pending>& pending,
                      const std::vector<bool>& unchecked) const {
    for (const StepProblem& p : detail::resolve_fan_in(steps))
      if (!unchecked[p.step])
        r_.report(*pending[p.step].fan_in_key, pending[p.step].path + ".fan_in", p.message);
  }

  // Collecting: `after` entries that name a step left out for its problems are dropped.
  static void forget_broken(std::vector<Step>& steps, std::vector<Pending>& pending,
                            const std::set<std::string, std::less<>>& broken) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
      std::vector<std::string> after;
      std::vector<Node> nodes;
      std::vector<std::size_t> index;
      for (std::size_t e = 0; e < steps[s].after.size(); ++e) {
        if (broken.count(steps[s].after[e]) != 0) continue;
        after.push_back(std::move(steps[s].after[e]));
        nodes.push_back(pending[s].after_nodes[e]);
        index.push_back(pending[s].after_index[e]);
      }
      steps[s].after = std::move(after);
      pending[s].after_nodes = std::move(nodes);
      pending[s].after_index = std::move(index);
    }
  }

  // `after` names into sibling indices, then no cycle (validate.cpp), reported at the `after` entry.
  // Collecting, the entry at fault is reported and left out, and the rest looked at again: each unknown
  // name and each cycle once.
  void resolve(std::vector<Step>& steps, std::vector<Pending>& pending, const Names& by_name,
               const std::vector<std::string>& in_order) const {
    detail::resolve_all_dependencies(steps, by_name, in_order, [&](StepProblem& p) {
      // A cycle is reported at the edge the command line gave (a --set or an overlay closed it), if one
      // did, rather than at an `after` of the file that is right as written.
      for (const auto& [step, entry] : p.cycle)
        if (r_.at(pending[step].after_nodes[entry]).file != r_.file()) {
          p.step = step;
          p.entry = entry;
        }
      Pending& at = pending[p.step];
      r_.report(at.after_nodes[p.entry], index_path(at.path + ".after", at.after_index[p.entry]), p.message);
      const auto e = static_cast<std::ptrdiff_t>(p.entry);
      steps[p.step].after.erase(steps[p.step].after.begin() + e);
      at.after_nodes.erase(at.after_nodes.begin() + e);
      at.after_index.erase(at.after_index.begin() + e);
    });
  }

  // The sizes of the pools the step may use that are not as the file has them: each a --set's or an
  // overlay's cpu, memory or gpu that the step's request is over, or count of 0, as "; pool "gpu" has cpu
  // 2 from o.yaml:3:27" (the step's request, where the problem is reported, may be right as written).
  std::string sizes_given_elsewhere(const Step& step) const {
    if (!cluster_node_ || !cluster_node_->IsMap()) return "";
    const Node pools = (*cluster_node_)["node_pools"];
    if (!pools || !pools.IsSequence()) return "";
    const Component& c = step.component;
    constexpr std::size_t kNamed = 5;
    std::size_t named = 0;
    std::string out;
    for (const Node& p : pools) {
      const Node name = p.IsMap() ? p["name"] : Node();
      if (!name || !name.IsScalar()) continue;
      const auto pool = std::find_if(cluster_.node_pools.begin(), cluster_.node_pools.end(),
                                     [&](const NodePool& np) { return np.name == name.Scalar(); });
      if (pool == cluster_.node_pools.end() || !pool_admits(*pool, c.node_selector, c.tolerations)) continue;
      const bool cpu = c.resources.cpu > pool->pod_cpu(), memory = c.resources.memory > pool->pod_memory(),
                 gpu = c.resources.gpu > pool->pod_gpu();
      const std::pair<const char*, std::string> sizes[] = {
          {"cpu", cpu ? format_cpu(pool->cpu) : ""},
          {"memory", memory ? format_bytes(pool->memory) : ""},
          {"gpu", gpu ? std::to_string(pool->gpu) : ""},
          {"count", !pool->may_have_nodes() && !cpu && !memory && !gpu ? "0" : ""}};
      for (const auto& [key, value] : sizes) {
        const Node v = value.empty() ? Node() : p[key];
        if (!v || r_.at(v).file == r_.file()) continue;
        if (++named <= kNamed)
          out += "; pool " + quote(pool->name) + " has " + key + " " + value + " from " + r_.at(v).str();
      }
    }
    // A --cluster file of many pools gives every size: the message names a few.
    if (named > kNamed)
      out += "; and " + with_commas(named - kNamed) + " more pool size" + (named - kNamed == 1 ? "" : "s") +
             " from outside this file";
    return out;
  }

  const Reader& r_;
  const Cluster& cluster_;
  bool check_fit_;
  std::optional<Node> cluster_node_;  // the scenario's `cluster`, to say which pool sizes were not the file's
  ItemConverter items_;
  std::size_t total_steps_ = 0;
  bool over_steps_ = false;  // the step limit was reported
};

}  // namespace

std::vector<Toleration> read_tolerations(const Reader& r, const Node& n, const std::string& field) {
  expect_list(r, n, field);
  std::vector<Toleration> out;
  std::size_t i = 0;
  bool all_ok = true;  // collecting: each toleration's problems are reported, then the list is left out
  for (const auto& t : n) {
    all_ok = r.attempt([&] {
      const Map m(r, t, index_path(field, i), kTolerationKeys, Map::Kind::read_on);
      Parts part(m);
      Toleration tol;
      if (auto v = m.get("key")) part([&] { tol.key = get_string(r, *v, m.field("key")); });
      bool op_ok = !m.misspelled("operator");
      if (auto v = m.get("operator"))
        op_ok = part([&] {
          tol.op = get_string(r, *v, m.field("operator"));
          if (tol.op != "Equal" && tol.op != "Exists")
            r.fail(*v, m.field("operator"), "must be Equal or Exists, got " + quote(tol.op));
        });
      if (auto v = m.get("value"))
        part([&] {
          tol.value = get_string(r, *v, m.field("value"));
          if (op_ok && tol.op == "Exists" && !tol.value.empty())
            r.fail(*v, m.field("value"), "must be empty when the operator is Exists");
        });
      if (auto v = m.get("effect"))
        part([&] {
          tol.effect = get_string(r, *v, m.field("effect"));
          if (!tol.effect.empty() && tol.effect != "NoSchedule" && tol.effect != "PreferNoSchedule" &&
              tol.effect != "NoExecute")
            r.fail(*v, m.field("effect"),
                   "must be NoSchedule, PreferNoSchedule or NoExecute (or empty for any), got " +
                       quote(tol.effect));
        });
      if (part.ok() && tol.key.empty() && tol.op != "Exists")
        r.fail(m.node(), m.path(), "a toleration without a key must use operator Exists");
      part.done();
      out.push_back(std::move(tol));
    }) && all_ok;
    ++i;
  }
  if (!all_ok) throw AlreadyReported(r.at(n), field, "the list has problems that were reported");
  return out;
}

Resources read_resources(const Reader& r, const Node& n, const std::string& field, Resources res) {
  const Map m(r, n, field, kResourceKeys, Map::Kind::read_on);
  Parts part(m);  // a bad cpu does not hide a bad memory
  if (auto v = m.get("cpu")) part([&] { res.cpu = get_cpu(r, *v, m.field("cpu")); });
  if (auto v = m.get("memory")) part([&] { res.memory = get_bytes(r, *v, m.field("memory")); });
  if (auto v = m.get("gpu"))
    part([&] { res.gpu = static_cast<int>(get_int(r, *v, m.field("gpu"), 0, 1'000'000)); });
  part.done();
  return res;
}

std::vector<Step> read_pipeline(const Reader& r, const Node& n, const Cluster& cluster, bool check_fit,
                                const std::optional<Node>& cluster_node) {
  const Map p(r, n, "pipeline", kPipelineKeys, Map::Kind::section);
  PipelineReader pr(r, cluster, check_fit, cluster_node);
  return pr.read_steps(p.require("steps"), "pipeline.steps", 0);
}

}  // namespace shardflow::detail
