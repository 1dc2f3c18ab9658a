// The public entry of the scenario loader (shardflow/core/scenario.hpp): reading files, telling a scenario
// from an imported format, then the scenario document read in parts: the YAML reader (yaml_reader.cpp),
// --set and overlays (overrides.cpp), the cluster and overheads (cluster_reader.cpp), the pipeline
// (pipeline_reader.cpp) and the checks on the model (validate.cpp).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/machine.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>

#include "cluster_reader.hpp"
#include "kfp_import.hpp"
#include "overrides.hpp"
#include "pipeline_reader.hpp"
#include "scenario_document.hpp"
#include "validate.hpp"
#include "wfcommons_import.hpp"
#include "yaml_reader.hpp"

namespace shardflow {
namespace {

using YAML::Node;
using namespace detail;

constexpr std::string_view kTopKeys[] = {"name", "description", "seed", "pipeline", "cluster", "overheads"};

// Everything but the pipeline: name, description, seed, overheads and cluster (the pipeline is read
// against the cluster). `m` is the top-level mapping. Collecting, each of these is read on its own, and
// `cluster_sound` tells whether the cluster was read without a problem (the pipeline's checks against it
// are made only then).
Scenario read_scenario_head(const Reader& r, const Map& m, bool* cluster_sound = nullptr) {
  Scenario s;
  s.file = r.file();
  r.attempt([&] { s.name = get_nonempty_string(r, m.require("name"), "name"); });
  if (auto d = m.get("description")) r.attempt([&] { s.description = get_string(r, *d, "description"); });
  if (auto v = m.get("seed"))
    r.attempt([&] {
      const std::string& text = scalar(r, *v, "seed", "a non-negative integer");
      std::string_view t = text;
      if (!t.empty() && t.front() == '+') t.remove_prefix(1);
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), s.seed);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size())
        r.fail(*v, "seed", "expected an integer from 0 to 18446744073709551615, got " + quote(text));
    });
  const auto over = m.get("overheads");
  const bool overheads_read = r.attempt([&] { s.overheads = read_overheads(r, over); });
  // `overheads: none`, or a mapping over it (`{preset: none, sandbox_start: 2s}`): a free scheduler too.
  const auto none_preset = [&] {
    if (!over || !over->IsMap()) return false;
    const Node& o = *over;
    for (auto it = o.begin(); it != o.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "preset")
        return it->second.IsScalar() && it->second.Scalar() == "none";
    return false;
  };
  const bool no_overheads = (over && over->IsScalar()) || none_preset();
  // Collecting, a cluster missing (or misspelled) still lets the pipeline be read, without fit checks.
  std::optional<Node> cluster_node;
  r.attempt([&] { cluster_node = m.require("cluster"); });
  bool sound = false;
  if (cluster_node) {
    const std::size_t before = r.problem_count();
    const bool cluster_read =
        r.attempt([&] { s.cluster = read_cluster(r, *cluster_node, no_overheads, s.overheads.preset); });
    sound = cluster_read && r.problem_count() == before;
  }
  if (cluster_sound != nullptr) *cluster_sound = sound;
  if (sound && overheads_read)
    r.attempt([&] { check_driver_pod(r, s.cluster, s.overheads, over, *cluster_node); });
  s.pipeline.name = s.name;
  return s;
}

Scenario read_scenario(const Reader& r, const Node& root, std::uint64_t max_tasks, bool check_memory) {
  if (!root.IsDefined() || root.IsNull())
    throw InputError(SourceLocation{r.file(), 1, 1}, "",
                     "the file is empty; expected a mapping with name, pipeline and cluster");
  if (!root.IsMap())
    r.fail(root, "", "the top level must be a mapping with name, pipeline and cluster, " + got(root));
  const Map m(r, root, "", kTopKeys, Map::Kind::section);
  bool cluster_sound = true;
  Scenario s = read_scenario_head(r, m, &cluster_sound);
  r.attempt([&] {
    s.pipeline.steps = read_pipeline(r, m.require("pipeline"), s.cluster, cluster_sound, m.get("cluster"));
  });
  // The steps read so far unroll to no more tasks than the whole pipeline would: over the limit is a
  // problem whatever else is.
  r.attempt([&] { check_task_limit(s.pipeline, max_tasks, check_memory ? machine_memory() : 0, r.file()); });
  for (const InputError& clash : pod_name_clashes(s.pipeline)) r.report(clash);
  return s;
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

namespace {

// `doc` registered with `r`, then changed as LoadOptions says: the --cluster preset ("" or "local"), the
// overlays in order, the --set in order (the first layer's of each before the others), each one's field told
// to `field` (if given) as it is applied.
Node changed_document(const Reader& r, const ScenarioDocument& doc,
                      const std::vector<ParsedOverlay>& overlays, const LoadOptions& options,
                      const std::function<void(std::size_t, const std::string&)>& field) {
  for (const auto& [n, where] : doc.origins) r.note_override(n, where);
  Node root = doc.root;
  if (!options.cluster.empty()) apply_cluster_preset(r, root, options.cluster);
  const auto set = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      const std::string field_set = apply_override(r, root, options.sets[i]);
      if (field) field(i, field_set);
    }
  };
  const std::size_t first_overlays = std::min(options.first_layer.first, overlays.size());
  const std::size_t first_sets = std::min(options.first_layer.second, options.sets.size());
  for (std::size_t i = 0; i < first_overlays; ++i)
    apply_overlay(r, root, overlays[i], doc.imported, options.warn);
  set(0, first_sets);
  for (std::size_t i = first_overlays; i < overlays.size(); ++i)
    apply_overlay(r, root, overlays[i], doc.imported, options.warn);
  set(first_sets, options.sets.size());
  return root;
}

}  // namespace

