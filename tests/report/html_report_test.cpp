#include <cstddef>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/report/html_report.hpp>

#include "report/html.hpp"

using namespace shardflow;
using namespace shardflow::report;

namespace {

SimTime s(double seconds) {
  return Duration::from_seconds(seconds);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

AttemptRecord attempt(TaskId task, std::uint32_t step, std::uint32_t n, std::int32_t node, double bound,
                      double finished, Outcome outcome = Outcome::succeeded) {
  AttemptRecord a;
  a.task = task;
  a.step = step;
  a.item = task;
  a.attempt = n;
  a.node = node;
  a.submitted = s(0);
  a.scheduled = bound < 0 ? kNever : s(bound);
  a.started = bound < 0 ? kNever : s(bound + 1);
  a.finished = s(finished);
  a.outcome = outcome;
  a.kind = n == 0 ? AttemptKind::first : AttemptKind::retry;
  return a;
}

// Two nodes, two steps; task 1 fails once and is retried; one pod is never bound.
Trace small_trace() {
  Trace t;
  t.backend = "sim";
  t.scenario = "small";
  t.seed = 7;
  t.steps = {"prep", "train"};
  t.pod_prefixes = {"prep-", "train-"};
  t.nodes = {NodeRecord{"cpu-0", "cpu", 4000, kGiB, 0, 1, s(0), s(100), s(0)},
             NodeRecord{"gpu-0", "gpu", 8000, 4 * kGiB, 1, 3, s(0), s(100), s(0)}};
  t.attempts = {attempt(0, 0, 0, 0, 1, 30), attempt(1, 0, 0, 0, 1, 20, Outcome::failed),
                attempt(1, 0, 1, 0, 21, 40), attempt(2, 1, 0, 1, 41, 100),
                attempt(3, 1, 0, -1, -1, 5, Outcome::cancelled)};
  return t;
}

Metrics small_metrics() {
  Metrics m;
  m.makespan_s = 100;
  m.critical_path_s = 98;
  m.attempts = 5;
  m.retries = 1;
  m.failed_attempts = 2;
  m.per_step = {StepMetrics{"prep", 3, 1, 2, {}, {1000, kGiB / 2, 0}},
                StepMetrics{"train", 2, 1, 1, {}, {4000, kGiB, 1}}};
  m.critical_path = {1, 2};
  return m;
}

std::string run_page(const Trace& t, const Metrics& m, std::size_t max_bars = 12'000) {
  std::ostringstream out;
  ReportOptions o;
  o.version = "9.9.9";
  o.max_bars = max_bars;
  write_run_report(out, t, m, o);
  return out.str();
}

}  // namespace

TEST_CASE("human_duration: rounded to what matters at each size", "[report]") {
  CHECK(human_duration(4500) == "1h15m");
  CHECK(human_duration(4529.6) == "1h15m");
  CHECK(human_duration(4530) == "1h16m");
  CHECK(human_duration(243.4) == "4m3s");
  CHECK(human_duration(3599.7) == "1h");
  CHECK(human_duration(59.96) == "1m");
  CHECK(human_duration(2.5) == "2.5s");
  CHECK(human_duration(12.34) == "12.3s");
  CHECK(human_duration(0.35) == "350ms");
  CHECK(human_duration(0.0000025) == "3us");
  CHECK(human_duration(0) == "0s");
  CHECK(human_duration(-90) == "-1m30s");
  CHECK(human_duration(90000) == "25h");
}

TEST_CASE("Pareto front: the points nothing beats in both cost and time, by cost", "[report]") {
  // (cost, time): 0 (1, 10) front; 1 (2, 5) front; 2 (3, 6) beaten by 1; 3 (2, 7) beaten by 1;
  // 4 (4, 1) front; 5 (1, 12) beaten by 0 (same cost, slower); 6 (4, 1) equal to 4: kept.
  const std::vector<CostTime> p = {{1, 10}, {2, 5}, {3, 6}, {2, 7}, {4, 1}, {1, 12}, {4, 1}};
  CHECK(pareto_front(p) == std::vector<std::size_t>{0, 1, 4, 6});
  CHECK(pareto_front(std::vector<CostTime>{}).empty());
  CHECK(pareto_front(std::vector<CostTime>{{5, 5}}) == std::vector<std::size_t>{0});
  // A cheaper point as fast as a dearer one beats it.
  CHECK(pareto_front(std::vector<CostTime>{{2, 3}, {1, 3}}) == std::vector<std::size_t>{1});
}

TEST_CASE("Run report: one bar per bound attempt, retries, failures and the critical path marked",
          "[report]") {
  const std::string page = run_page(small_trace(), small_metrics());
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(occurrences(page, "<rect class=\"bar ") == 4);  // the never-bound attempt has no bar
  CHECK(occurrences(page, "<rect class=\"bar s0 retry") == 1);
  CHECK(occurrences(page, "<rect class=\"bar s0 crit\"") == 0);  // task 1's failed attempt is not on the path
  CHECK(occurrences(page, "<rect class=\"bar s0 retry crit\"") == 1);
  CHECK(occurrences(page, "<rect class=\"bar s1 crit\"") == 1);
  const std::string chart = page.substr(page.find("<svg class=\"chart gantt\""));  // after the legend
  CHECK(occurrences(chart, "<path class=\"x\" d=\"M") ==
        1);  // the failed attempt; the unbound one has no bar
  CHECK(page.find("data-bars=\"4\" data-aggregated-nodes=\"0\"") != std::string::npos);
  // The steps' table counts failed attempts as the metrics do: train's cancelled one did not fail.
  CHECK(
      page.find("<tr><td>prep</td><td class=\"n\" data-v=\"3\">3</td><td class=\"n\" data-v=\"1\">1</td>") !=
      std::string::npos);
  CHECK(
      page.find("<tr><td>train</td><td class=\"n\" data-v=\"2\">2</td><td class=\"n\" data-v=\"0\">0</td>") !=
      std::string::npos);
  // The tooltip of the retry.
  CHECK(page.find("<title>prep[1] (task 1), attempt 1 (retry)\npod prep-1-1 on cpu-0\ncreated 0s, bound 21s, "
                  "started 22s, ended 40s\nran 18s; succeeded</title>") != std::string::npos);
  // A tooltip gives the trace's times to the millisecond (the page's other figures round: 3.975 s is "4s"
  // there), below a millisecond to the microsecond.
  Trace precise = small_trace();
  precise.attempts[2].scheduled = SimTime::from_ns(3'975'000'000);
  precise.attempts[2].started = SimTime::from_ns(3'975'400'000);
  precise.attempts[2].finished = SimTime::from_ns(4'000'600'000);
  precise.attempts[2].submitted = SimTime::from_ns(250'400);
  CHECK(run_page(precise, small_metrics())
            .find("created 250us, bound 3.975s, started 3.975s, ended 4.001s\nran 25ms; succeeded</title>") !=
        std::string::npos);
  // Headline and facts.
  CHECK(page.find("seed 7 · backend sim · 4 tasks, 5 attempts on 2 nodes · shardflow 9.9.9") !=
        std::string::npos);
  // Tasks that never ran (a task before them failed) are said apart: they have no attempt to count.
  Trace dead = small_trace();
  dead.tasks_not_run = {4, 5, 6};
  CHECK(run_page(dead, small_metrics())
            .find("seed 7 · backend sim · 4 tasks, 5 attempts on 2 nodes · 3 tasks not run (a task before "
                  "them failed) · shardflow 9.9.9") != std::string::npos);
  dead.tasks_not_run = {4};
  CHECK(run_page(dead, small_metrics()).find("2 nodes · 1 task not run (a task before it failed) · ") !=
        std::string::npos);
  // A run that stopped with tasks unfinished (interrupted) says so, and does not call them failed for good.
  Trace stopped = small_trace();
  stopped.tasks_failed = 3;
  stopped.tasks_unfinished = 2;
  stopped.tasks_waiting = 1;
  Metrics sm = small_metrics();
  sm.tasks_failed = 3;
  const std::string stopped_page = run_page(stopped, sm);
  CHECK(stopped_page.find("2 nodes · stopped with 3 tasks unfinished · shardflow 9.9.9") !=
        std::string::npos);
  // The task that waited (no attempt) is counted among the run's tasks: 4 with attempts, and it.
  CHECK(stopped_page.find("backend sim · 5 tasks, 5 attempts on 2 nodes") != std::string::npos);
  CHECK(stopped_page.find("0 tasks failed for good; 3 unfinished when the run stopped") != std::string::npos);
  CHECK(page.find("<div class=\"value\">1m40s</div>") != std::string::npos);
  // Utilization has a GPU line since a node has one; one histogram per step; no network.
  CHECK(occurrences(page, "<path class=\"line\"") == 4);  // CPU, memory, GPU; pending pods
  CHECK(occurrences(page, "<svg class=\"chart hist\"") == 2);
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find("<script src") == std::string::npos);
}

TEST_CASE("Run report: names with <&\" are escaped everywhere", "[report]") {
  Trace t = small_trace();
  t.steps[0] = "<b>&\"x'";
  t.nodes[0].name = "n<1>";
  t.scenario = "a&b";
  Metrics m = small_metrics();
  m.per_step[0].step = t.steps[0];
  const std::string page = run_page(t, m);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("n<1>") == std::string::npos);
  CHECK(page.find("a&b") == std::string::npos);
  CHECK(page.find("&lt;b&gt;&amp;&quot;x&#39;") != std::string::npos);
  CHECK(page.find("n&lt;1&gt;") != std::string::npos);
  CHECK(page.find("<title>shardflow run: a&amp;b</title>") != std::string::npos);
}

TEST_CASE("Run report: above max_bars, nodes over their share are drawn as time bins, and the chart says so",
          "[report]") {
  Trace t = small_trace();
  t.attempts.clear();
  // 300 pods on cpu-0, 10 on gpu-0; at most 50 bars: cpu-0 is aggregated.
  for (TaskId i = 0; i < 310; ++i)
    t.attempts.push_back(attempt(i, i < 300 ? 0 : 1, 0, i < 300 ? 0 : 1, i * 0.3, i * 0.3 + 5));
  Metrics m = small_metrics();
  m.makespan_s = 310 * 0.3 + 5;
  const std::string page = run_page(t, m, 50);
  CHECK(occurrences(page, "<rect class=\"bar ") == 10);
  CHECK(page.find("data-bars=\"10\" data-aggregated-nodes=\"1\"") != std::string::npos);
  CHECK(page.find("1 of 2 nodes have too many pods to draw one bar each (up to 300 on one node)") !=
        std::string::npos);
  CHECK(page.find("cpu-0 (aggregated)") != std::string::npos);
  CHECK(occurrences(page, "<rect class=\"agg s0\"") > 0);
  CHECK(occurrences(page, "<rect class=\"agg s0\"") <= 200);
}

TEST_CASE("Sweep report: a point per configuration, the front, the deadline and the recommendation",
          "[report]") {
  planner::SweepResult r;
  r.scenario = "sw";
  r.dimensions = {{"cluster.node_pools[cpu].count", {"1", "2", "4"}}};
  r.replications = 3;
  r.deadline_s = 60;
  for (const auto& [cost, mk] : std::vector<std::pair<double, double>>{{1, 100}, {2, 50}, {5, 55}}) {
    planner::ConfigResult c;
    c.values = {std::to_string(static_cast<int>(cost))};
    c.cost.mean = c.finished_cost_mean = cost;
    c.quantile_makespan_s = mk;
    c.makespan_s.mean = mk;
    c.meets = mk <= 60;
    r.configs.push_back(c);
  }
  r.recommended = 1;
  r.pareto = {0, 1};  // as finish_sweep finds it: (5, 55) is beaten by (2, 50)
  std::ostringstream out;
  write_sweep_report(out, r, {});
  const std::string page = out.str();
  CHECK(occurrences(page, "<circle class=\"pt") == 3);
  CHECK(occurrences(page, "<circle class=\"pt pareto rec\"") == 1);
  CHECK(occurrences(page, "<circle class=\"pt pareto\"") == 1);
  CHECK(occurrences(page, "<line class=\"deadline\"") == 1);
  CHECK(occurrences(page, "<path class=\"front\"") == 1);
  CHECK(page.find("data-points=\"3\" data-front=\"2\"") != std::string::npos);
  CHECK(occurrences(page, "<tr class=\"rec\"") == 1);
  CHECK(page.find("<table class=\"sortable configs\">") != std::string::npos);
  CHECK(page.find("<title>cluster.node_pools[cpu].count = 1\nmean cost 1.00; p95 makespan") !=
        std::string::npos);
  // With runs whose tasks failed, the point's cost (theirs left out) is named apart from the table's.
  {
    planner::SweepResult f = r;
    f.configs[0].runs_with_failed_tasks = 1;
    f.configs[0].cost.mean = 0.8;
    std::ostringstream o;
    write_sweep_report(o, f, {});
    CHECK(
        o.str().find("count = 1\nmean cost of the runs whose tasks all finished 1.00 (of all runs 0.80); ") !=
        std::string::npos);
  }
  // A --budget sweep that nothing fits says so (it said "no --deadline given").
  r.deadline_s.reset();
  r.budget = 0.5;
  r.recommended.reset();
  std::ostringstream none;
  write_sweep_report(none, r, {});
  CHECK(none.str().find(" · budget 0.5") != std::string::npos);
  CHECK(none.str().find("no configuration is within the budget") != std::string::npos);
  // A configuration that cannot run: no point (its zero cost would widen the axis), a row that says why
  // across the figures' columns and stays last when sorted, and a card.
  r.deadline_s = 60;
  planner::ConfigResult empty;
  empty.values = {"0"};
  empty.infeasible = "the cluster has no nodes (<none>)";
  r.configs.insert(r.configs.begin(), empty);
  r.recommended = 2;
  r.pareto = {1, 2};
  std::ostringstream with;
  write_sweep_report(with, r, {});
  const std::string p = with.str();
  CHECK(occurrences(p, "<circle class=\"pt") == 3);
  CHECK(p.find("data-points=\"3\" data-front=\"2\"") != std::string::npos);
  CHECK(
      p.find(
          "<tr data-last><td class=\"n\" data-v=\"0\">0</td><td data-v=\"0\">0</td><td class=\"infeasible\" "
          "colspan=\"7\">cannot run: the cluster has no nodes (&lt;none&gt;)</td></tr>") !=
      std::string::npos);
  CHECK(p.find("<div class=\"label\">cannot run</div><div class=\"value\">1 of 4</div>") !=
        std::string::npos);
  CHECK(p.find("hasAttribute('data-last')") != std::string::npos);
  // The varied values sort as numbers (1, 2, 10), a value that is not one as text.
  CHECK(p.find("<td data-v=\"2\">2</td>") != std::string::npos);
  // A quantile on a run whose tasks failed is no makespan: "none", sorted as the longest.
  r.configs[1].quantile_on_failed_run = true;
  std::ostringstream failed;
  write_sweep_report(failed, r, {});
  CHECK(failed.str().find("<td class=\"n\" data-v=\"Infinity\">none (a failed run)</td>") !=
        std::string::npos);
  CHECK(failed.str().find("p95 makespan none (a run whose tasks failed)") != std::string::npos);
}

TEST_CASE("Prediction report: both Gantt charts on one time axis, and the error per step", "[report]") {
  const Trace t = small_trace();
  const Metrics m = small_metrics();
  Metrics measured = m;
  measured.makespan_s = 80;
  measured.per_step[0].run_seconds.p50 = 10;
  Metrics predicted = m;
  predicted.per_step[0].run_seconds.p50 = 12;
  std::ostringstream out;
  write_prediction_report(out, {t, predicted, "predicted"}, {t, measured, "measured"}, {});
  const std::string page = out.str();
  CHECK(occurrences(page, "<svg class=\"chart gantt\"") == 2);
  CHECK(occurrences(page, "<rect class=\"bar ") == 8);
  CHECK(page.find("<div class=\"value\">25.0%</div>") != std::string::npos);  // makespan 100 against 80
  CHECK(page.find(">20.0%</td>") != std::string::npos);                       // prep p50 12 s against 10 s
  CHECK(page.find("time scale") == std::string::npos);
  // A measured run at --time-scale 0.05 against a prediction in model time: said.
  Trace scaled = t;
  scaled.time_scale = 0.05;
  scaled.time_scaled_steps = {0};
  std::ostringstream out2;
  write_prediction_report(out2, {t, predicted, "predicted"}, {scaled, measured, "measured"}, {});
  CHECK(out2.str().find("<p class=\"note\">The measured run ran at time scale 0.05 (run --time-scale): its "
                        "sampled-time steps took that times their model time") != std::string::npos);
}

TEST_CASE("Run report: an empty trace still makes a page", "[report]") {
  Trace t;
  t.backend = "local";
  t.scenario = "empty";
  const std::string page = run_page(t, Metrics{});
  CHECK(page.find("data-bars=\"0\" data-aggregated-nodes=\"0\"") != std::string::npos);
  CHECK(page.find("0 tasks, 0 attempts on 0 nodes") != std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}

TEST_CASE("Run report: 100,000 attempts with long names and errors stay under 10 MB", "[report]") {
  // About the most a page draws: 100 nodes with 118 pods each, just within their share of max_bars
  // (12,000 / 101 nodes), with 60-character names and long errors in every tooltip; the other 88,200
  // pods on one more node, aggregated.
  Trace t;
  t.backend = "k8s";
  t.steps = {std::string(60, 's')};
  t.errors = {std::string(5000, 'e')};
  for (int n = 0; n <= 100; ++n)
    t.nodes.push_back(
        NodeRecord{std::string(57, 'n') + std::to_string(n), "p", 1000, kGiB, 0, 1, s(0), s(1e5), s(0)});
  for (TaskId i = 0; i < 100'000; ++i) {
    const auto node = static_cast<std::int32_t>(i < 11'800 ? i % 100 : 100);
    AttemptRecord a = attempt(i, 0, 0, node, i * 0.5, i * 0.5 + 40, Outcome::failed);
    a.error = 0;
    a.pod = static_cast<std::uint32_t>(t.pod_names.size());
    t.pod_names.push_back(std::string(60, 'p'));
    t.attempts.push_back(a);
  }
  Metrics m;
  m.makespan_s = 1e5;
  m.per_step = {StepMetrics{t.steps[0], 100'000, 100'000, 0, {}, {1000, kGiB, 0}}};
  const std::string page = run_page(t, m);
  CHECK(page.find("data-bars=\"11800\" data-aggregated-nodes=\"1\"") != std::string::npos);
  CHECK(occurrences(page, "<rect class=\"bar ") == 11'800);
  CHECK(page.size() < 10'000'000);
}

// A significant difference smaller than two decimals shows its digits in the table and the chart's tooltip
// (it read "+0 (95% CI +0 to +0.01)"), as in the command's table (planner::difference_decimals).
TEST_CASE("compare report: a small significant difference is shown with the digits that show it",
          "[report]") {
  planner::CompareResult r;
  r.scenario = "s";
  r.replications = 10;
  planner::VariantResult base, small;
  base.name = "base";
  small.name = "small";
  small.diff_cost = {.mean = 0.004, .ci95_low = 0.0031, .ci95_high = 0.0049, .n = 10};
  small.diff_makespan_s = {.mean = 5, .ci95_low = -1, .ci95_high = 11, .n = 10};
  r.variants = {base, small};
  std::ostringstream out;
  write_compare_report(out, r, ReportOptions{});
  const std::string html = out.str();
  CHECK(html.find("+0.004 (+0.003 to +0.005) *</td>") != std::string::npos);
  CHECK(html.find("small − base: +0.004 (95% CI +0.003 to +0.005)") != std::string::npos);
}

// One replication has no interval: the page says so instead of showing the mean as a zero-width interval
// and calling the difference significant.
TEST_CASE("compare report: one replication shows no interval and nothing significant", "[report]") {
  planner::CompareResult r;
  r.scenario = "s";
  r.replications = 1;
  planner::VariantResult base, other;
  base.name = "base";
  other.name = "other";
  base.makespan_s = {.mean = 100, .ci95_low = 100, .ci95_high = 100, .n = 1};
  other.makespan_s = {.mean = 120, .ci95_low = 120, .ci95_high = 120, .n = 1};
  other.diff_makespan_s = {.mean = 20, .ci95_low = 20, .ci95_high = 20, .n = 1};
  r.variants = {base, other};
  std::ostringstream out;
  write_compare_report(out, r, ReportOptions{});
  const std::string html = out.str();
  CHECK(html.find("other − base: +20.00 (one run: no interval, nothing is significant)") !=
        std::string::npos);
  CHECK(html.find("n/a (one run)") != std::string::npos);
  CHECK(html.find("class=\"diff sig\" cx") == std::string::npos);
  CHECK(html.find(">+20s</td>") != std::string::npos);
  CHECK(html.find("0 of 2") != std::string::npos);
}

TEST_CASE("report: esc and append_esc escape the five HTML characters, and nothing else", "[report]") {
  CHECK(detail::esc("a<b>&\"c'd e/\xc3\xa9") == "a&lt;b&gt;&amp;&quot;c&#39;d e/\xc3\xa9");
  CHECK(detail::esc("") == "");
  // Control characters show their pictures (a name from a WfCommons file or a YAML escape may hold one).
  CHECK(detail::esc(std::string("a\x01"
                                "b\x7f\0c\td",
                                8)) == "a\u2401b\u2421\u2400c\td");
  CHECK(detail::esc("&&") == "&amp;&amp;");
  std::string out = "x";
  detail::append_esc(out, "<y>");
  CHECK(out == "x&lt;y&gt;");
}

// An imported workflow has a step per task: the page draws the kMaxDrawnSteps steps with the most run time
// (a histogram, a legend entry, a table row each) and says how many more there are; one CSS rule per colour.
TEST_CASE("Run report: a run of many steps draws those with the most run time and says so", "[report]") {
  Trace t;
  t.backend = "sim";
  t.scenario = "wide";
  t.nodes = {NodeRecord{"n-0", "p", 4000, kGiB, 0, 1, s(0), s(1000), s(0)}};
  constexpr std::size_t kSteps = 100;
  for (std::size_t i = 0; i < kSteps; ++i) {
    t.steps.push_back("step" + std::to_string(i));
    t.pod_prefixes.push_back("step" + std::to_string(i) + "-");
    // Step i runs i + 1 s, so steps 60..99 have the most run time.
    AttemptRecord a = attempt(static_cast<TaskId>(i), static_cast<std::uint32_t>(i), 0, 0, 0, 0);
    a.started = s(0);
    a.finished = s(static_cast<double>(i + 1));
    t.attempts.push_back(a);
  }
  Metrics m;
  m.makespan_s = 100;
  m.attempts = kSteps;
  const std::string page = run_page(t, m);
  CHECK(page.find("<p class=\"note\">40 of the 100 steps, those with the most run time; every step is in "
                  "metrics.csv, every attempt in trace.csv.</p>") != std::string::npos);
  CHECK(occurrences(page, "<svg class=\"chart hist\"") == 40);
  CHECK(page.find("aria-label=\"step59: ") == std::string::npos);
  CHECK(page.find("aria-label=\"step60: 1 run\"") != std::string::npos);
  CHECK(page.find("<tr><td>step99</td>") != std::string::npos);
  CHECK(page.find("<tr><td>step0</td>") == std::string::npos);
  CHECK(page.find("and 60 more steps (the colours repeat every 7 steps; grey in aggregated rows)") !=
        std::string::npos);
  CHECK(page.find(".s7{") == std::string::npos);  // 7 colours, 7 rules
  CHECK(page.find(".s6{fill:") != std::string::npos);
  CHECK(page.find("<rect class=\"bar s1\"") != std::string::npos);  // step 99's bar: 99 % 7 = 1
}

TEST_CASE("Run report: thousands of aggregated nodes get fewer bins and a steady node one rectangle",
          "[report]") {
  // 5,000 nodes of 3 pods each, at most 50 bars: every node is aggregated. 200 bins each would be 1,000,000
  // rectangles (the page of a 10,000-node run was 300 MB); 40,000 / (5,000 nodes x 2 groups) is 4 bins.
  Trace t = small_trace();
  t.attempts.clear();
  t.nodes.clear();
  constexpr int kNodes = 5000;
  for (int n = 0; n < kNodes; ++n) {
    t.nodes.push_back(NodeRecord{"n-" + std::to_string(n), "cpu", 4000, kGiB, 0, 1, s(0), s(100), s(0)});
    // Node 0: one pod from start to end and two in the first half; the others: three pods, whole run.
    for (int k = 0; k < 3; ++k)
      t.attempts.push_back(attempt(static_cast<TaskId>(n * 3 + k), 0, 0, n, 0, n == 0 && k > 0 ? 50 : 100));
  }
  Metrics m = small_metrics();
  m.makespan_s = 100;
  const std::string page = run_page(t, m, 50);
  CHECK(page.find("data-bars=\"0\" data-aggregated-nodes=\"5000\"") != std::string::npos);
  CHECK(page.find("5,000 of 5,000 nodes have too many pods to draw one bar each (up to 3 on one node): they "
                  "are drawn as 4 time bins") != std::string::npos);
  // Every node but n-0 runs 3 pods throughout: its 4 equal columns are one rectangle. n-0 runs 3, then 1.
  CHECK(occurrences(page, "<rect class=\"agg s0\"") == (kNodes - 1) + 2);
  CHECK(page.find("<title>n-1, 0s to 1m40s: 3.0 prep pods running on average</title>") != std::string::npos);
  CHECK(page.find("<title>n-0, 0s to 50s: 3.0 prep pods running on average</title>") != std::string::npos);
  CHECK(page.find("<title>n-0, 50s to 1m40s: 1.0 prep pods running on average</title>") != std::string::npos);
}
