#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/text.hpp>

using shardflow::edit_distance;

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
