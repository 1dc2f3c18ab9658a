// Elementary functions that give the same bits on every machine.
//
// A run must give the same trace for the same scenario and seed on any machine, and sampled durations
// go through exp, log and cos. The C library's versions are accurate but not reproducible to the bit:
// glibc picks an FMA variant of each at run time on CPUs that have FMA, other C libraries use other
// algorithms, and results may differ in the last bit, which can move a duration by a nanosecond and
// then a decision. These use only +, -, *, / and exact scaling by powers of two, which IEEE 754 defines
// to the bit, and the project builds with -ffp-contract=off so that no compiler fuses a multiply and an
// add on a machine that can. They are accurate to a few units in the last place
// (tests/core/det_math_test.cpp checks them against the C library and pins exact bits).
//
//   double z = std::sqrt(-2 * det::log(u1)) * det::cos_2pi(u2);  // a standard normal (Box-Muller)
#pragma once

namespace shardflow::det {

/// e^x. +inf above ~709.78, 0 below ~-745.13; NaN for NaN.
double exp(double x);
/// Natural logarithm. -inf for 0, NaN for negative numbers and NaN, +inf for +inf.
double log(double x);
/// cos(2 pi u): the angle given in turns, so that reducing it is exact. NaN for infinities and NaN.
double cos_2pi(double u);
/// base^k for an integer k >= 0, by repeated squaring.
double pow_int(double base, int k);

}  // namespace shardflow::det
