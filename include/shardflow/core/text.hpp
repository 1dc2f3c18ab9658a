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

/// A command-line flag with its argument, as the place a message names: "--set a.b=3". An argument of
/// more than 100 characters is cut there, with "... (N more characters)": a message about a huge --set
/// value names the flag without repeating the value (and each node of the value, which carries its
/// place, does not carry a copy of it).
std::string flag_place(std::string_view flag, std::string_view argument);

}  // namespace shardflow
