#include <algorithm>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <shardflow/core/metrics.hpp>

#include "core/pipeline_builders.hpp"

using namespace shardflow;
using namespace shardflow::testing;

namespace {

Duration s(double seconds) {
  return Duration::from_seconds(seconds);
}

AttemptRecord attempt(TaskId task, std::uint32_t n, std::int32_t node, double submitted, double scheduled,
                      double started, double finished, Outcome outcome) {
  AttemptRecord a;
  a.task = task;
  a.step = task;  // one task per step in this plan
  a.attempt = n;
  a.node = node;
  a.submitted = s(submitted);
  a.scheduled = s(scheduled);
  a.started = s(started);
  a.finished = s(finished);
  a.outcome = outcome;
  a.kind = n == 0 ? AttemptKind::first : AttemptKind::retry;
  return a;
}

// a (1 CPU) -> b (2 CPUs). a fails once on n0 and succeeds on n1; b runs on n0.
struct HandMade {
  Plan plan;
  Trace trace;
  HandMade() {
    Pipeline pl = pipeline({component("a", 10), component("b", 10, {0})});
    pl.steps[1].component.resources.cpu = 2000;
    plan = Plan::unroll(pl);
    trace.backend = "test";
    trace.steps = {"a", "b"};
    trace.nodes = {NodeRecord{"n0", "cpu", 2000, 8 * kGiB, 0, 3.6, s(0), s(100), s(0)},
                   NodeRecord{"n1", "cpu", 2000, 8 * kGiB, 0, 1.8, s(10), s(100), s(0)}};
    trace.attempts = {attempt(0, 0, 0, 0, 1, 2, 12, Outcome::failed),
                      attempt(0, 1, 1, 20, 20, 21, 41, Outcome::succeeded),
                      attempt(1, 0, 0, 41, 43, 45, 100, Outcome::succeeded)};
  }
};

}  // namespace

TEST_CASE("percentile: nearest rank", "[core][metrics]") {
  CHECK(percentile({}, 50) == 0);
  CHECK(percentile({7}, 99) == 7);
  CHECK(percentile({3, 1, 2}, 50) == 2);
  CHECK(percentile({1, 2, 3, 4}, 50) == 2);
  CHECK(percentile({1, 2, 3, 4}, 51) == 3);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  CHECK(percentile(hundred, 95) == 95);
  CHECK(percentile(hundred, 99) == 99);
  CHECK(percentile(hundred, 100) == 100);
  CHECK(percentile(hundred, 0) == 1);
  // ceil(p% of n), with p given in tenths, in integers: 0.999 x 1000 is 999.0000000000001 in doubles,
  // which made the rank 1000 (55 of 100 and 28 of 100 likewise).
  CHECK(nearest_rank(99.9, 1000) == 999);
  CHECK(nearest_rank(55, 100) == 55);
  CHECK(nearest_rank(28, 100) == 28);
  for (int tenths = 10; tenths <= 1000; ++tenths)
    for (std::size_t n = 1; n <= 200; ++n) {
      const double p = std::stod(std::to_string(tenths / 10) + "." + std::to_string(tenths % 10));
      const std::size_t exact = (static_cast<std::size_t>(tenths) * n + 999) / 1000;
      INFO("p " << p << ", n " << n);
      REQUIRE(nearest_rank(p, n) == std::max<std::size_t>(exact, 1));
    }
}

