#include "kfp_import.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>

#include "scenario_document.hpp"
#include "yaml_reader.hpp"

namespace shardflow {
namespace {

using detail::key_path;

using YAML::Node;
using Keys = std::span<const std::string_view>;

// The loader's limits, met before the loader sees the document: a component DAG that refers to itself
// would recurse forever, one used by many tasks is imported once per use, and aliases can make a value
// a cycle or huge (every walk over values counts against one budget).
constexpr int kMaxDagDepth = detail::kMaxGroupDepth;
// Every use of a component DAG counts (a DAG used by many tasks is imported once per use). Far more than
// any KFP pipeline has (loops are not unrolled here); 5,000 tasks import in well under a second.
constexpr std::size_t kMaxTasks = 5'000;
constexpr int kMaxValueDepth = detail::kMaxItemDepth;
constexpr std::size_t kMaxVisits = 20 * detail::kMaxItemValues;

constexpr std::string_view kTopKeys[] = {"components",    "deploymentSpec", "pipelineInfo",       "root",
                                         "schemaVersion", "sdkVersion",     "defaultPipelineRoot"};
constexpr std::string_view kComponentKeys[] = {"inputDefinitions", "outputDefinitions", "dag",
                                               "executorLabel"};
constexpr std::string_view kDagKeys[] = {"tasks", "outputs"};
constexpr std::string_view kTaskKeys[] = {"taskInfo",          "inputs",           "dependentTasks",
                                          "cachingOptions",    "componentRef",     "triggerPolicy",
                                          "parameterIterator", "artifactIterator", "iteratorPolicy",
                                          "retryPolicy"};
constexpr std::string_view kTriggerKeys[] = {"condition", "strategy"};
constexpr std::string_view kIteratorKeys[] = {"itemInput", "items"};
constexpr std::string_view kParameterItemsKeys[] = {"raw", "inputParameter"};
constexpr std::string_view kArtifactItemsKeys[] = {"inputArtifact"};
constexpr std::string_view kIteratorPolicyKeys[] = {"parallelismLimit"};
constexpr std::string_view kRetryKeys[] = {"maxRetryCount", "backoffDuration", "backoffFactor",
                                           "backoffMaxDuration"};
constexpr std::string_view kInputsKeys[] = {"parameters", "artifacts"};
constexpr std::string_view kParameterSpecKeys[] = {"runtimeValue", "componentInputParameter",
                                                   "taskOutputParameter", "taskFinalStatus",
                                                   "parameterExpressionSelector"};
constexpr std::string_view kArtifactSpecKeys[] = {"taskOutputArtifact", "componentInputArtifact"};
constexpr std::string_view kExecutorKeys[] = {"container"};
constexpr std::string_view kContainerKeys[] = {"image", "command", "args", "resources", "env"};
constexpr std::string_view kResourceKeys[] = {
    "cpuLimit",         "memoryLimit",           "cpuRequest",
    "memoryRequest",    "accelerator",           "resourceCpuRequest",
    "resourceCpuLimit", "resourceMemoryRequest", "resourceMemoryLimit"};
constexpr std::string_view kAcceleratorKeys[] = {"type", "count", "resourceType", "resourceCount"};
// The overlay's `kfp:` section, and the scenario keys a component or task model may give.
constexpr std::string_view kOverlayKeys[] = {"params", "outputs", "conditions", "components", "tasks"};
constexpr std::string_view kModelKeys[] = {
    "input",      "output",  "resources", "duration",      "failure",     "retries",      "image",
    "image_size", "command", "kernel",    "node_selector", "tolerations", "node_affinity"};

// What a component without a duration model runs for, and the cluster used when none is given; both are
// documented in docs/kfp-import.md.
constexpr std::string_view kDefaultDuration = "{base: 1m}";
constexpr std::string_view kDefaultCluster =
    "node_pools:\n"
    "  - {name: cpu, cpu: 16, memory: 64Gi, count: 20, price_per_hour: 0.77}\n"
    "  - {name: gpu, cpu: 32, memory: 256Gi, gpu: 4, count: 2, price_per_hour: 12.0}\n";

SourceLocation at(const Node& n, const std::string& file) {
  const YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, m.line + 1, detail::mark_column(m, file)};
}

// A value in the IR or an overlay: where it is and what it is called, for messages. A missing key's
// Field has an undefined node and stands at the mapping that lacks it; a null value stands at its key
// (an empty value's mark is the next token's, often on a later line).
struct Field {
  Node node;
  std::string path;
  std::string file;
  Node anchor;  // a value's key (or, for a missing value, the mapping that lacks it)
  // A value taken from elsewhere (a pipeline parameter): where it came from, said after each message.
  std::string given = {};
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(at(place(), file), path, given.empty() ? message : message + " (" + given + ")");
  }
  // Where the field is reported: its value; a null value's key; a missing value's mapping; a value made
  // here (no place in a file: a parameter's value) at the field it stands for (its anchor).
  [[nodiscard]] Node place() const {
    const bool placed = node.IsDefined() && !node.Mark().is_null() && node.Mark().line >= 0;
    return node.IsDefined() && !(node.IsNull() && anchor.IsDefined()) && (placed || !anchor.IsDefined())
               ? node
               : anchor;
  }
  [[nodiscard]] Field operator[](std::string_view key) const {
    if (node.IsDefined() && node.IsMap())
      for (auto it = node.begin(); it != node.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == key)
          return Field{it->second, key_path(path, key), file, it->first};
    return Field{Node(YAML::NodeType::Undefined), key_path(path, key), file, place()};
  }
  [[nodiscard]] bool has(std::string_view key) const {
    const Node& n = node;
    return n.IsDefined() && n.IsMap() && n[std::string(key)].IsDefined();
  }
  [[nodiscard]] const std::string& scalar() const {
    if (!node.IsDefined()) fail("missing required key");
    if (!node.IsScalar()) fail("expected a string");
    return node.Scalar();
  }
  // A mapping whose keys are all among `known` (empty: any key).
  void expect_map(Keys known, std::string_view what = "PipelineSpec field") const {
    if (!node.IsDefined()) fail("missing required key");
    if (!node.IsMap()) fail("expected a mapping");
    for (auto it = node.begin(); it != node.end(); ++it) {
      const Node k = it->first;
      if (!k.IsScalar()) throw InputError(at(k, file), path, "a key must be a plain name");
      if (known.empty() || std::find(known.begin(), known.end(), k.Scalar()) != known.end()) continue;
      std::string list;
      for (auto name : known) list += (list.empty() ? "" : ", ") + std::string(name);
      throw InputError(
          at(k, file), key_path(path, k.Scalar()),
          "unsupported " + std::string(what) + " " + quote(k.Scalar()) + " (shardflow reads: " + list + ")");
    }
  }
};

// A parameter's value as far as the importer can know it: the loop widths depend on it.
struct Value {
  enum class Kind : std::uint8_t { known, one_of, unknown } kind = Kind::unknown;
  std::vector<Node> values;             // known: the value; one_of: every value it takes in some iteration
  std::string what;                     // unknown: what it is, for messages
  std::string output_key;               // an upstream output: "task.key", as the overlay names it
  std::optional<std::uint64_t> length;  // unknown: a list's length the overlay gives
  std::string hint;                     // unknown: how to give it
};

// A loop's items given as text (JSON or YAML), parsed; std::nullopt, with the parser's message in `error`,
// when the text is not YAML. The values are counted while they are parsed: a list past the loader's limit
// on loop items is refused there (at `items`), not read whole first.
// JSON writes a character beyond U+FFFF as a pair of escapes, "\ud83d\ude80" (the SDK's json.dumps does,
// for an emoji in a loop's items); YAML's double-quoted strings take it as one, "\U0001F680", and refuse
// the pair. Each pair becomes its one escape (the text after it moves 2 columns to the left).
std::string join_surrogate_escapes(const std::string& text) {
  const auto hex4 = [&](std::size_t at, unsigned& v) {
    if (at + 4 > text.size()) return false;
    v = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      const char c = text[i];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<unsigned>(d);
    }
    return true;
  };
  if (text.find("\\u") == std::string::npos && text.find("\\U") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned hi = 0, lo = 0;
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == 'u' || text[i + 1] == 'U') &&
        hex4(i + 2, hi) && hi >= 0xD800 && hi <= 0xDBFF && i + 7 < text.size() && text[i + 6] == '\\' &&
        (text[i + 7] == 'u' || text[i + 7] == 'U') && hex4(i + 8, lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
      const unsigned cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
      char buf[11];
      std::snprintf(buf, sizeof buf, "\\U%08X", cp);
      out += buf;
      i += 11;
    } else {
      out += text[i];
      if (text[i] == '\\' && i + 1 < text.size()) out += text[++i];  // an escape's second character
    }
  }
  return out;
}

