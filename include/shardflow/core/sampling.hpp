// The seeded sampling every backend shares: a task's input and output sizes, and each attempt's run
// time and outcome. The simulator, the local backend and the Kubernetes backend call these and nothing
// else, so for the same scenario and seed they agree on every sampled number, by construction.
//
//   double in = sample_input_bytes(plan, t, seed);
//   AttemptSample s = sample_attempt(plan.steps()[plan.step_of(t)].component, plan, t, attempt, seed);
//   // s.run_ns: run time on a node of speed 1; s.fails: the attempt fails at the end of its run
//
// Each number comes from a stream keyed by (seed, what it is for, task, attempt) (core/random.hpp), not
// by when it is drawn: the order in which a backend asks does not change the answer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <shardflow/core/det_math.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/random.hpp>

namespace shardflow {

/// A task's input (Stream::input) or output (Stream::output) size in bytes: from the step's list, its
/// constant, or a draw from the task's own stream (rounded to whole bytes, never negative).
[[gnu::always_inline]] inline double sample_data_bytes(const DataSize& in, std::uint32_t item, TaskId t,
                                                       std::uint64_t seed, Stream stream) {
  if (!in.per_item.empty()) {
    const std::size_t i = item;
    return static_cast<double>(in.per_item[i < in.per_item.size() ? i : i % in.per_item.size()]);
  }
  const Distribution& d = in.dist;
  if (d.kind == Distribution::Kind::constant) return std::max(0.0, d.a);
  Rng r = Rng::stream(seed, stream, t);
  double v = 0;
  switch (d.kind) {
    case Distribution::Kind::constant:
      v = d.a;
      break;
    case Distribution::Kind::uniform:
      v = d.a + (d.b - d.a) * r.uniform();
      break;
    case Distribution::Kind::normal:
      v = d.a + d.b * r.normal();
      break;
    case Distribution::Kind::lognormal:
      v = d.a * det::exp(d.b * r.normal());
      break;
    case Distribution::Kind::exponential:
      v = r.exponential(d.a);
      break;
  }
  return std::max(0.0, std::round(v));
}

/// The bytes task `t` reads before it runs.
/// A task of a tree fan-in level reads its share of the aggregate's input (TreeShare), rounded to bytes.
inline double sample_input_bytes(const Plan& plan, TaskId t, std::uint64_t seed) {
  const Component& c = plan.steps()[plan.step_of(t)].component;
  const double bytes = sample_data_bytes(c.input, plan.item(t), t, seed, Stream::input);
  return c.tree.total == 0 ? bytes : std::round(bytes * c.tree.share(plan.item(t)));
}
/// The bytes task `t` writes after a successful run.
inline double sample_output_bytes(const Plan& plan, TaskId t, std::uint64_t seed) {
  return sample_data_bytes(plan.steps()[plan.step_of(t)].component.output, plan.item(t), t, seed,
                           Stream::output);
}

/// One attempt's draws.
struct AttemptSample {
  double run_ns = 0;   // run time on a node of speed 1, in nanoseconds (not rounded)
  bool fails = false;  // the attempt fails at the end of its run
};

/// Why an attempt failed when `fails` was drawn, as every backend's trace says it
/// (AttemptRecord::error): "sampled failure (failure.p = 0.01)".
inline std::string sampled_failure_text(double p) {
  char text[64];
  std::snprintf(text, sizeof text, "sampled failure (failure.p = %g)", p);
  return text;
}

/// Why a retry failed when it was still running at its task's retries.max_duration, as every backend
/// that keeps the deadline says it.
inline std::string past_deadline_text(Duration max_duration) {
  return "DeadlineExceeded: a retry still running at the end of retries.max_duration (" +
         format_duration(max_duration) +
         " from the task's first attempt) is stopped there, as Argo stops a retry pod at backoff.maxDuration "
         "(KFP's backoffMaxDuration)";
}

/// The draws of an attempt's stream (seed, Stream::duration, task, attempt): a standard normal, then the
/// straggler's and the failure's uniforms. They depend on those four keys alone, not on the component,
/// so simulations that share a seed (a sweep's replication of many configurations) can share them.
/// `sigma` and `noise` memoize the lognormal factor exp(sigma z - sigma^2/2) for one sigma (0: none).
struct AttemptDraws {
  double z = 0;
  double u_straggler = 1;
  double u_fail = 1;
  double sigma = 0;
  double noise = 1;
};

/// The attempt's stream, in its one order: the standard normal (two raw words; skipped, its words still
/// consumed, when `normal` is false, so that the uniforms are the same whatever sigma is), then the
/// straggler's and the failure's uniforms. draw_attempt and sample_attempt both read it through here.
[[gnu::always_inline]] inline void draw_stream(std::uint64_t seed, TaskId t, std::uint32_t attempt,
                                               bool normal, double& z, double& u_straggler, double& u_fail) {
  Rng rng = Rng::stream(seed, Stream::duration, t, attempt);
  if (normal) {
    z = rng.normal();
  } else {
    rng.next();
    rng.next();
  }
  u_straggler = rng.uniform();
  u_fail = rng.uniform();
}

/// The draws of attempt `attempt` of task `t` (Rng::normal, then two Rng::uniform), with the lognormal
/// factor for `sigma` (> 0) memoized: what sample_attempt draws and computes from them, to the bit.
inline AttemptDraws draw_attempt(std::uint64_t seed, TaskId t, std::uint32_t attempt, double sigma) {
  AttemptDraws d;
  draw_stream(seed, t, attempt, true, d.z, d.u_straggler, d.u_fail);
  if (sigma > 0) {
    d.sigma = sigma;
    d.noise = det::exp(sigma * d.z - sigma * sigma / 2);
  }
  return d;
}

/// First attempts' draws (attempt key 0) for one seed, per task id (joins included), made once for the
/// simulations that share the seed (RunOptions::draws), whatever their plans. Each task's lognormal factor is
/// memoized for its step's sigma in `plan`; a plan whose step of that task has another sigma computes its own
/// from the shared z.
struct AttemptDrawTable {
  std::uint64_t seed = 0;
  std::vector<AttemptDraws> first;  // per task id
  /// The draws of task t's attempt key 0 under `seed`, if the table has them.
  [[nodiscard]] const AttemptDraws* find(std::uint64_t s, TaskId t) const {
    return s == seed && t < first.size() ? &first[t] : nullptr;
  }
};
inline AttemptDrawTable make_draw_table(const Plan& plan, std::uint64_t seed) {
  AttemptDrawTable table;
  table.seed = seed;
  table.first.resize(plan.size());
  // A join runs no attempt, but the draws are the task id's, not the plan's: another plan sharing the
  // table (a configuration with other loop counts) may have a task at that id.
  for (TaskId t = 0; t < plan.size(); ++t)
    table.first[t] = draw_attempt(
        seed, t, 0, plan.is_join(t) ? 0.0 : plan.steps()[plan.step_of(t)].component.duration.lognormal_sigma);
  return table;
}

/// Attempt `attempt` (0-based) of task `t`, a task of component `c`:
///   (base + per_gib * input GiB) * share * exp(sigma Z - sigma^2/2) * (factor if straggler)
/// share is 1 except on the tasks of a tree fan-in (TreeShare), where input GiB is the whole aggregate's.
/// The input size is sampled only when `per_gib` is not zero. `pre`: this attempt's draws made ahead
/// (draw_attempt with the same seed, task and attempt), or null to draw them here; the result is the
/// same to the bit either way (a model without randomness reads none of them: its straggler and failure
/// probabilities are 0, which no uniform is below).
[[gnu::always_inline]] inline AttemptSample sample_attempt(const Component& c, const Plan& plan, TaskId t,
                                                           std::uint32_t attempt, std::uint64_t seed,
                                                           const AttemptDraws* pre = nullptr) {
  const DurationModel& m = c.duration;
  double z = 0, u_straggler = 1, u_fail = 1;  // a model without randomness needs no draws
  if (pre != nullptr) {
    z = pre->z;
    u_straggler = pre->u_straggler;
    u_fail = pre->u_fail;
  } else if (m.lognormal_sigma > 0 || m.straggler_p > 0 || c.failure.p > 0) {
    draw_stream(seed, t, attempt, m.lognormal_sigma > 0, z, u_straggler, u_fail);
  }
  const double gib =
      m.per_gib == Duration::zero()
          ? 0.0
          : sample_data_bytes(c.input, plan.item(t), t, seed, Stream::input) / static_cast<double>(kGiB);
  double ns = static_cast<double>(m.base.ns()) + static_cast<double>(m.per_gib.ns()) * gib;
  // A tree fan-in task does its share of the flat aggregate's work (the share of inputs it merges).
  if (c.tree.total != 0) ns *= c.tree.share(plan.item(t));
  if (m.lognormal_sigma > 0)
    ns *= pre != nullptr && pre->sigma == m.lognormal_sigma
              ? pre->noise
              : det::exp(m.lognormal_sigma * z - m.lognormal_sigma * m.lognormal_sigma / 2);
  if (u_straggler < m.straggler_p) ns *= m.straggler_factor;
  return {ns, u_fail < c.failure.p};
}

/// Nanoseconds (a sampled time, a delay) to a Duration, rounded to the nearest nanosecond and clamped
/// to [0, 10^18 ns] (about 31 years): absurd inputs (a 1 TB image at 1 B/s) give long but valid times
/// instead of overflowing the clock.
[[gnu::always_inline]] inline Duration delay_from_ns(double ns) {
  constexpr double kMaxDelayNs = 1e18;
  if (!(ns > 0)) return Duration::zero();
  if (ns >= kMaxDelayNs) return Duration::from_ns(static_cast<std::int64_t>(kMaxDelayNs));
  // std::llround for 0 < ns < 2^63, inline instead of a libm call: the difference is exact (Sterbenz).
  const auto whole = static_cast<std::int64_t>(ns);
  return Duration::from_ns(whole + (ns - static_cast<double>(whole) >= 0.5 ? 1 : 0));
}

}  // namespace shardflow
