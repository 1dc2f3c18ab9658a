#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>

#include "text_place.hpp"

using namespace shardflow;
using namespace shardflow::planner;

namespace {

// Ten 10 s tasks with a parallelism limit on one node billed 3.6 an hour (0.001 a second).
const std::string kLimited =
    "name: limited\n"
    "seed: 5\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 10, parallelism: 2}\n"
    "      duration: {base: 10s}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string json(const SweepResult& r) {
  std::ostringstream out;
  write_sweep_json(out, r);
  return out.str();
}

}  // namespace

TEST_CASE("Sweep: summary statistics, and exactly the Student-t interval for a symmetric sample",
          "[planner]") {
  const Summary s = summarize({4, 1, 3, 2});
  CHECK(s.mean == 2.5);
  CHECK(s.stddev == Approx(std::sqrt(5.0 / 3.0)).epsilon(1e-15));
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.p50 == 2);  // nearest rank
  CHECK(s.p95 == 4);
  CHECK(s.skewness == 0);  // deviations -1.5, -0.5, 0.5, 1.5: their cubes cancel exactly
  // Zero skewness: Hall's transform is the identity, so the interval is mean -+ s t / sqrt(n), exactly.
  const double q = 3.182446 / std::sqrt(4.0);  // t(0.975, 3 degrees of freedom)
  CHECK(s.ci95_low == 2.5 - s.stddev * q);
  CHECK(s.ci95_high == 2.5 + s.stddev * q);
  CHECK(s.ci95_low == Approx(2.5 - 3.182446 * std::sqrt(5.0 / 3.0) / 2).epsilon(1e-12));
  const Summary one = summarize({7});
  CHECK(one.stddev == 0);
  CHECK(one.ci95_low == 7);
  CHECK(one.ci95_high == 7);
  // Two values: no skewness to estimate, so the plain t interval with 1 degree of freedom.
  const Summary two = summarize({1, 4});
  CHECK(two.skewness == 0);
  CHECK(two.ci95_low == Approx(2.5 - 12.706205 * std::sqrt(4.5) / std::sqrt(2.0)).epsilon(1e-14));
  CHECK(two.ci95_high == Approx(2.5 + 12.706205 * std::sqrt(4.5) / std::sqrt(2.0)).epsilon(1e-14));
  // Zero variance: the point itself, whatever n.
  const Summary flat = summarize({3, 3, 3, 3, 3});
  CHECK(flat.skewness == 0);
  CHECK(flat.ci95_low == 3);
  CHECK(flat.ci95_high == 3);
  // Equal values whose mean a sum and a division put an ulp off (a sweep's identical runs): no spread, no
  // skew, and the interval is the value (it was 3.7e-15, skewness 1.19, and a low end below the minimum).
  const Summary same =
      summarize({19.432651, 19.432651, 19.432651, 19.432651, 19.432651, 19.432651, 19.432651});
  CHECK(same.mean == 19.432651);
  CHECK(same.stddev == 0);
  CHECK(same.skewness == 0);
  CHECK(same.ci95_low == 19.432651);
  CHECK(same.ci95_high == 19.432651);
  // 41 values (40 degrees of freedom): past the table, t(0.975, 40) = 2.021075.
  std::vector<double> v;
  for (int i = 0; i <= 40; ++i) v.push_back(i);
  const Summary big = summarize(v);
  CHECK(big.skewness == 0);
  CHECK((big.ci95_high - big.mean) / (big.stddev / std::sqrt(41.0)) == Approx(2.021075).epsilon(1e-4));
  CHECK(big.ci95_high - big.mean == big.mean - big.ci95_low);
}

TEST_CASE("Sweep: a skewed sample gets Hall's skewness-corrected t interval", "[planner]") {
  // Nine 1s and an 11 (10 values, the fewest corrected): mean 2, deviations -1 (x9) and 9, sum of squares
  // 90, sum of cubes 720, s = sqrt(10), sample skewness G1 = 10/(9*8) * 720 / s^3 = sqrt(10).
  std::vector<double> v(9, 1.0);
  v.push_back(11);
  const Summary s = summarize(v);
  const double sd = std::sqrt(10.0);
  const double g = 10.0 / 72.0 * 720.0 / (sd * sd * sd);
  CHECK(s.mean == 2);
  CHECK(s.skewness == Approx(g).epsilon(1e-14));
  CHECK(s.skewness == Approx(std::sqrt(10.0)).epsilon(1e-14));
  // Hall (1992), written out: f^-1(y) = (3/g)(cbrt(1 + g y) - 1), the ends are
  // mean - s f^-1(+-t/sqrt(n) - g/(6n)). Here 1 + g y < 0 at the upper end: the real cube root.
  const double t = 2.262157;  // t(0.975, 9)
  const double rn = std::sqrt(10.0);
  const auto f_inverse = [&](double y) { return 3 / g * (std::cbrt(1 + g * y) - 1); };
  const double low = 2 - sd * f_inverse(t / rn - g / 60);
  const double high = 2 - sd * f_inverse(-t / rn - g / 60);
  CHECK(s.ci95_low == Approx(low).epsilon(1e-12));
  CHECK(s.ci95_high == Approx(high).epsilon(1e-12));
  // The same ends worked in Python (float64), with the t interval -0.2622..4.2622 for comparison: the
  // corrected interval leans toward the long right tail.
  CHECK(s.ci95_low == Approx(0.6278229650696376).epsilon(1e-12));
  CHECK(s.ci95_high == Approx(8.378942487462169).epsilon(1e-12));
  // The defining property: at either end, Hall's statistic T = sqrt(n)(W + g W^2/3 + g^2 W^3/27 + g/(6n)),
  // W = (mean - mu)/s, is -+t.
  const auto hall_t = [&](double mu) {
    const double w = (2 - mu) / sd;
    return rn * (w + g * w * w / 3 + g * g * w * w * w / 27 + g / 60);
  };
  CHECK(hall_t(s.ci95_low) == Approx(t).epsilon(1e-12));
  CHECK(hall_t(s.ci95_high) == Approx(-t).epsilon(1e-12));
  // Mirroring the sample mirrors the interval; shifting and scaling it shifts and scales the interval.
  std::vector<double> mirrored, scaled;
  for (double x : v) mirrored.push_back(-x), scaled.push_back(100 + 2 * x);
  const Summary m = summarize(mirrored);
  CHECK(m.skewness == Approx(-g).epsilon(1e-14));
  CHECK(m.ci95_low == Approx(-s.ci95_high).epsilon(1e-12));
  CHECK(m.ci95_high == Approx(-s.ci95_low).epsilon(1e-12));
  const Summary sc = summarize(scaled);
  CHECK(sc.skewness == Approx(g).epsilon(1e-12));
  CHECK(sc.ci95_low == Approx(100 + 2 * s.ci95_low).epsilon(1e-12));
  CHECK(sc.ci95_high == Approx(100 + 2 * s.ci95_high).epsilon(1e-12));
}

TEST_CASE(
    "Sweep: fewer than 10 values get the plain t interval, their skewness reported but not corrected for",
    "[planner]") {
  // {1, 2, 3, 10}: mean 4, deviations -3, -2, -1, 6, sum of squares 50, sum of cubes 180, s = sqrt(50/3),
  // G1 = 4/(3*2) * 180 / s^3 = 1.7636 (the same in Python). The t interval: 4 -+ t(0.975, 3) s / 2.
  const Summary s = summarize({1, 2, 3, 10});
  const double sd = std::sqrt(50.0 / 3.0);
  CHECK(s.skewness == Approx(1.7636326148038879).epsilon(1e-14));
  CHECK(s.ci95_low == Approx(4 - 3.182446 * sd / 2).epsilon(1e-12));
  CHECK(s.ci95_high == Approx(4 + 3.182446 * sd / 2).epsilon(1e-12));
  CHECK(s.ci95_low == Approx(-2.4961).epsilon(1e-4));
  // Three runs of a right-skewed makespan whose sample skewness came out negative (-0.71): Hall's
  // correction put the low end at 523.5, below every run by 4,000 s; the t interval is 3,754..6,604.
  const Summary few = summarize({4564.8, 5272.7, 5700.7});
  CHECK(few.skewness < -0.7);
  CHECK(few.ci95_low == Approx(few.mean - 4.302653 * few.stddev / std::sqrt(3.0)).epsilon(1e-12));
  CHECK(few.ci95_high == Approx(few.mean + 4.302653 * few.stddev / std::sqrt(3.0)).epsilon(1e-12));
  CHECK(few.ci95_low == Approx(3754.3).epsilon(1e-4));
}

TEST_CASE("Sweep: the corrected interval is continuous at zero skewness", "[planner]") {
  // A nearly symmetric sample: a skewness of about 1e-9 must move the ends by about that much, with no
  // cancellation in (3/g)(cbrt(1 + g y) - 1) and no jump from the exact t interval.
  // Ten values, the fewest corrected.
  const Summary sym = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  const Summary near = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10 + 1e-9});
  CHECK(sym.skewness == 0);
  CHECK(near.skewness != 0);
  CHECK(std::abs(near.skewness) < 1e-8);
  CHECK(near.ci95_low == Approx(sym.ci95_low).margin(1e-8));
  CHECK(near.ci95_high == Approx(sym.ci95_high).margin(1e-8));
  const double q = 2.262157 / std::sqrt(10.0);  // t(0.975, 9)
  CHECK(sym.ci95_low == 5.5 - sym.stddev * q);
  CHECK(sym.ci95_high == 5.5 + sym.stddev * q);
}

TEST_CASE("Sweep: --vary values split at top-level commas", "[planner]") {
  const Dimension d = parse_dimension("cluster.node_pools[n].count=1, 2,3");
  CHECK(d.path == "cluster.node_pools[n].count");
  CHECK(d.values == std::vector<std::string>{"1", "2", "3"});
  CHECK(parse_dimension("a={x: 1, y: 2},[1, 2],'p,q'").values ==
        std::vector<std::string>{"{x: 1, y: 2}", "[1, 2]", "'p,q'"});
  // An escaped quote inside double quotes does not end them (it made one value of two).
  CHECK(parse_dimension(R"(a={accel: "a\"b"},{accel: a100},"x\\",y)").values ==
        std::vector<std::string>{R"({accel: "a\"b"})", "{accel: a100}", R"("x\\")", "y"});
  CHECK(parse_dimension("a='it''s, here',z").values == std::vector<std::string>{"'it''s, here'", "z"});
  CHECK(error_of([] { parse_dimension("a.b"); }) ==
        "--vary a.b: expected PATH=V1,V2,..., as in cluster.node_pools[cpu].count=10,20,40");
  CHECK(error_of([] { parse_dimension("a=1,,2"); }) == "--vary a=1,,2: a: value 2 of 3 is empty");
}

TEST_CASE("Sweep: one that would hold more plans and runs than its memory is refused before it unrolls them",
          "[planner]") {
  // Three loop widths (10, 20, 30 tasks: three plans, 60 tasks) on 1 or 2 nodes (the node count shares the
  // plan); K simulations at a time of up to 30 tasks: 60 x 24 + K x 30 x 100 bytes.
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.count=10,20,30"),
                     parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.replications = 1;
  const auto runs = static_cast<std::uint64_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
  const std::uint64_t need = 60 * 24 + runs * 30 * 100;
  spec.memory_bytes = need;
  CHECK(run_sweep_text(kLimited, "limited.yaml", spec).configs.size() == 6);
  spec.memory_bytes = need - 1;
  char expected[512];
  std::snprintf(
      expected, sizeof expected,
      "--vary: the sweep would hold 3 plans of 60 tasks in all (one for each pipeline its configurations "
      "make, all at once) and simulate %llu at a time of up to 30 tasks: about %.3g GB, more than the "
      "%.3g GB of memory given (SweepSpec::memory_bytes); sweep fewer values at a time (--shard I/N runs "
      "one slice, merge joins the slices)",
      static_cast<unsigned long long>(runs), static_cast<double>(need) / 1e9,
      static_cast<double>(need - 1) / 1e9);
  CHECK(error_of([&] { (void)run_sweep_text(kLimited, "limited.yaml", spec); }) == expected);
  // A slice holds its own configurations' plans only: slice 0 of 3 runs configurations 0 and 3 (10 tasks on
  // 1 node, 20 on 2): two plans, 30 tasks, 720 + K x 2000 bytes.
  spec.shard = Shard{0, 3};
  CHECK(run_sweep_text(kLimited, "limited.yaml", spec).configs.size() == 2);
}

