#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include <shardflow/core/det_math.hpp>
#include <shardflow/core/pipeline.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>

namespace shardflow {

// pool_admits is with the checks that use it, in core/validate.cpp.

double Distribution::mean() const {
  switch (kind) {
    case Kind::constant:
      return a;
    case Kind::uniform:
      return (a + b) / 2;
    case Kind::normal: {
      // A draw is max(0, X) with X ~ N(a, b) (sample_data_bytes): E = a Phi(a/b) + b phi(a/b). With the
      // mass below 0 ignored, a normal of mean 0 would read as no data at all.
      if (b <= 0) return std::max(0.0, a);
      const double z = a / b;
      constexpr double kInvSqrt2Pi = 0.39894228040143267794;
      return a * 0.5 * std::erfc(-z / std::numbers::sqrt2) + b * kInvSqrt2Pi * std::exp(-z * z / 2);
    }
    case Kind::lognormal:
      return a * det::exp(b * b / 2);
    case Kind::exponential:
      return a;
  }
  return a;
}

double DataSize::mean_bytes() const {
  if (per_item.empty()) return dist.mean();
  long double sum = std::accumulate(per_item.begin(), per_item.end(), 0.0L);
  return static_cast<double>(sum / static_cast<long double>(per_item.size()));
}

double DurationModel::mean_seconds(double input_bytes) const {
  const double nominal = base.seconds() + per_gib.seconds() * input_bytes / static_cast<double>(kGiB);
  // The lognormal noise has mean 1 by construction; stragglers scale the mean by 1 + p (factor - 1).
  return nominal * (1 + straggler_p * (straggler_factor - 1));
}

bool RetryPolicy::deadline_ends_retries(int k, SimTime first, SimTime failed_at, SimTime now,
                                        double wait_scale) const {
  if (!max_duration) return false;
  const SimTime deadline = first + *max_duration;
  const Duration wait = delay_before_retry(k);
  return now > deadline ||
         failed_at + (wait_scale == 1 ? wait : delay_from_ns(static_cast<double>(wait.ns()) * wait_scale)) >
             deadline;
}

Duration RetryPolicy::delay_before_retry(int k) const {
  // No backoff is none after any number of failures (0 x factor^k, once factor^k overflows, is NaN).
  if (backoff <= Duration::zero()) return Duration::zero();
  const double d = backoff.seconds() * det::pow_int(factor, std::max(0, k - 1));
  if (!(d < max_backoff.seconds())) return max_backoff;
  return Duration::from_seconds(d);
}

}  // namespace shardflow
