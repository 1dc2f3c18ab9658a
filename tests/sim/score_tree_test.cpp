#include "sim/score_tree.hpp"

#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/random.hpp>

using namespace shardflow;
using namespace shardflow::sim;

TEST_CASE("ScoreTree: the example of the header", "[sim]") {
  ScoreTree t(4);
  t.set(0, 70);
  t.set(1, -1);
  t.set(2, 90);
  t.set(3, 90);
  const ScoreTree::Window w = t.window(1, 2);
  CHECK(w.found == 2);
  CHECK(w.best == 90);
  CHECK(w.ties == 2);
  CHECK(w.passed == 3);
  CHECK(t.nth_best(w, 0) == 2);
  CHECK(t.nth_best(w, 1) == 3);
  // Wrapping: from 3, three feasible nodes are 3, 0, 2 (slot 1 does not fit): passed 4, ties 90 x2.
  const ScoreTree::Window v = t.window(3, 3);
  CHECK(v.wraps);
  CHECK(v.found == 3);
  CHECK(v.passed == 4);
  CHECK(v.ties == 2);
  CHECK(t.nth_best(v, 0) == 3);
  CHECK(t.nth_best(v, 1) == 2);
}

TEST_CASE("ScoreTree: windows and picks match a node-by-node search", "[sim]") {
  Rng rng(2024);
  for (int round = 0; round < 300; ++round) {
    const auto n = static_cast<std::uint32_t>(1 + rng.below(70));
    ScoreTree t(n / 2 + 1);
    t.resize(n);  // growth keeps what was set
    std::vector<std::int32_t> score(n, -1);
    for (int change = 0; change < 3 * static_cast<int>(n); ++change) {
      const auto s = static_cast<std::uint32_t>(rng.below(n));
      // Few distinct scores so that ties are common; a third of the nodes do not fit.
      score[s] = rng.below(3) == 0 ? -1 : static_cast<std::int32_t>(rng.below(4) * 10);
      t.set(s, score[s]);
    }
    for (int q = 0; q < 20; ++q) {
      const auto from = static_cast<std::uint32_t>(rng.below(n));
      const auto want = static_cast<std::uint32_t>(1 + rng.below(n + 2));
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
      const ScoreTree::Window w = t.window(from, want);
      INFO("n " << n << " from " << from << " want " << want);
      REQUIRE(w.found == found);
      REQUIRE(w.passed == passed);
      REQUIRE(w.best == best);
      REQUIRE(w.ties == ties.size());
      for (std::uint32_t j = 0; j < ties.size(); ++j) REQUIRE(t.nth_best(w, j) == ties[j]);
    }
  }
}
