#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/calibrate.hpp>
#include <shardflow/sim/simulator.hpp>

using namespace shardflow;
using namespace shardflow::planner;

namespace {

struct Run {
  Scenario scenario;
  Plan plan;
  std::vector<Trace> traces;
};

// Loads `yaml` and simulates it once per seed: runs of known models, standing for measured ones (their
// backend says so: calibrate warns of a simulation's trace, which a test of that sets back).
Run simulate(const std::string& yaml, const std::vector<std::uint64_t>& seeds,
             const std::vector<std::string>& sets = {}) {
  Run r{load_scenario_text(yaml, "test.yaml", sets), {}, {}};
  r.plan = Plan::unroll(r.scenario.pipeline);
  for (std::uint64_t seed : seeds) {
    sim::SimOptions o;
    o.seed = seed;
    r.traces.push_back(sim::simulate(r.scenario, r.plan, o));
    r.traces.back().backend = "measured";
  }
  return r;
}

std::string overlay(const CalibrationResult& r) {
  std::ostringstream out;
  write_overlay_yaml(out, r);
  return out.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// The overlay's `duration: {...}` lines as --set overrides of the scenario's steps (what the coming
// --overlay merge does for these keys), so that the loader itself reads the fitted values back.
std::vector<std::string> overlay_as_sets(const std::string& text,
                                         const std::vector<std::string>& step_paths) {
  std::vector<std::string> sets;
  std::istringstream in(text);
  std::string line;
  std::size_t k = 0;
  while (std::getline(in, line)) {
    const std::size_t at = line.find("duration: ");
    if (at == std::string::npos) continue;
    REQUIRE(k < step_paths.size());
    std::string path = "pipeline";
    std::size_t from = 0;
    for (;;) {
      const std::size_t slash = step_paths[k].find('/', from);
      path += ".steps[" + step_paths[k].substr(from, slash - from) + "]";
      if (slash == std::string::npos) break;
      from = slash + 1;
    }
    sets.push_back(path + ".duration=" + line.substr(at + 10));
    ++k;
  }
  return sets;
}

const std::string kTwoSteps =
    "name: two\n"
    "overheads: {orchestrator: argo, sandbox_start: 120ms, image_pull_bandwidth: 0/s}\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: a\n"
    "      parallel_for: {count: 4}\n"
    "      input: {size: [1GiB, 2GiB, 3GiB, 4GiB]}\n"
    "      duration: {base: 2.5s, per_gib: 1.25s}\n"
    "    - name: b\n"
    "      after: [a]\n"
    "      parallel_for: {count: 3}\n"
    "      input: {size: 1GiB}\n"
    "      duration: {base: 3s, per_gib: 500ms}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1}\n"
    "  scheduler: {decisions_per_second: 0, bind_latency: 0s}\n";

// `t` written to trace.json and read back, as calibrate reads a run's directory.
Trace read_back(const Trace& t) {
  std::ostringstream out;
  write_trace_json(out, t);
  std::istringstream in(out.str());
  return read_trace_json(in, "trace.json");
}

}  // namespace

TEST_CASE("Calibrate: without noise the fit is the model, and the overlay says so", "[planner][calibrate]") {
  const Run run = simulate(kTwoSteps, {1});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces, {"out/two/trace.json"});
  REQUIRE(r.steps.size() == 2);
  const StepFit& a = r.steps[0];
  CHECK(a.path == "a");
  CHECK(a.attempts == 4);
  CHECK(a.sizes_vary);
  CHECK(a.base == Duration::from_ms(2500));
  CHECK(a.per_gib == Duration::from_ms(1250));
  CHECK(a.lognormal_sigma == 0);
  CHECK(a.r_squared == 1);
  CHECK(a.mean_measured_s == Approx(2.5 + 1.25 * 2.5).epsilon(1e-15));
  CHECK(a.mean_fitted_s == Approx(a.mean_measured_s).epsilon(1e-15));
  // Every input of b is 1 GiB: per_gib cannot be told from base, so base takes it all.
  const StepFit& b = r.steps[1];
  CHECK(b.attempts == 3);
  CHECK_FALSE(b.sizes_vary);
  CHECK(b.base == Duration::from_ms(3500));
  CHECK(b.per_gib == Duration::zero());
  CHECK(b.r_squared == 1);
  // No waits: each attempt's dispatch is its sandbox start.
  REQUIRE(r.sandbox_start);
  CHECK(*r.sandbox_start == Duration::from_ms(120));
  CHECK(r.dispatch_samples == 7);

