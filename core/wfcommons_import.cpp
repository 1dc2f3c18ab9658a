#include "wfcommons_import.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/text.hpp>

#include "json_document.hpp"
#include "scenario_document.hpp"
#include "validate.hpp"
#include "yaml_reader.hpp"

namespace shardflow {
namespace {

using detail::index_path;
using detail::key_path;

using YAML::Node;
using Kind = JsonValue::Kind;

constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 62;  // a task's input or output, in all
// A file's size, a machine's memory, a core count, a speed: an integer, exact in a double.
constexpr double kMaxCount = 1e15;

// A list element's path, "workflow.specification.tasks[3]", kept as its parts: the text is made only for
// a message (path_text).
struct IndexPath {
  const char* list;
  std::size_t index;
};
std::string path_text(const IndexPath& p) {
  return index_path(p.list, p.index);
}
const std::string& path_text(const std::string& p) {
  return p;
}
std::string path_text(const char* p) {
  return p;
}

// One task as the importer reads it, from either schema version.
struct Task {
  std::string_view id;               // in the document
  std::string_view name;             // 1.4: the task's `name`, which parents and children refer to
  const JsonValue* where = nullptr;  // the task's object in the specification (1.5) or tasks (1.4)
  const JsonValue* id_value = nullptr;
  IndexPath path{"", 0};                     // workflow.specification.tasks[3]
  const JsonValue* parents_value = nullptr;  // lists of ids, checked to be strings
  const JsonValue* children_value = nullptr;
  std::uint64_t input_bytes = 0, output_bytes = 0;  // 1.4: summed here
  const JsonValue* runtime = nullptr;
  const JsonValue* cores = nullptr;
  std::int64_t exec_index = -1;  // 1.5: where runtime and cores are, workflow.execution.tasks[exec_index]
  // For messages: where runtime and cores are.
  [[nodiscard]] std::string exec_path() const {
    return exec_index < 0 ? path_text(path)
                          : index_path("workflow.execution.tasks", static_cast<std::size_t>(exec_index));
  }
};

struct Machine {
  std::string name;
  const JsonValue* where = nullptr;
  std::int64_t cores = 0;
  const JsonValue* cores_value = nullptr;
  std::int64_t speed_mhz = 0;
  std::int64_t memory = 0;
};

bool valid_step_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", s);
  return buf;
}

// The one-step, one-pool document the direct route takes the loader's defaults from, made in code (parsing
// it from YAML text was most of a small instance's import). As YAML:
//   name: t
//   pipeline:
//     steps:
//       - {name: a, duration: {base: 1ns}}
//       - {name: b, after: [a], duration: {base: 1ns}, input: {size: 1}, output: {size: 1}}
//   cluster:
//     node_pools: [{name: p, cpu: 1, memory: 0, count: 1, max_pods: 1000000}]
//     scheduler: {policy: list, decisions_per_second: 0, bind_latency: 0s, initial_backoff: 0s, max_backoff:
//     0s}
//   overheads: none
Node template_document() {
  using Fields = std::initializer_list<std::pair<const char*, Node>>;
  const auto map = [](Fields fields) {
    Node m(YAML::NodeType::Map);
    for (const auto& [k, v] : fields) m[k] = v;
    return m;
  };
  const auto str = [](const char* text) { return Node(std::string(text)); };
  Node after(YAML::NodeType::Sequence);
  after.push_back(str("a"));
  Node steps(YAML::NodeType::Sequence);
  steps.push_back(map({{"name", str("a")}, {"duration", map({{"base", str("1ns")}})}}));
  steps.push_back(map({{"name", str("b")},
                       {"after", after},
                       {"duration", map({{"base", str("1ns")}})},
                       {"input", map({{"size", str("1")}})},
                       {"output", map({{"size", str("1")}})}}));
  Node pools(YAML::NodeType::Sequence);
  pools.push_back(map({{"name", str("p")},
                       {"cpu", str("1")},
                       {"memory", str("0")},
                       {"count", str("1")},
                       {"max_pods", str("1000000")}}));
  return map({{"name", str("t")},
              {"pipeline", map({{"steps", steps}})},
              {"cluster", map({{"node_pools", pools},
                               {"scheduler", map({{"policy", str("list")},
                                                  {"decisions_per_second", str("0")},
                                                  {"bind_latency", str("0s")},
                                                  {"initial_backoff", str("0s")},
                                                  {"max_backoff", str("0s")}})}})},
              {"overheads", str("none")}});
}

// The template document as the loader reads it, once per process (a copy is what each import starts
// from). Its two steps' and its pool's places, the only ones it has, are each replaced by the import.
const Scenario& template_scenario() {
  static const Scenario s = detail::read_scenario_document({template_document(), {}}, "", {}, LoadOptions{});
  return s;
}

class Importer {
 public:
  Importer(std::string_view text, const std::string& file, const LoadOptions& options, bool via_document)
      : doc_(parse_json_document(text, file)), file_(file), options_(options), via_document_(via_document) {}

  [[nodiscard]] WfRoute route() const { return route_; }

