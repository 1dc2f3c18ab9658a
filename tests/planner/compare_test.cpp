#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <shardflow/core/error.hpp>
#include <shardflow/planner/compare.hpp>
#include <shardflow/planner/sweep.hpp>

#include "text_place.hpp"

using namespace shardflow;
using namespace shardflow::planner;

namespace {

// Eight noisy 10 s tasks, four at a time, on one node billed 3.6 an hour.
const std::string kNoisy =
    "name: noisy\n"
    "seed: 5\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 8, parallelism: 4}\n"
    "      duration: {base: 10s, noise: {lognormal_sigma: 0.3}}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

// What f throws as an InputError, or "no error".
template <class F>
std::string error_of(const F& f) {
  try {
    f();
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

std::string compare_json(int threads) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(threads));
  CompareSpec spec;
  spec.variants = {parse_variant("four"), parse_variant("two:pipeline.steps[w].parallel_for.parallelism=2"),
                   parse_variant("eight:pipeline.steps[w].parallel_for.parallelism=8")};
  spec.replications = 25;
  std::ostringstream out;
  write_compare_json(out, run_compare_text(kNoisy, "noisy.yaml", spec));
  return out.str();
}

}  // namespace

TEST_CASE("compare: the same output on 1 and on 2 threads", "[planner]") {
  const std::string one = compare_json(1), two = compare_json(2);
  CHECK(one == two);
  CHECK(one.find("\"seed\": 29") != std::string::npos);  // seeds 5..29
}

