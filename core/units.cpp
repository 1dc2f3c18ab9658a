#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow {
namespace {

// Reads a decimal number ("12", "1.5", ".5", "1e9") at the front of `s`; returns the digits consumed.
// We parse by hand instead of strtod so that locale settings never change the result.
std::size_t read_number(std::string_view s, bool allow_exponent, long double& out) {
  std::size_t i = 0;
  long double v = 0;
  bool any = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + (s[i] - '0');
    ++i;
    any = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    long double scale = 0.1L;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
      any = true;
    }
  }
  if (!any) return 0;
  if (allow_exponent && i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    bool neg = false;
    if (s[j] == '+' || s[j] == '-') neg = s[j++] == '-';
    int e = 0;
    bool digits = false;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && e < 100) {
      e = e * 10 + (s[j] - '0');
      ++j;
      digits = true;
    }
    if (digits) {
      v *= std::pow(10.0L, neg ? -e : e);
      i = j;
    }
  }
  out = v;
  return i;
}

constexpr long double kInt64MaxLd = 9223372036854775807.0L;

// Removes a leading sign; returns true for '-'.
bool take_sign(std::string_view& s) {
  if (s.empty() || (s[0] != '-' && s[0] != '+')) return false;
  const bool neg = s[0] == '-';
  s.remove_prefix(1);
  return neg;
}

// The value in quotes for a message; a huge one (a 40 KB --set value) shortened to its first 100
// characters and how many more.
// (printable: an exception's what() is a C string, which a NUL in the value would cut.)
std::string quoted(std::string_view s) {
  return "\"" + printable(shortened(s)) + "\"";
}

}  // namespace

Duration Duration::from_seconds(double s) {
  const double ns = s * 1e9;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (ns <= -kTwo63) return Duration(kLowest);
  if (!(ns < kTwo63)) return max();  // NaN too (llround's result would be unspecified)
  return Duration(static_cast<std::int64_t>(std::llround(ns)));
}

Duration parse_duration(std::string_view text) {
  std::string_view s = text;
  if (s.empty())
    throw std::invalid_argument("expected a duration such as 90s, 2h30m or 500ms, got an empty value");
  const bool neg = take_sign(s);
  if (s.empty())
    throw std::invalid_argument("expected a duration such as 90s, 2h30m or 500ms, got " + quoted(text));
  long double total_ns = 0;
  bool first = true;
  while (!s.empty()) {
    long double v = 0;
    std::size_t n = read_number(s, false, v);
    if (n == 0)
      throw std::invalid_argument("expected a duration such as 90s, 2h30m or 500ms, got " + quoted(text));
    s.remove_prefix(n);
    std::size_t u = 0;
    // Bytes >= 0x80 belong to the unit too, so that the UTF-8 "µs" reaches the unit table.
    while (u < s.size() &&
           (std::isalpha(static_cast<unsigned char>(s[u])) || static_cast<unsigned char>(s[u]) >= 0x80))
      ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    long double scale = 0;
    if (unit.empty()) {
      if (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        throw std::invalid_argument(
            "a space in duration " + quoted(text) +
            ": write each number with its unit, without spaces (h, m, s, ms, us or ns: "
            "90s, 2h30m, 500ms)");
      if (!first || !s.empty())
        throw std::invalid_argument("missing unit in duration " + quoted(text) +
                                    " (use h, m, s, ms, us or ns)");
      scale = 1e9L;  // a bare number is seconds
    } else if (unit == "h") {
      scale = 3600e9L;
    } else if (unit == "m") {
      scale = 60e9L;
    } else if (unit == "s") {
      scale = 1e9L;
    } else if (unit == "ms") {
      scale = 1e6L;
    } else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") {  // micro sign, or Greek mu (as Go)
      scale = 1e3L;
    } else if (unit == "ns") {
      scale = 1;
    } else if ((unit.front() == 'e' || unit.front() == 'E') && unit.size() == 1 && !s.empty() &&
               (std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '-' ||
                s.front() == '+')) {
      throw std::invalid_argument("an exponent in duration " + quoted(text) +
                                  ": write the number out, with its unit (1e3s: 1000s, or 16m40s)");
    } else {
      throw std::invalid_argument("unknown unit \"" + std::string(unit) + "\" in duration " + quoted(text) +
                                  " (use h, m, s, ms, us or ns)");
    }
    total_ns += v * scale;
    first = false;
  }
  // long double holds INT64_MAX exactly, so the limit is the real one.
  if (total_ns > kInt64MaxLd) throw std::invalid_argument("duration " + quoted(text) + " is too large");
  auto ns = static_cast<std::int64_t>(std::llround(total_ns));
  return Duration::from_ns(neg ? -ns : ns);
}

MilliCpu parse_cpu(std::string_view text) {
  std::string_view s = text;
  if (s.empty())
    throw std::invalid_argument("expected a CPU quantity such as 4, 1.5 or 500m, got an empty value");
  const bool neg = take_sign(s);
  long double v = 0;
  std::size_t n = read_number(s, true, v);
  if (n == 0)
    throw std::invalid_argument("expected a CPU quantity such as 4, 1.5 or 500m, got " + quoted(text));
  s.remove_prefix(n);
  long double milli = 0;
  if (s.empty()) {
    milli = v * 1000;
  } else if (s == "m") {
    milli = v;
  } else {
    throw std::invalid_argument("expected a CPU quantity such as 4, 1.5 or 500m, got " + quoted(text));
  }
  if (milli > 9e15L) throw std::invalid_argument("CPU quantity " + quoted(text) + " is too large");
  long double rounded = std::round(milli);
  if (std::fabs(static_cast<double>(rounded - milli)) > 1e-6)
    throw std::invalid_argument("CPU quantity " + quoted(text) +
                                " is finer than 1m (a thousandth of a core)");
  auto m = static_cast<MilliCpu>(rounded);
  return neg ? -m : m;
}

