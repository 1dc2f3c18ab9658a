// Small text helpers for messages about a user's input, shared by everything that reports bad input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardflow {

/// A user's value for a message: in double quotes, `"` and `\` escaped, control characters as \xNN and
/// characters that print as nothing or as a space (invisible_length) as \uXXXX, cut after 60 characters
/// with "...".
std::string quote(std::string_view s);
/// The UTF-8 length of the character at s[i] if it prints as nothing or as a plain space although it is
/// not one (a no-break or zero-width space, a direction mark, a byte order mark), else 0; its code point
/// in `code`.
std::size_t invisible_length(std::string_view s, std::size_t i, unsigned& code);

/// Edit distance (insertions, deletions, substitutions, and swaps of adjacent characters: "simualte" is
/// 1 from "simulate"), for "did you mean ...?" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The known name `name` is probably a misspelling of: the known name it is the part after the last '/' of
/// ("gpu": "nvidia.com/gpu"), else the closest by edit_distance (the first of equals),
/// if it is at most max(2, size/3) edits away and fewer than the name's characters; else none. Every "did you
/// mean ...?" uses this one rule.
std::optional<std::string_view> closest_name(std::string_view name, std::span<const std::string_view> known);

/// A count with thousands separators: 50000000 -> "50,000,000".
std::string with_commas(std::uint64_t n);

/// `units` / 10^decimals in fixed point, every decimal written: fixed_point(-1500, 3) == "-1.500",
/// fixed_point(5, 9) == "0.000000005" (decimals 0..18). What printf("%s%lld.%0*lld") gives, without
/// printf: trace files write one for every time of every attempt.
std::string fixed_point(std::int64_t units, int decimals);
/// fixed_point's text appended to `out`, for writers of large files (no string per number).
void append_fixed_point(std::string& out, std::int64_t units, int decimals);
/// `v` with `decimals` digits after the point, as printf("%.*f") writes it (std::to_chars, which the
/// standard defines to give printf's text), and "0" rather than "-0" for a negative value that rounds to 0.
std::string fixed_decimals(double v, int decimals);
/// The shortest text that reads back to the same double ("0.77", "1e+300"; std::to_chars).
std::string shortest_text(double v);

/// The length of the UTF-8 sequence that starts at text[i] (1 to 4), or 0 if the bytes there are not one
/// (a Latin-1 byte, a stray continuation byte, an overlong or surrogate form, a cut-off sequence).
std::size_t utf8_length(std::string_view text, std::size_t i);
/// `text` with every byte that does not start a UTF-8 sequence (utf8_length 0) replaced by U+FFFD, as a
/// decoder shows it: for text from outside (a command's stderr) that goes into files read as UTF-8.
std::string valid_utf8(std::string_view text);
/// `text` for a comment line of a file (YAML, a shell script): every control character and every
/// character a YAML 1.1 reader takes as a line break (U+0085, U+2028, U+2029) replaced by a space.
std::string one_line(std::string_view text);

/// The 1-based column, in characters as an editor counts them, of byte `at` of `text` on the line that
/// starts at byte `line_start`: the bytes before it less the UTF-8 continuation bytes (10xxxxxx), plus 1.
/// A byte order mark at the start of the text is not counted.
int character_column(std::string_view text, std::size_t line_start, std::size_t at);

/// character_column for many places of one text, each in at most a few KiB of counting however long its
/// line is (a one-line JSON file of megabytes: counting from the line's start made reading it quadratic).
/// The characters before every 4 KiB boundary are counted once, on the first call on a long line. Every
/// call must pass the same text.
class ColumnIndex {
 public:
  [[nodiscard]] int column(std::string_view text, std::size_t line_start, std::size_t at) const;

 private:
  [[nodiscard]] std::size_t chars_before(std::string_view text, std::size_t at) const;
  mutable std::vector<std::size_t> blocks_;  // the characters before each 4 KiB block
};

/// FNV-1a (64 bits) of `s`, continuing from `h` (kFnv1aBasis to start): a stable hash of texts for names
/// and fingerprints (the same on every machine and in every version).
inline constexpr std::uint64_t kFnv1aBasis = 14695981039346656037ULL;
std::uint64_t fnv1a(std::string_view s, std::uint64_t h = kFnv1aBasis);

/// `s` as one word a POSIX shell reads back as `s`: as it is when it has only letters, digits and
/// `_-+=./:,@%[]`, else in single quotes (a quote inside as '\''). For commands printed to be typed.
std::string shell_word(std::string_view s);

/// A message as a terminal should get it: each byte that is not UTF-8, and each control character but
/// newline and tab (an escape sequence in a name would drive the terminal), as \xNN; a character that
/// prints as nothing or as a space (invisible_length) as \uXXXX; the rest unchanged.
std::string printable(std::string_view message);

/// A user's text (a name, a value) as a message shows it: whole up to 100 characters (UTF-8); longer, its
/// first 100 and "... (N more characters)". A message about a 10,000-character step name stays short.
std::string shortened(std::string_view text);

/// A command-line flag with its argument, as the place a message names: "--set a.b=3". The argument is
/// shortened: a message about a huge --set value names the flag without repeating the value (and each
/// node of the value, which carries its place, does not carry a copy of it).
std::string flag_place(std::string_view flag, std::string_view argument);

/// At most `shown` of `count` names for a message, each shortened, joined with ", ", then ", and N more"
/// for the rest: "cpu, gpu, and 998 more". `name(i)` gives the i-th; only the shown ones are asked for.
std::string listed(std::size_t count, const std::function<std::string(std::size_t)>& name,
                   std::size_t shown = 10);
std::string listed(const std::vector<std::string>& names, std::size_t shown = 10);

}  // namespace shardflow