  CalibrationResult named = r;
  named.command = "shardflow calibrate two.yaml out/two --out cal.yaml";
  const std::string text = overlay(named);
  CHECK(text ==
        "# Calibration of scenario \"two\" from 1 trace:\n"
        "#   out/two/trace.json\n"
        "# made by: shardflow calibrate two.yaml out/two --out cal.yaml\n"
        "# Lay it over the scenario: steps are matched by name (inside their groups).\n"
        "pipeline:\n"
        "  steps:\n"
        "    - name: a\n"
        "      duration: {base: 2.5s, per_gib: 1.25s, noise: {lognormal_sigma: 0}}\n"
        "    - name: b\n"
        "      duration: {base: 3.5s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
        "overheads: {sandbox_start: 120ms}\n");

  // The scenario with the overlay's values reads back and simulates to the same run.
  const std::vector<std::string> sets = overlay_as_sets(text, {"a", "b"});
  CHECK(sets == std::vector<std::string>{
                    "pipeline.steps[a].duration={base: 2.5s, per_gib: 1.25s, noise: {lognormal_sigma: 0}}",
                    "pipeline.steps[b].duration={base: 3.5s, per_gib: 0s, noise: {lognormal_sigma: 0}}"});
  std::vector<std::string> with_overheads = sets;
  with_overheads.push_back("overheads.sandbox_start=120ms");
  const Run again = simulate(kTwoSteps, {1}, with_overheads);
  std::ostringstream before, after;
  write_trace_json(before, run.traces[0]);
  write_trace_json(after, again.traces[0]);
  CHECK(after.str() == before.str());
}

