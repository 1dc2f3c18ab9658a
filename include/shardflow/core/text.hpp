// Small text helpers for messages about a user's input, shared by everything that reports bad input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardflow {

/// A user's value for a message: in double quotes, `"` and `\` escaped, control characters as \xNN, cut
/// after 60 characters with "...".
std::string quote(std::string_view s);

/// Levenshtein distance, for "did you mean ...?" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// A count with thousands separators: 50000000 -> "50,000,000".
std::string with_commas(std::uint64_t n);

}  // namespace shardflow