TEST_CASE("Sweep: exact makespans and costs, and the cheapest configuration that meets the deadline",
          "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
  spec.replications = 3;
  spec.deadline_s = 30;
  const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(r.configs.size() == 8);
  CHECK(r.scenario == "limited");
  CHECK(r.base_seed == 5);
  const double makespans[] = {100, 50, 20, 10};
  for (std::size_t c = 0; c < 8; ++c) {
    const ConfigResult& cr = r.configs[c];
    const double nodes = c < 4 ? 1 : 2;
    const double m = makespans[c % 4];
    INFO("configuration " << c);
    CHECK(cr.values == std::vector<std::string>{c < 4 ? "1" : "2", spec.dimensions[1].values[c % 4]});
    CHECK(cr.makespan_s.mean == m);
    CHECK(cr.makespan_s.ci95_low == m);  // no noise: every replication the same
    CHECK(cr.quantile_makespan_s == m);
    CHECK(cr.cost.mean == Approx(nodes * m * 0.001).epsilon(1e-12));  // every node billed for the run
    CHECK(cr.p_meets_deadline == (m <= 30 ? 1.0 : 0.0));
    CHECK(cr.meets == (m <= 30));
  }
  REQUIRE(r.recommended);
  CHECK(*r.recommended == 3);  // one node, parallelism 10: 10 s for 0.01
  std::ostringstream table;
  print_sweep(table, r);
  // 3 replications: the intervals are plain t intervals, and the table says so under its heading.
  CHECK(table.str().find(
            "(seeds 5..7, the same for every configuration)\n"
            "note: with fewer than 10 replications the 95% intervals are plain Student-t "
            "intervals, wide and not corrected for the makespan's skew (too few runs to estimate "
            "it); -r 10 or more corrects them, -r 20 or more narrows them\n\n") != std::string::npos);
  for (const int reps : {1, 10}) {
    SweepResult other = r;
    other.replications = reps;
    std::ostringstream text;
    print_sweep(text, other);
    CHECK(text.str().find("note: with fewer than") == std::string::npos);
  }
  CHECK(table.str().find(
            "cheapest configuration with p95 makespan within the deadline (30 s): "
            "cluster.node_pools[n].count=1, pipeline.steps[w].parallel_for.parallelism=10; mean cost "
            "0.01, p95 makespan 10.0 s") != std::string::npos);
  SECTION("sweep.json reads back to the same result") {
    std::ostringstream json;
    write_sweep_json(json, r);
    std::istringstream in(json.str());
    const SweepResult back = read_sweep_json(in, "sweep.json");
    std::ostringstream again;
    write_sweep_json(again, back);
    CHECK(again.str() == json.str());
    std::istringstream bad("{\"scenario\": \"x\"}");
    CHECK(error_of([&] { read_sweep_json(bad, "bad/sweep.json"); }) ==
          "bad/sweep.json:1:1: replications: missing");
  }
  SECTION("an edited sweep.json: each bad value at its line:col, with its field") {
    std::ostringstream out;
    write_sweep_json(out, r);
    const std::string good = out.str();
    // The first occurrence of `from` replaced by `to`; the message must name the place where `to` stands.
    const auto error_with = [&](const std::string& from, const std::string& to) {
      std::string text = good;
      const std::size_t at = text.find(from);
      INFO(from);
      REQUIRE(at != std::string::npos);
      text.replace(at, from.size(), to);
      std::istringstream in(text);
      return std::pair{error_of([&] { read_sweep_json(in, "s/sweep.json"); }),
                       "s/sweep.json:" + testing::line_col(text, at) + ": "};
    };
    const auto check = [&](const std::string& from, const std::string& to, std::size_t shift,
                           const std::string& message) {
      auto [err, place] = error_with(from, to);
      // `shift`: the value starts that many characters into `to`.
      const std::size_t colon = place.rfind(':', place.size() - 3);
      place = place.substr(0, colon + 1) + std::to_string(std::stoul(place.substr(colon + 1)) + shift) + ": ";
      CHECK(err == place + message);
    };
    check("\"replications\": 3", "\"replications\": \"x\"", 16,
          "replications: expected an integer, got \"x\"");
    check("\"replications\": 3", "\"replications\": 0", 16,
          "replications: expected an integer from 1 to 100000, got 0");
    check("\"quantile\": 95.0", "\"quantile\": 400", 12, "quantile: must be in (0, 100], got 400");
    check("\"mean\": ", "\"mean\": \"s\", \"was\": ", 8,
          "configurations[0].makespan_s.mean: expected a number, got \"s\"");
    check("\"p95\": ", "\"p95\": -1, \"was\": ", 7,
          "configurations[0].makespan_s.p95: must be at least 0, got -1");
    check("\"runs_with_failed_tasks\": 0", "\"runs_with_failed_tasks\": 4", 26,
          "configurations[0].runs_with_failed_tasks: expected an integer from 0 to 3, got 4");
    check("\"simulations\": ", "\"simulations\": -1, \"was\": ", 15,
          "simulations: expected an integer from 0 to 18446744073709551615, got -1");
    check("\"1\",", "1,", 0, "dimensions[0].values[0]: expected a string, got 1");
    check("\"recommended\": 3", "\"recommended\": 8", 15,
          "recommended: is not an index into configurations (there are 8), got 8");
    // A paired interval's end may be below 0 (it is not a makespan): read as it is.
    std::string text = good;
    const std::size_t at = text.find("\"ci95_low\": ") + 12;
    text.replace(at, text.find(',', at) - at, "-5");
    std::istringstream in(text);
    CHECK(read_sweep_json(in, "s/sweep.json").configs[0].makespan_s.ci95_low == -5);
  }
  SECTION("a deadline nobody meets") {
    spec.deadline_s = 5;
    CHECK_FALSE(run_sweep_text(kLimited, "limited.yaml", spec).recommended);
  }
  SECTION("no deadline, no recommendation") {
    spec.deadline_s.reset();
    CHECK_FALSE(run_sweep_text(kLimited, "limited.yaml", spec).recommended);
  }
}

TEST_CASE("Sweep: configurations share their random numbers, and threads change nothing", "[planner]") {
  // Noisy durations; the price does not change the schedule, so with common random numbers every
  // configuration has the very same makespans.
  const std::string noisy = kLimited + "";
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].duration={base: 10s, noise: {lognormal_sigma: 0.5}}"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].price_per_hour=1,2,3")};
  spec.replications = 8;
  const SweepResult r = run_sweep_text(noisy, "noisy.yaml", spec);
  CHECK(r.configs[0].makespan_s.stddev > 0);
  for (const ConfigResult& cr : r.configs) {
    CHECK(cr.makespan_s.mean == r.configs[0].makespan_s.mean);
    CHECK(cr.makespan_s.p95 == r.configs[0].makespan_s.p95);
  }
  CHECK(r.configs[2].cost.mean == Approx(3 * r.configs[0].cost.mean).epsilon(1e-12));
  const std::string parallel = json(r);
  tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  CHECK(json(run_sweep_text(noisy, "noisy.yaml", spec)) == parallel);
}

TEST_CASE("Sweep: overlays reach every configuration, before --set and --vary", "[planner]") {
  SweepSpec spec;
  // 20 s tasks, and a parallelism the --vary values replace.
  spec.overlays = {{"slow.yaml",
                    "pipeline: {steps: [{name: w, duration: {base: 20s}, parallel_for: "
                    "{parallelism: 7}}]}\ncluster: {node_pools: [{name: n, price_per_hour: 7.2}]}\n"}};
  spec.sets = {"cluster.node_pools[n].price_per_hour=36"};
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
  spec.replications = 2;
  const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(r.configs.size() == 4);
  const double makespans[] = {200, 100, 40, 20};
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("configuration " << c);
    CHECK(r.configs[c].makespan_s.mean == makespans[c]);
    CHECK(r.configs[c].cost.mean == Approx(makespans[c] * 0.01).epsilon(1e-12));  // the --set price
  }
  spec.overlays = {{"bad.yaml", "pipeline: {steps: [{name: w, duration: {base: -1s}}]}\n"}};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "bad.yaml:1:47: pipeline.steps[0].duration.base: must be >= 0, got -1s");
}

TEST_CASE("Sweep: --vary cluster.autoscaler.scale_down_delay_after_add, exact costs", "[planner]") {
  // The case of tests/sim/simulator_test.cpp ("a scale-up delays the removal of nodes idle before it")
  // as a file: scale-ups at 10 s and 110 s; the idle node of pool a is due at 60 s and goes at
  // max(60, 110 + d) for these delays d (the scale-up at 110 comes before 10 + d is reached), or at 60.
  // Billed node-seconds: pool a 1055 + its removal time at 0.001 a second, pool b 1650 at 0.002.
  const std::string text =
      "name: delay\n"
      "seed: 5\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: x, duration: {base: 100s}, resources: {cpu: 1}}\n"
      "    - {name: big, duration: {base: 1000s}, resources: {cpu: 2}}\n"
      "    - {name: big2, after: [x], duration: {base: 500s}, resources: {cpu: 2}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: a, cpu: 1, memory: 64Gi, count: 2, price_per_hour: 3.6,\n"
      "       autoscaling: {min: 1, max: 2, scale_down_idle: 60s}}\n"
      "    - {name: b, cpu: 2, memory: 64Gi, count: 0, price_per_hour: 7.2,\n"
      "       autoscaling: {min: 0, max: 2, scale_up_delay: 10s, boot_time: 45s, scale_down_idle: 60s}}\n";
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.autoscaler.scale_down_delay_after_add=0s,30s,5m,10m")};
  spec.replications = 2;
  const SweepResult r = run_sweep_text(text, "delay.yaml", spec);
  REQUIRE(r.configs.size() == 4);
  // Removal of the idle node of pool a: 60, 60, 410 (110 + 300), 710 (110 + 600).
  const double removed[] = {60, 60, 410, 710};
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("configuration " << c);
    CHECK(r.configs[c].makespan_s.mean == 1055);
    CHECK(r.configs[c].cost.mean == Approx((1055 + removed[c]) * 0.001 + 1650 * 0.002).epsilon(1e-12));
  }
  // 4.415, 4.415, 4.765, 5.065.
  CHECK(r.configs[0].cost.mean == Approx(4.415).epsilon(1e-12));
  CHECK(r.configs[3].cost.mean == Approx(5.065).epsilon(1e-12));
  // The simulator reads the delay: no two configurations share a simulation.
  CHECK(r.distinct_simulations == 4 * 2);
  // A bad value is named by the --vary that gave it.
  spec.dimensions = {parse_dimension("cluster.autoscaler.scale_down_delay_after_add=0s,-1s")};
  CHECK(error_of([&] { run_sweep_text(text, "delay.yaml", spec); }) ==
        "--vary cluster.autoscaler.scale_down_delay_after_add=0s,-1s: "
        "cluster.autoscaler.scale_down_delay_after_add: value -1s: must be >= 0, got -1s");
}

