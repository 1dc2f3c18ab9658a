// Reading a scenario's `pipeline:` (steps, groups, loops, data sizes and distributions, resources,
// durations, failures and retries, scheduling constraints, fan-in, speculation) into the model, with the
// checks of core/validate.cpp at each step's YAML node. Private to core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/cluster.hpp>
#include <shardflow/core/pipeline.hpp>

#include "yaml_reader.hpp"

namespace shardflow::detail {

/// The steps of the `pipeline:` mapping `n`; every step must fit a node pool of `cluster` (checked only
/// with `check_fit`: a reader collecting problems skips it when the cluster had some). `cluster_node`, the
/// `cluster` it was read from, lets a step that fits no pool name the pool sizes an overlay or a --set gave.
std::vector<Step> read_pipeline(const Reader& r, const YAML::Node& n, const Cluster& cluster,
                                bool check_fit = true,
                                const std::optional<YAML::Node>& cluster_node = std::nullopt);

/// A `tolerations` list ({key, operator, value, effect}): a step's, and a DaemonSet's.
std::vector<Toleration> read_tolerations(const Reader& r, const YAML::Node& n, const std::string& field);

/// Pod requests (`cpu`, `memory`, `gpu`) over `res`, the defaults; for a step's pods and the driver pod.
Resources read_resources(const Reader& r, const YAML::Node& n, const std::string& field, Resources res);

}  // namespace shardflow::detail