TEST_CASE("Calibrate: steps inside groups are nested in the overlay as in the scenario",
          "[planner][calibrate]") {
  const std::string yaml =
      "name: nested\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: first, duration: {base: 1s}}\n"
      "    - name: grp\n"
      "      after: [first]\n"
      "      parallel_for: {count: 3}\n"
      "      steps:\n"
      "        - {name: y, duration: {base: 2s}}\n"
      "        - name: inner\n"
      "          after: [y]\n"
      "          steps:\n"
      "            - {name: z, duration: {base: 1m2.000000001s}}\n"
      "        - {name: w, after: [inner], duration: {base: 4s}}\n"
      "    - {name: never, after: [grp], duration: {base: 1s}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 16, memory: 64Gi, count: 1}\n";
  Run run = simulate(yaml, {1});
  // As if the run had stopped before `never` started.
  std::erase_if(run.traces[0].attempts, [](const AttemptRecord& a) { return a.step == 4; });
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  CHECK(r.traces == std::vector<std::string>{"trace 1"});
  CHECK(r.steps[2].path == "grp/inner/z");
  CHECK(r.steps[2].base == Duration::from_ns(62'000'000'001));
  CHECK(r.steps[4].attempts == 0);
  CHECK(*r.sandbox_start == Duration::zero());
  const std::string text = overlay(r);
  CHECK(text ==
        "# Calibration of scenario \"nested\" from 1 trace:\n"
        "#   trace 1\n"
        "# Lay it over the scenario: steps are matched by name (inside their groups).\n"
        "pipeline:\n"
        "  steps:\n"
        "    - name: first\n"
        "      duration: {base: 1s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
        "    - name: grp\n"
        "      steps:\n"
        "        - name: y\n"
        "          duration: {base: 2s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
        "        - name: inner\n"
        "          steps:\n"
        "            - name: z\n"
        "              duration: {base: 1m2.000000001s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
        "        - name: w\n"
        "          duration: {base: 4s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
        "overheads: {preset: none, sandbox_start: 0s}\n");
  const std::vector<std::string> sets = overlay_as_sets(text, {"first", "grp/y", "grp/inner/z", "grp/w"});
  CHECK(sets[2] ==
        "pipeline.steps[grp].steps[inner].steps[z].duration={base: 1m2.000000001s, per_gib: 0s, noise: "
        "{lognormal_sigma: 0}}");
  const Scenario back = load_scenario_text(yaml, "test.yaml", sets);
  CHECK(back.pipeline.steps[1].steps[1].steps[0].component.duration.base ==
        Duration::from_ns(62'000'000'001));
}

TEST_CASE("Calibrate: sizes from a distribution and a faster pool, without noise: within a nanosecond",
          "[planner][calibrate]") {
  // The model's run times on a node of speed 2 are halved and rounded to the nanosecond; the fit takes
  // the pool's speed back out.
  const std::string yaml =
      "name: uniform\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 50}\n"
      "      input: {size: {distribution: uniform, min: 1GiB, max: 10GiB}}\n"
      "      duration: {base: 1.234567891s, per_gib: 0.987654321s}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: fast, cpu: 16, memory: 64Gi, count: 1, speed: 2}\n";
  const Run run = simulate(yaml, {1, 2, 3});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  const StepFit& f = r.steps[0];
  CHECK(f.attempts == 150);
  CHECK(f.sizes_vary);
  CHECK(std::abs(f.base.ns() - 1'234'567'891) <= 1);
  CHECK(std::abs(f.per_gib.ns() - 987'654'321) <= 1);
  CHECK(f.lognormal_sigma == 0);
  CHECK(f.r_squared == Approx(1).epsilon(1e-15));
  CHECK(std::abs(f.mean_fitted_s - f.mean_measured_s) < 1e-8);  // the coefficients' rounding to 1 ns
}

TEST_CASE("Calibrate: noise of sigma 0.2 over 2000 attempts", "[planner][calibrate]") {
  const std::string yaml =
      "name: noisy\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 1000}\n"
      "      input: {size: {distribution: uniform, min: 1GiB, max: 10GiB}}\n"
      "      duration: {base: 20s, per_gib: 5s, noise: {lognormal_sigma: 0.2}}\n"
      "    - name: c\n"
      "      after: [w]\n"
      "      parallel_for: {count: 1000}\n"
      "      input: {size: 3GiB}\n"
      "      duration: {base: 20s, per_gib: 5s, noise: {lognormal_sigma: 0.2}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 64, memory: 256Gi, count: 4}\n";
  const Run run = simulate(yaml, {7, 8});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  const StepFit& w = r.steps[0];
  CHECK(w.attempts == 2000);
  CHECK(std::abs(w.lognormal_sigma - 0.2) < 0.02);
  CHECK(w.base.seconds() == Approx(20).epsilon(0.05));
  CHECK(w.per_gib.seconds() == Approx(5).epsilon(0.05));
  CHECK(w.r_squared > 0.5);
  CHECK(w.r_squared < 1);
  // One input size: base is the mean run time (the noise has mean 1), per_gib 0.
  const StepFit& c = r.steps[1];
  CHECK(c.attempts == 2000);
  CHECK_FALSE(c.sizes_vary);
  CHECK(c.per_gib == Duration::zero());
  CHECK(c.base.seconds() == Approx(35).epsilon(0.02));
  CHECK(std::abs(c.base.seconds() - c.mean_measured_s) <= 0.5e-9);
  CHECK(std::abs(c.lognormal_sigma - 0.2) < 0.02);
}

TEST_CASE("Calibrate: evicted and cancelled attempts are left out, and negative fits are clamped",
          "[planner][calibrate]") {
  Run run = simulate(kTwoSteps, {1});
  Trace& t = run.traces[0];
  // Run times of a that fall as inputs grow (per_gib would be negative) -> the mean, per_gib 0.
  for (AttemptRecord& x : t.attempts)
    if (x.step == 0) x.finished = x.started + Duration::from_s(10 - static_cast<std::int64_t>(x.item));
  t.attempts[0].outcome = Outcome::evicted;  // item 0 (10 s) is left out
  t.attempts[1].outcome = Outcome::cancelled;
  CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  CHECK(r.steps[0].attempts == 2);
  CHECK(r.steps[0].per_gib == Duration::zero());
  CHECK(r.steps[0].base == Duration::from_ms(7500));  // items 2 and 3: 8 s and 7 s
  // Item 1's attempt was cut short (its task did not succeed): said, as a run stopped under it.
  CHECK(r.warnings ==
        std::vector<std::string>{
            "trace 1: 1 attempt of step a was still running when the run stopped (interrupted?): "
            "left out of the fit, which may then lack the step's longest runs"});
  // Run times steeper than proportional (a negative intercept) -> through the origin.
  for (AttemptRecord& x : t.attempts) {
    x.outcome = x.step == 0 ? Outcome::failed : x.outcome;  // failed attempts count
    if (x.step == 0) x.finished = x.started + Duration::from_s(x.item == 0 ? 1 : 5 * x.item);
  }
  r = calibrate(run.scenario, run.plan, run.traces);
  CHECK(r.steps[0].attempts == 4);
  CHECK(r.steps[0].base == Duration::zero());
  // sum(x y) / sum(x^2) with x = 1..4 GiB, y = 1, 5, 10, 15 s: (1 + 10 + 30 + 60) / 30 s.
  CHECK(r.steps[0].per_gib == Duration::from_ns(3'366'666'667));
}

TEST_CASE("Calibrate: an attempt cancelled after its task succeeded (a backup's loser) is not warned of",
          "[planner][calibrate]") {
  Run run = simulate(kTwoSteps, {1});
  Trace& t = run.traces[0];
  AttemptRecord loser = t.attempts[2];
  loser.attempt = 1;
  loser.kind = AttemptKind::backup;
  loser.outcome = Outcome::cancelled;
  t.attempts.push_back(loser);
  CHECK(calibrate(run.scenario, run.plan, run.traces).warnings.empty());
  t.attempts[2].outcome = Outcome::cancelled;  // now neither succeeded: both were cut short
  t.attempts[2].finished = t.attempts[2].started + Duration::from_s(1);
  CHECK(
      calibrate(run.scenario, run.plan, run.traces).warnings ==
      std::vector<std::string>{"trace 1: 2 attempts of step a were still running when the run stopped "
                               "(interrupted?): left out of the fit, which may then lack the step's longest "
                               "runs"});
}

TEST_CASE("Calibrate: a trace without attempts is refused, a simulation's is warned of",
          "[planner][calibrate]") {
  Run run = simulate(kTwoSteps, {1});
  Trace empty = run.traces[0];
  empty.attempts.clear();
  CHECK(error_of([&] { calibrate(run.scenario, run.plan, {empty}, {"out/two/trace.json"}); }) ==
        "out/two/trace.json: attempts: the trace has no attempts: nothing ran to fit");
  run.traces[0].backend = "sim";
  CHECK(calibrate(run.scenario, run.plan, run.traces, {"out/two/trace.json"}).warnings ==
        std::vector<std::string>{
            "out/two/trace.json: a simulation's trace (backend sim): fitted to it, the model "
            "is fitted to its own prediction; calibrate is for measured runs (run "
            "--backend local or k8s)"});
  run.traces[0].backend = "local";
  CHECK(calibrate(run.scenario, run.plan, run.traces).warnings.empty());
}

TEST_CASE("Calibrate: a trace of another scenario is refused", "[planner][calibrate]") {
  const Run run = simulate(kTwoSteps, {1});
  std::string other = kTwoSteps;
  other.replace(other.find("- name: b"), 9, "- name: c");
  const Run run_c = simulate(other, {1});
  CHECK(error_of([&] { calibrate(run_c.scenario, run_c.plan, run.traces, {"out/two/trace.json"}); }) ==
        "out/two/trace.json: steps: the trace's steps (a, b) are not the scenario's (a, c)");
  // Same steps, other loop sizes: the attempts' tasks are not the plan's.
  const Run run_5 = simulate(kTwoSteps, {1}, {"pipeline.steps[b].parallel_for.count=2"});
  CHECK(error_of([&] { calibrate(run_5.scenario, run_5.plan, run.traces); }) ==
        "trace 1: attempts[6].task: task 7 (step b, item 2) is not a task of the scenario's plan (a run of "
        "another scenario, or of other settings?)");
  // The error says which of the traces it is (the command line adds what it knows of that run's settings).
  std::size_t which = 99;
  try {
    calibrate(run_5.scenario, run_5.plan, {run_5.traces[0], run.traces[0]});
  } catch (const TraceMismatchError& e) {
    which = e.trace();
  }
  CHECK(which == 1);
}

TEST_CASE("Calibrate: a run at time scale 0.05 has its sleep run times divided by it, not its kernels'",
          "[planner][calibrate]") {
  // As `run --backend local --time-scale 0.05` records it: the sleeps (modelled 10 s) took 0.5 s, the
  // solve (a real kernel, not scaled) 300 ms.
  const std::string yaml =
      "name: scaled\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: sleep, parallel_for: {count: 3}, duration: {base: 10s}}\n"
      "    - {name: solve, after: [sleep], duration: {base: 300ms}, kernel: {name: ridge_solve}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: local, cpu: 4, memory: 8Gi, count: 1}\n";
  Run run = simulate(yaml, {1});
  Trace& t = run.traces[0];
  t.backend = "local";
  t.time_scale = 0.05;
  t.time_scaled_steps = {0};
  for (AttemptRecord& a : t.attempts)
    a.finished = a.started + (a.step == 0 ? Duration::from_ms(500) : Duration::from_ms(300));
  CalibrationResult r = calibrate(run.scenario, run.plan, run.traces, {"out/ts/trace.json"});
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].base == Duration::from_s(10));  // 0.5 s / 0.05
  CHECK(r.steps[0].mean_measured_s == 10);
  CHECK(r.steps[1].base == Duration::from_ms(300));  // as measured
  REQUIRE(r.scaled_traces.size() == 1);
  CHECK(r.scaled_traces[0].scaled_steps == std::vector<std::string>{"sleep"});
  CHECK(r.scaled_traces[0].real_steps == std::vector<std::string>{"solve"});
  CHECK(r.scaled_traces[0].shortest_scaled_s == 0.5);
  CHECK(r.warnings ==
        std::vector<std::string>{
            "out/ts/trace.json: each attempt of sleep also holds real-time latency (timer "
            "wake-up, thread hand-off), which is divided by 0.05 with its run time: it counts 20 "
            "times over in the fit; the shortest of those attempts ran 0.5 s, so 1 ms of latency "
            "adds 0.2% to it"});
  std::ostringstream printed;
  print_calibration(printed, r);
  CHECK(
      printed.str().find(
          "\nout/ts/trace.json: a run at time scale 0.05: the run times of sleep (sleep and spin, which "
          "--time-scale scales) are divided by 0.05, into model time; solve (other kernels, not scaled) and "
          "the dispatch times are fitted as measured\n") != std::string::npos);
  CHECK(overlay(r).find("#   out/ts/trace.json\n# out/ts/trace.json: a run at time scale 0.05: the run times "
                        "of sleep (") != std::string::npos);

  SECTION("a run slowed down (time scale 10) divides its latency down too: no warning") {
    t.time_scale = 10;
    for (AttemptRecord& a : t.attempts)
      if (a.step == 0) a.finished = a.started + Duration::from_s(100);
    r = calibrate(run.scenario, run.plan, run.traces, {"out/ts/trace.json"});
    CHECK(r.steps[0].base == Duration::from_s(10));  // 100 s / 10
    CHECK(r.warnings.empty());
  }
  SECTION("a run at a time scale with nothing that sleeps or spins is fitted as measured, and says so") {
    t.time_scaled_steps.clear();
    r = calibrate(run.scenario, run.plan, run.traces, {"out/ts/trace.json"});
    CHECK(r.steps[0].base == Duration::from_ms(500));
    CHECK(r.warnings.empty());
    std::ostringstream out;
    print_calibration(out, r);
    CHECK(
        out.str().find("\nout/ts/trace.json: a run at time scale 0.05, but none of its steps sleeps or spins "
                       "(what --time-scale scales): every run time is real, and fitted as measured\n") !=
        std::string::npos);
  }
  SECTION("a trace at scale 1 says nothing of it") {
    t.time_scale = 1;
    t.time_scaled_steps.clear();
    r = calibrate(run.scenario, run.plan, run.traces, {"out/ts/trace.json"});
    CHECK(r.steps[0].base == Duration::from_ms(500));
    CHECK(r.scaled_traces.empty());
    CHECK(r.warnings.empty());
  }
}

TEST_CASE("Calibrate: a simulator trace reads back and writes the same bytes", "[planner][calibrate]") {
  // Retries, failures, pulls, reads and writes, a driver pod: most fields are not zero.
  const std::string yaml =
      "name: busy\n"
      "seed: 11\n"
      "overheads: {orchestrator: kfp-v2, image_size: 300Mi}\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 30, parallelism: 8}\n"
      "      input: {size: {distribution: lognormal, median: 1GiB, sigma: 0.5}}\n"
      "      output: {size: 100Mi}\n"
      "      duration: {base: 5s, per_gib: 10s, noise: {lognormal_sigma: 0.3}}\n"
      "      failure: {p: 0.2}\n"
      "      retries: {max: 2, backoff: 1s}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 4, memory: 16Gi, count: 2, price_per_hour: 0.37}\n"
      "  storage: {read_bandwidth: 1GiB/s, write_bandwidth: 512MiB/s}\n";
  const Run run = simulate(yaml, {11});
  const Trace back = read_back(run.traces[0]);
  std::ostringstream first, second;
  write_trace_json(first, run.traces[0]);
  write_trace_json(second, back);
  CHECK(second.str() == first.str());
  CHECK(back.attempts.size() > 30);  // some retries

  // Driver pods, scheduler decisions, pulls and reads are not dispatch overhead: what is left is the
  // sandbox start (the default, 1 s), exactly.
  const CalibrationResult r = calibrate(run.scenario, run.plan, {back});
  REQUIRE(r.sandbox_start);
  CHECK(*r.sandbox_start == Duration::from_s(1));
}

TEST_CASE("Calibrate: work-queue items a worker pod takes after its first are no dispatch samples",
          "[planner][calibrate]") {
  // 20 pods of prep, then 100 items on 4 worker pods: the 96 items a pod takes on from its last have no
  // sandbox start, and as dispatch samples (0 s, most of them) they made the fit 0 s for every pod.
  const std::string yaml =
      "name: wq\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: prep\n"
      "      parallel_for: {count: 20}\n"
      "      duration: {base: 60s}\n"
      "    - name: q\n"
      "      after: [prep]\n"
      "      parallel_for: {count: 100, workers: 4}\n"
      "      duration: {base: 10s}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: p, cpu: 16, memory: 64Gi, count: 4}\n";
  const Run run = simulate(yaml, {1});
  const CalibrationResult r = calibrate(run.scenario, run.plan, {read_back(run.traces[0])});
  REQUIRE(r.sandbox_start);
  CHECK(*r.sandbox_start == Duration::from_s(1));
  CHECK(r.dispatch_samples == 24);
}

TEST_CASE("Calibrate: a step with stragglers gets its fitted p and factor in the overlay",
          "[planner][calibrate]") {
  // Without noise: b's 3 runs are 3.5 s, or 10.5 s for a straggler; the split is exact.
  const Run run = simulate(kTwoSteps, {1}, {"pipeline.steps[b].duration.straggler={p: 0.5, factor: 3}"});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  CHECK_FALSE(r.steps[0].straggler_reset);
  CHECK(r.steps[1].straggler_reset);
  std::size_t slow = 0;
  for (const AttemptRecord& x : run.traces[0].attempts)
    if (x.step == 1 && x.finished - x.started > Duration::from_s(5)) ++slow;
  const std::string text = overlay(r);
  const std::size_t b = text.find("    - name: b\n      duration: {base: ");
  REQUIRE(b != std::string::npos);
  CHECK(text.substr(0, b).find("straggler") == std::string::npos);
  const Scenario back = load_scenario_text(kTwoSteps, "test.yaml", overlay_as_sets(text, {"a", "b"}));
  const DurationModel& m = back.pipeline.steps[1].component.duration;
  if (slow == 0 || slow == 3) {  // nothing stands out: switched off, the fit is the mean
    CHECK(text.find(", straggler: {p: 0}}\noverheads:", b) != std::string::npos);
    CHECK(m.straggler_p == 0);
  } else {
    CHECK(r.steps[1].base == Duration::from_ms(3500));
    CHECK(r.steps[1].lognormal_sigma == 0);
    CHECK(r.steps[1].straggler_p == Approx(static_cast<double>(slow) / 3));
    CHECK(r.steps[1].straggler_factor == Approx(3));
    CHECK(m.straggler_p == Approx(static_cast<double>(slow) / 3).epsilon(1e-5));
    CHECK(m.straggler_factor == Approx(3).epsilon(1e-5));
  }
}

TEST_CASE("Calibrate: stragglers among noisy runs, 4000 attempts", "[planner][calibrate]") {
  const std::string yaml =
      "name: stragglers\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 2000}\n"
      "      input: {size: {distribution: uniform, min: 1GiB, max: 10GiB}}\n"
      "      duration: {base: 20s, per_gib: 5s, noise: {lognormal_sigma: 0.2}, straggler: {p: 0.1, factor: "
      "4}}\n"
      "    - name: q\n"
      "      parallel_for: {count: 2000}\n"
      "      duration: {base: 10s, noise: {lognormal_sigma: 0.3}, straggler: {p: 0.05, factor: 1.1}}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 64, memory: 256Gi, count: 4}\n";
  const Run run = simulate(yaml, {3, 4});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  const StepFit& w = r.steps[0];
  CHECK(w.straggler_reset);
  CHECK(w.straggler_p == Approx(0.1).margin(0.015));
  CHECK(w.straggler_factor == Approx(4).epsilon(0.08));
  CHECK(w.lognormal_sigma == Approx(0.2).margin(0.02));
  CHECK(w.base.seconds() == Approx(20).epsilon(0.05));
  CHECK(w.per_gib.seconds() == Approx(5).epsilon(0.05));
  CHECK(w.mean_fitted_s == Approx(w.mean_measured_s).epsilon(0.03));
  // Stragglers 10% slower hide in noise of sigma 0.3: few stand out, and the mean is kept.
  const StepFit& q = r.steps[1];
  CHECK(q.straggler_p < 0.02);
  CHECK(q.mean_fitted_s == Approx(q.mean_measured_s).epsilon(0.03));
}

TEST_CASE("Calibrate: a tree fan-in's tasks are fitted as their root step's whole work",
          "[planner][calibrate]") {
  // 10 shards, an aggregate of 10 s + 2 s per GiB over its 5 GiB input (20 s for all 10 shards), merged
  // with arity 4: level1 tasks merge 4, 4 and 2 shards (8 s, 8 s and 4 s, reading 2, 2 and 1 GiB), the
  // root 3 (6 s, 1.5 GiB). Each run divided by its share (4/10, 4/10, 2/10, 3/10) is 20 s at the
  // aggregate's full 5 GiB, so the fit is the model's 20 s as base (the input does not vary: 5 GiB).
  const Run run = simulate(
      "name: tree\n"
      "overheads: none\n"
      "cluster: {node_pools: [{name: p, cpu: 16, memory: 64Gi, count: 1}]}\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: shard, parallel_for: {count: 10}, duration: {base: 1s}}\n"
      "    - {name: agg, after: [shard], input: {size: 5GiB}, duration: {base: 10s, per_gib: 2s}, fan_in: "
      "{arity: "
      "4}}\n",
      {1});
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces, {"t"});
  REQUIRE(r.steps.size() == 2);  // shard and agg: the level (agg.level1) has no fit of its own
  CHECK(r.steps[1].path == "agg");
  CHECK(r.steps[1].attempts == 4);
  CHECK_FALSE(r.steps[1].sizes_vary);
  CHECK(r.steps[1].base == Duration::from_s(20));
  CHECK(r.steps[1].r_squared == 1);
  CHECK(overlay(r).find("level") == std::string::npos);
}

// A failed attempt may end its run early (a crash at start-up, an injected failure): the durations are
// fitted to the attempts that succeeded, and to failed ones only for a step none of whose attempts did.
// A spread wider than a scenario takes (sigma 4) is written at 4, and said.
TEST_CASE("Calibrate: failed attempts stay out of a step's fit, and sigma is written at most 4",
          "[planner][calibrate]") {
  const std::string yaml =
      "name: f\n"
      "overheads: none\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: w, parallel_for: {count: 4}, duration: {base: 10s}, retries: {max: 1}}\n"
      "    - {name: v, after: [w], parallel_for: {count: 3}, duration: {base: 1s}}\n"
      "cluster:\n"
      "  node_pools: [{name: p, cpu: 8, memory: 8Gi, count: 1}]\n";
  Run run = simulate(yaml, {1});
  Trace& t = run.traces[0];
  REQUIRE(t.attempts.size() == 7);
  // Two of w's attempts failed 1 ms into their runs (each retried: the retries ran 10 s); v's attempts all
  // failed, after 1, 2 and 3 s.
  AttemptRecords more;
  for (AttemptRecord& a : t.attempts) {
    if (a.step == 0 && a.item < 2) {
      AttemptRecord failed = a;
      failed.finished = failed.started + Duration::from_ms(1);
      failed.outcome = Outcome::failed;
      more.push_back(failed);
    }
    if (a.step == 1) {
      a.finished = a.started + Duration::from_s(1 + a.item);
      a.outcome = Outcome::failed;
    }
  }
  t.attempts.insert(t.attempts.end(), more.begin(), more.end());
  const CalibrationResult r = calibrate(run.scenario, run.plan, run.traces);
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].attempts == 4);
  CHECK(r.steps[0].base == Duration::from_s(10));
  CHECK(r.steps[0].lognormal_sigma == 0);
  CHECK(r.steps[1].attempts == 3);
  CHECK(r.steps[1].base == Duration::from_s(2));
  // The sample standard deviation of log(run / fitted), the fit being the mean, 2 s.
  const double l[] = {std::log(1.0 / 2), 0, std::log(3.0 / 2)};
  const double m = (l[0] + l[1] + l[2]) / 3;
  const double sd =
      std::sqrt(((l[0] - m) * (l[0] - m) + (l[1] - m) * (l[1] - m) + (l[2] - m) * (l[2] - m)) / 2);
  CHECK(std::abs(r.steps[1].lognormal_sigma - sd) < 1e-9);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "step v: no attempt succeeded; fitted to its 3 failed attempts, whose runs may have ended early");

  // Runs of 1 ms, 1 s and 2.5 h: a spread no lognormal of sigma 4 covers.
  Run wide = simulate(yaml, {1});
  for (AttemptRecord& a : wide.traces[0].attempts)
    if (a.step == 1)
      a.finished = a.started + (a.item == 0   ? Duration::from_ms(1)
                                : a.item == 1 ? Duration::from_s(1)
                                              : Duration::from_s(9000));
  const CalibrationResult w = calibrate(wide.scenario, wide.plan, wide.traces);
  REQUIRE(w.steps.size() == 2);
  CHECK(w.steps[1].lognormal_sigma == 4);
  REQUIRE(w.warnings.size() == 1);
  CHECK(w.warnings[0].starts_with("step v: the runs spread more than a lognormal of sigma 4 (fitted "));
  CHECK(w.warnings[0].ends_with("); written as 4, the most a scenario takes"));
  CHECK(overlay(w).find("noise: {lognormal_sigma: 4}") != std::string::npos);
}