TEST_CASE("Sweep: bad input names what is wrong", "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[gpu].count=1,2")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[gpu].count=1,2: cluster.node_pools[gpu]: no element named \"gpu\" "
        "in cluster.node_pools (names: n)");
  // A node shape varied as a whole pool element must keep its name for a later --vary to select it.
  spec.dimensions = {parse_dimension("cluster.node_pools[n]={cpu: 8, memory: 32Gi},{cpu: 32, memory: 128Gi}"),
                     parse_dimension("cluster.node_pools[n].count=1,2")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].count=1,2: cluster.node_pools[n]: no element named \"n\" in "
        "cluster.node_pools; cluster.node_pools[0] has no name since cluster.node_pools[n]={cpu: 8, memory: "
        "32Gi} replaced it: give `name: n` in that value to keep it");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,-1")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.node_pools[n].count=1,-1: cluster.node_pools[0].count: value -1: must be >= 0, got -1");
  // A fault of the path is the same for every value: no value is named.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].cont=1,2")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].cont=1,2: cluster.node_pools[0].cont: unknown key \"cont\" (did you "
        "mean \"count\"?)");
  // Nor is the way a --vary lists values a hint for it.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].cont=[1,2]")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].cont=[1,2]: cluster.node_pools[0].cont: unknown key \"cont\" (did you "
        "mean \"count\"?)");
  // One inside a value is that value's; a mapping with spaces is one value, not several.
  spec.dimensions = {parse_dimension("cluster.scheduler={polcy: spread}")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.scheduler={polcy: spread}: cluster.scheduler.polcy: value {polcy: spread}: unknown key "
      "\"polcy\" (did you mean \"policy\"?)");
  // One value that reads as several: how a --vary lists values.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=[1,2]")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].count=[1,2]: cluster.node_pools[0].count: value [1,2]: expected an "
        "integer, "
        "got a list (a --vary separates its values with commas, no brackets: PATH=10,20,40)");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1 2")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].count=1 2: cluster.node_pools[0].count: value 1 2: expected an "
        "integer, got "
        "\"1 2\" (a --vary separates its values with commas, no brackets: PATH=10,20,40)");
  // A --set of the sweep's own is still named as such.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.sets = {"cluster.node_pools[n].cpu=0"};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--set cluster.node_pools[n].cpu=0: cluster.node_pools[0].cpu: must be > 0, got 0");
  spec.sets.clear();
  // A field varied twice, or a value given twice.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("cluster.node_pools[n].count=3,4")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.node_pools[n].count=3,4: cluster.node_pools[n].count: this field is varied twice, here "
      "and by --vary cluster.node_pools[n].count=1,2; give its values in one --vary");
  // In two spellings (by name and by index): the same, and what both set.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("cluster.node_pools[0].count=3,4")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.node_pools[0].count=3,4: cluster.node_pools[0].count: this field is varied twice, here "
      "and by --vary cluster.node_pools[n].count=1,2 (both set cluster.node_pools[0].count); give its values "
      "in one --vary");
  // A mapping and a field inside it, in either order: refused (the one given later would override part of
  // the other, and the rows' labels would say values that were never simulated).
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for={count: 10, parallelism: 5},{count: 10, "
                                     "parallelism: 2}"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,3")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary pipeline.steps[w].parallel_for.parallelism=1,3: pipeline.steps[w].parallel_for.parallelism: "
        "this "
        "--vary and --vary pipeline.steps[w].parallel_for={count: 10, parallelism: 5},{count: 10, "
        "parallelism: 2} "
        "overlap (pipeline.steps[0].parallel_for.parallelism is inside pipeline.steps[0].parallel_for): one "
        "would "
        "override part of the other in every configuration, which would not be what its label says; vary the "
        "mapping alone, or the fields inside it");
  std::swap(spec.dimensions[0], spec.dimensions[1]);
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); })
            .find("pipeline.steps[w].parallel_for: this --vary and --vary "
                  "pipeline.steps[w].parallel_for.parallelism=1,3 "
                  "overlap (") != std::string::npos);
  // A mapping whose values leave the key out, then that key inside it: crossed (docs/planner.md's pools).
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for={count: 10},{count: 20}"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,5")};
  const SweepResult crossed = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(crossed.configs.size() == 4);
  CHECK(crossed.configs[0].makespan_s.mean == Approx(100.0));  // 10 tasks one at a time
  CHECK(crossed.configs[3].makespan_s.mean == Approx(40.0));   // 20 tasks five at a time
  // A --set inside a varied mapping would be lost; a --set of a mapping with a --vary inside it is fine.
  spec.dimensions = {
      parse_dimension("pipeline.steps[w].parallel_for={count: 10, parallelism: 5},{count: 10, "
                      "parallelism: 2}")};
  spec.sets = {"pipeline.steps[w].parallel_for.parallelism=4"};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary pipeline.steps[w].parallel_for={count: 10, parallelism: 5},{count: 10, parallelism: 2}: "
      "pipeline.steps[w].parallel_for: each value of this --vary replaces the whole of "
      "pipeline.steps[0].parallel_for, and with it pipeline.steps[0].parallel_for.parallelism that --set "
      "pipeline.steps[w].parallel_for.parallelism=4 gives, which no configuration would use; give it in the "
      "--vary's values");
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,5")};
  spec.sets = {"pipeline.steps[w].parallel_for={count: 20, parallelism: 2}"};
  const SweepResult both = run_sweep_text(kLimited, "limited.yaml", spec);
  REQUIRE(both.configs.size() == 2);
  CHECK(both.configs[0].makespan_s.mean == Approx(200.0));  // 20 tasks of 10 s one at a time
  CHECK(both.configs[1].makespan_s.mean == Approx(40.0));   // five at a time
  spec.sets.clear();
  // The seed is not a setting: every configuration runs the same seeds.
  spec.dimensions = {parse_dimension("seed=5,100")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary seed=5,100: seed: the seed is not a setting to compare: every configuration runs the same "
        "seeds "
        "(--seed, then one more per -r run); leave it out of --vary");
  // A --vary of 1,000 values is named by its first 100 characters, not repeated whole.
  std::string many = "cluster.node_pools[n].count=-1";
  for (int i = 1; i < 1000; ++i) many += "," + std::to_string(i);
  spec.dimensions = {parse_dimension(many)};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary " + many.substr(0, 100) + "... (" + with_commas(many.size() - 100) +
            " more characters): cluster.node_pools[0].count: value -1: must be >= 0, got -1");
  // A value of 10,000 characters, given twice: the value too is cut.
  const std::string v(10'000, '7');
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=" + v + "," + v)};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].count=" + v.substr(0, 72) +
            "... (19,929 more characters): cluster.node_pools[n].count: value " + v.substr(0, 100) +
            "... (9,900 more characters) is given twice");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,1")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].count=1,2,1: cluster.node_pools[n].count: value 1 is given twice");
  // Values that differ as text but not as settings: the same configuration twice, found once loaded.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,01")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.node_pools[n].count=1,2,01: cluster.node_pools[n].count: values 1 and 01 are the same "
      "setting (the scenario is the same with either): give it once");
  spec.dimensions = {parse_dimension("pipeline.steps[w].duration.base=10s,60s,1m"),
                     parse_dimension("cluster.node_pools[n].memory=64Gi,65536Mi")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary cluster.node_pools[n].memory=64Gi,65536Mi: cluster.node_pools[n].memory: values 64Gi and "
        "65536Mi are the same setting (the scenario is the same with either): give it once");
  // Other prices are other configurations (the simulations are shared, the costs are not).
  spec.dimensions = {parse_dimension("cluster.node_pools[n].price_per_hour=3.6,3.60,7")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--vary cluster.node_pools[n].price_per_hour=3.6,3.60,7: cluster.node_pools[n].price_per_hour: values "
      "3.6 and 3.60 are the same setting (the scenario is the same with either): give it once");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].price_per_hour=3.6,7")};
  CHECK(run_sweep_text(kLimited, "limited.yaml", spec).configs.size() == 2);
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.replications = 0;
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--replications: must be from 1 to 100000, got 0");
  // 1,000^3 combinations: refused before any is made.
  std::string thousand = "=1";
  for (int i = 2; i <= 1000; ++i) thousand += "," + std::to_string(i);
  spec.replications = 1;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count" + thousand),
                     parse_dimension("cluster.node_pools[n].cpu" + thousand),
                     parse_dimension("cluster.node_pools[n].price_per_hour" + thousand)};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--vary: the combinations of the values times 1 replications make more than 10,000,000 runs");
}

namespace {

// Four 10 s tasks that each fill a 16-core node (one per node at a time), then a 10 s step on one core;
// nodes billed 3.6 an hour (0.001 a second) each, for the whole run. With n nodes and parallelism p,
// min(n, p) tasks run at once: rounds = ceil(4 / min(n, p)), makespan = 10 * rounds + 10 s, and
// cost = n * makespan * 0.001.
const std::string kFanout =
    "name: fanout\n"
    "seed: 3\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 4}\n"
    "      duration: {base: 10s}\n"
    "      resources: {cpu: 16}\n"
    "    - name: merge\n"
    "      after: [w]\n"
    "      duration: {base: 10s}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

// kFanout with each w task failing with probability p (no retries).
std::string fanout_failing(const std::string& p) {
  std::string yaml = kFanout;
  const std::string line = "      resources: {cpu: 16}\n";
  yaml.replace(yaml.find(line), line.size(), line + "      failure: {p: " + p + "}\n");
  return yaml;
}

std::string table(const SweepResult& r) {
  std::ostringstream out;
  print_sweep(out, r);
  return out.str();
}

std::string csv(const SweepResult& r) {
  std::ostringstream out;
  write_sweep_csv(out, r);
  return out.str();
}

std::string tail_from(const std::string& text, const std::string& start) {
  const auto at = text.find(start);
  return at == std::string::npos ? "(\"" + start + "\" not found in:\n" + text + ")" : text.substr(at);
}

// The line under the nearest configuration when its critical path (`seconds`) is over the deadline.
std::string path_over(const std::string& seconds) {
  return "its critical path (mean run times on its fastest nodes, no overheads) is " + seconds +
         " s, over the deadline: more nodes or higher limits cannot meet it, only shorter tasks on that path "
         "(finer shards, faster nodes)\n";
}

}  // namespace

TEST_CASE("Sweep: the Pareto front of cost against the quantile makespan, printed and in sweep.json",
          "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,4")};
  spec.replications = 2;
  spec.deadline_s = 25;
  const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  // n = 1: 4 rounds, 50 s, 0.05; n = 2: 2 rounds, 30 s, 0.06; n = 3: 2 rounds, 30 s, 0.09;
  // n = 4: 1 round, 20 s, 0.08. By cost: 0.05 (50 s), 0.06 (30 s, faster), 0.08 (20 s, faster),
  // 0.09 (30 s, beaten by 0.06 at 30 s): the front is n = 1, 2, 4.
  const double makespans[] = {50, 30, 30, 20};
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("configuration " << c);
    CHECK(r.configs[c].quantile_makespan_s ==
          Approx(makespans[c]).epsilon(1e-12));  // ns * 1e-9: 30.000000000000004
    CHECK(r.configs[c].cost.mean == Approx(static_cast<double>(c + 1) * makespans[c] * 0.001).epsilon(1e-12));
  }
  CHECK(r.pareto == std::vector<std::size_t>{0, 1, 3});
  REQUIRE(r.recommended);
  CHECK(*r.recommended == 3);  // only 20 s is within 25 s
  CHECK_FALSE(r.nearest);
  CHECK(tail_from(table(r), "\nPareto front") ==
        "\nPareto front of mean cost against p95 makespan (3 of 4 configurations: none is both cheaper and "
        "faster):\n"
        "  cluster.node_pools[n].count=1: cost 0.05, p95 50.0 s\n"
        "  cluster.node_pools[n].count=2: cost 0.06, p95 30.0 s\n"
        "  cluster.node_pools[n].count=4: cost 0.08, p95 20.0 s\n");
  const std::string j = json(r);
  CHECK(j.find("\"pareto_front\": [\n    0,\n    1,\n    3\n  ]") != std::string::npos);
  const std::string c = csv(r);
  CHECK(c.find(",recommended,pareto,finished_cost_mean,p_meets_deadline_ci95_low,p_meets_deadline_ci95_high,"
               "infeasible,quantile_on_failed_run\n") != std::string::npos);
  // n = 1: on the front, not recommended; n = 4: both. Then the columns added since.
  CHECK(c.find(",false,true,0.05,0,0.6576197724933469,,false\n") != std::string::npos);
  CHECK(c.find(",true,true,0.08,0.34238022750665303,1,,false\n") != std::string::npos);
}

TEST_CASE("Sweep: the scenario is checked with each configuration's values, never without them",
          "[planner]") {
  // w asks for 32 CPUs, which only the --vary's larger nodes hold: the sweep runs, and its first
  // configuration names it.
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].resources.cpu=32"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].cpu=32,64")};
  spec.replications = 1;
  CHECK(first_configuration(kFanout, "fanout.yaml", spec).name == "fanout");
  CHECK(run_sweep_text(kFanout, "fanout.yaml", spec).configs.size() == 2);
  // A configuration that it does not fit cannot run: said so, in any place, and the others are swept.
  const std::string fit =
      "step \"w\" asks for cpu 32, memory 0, gpu 0, more than any node it may use can hold (largest: pool "
      "\"n\" with cpu 16, memory 64Gi, gpu 0)";
  for (const char* values : {"cluster.node_pools[n].cpu=64,16", "cluster.node_pools[n].cpu=16,64"}) {
    spec.dimensions = {parse_dimension(values)};
    const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
    const std::size_t small = values[std::strlen(values) - 1] == '6' ? 1 : 0;
    CHECK(r.configs[small].infeasible == fit);
    CHECK(r.configs[1 - small].infeasible.empty());
    CHECK(first_configuration(kFanout, "fanout.yaml", spec).name == "fanout");
  }
  // --max-tasks holds for every configuration (the sweep used the default limit).
  spec.sets.clear();
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.count=4,8")};
  spec.max_tasks = 5;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--vary pipeline.steps[w].parallel_for.count=4,8: pipeline.steps[0].parallel_for.count: value 8: the "
        "pipeline unrolls to 9 tasks (about 1 MiB of memory to simulate); the limit is 5 (--max-tasks raises "
        "it; `explain` counts without unrolling)");
}

