#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/pipeline.hpp>
#include <shardflow/core/units.hpp>

using namespace shardflow;

namespace {
std::string error_of(auto parse, const std::string& text) {
  try {
    (void)parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "parsed";
}
auto dur = [](std::string_view s) { return parse_duration(s); };
auto cpu = [](std::string_view s) { return parse_cpu(s); };
auto bytes = [](std::string_view s) { return parse_bytes(s); };
auto rate = [](std::string_view s) { return parse_rate(s); };
}  // namespace

TEST_CASE("parse_duration: Go-style durations to exact nanoseconds", "[core][units]") {
  CHECK(parse_duration("90s").ns() == 90'000'000'000);
  CHECK(parse_duration("2h30m").ns() == 9'000'000'000'000);
  CHECK(parse_duration("1.5s").ns() == 1'500'000'000);
  CHECK(parse_duration(".5s").ns() == 500'000'000);
  CHECK(parse_duration("500ms").ns() == 500'000'000);
  CHECK(parse_duration("10us").ns() == 10'000);
  CHECK(parse_duration("10µs").ns() == 10'000);
  CHECK(parse_duration("250ns").ns() == 250);
  CHECK(parse_duration("1h2m3s4ms5us6ns").ns() == 3'723'004'005'006);
  CHECK(parse_duration("1.5h").ns() == 5'400'000'000'000);
  CHECK(parse_duration("0").ns() == 0);
  CHECK(parse_duration("30").ns() == 30'000'000'000);  // a bare number is seconds
  CHECK(parse_duration("2.25").ns() == 2'250'000'000);
  // Micro: u, the micro sign (U+00B5) or the Greek mu (U+03BC), as Go takes them.
  CHECK(parse_duration("10us").ns() == 10'000);
  CHECK(parse_duration("10\u00b5s").ns() == 10'000);
  CHECK(parse_duration("10\u03bcs").ns() == 10'000);
  CHECK(parse_duration("-5s").ns() == -5'000'000'000);
  CHECK(parse_duration("+5m").ns() == 300'000'000'000);
  CHECK(parse_duration("2562047h").ns() == 2562047LL * 3'600'000'000'000LL);
}

TEST_CASE("parse_duration: errors say what was expected", "[core][units]") {
  CHECK(error_of(dur, "") == "expected a duration such as 90s, 2h30m or 500ms, got an empty value");
  CHECK(error_of(dur, "-") == "expected a duration such as 90s, 2h30m or 500ms, got \"-\"");
  CHECK(error_of(dur, "s") == "expected a duration such as 90s, 2h30m or 500ms, got \"s\"");
  CHECK(error_of(dur, "5x") == "unknown unit \"x\" in duration \"5x\" (use h, m, s, ms, us or ns)");
  // Go takes no exponent in a duration either: said as such, not as a unit "e".
  CHECK(error_of(dur, "1e3s") ==
        "an exponent in duration \"1e3s\": write the number out, with its unit (1e3s: 1000s, or 16m40s)");
  CHECK(error_of(dur, "1E-3") ==
        "an exponent in duration \"1E-3\": write the number out, with its unit (1e3s: 1000s, or 16m40s)");
  CHECK(error_of(dur, "5e") == "unknown unit \"e\" in duration \"5e\" (use h, m, s, ms, us or ns)");
  // A huge value (a 40 KB --set) is quoted by its first 100 characters and how many more, not whole.
  const std::string huge(40'000, 'x');
  CHECK(error_of(dur, huge) == "expected a duration such as 90s, 2h30m or 500ms, got \"" +
                                   std::string(100, 'x') + "... (39,900 more characters)\"");
  CHECK(error_of(cpu, "1" + huge) == "expected a CPU quantity such as 4, 1.5 or 500m, got \"1" +
                                         std::string(99, 'x') + "... (39,901 more characters)\"");
  CHECK(
      error_of(dur, "5 s") ==
      "a space in duration \"5 s\": write each number with its unit, without spaces (h, m, s, ms, us or ns: "
      "90s, 2h30m, 500ms)");
  CHECK(error_of(dur, "1m30") == "missing unit in duration \"1m30\" (use h, m, s, ms, us or ns)");
  CHECK(error_of(dur, "1h-5m") == "expected a duration such as 90s, 2h30m or 500ms, got \"1h-5m\"");
  CHECK(error_of(dur, "3000000h") == "duration \"3000000h\" is too large");
}

TEST_CASE("parse_cpu: Kubernetes CPU quantities in millicores", "[core][units]") {
  CHECK(parse_cpu("500m") == 500);
  CHECK(parse_cpu("2") == 2000);
  CHECK(parse_cpu("1.5") == 1500);
  CHECK(parse_cpu("0.25") == 250);
  CHECK(parse_cpu("0.001") == 1);
  CHECK(parse_cpu("1e3") == 1'000'000);
  CHECK(parse_cpu("+4") == 4000);
  CHECK(parse_cpu("-1") == -1000);  // accepted here; the loader checks ranges
  CHECK(error_of(cpu, "") == "expected a CPU quantity such as 4, 1.5 or 500m, got an empty value");
  CHECK(error_of(cpu, "4x") == "expected a CPU quantity such as 4, 1.5 or 500m, got \"4x\"");
  CHECK(error_of(cpu, "m") == "expected a CPU quantity such as 4, 1.5 or 500m, got \"m\"");
  CHECK(error_of(cpu, "2.5m") == "CPU quantity \"2.5m\" is finer than 1m (a thousandth of a core)");
  CHECK(error_of(cpu, "0.0005") == "CPU quantity \"0.0005\" is finer than 1m (a thousandth of a core)");
  CHECK(error_of(cpu, "1e20") == "CPU quantity \"1e20\" is too large");
}

TEST_CASE("parse_bytes: memory quantities and data sizes", "[core][units]") {
  CHECK(parse_bytes("16Gi") == 17'179'869'184);
  CHECK(parse_bytes("512Mi") == 536'870'912);
  CHECK(parse_bytes("1.5Gi") == 1'610'612'736);
  CHECK(parse_bytes("10GiB") == 10'737'418'240);
  CHECK(parse_bytes("10GB") == 10'000'000'000);
  CHECK(parse_bytes("10G") == 10'000'000'000);
  CHECK(parse_bytes("1e9") == 1'000'000'000);
  CHECK(parse_bytes("100k") == 100'000);
  CHECK(parse_bytes("100K") == 100'000);
  CHECK(parse_bytes("1Ki") == 1024);
  CHECK(parse_bytes("1KiB") == 1024);
  CHECK(parse_bytes("2Ti") == 2'199'023'255'552);
  CHECK(parse_bytes("1Pi") == 1'125'899'906'842'624);
  CHECK(parse_bytes("1Ei") == 1'152'921'504'606'846'976);
  CHECK(parse_bytes("3M") == 3'000'000);
  CHECK(parse_bytes("2T") == 2'000'000'000'000);
  CHECK(parse_bytes("123") == 123);
  CHECK(parse_bytes("5B") == 5);
  CHECK(parse_bytes("0") == 0);
  CHECK(parse_bytes("0.5") == 1);       // rounded up to a whole byte, as Kubernetes does
  CHECK(parse_bytes("1.1Ki") == 1127);  // 1126.4 rounds up
  CHECK(parse_bytes("-1Ki") == -1024);
  const std::string expected = "expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got ";
  CHECK(error_of(bytes, "") == "expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got an empty value");
  CHECK(error_of(bytes, "Gi") == expected + "\"Gi\"");
  CHECK(error_of(bytes, "16GX") == expected + "\"16GX\"");
  CHECK(error_of(bytes, "16gi") == expected + "\"16gi\"");
  CHECK(error_of(bytes, "10BB") == expected + "\"10BB\"");
  CHECK(error_of(bytes, "10 Gi") == expected + "\"10 Gi\"");
  CHECK(error_of(bytes, "9Ei") == "size \"9Ei\" is too large");
}

TEST_CASE("parse_rate: bytes per second", "[core][units]") {
  CHECK(parse_rate("200MiB/s") == 209'715'200.0);
  CHECK(parse_rate("1Gi/s") == 1'073'741'824.0);
  CHECK(parse_rate("0/s") == 0.0);
  CHECK(error_of(rate, "100MiB") == "expected a rate such as 200MiB/s or 1Gi/s, got \"100MiB\"");
  CHECK(error_of(rate, "100MiB/m") == "expected a rate such as 200MiB/s or 1Gi/s, got \"100MiB/m\"");
  CHECK(error_of(rate, "/s") == "expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got an empty value");
}

TEST_CASE("format_duration: short exact text that parses back", "[core][units]") {
  CHECK(format_duration(Duration::zero()) == "0s");
  CHECK(format_duration(Duration::from_s(90)) == "1m30s");
  CHECK(format_duration(Duration::from_s(9000)) == "2h30m");
  CHECK(format_duration(Duration::from_s(3600)) == "1h");
  CHECK(format_duration(Duration::from_ms(1500)) == "1.5s");
  CHECK(format_duration(Duration::from_ms(500)) == "500ms");
  CHECK(format_duration(Duration::from_us(10)) == "10us");
  CHECK(format_duration(Duration::from_ns(250)) == "250ns");
  CHECK(format_duration(Duration::from_ns(1'000'001)) == "1.000001ms");
  CHECK(format_duration(Duration::from_ns(277'749'287)) == "277.749287ms");  // a calibrated run time
  CHECK(format_duration(Duration::from_ns(1'500)) == "1.5us");
  CHECK(format_duration(Duration::from_ns(999'999'999)) == "999.999999ms");
  CHECK(format_duration(Duration::from_ms(3'600'500)) == "1h0.5s");
  CHECK(format_duration(Duration::from_ns(61'000'000'001)) == "1m1.000000001s");
  CHECK(format_duration(Duration::from_s(-5)) == "-5s");
  CHECK(format_duration(Duration::max()) == "2562047h47m16.854775807s");
  CHECK(format_duration(Duration::from_ns(std::numeric_limits<std::int64_t>::min())) ==
        "-2562047h47m16.854775808s");
  for (std::int64_t ns : {1LL, 999LL, 1'000LL, 1'001LL, 1'500LL, 999'999LL, 1'000'001LL, 123'456'789LL,
                          999'999'999LL, 59'999'999'999LL, 86'400'000'000'001LL, -7'000LL, -277'749'287LL}) {
    INFO(ns);
    CHECK(parse_duration(format_duration(Duration::from_ns(ns))).ns() == ns);
  }
}

TEST_CASE("format_bytes and format_cpu: text for humans", "[core][units]") {
  CHECK(format_bytes(0) == "0");
  CHECK(format_bytes(1023) == "1023");
  CHECK(format_bytes(1024) == "1Ki");
  CHECK(format_bytes(1536) == "1.5Ki");
  CHECK(format_bytes(512 * kMiB) == "512Mi");
  CHECK(format_bytes(16 * kGiB) == "16Gi");
  CHECK(format_bytes(kGiB + kGiB / 2) == "1.5Gi");
  CHECK(format_bytes(1'000'000'000) == "954Mi");  // rounded to 3 significant digits
  CHECK(format_bytes(-2048) == "-2Ki");
  CHECK(format_cpu(500) == "500m");
  CHECK(format_cpu(250) == "250m");
  CHECK(format_cpu(2000) == "2");
  CHECK(format_cpu(1500) == "1.5");
  CHECK(format_cpu(100) == "100m");
  CHECK(format_cpu(2500) == "2.5");
  CHECK(format_cpu(-1500) == "-1.5");
  CHECK(format_cpu(0) == "0");
}

TEST_CASE("Duration: arithmetic and conversions", "[core][units]") {
  CHECK(Duration::from_seconds(1.5).ns() == 1'500'000'000);
  CHECK(Duration::from_seconds(1e-9 * 0.4).ns() == 0);
  CHECK(Duration::from_s(2).seconds() == 2.0);
  CHECK((Duration::from_s(2) + Duration::from_ms(5)).ns() == 2'005'000'000);
  CHECK((Duration::from_s(2) - Duration::from_s(3)).ns() == -1'000'000'000);
  CHECK((Duration::from_ms(3) * 4).ns() == 12'000'000);
  CHECK((Duration::from_ms(3) / 2).ns() == 1'500'000);
  CHECK(Duration::from_s(1) < Duration::from_ms(1001));
}

TEST_CASE("parse_bytes and parse_duration: limits are those of int64", "[core][units]") {
  CHECK(parse_bytes("7Ei") == 7 * 1'152'921'504'606'846'976LL);
  CHECK(parse_bytes("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
  CHECK(error_of(bytes, "9223372036854775808") == "size \"9223372036854775808\" is too large");
  CHECK(parse_duration("9223372036854775807ns").ns() == std::numeric_limits<std::int64_t>::max());
  CHECK(error_of(dur, "9223372036854775808ns") == "duration \"9223372036854775808ns\" is too large");
}

TEST_CASE("Duration: arithmetic saturates at the ends of the range instead of wrapping", "[core][units]") {
  const Duration max = Duration::max(), lowest = Duration::from_ns(std::numeric_limits<std::int64_t>::min());
  const Duration hour = Duration::from_s(3600);
  CHECK(max + hour == max);
  CHECK(hour + max == max);
  CHECK(lowest - hour == lowest);
  CHECK(max - lowest == max);
  CHECK(lowest + (Duration::zero() - hour) == lowest);
  Duration d = max;
  d += hour;
  CHECK(d == max);
  d = lowest;
  d -= hour;
  CHECK(d == lowest);
  CHECK(hour * 3'000'000'000'000LL == max);
  CHECK(hour * -3'000'000'000'000LL == lowest);
  CHECK((Duration::zero() - hour) * -3'000'000'000'000LL == max);
  // In range, exact as before.
  CHECK(hour * 24 == Duration::from_s(86400));
  CHECK(max - hour + hour == max);
  CHECK(Duration::from_seconds(1e300) == max);
  CHECK(Duration::from_seconds(-1e300) == lowest);
  CHECK(Duration::from_seconds(std::numeric_limits<double>::quiet_NaN()) == max);
  CHECK(Duration::from_seconds(1.5) == Duration::from_ms(1500));
}

TEST_CASE("RetryPolicy: no backoff is none after any number of failures and a huge one is max_backoff",
          "[core][units]") {
  RetryPolicy p;
  p.max = 1000;
  p.factor = 3;
  CHECK(p.delay_before_retry(1000) == Duration::zero());  // 0 x 3^999 (inf) was NaN
  p.backoff = Duration::from_s(1);
  p.max_backoff = Duration::from_s(3600);
  CHECK(p.delay_before_retry(1) == Duration::from_s(1));
  CHECK(p.delay_before_retry(3) == Duration::from_s(9));
  CHECK(p.delay_before_retry(1000) == Duration::from_s(3600));
  p.factor = 1e308;
  CHECK(p.delay_before_retry(400) == Duration::from_s(3600));
}
