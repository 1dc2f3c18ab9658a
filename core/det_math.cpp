#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <shardflow/core/det_math.hpp>

// Only +, -, *, / (correctly rounded by IEEE 754), and frexp, ldexp, floor, which are exact or defined to
// the bit. The polynomials are truncated Taylor series in Horner form with enough terms
// that the truncation is below half an ulp over the reduced range.

namespace shardflow::det {

namespace {

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^20 (the low 32 bits of kLn2Hi are zero).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kTwoPi = 6.28318530717958647693;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Taylor coefficients, exact quotients rounded once (at compile time, as IEEE division does).
template <int N>
struct Coefficients {
  double c[N + 1]{};
};
// c[i] = 1 / i!
constexpr Coefficients<13> kExp = [] {
  Coefficients<13> t;
  double f = 1;
  for (int i = 0; i <= 13; ++i) {
    if (i > 0) f *= i;
    t.c[i] = 1 / f;
  }
  return t;
}();
// c[k] = (-1)^k / (2k)! and (-1)^k / (2k+1)!
constexpr Coefficients<9> kCos = [] {
  Coefficients<9> t;
  double f = 1;
  for (int k = 0; k <= 9; ++k) {
    if (k > 0) f *= (2 * k - 1) * (2 * k);
    t.c[k] = (k % 2 ? -1 : 1) / f;
  }
  return t;
}();
constexpr Coefficients<9> kSin = [] {
  Coefficients<9> t;
  double f = 1;
  for (int k = 0; k <= 9; ++k) {
    if (k > 0) f *= (2 * k) * (2 * k + 1);
    t.c[k] = (k % 2 ? -1 : 1) / f;
  }
  return t;
}();
// c[k] = 1 / (2k + 1), for k >= 1
constexpr Coefficients<11> kAtanh = [] {
  Coefficients<11> t;
  for (int k = 0; k <= 11; ++k) t.c[k] = 1.0 / (2 * k + 1);
  return t;
}();

// sum c[i] x^i, Horner from the highest term.
template <int N>
double horner(const Coefficients<N>& k, double x) {
  double p = k.c[N];
  for (int i = N - 1; i >= 0; --i) p = p * x + k.c[i];
  return p;
}

// e^r for |r| <= ln2/2: r^14/14! < 5e-18.
double exp_poly(double r) {
  return horner(kExp, r);
}
// cos t and sin t for t in [0, pi/4]: (pi/4)^20 / 20! < 4e-21.
double cos_poly(double t) {
  return horner(kCos, t * t);
}
double sin_poly(double t) {
  return t * horner(kSin, t * t);
}

}  // namespace

double exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893383973096) return kInf;
  if (x < -745.133219101941108420) return 0;
  // x = k ln2 + r, |r| <= ln2 / 2; e^x = 2^k e^r. k is x/ln2 rounded to nearest (even) by adding and
  // taking away 1.5 * 2^52, which leaves no fraction bits: exact, and no library call.
  constexpr double kRound = 0x1.8p52;
  const double k = (x * kInvLn2 + kRound) - kRound;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  const double p = exp_poly(r);
  const int ki = static_cast<int>(k);
  if (ki >= -1021 && ki <= 1023)  // 2^k is a normal double: build it and multiply, exactly
    return p * std::bit_cast<double>(static_cast<std::uint64_t>(ki + 1023) << 52);
  return std::ldexp(p, ki);  // the ends of the range (a subnormal or nearly infinite result)
}

double log(double x) {
  if (x != x || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return kInf;
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh f = 2 (f + f^3/3 + f^5/5 + ...), f =
  // (m-1)/(m+1).
  int e = 0;
  double m = std::frexp(x, &e);  // exact, subnormals included; m in [1/2, 1)
  if (m < kSqrtHalf) {
    m *= 2;
    --e;
  }
  const double f = (m - 1) / (m + 1);  // |f| <= 0.1716
  const double s = f * f;
  // 2f (1 + s/3 + s^2/5 + ...), the sum less its leading 1 so that it adds to 2f at the end: s^12/25 < 2e-20.
  double p = kAtanh.c[11];
  for (int k = 10; k >= 1; --k) p = p * s + kAtanh.c[k];
  const double log_m = 2 * f + 2 * f * (p * s);
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

double cos_2pi(double u) {
  if (u != u || u == kInf || u == -kInf) return kNaN;
  // Reduce the angle in turns, every step exact: v in [0, 1), then by symmetry to [0, 1/8].
  double v = u - std::floor(u);
  if (v > 0.5) v = 1 - v;  // cos is even: cos(2pi(1 - v)) = cos(2pi v)
  double sign = 1;
  if (v > 0.25) {  // cos(2pi v) = -cos(2pi (1/2 - v))
    v = 0.5 - v;
    sign = -1;
  }
  if (v > 0.125) return sign * sin_poly(kTwoPi * (0.25 - v));  // cos(2pi v) = sin(2pi (1/4 - v))
  return sign * cos_poly(kTwoPi * v);
}

double pow_int(double base, int k) {
  double result = 1;
  for (; k > 0; k /= 2) {
    if (k & 1) result *= base;
    base *= base;
  }
  return result;
}

}  // namespace shardflow::det