TEST_CASE("Sweep: runs whose tasks failed neither meet the deadline nor put a configuration on the front",
          "[planner]") {
  // failure.p 1: every w fails once (no retries) and the pipeline ends after the first round of w, early
  // and cheap: 40 s (one node: 4 rounds of 10 s) and 10 s (4 nodes), 0.04 each. Without failures: 50 s,
  // 0.05 and 20 s, 0.08. The failing ones would beat both.
  std::string failing = fanout_failing("1");
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].failure.p=1,0"),
                     parse_dimension("cluster.node_pools[n].count=1,4")};
  spec.replications = 2;
  spec.deadline_s = 45;
  SweepResult r = run_sweep_text(failing, "failing.yaml", spec);
  REQUIRE(r.configs.size() == 4);
  const double makespans[] = {40, 10, 50, 20}, p_meets[] = {0, 0, 0, 1};
  const int failed_runs[] = {2, 2, 0, 0};
  for (std::size_t c = 0; c < 4; ++c) {
    INFO("configuration " << c);
    CHECK(r.configs[c].quantile_makespan_s == Approx(makespans[c]).epsilon(1e-12));
    CHECK(r.configs[c].runs_with_failed_tasks == failed_runs[c]);
    CHECK(r.configs[c].p_meets_deadline == p_meets[c]);  // 10 s and 40 s are by 45 s, but tasks failed
  }
  CHECK(r.pareto == std::vector<std::size_t>{2, 3});
  REQUIRE(r.recommended);
  CHECK(*r.recommended == 3);
  CHECK(tail_from(table(r), "\nPareto front") ==
        "\nPareto front of mean cost against p95 makespan (2 of 4 configurations: none is both cheaper and "
        "faster; 2 left out, their p95 a run whose tasks failed):\n"
        "  pipeline.steps[w].failure.p=0, cluster.node_pools[n].count=1: cost 0.05, p95 50.0 s\n"
        "  pipeline.steps[w].failure.p=0, cluster.node_pools[n].count=4: cost 0.08, p95 20.0 s\n");
  // Every configuration failing: no front, said so.
  for (ConfigResult& c : r.configs) c.runs_with_failed_tasks = 1;
  finish_sweep(r);
  CHECK(r.pareto.empty());
  CHECK(tail_from(table(r), "\nNo Pareto front") ==
        "\nNo Pareto front: every configuration had more runs with failed tasks than its p95 lets through\n");
}

TEST_CASE("Sweep: when nothing meets the deadline, the nearest configuration and what it would take",
          "[planner]") {
  SECTION("one field") {
    SweepSpec spec;
    spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,4")};
    spec.replications = 2;
    spec.deadline_s = 15;  // the fastest is n = 4 at 20 s
    const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
    CHECK_FALSE(r.recommended);
    REQUIRE(r.nearest);
    CHECK(r.nearest->config == 3);
    CHECK(r.nearest->over_deadline_s == 5);
    REQUIRE(r.nearest->fields.size() == 1);
    CHECK(r.nearest->fields[0].trend == "falls");  // 50, 30, 30, 20: never up
    CHECK(
        tail_from(table(r), "no configuration") ==
        "no configuration has its p95 makespan within the deadline (15 s)\n"
        "nearest: cluster.node_pools[n].count=4; p95 makespan 20.0 s, 5.0 s over the deadline; mean cost "
        "0.08\n"
            // Four 10 s tasks, then one: 20 s at the least, which 4 nodes already take.
            + path_over("20.0") +
            "what it would take, one field at a time (the others held at the nearest's values):\n"
            "  cluster.node_pools[n].count: none in the range; the p95 makespan falls along the values (50.0 "
            "s "
            "at 1, 20.0 s at 4), toward the critical path (20.0 s), which this field does not shorten: this "
            "field alone will not do it\n"
            "\n"
            "Pareto front of mean cost against p95 makespan (3 of 4 configurations: none is both cheaper and "
            "faster):\n"
            "  cluster.node_pools[n].count=1: cost 0.05, p95 50.0 s\n"
            "  cluster.node_pools[n].count=2: cost 0.06, p95 30.0 s\n"
            "  cluster.node_pools[n].count=4: cost 0.08, p95 20.0 s\n");
    const std::string j = json(r);
    CHECK(
        j.find("\"nearest\": {\n    \"configuration\": 3,\n    \"over_deadline_s\": 5.0,\n    \"fields\": [\n"
               "      {\n        \"path\": \"cluster.node_pools[n].count\",\n        \"meets_at\": null,") !=
        std::string::npos);
    std::istringstream in(j);
    CHECK(json(read_sweep_json(in, "sweep.json")) == j);
  }
  SECTION("two fields: flat, falling, and the tie broken by cost") {
    SweepSpec spec;
    // kLimited: ten 10 s tasks, parallelism p on n nodes: makespan 100 / p s whatever n; cost n * m * 0.001.
    spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                       parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
    spec.replications = 3;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->config == 3);  // 10 s at n = 1 and n = 2: n = 1 is cheaper (0.01 against 0.02)
    CHECK(
        tail_from(table(r), "nearest:") ==
        "nearest: cluster.node_pools[n].count=1, pipeline.steps[w].parallel_for.parallelism=10; p95 makespan "
        "10.0 s, 5.0 s over the deadline; mean cost 0.01\n" +
            path_over("10.0") +
            "what it would take, one field at a time (the others held at the nearest's values):\n"
            "  cluster.node_pools[n].count: none in the range; no effect on the p95 makespan (10.0 s at 1 "
            "and "
            "2)\n"
            "  pipeline.steps[w].parallel_for.parallelism: none in the range; the p95 makespan falls along "
            "the "
            "values (100.0 s at 1, 10.0 s at 10), toward the critical path (10.0 s), which this field does "
            "not "
            "shorten: this field alone will not do it\n"
            "\n"
            "Pareto front of mean cost against p95 makespan (1 of 8 configurations: none is both cheaper and "
            "faster):\n"
            "  cluster.node_pools[n].count=1, pipeline.steps[w].parallel_for.parallelism=10: cost 0.01, p95 "
            "10.0 "
            "s\n");
  }
  SECTION("a critical path over the deadline: fields that do not shorten it are not told to go further") {
    SweepSpec spec;
    // kLimited at parallelism 10: its ten 10 s tasks at once, 10 s / speed; at parallelism 5, twice that.
    // The critical path is one task, 10 s / speed: 10 s at speed 1, 8 s at 1.25, over the 5 s deadline.
    spec.dimensions = {parse_dimension("cluster.node_pools[n].speed=1,1.25"),
                       parse_dimension("pipeline.steps[w].parallel_for.parallelism=5,10")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->config == 3);  // speed 1.25, parallelism 10: 8 s
    CHECK(r.configs[0].critical_path_s == 10);
    CHECK(r.configs[3].critical_path_s == 8);
    CHECK(r.nearest->fields[0].critical_path_s == std::vector<double>{10, 8});
    CHECK(r.nearest->fields[1].critical_path_s == std::vector<double>{8, 8});
    CHECK(tail_from(table(r), "nearest:")
              .starts_with(
                  "nearest: cluster.node_pools[n].speed=1.25, pipeline.steps[w].parallel_for.parallelism=10; "
                  "p95 makespan 8.0 s, 3.0 s over the deadline; mean cost "));
    CHECK(tail_from(table(r), "its critical path")
              .starts_with(
                  path_over("8.0") +
                  "what it would take, one field at a time (the others held at the nearest's values):\n"
                  // The speed shortens the path: going further may meet the deadline (1.6 would: 6.25 s).
                  "  cluster.node_pools[n].speed: none in the range; the p95 makespan falls along the values "
                  "(10.0 s at 1, 8.0 s at 1.25): try beyond 1.25\n"
                  "  pipeline.steps[w].parallel_for.parallelism: none in the range; the p95 makespan falls "
                  "along the values (16.0 s at 5, 8.0 s at 10), toward the critical path (8.0 s), which this "
                  "field does not shorten: this field alone will not do it\n"));
    // The critical paths go through sweep.json and back.
    const std::string j = json(r);
    CHECK(j.find("\"critical_path_s\": 8.0") != std::string::npos);
    std::istringstream in(j);
    const SweepResult back = read_sweep_json(in, "sweep.json");
    CHECK(back.configs[3].critical_path_s == 8);
    CHECK(json(back) == j);
  }
  SECTION("a field that falls, then levels off") {
    SweepSpec spec;
    // Ten 10 s tasks: parallelism 1, 5, 10, 20 take 100, 20, 10 and 10 s (20 has no more tasks to run).
    spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,5,10,20")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->fields[0].trend == "levels off");
    CHECK(tail_from(table(r), "  pipeline.steps[w].parallel_for.parallelism: none")
              .starts_with(
                  "  pipeline.steps[w].parallel_for.parallelism: none in the range; the p95 makespan "
                  "falls, then levels off from 10 (100.0 s at 1, 10.0 s at 10): more of this field alone "
                  "will not do it\n"));
  }
  SECTION("a makespan that rises from zero, the least a field takes: no advice to try below it") {
    // w's ten tasks, two at a time, then a 10 s step z: base 0s, 10s, 20s take 10, 60 and 110 s.
    std::string yaml = kLimited;
    const std::string cluster = "cluster:\n";
    yaml.replace(yaml.find(cluster), cluster.size(),
                 "    - name: z\n      after: [w]\n      duration: {base: 10s}\n" + cluster);
    SweepSpec spec;
    spec.dimensions = {parse_dimension("pipeline.steps[w].duration.base=0s,10s,20s")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(yaml, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->fields[0].trend == "rises");
    CHECK(
        tail_from(table(r), "  pipeline.steps[w].duration.base: none")
            .starts_with("  pipeline.steps[w].duration.base: none in the range; the p95 makespan rises along "
                         "the values (10.0 s at 0s, 110.0 s at 20s): it is lowest at 0s, the least there "
                         "is: this field alone will not do it\n"));
  }
  SECTION("every run's tasks failing: the failures, not a field, are what to look at") {
    // Every attempt fails (p 1), whatever the retries: no makespan means anything, no field helps.
    std::string failing = kLimited;
    const std::string line = "      duration: {base: 10s}\n";
    failing.replace(failing.find(line), line.size(), line + "      failure: {p: 1}\n");
    SweepSpec spec;
    spec.dimensions = {parse_dimension("pipeline.steps[w].retries.max=0,1,2")};
    spec.replications = 1;
    spec.deadline_s = 60;  // the failed runs end at 50 s: by it
    const SweepResult r = run_sweep_text(failing, "failing.yaml", spec);
    REQUIRE(r.nearest);
    const std::string t = table(r);
    CHECK_THAT(t,
               Catch::Contains("; p95 makespan none (a run whose tasks failed), tasks failed in 1 of 1 runs, "
                               "by the deadline in 0 of 1 runs (1 needed); mean cost "));
    CHECK_THAT(t,
               Catch::Contains("its runs that finished were by the deadline often enough, but tasks failed "
                               "in 1 of 1 runs, which count as late"));
    CHECK(t.find("what it would take") == std::string::npos);
    CHECK(t.find(" no (tasks failed)") != std::string::npos);
    // With a deadline of 5 s even the failed runs, which end early, ended past it: the failures are not
    // what keeps the configurations out (they were said to be), and no value's p95 is a makespan.
    spec.deadline_s = 5;
    const std::string late = table(run_sweep_text(failing, "failing.yaml", spec));
    CHECK(late.find("its runs that finished") == std::string::npos);
    CHECK(late.find("(tasks failed)") == std::string::npos);
    CHECK_THAT(late,
               Catch::Contains("  pipeline.steps[w].retries.max: none in the range; at 0, 1 and 2 the p95 "
                               "fell on a run with failed tasks (not a makespan; left out)\n"));
  }
  SECTION("values given out of order are taken along their scale") {
    SweepSpec spec;
    spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=10,5,1"),
                       parse_dimension("pipeline.steps[w].parallel_for.count=20,10,30")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    // Parallelism 10 and 10 items: 10 s, the least; 20 items: 20 s, 30 items: 30 s. Read in --vary order
    // the parallelism "rose" (try before 10) and the count was "lowest inside" at its smallest value.
    CHECK(r.nearest->config == 1);
    CHECK(r.nearest->fields[0].values == std::vector<std::string>{"1", "5", "10"});
    CHECK(r.nearest->fields[1].values == std::vector<std::string>{"10", "20", "30"});
    CHECK(
        tail_from(table(r), "  pipeline.steps[w].parallel_for.parallelism: none") ==
        "  pipeline.steps[w].parallel_for.parallelism: none in the range; the p95 makespan falls along the "
        "values (100.0 s at 1, 10.0 s at 10), toward the critical path (10.0 s), which this field does not "
        "shorten: this field alone will not do it\n"
        "  pipeline.steps[w].parallel_for.count: none in the range; the p95 makespan rises along the values "
        "(10.0 s at 10, 30.0 s at 30): try before 10\n"
        "\n"
        "Pareto front of mean cost against p95 makespan (1 of 9 configurations: none is both cheaper and "
        "faster):\n"
        "  pipeline.steps[w].parallel_for.parallelism=10, pipeline.steps[w].parallel_for.count=10: cost "
        "0.01, "
        "p95 10.0 s\n");
  }
  SECTION("a parallelism of 0 is no limit, the most there is") {
    SweepSpec spec;
    spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=0,1,5")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->fields[0].values == std::vector<std::string>{"1", "5", "0"});
    CHECK(r.nearest->fields[0].trend == "falls");
    CHECK_THAT(table(r), Catch::Contains("makespan falls along the values (100.0 s at 1, 10.0 s at 0): it is "
                                         "lowest at 0, no limit: this field alone will not do it\n"));
  }
  SECTION("values with no scale have a best, not a direction") {
    SweepSpec spec;
    spec.dimensions = {parse_dimension("pipeline.steps[w].duration={base: 20s},{base: 10s},{base: 30s}")};
    spec.replications = 1;
    spec.deadline_s = 5;
    const SweepResult r = run_sweep_text(kLimited, "limited.yaml", spec);
    REQUIRE(r.nearest);
    CHECK(r.nearest->fields[0].trend == "unordered");
    CHECK_THAT(table(r), Catch::Contains("pipeline.steps[w].duration: none in the range; the p95 makespan is "
                                         "lowest at {base: 10s} ("));
    CHECK_THAT(table(r),
               Catch::Contains(" s; these values have no order to go beyond): this field alone will "
                               "not do it\n"));
  }
}

