// Units used everywhere in shardflow: time as integer nanoseconds, CPU as millicores, memory and data
// sizes as bytes, and the parsers that read them the way Kubernetes users write them.
//
//   Duration d = parse_duration("2h30m");      // 9000 s
//   MilliCpu c = parse_cpu("500m");            // 500
//   ByteCount b = parse_bytes("16Gi");         // 17179869184
//
// Parsers throw std::invalid_argument with a message that says what was expected; the scenario loader
// adds the file, line, column and field.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace shardflow {

/// A span of time, or a point in time measured from the start of a run: integer nanoseconds.
/// Integer time keeps simulation exact and deterministic on every machine.
class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration from_ns(std::int64_t ns) { return Duration(ns); }
  static constexpr Duration from_us(std::int64_t us) { return Duration(us * 1'000); }
  static constexpr Duration from_ms(std::int64_t ms) { return Duration(ms * 1'000'000); }
  static constexpr Duration from_s(std::int64_t s) { return Duration(s * 1'000'000'000); }
  /// Rounds to the nearest nanosecond; saturates beyond the range (NaN: max()).
  static Duration from_seconds(double s);
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<std::int64_t>::max()); }

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  /// Divided, not multiplied by 1e-9 (which is not a double): the correctly rounded quotient, so a
  /// whole or decimal number of seconds reads as written (30 s is 30, not 30.000000000000004).
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const Duration&) const = default;
  // Arithmetic saturates at max() and at the lowest value rather than wrap (signed overflow is undefined):
  // a scenario's far too long backoff or batch delay then lands past any horizon, not in the past.
  constexpr Duration operator+(Duration o) const { return Duration(add(ns_, o.ns_)); }
  constexpr Duration operator-(Duration o) const { return Duration(sub(ns_, o.ns_)); }
  constexpr Duration& operator+=(Duration o) {
    ns_ = add(ns_, o.ns_);
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    ns_ = sub(ns_, o.ns_);
    return *this;
  }
  constexpr Duration operator*(std::int64_t k) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(ns_, k, &r)) return Duration((ns_ < 0) != (k < 0) ? kLowest : kHighest);
    return Duration(r);
  }
  constexpr Duration operator/(std::int64_t k) const { return Duration(ns_ / k); }

 private:
  static constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kHighest : kLowest;
    return r;
  }
  static constexpr std::int64_t sub(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kHighest : kLowest;
    return r;
  }
  constexpr explicit Duration(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

/// A point in time since the start of a run.
using SimTime = Duration;

/// CPU in thousandths of a core ("500m" = 500, "2" = 2000).
using MilliCpu = std::int64_t;
/// Memory and data sizes in bytes.
using ByteCount = std::int64_t;

inline constexpr ByteCount kKiB = 1024;
inline constexpr ByteCount kMiB = 1024 * kKiB;
inline constexpr ByteCount kGiB = 1024 * kMiB;

/// Go-style durations: "90s", "2h30m", "1.5s", "500ms", "10us", "250ns", "0". A bare number means
/// seconds ("30" = 30 s). Negative values are accepted here ("-5s"); callers check ranges.
Duration parse_duration(std::string_view text);

/// Kubernetes CPU quantities: "500m", "2", "1.5", "0.25". Sub-millicore precision is rejected.
MilliCpu parse_cpu(std::string_view text);

/// Kubernetes memory quantities and data sizes: "16Gi", "512Mi", "1.5Gi", "10GiB", "10GB", "1e9",
/// "100k", "123". Binary suffixes Ki Mi Gi Ti Pi Ei (optionally followed by "B"), decimal k M G T P E
/// (optionally "B"). Fractions that are not whole bytes are rounded up, as Kubernetes does.
ByteCount parse_bytes(std::string_view text);

/// A data rate such as "200MiB/s" or "1Gi/s" (bytes per second); "/s" is required.
double parse_rate(std::string_view text);

/// "2h30m0s"-like text for humans; exact for whole nanoseconds.
std::string format_duration(Duration d);
/// "16Gi", "1.5Gi", "512Mi", "123" for humans.
std::string format_bytes(ByteCount b);
/// "500m", "2", "1.5" for humans.
std::string format_cpu(MilliCpu c);

}  // namespace shardflow