  Scenario run() {
    check_keys();
    const JsonValue& root = doc_.root();
    expect(root, "", Kind::object);
    version_ = "1.5";
    if (const JsonValue* v = doc_.member(root, "schemaVersion")) {
      expect(*v, "schemaVersion", Kind::string);
      const std::string version(doc_.text(*v));
      if (version != "1.6" && version != "1.5" && version != "1.4")
        fail(*v, "schemaVersion", "shardflow reads WfFormat 1.6, 1.5 and 1.4, got " + quote(version));
      version_ = std::string(doc_.text(*v));
    }
    if (doc_.member(root, "workflow") == nullptr)
      for (std::uint32_t k = 0; k < root.count; ++k) {
        const std::string_view key = doc_.key(root, k);
        constexpr std::string_view kWorkflow[] = {"workflow"};
        if (!closest_name(key, kWorkflow)) continue;
        const bool only_case =
            key.size() == 8 && std::equal(key.begin(), key.end(), "workflow", [](char x, char y) {
              return std::tolower(static_cast<unsigned char>(x)) == y;
            });
        throw InputError(doc_.where(doc_.key_offset(root, k)), std::string(key),
                         "unknown key " + quote(key) + " (did you mean \"workflow\"?" +
                             (only_case ? " keys are case-sensitive)" : ")"));
      }
    const JsonValue& workflow = require(root, "", "workflow", Kind::object);
    // The content decides the layout: 1.5 (and 1.6, the same with optional metrics) has `specification`
    // and `execution`, 1.4 `tasks`.
    if (doc_.member(workflow, "specification") != nullptr) {
      read_v15(workflow);
    } else if (doc_.member(workflow, "tasks") != nullptr) {
      read_v14(workflow);
    } else {
      fail(workflow, "workflow",
           "expected `specification` (WfFormat 1.5) or `tasks` (WfFormat 1.4): this is not a WfCommons "
           "instance");
    }
    index_tasks();
    Scenario s = build();
    // The list takes tasks in their ids' string order; the step names keep it unless a character was
    // replaced ("x.9" < "x0", but "x_9" > "x0").
    bool renamed = false;
    for (std::size_t i = 0; i < tasks_.size() && !renamed; ++i) renamed = step_names_[i] != tasks_[i].id;
    if (renamed && s.cluster.scheduler.policy == ScorePolicy::list) {
      std::vector<std::size_t> order(tasks_.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(),
                [this](std::size_t a, std::size_t b) { return tasks_[a].id < tasks_[b].id; });
      auto& list = s.cluster.scheduler.list_order;
      list.reserve(order.size());
      for (std::size_t i : order) list.push_back(step_names_[i]);
    }
    return s;
  }