TEST_CASE("Sweep: a known optimum, worked out by hand", "[planner]") {
  // kFanout with n nodes and parallelism p: rounds = ceil(4 / min(n, p)), makespan = 10 * rounds + 10,
  // cost = n * makespan * 0.001 (p = 0: no limit).
  //   n\p      1            2            4            0
  //   1   50 s 0.05    50 s 0.05    50 s 0.05    50 s 0.05
  //   2   50 s 0.10    30 s 0.06    30 s 0.06    30 s 0.06
  //   3   50 s 0.15    30 s 0.09    30 s 0.09    30 s 0.09
  //   4   50 s 0.20    30 s 0.12    20 s 0.08    20 s 0.08
  // Deadline 35 s: 2 rounds at most, min(n, p) >= 2; the cheapest is 0.06 at n = 2, p = 2, 4 or 0, all
  // 30 s: the first in order, n = 2, p = 2 (configuration 1 * 4 + 1 = 5). Deadline 25 s: only n = 4,
  // p = 4 or 0 (0.08): configuration 14. Both searches say so.
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,4"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,4,0")};
  spec.replications = 4;
  for (const Search search : {Search::grid, Search::automatic}) {
    INFO((search == Search::grid ? "grid" : "auto"));
    spec.search = search;
    spec.deadline_s = 35;
    SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
    REQUIRE(r.recommended);
    CHECK(r.configs[*r.recommended].values == std::vector<std::string>{"2", "2"});
    CHECK(r.configs[*r.recommended].cost.mean == Approx(0.06).epsilon(1e-12));
    CHECK(r.configs[*r.recommended].quantile_makespan_s == Approx(30).epsilon(1e-12));
    if (search == Search::grid) CHECK(*r.recommended == 5);
    spec.deadline_s = 25;
    r = run_sweep_text(kFanout, "fanout.yaml", spec);
    REQUIRE(r.recommended);
    CHECK(r.configs[*r.recommended].values == std::vector<std::string>{"4", "4"});
    CHECK(r.configs[*r.recommended].cost.mean == Approx(0.08).epsilon(1e-12));
    if (search == Search::grid) CHECK(*r.recommended == 14);
  }
}

TEST_CASE("Sweep: 1 and 2 threads, and 3 slices merged, write the same bytes", "[planner]") {
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].duration={base: 10s, noise: {lognormal_sigma: 0.5}}"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2"),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,5,10")};
  spec.replications = 6;
  spec.deadline_s = 40;
  const auto run_with = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(threads));
    return run_sweep_text(kLimited, "limited.yaml", spec);
  };
  const SweepResult two = run_with(2);
  const SweepResult one = run_with(1);
  CHECK(json(one) == json(two));
  CHECK(csv(one) == csv(two));
  CHECK(table(one) == table(two));
  std::vector<SweepResult> slices;
  std::vector<std::string> files;
  for (int i : {2, 0, 1}) {  // any order
    spec.shard = Shard{i, 3};
    slices.push_back(run_sweep_text(kLimited, "limited.yaml", spec));
    files.push_back("s" + std::to_string(i) + "/sweep.json");
    // configurations i, i + 3, ... of 8: 3, 3 and 2
    CHECK(slices.back().configs.size() == (i < 2 ? 3U : 2U));
    // through the file, as `shardflow merge` reads them
    std::istringstream in(json(slices.back()));
    slices.back() = read_sweep_json(in, files.back());
  }
  const SweepResult merged = merge_sweeps(slices, files);
  CHECK(json(merged) == json(two));
  CHECK(csv(merged) == csv(two));

  SECTION("what is not the slices of one sweep") {
    std::vector<SweepResult> bad = slices;
    bad.pop_back();
    CHECK(
        error_of([&] { merge_sweeps(bad, files); }) ==
        "merge: slice 1/3 is missing: give every slice (given: 0/3 in s0/sweep.json, 2/3 in s2/sweep.json)");
    bad = slices;
    bad[2] = slices[1];
    CHECK(error_of([&] { merge_sweeps(bad, files); }) ==
          "s1/sweep.json: shard: slice 0/3 again (also in s0/sweep.json)");
    std::vector<std::string> twice = files;
    twice[2] = files[1];
    CHECK(error_of([&] { merge_sweeps(bad, twice); }) ==
          "s0/sweep.json: given twice: name each slice's directory once");
    bad = slices;
    bad[1].replications = 7;
    CHECK(error_of([&] { merge_sweeps(bad, files); }) ==
          "s0/sweep.json: replications: is 7 here but 6 in s2/sweep.json: these are not slices of one sweep");
    bad = slices;
    bad[1].base_seed = 9;
    CHECK(error_of([&] { merge_sweeps(bad, files); }) ==
          "s0/sweep.json: base_seed: is 9 here but 5 in s2/sweep.json: these are not slices of one sweep");
    bad = slices;
    bad[1].dimensions[1].values[0] = "3";
    CHECK(
        error_of([&] { merge_sweeps(bad, files); }) ==
        "s0/sweep.json: dimensions: is \"cluster.node_pools[n].count=1,2 "
        "pipeline.steps[w].parallel_for.parallelism=3,2,5,10\" here but \"cluster.node_pools[n].count=1,2 "
        "pipeline.steps[w].parallel_for.parallelism=1,2,5,10\" in s2/sweep.json: these are not slices of one "
        "sweep");
    SweepSpec other = spec;
    other.sets.push_back("cluster.node_pools[n].price_per_hour=7.2");
    other.shard = Shard{0, 3};
    bad = slices;
    bad[1] = run_sweep_text(kLimited, "limited.yaml", other);
    CHECK(error_of([&] { merge_sweeps(bad, files); })
              .find("s0/sweep.json: inputs_hash: is " + bad[1].inputs_hash + " here but " +
                    slices[0].inputs_hash +
                    " (the scenario text, an overlay, a --set, --cluster or --param differ, or --cluster "
                    "local was run "
                    "on machines of different CPUs or memory) in s2/sweep.json") == 0);
    bad = slices;
    bad[0].shard.reset();
    CHECK(
        error_of([&] { merge_sweeps(bad, files); }) ==
        "s2/sweep.json: shard: missing: not a slice (run `shardflow sweep ... --shard I/N` for each slice)");
  }
  SECTION("--shard and --search text") {
    CHECK(parse_shard("2/8").index == 2);
    CHECK(parse_shard("2/8").count == 8);
    for (const char* bad : {"8/8", "-1/2", "1", "a/2", "1/0", "1/2x"})
      CHECK(error_of([&] { parse_shard(bad); }) ==
            std::string("--shard: expected I/N with 0 <= I < N, as in 2/8, got \"") + bad + "\"");
    for (const char* big : {"0/4294967295", "2147483648/2147483649", "0/99999999999999999999"})
      CHECK(error_of([&] { parse_shard(big); }) ==
            std::string("--shard: I and N must be at most 2147483647, got \"") + big + "\"");
    CHECK(parse_shard("2147483646/2147483647").count == 2147483647);
    CHECK(error_of([] { parse_shard("-1/4294967295"); }) ==
          "--shard: I and N must be at most 2147483647, got \"-1/4294967295\"");
    CHECK(error_of([] { parse_search("smart"); }) == "--search: expected grid or auto, got \"smart\"");
    spec.shard = Shard{0, 9};
    CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
          "--shard: 0/9: the sweep has 8 configurations, fewer than 9 slices");
  }
}

TEST_CASE("Sweep: --search auto refuses what it cannot assume", "[planner]") {
  SweepSpec spec;
  spec.search = Search::automatic;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].price_per_hour=1,2")};
  CHECK(
      error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
      "--search: auto searches for the cheapest configuration that meets a deadline: give --deadline, or use "
      "--search grid");
  spec.deadline_s = 30;
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--search: auto needs a --vary of a node pool's count or a parallelism (it assumes the makespan does "
        "not "
        "grow along them); use --search grid");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,two")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--search: auto needs numbers along cluster.node_pools[n].count, got \"two\"; use --search grid");
  // The same number written two ways (the same text is refused for any search).
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,1.0")};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--search: auto needs different values along cluster.node_pools[n].count, got \"1.0\" twice; use "
        "--search grid");
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.shard = Shard{0, 2};
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--search: auto decides what to run from what it has run, so it cannot be sliced with --shard; use "
        "--search grid");
}

TEST_CASE("Sweep: --search auto recommends what the grid recommends on 50 random scenarios",
          "[planner][slow]") {
  std::mt19937_64 rng(20261130);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::uint64_t grid_sims = 0, auto_sims = 0;
  for (int k = 0; k < 50; ++k) {
    // A loop of `count` tasks (cpu c of a 16-core node, base b s, lognormal noise), then a merge step.
    const int count = pick(3, 16), cpu = std::array{4, 8, 16}[static_cast<std::size_t>(pick(0, 2))];
    const int base = pick(5, 30);
    const double sigma = std::array{0.0, 0.1, 0.3}[static_cast<std::size_t>(pick(0, 2))];
    const std::string yaml =
        "name: random" + std::to_string(k) + "\nseed: " + std::to_string(pick(1, 1000)) +
        "\noverheads: none\npipeline:\n  steps:\n    - name: w\n      parallel_for: {count: " +
        std::to_string(count) + "}\n      duration: {base: " + std::to_string(base) +
        "s, noise: {lognormal_sigma: " + std::to_string(sigma) +
        "}}\n      resources: {cpu: " + std::to_string(cpu) +
        "}\n    - name: merge\n      after: [w]\n      duration: {base: " + std::to_string(pick(1, 20)) +
        "s}\ncluster:\n  node_pools:\n    - {name: n, cpu: 16, memory: 64Gi, count: 1, "
        "price_per_hour: 3.6}\n";
    std::string nodes, par;
    for (int n = 1, step = pick(1, 2); n <= 8; n += step)
      nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    for (int p : {1, 2, 3, 4, 6, 8, 0})
      if (pick(0, 2) > 0) par += (par.empty() ? "" : ",") + std::to_string(p);
    if (par.empty()) par = "2";
    SweepSpec spec;
    spec.dimensions = {parse_dimension("cluster.node_pools[n].count=" + nodes),
                       parse_dimension("pipeline.steps[w].parallel_for.parallelism=" + par),
                       parse_dimension("cluster.node_pools[n].price_per_hour=3.6,2.9")};
    spec.replications = 8;
    SweepResult grid = run_sweep_text(yaml, "random.yaml", spec);
    // A deadline that some configurations meet and some miss: a quantile makespan from the middle.
    std::vector<double> q;
    for (const ConfigResult& c : grid.configs) q.push_back(c.quantile_makespan_s);
    std::sort(q.begin(), q.end());
    spec.deadline_s = q[static_cast<std::size_t>(pick(0, static_cast<int>(q.size()) - 1))];
    // The grid with that deadline: the same runs, judged against it.
    grid.deadline_s = spec.deadline_s;
    for (ConfigResult& c : grid.configs) {
      c.meets = c.quantile_makespan_s <= *spec.deadline_s && c.runs_with_failed_tasks == 0;
    }
    finish_sweep(grid);
    spec.search = Search::automatic;
    const SweepResult automatic = run_sweep_text(yaml, "random.yaml", spec);
    INFO("scenario " << k << ":\n"
                     << yaml << "nodes " << nodes << ", parallelism " << par << ", deadline "
                     << *spec.deadline_s);
    REQUIRE(grid.recommended);
    REQUIRE(automatic.recommended);
    const ConfigResult& g = grid.configs[*grid.recommended];
    const ConfigResult& a = automatic.configs[*automatic.recommended];
    CHECK(a.values == g.values);
    CHECK(a.cost.mean == g.cost.mean);
    CHECK(a.quantile_makespan_s == g.quantile_makespan_s);
    grid_sims += grid.simulations;
    auto_sims += automatic.simulations;
  }
  INFO("auto ran " << auto_sims << " of the grid's " << grid_sims << " simulations");
  CHECK(auto_sims < grid_sims);
}

