// Compiled Kubeflow Pipelines files (PipelineSpec YAML, schemaVersion 2.1.0, as `kfp` compiles them)
// read as scenarios: the importer turns the IR into a scenario document and the scenario loader reads it
// (scenario_document.hpp), so defaults, overlays, --set and every check are the loader's. What the IR
// says that shardflow cannot model is an InputError at the IR field, never a silent misread.
// docs/kfp-import.md describes the mapping, the overlay's `kfp:` section and the defaults. Private to core.
#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/scenario.hpp>

namespace shardflow {

/// When `root` (a parsed document from `file`) is a KFP PipelineSpec (a mapping with `pipelineInfo`,
/// `root` or `deploymentSpec`), the scenario it imports to under `options`; nullopt for anything else.
/// An Argo Workflow (what the KFP backend lowers a pipeline to) is an InputError saying so.
std::optional<Scenario> import_foreign_document(const YAML::Node& root, const std::string& file,
                                                const LoadOptions& options);

}  // namespace shardflow