std::optional<Node> parse_items(const std::string& text, const std::string& parse_file, const Field& items,
                                std::string& error) {
  try {
    if (auto n = detail::parse_document(join_surrogate_escapes(text), parse_file,
                                        detail::kMaxItemValues + 1))  // + 1: the list
      return n;
  } catch (const InputError& e) {
    // Where in the string: the string's own line and column, not the file's.
    const SourceLocation& w = e.where();
    error = (w.line == 0   ? std::string()
             : w.line == 1 ? "at column " + std::to_string(w.column) + " of the string: "
                           : "at line " + std::to_string(w.line) + ", column " + std::to_string(w.column) +
                                 " of the string: ") +
            e.message();
    return std::nullopt;
  }
  items.fail("the loop's items are too large (more than " + std::to_string(detail::kMaxItemValues) +
             " values; that is the limit for the items of all the pipeline's loops together)");
}

// The list a loop iterates over, from one value; empty when `v` is not a list.
std::optional<std::vector<Node>> as_list(const Node& v, const std::string& parse_file, const Field& items) {
  Node n = v;
  if (n.IsScalar()) {
    std::string error;
    const auto parsed = parse_items(n.Scalar(), parse_file, items, error);
    if (!parsed) return std::nullopt;
    n.reset(*parsed);
  }
  if (!n.IsSequence()) return std::nullopt;
  return std::vector<Node>(n.begin(), n.end());
}