TEST_CASE("Sweep: --search auto with nothing in time names the grid's nearest and each field's trend",
          "[planner][slow]") {
  // The probes stop early when they cannot meet: auto runs the lines' best chances in full, then every
  // field's values around the nearest (it showed an empty table and no nearest).
  std::mt19937_64 rng(20261203);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int k = 0; k < 20; ++k) {
    const int count = pick(3, 16), base = pick(5, 30);
    const double sigma = std::array{0.0, 0.1, 0.5}[static_cast<std::size_t>(pick(0, 2))];
    const std::string yaml =
        "name: late" + std::to_string(k) + "\nseed: " + std::to_string(pick(1, 1000)) +
        "\noverheads: none\npipeline:\n  steps:\n    - name: w\n      parallel_for: {count: " +
        std::to_string(count) + "}\n      duration: {base: " + std::to_string(base) +
        "s, noise: {lognormal_sigma: " + std::to_string(sigma) +
        "}}\n      resources: {cpu: 1, memory: 64Mi}\ncluster:\n  node_pools:\n    - {name: n, "
        "cpu: 1, memory: 1Gi, count: 1, price_per_hour: 3.6}\n";
    SweepSpec spec;
    spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,4,5,6"),
                       parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,3,0")};
    spec.replications = 8;
    spec.deadline_s = 1;  // below any makespan
    const SweepResult grid = run_sweep_text(yaml, "late.yaml", spec);
    spec.search = Search::automatic;
    const SweepResult automatic = run_sweep_text(yaml, "late.yaml", spec);
    INFO("scenario " << k << ":\n" << yaml);
    REQUIRE(grid.nearest);
    REQUIRE(automatic.nearest);
    CHECK(automatic.configs[automatic.nearest->config].values == grid.configs[grid.nearest->config].values);
    CHECK(automatic.nearest->over_deadline_s == grid.nearest->over_deadline_s);
    REQUIRE(automatic.nearest->fields.size() == 2);
    for (std::size_t f = 0; f < 2; ++f) {
      CHECK(automatic.nearest->fields[f].values == grid.nearest->fields[f].values);
      CHECK(automatic.nearest->fields[f].quantile_makespan_s == grid.nearest->fields[f].quantile_makespan_s);
      CHECK(automatic.nearest->fields[f].trend == grid.nearest->fields[f].trend);
    }
    CHECK(automatic.simulations < grid.simulations);
  }
}

TEST_CASE("Sweep: sweep.csv has every figure to the last bit, as sweep.json", "[planner]") {
  // Noisy makespans (54.007903453 s, not 54.0079 as six significant digits had it).
  const std::string yaml =
      "name: csv\nseed: 3\noverheads: none\npipeline:\n  steps:\n    - name: w\n      parallel_for: {count: "
      "5}\n"
      "      duration: {base: 10s, noise: {lognormal_sigma: 0.4}}\n      resources: {cpu: 1, memory: 64Mi}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 1, memory: 1Gi, count: 2, price_per_hour: 1.3}\n";
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3")};
  spec.replications = 3;
  spec.deadline_s = 60;
  const SweepResult r = run_sweep_text(yaml, "csv.yaml", spec);
  std::ostringstream csv;
  write_sweep_csv(csv, r);
  std::istringstream in(csv.str());
  std::string line;
  std::getline(in, line);  // the header
  for (const ConfigResult& c : r.configs) {
    REQUIRE(std::getline(in, line));
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() >= 12);
    CHECK(std::stod(f[1]) == c.makespan_s.mean);
    CHECK(std::stod(f[2]) == c.makespan_s.stddev);
    CHECK(std::stod(f[3]) == c.makespan_s.ci95_low);
    CHECK(std::stod(f[7]) == c.quantile_makespan_s);
    CHECK(std::stod(f[8]) == c.cost.mean);
    CHECK(std::stod(f[11]) == c.p_meets_deadline);
  }
}

TEST_CASE("Sweep, compare: a deadline under a second is printed as given, not as 0 s", "[planner]") {
  const std::string yaml =
      "name: d\noverheads: none\npipeline:\n  steps:\n    - {name: w, duration: {base: 10s}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 1, memory: 1Gi, count: 1}\n";
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.replications = 1;
  spec.deadline_s = 0.025;
  std::ostringstream out;
  print_sweep(out, run_sweep_text(yaml, "d.yaml", spec));
  CHECK_THAT(out.str(), Catch::Contains("within the deadline (0.025 s)\n"));
  CompareSpec cs;
  cs.variants = {parse_variant("a"), parse_variant("b:cluster.node_pools[n].count=2")};
  cs.replications = 1;
  cs.deadline_s = 5400;
  std::ostringstream c;
  print_compare(c, run_compare_text(yaml, "d.yaml", cs));
  CHECK_THAT(c.str(), Catch::Contains("within the deadline (5400 s): a;"));
}

TEST_CASE("Sweep: a first seed whose replications would pass 2^64 - 1 is refused, not wrapped to 0",
          "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1")};
  spec.replications = 3;
  spec.base_seed = 18446744073709551615ULL;  // the seeds were printed "18446744073709551615..1"
  CHECK(error_of([&] { run_sweep_text(kLimited, "limited.yaml", spec); }) ==
        "--seed: replication k runs seed 18446744073709551615 + k, and 3 replications would pass "
        "18446744073709551615 (2^64 - 1): give a seed of at most 18446744073709551613");
  spec.base_seed = 18446744073709551613ULL;  // the last three seeds
  CHECK(run_sweep_text(kLimited, "limited.yaml", spec).configs.size() == 1);
  // The scenario's own seed: named at the file.
  spec.base_seed.reset();
  std::string yaml = kLimited;
  yaml.replace(yaml.find("seed: 5"), 7, "seed: 18446744073709551614");
  CHECK(error_of([&] { run_sweep_text(yaml, "limited.yaml", spec); }) ==
        "limited.yaml: seed: replication k runs seed 18446744073709551614 + k, and 3 replications would pass "
        "18446744073709551615 (2^64 - 1): give a seed of at most 18446744073709551613");
}

TEST_CASE("Sweep: a nearest within the deadline but for failed tasks is told to look at the failures",
          "[planner]") {
  // Every task fails (failure.p 1, no retries): each configuration's makespan is 60 s, within the
  // deadline, and none is recommended. The advice was "try beyond 3" nodes, which makes no task succeed.
  const std::string yaml =
      "name: fail\nseed: 1\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: work, parallel_for: {count: 8}, duration: {base: 60s}, failure: {p: 1}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 4, memory: 16Gi, count: 1, price_per_hour: 1}\n";
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3")};
  spec.replications = 2;
  spec.deadline_s = 7200;
  const SweepResult r = run_sweep_text(yaml, "fail.yaml", spec);
  CHECK_FALSE(r.recommended);
  REQUIRE(r.nearest);
  std::ostringstream out;
  print_sweep(out, r);
  CHECK(out.str().find("p95 makespan none (a run whose tasks failed), tasks failed in 2 of 2 runs") !=
        std::string::npos);
  CHECK(
      out.str().find("its runs that finished were by the deadline often enough, but tasks failed in 2 of 2 "
                     "runs, which count as late (the pipeline did not finish), too many for the p95: look at "
                     "the steps' failure.p and retries (simulate it to see which tasks fail), not at these "
                     "fields\n") != std::string::npos);
  CHECK(out.str().find("what it would take") == std::string::npos);
  // The table counts them in a column of its own, there only when some run had failed tasks.
  CHECK(out.str().find("p95, failed late  cost mean  of finished runs  runs with failed tasks  P(by "
                       "deadline)") != std::string::npos);
  CHECK(out.str().find(
            "  60.0              none       0.05                 -                  2 of 2            0.0%  "
            "0.0..65.8%  no (tasks failed)\n") != std::string::npos);
  CHECK(out.str().find("try beyond") == std::string::npos);
}

TEST_CASE("Sweep: a parallelism at or above its loop's iterations is no limit, not one to try beyond",
          "[planner]") {
  // 10 tasks of 10 s on one node, each pod 2 s to start: parallelism 2, 5, 10 take about 60, 24, 12 s; a
  // deadline of 11 s is met by none, though the critical path (10 s) is within it. Beyond 10 nothing
  // changes (the loop has 10 iterations): the advice was "try beyond 10".
  std::string started = kLimited;
  started.replace(started.find("overheads: none"), 15, "overheads: {preset: none, sandbox_start: 2s}");
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=2,5,10")};
  spec.replications = 1;
  spec.deadline_s = 11;
  const SweepResult r = run_sweep_text(started, "limited.yaml", spec);
  REQUIRE(r.nearest);
  CHECK(r.configs[2].no_limit == std::vector<bool>{true});
  CHECK(r.configs[1].no_limit == std::vector<bool>{false});
  const std::string advice =
      "): it is lowest at 10, at least the loop's iterations, so no limit: this field "
      "alone will not do it\n";
  std::ostringstream out;
  print_sweep(out, r);
  CHECK(out.str().find("  pipeline.steps[w].parallel_for.parallelism: none in the range; the p95 makespan "
                       "falls along the values (") != std::string::npos);
  CHECK(out.str().find(advice) != std::string::npos);
  CHECK(out.str().find("try beyond") == std::string::npos);
  // Read back from sweep.json (as merge does): the same advice.
  std::stringstream json;
  write_sweep_json(json, r);
  const SweepResult back = read_sweep_json(json, "sweep.json");
  CHECK(back.configs[2].no_limit == std::vector<bool>{true});
  std::ostringstream again;
  print_sweep(again, back);
  CHECK(again.str() == out.str());
  // In a group: pipeline.steps[g].steps[w], by name or by index.
  const std::string grouped =
      "name: g\nseed: 5\noverheads: none\npipeline:\n  steps:\n    - name: g\n      steps:\n"
      "        - {name: w, parallel_for: {count: 10}, duration: {base: 10s}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 16, memory: 64Gi, count: 1}\n";
  spec.dimensions = {parse_dimension("pipeline.steps[g].steps[0].parallel_for.parallelism=5,12")};
  CHECK(run_sweep_text(grouped, "g.yaml", spec).configs[1].no_limit == std::vector<bool>{true});
  spec.dimensions = {parse_dimension("pipeline.steps[0].steps[w].parallel_for.parallelism=5,9")};
  CHECK(run_sweep_text(grouped, "g.yaml", spec).configs[1].no_limit == std::vector<bool>{false});
}

TEST_CASE("Sweep: the table shows p50 and p95, and a --quantile other than those in a column of its own",
          "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=2,5")};
  spec.replications = 2;
  const auto head = [&](int quantile) {
    spec.quantile = quantile;
    std::ostringstream out;
    print_sweep(out, run_sweep_text(kLimited, "limited.yaml", spec));
    const std::string text = out.str();
    const std::size_t at = text.find("  pipeline.steps[w].parallel_for.parallelism");
    return text.substr(at, text.find('\n', at) - at);
  };
  // --quantile 50 gave "p50    p50" and no p95; 75 replaced the p95.
  CHECK(head(50).ends_with("95% CI   p50   p95  cost mean"));
  CHECK(head(95).ends_with("95% CI   p50   p95  cost mean"));
  CHECK(head(75).ends_with("95% CI   p50   p95   p75  cost mean"));
}

