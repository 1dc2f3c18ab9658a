// Division by an integer fixed in advance, without a divide instruction: what the scheduler model
// scores with (scoring.hpp), one per node pool capacity.
#pragma once

#include <cstdint>

namespace shardflow::sim {

/// Division by a divisor fixed in advance, as a multiplication and a shift (Granlund and Montgomery,
/// "Division by invariant integers using multiplication", 1994, theorem 4.2): exact for every
/// 0 <= n < 2^63, and several times cheaper than a 64-bit divide. Node capacities do not change
/// during a run, so the scheduler model makes one per pool and scores without dividing.
///
///   Divisor d(16000);
///   d.divide(1'500'000);  // 93, as 1'500'000 / 16000
class Divisor {
 public:
  Divisor() = default;  // divides by 1
  /// d >= 1.
  explicit constexpr Divisor(std::int64_t d) : d_(d < 1 ? 1 : d) {
    const auto ud = static_cast<std::uint64_t>(d_);
    int l = 0;  // ceil(log2 d)
    while (l < 63 && (std::uint64_t{1} << l) < ud) ++l;
    shift_ = 63 + l;
    // m = ceil(2^(63+l) / d) <= 2^64 + 1: kept in 128 bits, n * m < 2^128 for n < 2^63.
    m_ = ((U128{1} << shift_) + (ud - 1)) / ud;
  }
  /// n / d for 0 <= n < 2^63 (n < 0: plain division).
  [[nodiscard]] constexpr std::int64_t divide(std::int64_t n) const {
    if (n < 0) return n / d_;
    return static_cast<std::int64_t>((static_cast<U128>(n) * m_) >> shift_);
  }

 private:
  __extension__ typedef unsigned __int128 U128;
  std::int64_t d_ = 1;
  U128 m_ = U128{1} << 63;
  int shift_ = 63;
};

}  // namespace shardflow::sim
