#include "overrides.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <shardflow/core/machine.hpp>
#include <shardflow/core/text.hpp>

namespace shardflow::detail {

// How large an overlay or a --set value may be, counting what aliases repeat, and how deep it may nest.
constexpr int kMaxOverlayDepth = 64;
constexpr std::size_t kMaxOverlayValues = 100'000;

namespace {

using YAML::Node;

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

}  // namespace

std::vector<PathPart> parse_override_path(std::string_view path, const SourceLocation& where) {
  std::vector<PathPart> parts;
  std::size_t i = 0;
  const auto bad = [&](const std::string& why) -> InputError { return InputError(where, "", why); };
  while (i < path.size()) {
    if (path[i] == '"') {  // a key in double quotes may hold dots and brackets: labels."kubernetes.io/arch"
      const std::size_t close = path.find('"', i + 1);
      if (close == std::string_view::npos) throw bad("a '\"' in the path has no closing '\"'");
      if (close == i + 1) throw bad("an empty key in quotes (\"\") in the path");
      parts.push_back({std::string(path.substr(i + 1, close - i - 1)), ""});
      i = close + 1;
      if (i < path.size() && path[i] != '.' && path[i] != '[')
        throw bad("a quoted key is followed by '.', '[' or '=', not '" + std::string(1, path[i]) + "'");
      if (i < path.size() && path[i] == '.') {
        ++i;
        if (i == path.size()) throw bad("the path ends with '.'");
      }
      continue;
    }
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

namespace {

// The field path as the loader names fields, for messages: cluster.node_pools[1].count
std::string parts_text(const std::vector<PathPart>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (!parts[i].key.empty())
      out += (out.empty() ? "" : ".") + (parts[i].key.find_first_of(".[]") == std::string::npos
                                             ? parts[i].key
                                             : "\"" + parts[i].key + "\"");
    else
      out += "[" + parts[i].selector + "]";
  }
  return out;
}

}  // namespace

// One step of a resolved --set path: a key of a mapping, or (key "") an index of a list.
struct SetStep {
  std::string key;
  std::size_t index = 0;
};

// `n` with what steps[i..] lead to replaced by `value`: a new container for `n` (in the memory of `mem`,
// the document's root) holding n's entries, the one on the path rebuilt the same way, so that no node of
// the scenario is changed (an alias may share it). A key the path makes (n lacks it, or it is empty) gets
// a new mapping below it, placed at the --set (`where`) as everything the --set brings.
Node rebuilt_along(const Reader& r, const Node& mem, const Node& n, const std::vector<SetStep>& steps,
                   std::size_t i, const Node& value, const SourceLocation& where) {
  const SetStep& s = steps[i];
  const bool last = i + 1 == steps.size();
  const auto below = [&](const Node& child) -> Node {
    if (last) return value;
    if (child && !child.IsNull()) return rebuilt_along(r, mem, child, steps, i + 1, value, where);
    Node made = rebuilt_along(r, mem, Node(YAML::NodeType::Map), steps, i + 1, value, where);
    r.note_override(made, where);  // what is wrong with the made mapping names the --set
    return made;
  };
  if (!s.key.empty()) {
    Node out = make_node_beside(mem, YAML::NodeType::Map);
    bool found = false;
    if (n.IsMap())
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!found && it->first.IsScalar() && it->first.Scalar() == s.key) {
          found = true;
          const bool made = !last && (!it->second || it->second.IsNull());
          out.force_insert(it->first, below(it->second));
          if (last || made) r.note_override(it->first, where);
        } else {
          out.force_insert(it->first, it->second);
        }
      }
    if (!found) {
      const Node key(s.key);
      out.force_insert(key, below(Node()));
      r.note_override(key, where);
    }
    r.note_override(out, r.at(n));
    return out;
  }
  Node out = make_node_beside(mem, YAML::NodeType::Sequence);
  std::size_t k = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++k) out.push_back(k == s.index ? below(*it) : Node(*it));
  r.note_override(out, r.at(n));
  return out;
}

