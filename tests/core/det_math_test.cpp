#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include <shardflow/core/det_math.hpp>

using namespace shardflow;

namespace {

// Distance in units in the last place between two finite doubles of the same sign.
std::int64_t ulps(double a, double b) {
  const auto ia = std::bit_cast<std::int64_t>(a);
  const auto ib = std::bit_cast<std::int64_t>(b);
  return ia > ib ? ia - ib : ib - ia;
}

// A reproducible spread of doubles in [lo, hi) (a fixed LCG: the test needs no library generator).
template <class F>
void for_samples(double lo, double hi, int n, F&& f) {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    f(lo + (hi - lo) * (static_cast<double>(s >> 11) * 0x1.0p-53));
  }
}

}  // namespace

TEST_CASE("det::exp is within 2 ulp of the C library's", "[core][det_math]") {
  std::int64_t worst = 0;
  for_samples(-745, 709.7, 200'000, [&](double x) {
    const double want = std::exp(x);
    if (want < std::numeric_limits<double>::min()) return;  // subnormal results: compared below
    worst = std::max(worst, ulps(det::exp(x), want));
  });
  for_samples(-1, 1, 200'000, [&](double x) { worst = std::max(worst, ulps(det::exp(x), std::exp(x))); });
  CHECK(worst <= 2);
  CHECK(det::exp(0) == 1);
  CHECK(det::exp(1) == Approx(2.718281828459045).epsilon(1e-15));
  CHECK(det::exp(-745.2) == 0);
  CHECK(det::exp(710) == std::numeric_limits<double>::infinity());
  CHECK(det::exp(-740) == Approx(std::exp(-740)).epsilon(1e-12));  // subnormal
  CHECK(std::isnan(det::exp(std::nan(""))));
}

TEST_CASE("det::log is within 2 ulp of the C library's", "[core][det_math]") {
  std::int64_t worst = 0;
  for_samples(0, 1, 200'000, [&](double x) {
    if (x > 0) worst = std::max(worst, ulps(det::log(x), std::log(x)));
  });
  for_samples(0.5, 2, 200'000, [&](double x) {
    if (std::abs(x - 1) > 1e-3) worst = std::max(worst, ulps(det::log(x), std::log(x)));
  });
  for_samples(1, 1e300, 100'000, [&](double x) { worst = std::max(worst, ulps(det::log(x), std::log(x))); });
  CHECK(worst <= 2);
  // Near 1, where the result is tiny and both signs occur.
  std::int64_t near_one = 0;
  for_samples(0.999, 1.001, 100'000, [&](double x) {
    if (x != 1) near_one = std::max(near_one, ulps(det::log(x), std::log(x)));
  });
  CHECK(near_one <= 2);
  CHECK(det::log(1) == 0);
  CHECK(det::log(0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(det::log(-1)));
  CHECK(det::log(0x1.0p-1074) == Approx(-744.4400719213812).epsilon(1e-15));  // the least subnormal
  CHECK(det::log(std::numeric_limits<double>::infinity()) == std::numeric_limits<double>::infinity());
}

TEST_CASE("det::cos_2pi is cos(2 pi u) to within 2.5e-16", "[core][det_math]") {
  double worst = 0;
  for_samples(-3, 3, 400'000, [&](double u) {
    const auto want = static_cast<double>(std::cos(2 * std::acos(-1.0L) * static_cast<long double>(u)));
    worst = std::max(worst, std::abs(det::cos_2pi(u) - want));
  });
  CHECK(worst <= 2.5e-16);
  CHECK(det::cos_2pi(0) == 1);
  CHECK(det::cos_2pi(0.5) == -1);
  CHECK(det::cos_2pi(1) == 1);
  CHECK(det::cos_2pi(0.25) == 0);  // exact: the reduction lands on sin(0)
  CHECK(det::cos_2pi(-0.75) == 0);
  CHECK(det::cos_2pi(1e300) == 1);  // a whole number of turns
  CHECK(std::isnan(det::cos_2pi(std::numeric_limits<double>::infinity())));
}

TEST_CASE("det::pow_int multiplies exactly where the products are exact", "[core][det_math]") {
  CHECK(det::pow_int(2, 0) == 1);
  CHECK(det::pow_int(2, 10) == 1024);
  CHECK(det::pow_int(1.5, 3) == 3.375);
  CHECK(det::pow_int(3, 13) == 1594323);
  CHECK(det::pow_int(0.5, 1074) == 0x1.0p-1074);
}

TEST_CASE("det:: functions give these exact bits on every machine", "[core][det_math]") {
  // Pinned from this implementation (on the machine where they were pinned, each is also exactly what
  // glibc gives). A machine, compiler or flag that changes any of these would change simulated traces
  // too (tests/sim/data has a golden trace): the values must never move.
  CHECK(std::bit_cast<std::uint64_t>(det::exp(0.3)) == 0x3FF599058C8C1A96ull);
  CHECK(std::bit_cast<std::uint64_t>(det::exp(-2.5)) == 0x3FB50385C094F425ull);
  CHECK(std::bit_cast<std::uint64_t>(det::log(0.123456789)) == 0xC000BC233ADD5D72ull);
  CHECK(std::bit_cast<std::uint64_t>(det::log(3e10)) == 0x40381FDCD24D7A8Cull);
  CHECK(std::bit_cast<std::uint64_t>(det::cos_2pi(0.1)) == 0x3FE9E3779B97F4A8ull);
  CHECK(std::bit_cast<std::uint64_t>(det::cos_2pi(0.37)) == 0xBFE5E7CF55112013ull);
}
