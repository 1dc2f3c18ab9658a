#include "sim/score_tree.hpp"

#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/random.hpp>

#include "sim/score_buckets.hpp"

using namespace shardflow;
using namespace shardflow::sim;

TEMPLATE_TEST_CASE("ScoreTree: the example of the header", "[sim]", ScoreTree, ScoreBuckets, ScoreSearch) {
  TestType t(4);
  t.set(0, 70);
  t.set(1, -1);
  t.set(2, 90);
  t.set(3, 90);
  const typename TestType::Window w = t.window(1, 2);
  CHECK(w.found == 2);
  CHECK(w.best == 90);
  CHECK(w.ties == 2);
  CHECK(w.passed == 3);
  CHECK(t.nth_best(w, 0) == 2);
  CHECK(t.nth_best(w, 1) == 3);
  // Wrapping: from 3, three feasible nodes are 3, 0, 2 (slot 1 does not fit): passed 4, ties 90 x2.
  const typename TestType::Window v = t.window(3, 3);
  CHECK(v.wraps);
  CHECK(v.found == 3);
  CHECK(v.passed == 4);
  CHECK(v.ties == 2);
  CHECK(t.nth_best(v, 0) == 3);
  CHECK(t.nth_best(v, 1) == 2);
}

// Clusters of up to 70 nodes, and some of up to kMaxSlots + 200 (712, or 4,296 with POPCNT): bitmaps of
// many words, and ScoreSearch's switch from buckets to the tree when it grows past ScoreBuckets::kMaxSlots.
TEMPLATE_TEST_CASE("ScoreTree: windows and picks match a node-by-node search", "[sim]", ScoreTree,
                   ScoreBuckets, ScoreSearch) {
  Rng rng(2024);
  for (int round = 0; round < 330; ++round) {
    const auto n =
        static_cast<std::uint32_t>(1 + rng.below(round % 11 == 10 ? ScoreBuckets::kMaxSlots + 200 : 70));
    TestType t(n / 2 + 1);
    t.resize(n);  // growth keeps what was set
    std::vector<std::int32_t> score(n, -1);
    // Every fifth round every node fits (a cluster with room: the buckets' window needs no counting).
    const bool all_fit = round % 5 == 4;
    if (all_fit)
      for (std::uint32_t s = 0; s < n; ++s) t.set(s, score[s] = static_cast<std::int32_t>(rng.below(4) * 10));
    for (int change = 0; change < 3 * static_cast<int>(n); ++change) {
      const auto s = static_cast<std::uint32_t>(rng.below(n));
      // Few distinct scores so that ties are common; a third of the nodes do not fit.
      // Now and then a high score: the buckets' map of scores grows; ScoreSearch turns to the tree
      // above ScoreBuckets::kMaxScore.
      const std::int32_t high = std::is_same_v<TestType, ScoreSearch> ? 100'000 : ScoreBuckets::kMaxScore + 1;
      score[s] = !all_fit && rng.below(3) == 0 ? -1
                 : rng.below(50) == 0          ? static_cast<std::int32_t>(rng.below(3000))
                 : rng.below(400) == 0         ? static_cast<std::int32_t>(rng.below(high))
                                               : static_cast<std::int32_t>(rng.below(4) * 10);
      t.set(s, score[s]);
    }
    for (int q = 0; q < 20; ++q) {
      const auto from = static_cast<std::uint32_t>(rng.below(n));
      std::uint32_t fit = 0;
      for (const std::int32_t v : score) fit += v >= 0 ? 1 : 0;
      // Every fourth query asks for exactly the feasible nodes: the window ends at the last one met.
      const auto want = q % 4 == 0 && fit > 0 ? fit : static_cast<std::uint32_t>(1 + rng.below(n + 2));
      // Reference: visit from, from+1, ... until `want` feasible nodes are found.
      std::uint32_t found = 0, passed = n;
      std::int32_t best = -1;
      std::vector<std::uint32_t> ties;
      for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t s = (from + k) % n;
        if (score[s] < 0) continue;
        ++found;
        if (score[s] > best) {
          best = score[s];
          ties.clear();
        }
        if (score[s] == best) ties.push_back(s);
        if (found == want) {
          passed = k + 1;
          break;
        }
      }
      const typename TestType::Window w = t.window(from, want);
      INFO("n " << n << " from " << from << " want " << want);
      REQUIRE(w.found == found);
      REQUIRE(w.passed == passed);
      REQUIRE(w.best == best);
      REQUIRE(w.ties == ties.size());
      for (std::uint32_t j = 0; j < ties.size(); ++j) REQUIRE(t.nth_best(w, j) == ties[j]);
    }
  }
}

TEST_CASE("ScoreBuckets: a word's k-th set bit and the bits in a range", "[sim]") {
  Rng rng(7);
  for (int round = 0; round < 2000; ++round) {
    const std::uint64_t x = rng.next() & rng.next() & (round % 2 == 0 ? ~std::uint64_t{0} : rng.next());
    std::vector<std::uint32_t> set;
    for (std::uint32_t b = 0; b < 64; ++b)
      if (x >> b & 1u) set.push_back(b);
    REQUIRE(bits::count(x) == set.size());
    for (std::uint32_t k = 0; k < set.size(); ++k) REQUIRE(bits::select(x, k) == set[k]);
  }
  const std::uint64_t m[3] = {~std::uint64_t{0}, 0x5, std::uint64_t{1} << 63};
  CHECK(bits::count_range(m, 0, 192) == 67);
  CHECK(bits::count_range(m, 63, 67) == 3);  // bits 63, 64, 66
  CHECK(bits::count_range(m, 191, 192) == 1);
  CHECK(bits::count_range(m, 5, 5) == 0);
  CHECK(bits::select_range(m, 60, 192, 4) == 64);  // 60, 61, 62, 63, then 64
  CHECK(bits::select_range(m, 60, 192, 5) == 66);
  CHECK(bits::select_range(m, 65, 192, 1) == 191);
}

TEST_CASE("ScoreSearch: a rebuild with a score above the buckets' limit gives the tree every slot", "[sim]") {
  ScoreSearch t(40);
  std::vector<std::int32_t> score(40);
  for (std::uint32_t s = 0; s < 40; ++s)
    score[s] = s == 7 ? ScoreBuckets::kMaxScore + 5 : static_cast<std::int32_t>(s % 5);
  t.rebuild([&](std::uint32_t s) { return score[s]; });
  CHECK_FALSE(t.buckets());
  for (std::uint32_t s = 0; s < 40; ++s) CHECK(t.score(s) == score[s]);
  const ScoreSearch::Window w = t.window(0, 40);
  CHECK(w.best == ScoreBuckets::kMaxScore + 5);
  CHECK(w.ties == 1);
  CHECK(t.nth_best(w, 0) == 7);
  CHECK(t.feasible() == 40);
}