std::string apply_override(const Reader& r, Node& root, const std::string& text) {
  const SourceLocation where{flag_place("--set", text), 0, 0};
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw InputError(where, "", "expected PATH=VALUE, as in cluster.node_pools[0].count=8");
  const std::vector<PathPart> parts = parse_override_path(std::string_view(text).substr(0, eq), where);
  // What is wrong with the value (its text, or what it puts in the scenario) is placed at the value:
  // the same flag, with the value's column (SourceLocation), so that a caller that knows where the
  // value was written (a variants file, a --vary) can say so; the path's faults stay at column 0.
  const SourceLocation value_where{where.file, 0, static_cast<int>(std::min<std::size_t>(eq + 2, INT_MAX))};
  Node value;
  const std::string value_text = text.substr(eq + 1);
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw InputError(value_where, parts_text(parts, parts.size()), "the value is not valid YAML: " + e.msg);
  }
  // YAML::Load reads the first value and drops what follows it ("{base: 10s} junk", "{a: 1},{b: 2}" read
  // as {base: 10s} and {a: 1}): what the scenario's own parser finds after it is refused.
  try {
    (void)parse_yaml_document(value_text, where.file);
  } catch (const InputError& e) {
    const auto col = static_cast<std::size_t>(std::max(1, e.where().column));
    const std::string rest =
        e.where().line == 1 && col <= value_text.size() ? value_text.substr(col - 1) : "";
    throw InputError(
        value_where, parts_text(parts, parts.size()),
        "the value goes on after its first YAML value" +
            (rest.empty() ? std::string() : " (" + quote(shortened(rest)) + ")") +
            ": a --set gives one value (a list is [A, B]; quote text that has these characters)");
  }
  // Aliases can make a short value huge (10 levels of 10 aliases: 10^10 values, gigabytes once copied
  // into the document); the same limits as an overlay's.
  std::size_t values = 0;
  const std::function<void(const Node&, int)> count = [&](const Node& n, int depth) {
    if (depth > kMaxOverlayDepth || ++values > kMaxOverlayValues)
      throw InputError(value_where, parts_text(parts, parts.size()),
                       "the value is too large (more than " + std::to_string(kMaxOverlayValues) +
                           " values, counting what aliases repeat, or more than " +
                           std::to_string(kMaxOverlayDepth) + " levels)");
    if (n.IsMap())
      for (auto it = n.begin(); it != n.end(); ++it) {
        count(it->first, depth + 1);
        count(it->second, depth + 1);
      }
    else if (n.IsSequence())
      for (auto it = n.begin(); it != n.end(); ++it) count(*it, depth + 1);
  };
  count(value, 0);
  if (!root.IsMap())
    throw InputError(where, "", "the scenario file is not a mapping, so nothing can be set in it");
  // The path is resolved first (every check, nothing changed), then the document is rebuilt along it
  // (rebuilt_along): new containers from the root down to the value, the rest shared. Assigning into the
  // scenario's nodes would change every place an alias shares them (`duration: *dur` in two steps).
  std::vector<SetStep> steps;
  Node cur(root);     // a handle; reset() moves it, `=` would overwrite the node it refers to
  std::string field;  // what is set, every list element by index: one text for every spelling
  // The keys beside the one this --set made (it was not in the scenario), for a did-you-mean.
  std::optional<std::vector<std::string>> made_beside;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PathPart& p = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = parts_text(parts, i + 1);
    if (!p.key.empty()) {
      if (cur.IsSequence()) {
        // A list element is selected with [name] or [index]; a dotted key is the likely slip.
        const std::string list = parts_text(parts, i);
        const bool index = p.key.find_first_not_of("0123456789") == std::string::npos;
        throw InputError(where, list,
                         "is a list: select an element by name or index, as " + list + "[" + p.key + "]" +
                             (index ? "" : " or " + list + "[0]"));
      }
      if (!cur.IsMap())
        throw InputError(where, parts_text(parts, i), "is not a mapping: it has no key " + quote(p.key));
      steps.push_back({p.key, 0});
      if (!last && (!cur[p.key] || cur[p.key].IsNull())) {
        std::vector<std::string> beside;
        for (auto it = cur.begin(); it != cur.end(); ++it)
          if (it->first.IsScalar() && it->first.Scalar() != p.key) beside.push_back(it->first.Scalar());
        made_beside = std::move(beside);
        cur.reset(Node(YAML::NodeType::Map));  // made, as a file would have it (rebuilt_along makes it)
      } else if (!last) {
        cur.reset(cur[p.key]);
      }
      field += (field.empty() ? "" : ".") + p.key;
      if (i + 1 < parts.size() && !parts[i + 1].key.empty()) made_beside.reset();  // only the last made
      continue;
    }
    if (!cur.IsSequence() && made_beside && i > 0 && !parts[i - 1].key.empty()) {
      // `cluster.node_pool[cpu]`: the --set made node_pool, a key the scenario does not have.
      const std::string& key = parts[i - 1].key;
      std::vector<std::string_view> known(made_beside->begin(), made_beside->end());
      // A typo of a key that is there ("node_pool"), or a list the scenario does not give here (a step's
      // `command`, a pool's `taints`): only the keys beside it are known, so no "expected one of" list.
      if (const auto meant = Map::closest_name(key, known))
        throw InputError(where, parts_text(parts, i),
                         Map::unknown_key_message(key, known) + ": the scenario has no such list, so [" +
                             p.selector + "] selects nothing");
      std::string beside;
      for (std::size_t k = 0; k < known.size() && k < 10; ++k)
        beside += (k ? ", " : "") + std::string(known[k]);
      throw InputError(where, parts_text(parts, i),
                       "the scenario has no " + quote(key) + " list here" +
                           (known.empty() ? std::string()
                                          : " (it has " + beside + (known.size() > 10 ? ", ..." : "") + ")") +
                           ", so [" + p.selector + "] selects nothing: set the whole list, as " +
                           parts_text(parts, i) + "=[...]");
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
      constexpr std::size_t kListed = 10;  // a message, not a listing of a pipeline's 50,000 steps
      std::string names;
      std::size_t named = 0;
      std::size_t unnamed = cur.size();  // the first mapping without a name (see below)
      for (std::size_t k = 0; k < cur.size() && index == cur.size(); ++k) {
        const Node e = cur[k];
        const Node name = e.IsMap() ? e["name"] : Node();
        if (name && name.IsScalar()) {
          if (name.Scalar() == p.selector) index = k;
          if (++named <= kListed) names += (names.empty() ? "" : ", ") + shortened(name.Scalar());
        } else if (e.IsMap() && !name && unnamed == cur.size()) {
          unnamed = k;
        }
      }
      if (named > kListed) names += ", and " + with_commas(named - kListed) + " more";
      if (index == cur.size()) {
        // An element an earlier --set (or --vary) replaced by a mapping without a `name` can no longer
        // be selected by name: say which, as the likely cause. Its place is the flag's text; without
        // the flag's name, as a sweep's --vary reaches here as a --set.
        std::string cause;
        if (unnamed < cur.size()) {
          const SourceLocation from = r.at(cur[unnamed]);
          const std::size_t space = from.file.find(' ');
          if (from.line == 0 && from.file.rfind("--", 0) == 0 && space != std::string::npos)
            cause = "; " + parts_text(parts, i) + "[" + std::to_string(unnamed) + "] has no name since " +
                    from.file.substr(space + 1) + " replaced it: give `name: " + p.selector +
                    "` in that value to keep it";
        }
        throw InputError(where, here,
                         "no element named " + quote(p.selector) + " in " + parts_text(parts, i) +
                             (names.empty() ? "" : " (names: " + names + ")") + cause);
      }
    }
    steps.push_back({"", index});
    if (!last) cur.reset(cur[index]);
    field += "[" + std::to_string(index) + "]";
    continue;
  }
  root.reset(rebuilt_along(r, root, root, steps, 0, value, where));
  note_override_tree(r, value, value_where);
  return field;
}

