// The sweep's hash of a simulation view (planner-private; planner/sweep.cpp).
#pragma once

#include <cstddef>

#include <shardflow/core/scenario.hpp>

namespace shardflow::planner {

/// A hash of the simulation view's fields a sweep may vary (node pools, loops, resources, durations,
/// failures, retries, sizes, the scheduler, storage and overheads), to find the groups whose views may
/// equal a configuration's without comparing it to every group. Views that are equal (==) hash equally;
/// the fields left out (names, labels, taints, kernels, ...) only make more views share a hash, which
/// the comparisons then tell apart. The more fields it covers, the fewer comparisons a sweep of
/// thousands of values of one field makes (each costs a whole scenario's ==).
std::size_t view_fingerprint(const Scenario& view);

}  // namespace shardflow::planner
