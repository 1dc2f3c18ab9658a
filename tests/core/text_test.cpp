#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>

using shardflow::edit_distance;
using shardflow::fixed_decimals;
using shardflow::fixed_point;
using shardflow::one_line;

// The distance "did you mean" suggestions rank by (scenario keys, kernel names, CLI options and commands):
// each insertion, deletion, substitution or swap of two adjacent characters is one edit.
TEST_CASE("text: edit_distance counts a swap of adjacent characters as one edit", "[core]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("seed", "seed") == 0);
  CHECK(edit_distance("sed", "seed") == 1);           // an insertion
  CHECK(edit_distance("sead", "seed") == 1);          // a substitution
  CHECK(edit_distance("simualte", "simulate") == 1);  // a swap (Levenshtein: 2)
  CHECK(edit_distance("paralelism", "parallelism") == 1);
  CHECK(edit_distance("ab", "ba") == 1);
  CHECK(edit_distance("abc", "ca") == 3);  // optimal string alignment: no edit of a swapped pair
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("count", "cont") == edit_distance("cont", "count"));
}

// The one rule every "did you mean" uses: the closest known name (the first of equals), if at most
// max(2, size/3) edits away.
TEST_CASE("text: closest_name suggests a known name a few edits away, else none", "[core]") {
  using shardflow::closest_name;
  const std::string_view keys[] = {"workflow", "worker", "name"};
  CHECK(closest_name("worklfow", keys) == "workflow");  // a swap
  CHECK(closest_name("Workflow", keys) == "workflow");  // a case
  CHECK(closest_name("workr", keys) == "worker");
  CHECK(closest_name("nmea", keys) == "name");               // 2 edits from a 4-letter name: max(2, 1)
  CHECK(closest_name("xyz", keys) == std::nullopt);          // 3 edits from each of 4 letters or more
  CHECK(closest_name("workfloooow", keys) == "workflow");    // 3 edits, 11 letters: max(2, 3)
  CHECK(closest_name("wxrkfloooow", keys) == std::nullopt);  // 4 edits
  const std::string_view ties[] = {"ab", "ba"};
  CHECK(closest_name("aa", ties) == "ab");  // 1 from each: the first
  CHECK(closest_name("a", std::span<const std::string_view>{}) == std::nullopt);
  // As many edits as the name has characters: another name, not a typo of this one.
  const std::string_view pools[] = {"cpu", "gpu"};
  CHECK(closest_name("p2", pools) == std::nullopt);  // 2 edits from "cpu", 2 characters
  CHECK(closest_name("g", pools) == std::nullopt);
  CHECK(closest_name("cp", pools) == "cpu");  // 1 edit
  // A name without its domain prefix: the prefixed one, not another a single edit away.
  const std::string_view resources[] = {"cpu", "memory", "nvidia.com/gpu"};
  CHECK(closest_name("gpu", resources) == "nvidia.com/gpu");
  CHECK(closest_name("gpus", resources) == "cpu");  // not the part after '/': edits, as before
}

TEST_CASE("fixed_point and fixed_decimals write what printf writes", "[core]") {
  CHECK(fixed_point(0, 9) == "0.000000000");
  CHECK(fixed_point(5, 9) == "0.000000005");
  CHECK(fixed_point(-1500, 3) == "-1.500");
  CHECK(fixed_point(-999, 3) == "-0.999");
  CHECK(fixed_point(123456789012, 9) == "123.456789012");
  CHECK(fixed_point(42, 0) == "42");
  CHECK(fixed_point(INT64_MIN, 9) == "-9223372036.854775808");
  CHECK(fixed_point(INT64_MAX, 3) == "9223372036854775.807");
  // Against printf on a spread of values and both signs.
  for (std::int64_t v : {std::int64_t{1}, std::int64_t{999}, std::int64_t{1000}, std::int64_t{1001},
                         std::int64_t{86'400'000'000'123}, std::int64_t{7'000'000'000}}) {
    for (const std::int64_t x : {v, -v}) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%lld.%09lld", x < 0 ? "-" : "",
                    static_cast<long long>(std::llabs(x) / 1'000'000'000),
                    static_cast<long long>(std::llabs(x) % 1'000'000'000));
      CHECK(fixed_point(x, 9) == buf);
    }
  }
  CHECK(fixed_decimals(2.5, 0) == "2");  // printf rounds half to even, as to_chars does
  CHECK(fixed_decimals(3.5, 0) == "4");
  CHECK(fixed_decimals(0.125, 2) == "0.12");
  CHECK(fixed_decimals(-0.001, 2) == "0.00");
  CHECK(fixed_decimals(-0.004, 0) == "0");
  CHECK(fixed_decimals(-1.5, 1) == "-1.5");
  CHECK(fixed_decimals(1e20, 1) == "100000000000000000000.0");
  // Many values against printf: exact halves (k/8, k/16), decimal halves that are not exact in binary
  // (x.xx5), and values spread over the magnitudes, both signs.
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 11;
  };
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t r = next();
    double v = 0;
    switch (i % 4) {
      case 0:
        v = static_cast<double>(r % 100000) / 8;
        break;
      case 1:
        v = static_cast<double>(r % 1000000) / 1000 + 0.0005;
        break;
      case 2:
        v = static_cast<double>(r) * 0x1p-53 * std::pow(10.0, static_cast<double>(r % 17) - 6);
        break;
      default:
        v = static_cast<double>(r % 100000) / 16;
        break;
    }
    if (r & 1) v = -v;
    const int d = static_cast<int>(next() % 7);
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", d, v);
    std::string want = buf;
    if (want.size() >= 2 && want[0] == '-' && want.find_first_not_of("0.", 1) == std::string::npos)
      want.erase(0, 1);
    if (fixed_decimals(v, d) != want) {
      CAPTURE(v, d);
      CHECK(fixed_decimals(v, d) == want);
    }
  }
  for (double v : {0.1, 1.0 / 3, 2.675, 1234.5678, 1e-7, 6.02e23}) {
    for (int d : {0, 1, 2, 3, 6}) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%.*f", d, v);
      CHECK(fixed_decimals(v, d) == buf);
    }
  }
}