ByteCount parse_bytes(std::string_view text) {
  std::string_view s = text;
  const std::string expected = "expected a size such as 16Gi, 512Mi, 10GiB or 1e9";
  if (s.empty()) throw std::invalid_argument(expected + ", got an empty value");
  const bool neg = take_sign(s);
  long double v = 0;
  std::size_t n = read_number(s, true, v);
  if (n == 0) throw std::invalid_argument(expected + ", got " + quoted(text));
  s.remove_prefix(n);
  if (s.size() >= 2 && s.back() == 'B' && s != "B") s.remove_suffix(1);  // "GiB" -> "Gi", "GB" -> "G"
  if (s == "B" && text.size() >= 2 && text.substr(text.size() - 2) == "BB")
    throw std::invalid_argument(expected + ", got " + quoted(text));
  long double mult = 0;
  if (s.empty() || s == "B")
    mult = 1;
  else if (s == "Ki")
    mult = 1024.0L;
  else if (s == "Mi")
    mult = 1024.0L * 1024;
  else if (s == "Gi")
    mult = 1024.0L * 1024 * 1024;
  else if (s == "Ti")
    mult = 1024.0L * 1024 * 1024 * 1024;
  else if (s == "Pi")
    mult = 1024.0L * 1024 * 1024 * 1024 * 1024;
  else if (s == "Ei")
    mult = 1024.0L * 1024 * 1024 * 1024 * 1024 * 1024;
  else if (s == "k" || s == "K")
    mult = 1e3L;
  else if (s == "M")
    mult = 1e6L;
  else if (s == "G")
    mult = 1e9L;
  else if (s == "T")
    mult = 1e12L;
  else if (s == "P")
    mult = 1e15L;
  else if (s == "E")
    mult = 1e18L;
  else
    throw std::invalid_argument(expected + ", got " + quoted(text));
  long double bytes = v * mult;
  if (bytes > kInt64MaxLd) throw std::invalid_argument("size " + quoted(text) + " is too large");
  auto b = static_cast<ByteCount>(std::ceil(bytes - 1e-9L));
  return neg ? -b : b;
}

double parse_rate(std::string_view text) {
  auto slash = text.rfind("/s");
  if (slash == std::string_view::npos || slash + 2 != text.size())
    throw std::invalid_argument("expected a rate such as 200MiB/s or 1Gi/s, got " + quoted(text));
  return static_cast<double>(parse_bytes(text.substr(0, slash)));
}

std::string format_duration(Duration d) {
  // Unsigned magnitude: negating the most negative int64 would overflow.
  std::uint64_t ns = d.ns() < 0 ? 0 - static_cast<std::uint64_t>(d.ns()) : static_cast<std::uint64_t>(d.ns());
  std::string out = d.ns() < 0 ? "-" : "";
  if (ns == 0) return "0s";
  const std::uint64_t h = ns / 3'600'000'000'000ULL;
  ns %= 3'600'000'000'000ULL;
  const std::uint64_t m = ns / 60'000'000'000ULL;
  ns %= 60'000'000'000ULL;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (ns || (!h && !m)) {
    const std::uint64_t s = ns / 1'000'000'000ULL;
    const std::uint64_t frac = ns % 1'000'000'000ULL;
    if (!h && !m && s == 0) {
      // Under a second: in ms from 1 ms on, else in us (below 1 us, ns), with the digits it takes
      // ("277.749287ms", not "277749287ns": what calibrate's fits look like).
      const auto in_unit = [&](std::uint64_t unit, const char* name) {
        std::string f = std::to_string(frac % unit);
        f = std::string(std::to_string(unit).size() - 1 - f.size(), '0') + f;
        while (!f.empty() && f.back() == '0') f.pop_back();
        return out + std::to_string(frac / unit) + (f.empty() ? "" : "." + f) + name;
      };
      if (frac >= 1'000'000) return in_unit(1'000'000, "ms");
      if (frac >= 1'000) return in_unit(1'000, "us");
      return out + std::to_string(frac) + "ns";
    }
    out += std::to_string(s);
    if (frac) {
      std::string f = std::to_string(frac);
      f = std::string(9 - f.size(), '0') + f;
      while (f.back() == '0') f.pop_back();
      out += "." + f;
    }
    out += "s";
  }
  return out;
}

std::string format_bytes(ByteCount b) {
  static constexpr const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double v = static_cast<double>(b);
  int i = 0;
  while (std::fabs(v) >= 1024 && i < 6) {
    v /= 1024;
    ++i;
  }
  char buf[64];
  if (v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f%s", v, kSuffix[i]);
  else
    std::snprintf(buf, sizeof buf, "%.3g%s", v, kSuffix[i]);
  return buf;
}

std::string format_cpu(MilliCpu c) {
  if (c % 1000 == 0) return std::to_string(c / 1000);
  if (c % 100 == 0 && (c >= 1000 || c <= -1000)) {  // under a core, "500m" reads better than "0.5"
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(c) / 1000.0);
    return buf;
  }
  return std::to_string(c) + "m";
}

}  // namespace shardflow