TEST_CASE("Sweep: how sure a verdict is: the runs needed, exact binomial bounds and Wilson intervals",
          "[planner]") {
  // Each value computed another way: exact binomial tails in rational arithmetic (Python's fractions):
  // the fewest k with P(X >= k) <= 1 - confidence for X ~ Binomial(n, quantile).
  CHECK(runs_needed(20, 95, std::nullopt) == 19);  // nearest rank, as the quantile makespan
  CHECK(runs_needed(19, 95, std::nullopt) == 19);  // 18 of 19 is 94.7%
  CHECK(runs_needed(45, 95, 90.0) == 45);
  CHECK(runs_needed(44, 95, 90.0) == 45);  // more than the runs: too few to be that sure
  CHECK(runs_needed(20, 95, 90.0) == 21);
  CHECK(runs_needed(100, 95, 90.0) == 99);
  CHECK(runs_needed(180, 95, 90.0) == 176);
  CHECK(runs_needed(400, 95, 90.0) == 386);
  CHECK(runs_needed(90, 95, 99.0) == 90);
  CHECK(runs_needed(89, 95, 99.0) == 90);
  CHECK(runs_needed(1000, 99, 95.0) == 996);
  CHECK(runs_needed(10, 100, 50.0) == 11);
  CHECK(replications_for_confidence(95, 90) == 45);
  CHECK(replications_for_confidence(95, 99) == 90);
  CHECK(replications_for_confidence(80, 50) == 4);
  // Wilson's 95% score interval (z = 1.959963984540054), as Python's floats give it.
  const ShareInterval a = share_interval95(19, 20), b = share_interval95(354, 400);
  CHECK(a.low == Approx(0.76386880655325795).epsilon(1e-14));
  CHECK(a.high == Approx(0.99111855119920467).epsilon(1e-14));
  CHECK(b.low == Approx(0.85000845598422403).epsilon(1e-14));
  CHECK(b.high == Approx(0.91266707737836761).epsilon(1e-14));
  CHECK(share_interval95(20, 20).high == 1.0);
  CHECK(share_interval95(0, 20).low == 0.0);
  // The Pareto front leaves out a configuration only when failed runs reach its quantile.
  CHECK_FALSE(failures_reach_quantile(1, 20, 95));  // 19 of 20 may be by the deadline
  CHECK(failures_reach_quantile(2, 20, 95));
  CHECK(failures_reach_quantile(1, 19, 95));
}

TEST_CASE("Sweep: a run whose tasks failed is a late run, and a few of them do not veto a configuration",
          "[planner]") {
  // Four 10 s tasks that each fail with p 0.01 (no retries), then a merge; 20 s on 4 nodes. Of seeds
  // 3..42, one run has a failed task: 39 of 40 by a 1m deadline, 38 needed for the p95. The rule was
  // "no failed task in any run", which more replications only made harder to meet.
  std::string yaml = fanout_failing("0.01");
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=4")};
  spec.replications = 40;
  spec.deadline_s = 60;
  SweepResult r = run_sweep_text(yaml, "fanout.yaml", spec);
  REQUIRE(r.configs.size() == 1);
  CHECK(r.configs[0].runs_with_failed_tasks == 1);
  CHECK(r.configs[0].p_meets_deadline == 39.0 / 40);
  CHECK(r.configs[0].meets);
  CHECK(r.recommended == std::optional<std::size_t>(0));
  CHECK(r.pareto == std::vector<std::size_t>{0});
  const std::string t = table(r);
  CHECK_THAT(t, Catch::Contains("by the deadline in 39 of 40 runs (95% interval 87.1..99.6%)\n"));
  // 87.1% < 95%: the note says how to be sure.
  CHECK_THAT(t, Catch::Contains("how sure: 39 of 40 runs by the deadline do not make it 90% sure to finish "
                                "by it in 95% of runs (the cheapest of several near it may be a lucky one): "
                                "--confidence 90 -r 45 recommends only what 90% surely does\n"));
  // 90% sure needs every one of 45 runs by the deadline: the failed one keeps it out, and says so.
  spec.replications = 45;
  spec.confidence = 90;
  r = run_sweep_text(yaml, "fanout.yaml", spec);
  CHECK(r.confidence == std::optional<double>(90));
  CHECK(r.configs[0].runs_with_failed_tasks == 1);
  CHECK_FALSE(r.configs[0].meets);
  CHECK_FALSE(r.recommended);
  CHECK_THAT(table(r), Catch::Contains("no configuration is 90% surely within the deadline (60 s) in 95% of "
                                       "runs: that takes all 45 of its runs by the deadline (a run whose "
                                       "tasks failed is late); more replications let a few runs miss (-r "
                                       "180: 4 of them)\n"
                                       "nearest: cluster.node_pools[n].count=4; p95 makespan 20.0 s, within "
                                       "the deadline, tasks failed in 1 of 45 runs, by the deadline in 44 of "
                                       "45 runs (45 needed to be 90% sure); mean cost "));
  // Without a failure it is recommended, said as what it is.
  yaml.replace(yaml.find("failure: {p: 0.01}"), 18, "failure: {p: 0}   ");
  r = run_sweep_text(yaml, "fanout.yaml", spec);
  CHECK(r.recommended == std::optional<std::size_t>(0));
  CHECK_THAT(table(r),
             Catch::Contains("cheapest configuration that 90% surely finishes by the deadline in 95% "
                             "of runs (60 s): cluster.node_pools[n].count=4; mean cost 0.08, p95 "
                             "makespan 20.0 s, by the deadline in 45 of 45 runs (95% interval "
                             "92.1..100.0%)\n"));
  // The files carry it: sweep.json's confidence and each configuration's interval; read back the same.
  std::ostringstream js;
  write_sweep_json(js, r);
  CHECK_THAT(js.str(), Catch::Contains("\"quantile\": 95.0,\n  \"confidence\": 90.0,\n"));
  CHECK_THAT(js.str(), Catch::Contains("\"p_meets_deadline_ci95\": [\n"));
  std::istringstream in(js.str());
  const SweepResult back = read_sweep_json(in, "sweep.json");
  CHECK(back.confidence == std::optional<double>(90));
  CHECK(table(back) == table(r));
  CHECK_THAT(csv(r), Catch::StartsWith("cluster.node_pools[n].count,makespan_mean_s,"));
  CHECK_THAT(csv(r),
             Catch::EndsWith(
                 ",p_meets_deadline,meets,recommended,pareto,finished_cost_mean,"
                 "p_meets_deadline_ci95_low,p_meets_deadline_ci95_high,infeasible,quantile_on_failed_run\n"
                 "4,20,0,20,20,20,20,20,0.08,0.08,0,1,true,true,true,0.08,0.9213484012671117,1,,false\n"));
}

TEST_CASE("Sweep: --confidence is checked before anything runs", "[planner]") {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2")};
  spec.replications = 20;
  spec.confidence = 90;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--confidence: is how sure to be that a configuration meets the deadline: give --deadline too");
  spec.deadline_s = 60;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--confidence: 90% that 95% of runs meet the deadline needs at least 45 replications, all of them by "
        "the deadline; -r is 20: give -r 45 or more (more runs let a configuration miss now and then: with "
        "-r 180, 4 of them may miss)");
  spec.quantile = 100;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--confidence: no number of runs can show that every run meets the deadline (--quantile 100): give a "
        "--quantile below 100");
  spec.quantile = 95;
  spec.confidence = 100;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--confidence: must be above 0 and below 100, got 100");
}

TEST_CASE("Sweep, compare: a failed run is late for the quantile and left out of the cost that picks",
          "[planner]") {
  // kFanout on 4 nodes with w failing with p 0.01 (no retries): a run that finishes takes 20 s and costs
  // 4 x 3.6/h x 20 s = 0.08; the one of seeds 3..42 whose w fails ends at 10 s for 0.04.
  std::string yaml = fanout_failing("0.01");
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=4")};
  spec.replications = 40;
  spec.deadline_s = 60;
  spec.quantile = 2.5;  // the fastest run: the failed one's 10 s, were it not late
  const SweepResult r = run_sweep_text(yaml, "fanout.yaml", spec);
  REQUIRE(r.configs[0].runs_with_failed_tasks == 1);
  CHECK(r.configs[0].quantile_makespan_s == 20);
  CHECK(r.configs[0].makespan_s.min == 10);
  CHECK(r.configs[0].finished_cost_mean == Approx(0.08).epsilon(1e-12));
  CHECK(r.configs[0].cost.mean == Approx((39 * 0.08 + 0.04) / 40).epsilon(1e-12));
  CHECK_THAT(table(r),
             Catch::Contains("; mean cost 0.08 (of its 39 runs that finished), p2.5 makespan 20.0 s, "
                             "by the deadline in 39 of 40 runs"));

  // The same in a comparison, and the differences pair only the seeds where both runs finished.
  CompareSpec cs;
  cs.replications = 40;
  cs.base_seed = 3;
  cs.quantile = 2.5;
  cs.deadline_s = 60;
  cs.sets = {"cluster.node_pools[n].count=4"};
  cs.variants = {parse_variant("flaky"), parse_variant("sound:pipeline.steps[w].failure.p=0")};
  const CompareResult c = run_compare_text(yaml, "fanout.yaml", cs);
  REQUIRE(c.variants[0].runs_with_failed_tasks == 1);
  CHECK(c.variants[0].quantile_makespan_s == 20);
  CHECK(c.variants[0].finished_cost_mean == Approx(0.08).epsilon(1e-12));
  CHECK(c.variants[1].diff_makespan_s.n == 39);  // paired over the 39 seeds where flaky finished
  CHECK(c.variants[1].diff_makespan_s.mean == 0);
  CHECK(c.variants[1].diff_cost.mean == 0);
  std::ostringstream out;
  print_compare(out, c);
  CHECK_THAT(out.str(), Catch::Contains("  sound: paired over 39 of 40 seeds; at the others it or flaky had "
                                        "failed tasks (a run that ended early is no speed-up)\n"));
}

TEST_CASE("Sweep: --budget without a deadline recommends the fastest configuration within it", "[planner]") {
  // kFanout on 1, 2, 3, 4 nodes: 50 s for 0.05, 30 s for 0.06, 30 s for 0.09, 20 s for 0.08 (the Pareto
  // test's figures, by hand).
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,4")};
  spec.replications = 2;
  spec.budget = 0.07;
  SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK(r.recommended == std::optional<std::size_t>(1));
  CHECK_THAT(table(r),
             Catch::Contains("\nfastest configuration within the budget (mean cost 0.07 or less): "
                             "cluster.node_pools[n].count=2; p95 makespan 30.0 s, mean cost 0.06\n"));
  spec.budget = 0.085;  // 3 nodes are as fast as 2 but dearer; 4 are faster and within it
  r = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK(r.recommended == std::optional<std::size_t>(3));
  const std::string j = json(r);
  CHECK_THAT(j, Catch::Contains("\"quantile\": 95.0,\n  \"budget\": 0.085,\n"));
  std::istringstream in(j);
  const SweepResult back = read_sweep_json(in, "sweep.json");
  CHECK(back.budget == std::optional<double>(0.085));
  CHECK(back.recommended == std::optional<std::size_t>(3));
  CHECK(table(back) == table(r));
  spec.budget = 0.04;
  r = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK_FALSE(r.recommended);
  CHECK_THAT(table(r),
             Catch::Contains("\nno configuration's mean cost is within the budget (0.04): the cheapest "
                             "is cluster.node_pools[n].count=1 at 0.05\n"));
  // A configuration within the budget whose p95 falls on failed runs is named, with why it is out: more
  // budget would not bring it in. failure.p 1: each run ends after w's first round, 10 s for 0.04.
  {
    std::string failing = fanout_failing("1");
    SweepSpec f;
    f.dimensions = {parse_dimension("pipeline.steps[w].failure.p=1,0"),
                    parse_dimension("cluster.node_pools[n].count=1,4")};
    f.replications = 2;
    f.budget = 0.045;
    const SweepResult fr = run_sweep_text(failing, "failing.yaml", f);
    CHECK_FALSE(fr.recommended);
    CHECK_THAT(
        table(fr),
        Catch::Contains("\nno configuration within the budget (0.045) has a p95 makespan: "
                        "pipeline.steps[w].failure.p=1, cluster.node_pools[n].count=1 costs 0.04 but tasks "
                        "failed in 2 of 2 runs, which its p95 falls on (look at failure.p and retries)\n"
                        "no configuration's mean cost is within the budget (0.045) with a p95 that is not "
                        "a failed run: the cheapest is pipeline.steps[w].failure.p=0, "
                        "cluster.node_pools[n].count=1 at 0.05\n"));
    f.search = Search::automatic;
    CHECK(
        error_of([&] { run_sweep_text(failing, "failing.yaml", f); }) ==
        "--search: auto searches for the cheapest configuration that meets a deadline; the fastest within a "
        "--budget needs --search grid");
  }
  // Not with a deadline, which has its own pick.
  spec.deadline_s = 60;
  CHECK(error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--budget: is for a sweep without --deadline (the fastest configuration within the budget); with a "
        "deadline the sweep recommends the cheapest that meets it, and its cost says whether it fits");
}

