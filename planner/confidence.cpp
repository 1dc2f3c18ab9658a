// How sure a sweep's verdict is: the runs a configuration needs by the deadline to meet it (the quantile's
// nearest rank, or with a confidence level the exact binomial bound), and the interval of the share of
// runs that met it. Both from counts only, with det:: functions, so that a sweep's files are the same on
// every machine.
#include <algorithm>
#include <cmath>
#include <optional>

#include <shardflow/core/det_math.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/planner/sweep.hpp>

namespace shardflow::planner {

std::size_t runs_needed(std::size_t replications, double quantile, std::optional<double> confidence) {
  const std::size_t n = replications;
  if (n == 0) return 1;  // no run: nothing meets (nearest_rank wants n > 0)
  const std::size_t rank = nearest_rank(quantile, n);
  if (!confidence) return rank;
  const double p = quantile / 100;
  if (p >= 1) return n + 1;  // no count of runs shows that every run would meet it
  const double alpha = 1 - *confidence / 100;
  // The one-sided Clopper-Pearson lower bound of k successes in n is at least p exactly when
  // P(X >= k) <= alpha for X ~ Binomial(n, p) (the tail grows with p). The tails from k = n down, the
  // probabilities in logarithms (p^n underflows for large n): pmf(k) = pmf(k + 1) (k + 1) / (n - k) q / p.
  const double log_odds = det::log((1 - p) / p);
  double log_pmf = static_cast<double>(n) * det::log(p);
  double tail = 0;
  for (std::size_t k = n;; --k) {
    tail += det::exp(log_pmf);
    if (tail > alpha) return std::max(rank, k + 1);
    if (k == 0) return rank;  // not reached: the whole sum, 1, is over alpha
    log_pmf += det::log(static_cast<double>(k) / static_cast<double>(n - k + 1)) + log_odds;
  }
}

std::size_t replications_for_confidence(double quantile, double confidence) {
  const double p = quantile / 100;
  if (p >= 1) return 0;
  // With every run meeting, the bound is alpha^(1/n): n >= log(alpha) / log(p), then checked exactly.
  const double guess = det::log(1 - confidence / 100) / det::log(p);
  auto n = static_cast<std::size_t>(std::max(1.0, std::ceil(guess)));
  while (n > 1 && runs_needed(n - 1, quantile, confidence) <= n - 1) --n;
  while (runs_needed(n, quantile, confidence) > n) ++n;
  return n;
}

bool failures_reach_quantile(int runs_with_failed_tasks, int replications, double quantile) {
  const auto n = static_cast<std::size_t>(std::max(replications, 0));
  return n > 0 &&
         static_cast<std::size_t>(std::max(runs_with_failed_tasks, 0)) > n - nearest_rank(quantile, n);
}

ShareInterval share_interval95(std::size_t k, std::size_t n) {
  if (n == 0) return {0, 1};
  // Wilson's score interval, z the normal distribution's 97.5% point.
  constexpr double z = 1.959963984540054;
  const double nn = static_cast<double>(n);
  const double share = static_cast<double>(k) / nn;
  const double denom = 1 + z * z / nn;
  const double center = (share + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(share * (1 - share) / nn + z * z / (4 * nn * nn)) / denom;
  return {k == 0 ? 0.0 : std::max(0.0, center - half), k == n ? 1.0 : std::min(1.0, center + half)};
}

}  // namespace shardflow::planner
