#include "sim/divisor.hpp"

#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include <shardflow/core/random.hpp>

#include "sim/scoring.hpp"
#include "sim/scoring_plugins.hpp"

using namespace shardflow;
using namespace shardflow::sim;

TEST_CASE("Divisor: equals integer division for every numerator and divisor tried", "[sim]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  SECTION("small divisors, numerators around their multiples and at the ends") {
    for (std::int64_t d = 1; d <= 300; ++d) {
      const Divisor div(d);
      for (std::int64_t n = 0; n <= 3 * d + 2; ++n) REQUIRE(div.divide(n) == n / d);
      for (std::int64_t n = kMax - 3 * d; n > 0 && n <= kMax - 1; ++n) REQUIRE(div.divide(n) == n / d);
      REQUIRE(div.divide(kMax) == kMax / d);
    }
  }
  SECTION("powers of two and their neighbours, random numerators") {
    Rng rng(7);
    for (int b = 1; b < 63; ++b) {
      for (std::int64_t d : {(std::int64_t{1} << b) - 1, std::int64_t{1} << b, (std::int64_t{1} << b) + 1}) {
        const Divisor div(d);
        const std::int64_t span = d <= kMax / 3 ? d * 3 : kMax;
        for (int i = 0; i < 200; ++i) {
          const auto n = static_cast<std::int64_t>(rng.next() >> 1);
          REQUIRE(div.divide(n) == n / d);
          REQUIRE(div.divide(n % span) == (n % span) / d);
        }
        REQUIRE(div.divide(kMax) == kMax / d);
        REQUIRE(div.divide(d - 1) == 0);
        REQUIRE(div.divide(d) == 1);
      }
    }
  }
  SECTION("node capacities: millicores and bytes times the score scale") {
    for (std::int64_t cap : {std::int64_t{16000}, std::int64_t{64} << 30, std::int64_t{96000},
                             std::int64_t{1} << 40, std::int64_t{3} * 1000 * 1000 * 1000 + 7}) {
      const Divisor div(cap);
      for (std::int64_t used = 0; used <= cap; used += 1 + cap / 997) {
        REQUIRE(least_requested(used, cap, div) == plugins::least_requested_score(used, cap));
        REQUIRE(most_requested(used, cap, div) == plugins::most_requested_score(used, cap));
      }
    }
  }
  SECTION("negative numerators fall back to plain division") {
    const Divisor div(7);
    CHECK(div.divide(-15) == -2);
    CHECK(div.divide(-14) == -2);
  }
}

TEST_CASE("Divisor: the header example", "[sim]") {
  CHECK(Divisor(16000).divide(1'500'000) == 93);
  CHECK(Divisor().divide(42) == 42);
}
