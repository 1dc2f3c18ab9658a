// "LINE:COL" (both from 1) of a byte offset in a text, for tests that compute where an error must point
// from the text they wrote (ASCII text: a column is a byte).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace shardflow::testing {

inline std::string line_col(std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, offset);
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return std::to_string(std::count(before.begin(), before.end(), '\n') + 1) + ":" + std::to_string(column);
}

}  // namespace shardflow::testing