std::string emit(const Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

// The models and values an overlay's `kfp:` section gives.
struct Models {
  std::map<std::string, Field> params;             // name -> value (in its overlay)
  std::map<std::string, Field> outputs;            // "task.key" -> a length or a list
  std::map<std::string, Field> conditions;         // condition task -> probability
  std::map<std::string, Field> components, tasks;  // name -> model mapping
};

// Node handles are bound once (copied, or rebound with reset()) and never assigned with `=`: yaml-cpp's
// `=` rewrites the node a handle refers to, and the IR, the overlays and the scenario document share
// nodes. The same goes for anything holding Nodes (Value, Field).
class Importer {
 public:
  Importer(const Node& ir, std::string file, const LoadOptions& options)
      : ir_(ir), file_(std::move(file)), options_(options) {}

  Scenario run() {
    pool_.push_back(ir_);  // from here on, the pool's memory is the IR's (see fresh())
    // Every mapping of the IR, read here or not: a key given twice is an error, as in a scenario file,
    // not one of its values silently taken.
    const detail::Reader reader(file_);
    detail::check_keys(reader, ir_, "");
    // A null value the loader reads (put in the document as it is) is reported at its key.
    reader.null_values().for_each(
        [&](const Node& value, const YAML::Mark& key) { note(value, detail::location_of(key, file_)); });
    const Field top{ir_, "", file_, {}};
    top.expect_map(kTopKeys);
    if (top.has("schemaVersion")) {
      const std::string& v = top["schemaVersion"].scalar();
      if (v != "2.1.0" && v != "2.0.0")
        top["schemaVersion"].fail("shardflow reads PipelineSpec schemaVersion 2.1.0 (and 2.0.0), got " +
                                  quote(v));
    }
    for (auto key : {"pipelineInfo", "root"})
      if (!top.has(key))
        throw InputError(
            SourceLocation{file_, 1, 1}, key,
            std::string("missing required key of a PipelineSpec") +
                (top.has("schemaVersion") ? ""
                                          : " (the KFP SDK writes it before schemaVersion, which is "
                                            "missing too: is the file cut short?)"));
    // The SDK writes schemaVersion after the pipeline: a file without it was cut short (or not written
    // by the SDK), and what it holds may be part of a DAG.
    if (!top.has("schemaVersion"))
      throw InputError(SourceLocation{file_, 1, 1}, "schemaVersion",
                       "missing required key of a PipelineSpec (the KFP SDK writes it after the pipeline: "
                       "is the file cut short?)");
    if (top.has("components")) top["components"].expect_map({});
    if (top.has("deploymentSpec")) {
      top["deploymentSpec"].expect_map(std::array<std::string_view, 1>{"executors"});
      if (top["deploymentSpec"].has("executors")) top["deploymentSpec"]["executors"].expect_map({});
    }
    read_overlays();

    Node doc = fresh(YAML::NodeType::Map);
    (void)top["pipelineInfo"]["name"].scalar();      // a name is required
    doc["name"] = top["pipelineInfo"]["name"].node;  // the IR's own node: its place is the IR's
    note(doc, ir_);
    Node pipeline = fresh(YAML::NodeType::Map);
    note(pipeline, top["root"].node);
    read_root_parameters(top["root"]);
    pipeline["steps"] = import_dag(top["root"], root_env_);
    if (pipeline["steps"].size() == 0 && !used_conditions_.empty())
      models_.conditions.find(*used_conditions_.begin())
          ->second.fail("the conditions set to 0 (" +
                        listed(std::vector<std::string>(used_conditions_.begin(), used_conditions_.end())) +
                        ") leave out every task of the pipeline: nothing would run");
    doc["pipeline"] = pipeline;
    add_cluster(doc);
    check_models_used();

    LoadOptions o = options_;
    if (o.cluster != "local") o.cluster.clear();  // a file's cluster is in `doc` already
    o.params.clear();                             // and the parameters in its steps
    Scenario s = detail::read_scenario_document({doc, std::move(origins_), true}, file_, overlays_, o);
    if (options_.warn)
      for (const std::string& w : warnings_) options_.warn(w);
    return s;
  }

 private:
  // A node made here, in the IR's memory. yaml-cpp merges the memory of a node put into a tree into the
  // tree's: a new node has its own, and putting an IR node into it would copy all of the IR's memory
  // (and every later merge would copy that again: a 2 KB file of nested DAGs took minutes and gigabytes).
  // Made through the pool, which shares the IR's memory, every merge is of a small tree into the big one.
  Node fresh(YAML::NodeType::value type) {
    Node n(type);
    pool_.push_back(n);
    return n;
  }
  Node fresh_scalar(const std::string& text) {
    Node n(text);
    pool_.push_back(n);
    return n;
  }
  void note(const Node& made, const Node& from) { origins_.emplace_back(made, at(from, file_)); }
  void note(const Node& made, const SourceLocation& where) { origins_.emplace_back(made, where); }
  // Every node of `n` (keys too) as standing at `where`.
  // Every node of `n` (keys too) as standing at `where`, or (no `where`) at its own place in `file`, a
  // file other than the IR's (an overlay, --cluster FILE).
  void note_tree(const Node& n, const SourceLocation& where) { walk(n, file_, where, true); }
  void note_marks(const Node& n, const std::string& file) { walk(n, file, std::nullopt, true); }
  // Aliases can make a value a cycle (&a [*a]) or huge: every walk over one is bounded.
  void walk(const Node& n, const std::string& file, const std::optional<SourceLocation>& where, bool record,
            int depth = 0, const Node& key = Node()) {
    const SourceLocation here = where ? *where : at(n.IsNull() && key.IsDefined() ? key : n, file);
    if (depth > kMaxValueDepth)
      throw InputError(here, "",
                       "a value nests too deeply (more than " + std::to_string(kMaxValueDepth) + " levels)");
    if (++visits_ > kMaxVisits)
      throw InputError(here, "",
                       "the values are too large (more than " + std::to_string(kMaxVisits) +
                           " nodes, counting what aliases repeat)");
    if (record) note(n, here);
    if (n.IsMap())
      for (auto it = n.begin(); it != n.end(); ++it) {
        walk(it->first, file, where, record, depth + 1);
        walk(it->second, file, where, record, depth + 1, it->first);  // a null value at its key
      }
    else if (n.IsSequence())
      for (auto it = n.begin(); it != n.end(); ++it) walk(*it, file, where, record, depth + 1);
  }
  // Warnings are said once the import succeeded: with an error, they would only hide it.
  void warn(const std::string& line) { warnings_.push_back(file_ + ": warning: " + line); }

  // ---- overlays and parameters ------------------------------------------------------------------------

  void read_overlays() {
    for (const ScenarioFile& f : options_.overlays) {
      detail::ParsedOverlay o = detail::parse_overlay(f);
      const Node& r = o.root;
      if (r["cluster"]) cluster_given_ = true;
      if (const Field k = Field{r, "", f.path, {}}["kfp"]; k.node) {
        // The loader reads the rest of the overlay, its duplicate keys too; the kfp section is read here.
        const detail::Reader reader(f.path);
        (void)detail::Map(reader, r, "", {});  // `kfp` given twice
        detail::check_keys(reader, k.node, "kfp");
        read_kfp_section(k);
        o.root.remove("kfp");
      }
      overlays_.push_back(std::move(o));
    }
    for (const std::string& p : options_.params) {
      const SourceLocation where{flag_place("--param", p), 0, 0};
      const auto eq = p.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InputError(where, "", "expected NAME=VALUE (VALUE is YAML or JSON: 3, [1, 2], '{\"a\": 1}')");
      Node v;
      try {
        v.reset(detail::parse_yaml_document(p.substr(eq + 1), where.file));
      } catch (const InputError& e) {
        throw InputError(where, "", e.message());
      }
      note_tree(v, where);
      params_.erase(p.substr(0, eq));  // the last --param of a name wins
      params_.emplace(p.substr(0, eq), std::make_pair(v, where));
    }
  }

  void read_kfp_section(const Field& k) {
    k.expect_map(kOverlayKeys, "overlay key");
    const auto each = [&](std::string_view key, auto&& f) {
      if (!k.has(key)) return;
      const Field m = k[key];
      m.expect_map({});
      for (auto it = m.node.begin(); it != m.node.end(); ++it)
        f(it->first.Scalar(), Field{it->second, key_path(m.path, it->first.Scalar()), k.file, it->first});
    };
    each("params", [&](const std::string& name, const Field& v) {
      note_marks(v.node, v.file);
      models_.params.erase(name);  // a later overlay wins
      models_.params.emplace(name, v);
    });
    each("outputs", [&](const std::string& name, const Field& v) {
      models_.outputs.erase(name);  // a later overlay wins
      models_.outputs.emplace(name, v);
    });
    each("conditions", [&](const std::string& name, const Field& v) {
      models_.conditions.erase(name);  // a later overlay wins
      models_.conditions.emplace(name, v);
    });
    each("components", [&](const std::string& name, const Field& v) {
      v.expect_map(kModelKeys, "model key");
      note_marks(v.node, v.file);
      models_.components.erase(name);  // a later overlay wins
      models_.components.emplace(name, v);
    });
    each("tasks", [&](const std::string& name, const Field& v) {
      v.expect_map(kModelKeys, "model key");
      note_marks(v.node, v.file);
      models_.tasks.erase(name);  // a later overlay wins
      models_.tasks.emplace(name, v);
    });
  }

  // The pipeline's parameters: --param, then the overlay's kfp.params, then the IR's defaultValue.
  void read_root_parameters(const Field& root) {
    std::set<std::string> declared;
    if (root.has("inputDefinitions") && root["inputDefinitions"].has("parameters")) {
      const Field defs = root["inputDefinitions"]["parameters"];
      defs.expect_map({});
      for (auto it = defs.node.begin(); it != defs.node.end(); ++it) {
        const std::string name = it->first.Scalar();
        declared.insert(name);
        Value v;
        if (const auto p = params_.find(name); p != params_.end()) {
          v = known(p->second.first);
          v.what = "the pipeline parameter " + quote(name) + ", given with --param";
        } else if (const auto m = models_.params.find(name); m != models_.params.end()) {
          v = known(m->second.node);
          v.what = "the pipeline parameter " + quote(name) + ", given in " + m->second.file + "'s kfp.params";
        } else if (it->second.IsMap() && it->second["defaultValue"]) {
          v = known(it->second["defaultValue"]);
          v.what = "the pipeline parameter " + quote(name) + "'s defaultValue";
        } else {
          v.what = "the pipeline parameter " + quote(name);
          v.hint = "it has no value; give it with --param " + name +
                   "=VALUE or in an overlay as kfp: {params: {" + name + ": VALUE}}";
        }
        root_env_.emplace(name, std::move(v));
      }
    }
    std::vector<std::string> names(declared.begin(), declared.end());
    const std::string listing = names.empty() ? "the pipeline has none" : "parameters: " + listed(names);
    for (const auto& [name, value] : params_)
      if (!declared.count(name))
        throw InputError(value.second, "--param",
                         "unknown pipeline parameter " + quote(name) + " (" + listing + ")");
    for (const auto& [name, value] : models_.params)
      if (!declared.count(name))
        throw InputError(at(value.anchor, value.file), value.path,  // at the name
                         "unknown pipeline parameter " + quote(name) + " (" + listing + ")");
  }

  static Value known(const Node& n) {
    Value v;
    v.kind = Value::Kind::known;
    v.values.push_back(n);
    return v;
  }

  // ---- parameter values ---------------------------------------------------------------------------

  using Env = std::map<std::string, Value>;

  // `parseJson(string_value)["key"]`, the one selector form the KFP SDK compiles (loop item fields).
  Value select(const Value& in, const Field& selector) {
    const std::string& s = selector.scalar();
    constexpr std::string_view head = "parseJson(string_value)[\"";
    constexpr std::string_view tail = "\"]";
    if (s.size() <= head.size() + tail.size() || s.compare(0, head.size(), head) != 0 ||
        s.compare(s.size() - tail.size(), tail.size(), tail) != 0)
      selector.fail("unsupported selector " + quote(s) +
                    " (shardflow reads parseJson(string_value)[\"KEY\"])");
    const std::string key = s.substr(head.size(), s.size() - head.size() - tail.size());
    if (in.kind == Value::Kind::unknown) {
      Value out = in;
      out.what = "the field " + quote(key) + " of " + in.what;
      out.length.reset();
      return out;
    }
    Value out;
    out.kind = in.kind;
    for (const Node& v : in.values) {
      Node m = v;
      if (m.IsScalar()) {
        try {
          m.reset(detail::parse_yaml_document(m.Scalar(), file_));
        } catch (const InputError&) {
          m.reset(Node());
        }
      }
      if (!m.IsMap() || !m[key]) {
        Value none;
        none.what = "the field " + quote(key) + " of a value that does not have it";
        return none;
      }
      out.values.push_back(m[key]);
    }
    return out;
  }

  // A producerTask names a task of the DAG being read: refused at once otherwise, before anything is asked
  // of that task's outputs (a typo would be taken for an output whose length the overlay must give).
  void check_producer(const Field& producer) const {
    if (dag_tasks_.empty() || !producer.node || !producer.node.IsScalar()) return;
    const std::vector<std::string_view>& names = dag_tasks_.back().names;
    const std::string& name = producer.node.Scalar();
    if (dag_tasks_.back().index.count(name) != 0) return;
    const auto meant = detail::Map::closest_name(name, names);
    producer.fail("no task " + quote(name) + " in this DAG" +
                  (meant ? " (did you mean \"" + std::string(*meant) + "\"?)"
                         : " (its tasks: " + listed(names.size(), [&](std::size_t k) {
                             return std::string(names[k]);
                           }) + ")"));
  }

  // A task input (inputs.parameters.NAME or inputs.artifacts.NAME) in the DAG whose inputs are `env`.
  Value resolve(const Field& spec, const Env& env, bool artifact) {
    spec.expect_map(artifact ? Keys(kArtifactSpecKeys) : Keys(kParameterSpecKeys));
    Value v;
    if (spec.has("runtimeValue")) {
      const Field rv = spec["runtimeValue"];
      if (!rv.has("constant")) rv.fail("expected a constant");
      v = known(rv["constant"].node);
    } else if (spec.has("componentInputParameter") || spec.has("componentInputArtifact")) {
      const Field name = spec[artifact ? "componentInputArtifact" : "componentInputParameter"];
      const auto it = env.find((artifact ? "artifact:" : "") + name.scalar());
      if (it != env.end()) {
        v = it->second;
      } else {
        v.what = "the input " + quote(name.scalar()) + " of the enclosing component, which nothing gives";
      }
    } else if (spec.has("taskOutputParameter") || spec.has("taskOutputArtifact")) {
      const Field out = spec[artifact ? "taskOutputArtifact" : "taskOutputParameter"];
      check_producer(out["producerTask"]);
      const std::string producer = out["producerTask"].scalar();
      const std::string key = out[artifact ? "outputArtifactKey" : "outputParameterKey"].scalar();
      v.output_key = producer + "." + key;
      v.what = "the output " + quote(key) + " of task " + quote(producer);
      v.hint = "give its length in an overlay as kfp: {outputs: {" + v.output_key + ": N}}";
      // (A model counts as used when a loop iterates over it, loop_over: a condition or a task that reads
      // the output gives no length to model.)
      if (const auto m = models_.outputs.find(v.output_key); m != models_.outputs.end()) {
        const Field& given = m->second;
        if (given.node.IsSequence()) {
          note_marks(given.node, given.file);
          const std::string output_key = v.output_key;
          v = known(given.node);
          v.output_key = output_key;
        } else {
          v.length = parse_count(given);
        }
      }
    } else if (!artifact && spec.has("taskFinalStatus")) {
      check_producer(spec["taskFinalStatus"]["producerTask"]);
      v.what = "the final status of task " + quote(spec["taskFinalStatus"]["producerTask"].scalar());
    } else {
      spec.fail("expected one of " + std::string(artifact ? "taskOutputArtifact, componentInputArtifact"
                                                          : "runtimeValue, componentInputParameter, "
                                                            "taskOutputParameter, taskFinalStatus"));
    }
    if (!artifact && spec.has("parameterExpressionSelector"))
      return select(v, spec["parameterExpressionSelector"]);
    return v;
  }

  static std::uint64_t parse_count(const Field& f) {
    const std::string& s = f.scalar();
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || n < 1 || n > 0xffffffffULL)
      f.fail("expected a list's length, an integer from 1 to 4294967295, or the list itself, got " +
             quote(s));
    return n;
  }

  // ---- the DAG ------------------------------------------------------------------------------------

  struct Loop {
    Node parallel_for;  // the scenario's parallel_for mapping
    Value item;         // the value of the iteration's item, for the loop's own DAG
    std::string item_input;
  };

  // The items of a loop whose items are `v`, as read at `items` (the iterator's items field).
  Loop loop_over(const Value& v, const Field& items) {
    if (!v.output_key.empty()) used_outputs_.insert(v.output_key);
    Loop loop;
    Node pf = fresh(YAML::NodeType::Map);
    note(pf, items.node);
    loop.item.what = "an item of " + (v.what.empty() ? std::string("a loop") : v.what);
    if (v.kind == Value::Kind::unknown) {
      if (!v.length)
        items.fail("the loop iterates over " + v.what + ", whose length shardflow cannot know" +
                   (v.hint.empty() ? std::string() : ": " + v.hint));
      Node count = fresh_scalar(std::to_string(*v.length));
      note(count, items.node);
      pf["count"] = count;
      loop.parallel_for = pf;
      return loop;
    }
    std::optional<std::size_t> width;
    std::set<std::string> distinct;
    std::vector<Node> first;
    for (const Node& value : v.values) {
      auto list = as_list(value, file_, items);
      if (!list)
        items.fail("the loop's items are not a list: " + (value.IsNull() ? "null" : quote(emit(value))) +
                   (v.what.empty() ? std::string() : " (" + v.what + ")"));
      if (list->empty()) items.fail("the loop has no items; shardflow's loops have at least one");
      if (width && *width != list->size())
        items.fail("the loop's width differs between iterations of the loop around it (" +
                   std::to_string(*width) + " and " + std::to_string(list->size()) +
                   "); shardflow's model has one width per loop");
      width = list->size();
      walk(value, file_, at(items.node, file_), false);  // bounded before it is written out
      distinct.insert(emit(value));
      if (first.empty()) first = *list;
      for (const Node& item : *list) loop.item.values.push_back(item);
    }
    loop.item.kind = Value::Kind::one_of;
    if (distinct.size() == 1) {
      Node seq = fresh(YAML::NodeType::Sequence);
      for (const Node& item : first) seq.push_back(item);
      note_tree(seq, at(items.node, file_));  // parsed from a string or given elsewhere: stand at `items`
      pf["items"] = seq;
    } else {
      Node count = fresh_scalar(std::to_string(*width));
      note(count, items.node);
      pf["count"] = count;
    }
    loop.parallel_for = pf;
    return loop;
  }

  Loop read_iterator(const Field& task, const Env& inputs) {
    if (task.has("parameterIterator") && task.has("artifactIterator"))
      task["artifactIterator"].fail(
          "a task has one iterator, not both parameterIterator and artifactIterator");
    const bool artifact = task.has("artifactIterator");
    const Field it = task[artifact ? "artifactIterator" : "parameterIterator"];
    it.expect_map(kIteratorKeys, "iterator field");
    const Field items = it["items"];
    items.expect_map(artifact ? Keys(kArtifactItemsKeys) : Keys(kParameterItemsKeys), "iterator field");
    Loop loop;
    if (!artifact && items.has("raw")) {
      const Field raw = items["raw"];
      Node list = raw.node;
      if (raw.node.IsScalar()) {
        std::string error;
        const auto parsed = parse_items(raw.node.Scalar(), file_, raw, error);
        // KFP writes JSON here; it is read as YAML, of which JSON is a part (YAML flow lists pass too).
        if (!parsed) raw.fail("the raw items are not a valid JSON or YAML list: " + error);
        list.reset(*parsed);
      }
      loop = loop_over(known(list), raw);
    } else {
      const Field name = items[artifact ? "inputArtifact" : "inputParameter"];
      if (!name.node)
        items.fail(std::string("expected ") + (artifact ? "inputArtifact" : "raw or inputParameter"));
      const auto v = inputs.find((artifact ? "artifact:" : "") + name.scalar());
      if (v == inputs.end())
        name.fail("the task has no input " + quote(name.scalar()) + " (inputs." +
                  (artifact ? "artifacts" : "parameters") + ")");
      const Value& value = v->second;
      loop = loop_over(value, name);
    }
    if (it.has("itemInput")) loop.item_input = (artifact ? "artifact:" : "") + it["itemInput"].scalar();
    if (task.has("iteratorPolicy")) {
      const Field policy = task["iteratorPolicy"];
      policy.expect_map(kIteratorPolicyKeys);
      if (policy.has("parallelismLimit")) loop.parallel_for["parallelism"] = policy["parallelismLimit"].node;
    }
    return loop;
  }

  // The condition's probability from the overlay (default 1); false when the branch never runs.
  bool condition_runs(const std::string& task_name, const Field& condition) {
    const auto m = models_.conditions.find(task_name);
    if (m == models_.conditions.end()) return true;
    used_conditions_.insert(task_name);
    const std::string& p = m->second.scalar();
    if (p == "1" || p == "1.0") return true;
    if (p == "0" || p == "0.0") return false;
    m->second.fail("shardflow's model has no conditional steps yet: a condition (" +
                   quote(condition.node.IsScalar() ? condition.node.Scalar() : std::string("?")) +
                   ") is taken always (1) or never (0), got " + quote(p));
  }

  // Its depth is how many sub-DAGs enclose it (dag_stack_): 0 for the root's.
  Node import_dag(const Field& component, const Env& env) {
    if (dag_stack_.size() > static_cast<std::size_t>(kMaxDagDepth))
      component.fail("component DAGs nest too deeply (more than " + std::to_string(kMaxDagDepth) +
                     " levels)");
    component.expect_map(kComponentKeys);
    const Field dag = component["dag"];
    dag.expect_map(kDagKeys);
    const Field tasks = dag["tasks"];
    tasks.expect_map({});
    // The SDK never writes a DAG without tasks; taking one as a group with nothing in it would drop it,
    // and what depends on it would no longer wait (a DAG that a condition set to 0 empties is left out
    // on purpose, below).
    if (tasks.node.size() == 0) tasks.fail("must not be empty (a DAG runs at least one task)");
    DagTasks& names = dag_tasks_.emplace_back();
    for (auto t = tasks.node.begin(); t != tasks.node.end(); ++t)
      if (t->first.IsScalar()) {
        names.names.push_back(t->first.Scalar());
        names.index.insert(names.names.back());
      }
    Node steps = fresh(YAML::NodeType::Sequence);
    note(steps, tasks.node);
    std::set<std::string> skipped;
    std::vector<std::string> branches;         // conditions taken
    std::vector<std::pair<Node, Field>> made;  // a step and its task, for the dependencies
    for (auto t = tasks.node.begin(); t != tasks.node.end(); ++t) {
      const std::string name = t->first.Scalar();
      const Field task{t->second, key_path(tasks.path, name), file_, t->first};
      task.expect_map(kTaskKeys);
      if (task.has("triggerPolicy")) {
        const Field trigger = task["triggerPolicy"];
        trigger.expect_map(kTriggerKeys);
        if (trigger.has("strategy")) {
          // ALL_UPSTREAM_TASKS_COMPLETED is an exit task: after its group, as any dependent is
          // (docs/kfp-import.md, "Differences from a KFP run").
          const std::string& s = trigger["strategy"].scalar();
          if (s != "ALL_UPSTREAM_TASKS_COMPLETED" && s != "ALL_UPSTREAM_TASKS_SUCCEEDED" &&
              s != "TRIGGER_STRATEGY_UNSPECIFIED")
            trigger["strategy"].fail("unsupported trigger strategy " + quote(s));
          // Not an exit task (one after an exit-handler group, documented): `ignore_upstream_failure()`.
          if (s == "ALL_UPSTREAM_TASKS_COMPLETED" && !after_exit_handler(task))
            warn("task " + quote(name) +
                 " runs in KFP once its upstream tasks end, failed or not (ignore_upstream_failure); "
                 "shardflow runs it only after they succeed: the two agree unless one fails for good");
        }
        if (trigger.has("condition")) {
          if (!condition_runs(name, trigger["condition"])) {
            skipped.insert(name);
            continue;
          }
          branches.push_back(name);
        }
      }
      Node step = import_task(task, name, t->first, env);
      // A sub-DAG whose every task a condition set to 0 leaves out (a loop around a lone dsl.If) is left
      // out as a whole, as a task is: what depends on it does not wait for it.
      if (const Node& read = step; read["steps"] && read["steps"].IsSequence() && read["steps"].size() == 0) {
        skipped.insert(name);
        continue;
      }
      made.emplace_back(step, task);
    }
    for (auto& [step, task] : made) {
      Node after = fresh(YAML::NodeType::Sequence);
      std::set<std::string> seen;
      const auto add = [&](const Node& dep) {
        const std::string& d = dep.Scalar();
        if (skipped.count(d) || !seen.insert(d).second) return;
        after.push_back(dep);
      };
      if (task.has("dependentTasks")) {
        const Field deps = task["dependentTasks"];
        if (!deps.node.IsSequence()) deps.fail("expected a list of task names");
        for (auto d = deps.node.begin(); d != deps.node.end(); ++d) {
          if (!d->IsScalar()) deps.fail("expected a list of task names");
          add(*d);
        }
      }
      // Data makes a dependency too (the compiler lists it in dependentTasks as well).
      for (std::string_view kind : {"parameters", "artifacts"}) {
        if (!task.has("inputs") || !task["inputs"].has(kind)) continue;
        const Node ins = task["inputs"][kind].node;
        for (auto in = ins.begin(); in != ins.end(); ++in)
          for (std::string_view out : {"taskOutputParameter", "taskOutputArtifact"})
            if (in->second.IsMap() && in->second[std::string(out)] &&
                in->second[std::string(out)]["producerTask"])
              add(in->second[std::string(out)]["producerTask"]);
      }
      if (after.size() > 0) {
        note(after, task.has("dependentTasks") ? task["dependentTasks"].node : task.node);
        step["after"] = after;
      }
    }
    for (auto& [step, task] : made) steps.push_back(step);
    // dsl.If/Elif/Else: one branch runs in KFP; here every branch not set to 0 does.
    if (branches.size() > 1 && component.path.rfind("components.comp-condition-branches-", 0) == 0) {
      std::string zeros;  // every branch but the first: the overlay that keeps one
      for (std::size_t i = 1; i < branches.size(); ++i) zeros += (i == 1 ? "" : ", ") + branches[i] + ": 0";
      warn("the branches " + listed(branches) +
           " of one dsl.If/Elif/Else all run (a condition is taken unless the overlay says 0; to keep one "
           "branch, set the others to 0: kfp: {conditions: {" +
           zeros + "}})");
    }
    dag_tasks_.pop_back();
    return steps;
  }

  Node import_task(const Field& task, const std::string& name, const Node& name_node, const Env& env) {
    if (++tasks_ > kMaxTasks)
      task.fail("the pipeline has more than " + std::to_string(kMaxTasks) +
                " tasks (counting a component DAG once for every task that uses it)");
    Node step = fresh(YAML::NodeType::Map);
    note(step, at(name_node, file_));
    step["name"] = name_node;
    const Field ref = task["componentRef"];
    if (!ref.node) task.fail("missing required key \"componentRef\"");
    if (ref.node.IsScalar() || ref.node.IsSequence())
      ref.fail("expected a mapping {name: COMPONENT} (the SDK writes componentRef: {name: comp-...}), got " +
               (ref.node.IsScalar() ? quote(ref.node.Scalar()) : std::string("a list")));
    const Field comp_name = ref["name"];
    const std::string& cname = comp_name.scalar();
    const auto c = components_.find(cname);
    if (c == components_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, f] : components_) names.push_back(n);
      comp_name.fail("unknown component " + quote(cname) +
                     (names.empty() ? std::string(" (the file has no components)")
                                    : " (components: " + listed(names) + ")"));
    }
    const Field& comp = c->second;
    comp.expect_map(kComponentKeys);
    if (comp.has("dag") && comp.has("executorLabel"))
      comp.fail("has both a dag and an executorLabel: a component is a sub-DAG or a container, not both");
    if (comp.has("dag")) {  // a sub-DAG that runs itself, directly or through others, would never end
      const auto again = std::find_if(dag_stack_.begin(), dag_stack_.end(),
                                      [&](const auto& entry) { return entry.first == cname; });
      if (again != dag_stack_.end()) {
        std::string chain = cname;  // each component, then the task in it that runs the next
        for (auto e = again + 1; e != dag_stack_.end(); ++e)
          chain += " -> task " + e->second + " -> " + e->first;
        comp_name.fail("component " + quote(cname) + " runs itself: " + chain + " -> task " + name + " -> " +
                       cname + "; a sub-DAG cannot contain itself");
      }
    }

    // The task's inputs, resolved in the enclosing DAG: the environment of a sub-DAG.
    Env inputs;
    if (task.has("inputs")) {
      const Field ins = task["inputs"];
      ins.expect_map(kInputsKeys);
      for (std::string_view kind : {"parameters", "artifacts"}) {
        if (!ins.has(kind)) continue;
        const Field group = ins[kind];
        group.expect_map({});
        for (auto in = group.node.begin(); in != group.node.end(); ++in) {
          const std::string input = in->first.Scalar();
          const bool artifact = kind == "artifacts";
          inputs[(artifact ? "artifact:" : "") + input] =
              resolve(Field{in->second, key_path(group.path, input), file_, in->first}, env, artifact);
        }
      }
    }
    if (task.has("parameterIterator") || task.has("artifactIterator")) {
      Loop loop = read_iterator(task, inputs);
      step["parallel_for"] = loop.parallel_for;
      if (!loop.item_input.empty()) inputs[loop.item_input] = std::move(loop.item);
    } else if (task.has("iteratorPolicy")) {
      task["iteratorPolicy"].fail("an iteratorPolicy needs a parameterIterator or artifactIterator");
    }

    if (comp.has("dag")) {
      if (task.has("retryPolicy"))
        task["retryPolicy"].fail("retries of a whole sub-DAG are not supported (only of a container task)");
      dag_stack_.emplace_back(cname, name);
      step["steps"] = import_dag(comp, inputs);
      dag_stack_.pop_back();
      return step;
    }
    if (!comp.has("executorLabel")) comp.fail("a component needs a dag or an executorLabel");
    if (task.has("retryPolicy")) step["retries"] = read_retries(task["retryPolicy"]);
    read_executor(step, comp["executorLabel"], inputs);
    apply_models(step, name, cname);
    return step;
  }

  // A task after an exit-handler group (`dsl.ExitHandler`'s exit task: the SDK names the groups
  // exit-handler-N, their components comp-exit-handler-N).
  static bool after_exit_handler(const Field& task) {
    if (!task.has("dependentTasks") || !task["dependentTasks"].node.IsSequence()) return false;
    for (const Node& d : task["dependentTasks"].node)
      if (d.IsScalar() && d.Scalar().rfind("exit-handler-", 0) == 0) return true;
    return false;
  }

  // KFP compiles retryPolicy to Argo's retryStrategy.backoff (backend/src/v2/compiler/argocompiler:
  // duration, factor, maxDuration; a policy without backoffMaxDuration gets its template's default,
  // 3600 s). Argo's maxDuration is how long retrying may go on, from the task's first attempt:
  // retries.max_duration. Argo caps no wait (the template sets no backoff.cap): max_backoff, the model's
  // cap, is made the larger of the two, which caps nothing that the deadline lets happen.
  Node read_retries(const Field& policy) {
    policy.expect_map(kRetryKeys);
    Node r = fresh(YAML::NodeType::Map);
    note(r, policy.node);
    const std::pair<std::string_view, const char*> keys[] = {
        {"maxRetryCount", "max"}, {"backoffDuration", "backoff"}, {"backoffFactor", "factor"}};
    for (const auto& [ir, ours] : keys)
      if (policy.has(ir)) r[ours] = policy[ir].node;
    if (policy.has("backoffFactor")) {
      const Field f = policy["backoffFactor"];
      double factor = 1;
      const std::string& text = f.scalar();
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), factor);
      if (ec == std::errc{} && end == text.data() + text.size() && factor < 1)
        f.fail("a factor below 1 (waits that shrink) is not modelled; shardflow takes factors >= 1, got " +
               text);
    }
    const auto seconds = [](const Field& d) -> std::optional<double> {
      try {
        return parse_duration(d.scalar()).seconds();
      } catch (const std::exception&) {
        return std::nullopt;  // the scenario reader reports it, at the value
      }
    };
    // The limit as written, else the compiler's default; a duration the reader will refuse counts as 0 here.
    const Node limit = policy.has("backoffMaxDuration") ? policy["backoffMaxDuration"].node
                                                        : made_scalar("3600s", policy.node);
    const double max =
        policy.has("backoffMaxDuration") ? seconds(policy["backoffMaxDuration"]).value_or(0) : 3600;
    r["max_duration"] = limit;
    const bool first_longer =
        policy.has("backoffDuration") && seconds(policy["backoffDuration"]).value_or(0) > max;
    const Node cap = first_longer ? policy["backoffDuration"].node : limit;
    if (cap.IsScalar()) r["max_backoff"] = made_scalar(cap.Scalar(), cap);  // a node of its own
    return r;
  }

  void read_executor(Node& step, const Field& label, const Env& inputs) {
    const std::string& name = label.scalar();
    const Field executors = Field{ir_, "", file_, {}}["deploymentSpec"]["executors"];
    if (!executors.node || !executors.node[name])
      label.fail("no executor " + quote(name) + " in deploymentSpec.executors");
    const Field exec = executors[name];
    exec.expect_map(kExecutorKeys, "executor kind");
    const Field container = exec["container"];
    container.expect_map(kContainerKeys);
    if (container.has("image")) step["image"] = container["image"].node;
    Node command = fresh(YAML::NodeType::Sequence);
    note(command, container.node);
    for (std::string_view key : {"command", "args"}) {
      if (!container.has(key)) continue;
      const Field list = container[key];
      if (!list.node.IsSequence()) list.fail("expected a list of strings");
      for (auto a = list.node.begin(); a != list.node.end(); ++a) command.push_back(*a);
    }
    if (command.size() > 0) step["command"] = command;
    if (container.has("resources")) step["resources"] = read_resources(container["resources"], inputs);
  }

  // A scalar made from an IR value, standing at it.
  Node made_scalar(const std::string& text, const Node& from) {
    Node n = fresh_scalar(text);
    note(n, from);
    return n;
  }

  // A resource field set from a parameter (`set_cpu_limit(cpu)` with a pipeline parameter: the IR holds
  // "{{$.inputs.parameters['pipelinechannel--cpu']}}"): the task's input's value when it is known at
  // import (--param, the overlay's kfp.params, a default, a constant), else an error that says how to give
  // it. Any other value: itself.
  Field resolved(const Field& f, const Env& inputs) {
    static constexpr std::string_view kOpen = "{{$.inputs.parameters['", kClose = "']}}";
    if (!f.node.IsScalar()) return f;
    const std::string& text = f.node.Scalar();
    if (text.size() <= kOpen.size() + kClose.size() || text.compare(0, kOpen.size(), kOpen) != 0 ||
        text.compare(text.size() - kClose.size(), kClose.size(), kClose) != 0)
      return f;
    const std::string name = text.substr(kOpen.size(), text.size() - kOpen.size() - kClose.size());
    const auto v = inputs.find(name);
    if (v == inputs.end()) f.fail("set from the input " + quote(name) + ", which the task does not have");
    const Value& value = v->second;
    const std::string source = value.what.empty() ? "the input " + quote(name) : value.what;
    if (value.kind == Value::Kind::known && value.values.size() == 1) {
      if (!value.values[0].IsScalar())
        f.fail("set from " + source + ", which is a " + (value.values[0].IsMap() ? "mapping" : "list") +
               ": expected one value");
      return Field{made_scalar(value.values[0].Scalar(), f.node), f.path, f.file, f.node,
                   "the value of " + source};
    }
    f.fail("set at run time from " + source + ": shardflow needs the value when it imports the pipeline" +
           (value.kind == Value::Kind::one_of ? " (it differs between loop iterations)" : "") +
           (value.hint.empty() ? "" : "; " + value.hint));
  }

  // An older numeric resource field (PipelineSpec's doubles: cpuLimit in CPUs, memoryLimit in GB), checked
  // at the IR's field rather than as the scenario's value made of it: a number of `unit`, 0 or more. `sdk`
  // says how the SDK writes one.
  static void expect_amount(const Field& f, std::string_view unit, std::string_view sdk) {
    const std::string text = f.node.IsScalar() ? f.node.Scalar() : std::string();
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!text.empty() && ec == std::errc{} && end == text.data() + text.size() && v >= 0 && std::isfinite(v))
      return;
    f.fail("expected a number of " + std::string(unit) + ", 0 or more (" + std::string(sdk) + "), got " +
           (f.node.IsScalar() ? quote(text) : std::string("a ") + (f.node.IsMap() ? "mapping" : "list")));
  }

  // A newer string resource field (resourceCpuLimit: '500m', resourceMemoryRequest: 16Gi): a Kubernetes
  // quantity, checked at the IR's field as the scenario loader checks the value made of it (`positive`:
  // more than 0, else 0 or more).
  template <class Parse>
  static void expect_quantity(const Field& f, const std::string& text, Parse parse, bool positive) {
    try {
      const auto v = parse(text);
      if (positive ? v <= 0 : v < 0) f.fail((positive ? "must be > 0, got " : "must be >= 0, got ") + text);
    } catch (const std::invalid_argument& e) {
      f.fail(e.what());
    }
  }

  Node read_resources(const Field& res, const Env& inputs) {
    res.expect_map(kResourceKeys);
    Node out = fresh(YAML::NodeType::Map);
    note(out, res.node);
    // A request, else the limit (Kubernetes makes the request equal to a lone limit); the newer string
    // fields before the older numeric ones (cpuLimit in CPUs, memoryLimit in GB). Every field given is
    // checked (Kubernetes refuses a pod with a bad limit too), the first one gives the value.
    // The first request and the first limit of each resource, for Kubernetes' check (request <= limit).
    struct Given {
      std::optional<Field> field;
      std::int64_t value = 0;
      void set(const Field& f, std::int64_t v) {
        if (!field) field = f, value = v;
      }
    };
    const auto check_limit = [](const Given& request, const Given& limit, std::string_view what) {
      if (request.field && limit.field && request.value > limit.value)
        request.field->fail(std::string(what) + " request " + request.field->scalar() +
                            " is more than its limit " + limit.field->scalar() + " (" + limit.field->path +
                            "): Kubernetes refuses such a pod (a request must be <= its limit)");
    };
    bool have_cpu = false;
    Given cpu_request, cpu_limit;
    for (std::string_view key : {"resourceCpuRequest", "resourceCpuLimit", "cpuRequest", "cpuLimit"}) {
      if (!res.has(key)) continue;
      const Field f = resolved(res[key], inputs);
      MilliCpu milli = 0;
      if (key == "cpuRequest" || key == "cpuLimit") {
        expect_amount(f, "CPUs",
                      "the SDK writes set_cpu_limit('500m') as 0.5; the newer resourceCpuLimit holds "
                      "the text");
        double cpus = 0;  // a number, expect_amount says
        std::from_chars(f.scalar().data(), f.scalar().data() + f.scalar().size(), cpus);
        milli = static_cast<MilliCpu>(std::llround(cpus * 1000));
      } else {
        expect_quantity(f, f.scalar(), parse_cpu, true);
        milli = parse_cpu(f.scalar());
      }
      (key.find("Request") != std::string_view::npos ? cpu_request : cpu_limit).set(f, milli);
      if (!have_cpu) out["cpu"] = f.node;
      have_cpu = true;
    }
    check_limit(cpu_request, cpu_limit, "the CPU");
    bool have_memory = false;
    Given memory_request, memory_limit;
    for (std::string_view key :
         {"resourceMemoryRequest", "resourceMemoryLimit", "memoryRequest", "memoryLimit"}) {
      if (!res.has(key)) continue;
      const Field f = resolved(res[key], inputs);
      std::string text = f.scalar();
      if (key == "memoryRequest" || key == "memoryLimit") {
        expect_amount(f, "gigabytes",
                      "the SDK writes set_memory_request('16Gi') as 17.179869184; the newer "
                      "resourceMemoryRequest holds the text");
        text += "G";
      } else {
        expect_quantity(f, text, parse_bytes, false);
        if (!text.empty() && text.back() == 'K') text.back() = 'k';  // Kubernetes' decimal kilo, as written
      }
      (key.find("Request") != std::string_view::npos ? memory_request : memory_limit)
          .set(f, parse_bytes(text));
      if (!have_memory) out["memory"] = made_scalar(text, f.node);
      have_memory = true;
    }
    check_limit(memory_request, memory_limit, "the memory");
    if (res.has("accelerator")) {
      const Field acc = res["accelerator"];
      acc.expect_map(kAcceleratorKeys);
      const Field written = acc[acc.has("resourceType") ? "resourceType" : "type"];
      const Field type = resolved(written, inputs);
      if (type.node) {
        std::string t = type.scalar();
        std::transform(t.begin(), t.end(), t.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        // NVIDIA's only: a step's `gpu` is what the Kubernetes backend requests as nvidia.com/gpu and reads
        // from a node's allocatable nvidia.com/gpu; amd.com/gpu, gpu.intel.com/i915 or a TPU is another
        // resource, which no pool's `gpu` stands for.
        if (t.find("nvidia") == std::string::npos)
          written.fail("unsupported accelerator " + quote(type.scalar()) +
                       ": shardflow models NVIDIA GPUs only (a step's gpu is nvidia.com/gpu, which its "
                       "Kubernetes backend requests)");
      }
      const Field count = acc[acc.has("resourceCount") ? "resourceCount" : "count"];
      if (count.node) {
        // An integer parameter's value as the SDK writes it (defaultValue: 1.0) counts whole GPUs.
        const Field n = resolved(count, inputs);
        double whole = 0;
        const std::string text = n.node.IsScalar() ? n.node.Scalar() : std::string();
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
        out["gpu"] = n.node != count.node && ec == std::errc{} && end == text.data() + text.size() &&
                             whole >= 0 && whole < 1e6 &&
                             whole == static_cast<double>(static_cast<long>(whole))
                         ? made_scalar(std::to_string(static_cast<long>(whole)), count.node)
                         : n.node;
      }
    }
    return out;
  }

  // The overlay's models for the component, then for the task, over what the IR gave.
  void apply_models(Node& step, const std::string& task_name, const std::string& comp_name) {
    bool has_duration = false;
    const auto apply = [&](const Field* model) {
      if (!model) return;
      for (auto it = model->node.begin(); it != model->node.end(); ++it) {
        step.remove(it->first.Scalar());  // never `=` over a node: that would rewrite the IR's
        step[it->first.Scalar()] = it->second;
        has_duration = has_duration || it->first.Scalar() == "duration";
      }
    };
    apply(component_model(comp_name));
    if (const auto t = models_.tasks.find(task_name); t != models_.tasks.end()) {
      used_tasks_.insert(task_name);
      task_dags_[task_name].push_back(dag_stack_.empty() ? std::string("root") : dag_stack_.back().first);
      apply(&t->second);
    }
    if (!has_duration) {
      Node d = detail::parse_yaml_document(std::string(kDefaultDuration), "default");
      note_tree(d, SourceLocation{"the default duration (docs/kfp-import.md)", 0, 0});
      step["duration"] = d;
      if (warned_.insert(comp_name).second)
        warn("component " + quote(comp_name) + " has no duration model in the overlay (kfp: {components: {" +
             comp_name + ": {duration: ...}}}); each of its tasks runs the default, 1m");
    }
  }

  const Field* component_model(const std::string& comp_name) {
    for (const std::string& key :
         {comp_name, comp_name.rfind("comp-", 0) == 0 ? comp_name.substr(5) : comp_name}) {
      if (const auto m = models_.components.find(key); m != models_.components.end()) {
        used_components_.insert(key);
        return &m->second;
      }
    }
    // The SDK gives each further use of a component its own copy, comp-NAME-2, comp-NAME-3, ..., and a
    // copy made inside a sub-pipeline a suffix more (comp-NAME-2-2): the model of comp-NAME, or of a
    // copy with fewer suffixes, applies to a copy that runs the same container (image, command, args).
    std::string base = comp_name;
    for (std::size_t dash = base.find_last_of('-');
         dash != std::string::npos && dash + 1 < base.size() &&
         base.find_first_not_of("0123456789", dash + 1) == std::string::npos;
         dash = base.find_last_of('-')) {
      base.resize(dash);
      if (!same_container(base, comp_name)) continue;
      for (const std::string& key : {base, base.rfind("comp-", 0) == 0 ? base.substr(5) : base})
        if (const auto m = models_.components.find(key); m != models_.components.end()) {
          used_components_.insert(key);
          return &m->second;
        }
    }
    return nullptr;
  }

  // The value of `key` in mapping n, if n is one and has it (yaml-cpp throws on a key looked up in a
  // missing node: each step is checked).
  static std::optional<Node> child(const Node& n, const std::string& key) {
    if (!n.IsDefined() || !n.IsMap()) return std::nullopt;
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
    return std::nullopt;
  }

  // Components a and b both run an executor container, the same image, command and args.
  [[nodiscard]] bool same_container(const std::string& a, const std::string& b) const {
    const auto container = [&](const std::string& comp) -> std::optional<std::string> {
      const auto comps = child(ir_, "components");
      const auto c = comps ? child(*comps, comp) : std::nullopt;
      const auto label = c ? child(*c, "executorLabel") : std::nullopt;
      if (!label || !label->IsScalar()) return std::nullopt;
      const auto spec = child(ir_, "deploymentSpec");
      const auto executors = spec ? child(*spec, "executors") : std::nullopt;
      const auto executor = executors ? child(*executors, label->Scalar()) : std::nullopt;
      const auto e = executor ? child(*executor, "container") : std::nullopt;
      if (!e) return std::nullopt;
      std::string text;
      for (const char* key : {"image", "command", "args"}) {
        const auto v = child(*e, key);
        text += (v ? YAML::Dump(*v) : std::string()) + "\n---\n";
      }
      return text;
    };
    const auto ca = container(a), cb = container(b);
    return ca && cb && *ca == *cb;
  }

  void check_models_used() {
    // A model of a component or task that is in the pipeline but does not run (its condition is set to 0
    // in kfp.conditions) is kept for when it does; one the pipeline does not have is a typo.
    const auto check = [](const std::map<std::string, Field>& given, const std::set<std::string>& used,
                          const std::set<std::string>& known, std::string_view what,
                          const std::string& hint) {
      for (const auto& [name, f] : given)
        if (!used.count(name) && !known.count(name)) {
          std::vector<std::string_view> names(known.begin(), known.end());
          const auto meant = closest_name(name, names);
          throw InputError(at(f.anchor.IsDefined() ? f.anchor : f.node, f.file), f.path,  // at the name
                           "no " + std::string(what) + " " + quote(name) + " in the pipeline" +
                               (meant ? " (did you mean " + quote(std::string(*meant)) + "?)" : hint));
        }
    };
    std::vector<std::string> comps;
    std::set<std::string> known_components, known_tasks, known_conditions;
    for (const auto& [n, f] : components_)
      if (f.has("executorLabel")) {
        const std::string bare = n.rfind("comp-", 0) == 0 ? n.substr(5) : n;  // as a model names it
        comps.push_back(bare);
        known_components.insert({n, bare});
      }
    // The container tasks (those whose component runs an executor) and the condition tasks of every DAG:
    // a sub-DAG's task takes no model (it runs no container).
    const auto dag_tasks = [&](const Node& owner) {
      const auto dag = child(owner, "dag");
      const auto tasks = dag ? child(*dag, "tasks") : std::nullopt;
      if (!tasks || !tasks->IsMap()) return;
      for (auto it = tasks->begin(); it != tasks->end(); ++it) {
        const auto ref = child(it->second, "componentRef");
        const auto name = ref ? child(*ref, "name") : std::nullopt;
        if (name && name->IsScalar())
          if (const auto c = components_.find(name->Scalar());
              c != components_.end() && c->second.has("executorLabel"))
            known_tasks.insert(it->first.Scalar());
        const auto trigger = child(it->second, "triggerPolicy");
        if (trigger && child(*trigger, "condition")) known_conditions.insert(it->first.Scalar());
      }
    };
    for (const auto& [n, f] : components_) dag_tasks(f.node);
    if (const auto root = child(ir_, "root")) dag_tasks(*root);
    check(models_.components, used_components_, known_components, "component",
          " (components: " + listed(comps) + ")");
    check(models_.tasks, used_tasks_, known_tasks, "container task", "");
    // A task's name is unique in its DAG only: a model given by a name that tasks of several DAGs share
    // reaches them all, which is said (by the DAGs' components).
    for (const auto& [name, dags] : task_dags_)
      if (dags.size() > 1)
        warn("kfp.tasks." + name + " applies to the " + std::to_string(dags.size()) +
             " tasks of that name (in " + listed(dags) +
             "): a task's name is unique only within its DAG; give a component's model (kfp.components) to "
             "tell them apart");
    check(models_.outputs, used_outputs_, {}, "loop over the output", " (only a loop's items are modelled)");
    check(models_.conditions, used_conditions_, known_conditions, "condition task", "");
  }

  void add_cluster(Node& doc) {
    if (!options_.cluster.empty() && options_.cluster != "local") {
      const std::string& path = options_.cluster;
      const std::string text = read_scenario_file(path);
      detail::check_utf8_text(text, path);
      const Node c = detail::parse_yaml_document(text, path);
      if (!c.IsMap() || !c["cluster"])
        throw InputError(
            at(c, path), "--cluster",
            "expected `local` or a YAML file with a `cluster:` mapping (a scenario file will do)");
      note_marks(c["cluster"], path);
      doc["cluster"] = c["cluster"];
      if (c["overheads"]) {
        note_marks(c["overheads"], path);
        doc["overheads"] = c["overheads"];
      }
      return;
    }
    if (cluster_given_ || options_.cluster == "local") return;
    Node c = detail::parse_yaml_document(std::string(kDefaultCluster), "default");
    note_tree(c, SourceLocation{"the default cluster (docs/kfp-import.md)", 0, 0});
    doc["cluster"] = c;
    warn(
        "no cluster given (--cluster FILE or an overlay's cluster:); using the default cluster: 20 nodes of "
        "16 CPUs and 64Gi, 2 nodes of 32 CPUs, 256Gi and 4 GPUs (docs/kfp-import.md)");
  }

 public:
  void index_components() {
    const Field comps = Field{ir_, "", file_, {}}["components"];
    if (!comps.node) return;
    comps.expect_map({});  // a list here was iterated as a mapping: yaml-cpp's "invalid node" (exit 1)
    for (auto it = comps.node.begin(); it != comps.node.end(); ++it)
      components_.emplace(it->first.Scalar(),
                          Field{it->second, key_path("components", it->first.Scalar()), file_, it->first});
  }

 private:
  Node ir_;
  Node pool_{YAML::NodeType::Sequence};
  std::string file_;
  const LoadOptions& options_;
  std::map<std::string, Field> components_;
  std::map<std::string, std::vector<std::string>> task_dags_;  // a kfp.tasks name -> the DAGs of its tasks
  std::vector<std::pair<std::string, std::string>>
      dag_stack_;  // (component, task) of the sub-DAGs being read
  // The task names of each DAG being read, in the file's order and as a set (a producerTask is looked up
  // for every task input).
  struct DagTasks {
    std::vector<std::string_view> names;
    std::set<std::string_view, std::less<>> index;
  };
  std::vector<DagTasks> dag_tasks_;
  std::vector<detail::ParsedOverlay> overlays_;
  bool cluster_given_ = false;
  Models models_;
  std::map<std::string, std::pair<Node, SourceLocation>> params_;
  Env root_env_;
  std::set<std::string> used_components_, used_tasks_, used_outputs_, used_conditions_, warned_;
  std::vector<std::pair<Node, SourceLocation>> origins_;
  std::vector<std::string> warnings_;
  std::size_t visits_ = 0;
  std::size_t tasks_ = 0;
};

}  // namespace