TEST_CASE("Metrics: every figure of a hand-made trace", "[core][metrics]") {
  const HandMade h;
  const Metrics m = compute_metrics(h.trace, h.plan);
  CHECK(m.makespan_s == 100);
  CHECK(m.critical_path_s == 75);                          // a's successful run (20 s) then b (55 s)
  CHECK(m.total_work_s == 85);                             // 10 + 20 + 55
  CHECK(m.cpu_work_core_s == 140);                         // 10 x 1 + 20 x 1 + 55 x 2
  CHECK(m.mean_cpu_utilization == Approx(140.0 / 380.0));  // n0: 2 x 100, n1: 2 x 90 core-s
  CHECK(m.peak_cpu_utilization == 0.5);                    // a alone on n0 before n1 is up; b alone later
  CHECK(m.queue_wait_s.p50 == 1);                          // waits 1, 0, 2
  CHECK(m.queue_wait_s.p95 == 2);
  CHECK(m.queue_wait_s.p99 == 2);
  CHECK(m.queue_wait_s.max == 2);
  CHECK(m.queue_wait_s.mean == 1);
  CHECK(m.cost == Approx(0.15));  // 3.6/h x 100 s + 1.8/h x 100 s
  CHECK(m.attempts == 3);
  CHECK(m.retries == 1);
  CHECK(m.backups == 0);
  CHECK(m.backups_won == 0);
  CHECK(m.replacements == 0);
  CHECK(m.failed_attempts == 1);
  CHECK(m.cancelled_attempts == 0);
  REQUIRE(m.per_step.size() == 2);
  CHECK(m.per_step[0].attempts == 2);
  CHECK(m.per_step[0].failures == 1);
  CHECK(m.per_step[0].run_seconds.p50 == 20);
  CHECK(m.per_step[1].run_seconds.max == 55);
  CHECK(m.per_step[1].requests.cpu == 2000);
  CHECK(m.critical_path == std::vector<TaskId>{0, 1});
}

