// Deterministic random numbers for every backend, identical on every machine and standard library:
// splitmix64 to derive independent streams from (seed, purpose, ids), xoshiro256** for the stream,
// and samplers written here (std:: distributions differ between standard libraries), on det::log and
// det::cos_2pi (the C library's differ between machines in the last bit).
//
//   Rng rng = Rng::stream(seed, Stream::duration, task, attempt);
//   double z = rng.normal();
//
// Streams are keyed by what they are for, not by when they are drawn, so a task's durations do not
// depend on the order events happen in, and two configurations of one scenario share their random
// numbers (common random numbers).
#pragma once

#include <cmath>
#include <cstdint>

#include <shardflow/core/det_math.hpp>

namespace shardflow {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// What a random stream is used for; part of the stream key.
enum class Stream : std::uint64_t {
  duration = 1,   // per (task, attempt): noise, straggler, failure
  input = 2,      // per task: input size
  node = 3,       // per node incarnation: failure and reclaim times
  scheduler = 4,  // the scheduler's tie breaking
  output = 5,     // per task: output size
  data = 6,       // the local backend's kernels: generated rows per (item, block of rows), true weights
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }
  /// An independent stream for (seed, purpose, a, b).
  static Rng stream(std::uint64_t seed, Stream purpose, std::uint64_t a = 0, std::uint64_t b = 0) {
    std::uint64_t h = seed;
    std::uint64_t k = splitmix64(h) ^ static_cast<std::uint64_t>(purpose);
    k = splitmix64(k) ^ a;
    k = splitmix64(k) ^ b;
    return Rng(splitmix64(k));
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in the open interval (0, 1), 53 bits.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0 (rejection of the biased top range, so exactly uniform).
  std::uint64_t below(std::uint64_t n) {
    for (;;) {
      const std::uint64_t r = next();
      // The biased range is r < 2^64 mod n, which is below n: a draw of at least n (all but n in 2^64 of
      // them) is accepted without that second division.
      if (r >= n || r >= (0 - n) % n) return r % n;
    }
  }
  /// Standard normal (Box-Muller, one value per call; the second is dropped so that draws stay
  /// aligned with the stream position regardless of how many were drawn before).
  double normal() {
    const double u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * det::log(u1)) * det::cos_2pi(u2);
  }
  /// Exponential with the given mean.
  double exponential(double mean) { return -mean * det::log(uniform()); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace shardflow
