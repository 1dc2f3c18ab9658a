// The scenario loader's reading, for importers (core/kfp_import.cpp): a scenario document built in code
// is read exactly as a scenario file's document is (the --cluster preset, overlays, --set, every default
// and check), so an imported pipeline's errors read the same way. Private to core.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

namespace shardflow::detail {

// The reader's limits (aliases can make a small file expand to a huge tree): groups nest at most this
// deep, a pipeline has at most this many steps, loop items nest at most this deep and hold at most
// this many values in all. An importer meets them before it builds the document.
inline constexpr int kMaxGroupDepth = 32;
inline constexpr std::size_t kMaxSteps = 100'000;
inline constexpr int kMaxItemDepth = 64;
inline constexpr std::size_t kMaxItemValues = 1'000'000;

/// One YAML document from `text`; a syntax error or a second document is an InputError at file:line:col.
/// Nodes keep their marks (line and column in `file`).
YAML::Node parse_yaml_document(const std::string& text, const std::string& file);

/// An overlay file parsed: its path (for messages) and its document, a mapping.
struct ParsedOverlay {
  std::string path;
  YAML::Node root;
};
/// Parses an overlay; an empty overlay or one that is not a mapping is an InputError naming it.
ParsedOverlay parse_overlay(const ScenarioFile& overlay);

/// A scenario document made by an importer. Nodes taken from the imported file keep their marks; a node
/// made in code is listed in `origins` with the place it stands for (the IR field it was made from).
struct ScenarioDocument {
  YAML::Node root;
  std::vector<std::pair<YAML::Node, SourceLocation>> origins;
  /// The pipeline's steps come from another format (a compiled KFP pipeline, a WfCommons workflow): an
  /// overlay changes them by name, and a step name they lack is an error (a typo), not a new step.
  bool imported = false;
};

/// Reads `doc` (from `file`) as a scenario file's document: then options.cluster ("" or "local"), then
/// `overlays` in order, then options.sets; options.overlays are not read (the caller parsed them).
Scenario read_scenario_document(const ScenarioDocument& doc, const std::string& file,
                                const std::vector<ParsedOverlay>& overlays, const LoadOptions& options);

/// The same for an importer that built and checked the pipeline's steps itself (their order, names and
/// dependencies resolved, no cycle): `doc` has no `pipeline`, and the steps are taken as they are. nullopt
/// when anything would need the pipeline in the document: an overlay or --set that gives it a pipeline,
/// a step that fits no node pool of the cluster read, more tasks than options.max_tasks, or any error (the
/// caller then reads the whole document, whose messages name the place).
std::optional<Scenario> read_scenario_document_with_steps(const ScenarioDocument& doc,
                                                          const std::string& file,
                                                          const std::vector<ParsedOverlay>& overlays,
                                                          const LoadOptions& options,
                                                          std::vector<Step> steps);

}  // namespace shardflow::detail