std::optional<Scenario> import_foreign_document(const YAML::Node& root, const std::string& file,
                                                const LoadOptions& options) {
  if (!root.IsMap()) return std::nullopt;
  if (const Node api = root["apiVersion"];
      api && api.IsScalar() && api.Scalar().rfind("argoproj.io/", 0) == 0) {
    const Node kind = root["kind"];
    throw InputError(
        at(kind ? kind : api, file), kind ? "kind" : "apiVersion",
        "this is an Argo " + (kind && kind.IsScalar() ? kind.Scalar() : std::string("resource")) +
            ", not a KFP PipelineSpec: shardflow reads the file `kfp` compiles (compiler.Compiler()"
            ".compile(pipeline, \"pipeline.yaml\")), not the Argo Workflow the KFP backend makes of it; an "
            "Argo Workflow of your own is not read either: write it as a scenario (scenarios/argo-*.yaml are "
            "two of Argo's examples written so)");
  }
  // shardflow's own results, given where a scenario goes: said as what they are, not as a scenario's
  // unknown keys.
  const auto own = [&](const char* key, const std::string& what, const std::string& use) {
    throw InputError(
        at(root[key], file), key,
        "this is " + what + ", not a scenario: " + use + " (the scenario is the file it was made from)");
  };
  if (const Node f = root["format"]; f && f.IsScalar() && f.Scalar() == "shardflow-trace")
    own("format", "a run's trace (trace.json)",
        "`shardflow report DIR` makes its page, `shardflow calibrate SCENARIO DIR` fits the scenario to it");
  if (const Node k = root["kind"]; k && k.IsScalar() && k.Scalar() == "compare")
    own("kind", "a comparison's result (compare.json)", "`shardflow report DIR` makes its page");
  if (root["scenario"] && root["dimensions"] && root["configurations"])
    own("dimensions", "a sweep's result (sweep.json)",
        "`shardflow report DIR` makes its page, `shardflow merge` combines slices");
  if (root["makespan_s"] && root["critical_path_s"])
    own("makespan_s", "a run's metrics (metrics.json)", "`shardflow report DIR` makes the run's page");
  // Any of a PipelineSpec's own top-level keys: the SDK writes `components` first, so a file cut short
  // may have no other, and read as a scenario it would get a scenario's errors.
  if (!root["pipelineInfo"] && !root["root"] && !root["deploymentSpec"] && !root["components"] &&
      !root["schemaVersion"] && !root["sdkVersion"])
    return std::nullopt;
  Importer importer(root, file, options);
  importer.index_components();
  return importer.run();
}

}  // namespace shardflow