TEST_CASE("printable: bytes that are not UTF-8, and control characters, as hex escapes", "[core]") {
  CHECK(shardflow::printable("caf\xc3\xa9 ok") == "caf\xc3\xa9 ok");  // UTF-8 stays
  CHECK(shardflow::printable("caf\xe9") == "caf\\xE9");               // Latin-1 é
  CHECK(shardflow::printable("a\x1b[31mred") ==
        "a\\x1B[31mred");  // an escape sequence cannot drive the terminal
  CHECK(shardflow::printable("two\nlines\tand a tab") == "two\nlines\tand a tab");
  CHECK(shardflow::printable("\xed\xa0\x80") == "\\xED\\xA0\\x80");  // a surrogate's form is not UTF-8
  CHECK(shardflow::printable("\xf0\x9f\x98\x80!") == "\xf0\x9f\x98\x80!");
  CHECK(shardflow::printable("cut \xe2\x82") == "cut \\xE2\\x82");
}

// A one-line file of megabytes (minified JSON, WfCommons' default) asks for the column of every value: the
// index gives character_column's answer without counting from the line's start each time.
TEST_CASE("text: ColumnIndex gives character_column's columns on long lines", "[core]") {
  // A BOM, then one line of 40,000 bytes mixing one-, two- and three-byte characters, then a short line.
  std::string text = "\xEF\xBB\xBF";
  for (int i = 0; i < 4000; ++i)
    text += i % 3 == 0   ? "ab\xC3\xA9"
                           "cdefg"
            : i % 3 == 1 ? "x\xE2\x82\xACyz12345"
                         : "0123456789";
  const std::size_t second = text.size() + 1;
  text +=
      "\n\xC3\xA9"
      "abc";
  const shardflow::ColumnIndex index;
  for (std::size_t at = 0; at <= text.size(); at += at < 20 ? 1 : 997) {
    const std::size_t line_start = at < second ? 0 : second;
    CHECK(index.column(text, line_start, at) == shardflow::character_column(text, line_start, at));
  }
  // Exact values: past the BOM, 4,000 pieces of 8, 9 and 10 characters (é and € count once).
  const std::size_t end_of_first = second - 1;
  CHECK(index.column(text, 0, end_of_first) == 1 + 1334 * 8 + 1333 * 9 + 1333 * 10);
  CHECK(index.column(text, second, text.size()) == 5);
  // From a line start inside the text (not the BOM's): every byte before `at` on that line.
  CHECK(index.column(text, 3, 3 + 9000) == shardflow::character_column(text, 3, 3 + 9000));
}

TEST_CASE("text: characters that print as nothing or as a space are escaped in messages", "[core]") {
  // A zero-width space, a no-break space, a byte order mark, a NUL: as \uXXXX and \x00.
  CHECK(shardflow::printable("se\xe2\x80\x8b"
                             "ed a\xc2\xa0"
                             "b \xef\xbb\xbf!") == "se\\u200bed a\\u00a0b \\ufeff!");
  CHECK(shardflow::quote("se\xe2\x80\x8b"
                         "ed") == "\"se\\u200bed\"");
  CHECK(shardflow::quote(std::string("a\0b", 3)) == "\"a\\x00b\"");
  CHECK(shardflow::printable("\xe2\x80\x94 dash, caf\xc3\xa9") == "\xe2\x80\x94 dash, caf\xc3\xa9");  // shown
  // An error's text keeps what follows a NUL in its field or message (what() is a C string).
  const shardflow::InputError e({"f.yaml", 2, 1}, std::string("se\0ed", 5), std::string("bad \0 value", 11));
  CHECK(std::string(e.what()) == "f.yaml:2:1: se\\x00ed: bad \\x00 value");
  // A key with a zero-width space is a typo of the key without it.
  const std::vector<std::string_view> keys{"name", "seed", "pipeline"};
  CHECK(shardflow::closest_name("se\xe2\x80\x8b"
                                "ed",
                                keys) == std::optional<std::string_view>("seed"));
}

TEST_CASE("one_line: control characters and YAML 1.1's line breaks as spaces, the rest as it was", "[core]") {
  CHECK(one_line("nl\n- oops\r\tx\x7f") == "nl - oops  x ");
  CHECK(one_line("a\xc2\x85"
                 "b\xe2\x80\xa8"
                 "c\xe2\x80\xa9"
                 "d") == "a b c d");
  CHECK(one_line("donn\xc3\xa9"
                 "es \xe2\x80\xa6 \xc2\xa0") ==
        "donn\xc3\xa9"
        "es \xe2\x80\xa6 \xc2\xa0");
  CHECK(one_line("") == "");
}