 private:
  // ---- reading the JSON -------------------------------------------------------------------------------
  [[noreturn]] void fail(const JsonValue& v, const std::string& path, const std::string& message) const {
    throw InputError(doc_.where(v), path, message);
  }
  // Every object of the instance, read here or not: a key given twice is an error, as in a scenario file,
  // not its first value silently taken. Depth first, in the file's order; a path is made for a message only.
  void check_keys() const {
    struct Frame {
      const JsonValue* v;
      std::uint32_t next;  // the next item to visit; the one visited last is next - 1
    };
    std::vector<Frame> stack;
    std::unordered_map<std::string_view, std::uint32_t> first;  // for a large object: key -> first item
    const auto enter = [&](const JsonValue& v) {
      if (v.kind == Kind::object) {
        std::uint32_t i = 1, j = 0;
        if (v.count <= 16) {
          for (; i < v.count; ++i) {
            j = 0;
            while (j < i && doc_.key(v, j) != doc_.key(v, i)) ++j;
            if (j < i) break;
          }
        } else {
          first.clear();
          for (i = 0; i < v.count; ++i) {
            const auto [it, added] = first.emplace(doc_.key(v, i), i);
            if (!added) {
              j = it->second;
              break;
            }
          }
        }
        if (i < v.count) {
          std::string path;
          for (const Frame& f : stack)
            path = f.v->kind == Kind::object ? key_path(path, doc_.key(*f.v, f.next - 1))
                                             : index_path(path, f.next - 1);
          const std::string key(doc_.key(v, i));
          throw InputError(doc_.where(doc_.key_offset(v, i)), key_path(path, key),
                           detail::duplicate_key_message(key, doc_.where(doc_.key_offset(v, j)).line));
        }
      }
      if (v.kind == Kind::object || v.kind == Kind::array) stack.push_back({&v, 0});
    };
    enter(doc_.root());
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next == f.v->count) {
        stack.pop_back();
        continue;
      }
      enter(doc_.item(*f.v, f.next++));
    }
  }
  // `path` (a std::string or an IndexPath) is made into text only for a message.
  template <class Path>
  void expect(const JsonValue& v, const Path& path, Kind kind) const {
    if (v.kind != kind)
      fail(v, path_text(path),
           "expected " + std::string(json_kind_name(kind)) + ", got " + std::string(json_kind_name(v.kind)));
  }
  template <class Path>
  const JsonValue& require(const JsonValue& object, const Path& path, std::string_view key, Kind kind) const {
    const JsonValue* v = doc_.member(object, key);
    if (v == nullptr) fail(object, path_text(path), "missing required key " + quote(std::string(key)));
    if (v->kind != kind)
      expect(*v, key_path(path_text(path), key), kind);  // the path is made only for a message
    return *v;
  }
  template <class Path>
  const JsonValue* optional(const JsonValue& object, const Path& path, std::string_view key,
                            Kind kind) const {
    const JsonValue* v = doc_.member(object, key);
    if (v != nullptr && v->kind != Kind::null && v->kind != kind)
      expect(*v, key_path(path_text(path), key), kind);
    return v != nullptr && v->kind != Kind::null ? v : nullptr;
  }
  // A task's checked core count (a number >= 1, maybe fractional) as millicores.
  static MilliCpu task_millicpu(const JsonValue& v) {
    return static_cast<MilliCpu>(std::llround(v.number * 1000));
  }
  std::int64_t count(const JsonValue& v, const std::string& path, std::int64_t min) const {
    expect(v, path, Kind::number);
    if (!v.integer || v.number < static_cast<double>(min) || v.number > kMaxCount)
      fail(v, path,
           "expected an integer from " + std::to_string(min) + " to 1e15, got " +
               std::string(doc_.number_text(v)));
    return static_cast<std::int64_t>(v.number);
  }
  // A list of strings (task or file ids), checked; its text stays in the document, and the path
  // (made by `path`) is made only for a message.
  template <class Path>
  void check_strings(const JsonValue* list, const Path& path) const {
    if (list == nullptr) return;
    for (std::uint32_t i = 0; i < list->count; ++i) {
      const JsonValue& s = doc_.item(*list, i);
      if (s.kind != Kind::string) expect(s, index_path(path(), i), Kind::string);
    }
  }

  // An instance without tasks is refused, whatever else it has: a scenario's pipeline has a step at least.
  void expect_tasks(const JsonValue& tasks, const char* path) const {
    if (tasks.count == 0) fail(tasks, path, "must not be empty (a workflow needs at least one task)");
    // Each task is a step, and a pipeline has at most kMaxSteps: said here, before the tasks are read (the
    // loader said it at the 100,001st step of the document built from them, after 17 s and 3.8 GB on
    // 200,000 tasks).
    if (tasks.count > detail::kMaxSteps)
      fail(tasks, path,
           "has " + std::to_string(tasks.count) +
               " tasks: shardflow makes a step of each task, and a pipeline has at most " +
               std::to_string(detail::kMaxSteps) + " steps");
  }

  void read_v15(const JsonValue& workflow) {
    const JsonValue& spec = require(workflow, "workflow", "specification", Kind::object);
    const JsonValue& tasks = require(spec, "workflow.specification", "tasks", Kind::array);
    expect_tasks(tasks, "workflow.specification.tasks");
    std::unordered_map<std::string_view, std::int64_t> sizes;
    if (const JsonValue* files = optional(spec, "workflow.specification", "files", Kind::array)) {
      sizes.reserve(files->count);
      for (std::uint32_t i = 0; i < files->count; ++i) {
        const JsonValue& f = doc_.item(*files, i);
        const JsonValue* id = doc_.member(f, "id");
        const JsonValue* size = doc_.member(f, "sizeInBytes");
        if (f.kind != Kind::object || id == nullptr || id->kind != Kind::string ||
            (size != nullptr && (size->kind != Kind::number || !size->integer || size->number < 0 ||
                                 size->number > kMaxCount))) {  // the message, with the path made now
          const std::string path = index_path("workflow.specification.files", i);
          expect(f, path, Kind::object);
          (void)require(f, path, "id", Kind::string);
          (void)count(*size, key_path(path, "sizeInBytes"), 0);
        }
        sizes[doc_.text(*id)] = size == nullptr ? 0 : static_cast<std::int64_t>(size->number);
      }
    }
    for (std::uint32_t i = 0; i < tasks.count; ++i) {
      Task t;
      t.path = {"workflow.specification.tasks", i};
      const JsonValue& o = doc_.item(tasks, i);
      expect(o, t.path, Kind::object);
      t.where = &o;
      t.id_value = &require(o, t.path, "id", Kind::string);
      t.id = doc_.text(*t.id_value);
      t.parents_value = optional(o, t.path, "parents", Kind::array);
      check_strings(t.parents_value, [&] { return key_path(path_text(t.path), "parents"); });
      t.children_value = optional(o, t.path, "children", Kind::array);
      check_strings(t.children_value, [&] { return key_path(path_text(t.path), "children"); });
      const auto sum = [&](std::string_view key, std::uint64_t& total) {
        const auto p = [&] { return key_path(path_text(t.path), key); };
        const JsonValue* list = optional(o, t.path, key, Kind::array);
        check_strings(list, p);
        for (std::uint32_t j = 0; list != nullptr && j < list->count; ++j) {
          const JsonValue& v = doc_.item(*list, j);
          const std::string_view id = doc_.text(v);
          const auto it = sizes.find(id);
          if (it == sizes.end())
            fail(v, p(), "unknown file " + quote(std::string(id)) + " (not in workflow.specification.files)");
          total += static_cast<std::uint64_t>(it->second);
          if (total > kMaxBytes) fail(v, p(), "the files' sizes add up to more than 2^62 bytes");
        }
      };
      sum("inputFiles", t.input_bytes);
      sum("outputFiles", t.output_bytes);
      tasks_.push_back(std::move(t));
    }
    const JsonValue* exec = optional(workflow, "workflow", "execution", Kind::object);
    if (exec == nullptr)
      fail(workflow, "workflow",
           "missing key \"execution\": shardflow needs the recorded runtimes "
           "(execution.tasks[].runtimeInSeconds)");
    const JsonValue& etasks = require(*exec, "workflow.execution", "tasks", Kind::array);
    std::unordered_map<std::string_view, std::size_t> by_id;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
      if (!by_id.emplace(tasks_[i].id, i).second)
        fail(*tasks_[i].id_value, key_path(path_text(tasks_[i].path), "id"),
             "task id " + quote(std::string(tasks_[i].id)) + " is used twice");
    for (std::uint32_t i = 0; i < etasks.count; ++i) {
      const IndexPath path{"workflow.execution.tasks", i};
      const JsonValue& o = doc_.item(etasks, i);
      expect(o, path, Kind::object);
      const JsonValue& id = require(o, path, "id", Kind::string);
      const auto it = by_id.find(doc_.text(id));
      if (it == by_id.end())
        fail(id, key_path(path_text(path), "id"),
             "unknown task " + quote(std::string(doc_.text(id))) + " (not in workflow.specification.tasks)");
      Task& t = tasks_[it->second];
      if (t.runtime != nullptr)
        fail(id, key_path(path_text(path), "id"),
             "task " + quote(std::string(doc_.text(id))) + " is listed twice");
      t.exec_index = i;
      t.runtime = &require(o, path, "runtimeInSeconds", Kind::number);
      t.cores = optional(o, path, "coreCount", Kind::number);
    }
    for (const Task& t : tasks_)
      if (t.runtime == nullptr)
        fail(*t.id_value, key_path(path_text(t.path), "id"),
             "task " + quote(std::string(t.id)) +
                 " has no entry in workflow.execution.tasks (its runtimeInSeconds)");
    read_timestamp(*exec, "workflow.execution");
    if (const JsonValue* m = doc_.member(*exec, "makespanInSeconds"); m != nullptr && m->kind == Kind::number)
      makespan_ = m->number;
    machines_at_ = exec;
    machines_path_ = "workflow.execution";
    if (const JsonValue* ms = optional(*exec, "workflow.execution", "machines", Kind::array)) {
      machines_at_ = ms;
      machines_path_ = "workflow.execution.machines";
      read_machines(*ms, "workflow.execution.machines", "coreCount", "speedInMHz");
    }
  }

  void read_v14(const JsonValue& workflow) {
    const JsonValue& tasks = require(workflow, "workflow", "tasks", Kind::array);
    expect_tasks(tasks, "workflow.tasks");
    for (std::uint32_t i = 0; i < tasks.count; ++i) {
      Task t;
      t.path = {"workflow.tasks", i};
      const JsonValue& o = doc_.item(tasks, i);
      expect(o, t.path, Kind::object);
      t.where = &o;
      // 1.4 names a task by `name` (`id` is optional); parents refer to that.
      t.id_value = doc_.member(o, "id") != nullptr ? &require(o, t.path, "id", Kind::string)
                                                   : &require(o, t.path, "name", Kind::string);
      t.id = doc_.text(*t.id_value);
      if (const JsonValue* name = doc_.member(o, "name"); name != nullptr && name->kind == Kind::string)
        t.name = doc_.text(*name);
      if (const JsonValue* name = doc_.member(o, "name"); name != nullptr && name->kind == Kind::string)
        t.name = doc_.text(*name);
      t.parents_value = optional(o, t.path, "parents", Kind::array);
      check_strings(t.parents_value, [&] { return key_path(path_text(t.path), "parents"); });
      t.children_value = optional(o, t.path, "children", Kind::array);
      check_strings(t.children_value, [&] { return key_path(path_text(t.path), "children"); });
      if (const JsonValue* files = optional(o, t.path, "files", Kind::array)) {
        for (std::uint32_t j = 0; j < files->count; ++j) {
          const std::string p = index_path(key_path(path_text(t.path), "files"), j);
          const JsonValue& f = doc_.item(*files, j);
          expect(f, p, Kind::object);
          const std::int64_t size =
              count(require(f, p, "sizeInBytes", Kind::number), key_path(p, "sizeInBytes"), 0);
          const JsonValue& link = require(f, p, "link", Kind::string);
          if (std::string(doc_.text(link)) == "input")
            t.input_bytes += static_cast<std::uint64_t>(size);
          else if (std::string(doc_.text(link)) == "output")
            t.output_bytes += static_cast<std::uint64_t>(size);
          else
            fail(link, key_path(p, "link"),
                 "expected \"input\" or \"output\", got " + quote(std::string(doc_.text(link))));
          if (t.input_bytes > kMaxBytes || t.output_bytes > kMaxBytes)
            fail(f, p, "the files' sizes add up to more than 2^62 bytes");
        }
      }
      t.runtime = &require(o, t.path, "runtimeInSeconds", Kind::number);
      t.cores = optional(o, t.path, "cores", Kind::number);
      tasks_.push_back(std::move(t));
    }
    read_timestamp(workflow, "workflow");
    if (const JsonValue* m = doc_.member(workflow, "makespanInSeconds");
        m != nullptr && m->kind == Kind::number)
      makespan_ = m->number;
    machines_at_ = &workflow;
    machines_path_ = "workflow";
    if (const JsonValue* ms = optional(workflow, "workflow", "machines", Kind::array)) {
      machines_at_ = ms;
      machines_path_ = "workflow.machines";
      read_machines(*ms, "workflow.machines", "count", "speed");
    }
  }

  void read_timestamp(const JsonValue& object, const std::string& path) {
    const JsonValue* v = optional(object, path, "executedAt", Kind::string);
    if (v == nullptr) return;
    auto t = normalize_wfcommons_timestamp(std::string(doc_.text(*v)));
    if (!t)
      fail(*v, key_path(path, "executedAt"),
           "unrecognized timestamp " + quote(std::string(doc_.text(*v))) +
               " (expected a form such as 2020-12-25T20:10:08+00:00, 20200415T183333+0000 or "
               "03-23-21T06:04:36Z)");
    executed_at_ = *t;
  }

  void read_machines(const JsonValue& list, const std::string& path, std::string_view cores_key,
                     std::string_view speed_key) {
    for (std::uint32_t i = 0; i < list.count; ++i) {
      const std::string p = index_path(path, i);
      const JsonValue& o = doc_.item(list, i);
      expect(o, p, Kind::object);
      Machine m;
      m.where = &o;
      m.name = std::string(doc_.text(require(o, p, "nodeName", Kind::string)));
      if (const JsonValue* cpu = optional(o, p, "cpu", Kind::object)) {
        if (const JsonValue* c = doc_.member(*cpu, cores_key)) {
          m.cores = count(*c, key_path(key_path(p, "cpu"), cores_key), 1);
          m.cores_value = c;
        }
        if (const JsonValue* s = doc_.member(*cpu, speed_key))
          m.speed_mhz = count(*s, key_path(key_path(p, "cpu"), speed_key), 1);
      }
      if (const JsonValue* mem = doc_.member(o, "memoryInBytes"))
        m.memory = count(*mem, key_path(p, "memoryInBytes"), 0);
      if (m.cores == 0)
        fail(o, p,
             "missing cpu." + std::string(cores_key) + ": a machine becomes a node with that many CPUs");
      for (const Machine& other : machines_)
        if (other.name == m.name)
          fail(o, key_path(p, "nodeName"), "machine " + quote(m.name) + " is listed twice");
      machines_.push_back(std::move(m));
    }
  }

  // Ids unique, every parent and child a task; runtimes and core counts in range; step names.
  void index_tasks() {
    std::unordered_map<std::string_view, std::size_t> by_id;
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      if (!by_id.emplace(t.id, i).second)
        fail(*t.id_value, key_path(path_text(t.path), "id"),
             "task id " + quote(std::string(t.id)) + " is used twice");
    }
    // Up to 1.4 tasks refer to each other by name, and a task may also have an id that differs (the
    // format's own migration tool resolves a reference as a name first, then as an id): so does this.
    std::unordered_map<std::string_view, std::size_t> by_name;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
      if (!tasks_[i].name.empty()) by_name.emplace(tasks_[i].name, i);
    const char* const known = by_name.empty() ? " (no task has this id)" : " (no task has this name or id)";
    const auto find = [&](std::string_view ref) -> std::size_t {
      if (const auto it = by_name.find(ref); it != by_name.end()) return it->second;
      const auto it = by_id.find(ref);
      return it == by_id.end() ? tasks_.size() : it->second;
    };
    after_.assign(tasks_.size(), {});
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      for (std::uint32_t j = 0; t.parents_value != nullptr && j < t.parents_value->count; ++j) {
        const JsonValue* v = &doc_.item(*t.parents_value, j);
        const std::string_view id = doc_.text(*v);
        const std::size_t p = find(id);
        if (p == tasks_.size())
          fail(*v, index_path(key_path(path_text(t.path), "parents"), j),
               "unknown parent task " + quote(std::string(id)) + known);
        add_edge(p, i, v);
      }
      for (std::uint32_t j = 0; t.children_value != nullptr && j < t.children_value->count; ++j) {
        const JsonValue* v = &doc_.item(*t.children_value, j);
        const std::string_view id = doc_.text(*v);
        const std::size_t c = find(id);
        if (c == tasks_.size())
          fail(*v, index_path(key_path(path_text(t.path), "children"), j),
               "unknown child task " + quote(std::string(id)) + known);
        add_edge(i, c, v);
      }
      const double r = t.runtime->number;
      if (!(r >= 0) || r > 315360000.0)
        fail(*t.runtime, key_path(t.exec_path(), "runtimeInSeconds"),
             "must be >= 0 (and at most 315360000 s, ten years: the simulator's horizon), got " +
                 format_seconds(r));
      // A task's core count may be fractional (the schemas: a number, at least 1): millicores.
      if (t.cores != nullptr &&
          !(t.cores->kind == Kind::number && t.cores->number >= 1 && t.cores->number <= kMaxCount)) {
        const std::string path = key_path(t.exec_path(), t.exec_index < 0 ? "cores" : "coreCount");
        expect(*t.cores, path, Kind::number);
        fail(*t.cores, path,
             "expected a number of cores from 1 to 1e15 (fractions allowed), got " +
                 std::string(doc_.number_text(*t.cores)));
      }
    }
    // Step names: letters, digits, '-' and '_'; other characters become '_'. Two ids that become one
    // name are an error.
    std::unordered_map<std::string, std::size_t> names;
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      std::string n(tasks_[i].id);
      for (char& c : n)
        if (!valid_step_char(c)) c = '_';
      if (n.empty())
        fail(*tasks_[i].id_value, key_path(path_text(tasks_[i].path), "id"), "must not be empty");
      if (const auto [it, fresh] = names.emplace(n, i); !fresh)
        fail(*tasks_[i].id_value, key_path(path_text(tasks_[i].path), "id"),
             "task ids " + quote(std::string(tasks_[it->second].id)) + " and " +
                 quote(std::string(tasks_[i].id)) + " both become step name " + quote(n) +
                 " (only ASCII letters, digits, '-' and '_' are kept)");
      step_names_.push_back(std::move(n));
    }
  }

  // An edge from a parent to a child, once, noted with the JSON value that first gave it. Known edges are
  // looked up in a hash set: a search of the child's parents made a join of 50,000 tasks quadratic.
  void add_edge(std::size_t parent, std::size_t child, const JsonValue* v) {
    if (!edges_.insert(static_cast<std::uint64_t>(parent) << 32 | child).second) return;
    after_[child].emplace_back(parent, v);
  }

  // ---- the scenario document ---------------------------------------------------------------------------
  // Nodes are made through the pool, whose memory the document shares (see core/kfp_import.cpp's fresh()).
  Node fresh(YAML::NodeType::value type) {
    Node n(type);
    pool_.push_back(n);
    return n;
  }
  Node scalar(const std::string& text) {
    Node n(text);
    pool_.push_back(n);
    return n;
  }
  void note(const Node& made, const JsonValue& from) { origins_.emplace_back(made, doc_.where(from)); }
  void note(const Node& made, const SourceLocation& where) { origins_.emplace_back(made, where); }
  // Every node of a --cluster file's tree at its own place in that file (the loader would otherwise
  // name the instance). Bounded: aliases can make a tree deep or a cycle.
  void note_marks(const Node& n, const std::string& file, int depth) {
    if (depth > detail::kMaxItemDepth || origins_.size() > detail::kMaxItemValues)
      throw InputError(SourceLocation{file, 0, 0}, "--cluster",
                       "the cluster file nests too deeply or is too large");
    const YAML::Mark m = n.Mark();
    note(n, m.is_null() || m.line < 0 ? SourceLocation{file, 0, 0}
                                      : SourceLocation{file, m.line + 1, detail::mark_column(m, file)});
    if (n.IsMap())
      for (auto it = n.begin(); it != n.end(); ++it) {
        note_marks(it->first, file, depth + 1);
        note_marks(it->second, file, depth + 1);
      }
    else if (n.IsSequence())
      for (auto it = n.begin(); it != n.end(); ++it) note_marks(*it, file, depth + 1);
  }

  // The scenario's name and description, from the instance.
  void name_and_description(std::string& name, std::string& description) const {
    name.clear();  // the direct route's is the template's
    if (const JsonValue* n = doc_.member(doc_.root(), "name"); n != nullptr && n->kind == Kind::string)
      name = std::string(doc_.text(*n));
    if (name.empty()) name = std::filesystem::path(file_).stem().string();
    if (name.empty()) name = "wfcommons";
    description = "WfCommons instance (WfFormat " + version_ + ")";
    if (makespan_ >= 0) description += "; recorded makespan " + format_seconds(makespan_) + " s";
    if (!executed_at_.empty()) description += ", executed at " + executed_at_;
  }

  // The steps as the loader would read them from the scenario document, built directly: the parts the
  // loader fills in (every default) come from the loader itself, reading a one-step, one-pool document of
  // the same shape (template_scenario); tests/core/wfcommons_import_test.cpp checks that the routes
  // that use them give the scenario the document gives. Step names are valid and unique and parents
  // resolved (above); the cycle and fit checks are the caller's.
  [[nodiscard]] std::vector<Step> direct_steps() const {
    const Scenario& s = template_scenario();
    const Step& plain = s.pipeline.steps[0];
    const Step& with_data = s.pipeline.steps[1];
    std::vector<Step> steps;
    steps.reserve(tasks_.size());
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      Step st = t.input_bytes > 0 || t.output_bytes > 0 ? with_data : plain;
      st.name = step_names_[i];
      st.where = doc_.where(*t.where);
      st.after.clear();
      st.deps.clear();
      for (const auto& [p, _] : after_[i]) {
        st.after.push_back(step_names_[p]);
        st.deps.push_back(static_cast<StepIndex>(p));
      }
      Component& c = st.component;
      c.duration.base = Duration::from_ns(std::llround(t.runtime->number * 1e9));
      if (t.cores != nullptr) c.resources.cpu = task_millicpu(*t.cores);
      if (t.input_bytes > 0 || t.output_bytes > 0) {
        c.input = plain.component.input;
        c.output = plain.component.output;
        if (t.input_bytes > 0)
          c.input = with_data.component.input, c.input.dist.a = static_cast<double>(t.input_bytes);
        if (t.output_bytes > 0)
          c.output = with_data.component.output, c.output.dist.a = static_cast<double>(t.output_bytes);
      }
      steps.push_back(std::move(st));
    }
    return steps;
  }

  // The scenario without the scenario document, when nothing changes it (no overlay, --set or --cluster)
  // and the loader would accept it: the steps above, a pool per machine from the template's pool, then
  // the loader's own checks on the built model (no cycle, every task fits a machine). Any input the
  // loader would reject goes through it, so its errors read the same either way.
  std::optional<Scenario> direct() const {
    if (!options_.overlays.empty() || !options_.sets.empty() || !options_.cluster.empty() ||
        machines_.empty() || tasks_.size() > detail::kMaxSteps || via_document_)
      return std::nullopt;
    for (const Machine& m : machines_)
      if (m.name.empty()) return std::nullopt;

    Scenario s = template_scenario();
    s.file = file_;
    const NodePool pool = s.cluster.node_pools[0];
    name_and_description(s.name, s.description);
    s.pipeline.name = s.name;
    s.pipeline.steps = direct_steps();
    s.cluster.node_pools.clear();
    for (const Machine& m : machines_) {
      NodePool p = pool;
      p.name = m.name;
      p.where = doc_.where(*m.where);
      p.cpu = static_cast<MilliCpu>(m.cores) * 1000;
      p.memory = m.memory;
      if (m.speed_mhz > 0) p.labels["wfcommons.org/speed-mhz"] = std::to_string(m.speed_mhz);
      s.cluster.node_pools.push_back(std::move(p));
    }
    // The loader's checks on the model (core/validate.cpp): no dependency cycle, every task fits a
    // machine. The first problem sends the instance through the loader, which reports it.
    if (detail::find_cycle(s.pipeline.steps)) return std::nullopt;
    for (const Step& st : s.pipeline.steps)
      if (detail::fit_problem(s.cluster, st)) return std::nullopt;
    try {
      detail::check_pod_names(s.pipeline);  // two tasks whose pods would share names (ids a-b and a_b)
    } catch (const InputError&) {
      return std::nullopt;
    }
    // And the task limit (--max-tasks), which the document route reports at its place.
    if (Plan::count_tasks(s.pipeline) > options_.max_tasks) return std::nullopt;
    return s;
  }

  // With an overlay, --set or --cluster that leave the pipeline alone (the usual: a cluster's counts,
  // shapes, scheduler or overheads): the scenario document without its pipeline (name, cluster,
  // overheads) read by the loader with them, and the steps built directly. On 50,000 tasks this is what
  // the route without them costs, where the whole document took six times the time and five times the
  // memory. Anything else (an overlay or --set that gives the pipeline, a step that fits no node pool,
  // any error) goes through the whole document, which reports it at its place.
  std::optional<Scenario> with_direct_steps() {
    if (tasks_.size() > detail::kMaxSteps || via_document_) return std::nullopt;
    std::vector<Step> steps = direct_steps();
    if (detail::find_cycle(steps)) return std::nullopt;
    const std::size_t origins = origins_.size();
    Node doc = head_document();
    std::vector<detail::ParsedOverlay> overlays;
    for (const ScenarioFile& f : options_.overlays) overlays.push_back(detail::parse_overlay(f));
    LoadOptions o = options_;
    if (o.cluster != "local") o.cluster.clear();  // a file's cluster is in `doc` already
    auto s = detail::read_scenario_document_with_steps({doc, origins_, true}, file_, overlays, o,
                                                       std::move(steps));
    origins_.resize(origins);  // the whole document's route notes its own nodes
    return s;
  }

  // The scenario document's name, description, overheads and cluster.
  Node head_document() {
    Node doc = fresh(YAML::NodeType::Map);
    note(doc, doc_.root());
    std::string name, description;
    name_and_description(name, description);
    doc["name"] = scalar(name);
    doc["description"] = scalar(description);
    add_cluster(doc);
    return doc;
  }

  Scenario build() {
    if (auto s = direct()) return std::move(*s);
    route_ = WfRoute::direct_steps;
    if (auto s = with_direct_steps()) return std::move(*s);
    route_ = WfRoute::document;
    Node doc = head_document();

    Node pipeline = fresh(YAML::NodeType::Map);
    note(pipeline, doc_.root());
    Node steps = fresh(YAML::NodeType::Sequence);
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      Node step = fresh(YAML::NodeType::Map);
      note(step, *t.where);
      Node n = scalar(step_names_[i]);
      note(n, *t.id_value);
      step["name"] = n;
      if (!after_[i].empty()) {
        Node after = fresh(YAML::NodeType::Sequence);
        note(after, t.parents_value != nullptr ? *t.parents_value : *t.where);
        for (const auto& [p, v] : after_[i]) {
          Node e = scalar(step_names_[p]);
          note(e, *v);
          after.push_back(e);
        }
        step["after"] = after;
      }
      Node duration = fresh(YAML::NodeType::Map);
      // Integer nanoseconds: the loader's durations are, and "%.9g" seconds could round a long runtime.
      Node base = scalar(std::to_string(std::llround(t.runtime->number * 1e9)) + "ns");
      note(duration, *t.runtime);
      note(base, *t.runtime);
      duration["base"] = base;
      step["duration"] = duration;
      {  // always given, so that a --set inside it is reported at the task
        Node resources = fresh(YAML::NodeType::Map);
        Node cpu = scalar(t.cores != nullptr ? std::to_string(task_millicpu(*t.cores)) + "m" : "1");
        note(resources, t.cores != nullptr ? *t.cores : *t.where);
        note(cpu, t.cores != nullptr ? *t.cores : *t.where);
        resources["cpu"] = cpu;
        step["resources"] = resources;
      }
      const auto size = [&](std::uint64_t bytes) {
        Node m = fresh(YAML::NodeType::Map);
        Node s = scalar(std::to_string(bytes));
        note(m, *t.where);
        note(s, *t.where);
        m["size"] = s;
        return m;
      };
      if (t.input_bytes > 0) step["input"] = size(t.input_bytes);
      if (t.output_bytes > 0) step["output"] = size(t.output_bytes);
      steps.push_back(step);
    }
    pipeline["steps"] = steps;
    note(steps, doc_.root());
    doc["pipeline"] = pipeline;

    std::vector<detail::ParsedOverlay> overlays;
    for (const ScenarioFile& f : options_.overlays) overlays.push_back(detail::parse_overlay(f));
    LoadOptions o = options_;
    if (o.cluster != "local") o.cluster.clear();  // a file's cluster is in `doc` already
    return detail::read_scenario_document({doc, std::move(origins_), true}, file_, overlays, o);
  }

  void add_cluster(Node& doc) {
    // The scheduler and overheads of a workflow simulator: list scheduling, nothing else. An overlay or
    // --set changes them; `--cluster local` replaces them with this machine.
    Node overheads = scalar("none");
    note(overheads, doc_.root());
    doc["overheads"] = overheads;
    if (!options_.cluster.empty() && options_.cluster != "local") {
      const std::string& path = options_.cluster;
      const std::string text = read_scenario_file(path);
      detail::check_utf8_text(text, path);
      const Node c = detail::parse_yaml_document(text, path);
      if (!c.IsMap() || !c["cluster"])
        throw InputError(
            SourceLocation{path, 1, 1}, "--cluster",
            "expected `local` or a YAML file with a `cluster:` mapping (a scenario file will do)");
      note_marks(c["cluster"], path, 0);
      doc["cluster"] = c["cluster"];
      if (c["overheads"]) {
        note_marks(c["overheads"], path, 0);
        doc["overheads"] = c["overheads"];
      }
      return;
    }
    if (options_.cluster == "local") return;
    if (machines_.empty())
      throw InputError(
          doc_.where(machines_at_ != nullptr ? *machines_at_ : doc_.root()), machines_path_,
          "the instance lists no machines (execution.machines): give a cluster with --cluster FILE "
          "or --cluster local");
    Node cluster = fresh(YAML::NodeType::Map);
    note(cluster, doc_.root());
    Node pools = fresh(YAML::NodeType::Sequence);
    note(pools, doc_.root());
    for (const Machine& m : machines_) {
      Node p = fresh(YAML::NodeType::Map);
      note(p, *m.where);
      const auto put = [&](const char* key, const std::string& value, const JsonValue& from) {
        Node v = scalar(value);
        note(v, from);
        p[key] = v;
      };
      put("name", m.name, *m.where);
      put("cpu", std::to_string(m.cores), *m.cores_value);
      put("memory", std::to_string(m.memory), *m.where);
      put("count", "1", *m.where);
      put("max_pods", "1000000", *m.where);
      if (m.speed_mhz > 0) {
        Node labels = fresh(YAML::NodeType::Map);
        note(labels, *m.where);
        Node v = scalar(std::to_string(m.speed_mhz));
        note(v, *m.where);
        labels["wfcommons.org/speed-mhz"] = v;
        p["labels"] = labels;
      }
      pools.push_back(p);
    }
    cluster["node_pools"] = pools;
    Node scheduler = fresh(YAML::NodeType::Map);
    note(scheduler, doc_.root());
    for (const auto& [k, v] : {std::pair{"policy", "list"}, std::pair{"decisions_per_second", "0"},
                               std::pair{"bind_latency", "0s"}, std::pair{"initial_backoff", "0s"},
                               std::pair{"max_backoff", "0s"}}) {
      Node n = scalar(v);
      note(n, doc_.root());
      scheduler[k] = n;
    }
    cluster["scheduler"] = scheduler;
    doc["cluster"] = cluster;
  }

  JsonDocument doc_;
  std::string file_;
  const LoadOptions& options_;
  bool via_document_ = false;
  WfRoute route_ = WfRoute::direct;
  std::string version_;
  std::vector<Task> tasks_;
  std::vector<Machine> machines_;
  std::vector<std::string> step_names_;
  // Where the machines are (their list, or the object that lacks one), for the error when there are none.
  const JsonValue* machines_at_ = nullptr;
  std::string machines_path_ = "workflow";
  std::vector<std::vector<std::pair<std::size_t, const JsonValue*>>> after_;  // per task: parents
  std::unordered_set<std::uint64_t> edges_;  // every edge of after_: parent << 32 | child (tasks < 2^32)
  double makespan_ = -1;
  std::string executed_at_;
  Node pool_{YAML::NodeType::Sequence};
  std::vector<std::pair<Node, SourceLocation>> origins_;
};