TEST_CASE("compare: compare.json reads back, and an edited one gets each bad value at its line:col",
          "[planner]") {
  const std::string good = compare_json(1);
  std::istringstream in(good);
  std::ostringstream again;
  write_compare_json(again, read_compare_json(in, "c/compare.json"));
  CHECK(again.str() == good);
  // The first `from` replaced by `to`; the error must be at the line:col where `to` starts, plus `shift`.
  const auto check = [&](const std::string& from, const std::string& to, std::size_t shift,
                         const std::string& message, const std::string& after = "") {
    std::string text = good;
    const std::size_t at = text.find(from, after.empty() ? 0 : text.find(after));
    INFO(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    std::istringstream bad(text);
    std::string err;
    try {
      read_compare_json(bad, "c/compare.json");
    } catch (const shardflow::InputError& e) {
      err = e.what();
    }
    CHECK(err == "c/compare.json:" + shardflow::testing::line_col(text, at + shift) + ": " + message);
  };
  check("\"replications\": 25", "\"replications\": 25.5", 16, "replications: expected an integer, got 25.5");
  check("\"name\": \"four\"", "\"name\": 4", 8, "variants[0].name: expected a string, got 4");
  check("\"runs_with_failed_tasks\": 0", "\"runs_with_failed_tasks\": 26", 26,
        "variants[0].runs_with_failed_tasks: expected an integer from 0 to 25, got 26");
  check("\"failed\": false", "\"failed\": 0", 10,
        "variants[0].runs[0].failed: expected true or false, got 0");
  check("\"cost\": ", "\"cost\": -1, \"was\": ", 8, "variants[0].runs[0].cost: must be at least 0, got -1",
        "\"runs\": [");
  check("\"fastest\": ", "\"fastest\": 3, \"was\": ", 11,
        "fastest: is not an index into variants (there are 3), got 3");
  check("\"variants\": [", "\"variants\": {\"x\": 1}, \"was\": [", 12,
        "variants: expected a list, got {\"x\":1}");
  check(
      "\"kind\": \"compare\"", "\"kind\": \"sweep\"", 8,
      "kind: expected \"compare\" (a comparison's result, as `shardflow compare` writes it), got \"sweep\"");
  // Figures that follow from the runs, edited into disagreeing with them: refused (the page was made).
  check("\"runs_with_failed_tasks\": 0", "\"runs_with_failed_tasks\": 1", 26,
        "variants[0].runs_with_failed_tasks: does not follow from the runs (0 of them failed)");
  check("\"recommended\": null", "\"recommended\": 0", 15,
        "recommended: is variant 0 (four), but there is no deadline");
  {
    std::string text = good;
    text.replace(text.find("\"replications\": 25"), 18, "\"replications\": 26");
    std::istringstream bad(text);
    CHECK_THAT(error_of([&] { read_compare_json(bad, "c/compare.json"); }),
               Catch::EndsWith(": variants[0].runs: has 25 runs for 26 replications"));
  }
}

TEST_CASE("compare: a variant's overlay and sets come after the common --overlay and --set", "[planner]") {
  // docs/compare-format.md: the common options apply to every variant first. A common --set applied
  // after the variant's overlay undid the variant (it ran the baseline under the overlay's name).
  CompareSpec spec;
  spec.overlays = {{"common.yaml", "pipeline: {steps: [{name: w, parallel_for: {parallelism: 3}}]}\n"}};
  spec.sets = {"pipeline.steps[w].parallel_for.parallelism=2"};
  spec.variants = {parse_variant("base"), parse_variant("four:pipeline.steps[w].parallel_for.parallelism=4")};
  Variant eight = parse_variant("eight");
  eight.overlays = {{"eight.yaml", "pipeline: {steps: [{name: w, parallel_for: {parallelism: 8}}]}\n"}};
  spec.variants.push_back(eight);
  Variant both = eight;  // its own set after its own overlay
  both.name = "both";
  both.sets = {"pipeline.steps[w].parallel_for.parallelism=5"};
  spec.variants.push_back(both);
  const auto parallelism = [&](std::size_t v) {
    return load_variant(kNoisy, "noisy.yaml", spec, v).pipeline.steps[0].loop->parallelism;
  };
  CHECK(parallelism(0) == 2);
  CHECK(parallelism(1) == 4);
  CHECK(parallelism(2) == 8);
  CHECK(parallelism(3) == 5);
}

TEST_CASE("compare: parse_variant splits NAME:PATH=V,... outside brackets and quotes", "[planner]") {
  const Variant v = parse_variant("x: a.b[c]=[1, 2], d='e,f' ,g={h: 1, i: 2}");
  CHECK(v.name == "x");
  CHECK(v.sets == std::vector<std::string>{"a.b[c]=[1, 2]", "d='e,f'", "g={h: 1, i: 2}"});
  CHECK(parse_variant("base").sets.empty());
  CHECK(parse_variant("base:").sets.empty());
}

TEST_CASE("compare: a variants file's sets keep their YAML values and places", "[planner]") {
  const std::vector<Variant> vs = read_variants_text(
      "variants:\n  - name: a\n  - name: b\n    set:\n      x.y: [1, 2]\n      z: hello\n", "v.yaml");
  REQUIRE(vs.size() == 2);
  CHECK(vs[1].sets == std::vector<std::string>{"x.y=[1, 2]", "z=hello"});
  CHECK(vs[1].set_where[0].str() == "v.yaml:5:7");
  CHECK(vs[1].set_where[1].str() == "v.yaml:6:7");
  CHECK(vs[1].where.str() == "v.yaml:3:5");  // the mapping after "  - "
}

// Progress is reported by whichever thread finishes a run (planner/progress.hpp; its own test shows the
// reordering it drops): what a sweep and a comparison show only goes forward, and ends at 1.
TEST_CASE("compare and sweep: progress only goes forward, to 1", "[planner]") {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
  std::vector<double> shown;
  CompareSpec spec;
  spec.variants = {parse_variant("four"), parse_variant("two:pipeline.steps[w].parallel_for.parallelism=2")};
  spec.replications = 400;
  run_compare_text(kNoisy, "noisy.yaml", spec, [&](double f) { shown.push_back(f); });
  CHECK(shown.size() == 100);  // 800 runs: every 8th
  CHECK(std::is_sorted(shown.begin(), shown.end()));
  CHECK(shown.back() == 1.0);

  shown.clear();
  SweepSpec sweep;
  sweep.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,4,8")};
  sweep.replications = 200;
  run_sweep_text(kNoisy, "noisy.yaml", sweep, [&](double f) { shown.push_back(f); });
  CHECK(shown.size() >= 100);
  CHECK(std::is_sorted(shown.begin(), shown.end()));
  CHECK(shown.back() == 1.0);

  // The auto search too (it showed nothing but the end), against its estimate of the runs it needs.
  shown.clear();
  sweep.dimensions = {parse_dimension("pipeline.steps[w].parallel_for.parallelism=1,2,3,4,5,6,7,8"),
                      parse_dimension("cluster.node_pools[n].price_per_hour=1,2,3,4")};
  sweep.search = Search::automatic;
  sweep.deadline_s = 45;
  run_sweep_text(kNoisy, "noisy.yaml", sweep, [&](double f) { shown.push_back(f); });
  CHECK(shown.size() >= 10);
  CHECK(std::is_sorted(shown.begin(), shown.end()));
  CHECK(shown[shown.size() - 2] <= 0.99);
  CHECK(shown.back() == 1.0);
}

// The differences table: a significant difference smaller than the column's precision gets the decimals
// that show it (it printed as "+0.00 (+0.00..+0.01) yes"); others keep the column's.
TEST_CASE("compare: a small significant difference is printed with the digits that show it", "[planner]") {
  CompareResult r;
  r.scenario = "s";
  r.replications = 10;
  VariantResult base, small;
  base.name = "base";
  small.name = "small";
  small.diff_makespan_s = {
      .mean = 0.04, .ci95_low = 0.02, .ci95_high = 0.06, .n = 10};  // 0.02 shows at 0.1: +0.0
  small.diff_cost = {.mean = 0.004, .ci95_low = 0.0031, .ci95_high = 0.0049, .n = 10};
  r.variants = {base, small};
  std::ostringstream out;
  print_compare(out, r);
  const std::string text = out.str();
  INFO(text);
  // The baseline's means are 0 here: no share of them.
  CHECK(
      text.find("  small    +0.04 (+0.02..+0.06)                   yes  +0.004 (+0.003..+0.005)              "
                "     yes\n") != std::string::npos);
  VariantResult wide = small;
  wide.name = "wide";
  wide.diff_cost = {
      .mean = 0.004, .ci95_low = -0.2, .ci95_high = 0.3, .n = 10};  // not significant: as it was
  r.variants = {base, wide};
  std::ostringstream out2;
  print_compare(out2, r);
  CHECK(out2.str().find("+0.00 (-0.20..+0.30)                    no") != std::string::npos);
  CHECK(out2.str().find("note: with fewer than") == std::string::npos);
  // Under 10 replications, the note on the intervals follows the variants' list.
  r.replications = 9;
  std::ostringstream out3;
  print_compare(out3, r);
  CHECK(out3.str().find("  wide: no changes of its own (the scenario as loaded, with any common --set and "
                        "--overlay)\nnote: with fewer than 10 replications the 95% intervals "
                        "are plain Student-t intervals") != std::string::npos);
}

TEST_CASE("compare: a variant whose runs had failed tasks is neither fastest nor cheapest", "[planner]") {
  // `quick` fails its one task at 60 s in every run (p 1, no retries), an early and cheap end; `slow`
  // succeeds in 100 s: the fastest and the cheapest is `slow`.
  const std::string yaml =
      "name: f\nseed: 1\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: w, duration: {base: 60s}, failure: {p: 1}, retries: {max: 0}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 4, memory: 16Gi, count: 1, price_per_hour: 3.6}\n";
  CompareSpec spec;
  spec.replications = 3;
  spec.variants = {parse_variant("quick"),
                   parse_variant("slow:pipeline.steps[w].failure.p=0,pipeline.steps[w].duration.base=100s")};
  const CompareResult r = run_compare_text(yaml, "f.yaml", spec);
  REQUIRE(r.variants.size() == 2);
  CHECK(r.variants[0].runs_with_failed_tasks == 3);
  CHECK(r.variants[0].makespan_s.mean == Approx(60.0));
  CHECK(r.fastest == std::optional<std::size_t>(1));
  CHECK(r.cheapest == std::optional<std::size_t>(1));
  std::ostringstream out;
  print_compare(out, r);
  CHECK(out.str().find("runs with failed tasks") != std::string::npos);
  CHECK(out.str().find("3 of 3") != std::string::npos);
  CHECK(out.str().find("fastest: slow (mean makespan 100.0 s)") != std::string::npos);
  // With a deadline of 120 s, `quick`'s runs end by it (60 s) but its task failed: none meets it.
  spec.deadline_s = 120;
  const CompareResult d = run_compare_text(yaml, "f.yaml", spec);
  CHECK(d.variants[0].p_meets_deadline == 0);
  CHECK_FALSE(d.variants[0].meets);
  CHECK(d.variants[1].p_meets_deadline == 1);
  CHECK(d.variants[1].meets);
  // A quantile column of its own (p80) shows "none" where the quantile is a failed run's, as a sweep does.
  {
    CompareSpec q = spec;
    q.quantile = 80;
    std::ostringstream t;
    print_compare(t, run_compare_text(yaml, "f.yaml", q));
    CHECK(t.str().find("  quick               60.0    60.0..60.0   60.0   60.0   none") != std::string::npos);
    CHECK(t.str().find("  slow               100.0  100.0..100.0  100.0  100.0  100.0") != std::string::npos);
  }
  // Its p95 (60 s, within the deadline) is a failed run's: compare.json and compare.csv say so.
  std::ostringstream dj, dc;
  write_compare_json(dj, d);
  write_compare_csv(dc, d);
  CHECK_THAT(dj.str(),
             Catch::Contains("\"runs_with_failed_tasks\": 3,\n      \"quantile_on_failed_run\": true,"));
  CHECK_THAT(dj.str(),
             Catch::Contains("\"runs_with_failed_tasks\": 0,\n      \"quantile_on_failed_run\": false,"));
  CHECK_THAT(dc.str(), Catch::Contains(",true\nslow,"));
  CHECK_THAT(dc.str(), Catch::EndsWith(",false\n"));
  std::istringstream back(dj.str());
  std::ostringstream again;
  write_compare_json(again, read_compare_json(back, "compare.json"));
  CHECK(again.str() == dj.str());
  {
    // Named the fastest, or recommended, a variant that cannot be: refused.
    for (const auto& [from, to, message] :
         {std::tuple{
              "\"fastest\": 1", "\"fastest\": 0",
              "fastest: is variant 0 (quick), which has runs whose tasks failed (only variants without are "
              "named)"},
          std::tuple{"\"recommended\": 1", "\"recommended\": 0",
                     "recommended: is variant 0 (quick), which does not meet the deadline"}}) {
      std::string text = dj.str();
      REQUIRE(text.find(from) != std::string::npos);
      text.replace(text.find(from), std::string(from).size(), to);
      std::istringstream in(text);
      CHECK_THAT(error_of([&] { read_compare_json(in, "c/compare.json"); }), Catch::EndsWith(message));
    }
  }
  std::string edited = dj.str();
  edited.replace(edited.find("\"quantile_on_failed_run\": true"), 30, "\"quantile_on_failed_run\": false");
  std::istringstream bad(edited);
  CHECK_THROWS_WITH(
      read_compare_json(bad, "c/compare.json"),
      Catch::Contains("variants[0].quantile_on_failed_run: does not follow from runs_with_failed_tasks, "
                      "replications and quantile (3 of 3 runs failed, quantile 95)"));
  spec.deadline_s.reset();
  // Every variant with failures: none named.
  spec.variants = {parse_variant("quick"), parse_variant("also:pipeline.steps[w].duration.base=30s")};
  const CompareResult all = run_compare_text(yaml, "f.yaml", spec);
  CHECK_FALSE(all.fastest.has_value());
  CHECK_FALSE(all.cheapest.has_value());
  std::ostringstream out2;
  print_compare(out2, all);
  CHECK(out2.str().find(
            "fastest, cheapest: none (every variant had runs with failed tasks, which end early)") !=
        std::string::npos);
}

namespace {

// One node that takes one task (4 CPUs) at a time; w is 1 task of 10 s.
const std::string kOneNode =
    "name: q\nseed: 1\noverheads: none\npipeline:\n  steps:\n"
    "    - {name: w, parallel_for: {count: 1}, duration: {base: 10s}, resources: {cpu: 4}}\n"
    "cluster:\n  node_pools:\n    - {name: n, cpu: 4, memory: 16Gi, count: 1}\n";

}  // namespace

TEST_CASE("compare: a --quantile other than 50 or 95 has its own column, printed and in compare.csv",
          "[planner]") {
  // One node takes one task at a time: `one` (1 task of 10 s) takes 10 s every run, `four` 40 s.
  const std::string yaml = kOneNode;
  CompareSpec spec;
  spec.replications = 2;
  spec.quantile = 75;
  spec.deadline_s = 30;
  spec.variants = {parse_variant("one"), parse_variant("four:pipeline.steps[w].parallel_for.count=4")};
  const CompareResult r = run_compare_text(yaml, "q.yaml", spec);
  std::ostringstream out;
  print_compare(out, r);
  CHECK(out.str().find("  variant  makespan mean s      95% CI   p50   p95   p75  cost mean") !=
        std::string::npos);
  CHECK(out.str().find("  four                40.0  40.0..40.0  40.0  40.0  40.0") != std::string::npos);
  std::ostringstream csv;
  write_compare_csv(csv, r);
  const std::string c = csv.str();
  CHECK(c.find(",measured_mean_s,predicted_mean_s,makespan_quantile_s,measured_runs_with_failed_tasks,"
               "finished_cost_mean,diff_pairs,p_meets_deadline,p_meets_deadline_ci95_low,p_meets_deadline_"
               "ci95_high,quantile_on_failed_run\n") != std::string::npos);
  CHECK(c.find("\none,") != std::string::npos);
  // four: no measurement, p75 40 s; free nodes; 2 pairs; none of its 2 runs by 30 s: Wilson's 0..0.658.
  CHECK(c.substr(c.size() - 39) == ",,40,,0,2,0,0,0.6576197724933469,false\n");
  // The p95 is shown already: no column of its own. One replication: "seed 1". Priced at 1 an hour, a
  // cost under 0.1 in two significant digits: 10 s is 0.0028, 40 s 0.011 (not 0.00 and 0.01).
  spec.quantile = 95;
  spec.replications = 1;
  std::string priced = yaml;
  priced.replace(priced.find("count: 1}\n"), 10, "count: 1, price_per_hour: 1}\n");
  std::ostringstream out95;
  const CompareResult r95 = run_compare_text(priced, "q.yaml", spec);
  print_compare(out95, r95);
  // compare.csv's figures read back to compare.json's doubles (a stream's 6 digits gave 0.00277778).
  std::ostringstream csv95;
  write_compare_csv(csv95, r95);
  std::string row = csv95.str().substr(csv95.str().find("\none,") + 1);
  std::vector<std::string> cells;
  for (std::size_t at = 0, comma = 0; comma != std::string::npos; at = comma + 1)
    cells.push_back(row.substr(at, (comma = row.find_first_of(",\n", at)) - at));
  REQUIRE(cells.size() > 7);
  CHECK(cells[7].size() > 10);  // cost_mean: 10 s at 1 an hour, 0.0027777...
  CHECK(std::stod(cells[7]) == r95.variants[0].cost.mean);
  CHECK(std::stod(cells[2]) == r95.variants[0].makespan_s.mean);
  CHECK(out95.str().find("p95  cost mean") != std::string::npos);
  CHECK(out95.str().find("2 variants x 1 replication (seed 1, the same for every variant)") !=
        std::string::npos);
  CHECK(out95.str().find("  one                 10.0") != std::string::npos);
  CHECK(out95.str().find("     0.0028") != std::string::npos);
  CHECK(out95.str().find("      0.011") != std::string::npos);
  CHECK(out95.str().find("cheapest: one (mean cost 0.0028)") != std::string::npos);
}

TEST_CASE("compare: --max-tasks holds for every variant", "[planner]") {
  const std::string yaml =
      "name: m\nseed: 1\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: w, parallel_for: {count: 4}, duration: {base: 1s}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 4, memory: 16Gi, count: 1}\n";
  CompareSpec spec;
  spec.replications = 1;
  spec.max_tasks = 5;
  spec.variants = {parse_variant("a"), parse_variant("b:pipeline.steps[w].parallel_for.count=8")};
  CHECK(error_of([&] { run_compare_text(yaml, "m.yaml", spec); }) ==
        "--variant b:pipeline.steps[w].parallel_for.count=8: pipeline.steps[0].parallel_for.count: variant "
        "b: the "
        "pipeline unrolls to 8 tasks (about 1 MiB of memory to simulate); the limit is 5 (--max-tasks raises "
        "it; "
        "`explain` counts without unrolling)");
}

TEST_CASE("compare: one replication has no interval, so no difference is significant", "[planner]") {
  // Without noise, `two` takes 20 s more than `four` (two waves of 10 s more); one run of each.
  const std::string yaml =
      "name: one\nseed: 1\noverheads: none\npipeline:\n  steps:\n"
      "    - {name: w, parallel_for: {count: 8, parallelism: 4}, duration: {base: 10s}}\n"
      "cluster:\n  node_pools:\n    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";
  CompareSpec spec;
  spec.replications = 1;
  spec.variants = {parse_variant("four"), parse_variant("two:pipeline.steps[w].parallel_for.parallelism=2")};
  const CompareResult r = run_compare_text(yaml, "one.yaml", spec);
  REQUIRE(r.variants.size() == 2);
  CHECK(r.variants[1].diff_makespan_s.mean == 20.0);
  CHECK(r.variants[1].diff_makespan_s.n == 1);
  CHECK_FALSE(significant(r.variants[1].diff_makespan_s));
  std::ostringstream out;
  print_compare(out, r);
  const std::string text = out.str();
  INFO(text);
  CHECK(
      text.find("difference to four, one run each: no interval, so nothing is significant (-r 2 or more for "
                "intervals; about 30 for narrow ones)\n") != std::string::npos);
  CHECK(text.find("  two           +20.0  +100.0%          n/a  +0.02  +100.0%          n/a\n") !=
        std::string::npos);
  CHECK(text.find("  four                20.0     n/a") != std::string::npos);
  // compare.json keeps it: read back, still one run, still not significant.
  std::ostringstream json;
  write_compare_json(json, r);
  CHECK(json.str().find("\"significant\": true") == std::string::npos);
  std::istringstream in(json.str());
  const CompareResult back = read_compare_json(in, "c/compare.json");
  CHECK(back.variants[1].diff_makespan_s.n == 1);
  CHECK_FALSE(significant(back.variants[1].diff_makespan_s));
  // Two runs of the same deterministic difference: an interval of zero width that excludes 0.
  spec.replications = 2;
  CHECK(significant(run_compare_text(yaml, "one.yaml", spec).variants[1].diff_makespan_s));
}

TEST_CASE("sweep, compare: the same node time at the same price is the same cost, and the makespan decides",
          "[planner]") {
  // Six 7 s tasks of one CPU on nodes of one CPU: 1, 2, 3 or 6 nodes all bill 42 node-seconds at 1.3 an
  // hour (0.0151666... each). Summed node by node, 3 x 14 s and 6 x 7 s rounded differently in the last
  // bit, and the slower 3 nodes were recommended as cheaper.
  const std::string yaml =
      "name: tie\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: w, parallel_for: {count: 6}, resources: {cpu: 1, memory: 64Mi}, duration: {base: 7s}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 1, memory: 1Gi, count: 1, price_per_hour: 1.3}\n";
  SweepSpec sweep;
  sweep.dimensions = {parse_dimension("cluster.node_pools[n].count=1,2,3,6")};
  sweep.replications = 1;
  sweep.deadline_s = 3600;
  const SweepResult s = run_sweep_text(yaml, "tie.yaml", sweep);
  REQUIRE(s.configs.size() == 4);
  for (const ConfigResult& c : s.configs) CHECK(c.cost.mean == s.configs[0].cost.mean);
  CHECK(s.configs[0].cost.mean == 1.3 * 42 / 3600);
  REQUIRE(s.recommended);
  CHECK(*s.recommended == 3);  // 6 nodes: 7 s
  CHECK(s.pareto == std::vector<std::size_t>{3});

  CompareSpec spec;
  spec.variants = {parse_variant("c3:cluster.node_pools[n].count=3"),
                   parse_variant("c6:cluster.node_pools[n].count=6")};
  spec.replications = 3;
  const CompareResult c = run_compare_text(yaml, "tie.yaml", spec);
  REQUIRE(c.variants.size() == 2);
  CHECK(c.variants[1].diff_cost.mean == 0);
  CHECK_FALSE(significant(c.variants[1].diff_cost));
  CHECK(c.variants[1].diff_makespan_s.mean == -7);
  REQUIRE(c.cheapest);
  CHECK(*c.cheapest == 1);  // the same cost, faster
}

TEST_CASE("sweep, compare: a fault of the file that only a configuration's values bring out names them",
          "[planner]") {
  const std::string yaml =
      "name: t1\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 4}\n"
      "      resources: {cpu: 1, memory: 64Mi}\n"
      "      duration: {base: 10s}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 1, memory: 1Gi, count: 2}\n";
  SweepSpec sweep;
  sweep.dimensions = {parse_dimension("cluster.node_pools[n].cpu=1,500m"),
                      parse_dimension("cluster.node_pools[n].count=1,2")};
  sweep.replications = 1;
  // A sweep's configuration that cannot run says why (the others are swept).
  const SweepResult r = run_sweep_text(yaml, "t1.yaml", sweep);
  for (std::size_t c : {2, 3})
    CHECK(r.configs[c].infeasible ==
          "step \"w\" asks for cpu 1, memory 64Mi, gpu 0, more than any node it may use can hold (largest: "
          "pool \"n\" with cpu 500m, memory 1Gi, gpu 0); pool \"n\" has cpu 500m from --vary "
          "cluster.node_pools[n].cpu=1,500m");
  CHECK(r.configs[0].infeasible.empty());
  CompareSpec spec;
  spec.variants = {parse_variant("a"), parse_variant("b:cluster.node_pools[n].count=0")};
  spec.replications = 1;
  CHECK(error_of([&] { run_compare_text(yaml, "t1.yaml", spec); }) ==
        "--variant b:cluster.node_pools[n].count=0: cluster.node_pools[0].count: variant b: the cluster has "
        "no nodes (every pool has count 0 and no autoscaling)");
  // A pool size a variant gave is named where the variant gave it, not as a --set never typed.
  spec.variants[1] = parse_variant("c:cluster.node_pools[n].cpu=500m");
  CHECK(error_of([&] { run_compare_text(yaml, "t1.yaml", spec); }) ==
        "t1.yaml:7:18: pipeline.steps[0].resources: step \"w\" asks for cpu 1, memory 64Mi, gpu 0, more than "
        "any "
        "node it may use can hold (largest: pool \"n\" with cpu 500m, memory 1Gi, gpu 0); pool \"n\" has cpu "
        "500m "
        "from --variant c:cluster.node_pools[n].cpu=500m (in variant c: cluster.node_pools[n].cpu=500m)");
}

TEST_CASE("compare: an empty variants list says so", "[planner]") {
  try {
    (void)read_variants_text("variants: []\n", "v.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "v.yaml:1:11: variants: is empty: list the variants to compare, each {name, set, overlay}, the "
          "baseline "
          "first");
  }
}

TEST_CASE("compare: a variants file's bad name is said at its field in the list", "[planner]") {
  // It was said as `name` alone, where the list's other problems say variants[i].name.
  CHECK(error_of([] { (void)read_variants_text("variants:\n  - {name: a}\n  - {name: ..}\n", "v.yaml"); }) ==
        "v.yaml:3:12: variants[1].name: \"..\": a variant's name is not dots alone");
  CHECK(error_of([] { (void)read_variants_text("variants:\n  - {name: a/b}\n", "v.yaml"); }) ==
        "v.yaml:2:12: variants[0].name: \"a/b\": a variant's name is letters, digits, '-', '_' and '.' only");
}

TEST_CASE("compare: a first seed whose replications would pass 2^64 - 1 is refused, not wrapped to 0",
          "[planner]") {
  CompareSpec spec;
  spec.replications = 2;
  spec.base_seed = 18446744073709551615ULL;
  spec.variants = {parse_variant("a"), parse_variant("b:pipeline.steps[w].parallel_for.parallelism=8")};
  CHECK(error_of([&] { run_compare_text(kNoisy, "noisy.yaml", spec); }) ==
        "--seed: replication k runs seed 18446744073709551615 + k, and 2 replications would pass "
        "18446744073709551615 (2^64 - 1): give a seed of at most 18446744073709551614");
}

TEST_CASE("compare: compare.csv escapes semicolons and backslashes inside a variant's sets", "[planner]") {
  const std::string yaml = kOneNode;
  CompareSpec spec;
  spec.replications = 1;
  spec.variants = {parse_variant("one"),
                   parse_variant("semi:name=a; b\\c,pipeline.steps[w].parallel_for.count=2")};
  const CompareResult r = run_compare_text(yaml, "q.yaml", spec);
  REQUIRE(r.variants.size() == 2);
  CHECK(r.variants[1].sets ==
        std::vector<std::string>{"name=a; b\\c", "pipeline.steps[w].parallel_for.count=2"});
  std::ostringstream csv;
  write_compare_csv(csv, r);
  CHECK(csv.str().find("\nsemi,name=a\\; b\\\\c; pipeline.steps[w].parallel_for.count=2,20,") !=
        std::string::npos);
}