namespace {

// ---- overlays and the local cluster preset: merged into the document before it is read --------------

// An overlay is merged with new container nodes (never by assigning into the scenario's nodes: yaml-cpp's
// `=` rewrites the node a handle refers to, and an alias shares it), so every node keeps its identity and
// so its registered place. They are made in the scenario's memory (make_node_beside), so that putting its
// nodes into them copies nothing.

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

// Whether `path` is a list of steps: the pipeline's, or a group's in it.
bool is_steps_path(std::string_view path) {
  return path == "pipeline.steps" || (path.starts_with("pipeline.steps[") && path.ends_with("].steps"));
}

// `over` merged over `base`: mappings key by key (deeply unless `deep` is false: then a key's value is
// replaced), lists of named mappings element by element, anything else replaced. New containers take
// the place of the base's. With `fixed_steps` (an imported pipeline), an element of a list of steps whose
// name the base lacks is an error rather than a new step. `warn` (optional) hears of an element appended
// whose name is close to one the list has (a misspelling that adds a step instead of changing one).
using Warn = std::function<void(const std::string&)>;
Node merge(const Reader& r, const Node& base, const Node& over, const std::string& path, int depth,
           bool deep = true, bool fixed_steps = false, const Warn* warn = nullptr) {
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
          r.fail(k, key_path(path, name), duplicate_key_message(name, r.at(dup->second).line));
        if (const auto f = first.find(name); f != first.end()) {
          const std::size_t i = f->second;
          values[i].reset(
              deep ? merge(r, values[i], it->second, key_path(path, name), depth + 1, true, fixed_steps, warn)
                   : Node(it->second));
          continue;
        }
      }
      keys.push_back(k);  // a key the scenario lacks (or not a plain name: reading reports that)
      values.push_back(it->second);
    }
    Node out = make_node_beside(base, YAML::NodeType::Map);
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
    std::size_t j = 0;
    std::map<std::string, Node, std::less<>> given;  // the overlay's elements by name, the first of each
    for (auto it = over.begin(); it != over.end(); ++it, ++j) {
      const std::string name = *element_name(*it);
      const Node element = *it;
      // Twice in one overlay list: which one was meant to win is not the overlay's to say by order.
      if (const auto [dup, added] = given.emplace(name, element["name"]); !added)
        r.fail(element["name"], index_path(path, j) + ".name",
               "the name " + quote(name) + " is given twice in this list" + first_at(r.at(dup->second).line) +
                   ": an overlay changes the element of a name, so give each name once");
      if (const auto f = by_name.find(name); f != by_name.end()) {
        elements[f->second].reset(merge(r, elements[f->second], *it, index_path(path, f->second), depth + 1,
                                        true, fixed_steps, warn));
      } else if (fixed_steps && is_steps_path(path)) {
        // Its steps in the pipeline's order; an instance of hundreds is named by its first ten.
        std::vector<std::pair<std::size_t, std::string_view>> order;
        for (const auto& [n, i] : by_name) order.emplace_back(i, n);
        std::sort(order.begin(), order.end());
        std::vector<std::string_view> names;
        for (const auto& [i, n] : order) names.push_back(n);
        const auto meant = closest_name(name, names);
        r.fail(element["name"], index_path(path, j) + ".name",
               "the imported pipeline has no step " + quote(name) + " here (" +
                   (meant ? "did you mean \"" + std::string(*meant) + "\"? " : std::string()) +
                   "its steps here: " +
                   listed(names.size(), [&](std::size_t k) { return std::string(names[k]); }) +
                   "); an overlay changes an imported pipeline's steps by name and adds none");
      } else {
        if (warn != nullptr && *warn) {
          std::vector<std::string_view> names;
          for (const auto& [n, i] : by_name) names.push_back(n);
          if (const auto meant = closest_name(name, names))
            (*warn)(r.at(element["name"]).str() + ": warning: " + path + ": no element is named " +
                    quote(name) + " (did you mean \"" + std::string(*meant) +
                    "\"?): it is added as a new one");
        }
        elements.push_back(*it);
      }
    }
    Node out = make_node_beside(base, YAML::NodeType::Sequence);
    for (const Node& e : elements) out.push_back(e);
    r.note_override(out, r.at(base));
    return out;
  }
  return over;
}

}  // namespace