// ---- timestamps -------------------------------------------------------------------------------------
bool digits(std::string_view s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, int& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0));
}

}  // namespace

std::optional<std::string> normalize_wfcommons_timestamp(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  std::size_t at = 0;
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' && s[10] == 'T') {  // 2020-12-25T20:10:08
    if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
        s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec))
      return std::nullopt;
    at = 19;
  } else if (s.size() >= 15 && s[8] == 'T' && s[2] != '-') {  // 20200415T183333
    if (!digits(s, 0, 4, y) || !digits(s, 4, 2, mo) || !digits(s, 6, 2, d) || !digits(s, 9, 2, h) ||
        !digits(s, 11, 2, mi) || !digits(s, 13, 2, sec))
      return std::nullopt;
    at = 15;
  } else if (s.size() >= 17 && s[2] == '-' && s[5] == '-' && s[8] == 'T') {  // 03-23-21T06:04:36
    if (!digits(s, 0, 2, mo) || !digits(s, 3, 2, d) || !digits(s, 6, 2, y) || !digits(s, 9, 2, h) ||
        s[11] != ':' || !digits(s, 12, 2, mi) || s[14] != ':' || !digits(s, 15, 2, sec))
      return std::nullopt;
    y += 2000;
    at = 17;
  } else {
    return std::nullopt;
  }
  if (at < s.size() && s[at] == '.') {  // fractional seconds: kept out of the normalized form
    ++at;
    const std::size_t from = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == from) return std::nullopt;
  }
  int offset_min = 0;
  const std::string_view zone = s.substr(at);
  if (zone == "Z" || zone.empty()) {
    offset_min = 0;
  } else if (zone[0] == '+' || zone[0] == '-') {
    int oh = 0, om = 0;
    if (zone.size() == 6 && zone[3] == ':' && digits(zone, 1, 2, oh) && digits(zone, 4, 2, om)) {
    } else if (zone.size() == 5 && digits(zone, 1, 2, oh) && digits(zone, 3, 2, om)) {
    } else {
      return std::nullopt;
    }
    if (oh > 23 || om > 59) return std::nullopt;
    offset_min = (zone[0] == '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return std::nullopt;
  std::int64_t t = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                   h * 3600 + mi * 60 + sec - offset_min * 60;
  const std::int64_t days = (t >= 0 ? t : t - 86399) / 86400;
  std::int64_t rest = t - days * 86400;
  civil_from_days(days, y, mo, d);
  char buf[64];  // GCC -O3 bounds the output at 51 bytes (every %d as wide as an int)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, static_cast<int>(rest / 3600),
                static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
  return std::string(buf);
}

bool looks_like_wfcommons(std::string_view text) {
  std::size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  if (i >= text.size() || text[i] != '{') return false;
  // Whether `name` (in quotes, then a colon) is a key of the text, in any case if `any_case`.
  const auto has_key = [&](std::string_view name, bool any_case) {
    const auto same = [&](std::size_t at) {
      for (std::size_t k = 0; k < name.size(); ++k)
        if (any_case ? std::tolower(static_cast<unsigned char>(text[at + k])) != name[k]
                     : text[at + k] != name[k])
          return false;
      return true;
    };
    for (std::size_t at = text.find('"', i); at != std::string_view::npos; at = text.find('"', at + 1)) {
      if (at + name.size() + 2 > text.size() || text[at + name.size() + 1] != '"' || !same(at + 1)) continue;
      std::size_t j = at + name.size() + 2;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r'))
        ++j;
      if (j < text.size() && text[j] == ':') return true;
    }
    return false;
  };
  // The key "workflow" (in any case: "Workflow" is a WfCommons instance misspelled), or a JSON object with
  // a schemaVersion and none of a PipelineSpec's own keys (a KFP pipeline compiled to JSON has them): its
  // `workflow` is missing, which the WfCommons reader says, rather than a PipelineSpec's or a scenario's.
  if (has_key("workflow", true)) return true;
  return has_key("schemaVersion", false) && !has_key("pipelineInfo", false) && !has_key("root", false) &&
         !has_key("deploymentSpec", false) && !has_key("components", false);
}

Scenario import_wfcommons(std::string_view text, const std::string& file, const LoadOptions& options,
                          bool via_document, WfRoute* route) {
  if (!options.params.empty())
    throw InputError({}, "--param",
                     "a compiled Kubeflow pipeline's parameter; " + file +
                         " is a WfCommons instance, which has none: change its fields with --set");
  Importer importer(text, file, options, via_document);
  Scenario s = importer.run();
  if (route != nullptr) *route = importer.route();
  return s;
}

}  // namespace shardflow
