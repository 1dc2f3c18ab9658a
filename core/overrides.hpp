// `--set PATH=VALUE` overrides, overlays (a deep merge of partial scenarios) and the `--cluster local`
// preset: each changes a scenario document before it is read, registering the nodes it brings with the
// place they stand for (the --set, the overlay's file:line:col, the preset), so that errors about them
// name that place. Private to core.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scenario_document.hpp"
#include "yaml_reader.hpp"

namespace shardflow::detail {

/// One part of a field's path (`cluster.node_pools[cpu].count`, `attempts[3].task`).
struct PathPart {
  std::string key;       // a mapping key, or
  std::string selector;  // a list element: an index or the `name` of an element (key empty)
};
/// A path's parts: keys joined by '.', list elements in [], a key with dots or brackets in double quotes
/// (labels."kubernetes.io/arch"). A malformed path is an InputError at `where` saying what is wrong.
std::vector<PathPart> parse_override_path(std::string_view path, const SourceLocation& where);

/// Applies one `--set PATH=VALUE` to `root` (see load_scenario_text in shardflow/core/scenario.hpp).
/// Returns the field it set with every list element by index, as "cluster.node_pools[0].count": the
/// same text for every spelling of one field ([cpu], [0], [00]).
std::string apply_override(const Reader& r, YAML::Node& root, const std::string& text);

/// Merges `overlay` over `root`: mappings key by key, lists of named mappings element by element,
/// anything else replaced (LoadOptions::overlays). With `imported` (ScenarioDocument::imported), a step
/// the pipeline lacks is an error, not a new step.
/// `warn` (optional) hears of an element the overlay appends to a list of named ones (a step, a pool)
/// whose name is close to one the list has: likely a misspelling, which adds instead of changing.
void apply_overlay(const Reader& r, YAML::Node& root, const ParsedOverlay& overlay, bool imported = false,
                   const std::function<void(const std::string&)>& warn = {});

/// Replaces `cluster` and `overheads` with this machine's ("local"; LoadOptions::cluster).
void apply_cluster_preset(const Reader& r, YAML::Node& root, const std::string& cluster);

}  // namespace shardflow::detail