void apply_overlay(const Reader& r, Node& root, const ParsedOverlay& overlay, bool imported,
                   const std::function<void(const std::string&)>& warn) {
  const Node& o = overlay.root;
  std::size_t count = 0;
  note_overlay_tree(r, o, overlay.path, o.Mark(), 0, count);
  if (root.IsMap())  // else reading the scenario reports its own error
    root.reset(merge(r, root, o, "", 0, true, imported, &warn));
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

ParsedOverlay parse_overlay(const ScenarioFile& overlay) {
  check_utf8_text(overlay.text, overlay.path);
  if (const std::optional<std::string> lf = lone_cr_as_lf(overlay.text))
    return parse_overlay({overlay.path, *lf});
  ParsedOverlay p{overlay.path, parse_document(overlay.text, overlay.path)};
  check_quotes_closed(overlay.text, overlay.path);
  const Node& o = p.root;
  if (!o.IsDefined() || o.IsNull())
    throw InputError(SourceLocation{overlay.path, 1, 1}, "",
                     "the overlay is empty; expected a mapping of what to change, as in a scenario file");
  if (!o.IsMap())
    throw InputError(location_of(o.Mark(), overlay.path), "",
                     "an overlay must be a mapping of what to change, as in a scenario file, " + got(o));
  return p;
}

}  // namespace shardflow::detail