Scenario read_scenario_document(const ScenarioDocument& doc, const std::string& file,
                                const std::vector<ParsedOverlay>& overlays, const LoadOptions& options) {
  if (!options.cluster.empty() && options.cluster != "local")
    throw InputError({}, "--cluster",
                     "a cluster file is for an imported pipeline (compiled KFP, WfCommons); " + file +
                         " is a scenario with a cluster of its own: change it with --overlay " +
                         options.cluster + " or --set, or give --cluster local");
  if (!options.params.empty())
    throw InputError({}, "--param",
                     "a compiled Kubeflow pipeline's parameter; " + file +
                         " is a scenario, which has none: change its fields with --set");
  Reader r(file);
  r.collect_into(options.problems);
  const Node root = changed_document(r, doc, overlays, options, options.set_field);
  try {
    return read_scenario(r, root, options.max_tasks, options.check_memory);
  } catch (const YAML::Exception& e) {
    // Only reached if a yaml-cpp accessor misbehaves; still a clear error rather than a crash.
    throw InputError(location_of(e.mark, file), "", e.msg);
  }
}

std::optional<Scenario> read_scenario_document_with_steps(const ScenarioDocument& doc,
                                                          const std::string& file,
                                                          const std::vector<ParsedOverlay>& overlays,
                                                          const LoadOptions& options,
                                                          std::vector<Step> steps) {
  if (!options.cluster.empty() && options.cluster != "local") return std::nullopt;
  std::optional<Scenario> s;
  std::vector<std::string> fields;  // each --set's field, for options.set_field
  try {
    const Reader r(file);
    const Node root = changed_document(
        r, doc, overlays, options, [&](std::size_t, const std::string& field) { fields.push_back(field); });
    // An overlay or --set that gives the document a pipeline changes the steps: not this route.
    if (!root.IsMap() || root["pipeline"]) return std::nullopt;
    s = read_scenario_head(r, Map(r, root, "", kTopKeys));
    // The checks read_pipeline makes against the cluster, and the task limit; their messages need the
    // steps' places in the document, which the caller's route has.
    for (const Step& st : steps)
      if (fit_problem(s->cluster, st)) return std::nullopt;
    s->pipeline.steps = std::move(steps);
    check_pod_names(s->pipeline);
    const std::uint64_t tasks = Plan::count_tasks(s->pipeline);
    if (tasks > options.max_tasks || (options.check_memory && !fits_memory(tasks, machine_memory())))
      return std::nullopt;
  } catch (const InputError&) {
    return std::nullopt;  // the document route reports it, with the pipeline in place
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  // Outside the try: what the caller's callback throws is the load's error, as on the document route.
  if (options.set_field)
    for (std::size_t i = 0; i < fields.size(); ++i) options.set_field(i, fields[i]);
  return s;
}

}  // namespace detail

