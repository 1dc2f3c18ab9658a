// The rule for a variant's name, shared by --variant and the variants file (planner-private).
#pragma once

#include <string>

#include <shardflow/core/error.hpp>

namespace shardflow::planner {

/// Throws InputError at `where` (`field`: "name" for --variant, variants[i].name in a variants file) unless
/// `name` is non-empty letters, digits, '-', '_', '.', and not dots alone.
void check_variant_name(const std::string& name, const SourceLocation& where,
                        const std::string& field = "name");

}  // namespace shardflow::planner