TEST_CASE("Metrics: the sums of run times are exact decimal seconds, as each run time is",
          "[core][metrics]") {
  // Runs of 0.1 s, 0.2 s (failed) and 0.000000001 s: as doubles the sum was 0.30000000000000004 s; it
  // is summed in nanoseconds, so it is the double nearest 0.300000001 s, and the path 0.200000001 s.
  HandMade h;
  h.trace.attempts = {attempt(0, 0, 0, 0, 0, 1, 1.1, Outcome::failed),
                      attempt(0, 1, 1, 20, 20, 21, 21.2, Outcome::succeeded),
                      attempt(1, 0, 0, 41, 41, 41, 41.000000001, Outcome::succeeded)};
  h.trace.attempts[0].finished = Duration::from_ns(1'100'000'000);
  h.trace.attempts[1].started = Duration::from_ns(21'000'000'000);
  h.trace.attempts[1].finished = Duration::from_ns(21'200'000'000);
  h.trace.attempts[2].started = Duration::from_ns(41'000'000'000);
  h.trace.attempts[2].finished = Duration::from_ns(41'000'000'001);
  const Metrics m = compute_metrics(h.trace, h.plan);
  CHECK(m.total_work_s == 0.300000001);
  CHECK(m.critical_path_s == 0.200000001);  // a's success (0.2 s), then b
  CHECK(m.cpu_work_core_s == 0.300000002);  // b takes 2 CPUs
}

TEST_CASE("Metrics: metrics.json reads back to the same figures, and older files without requests",
          "[core][metrics]") {
  const HandMade h;
  const Metrics m = compute_metrics(h.trace, h.plan);
  std::ostringstream json;
  write_metrics_json(json, m);
  std::istringstream in(json.str());
  const Metrics back = read_metrics_json(in, "run/metrics.json");
  std::ostringstream again;
  write_metrics_json(again, back);
  CHECK(again.str() == json.str());
  CHECK(back.critical_path == std::vector<TaskId>{0, 1});
  CHECK(back.per_step[1].requests.cpu == 2000);
  SECTION("a file without requests and critical path") {
    std::istringstream old(R"({"makespan_s": 1, "critical_path_s": 1, "total_work_s": 1, "cpu_work_core_s": 1,
      "mean_cpu_utilization": 0.5, "peak_cpu_utilization": 1, "cost": 0, "attempts": 1, "retries": 0,
      "failed_attempts": 0, "tasks_failed": 0,
      "queue_wait_s": {"p50": 0, "p95": 0, "p99": 0, "max": 0, "mean": 0},
      "steps": [{"step": "a", "attempts": 1, "failures": 0,
                 "run_s": {"p50": 1, "p95": 1, "p99": 1, "max": 1, "mean": 1}}]})");
    const Metrics o = read_metrics_json(old, "old.json");
    CHECK(o.per_step.at(0).succeeded == 1);  // no `succeeded` before 2026-12-05: attempts - failures
    CHECK(o.per_step.at(0).requests.cpu == 0);
    CHECK(o.critical_path.empty());
    CHECK(o.backups == 0);
    CHECK(o.backups_won == 0);
    CHECK(o.replacements == 0);
    CHECK(o.cancelled_attempts == 0);
  }
  SECTION("a missing field is named, at the object that lacks it") {
    std::istringstream bad(R"({"makespan_s": 1})");
    CHECK_THROWS_WITH(read_metrics_json(bad, "m.json"), "m.json:1:1: critical_path_s: missing");
  }
  SECTION("a negative time, utilization or cost is named at its place") {
    for (const std::string key : {"makespan_s", "mean_cpu_utilization", "cost"}) {
      std::string text = json.str();
      const auto at = text.find("\"" + key + "\": ");
      REQUIRE(at != std::string::npos);
      const auto value = at + key.size() + 4;
      text.insert(value, "-");
      std::istringstream bad(text);
      std::string err;
      try {
        (void)read_metrics_json(bad, "m.json");
      } catch (const InputError& e) {
        err = e.what();
      }
      INFO(key);
      CHECK(err.find(": " + key + ": must be at least 0, got -") != std::string::npos);
      CHECK(err.starts_with("m.json:"));
    }
  }
  SECTION("a mistyped count is named at its line and column (line 19: after the 5-line queue_wait_s)") {
    std::string text = json.str();
    const std::string from = "\"backups_won\": 0";
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), "\"backups_won\": -1");
    std::istringstream bad(text);
    CHECK_THROWS_WITH(
        read_metrics_json(bad, "m.json"),
        "m.json:19:18: backups_won: expected an integer from 0 to 18446744073709551615, got -1");
  }
}

TEST_CASE("Metrics: a step with no successful attempt has no run times, in every file", "[core][metrics]") {
  // Its run percentiles were written as 0 s, which reads as a step that takes no time.
  HandMade h;
  h.trace.attempts = {attempt(0, 0, 0, 0, 0, 0, 30, Outcome::succeeded),
                      attempt(1, 0, 0, 30, 30, 30, 40, Outcome::failed)};
  const Metrics m = compute_metrics(h.trace, h.plan);
  CHECK(m.per_step[0].succeeded == 1);
  CHECK(m.per_step[1].succeeded == 0);
  std::ostringstream json, csv;
  write_metrics_json(json, m);
  write_metrics_csv(csv, m);
  const auto doc = nlohmann::json::parse(json.str());
  CHECK(doc["steps"][0]["succeeded"] == 1);
  CHECK(doc["steps"][0]["run_s"]["p50"] == 30.0);
  CHECK(doc["steps"][1]["succeeded"] == 0);
  CHECK_FALSE(doc["steps"][1].contains("run_s"));
  const std::string step1 = "step." + m.per_step[1].step + ".";
  CHECK(csv.str().find(step1 + "succeeded,0\n") != std::string::npos);
  CHECK(csv.str().find(step1 + "run_p50_s") == std::string::npos);
  CHECK(csv.str().find("step." + m.per_step[0].step + ".run_p50_s,30\n") != std::string::npos);
  std::istringstream in(json.str());
  const Metrics back = read_metrics_json(in, "metrics.json");
  CHECK(back.per_step[0].succeeded == 1);
  CHECK(back.per_step[1].succeeded == 0);
  std::ostringstream again;
  write_metrics_json(again, back);
  CHECK(again.str() == json.str());
}

TEST_CASE("Metrics: retries, backups, replacements and cancelled attempts are counted apart",
          "[core][metrics]") {
  HandMade h;
  // a: its first attempt straggles, a backup (attempt 1) wins and the first is cancelled.
  // b: its first attempt's node fails (evicted), the replacement (1) fails, the retry (2) succeeds.
  Trace& t = h.trace;
  t.attempts = {
      attempt(0, 0, 0, 0, 0, 0, 30, Outcome::cancelled), attempt(0, 1, 1, 20, 20, 20, 30, Outcome::succeeded),
      attempt(1, 0, 0, 30, 30, 30, 40, Outcome::evicted), attempt(1, 1, 1, 40, 40, 40, 50, Outcome::failed),
      attempt(1, 2, 1, 55, 55, 55, 100, Outcome::succeeded)};
  t.attempts[1].kind = AttemptKind::backup;
  t.attempts[3].kind = AttemptKind::replacement;
  const Metrics m = compute_metrics(t, h.plan);
  CHECK(m.attempts == 5);
  CHECK(m.retries == 1);
  CHECK(m.backups == 1);
  CHECK(m.backups_won == 1);
  CHECK(m.replacements == 1);
  CHECK(m.failed_attempts == 2);  // the eviction and the failure, not the cancelled first attempt of a
  CHECK(m.cancelled_attempts == 1);
  CHECK(m.per_step[0].failures == 0);
  CHECK(m.per_step[1].failures == 2);
  // A backup that loses is counted, not won.
  t.attempts[0].outcome = Outcome::succeeded;
  t.attempts[1].outcome = Outcome::cancelled;
  const Metrics lost = compute_metrics(t, h.plan);
  CHECK(lost.backups == 1);
  CHECK(lost.backups_won == 0);
  CHECK(lost.cancelled_attempts == 1);
  std::ostringstream csv;
  write_metrics_csv(csv, m);
  CHECK(csv.str().find("attempts,5\nretries,1\nbackups,1\nbackups_won,1\nreplacements,1\nfailed_attempts,"
                       "2\ncancelled_attempts,1\ntasks_failed,0\n") != std::string::npos);
  // Each figure as the shortest text that reads back to the same double, not %.17g's noise.
  Metrics few;
  few.makespan_s = 0.5002018331;
  few.critical_path_s = 0.1 + 0.2;
  few.cost = 1e-7;
  std::ostringstream short_csv;
  write_metrics_csv(short_csv, few);
  CHECK(short_csv.str().rfind("metric,value\nmakespan_s,0.5002018331\ncritical_path_s,0.30000000000000004\n",
                              0) == 0);
  CHECK(short_csv.str().find("\ncost,1e-07\n") != std::string::npos);
  // Counts as integers: a million attempts is 1000000, not the shortest double text 1e+06.
  few.attempts = 1'000'000;
  few.per_step = {StepMetrics{"w", 1'000'000, 0, 1'000'000, {}, {}}};
  std::ostringstream counts;
  write_metrics_csv(counts, few);
  CHECK(counts.str().find("\nattempts,1000000\n") != std::string::npos);
  CHECK(counts.str().find("\nstep.w.attempts,1000000\nstep.w.failures,0\nstep.w.succeeded,1000000\n") !=
        std::string::npos);
}

TEST_CASE("Metrics: back-to-back tasks on one node do not overlap", "[core][metrics]") {
  HandMade h;
  h.trace.nodes.resize(1);
  // Both use the whole node, one after the other: utilization peaks at exactly 1.
  h.trace.attempts = {attempt(0, 0, 0, 0, 0, 0, 50, Outcome::succeeded),
                      attempt(1, 0, 0, 50, 50, 50, 100, Outcome::succeeded)};
  h.trace.attempts[0].step = 1;
  const Metrics m = compute_metrics(h.trace, h.plan);
  CHECK(m.peak_cpu_utilization == 1.0);
  CHECK(m.mean_cpu_utilization == 1.0);
}

TEST_CASE("Metrics: percentiles and the peak on a large random trace equal a direct computation",
          "[core][metrics]") {
  // 3,000 attempts of step b on two nodes that come and go, times on a coarse grid so that many share
  // a time (the peak's sweep must take every change at a time before it divides), spans up to days so
  // that the time sort needs several passes.
  HandMade h;
  h.trace.nodes[0].up = s(0);
  h.trace.nodes[0].down = s(400000);
  h.trace.nodes[1].up = s(5000);
  h.trace.nodes[1].down = s(200000);
  h.trace.attempts.clear();
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  const auto next = [&x](std::uint64_t n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<double>(x % n);
  };
  std::vector<double> waits, runs;
  for (int i = 0; i < 3000; ++i) {
    const double submitted = 10 * next(30000);
    const double scheduled = submitted + next(50);
    const double started = scheduled + next(3);
    const double finished = started + 10 * next(2000) + 1;
    h.trace.attempts.push_back(attempt(1, 0, 0, submitted, scheduled, started, finished, Outcome::succeeded));
    waits.push_back(scheduled - submitted);
    runs.push_back(finished - started);
  }
  const Metrics m = compute_metrics(h.trace, h.plan);
  CHECK(m.queue_wait_s.p50 == percentile(waits, 50));
  CHECK(m.queue_wait_s.p95 == percentile(waits, 95));
  CHECK(m.queue_wait_s.p99 == percentile(waits, 99));
  CHECK(m.queue_wait_s.max == *std::max_element(waits.begin(), waits.end()));
  CHECK(m.per_step[1].run_seconds.p50 == percentile(runs, 50));
  CHECK(m.per_step[1].run_seconds.p95 == percentile(runs, 95));
  CHECK(m.per_step[1].run_seconds.p99 == percentile(runs, 99));
  CHECK(m.per_step[1].run_seconds.max == *std::max_element(runs.begin(), runs.end()));
  // The peak: at each time some attempt is scheduled or finishes, or a node comes up or goes, the CPU of
  // the attempts running then (scheduled at or before it, finishing after it) over the CPU of the nodes
  // up then.
  const double makespan = m.makespan_s;
  double peak = 0;
  std::vector<SimTime> times;
  for (const AttemptRecord& a : h.trace.attempts) times.insert(times.end(), {a.scheduled, a.finished});
  for (const NodeRecord& n : h.trace.nodes) times.insert(times.end(), {n.up, n.down});
  {
    for (const SimTime t : times) {
      double used = 0, avail = 0;
      for (const AttemptRecord& b : h.trace.attempts)
        if (b.scheduled <= t && b.finished > t) used += 2000;
      for (const NodeRecord& n : h.trace.nodes)
        if (n.up <= t && std::min(n.down.seconds(), makespan) > t.seconds())
          avail += static_cast<double>(n.cpu);
      if (avail > 0) peak = std::max(peak, used / avail);
    }
  }
  CHECK(m.peak_cpu_utilization == peak);
  CHECK(m.peak_cpu_utilization > 1);  // more requested than the nodes have: the figure is not capped
}

TEST_CASE("Metrics: the peak CPU utilization counts a node going away while pods run elsewhere",
          "[core][metrics]") {
  // Two 2-core nodes; a (1 core) on n0 from 0 to 37, b (1.5 cores) on n1 from 0 to 200; n0 is removed at
  // 97. The peak is b alone on n1 after 97: 1.5 / 2, not the 2.5 / 4 of the start (the ratio was taken at
  // pods' binds and ends only).
  Pipeline pl = pipeline({component("a", 37), component("b", 200)});
  pl.steps[1].component.resources.cpu = 1500;
  const Plan plan = Plan::unroll(pl);
  Trace t;
  t.backend = "test";
  t.steps = {"a", "b"};
  t.nodes = {NodeRecord{"n0", "p", 2000, 8 * kGiB, 0, 1, s(0), s(97), s(0)},
             NodeRecord{"n1", "p", 2000, 8 * kGiB, 0, 1, s(0), s(200), s(0)}};
  t.attempts = {attempt(0, 0, 0, 0, 0, 0, 37, Outcome::succeeded),
                attempt(1, 0, 1, 0, 0, 0, 200, Outcome::succeeded)};
  const Metrics m = compute_metrics(t, plan);
  CHECK(m.peak_cpu_utilization == 0.75);
  CHECK(m.mean_cpu_utilization == (37.0 + 1.5 * 200) / (2 * 97 + 2 * 200.0));
}

TEST_CASE("Trace: JSON and CSV writers give the documented text", "[core][trace]") {
  Trace t;
  t.backend = "sim";
  t.scenario = "tiny \"one\"";
  t.seed = 7;
  t.steps = {"train"};
  t.nodes = {NodeRecord{"cpu-0", "cpu", 4000, 16 * kGiB, 1, 0.5, s(0), s(12.5), s(0)}};
  AttemptRecord a = attempt(0, 0, 0, 0, 0.25, 1.000000001, 12.5, Outcome::succeeded);
  a.image_pull = s(0.5);
  a.output_write = s(1.5);
  t.pod_names = {"train-0"};
  a.pod = 0;
  AttemptRecord never = attempt(1, 1, -1, 2, 0, 0, 3, Outcome::cancelled);  // a backup that lost
  never.kind = AttemptKind::backup;
  never.step = 0;
  never.scheduled = kNever;
  never.started = kNever;
  t.attempts = {a, never};

  std::ostringstream json;
  write_trace_json(json, t);
  CHECK(
      json.str() ==
      "{\n  \"format\": \"shardflow-trace\",\n  \"version\": 1,\n  \"backend\": \"sim\",\n"
      "  \"scenario\": \"tiny \\\"one\\\"\",\n  \"seed\": 7,\n  \"time_unit\": \"ns\",\n  \"tasks_failed\": "
      "0,\n"
      "  \"steps\": [\"train\"],\n  \"nodes\": [\n"
      "    {\"name\": \"cpu-0\", \"pool\": \"cpu\", \"cpu_milli\": 4000, \"memory_bytes\": 17179869184, "
      "\"gpu\": 1, "
      "\"price_per_hour\": 0.5, \"billed_from\": 0, \"up\": 0, \"down\": 12500000000}\n  ],\n  \"attempts\": "
      "[\n"
      "    {\"task\": 0, \"step\": 0, \"item\": 0, \"attempt\": 0, \"node\": 0, \"submitted\": 0, "
      "\"scheduled\": 250000000, \"started\": 1000000001, \"finished\": 12500000000, \"outcome\": "
      "\"succeeded\", \"kind\": \"first\", "
      "\"image_pull\": 500000000, \"input_read\": 0, \"output_write\": 1500000000, \"pod\": \"train-0\"},\n"
      "    {\"task\": 1, \"step\": 0, \"item\": 0, \"attempt\": 1, \"node\": -1, \"submitted\": 2000000000, "
      "\"scheduled\": -1, \"started\": -1, \"finished\": 3000000000, \"outcome\": \"cancelled\", "
      "\"kind\": \"backup\", "
      "\"image_pull\": 0, \"input_read\": 0, \"output_write\": 0}\n  ]\n}\n");
  // A price as the shortest text that reads back the same (it was 0.77000000000000002).
  {
    Trace priced = t;
    priced.nodes[0].price_per_hour = 0.77;
    std::ostringstream out;
    write_trace_json(out, priced);
    CHECK(out.str().find("\"gpu\": 1, \"price_per_hour\": 0.77, \"billed_from\"") != std::string::npos);
  }

  std::ostringstream csv;
  write_trace_csv(csv, t);
  CHECK(csv.str() ==
        "task,step,item,attempt,node,submitted_s,scheduled_s,started_s,finished_s,outcome,kind,image_pull_s,"
        "input_read_s,output_write_s,pod,error\n"
        "0,train,0,0,cpu-0,0.000000000,0.250000000,1.000000001,12.500000000,succeeded,first,0.500000000,0."
        "000000000,"
        "1.500000000,train-0,\n"
        "1,train,0,1,,2.000000000,,,3.000000000,cancelled,backup,0.000000000,0.000000000,0.000000000,,\n");
}

TEST_CASE("Trace: pod names stored per attempt or by the step's prefix", "[core][trace]") {
  CHECK(pod_name_prefix("Prep/x") == "prep-x-");
  CHECK(pod_name_prefix("a_B.c-9") == "a-b-c-9-");
  CHECK(pod_name_prefix("") == "-");
  Trace t;
  t.steps = {"Fan/Out", "b"};
  AttemptRecord ruled;
  ruled.step = 1;
  ruled.item = 1000;
  ruled.attempt = 11;
  AttemptRecord stored = ruled;
  stored.pod = 0;
  AttemptRecord other_step = ruled;
  other_step.step = 2;               // no prefix for it
  CHECK(t.pod_name(ruled).empty());  // neither stored nor by rule
  t.pod_prefixes = {pod_name_prefix(t.steps[0]), pod_name_prefix(t.steps[1])};
  CHECK(t.pod_name(ruled) == "b-1000-11");
  CHECK(t.pod_name(other_step).empty());
  t.pod_names = {"b-7xk2q"};
  CHECK(t.pod_name(stored) == "b-7xk2q");  // a stored name wins over the rule
  stored.pod = 1;                          // past the stored names: the rule
  CHECK(t.pod_name(stored) == "b-1000-11");
}

TEST_CASE("CostSum: node time summed exactly per price, then priced", "[core][metrics]") {
  const auto sum = [](std::initializer_list<std::pair<double, std::int64_t>> bills) {
    CostSum c;
    for (const auto& [price, s] : bills) c.add(price, Duration::from_s(s));
    return c.total();
  };
  // 3 x 14 s and 6 x 7 s at 1.3 an hour: one figure to the bit (added node by node they differ).
  CHECK(sum({{1.3, 14}, {1.3, 14}, {1.3, 14}}) ==
        sum({{1.3, 7}, {1.3, 7}, {1.3, 7}, {1.3, 7}, {1.3, 7}, {1.3, 7}}));
  CHECK(sum({{1.3, 14}, {1.3, 14}, {1.3, 14}}) == 1.3 * 42 / 3600);
  // Two prices: each its own sum, in any order of the nodes.
  CHECK(sum({{3.6, 10}, {0.36, 100}, {3.6, 20}}) == 3.6 * 30 / 3600 + 0.36 * 100 / 3600);
  CHECK(sum({}) == 0);
  // Past 2^63 ns at one price (about 292 years of node time) the rest is added in seconds.
  CostSum big;
  const Duration century = Duration::from_s(std::int64_t{100} * 365 * 86400);
  for (int i = 0; i < 4; ++i) big.add(3.6, century);
  CHECK(big.total() == Approx(4 * century.seconds() / 1000));
}

TEST_CASE("eta_from_prediction: the prediction's pace, scaled to the run's", "[core]") {
  // Predicted: 4 tasks done at 10, 20, 30 and 40 s.
  const std::vector<double> done = {10, 20, 30, 40};
  // The run goes 4x faster than predicted: after 5 s, 2 tasks are done (predicted at 20 s): the last 20 s
  // of the prediction take 20 x 5 / 20 = 5 s.
  CHECK(eta_from_prediction(done, 40, 2, 5) == 5);
  // 2x slower: 1 task done after 20 s (predicted at 10 s): 30 x 20 / 10 = 60 s.
  CHECK(eta_from_prediction(done, 40, 1, 20) == 60);
  // Nothing done yet: the prediction's remainder, never below 0.
  CHECK(eta_from_prediction(done, 40, 0, 15) == 25);
  CHECK(eta_from_prediction(done, 40, 0, 50) == 0);
  // All done: 0; no prediction: -1; no per-task times: the remainder.
  CHECK(eta_from_prediction(done, 40, 4, 7) == 0);
  CHECK(eta_from_prediction(done, 0, 2, 5) == -1);
  CHECK(eta_from_prediction({}, 40, 2, 5) == 35);
  // Between ends: 2 done at 5 s (pace 0.25 s a predicted second); at 6 s the run is at 20 + 1 / 0.25 = 24
  // predicted seconds: 16 x 0.25 = 4 s left (it said 20 x 6 / 20 = 6, growing); from 7.5 s on it holds at
  // the next end, 30: 10 x 0.25 = 2.5 s, until a task ends.
  CHECK(eta_from_prediction(done, 40, 2, 5, 5.0) == 5);
  CHECK(eta_from_prediction(done, 40, 2, 6, 5.0) == 4);
  CHECK(eta_from_prediction(done, 40, 2, 7.5, 5.0) == 2.5);
  CHECK(eta_from_prediction(done, 40, 2, 9, 5.0) == 2.5);
  // The last task's predicted end passed too: 0, though it runs on (the progress line says "overdue").
  CHECK(eta_from_prediction(done, 40, 3, 100, 1.5) == 0);
  CHECK(eta_from_prediction(done, 40, 3, 1.5, 1.5) == 0.5);
}