TEST_CASE("Sweep: a configuration whose cluster cannot run the pipeline is said so, and the others swept",
          "[planner]") {
  // kFanout on 0, 1, 2 nodes: no nodes; 50 s for 0.05; 30 s for 0.06 (by hand, as the --budget test).
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=0,1,2")};
  spec.replications = 2;
  spec.deadline_s = 40;
  const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  const std::string no_nodes = "the cluster has no nodes (every pool has count 0 and no autoscaling)";
  REQUIRE(r.configs.size() == 3);
  CHECK(r.configs[0].infeasible == no_nodes);
  CHECK_FALSE(r.configs[0].meets);
  CHECK(r.configs[1].infeasible.empty());
  CHECK(r.configs[1].quantile_makespan_s == 50);
  CHECK(r.configs[2].quantile_makespan_s == 30);
  CHECK(r.recommended == std::optional<std::size_t>(2));
  CHECK(r.pareto == std::vector<std::size_t>{1, 2});  // no point at cost 0 for the one that did not run
  CHECK(r.simulations == 4);  // 2 configurations x 2: none for the one that cannot run
  const std::string t = table(r);
  // Each figure "-": the columns are as wide as the rows that ran make them.
  CHECK_THAT(
      t, Catch::Contains("\n  0                                          -           -     -     -          -"
                         "               -             -  no (cannot run)\n"));
  CHECK_THAT(t, Catch::Contains("\n1 configuration cannot run and was not simulated:\n  "
                                "cluster.node_pools[n].count=0: " +
                                no_nodes + "\n"));
  CHECK_THAT(t, Catch::Contains("(2 of 3 configurations: none is both cheaper and faster; 1 cannot run)"));
  // sweep.json: why, and no figures; read back (as `report` and `merge` read it) to the same bytes.
  const std::string j = json(r);
  CHECK_THAT(j, Catch::Contains("{\n      \"values\": [\n        \"0\"\n      ],\n      \"infeasible\": \"" +
                                no_nodes + "\",\n      \"meets\": false\n    },"));
  std::istringstream in(j);
  const SweepResult back = read_sweep_json(in, "sweep.json");
  CHECK(back.configs[0].infeasible == no_nodes);
  CHECK(json(back) == j);
  CHECK(csv(back) == csv(r));
  // sweep.csv: the values, no figures, meets/recommended/pareto false, and why in the last column.
  CHECK_THAT(csv(r), Catch::Contains("\n0,,,,,,,,,,,,false,false,false,,,," + no_nodes + ",\n1,"));
  // Slices merged: the same bytes as one sweep.
  std::vector<SweepResult> slices;
  std::vector<std::string> files;
  for (int i : {0, 1}) {
    spec.shard = Shard{i, 2};
    std::istringstream s(json(run_sweep_text(kFanout, "fanout.yaml", spec)));
    files.push_back("s" + std::to_string(i) + "/sweep.json");
    slices.push_back(read_sweep_json(s, files.back()));
  }
  CHECK(json(merge_sweeps(slices, files)) == j);
  spec.shard.reset();
  // A recommendation of one that cannot run is refused in a file edited by hand.
  std::string edited = j;
  edited.replace(edited.find("\"recommended\": 2"), 16, "\"recommended\": 0");
  std::istringstream bad(edited);
  CHECK(error_of([&] {
          read_sweep_json(bad, "e/sweep.json");
        }).find("recommended: configuration 0 cannot run (its `infeasible`)") != std::string::npos);
  // Figures beside `infeasible`: refused, not dropped.
  std::string figures = j;
  figures.replace(figures.find("\"meets\": false\n    },"), 16,
                  "\"meets\": false, \"runs_with_failed_tasks\": 0\n");
  std::istringstream with_figures(figures);
  CHECK_THAT(error_of([&] { read_sweep_json(with_figures, "e/sweep.json"); }),
             Catch::Contains("configurations[0].runs_with_failed_tasks: a configuration that cannot run (its "
                             "`infeasible`) has no figures: it was not simulated"));

  // Nothing in time: the nearest is among those that ran, and the field's trend over them alone.
  spec.deadline_s = 10;
  const SweepResult late = run_sweep_text(kFanout, "fanout.yaml", spec);
  REQUIRE(late.nearest);
  CHECK(late.nearest->config == 2);
  CHECK(late.nearest->fields[0].values == std::vector<std::string>{"1", "2"});
  // --search auto (the count is monotone): the same recommendation, the one that cannot run said so.
  spec.deadline_s = 40;
  spec.search = Search::automatic;
  const SweepResult a = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK(a.recommended.has_value());
  CHECK(a.configs[*a.recommended].values == std::vector<std::string>{"2"});
  spec.search = Search::grid;
  // --budget: the one that cannot run costs nothing, and is not the fastest within any budget.
  spec.deadline_s.reset();
  spec.budget = 0.055;
  const SweepResult b = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK(b.recommended == std::optional<std::size_t>(1));
  spec.budget = 0.01;
  CHECK_THAT(table(run_sweep_text(kFanout, "fanout.yaml", spec)),
             Catch::Contains("no configuration's mean cost is within the budget (0.01): the cheapest is "
                             "cluster.node_pools[n].count=1 at 0.05\n"));
  spec.budget.reset();
  // Every configuration: each said so, and no recommendation.
  spec.deadline_s = 40;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].cpu=4,8")};
  const SweepResult none = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK_FALSE(none.recommended);
  CHECK_FALSE(none.nearest);
  CHECK(none.configs[0].infeasible ==
        "step \"w\" asks for cpu 16, memory 0, gpu 0, more than any node it may use can hold (largest: pool "
        "\"n\" with cpu 4, memory 64Gi, gpu 0); pool \"n\" has cpu 4 from --vary "
        "cluster.node_pools[n].cpu=4,8");
  CHECK_THAT(table(none), Catch::Contains("\nno configuration can run, so none meets the deadline (40 s)\n"));
  // --emit-job of it is refused: the Job's pods would have nothing to simulate.
  CHECK(error_of([&] { check_sweep_text(kFanout, "fanout.yaml", spec); }) ==
        "--vary: no configuration of this sweep can run (the first: " + none.configs[0].infeasible + ")");
  // A value that is wrong, not a cluster that cannot run: the sweep stops, as for any bad input.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,-1")};
  CHECK(
      error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
      "--vary cluster.node_pools[n].count=1,-1: cluster.node_pools[0].count: value -1: must be >= 0, got -1");
}

TEST_CASE("Sweep: sweep.json and sweep.csv say when the quantile falls on a run whose tasks failed",
          "[planner]") {
  // Each of four tasks fails with p 0.5, no retries: of 4 runs (seeds 3..6) more than the one a p95 lets
  // through have a failed task, so the p95 is a failed run's ("none" in the table).
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=4")};
  spec.replications = 4;
  const SweepResult r = run_sweep_text(fanout_failing("0.5"), "fanout.yaml", spec);
  REQUIRE(r.configs[0].runs_with_failed_tasks >= 1);
  CHECK(failures_reach_quantile(r.configs[0].runs_with_failed_tasks, 4, 95));
  const std::string j = json(r);
  CHECK_THAT(j, Catch::Contains("\"quantile_on_failed_run\": true\n"));
  CHECK_THAT(csv(r), Catch::EndsWith(",,true\n"));
  std::string edited = j;
  edited.replace(edited.find("\"quantile_on_failed_run\": true"), 30, "\"quantile_on_failed_run\": false");
  std::istringstream bad(edited);
  CHECK_THAT(error_of([&] { read_sweep_json(bad, "e/sweep.json"); }),
             Catch::Contains("configurations[0].quantile_on_failed_run: does not follow from "
                             "runs_with_failed_tasks, replications and quantile (" +
                             std::to_string(r.configs[0].runs_with_failed_tasks) +
                             " of 4 runs failed, quantile 95)"));
  std::istringstream good(j);
  CHECK(json(read_sweep_json(good, "sweep.json")) == j);
}

TEST_CASE("Sweep: a recommendation at the edge of a field's swept values says what was not tried",
          "[planner]") {
  // Four 16-CPU tasks then a merge: 2 nodes take 30 s, 3 take 30 s, 4 take 20 s; by 35 s the cheapest is
  // 2 nodes. Swept from 2 up, fewer nodes were never tried (one was cheaper in a user's sweep of 8, 10, 15
  // when 6 was tried later).
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=4,3,2")};
  spec.replications = 1;
  spec.deadline_s = 35;
  const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  REQUIRE(r.recommended == std::optional<std::size_t>(2));
  CHECK_THAT(table(r),
             Catch::Contains("\nat the edge of the range: cluster.node_pools[n].count=2 is the smallest "
                             "value swept: values past it were not tried, and one may be cheaper (sweep "
                             "past it to see)\n"));
  // Inside the range: nothing said.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3")};
  const SweepResult inside = run_sweep_text(kFanout, "fanout.yaml", spec);
  REQUIRE(inside.recommended == std::optional<std::size_t>(1));
  CHECK(table(inside).find("at the edge of the range") == std::string::npos);
}

TEST_CASE("Sweep: the nearest's trends leave out the values whose quantile is a failed run's", "[planner]") {
  // With failure.p 0.5 most runs fail, and the p95 is the slowest run, a failed one: reading the trend
  // from it told the user to try a higher failure probability ("falls along the values ... try beyond").
  SweepSpec spec;
  spec.dimensions = {parse_dimension("pipeline.steps[w].failure.p=0,0.5")};
  spec.replications = 4;
  spec.deadline_s = 5;  // nothing meets it
  const SweepResult r = run_sweep_text(fanout_failing("0"), "fanout.yaml", spec);
  REQUIRE(r.nearest);
  CHECK(r.nearest->config == 0);
  CHECK_FALSE(r.configs[0].quantile_on_failed_run);
  CHECK(r.configs[1].quantile_on_failed_run);
  REQUIRE(r.nearest->fields.size() == 1);
  const Nearest::Field& f = r.nearest->fields[0];
  CHECK(f.values == std::vector<std::string>{"0"});
  CHECK(f.failed_values == std::vector<std::string>{"0.5"});
  CHECK(f.trend == "one value");
  const std::string t = table(r);
  CHECK_THAT(t,
             Catch::Contains("  pipeline.steps[w].failure.p: none in the range; at 0.5 the p95 fell on a run "
                             "with failed tasks (not a makespan; left out); only 0 is left\n"));
  CHECK_THAT(json(r), Catch::Contains("\"trend\": \"one value\",\n        \"left_out_failed\": [\n          "
                                      "\"0.5\"\n        ]"));
  std::istringstream in(json(r));
  CHECK(table(read_sweep_json(in, "sweep.json")) == t);
}

TEST_CASE("Sweep: a field whose first value is a fraction like 0.15 gets its trend (the check hung)",
          "[planner]") {
  // Whether a value is zero read "0.15" one character short of its end for ever once it had seen a 0:
  // every sweep with nothing in time and such a first value spun in print_sweep.
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].duration={base: 10s, noise: {lognormal_sigma: 0.1}}"};
  spec.dimensions = {parse_dimension("pipeline.steps[w].duration.noise.lognormal_sigma=0.15,0.35,0.0")};
  spec.replications = 2;
  spec.deadline_s = 5;  // nothing meets it
  const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  REQUIRE(r.nearest);
  const std::string t = table(r);
  CHECK_THAT(t, Catch::Contains("  pipeline.steps[w].duration.noise.lognormal_sigma: none in the range; "));
  // merge reads and prints the same (it hung too).
  std::istringstream in(json(r));
  CHECK(table(read_sweep_json(in, "sweep.json")) == t);
}

TEST_CASE("Sweep: a configuration that cannot run and has another problem stops the sweep with that one",
          "[planner]") {
  // The loader stops at its first problem: a pool of 0 nodes hid a dependency cycle, and the sweep went on.
  SweepSpec spec;
  spec.sets = {"pipeline.steps[w].after=[merge]"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=0,1")};
  spec.replications = 1;
  CHECK(
      error_of([&] { run_sweep_text(kFanout, "fanout.yaml", spec); }) ==
      "--set pipeline.steps[w].after=[merge]: pipeline.steps[0].after[0]: dependency cycle: w -> merge -> w "
      "(each step runs before the next)");
  // Its problems of the cluster, all of them, are the reason (validate lists them all; the loader said the
  // first), each as what it is: the DaemonSet's pod takes the one pod slot (the room was enough: "asks for
  // cpu 1, more than any node can hold (largest: cpu 16)" said otherwise).
  spec.sets = {"cluster.daemonsets=[{name: agent, memory: 1Mi}]"};
  spec.dimensions = {parse_dimension("cluster.node_pools[n].max_pods=1,110")};
  const SweepResult r = run_sweep_text(kFanout, "fanout.yaml", spec);
  CHECK(r.configs[0].infeasible ==
        "step \"w\" (cpu 16, memory 0, gpu 0) fits no node it may use: on pool \"n\", the largest, the "
        "daemonsets "
        "take all of its max_pods; step \"merge\" (cpu 1, memory 0, gpu 0) fits no node it may use: on pool "
        "\"n\", "
        "the largest, the daemonsets take all of its max_pods");
  CHECK(r.configs[1].infeasible.empty());
}