Scenario load_scenario_text(std::string_view yaml, const std::string& file, const LoadOptions& options) {
  // UTF-8 only, checked before the formats are told apart (UTF-16 JSON was taken for YAML).
  detail::check_utf8_text(yaml, file);
  // Lines that end in a CR alone (classic Mac OS): line breaks for YAML 1.2, which yaml-cpp reads as none.
  if (const std::optional<std::string> lf = detail::lone_cr_as_lf(yaml))
    return load_scenario_text(*lf, file, options);
  std::error_code ec;  // a file is a cluster for a KFP pipeline only, which is known after parsing
  if (!options.cluster.empty() && options.cluster != "local" &&
      !std::filesystem::is_regular_file(options.cluster, ec))
    throw InputError({}, "--cluster",
                     "expected \"local\" or a cluster file (YAML with `cluster:`, for an imported pipeline), "
                     "got " +
                         quote(options.cluster) +
                         (std::filesystem::exists(options.cluster, ec) ? ", which is not a regular file"
                                                                       : ", which does not exist"));
  if (looks_like_wfcommons(yaml)) return import_wfcommons(yaml, file, options);
  const Node root = detail::parse_document(std::string(yaml), file);
  if (auto imported = import_foreign_document(root, file, options)) return std::move(*imported);
  detail::check_quotes_closed(yaml, file);
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

// The rest of a stream into `out`, refusing it past 2 GiB (a pipe that never ends).
void read_rest(std::istream& in, const std::string& path, std::string& out) {
  constexpr std::size_t kMaxBytes = std::size_t{2} << 30;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    out.append(buf, static_cast<std::size_t>(in.gcount()));
    if (out.size() >= kMaxBytes)
      throw InputError(SourceLocation{path, 0, 0}, "", "the file is too large (2 GiB or more)");
  }
  if (in.bad()) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read the file");
}

FileBytes read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(SourceLocation{path, 0, 0}, "", "is a directory, not a scenario file");
  // /dev/zero and the like never end.
  if (std::filesystem::is_character_file(path, ec) || std::filesystem::is_block_file(path, ec))
    throw InputError(SourceLocation{path, 0, 0}, "", "is a device, not a scenario file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // Missing or unreadable, as usual; else the system's reason (a name too long, a file where a
    // directory of the path should be).
    const int err = errno;
    throw InputError(
        SourceLocation{path, 0, 0}, "",
        "cannot open the file (" +
            (err == 0 || err == ENOENT || err == EACCES ? std::string("it does not exist or is not readable")
                                                        : std::generic_category().message(err)) +
            ")");
  }
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
      read_rest(in, path, bytes.rest);
      return bytes;
    }
  }
  read_rest(in, path, bytes.rest);  // a pipe
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

namespace {
// Whether two field paths differ only in their list indices or names ([0] and [1], [cpu] and [gpu]): an
// alias used by two steps is one problem, at its anchor; used by a step and a node pool, it is two.
bool same_field_but_indices(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == '[' && b[j] == '[') {
      const std::size_t close_a = a.find(']', i), close_b = b.find(']', j);
      if (close_a == std::string_view::npos || close_b == std::string_view::npos)
        return a.substr(i) == b.substr(j);
      i = close_a;
      j = close_b;
    } else if (a[i] != b[j]) {
      return false;
    }
    ++i;
    ++j;
  }
  return i == a.size() && j == b.size();
}
}  // namespace

void order_problems(std::vector<InputError>& problems, const std::string& path) {
  const auto rank = [&](const InputError& e) {
    const SourceLocation& w = e.where();
    const bool here = w.file == path;
    return std::tuple(w.line == 0 ? 0
                      : here      ? 1
                                  : 2,
                      here ? std::string_view() : std::string_view(w.file), w.line, w.column);
  };
  std::stable_sort(problems.begin(), problems.end(),
                   [&](const InputError& a, const InputError& b) { return rank(a) < rank(b); });
  problems.erase(std::unique(problems.begin(), problems.end(),
                             [](const InputError& a, const InputError& b) {
                               return a.where().line != 0 && a.where() == b.where() &&
                                      a.message() == b.message() &&
                                      same_field_but_indices(a.field(), b.field());
                             }),
                 problems.end());
}

ScenarioCheck check_scenario_file(const std::string& path, LoadOptions options) {
  ScenarioCheck check;
  options.problems = &check.problems;
  try {
    Scenario s = load_scenario_file(path, options);
    if (check.problems.empty())
      check.scenario = std::move(s);
    else
      check.partial = std::move(s);
  } catch (const detail::AlreadyReported&) {
  } catch (const InputError& e) {
    check.problems.push_back(e);
  }
  order_problems(check.problems, path);
  return check;
}

ScenarioFile read_overlay_file(const std::string& path) {
  try {
    return ScenarioFile{path, read_scenario_file(path)};
  } catch (const InputError& e) {
    throw InputError(SourceLocation{"--overlay " + path, 0, 0}, "", e.message());
  }
}

}  // namespace shardflow
