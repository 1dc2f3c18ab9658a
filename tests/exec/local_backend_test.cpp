// The local backend, run for real: answers equal a single-machine computation, limits hold at every
// instant of the trace, retries wait their backoff, and it agrees with the simulator on what it samples.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/exec/kernels.hpp>
#include <shardflow/exec/local_backend.hpp>
#include <shardflow/sim/simulator.hpp>

using namespace shardflow;
using namespace shardflow::exec;

namespace {

const char* const kCluster = R"(
cluster:
  node_pools:
    - {name: n, cpu: 2, memory: 8Gi, count: 1}
  scheduler: {policy: least-allocated, decisions_per_second: 0}
overheads: none
)";

Scenario scenario(const std::string& pipeline) {
  return load_scenario_text("name: t\nseed: 5\n" + pipeline + kCluster, "t.yaml");
}

LocalResult run(const Scenario& s, int cores, double time_scale = 1, std::uint64_t seed = 0) {
  const Plan plan = Plan::unroll(s.pipeline);
  LocalOptions lo;
  lo.cores = cores;
  lo.memory = 8 * kGiB;
  lo.time_scale = time_scale;
  lo.out_dir = std::filesystem::path(SHARDFLOW_BINARY_DIR) / "test-out" / "local";
  RunOptions ro;
  ro.seed = seed != 0 ? seed : s.seed;
  return run_local(s, plan, ro, lo);
}

// The largest number of attempts running at once among those `pick` selects, over [started, finished).
template <class Pick>
int max_running(const Trace& t, Pick pick) {
  std::vector<std::pair<std::int64_t, int>> ev;
  for (const AttemptRecord& a : t.attempts)
    if (a.started != kNever && pick(a)) {
      ev.emplace_back(a.started.ns(), 1);
      ev.emplace_back(a.finished.ns(), -1);
    }
  std::sort(ev.begin(), ev.end());  // at equal times an end (-1) sorts before a start
  int cur = 0, best = 0;
  for (const auto& [at, d] : ev) best = std::max(best, cur += d);
  return best;
}

// The ridge answer computed on one machine in one pass: every row of every shard in one matrix.
Eigen::VectorXd single_pass(std::uint64_t seed, std::uint32_t shards, std::uint64_t rows, int features,
                            double noise, double lambda) {
  Eigen::MatrixXd all(static_cast<Eigen::Index>(shards * rows), features);
  Eigen::VectorXd ally(static_cast<Eigen::Index>(shards * rows));
  for (std::uint32_t i = 0; i < shards; ++i) {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    generate_rows(seed, i, rows, features, noise, x, y);
    all.middleRows(static_cast<Eigen::Index>(i * rows), static_cast<Eigen::Index>(rows)) = x;
    ally.segment(static_cast<Eigen::Index>(i * rows), static_cast<Eigen::Index>(rows)) = y;
  }
  const Eigen::MatrixXd a = all.transpose() * all + lambda * Eigen::MatrixXd::Identity(features, features);
  return a.ldlt().solve(all.transpose() * ally);
}

// `fan_in`: the aggregate's fan_in mapping (a tree fan-in), or empty for a flat fan-in.
std::string ridge_pipeline(std::uint32_t shards, const std::string& fan_in = "") {
  return "pipeline:\n  steps:\n"
         "    - {name: shard, parallel_for: {count: " +
         std::to_string(shards) +
         "}, kernel: {name: shard_stats, rows: 3000, features: 6, noise: 0.5}}\n"
         "    - {name: aggregate, after: [shard], kernel: {name: aggregate}" +
         (fan_in.empty() ? "" : ", fan_in: " + fan_in) +
         "}\n"
         "    - {name: solve, after: [aggregate], parallel_for: {items: [{lambda: 0.01}, {lambda: 3}, "
         "{lambda: 300}]}, kernel: {name: ridge_solve}}\n"
         "    - {name: evaluate, after: [solve], kernel: {name: evaluate, rows: 2000, features: 6, noise: "
         "0.5}}\n"
         "    - {name: best, after: [evaluate, solve], kernel: {name: select_best}}\n";
}

}  // namespace

TEST_CASE("Local: the distributed ridge answer equals a single pass over all rows", "[exec]") {
  // A tree fan-in (arity 2 over 7 shards: levels of 4 and 2 tasks, then the root) sums partial sums:
  // the same answer, to rounding.
  for (const auto& [shards, fan_in] : std::vector<std::pair<std::uint32_t, std::string>>{
           {4u, ""}, {7u, ""}, {7u, "{arity: 2}"}, {7u, "{arity: 3}"}}) {
    for (int cores : {1, 2}) {
      INFO("shards " << shards << ", fan_in " << fan_in << ", cores " << cores);
      const Scenario s = scenario(ridge_pipeline(shards, fan_in));
      const LocalResult r = run(s, cores);
      REQUIRE(r.trace.tasks_failed == 0);
      // shards + solve 3 + evaluate + best + the aggregation tasks: 1 flat; 4 + 2 + 1 of arity 2 over 7;
      // 3 + 1 of arity 3 over 7.
      const std::size_t aggregation = fan_in.empty() ? 1 : fan_in == "{arity: 2}" ? 7 : 4;
      CHECK(r.trace.attempts.size() == shards + 3 + 1 + 1 + aggregation);
      REQUIRE(r.outputs.size() == 1);
      const auto* sel = dynamic_cast<const Selection*>(r.outputs[0].second.get());
      REQUIRE(sel != nullptr);
      // The chosen lambda's weights, computed in one pass, and the held-out choice made the same way.
      const Eigen::VectorXd w = single_pass(s.seed, shards, 3000, 6, 0.5, sel->lambda);
      REQUIRE(sel->w.size() == w.size());
      CHECK((sel->w - w).norm() / w.norm() < 1e-9);
      double best_mse = 1e300, best_lambda = -1;
      Eigen::MatrixXd hx;
      Eigen::VectorXd hy;
      generate_rows(s.seed, 4294967295u, 2000, 6, 0.5, hx, hy);
      for (double lambda : {0.01, 3.0, 300.0}) {
        const Eigen::VectorXd wl = single_pass(s.seed, shards, 3000, 6, 0.5, lambda);
        const double mse = (hx * wl - hy).squaredNorm() / 2000.0;
        if (mse < best_mse) best_mse = mse, best_lambda = lambda;
      }
      CHECK(sel->lambda == best_lambda);
      CHECK(std::abs(sel->mse - best_mse) / best_mse < 1e-9);
    }
  }
}

TEST_CASE("Local: loop and group parallelism are never exceeded, and are reached", "[exec]") {
  // 12 sleeps of 30 ms with parallelism 3, beside a group of 4 iterations (2 at once) of a -> b, all
  // asking for little CPU so that only the limits hold them back.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: wide, parallel_for: {count: 12, parallelism: 3}, resources: {cpu: 100m}, duration: {base: 30ms}}
    - name: g
      parallel_for: {count: 4, parallelism: 2}
      steps:
        - {name: a, resources: {cpu: 100m}, duration: {base: 20ms}}
        - {name: b, after: [a], resources: {cpu: 100m}, duration: {base: 20ms}}
)");
  const LocalResult r = run(s, 2);
  const Trace& t = r.trace;
  REQUIRE(t.tasks_failed == 0);
  REQUIRE(t.attempts.size() == 12 + 8);
  CHECK(max_running(t, [](const AttemptRecord& a) { return a.step == 0; }) == 3);
  // Group iterations active at once: an iteration is active from its `a` start to its `b` finish.
  std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> span;
  for (const AttemptRecord& a : t.attempts) {
    if (a.step == 0) continue;
    auto& [from, to] = span.try_emplace(a.item, a.started.ns(), a.finished.ns()).first->second;
    from = std::min(from, a.started.ns());
    to = std::max(to, a.finished.ns());
  }
  REQUIRE(span.size() == 4);
  int most = 0;
  for (const auto& [i, s1] : span) {
    int n = 0;
    for (const auto& [j, s2] : span) n += s2.first <= s1.first && s1.first < s2.second ? 1 : 0;
    most = std::max(most, n);
  }
  CHECK(most == 2);
  // Dependencies: every b starts after its a finished.
  for (const AttemptRecord& b : t.attempts)
    if (b.step == 2)
      for (const AttemptRecord& a : t.attempts)
        if (a.step == 1 && a.item == b.item) CHECK(b.started >= a.finished);
}

TEST_CASE("Local: a work queue of 2 workers runs at most 2 of its items at once, each once", "[exec]") {
  // 4 cores would run 4 of the 8 sleeping items at once; 2 workers take them 2 at a time.
  const Scenario s = scenario(
      "pipeline:\n  steps:\n"
      "    - {name: w, parallel_for: {count: 8, workers: 2}, resources: {cpu: 500m}, duration: {base: "
      "30ms}}\n");
  const LocalResult r = run(s, 4);
  REQUIRE(r.trace.tasks_failed == 0);
  REQUIRE(r.trace.attempts.size() == 8);
  CHECK(max_running(r.trace, [](const AttemptRecord&) { return true; }) == 2);
  std::set<std::uint32_t> items;
  for (const AttemptRecord& a : r.trace.attempts) items.insert(a.item);
  CHECK(items.size() == 8);
}

TEST_CASE("Local: admitted CPU never exceeds --cores", "[exec]") {
  // Tasks of 1 and 2 CPUs spinning on 2 cores: at every instant the reserved CPU is at most 2000m.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: one, parallel_for: {count: 6}, resources: {cpu: 1}, kernel: {name: spin, seconds: 20ms}}
    - {name: two, parallel_for: {count: 3}, resources: {cpu: 2}, kernel: {name: spin, seconds: 20ms}}
    - {name: half, parallel_for: {count: 6}, resources: {cpu: 500m}, duration: {base: 15ms}}
)");
  const LocalResult r = run(s, 2);
  const Trace& t = r.trace;
  REQUIRE(t.tasks_failed == 0);
  const MilliCpu cpu[] = {1000, 2000, 500};
  std::vector<std::pair<std::int64_t, MilliCpu>> ev;
  for (const AttemptRecord& a : t.attempts) {
    ev.emplace_back(a.scheduled.ns(), cpu[a.step]);
    ev.emplace_back(a.finished.ns(), -cpu[a.step]);
  }
  std::sort(ev.begin(), ev.end());
  MilliCpu cur = 0, most = 0;
  for (const auto& [at, d] : ev) most = std::max(most, cur += d);
  CHECK(most <= 2000);
  CHECK(most == 2000);
}

TEST_CASE("Local: recorded times go forward: no successor stamped before its dependency ended", "[exec]") {
  // Hundreds of noop tasks ending on two workers at once: a worker's pump stamped what it admitted and
  // reserved with the time its kernel ended, read before it took the lock, so that records went back in
  // time past another worker's (a successor scheduled before its dependency finished, queue waits below
  // zero, reserved CPU read over the cores). Each check holds on every seed.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: a, parallel_for: {count: 400, parallelism: 7}, resources: {cpu: 1}, kernel: {name: noop}}
    - name: g
      after: [a]
      parallel_for: {count: 20, parallelism: 2}
      steps:
        - {name: x, resources: {cpu: 1}, kernel: {name: noop}}
        - {name: y, after: [x], resources: {cpu: 1}, kernel: {name: noop}}
    - {name: b, after: [a], parallel_for: {count: 50}, resources: {cpu: 2}, kernel: {name: noop}}
)");
  const Plan plan = Plan::unroll(s.pipeline);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    const LocalResult r = run(s, 2, 1, seed);
    const Trace& t = r.trace;
    REQUIRE(t.tasks_failed == 0);
    std::vector<SimTime> done(plan.size(), SimTime::zero());
    for (const AttemptRecord& a : t.attempts) done[a.task] = std::max(done[a.task], a.finished);
    std::vector<std::pair<std::int64_t, MilliCpu>> ev;
    std::size_t backwards = 0, early = 0;
    for (const AttemptRecord& a : t.attempts) {
      if (!(a.submitted <= a.scheduled && a.scheduled <= a.started && a.started <= a.finished)) ++backwards;
      // Every plan predecessor (joins resolve with their last input) ended before this was submitted.
      std::vector<TaskId> todo(plan.preds(a.task).begin(), plan.preds(a.task).end());
      while (!todo.empty()) {
        const TaskId p = todo.back();
        todo.pop_back();
        if (plan.is_join(p))
          todo.insert(todo.end(), plan.preds(p).begin(), plan.preds(p).end());
        else if (done[p] > a.submitted)
          ++early;
      }
      const MilliCpu cpu = plan.steps()[a.step].component.resources.cpu;
      ev.emplace_back(a.scheduled.ns(), cpu);
      ev.emplace_back(a.finished.ns(), -cpu);
    }
    CHECK(backwards == 0);
    CHECK(early == 0);
    std::sort(ev.begin(), ev.end());
    MilliCpu cur = 0, most = 0;
    for (const auto& [at, d] : ev) most = std::max(most, cur += d);
    CHECK(most <= 2000);
  }
}

TEST_CASE("Local: failing attempts are retried after the policy's backoff, with their errors", "[exec]") {
  const Scenario s = scenario(R"(pipeline:
  steps:
    - name: flaky
      kernel: {name: spin, seconds: 1ms, fail_attempts: 2}
      retries: {max: 3, backoff: 100ms, factor: 2}
)");
  const LocalResult r = run(s, 2);
  const Trace& t = r.trace;
  REQUIRE(t.attempts.size() == 3);
  CHECK(t.tasks_failed == 0);
  CHECK(t.attempts[0].outcome == Outcome::failed);
  CHECK(t.attempts[1].outcome == Outcome::failed);
  CHECK(t.attempts[2].outcome == Outcome::succeeded);
  CHECK(t.attempts[0].kind == AttemptKind::first);
  CHECK(t.attempts[1].kind == AttemptKind::retry);
  CHECK(t.attempts[2].kind == AttemptKind::retry);
  CHECK(t.error_text(t.attempts[0]) == "injected failure: attempt 0 of fail_attempts 2");
  CHECK(t.error_text(t.attempts[1]) == "injected failure: attempt 1 of fail_attempts 2");
  CHECK(t.error_text(t.attempts[2]).empty());
  const double gap1 = (t.attempts[1].submitted - t.attempts[0].finished).seconds();
  const double gap2 = (t.attempts[2].submitted - t.attempts[1].finished).seconds();
  // At least the backoff (100 ms, then 200 ms); the upper bounds leave a loaded machine's wake-up delays
  // room (100 ms, then 200 ms) while telling the policy's steps apart: 200 ms first, or a factor 4, fails.
  CHECK(gap1 >= 0.100);
  CHECK(gap1 < 0.200);
  CHECK(gap2 >= 0.200);
  CHECK(gap2 < 0.400);
}

TEST_CASE("Local: a sleep kernel fails its fail_attempts too, before its timer", "[exec]") {
  // The timer path did not call the kernel, and its fail_attempts were ignored: 1 attempt, not 3.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - name: nap
      duration: {base: 20ms}
      kernel: {name: sleep, fail_attempts: 2}
      retries: {max: 2, backoff: 0s}
)");
  const Trace t = run(s, 2).trace;
  REQUIRE(t.attempts.size() == 3);
  CHECK(t.tasks_failed == 0);
  for (int i = 0; i < 2; ++i) {
    CHECK(t.attempts[i].outcome == Outcome::failed);
    CHECK(t.error_text(t.attempts[i]) ==
          "injected failure: attempt " + std::to_string(i) + " of fail_attempts 2");
    CHECK(t.attempts[i].finished == t.attempts[i].started);  // before doing anything
  }
  CHECK(t.attempts[2].outcome == Outcome::succeeded);
  CHECK(t.attempts[2].finished - t.attempts[2].started >= Duration::from_ms(20));
}

TEST_CASE("Local: retries.max_duration stops a retry at the deadline, in real time at any time scale",
          "[exec]") {
  // At time scale 0.5: attempt 0 fails at once (fail_attempts 1); the retry follows 50 ms later (100 ms
  // of backoff, scaled) and would sleep 300 ms (600 ms, scaled), past the deadline 200 ms after the first
  // attempt (not scaled: a deadline bounds real time, and real kernels do not run faster at a scale): it
  // stops there, failed, and no retry follows (its wait would end past the deadline).
  const Scenario s = scenario(R"(pipeline:
  steps:
    - name: nap
      duration: {base: 600ms}
      kernel: {name: sleep, fail_attempts: 1}
      retries: {max: 3, backoff: 100ms, max_duration: 200ms}
)");
  const Trace t = run(s, 2, 0.5).trace;
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.tasks_failed == 1);
  CHECK(t.attempts[1].kind == AttemptKind::retry);
  CHECK(t.attempts[1].outcome == Outcome::failed);
  CHECK(t.error_text(t.attempts[1]) == past_deadline_text(Duration::from_ms(200)));
  const double end = (t.attempts[1].finished - t.attempts[0].submitted).seconds();
  CHECK(end >= 0.200);  // scaled, the deadline would have been at 100 ms
  CHECK(end < 0.300);
}

TEST_CASE("Local: a kernel retry that returns after retries.max_duration failed", "[exec]") {
  // The spin kernel is not interrupted: the retry spins its 150 ms and returns past the 100 ms deadline.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - name: busy
      kernel: {name: spin, seconds: 150ms, fail_attempts: 1}
      retries: {max: 3, backoff: 0s, max_duration: 100ms}
)");
  const Trace t = run(s, 2).trace;
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.tasks_failed == 1);
  CHECK(t.error_text(t.attempts[1]) == past_deadline_text(Duration::from_ms(100)));
  CHECK((t.attempts[1].finished - t.attempts[1].started).seconds() >= 0.150);
}

TEST_CASE("Local: a run at a time scale records it, and the steps whose run times it scaled", "[exec]") {
  // Sleep (no kernel) and spin run for the sampled time, times the scale; spin with `seconds` and noop
  // do not.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: wait, duration: {base: 200ms}}
    - {name: burn, duration: {base: 100ms}, kernel: {name: spin}}
    - {name: fixed, duration: {base: 100ms}, kernel: {name: spin, seconds: 1ms}}
    - {name: none, kernel: {name: noop}}
)");
  const Trace t = run(s, 2, 0.05).trace;
  CHECK(t.time_scale == 0.05);
  CHECK(t.time_scaled_steps == std::vector<std::uint32_t>{0, 1});
  REQUIRE(t.attempts.size() == 4);
  CHECK((t.attempts[0].finished - t.attempts[0].started) >= Duration::from_ms(10));
  const Trace unscaled = run(s, 2).trace;
  CHECK(unscaled.time_scale == 1);
  CHECK(unscaled.time_scaled_steps.empty());
}

TEST_CASE("Local: a command that fails until a marker exists is retried, its stderr in the trace", "[exec]") {
  const std::filesystem::path dir = std::filesystem::path(SHARDFLOW_BINARY_DIR) / "test-out" / "marker";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string marker = (dir / "ready").string();
  const Scenario s = scenario(
      "pipeline:\n  steps:\n    - name: cmd\n      kernel: {name: command}\n"
      "      command: [sh, -c, \"test -e " +
      marker + " || { touch " + marker +
      "; echo not yet >&2; exit 3; }\"]\n      retries: {max: 2, backoff: 50ms}\n");
  const LocalResult r = run(s, 1);
  const Trace& t = r.trace;
  REQUIRE(t.attempts.size() == 2);
  CHECK(t.tasks_failed == 0);
  CHECK(t.attempts[0].outcome == Outcome::failed);
  CHECK(t.error_text(t.attempts[0]).find("exited with status 3") != std::string::npos);
  CHECK(t.error_text(t.attempts[0]).find("not yet") != std::string::npos);
  CHECK(t.attempts[1].outcome == Outcome::succeeded);
  const double gap = (t.attempts[1].submitted - t.attempts[0].finished).seconds();
  CHECK(gap >= 0.050);
  CHECK(gap < 0.500);  // the backoff in milliseconds, with room for a loaded machine's wake-up delays
}

TEST_CASE("Local: a task that exhausts its retries fails, and what depends on it never runs", "[exec]") {
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: bad, kernel: {name: spin, seconds: 1ms, fail_attempts: 5}, retries: {max: 1, backoff: 10ms}}
    - {name: after, after: [bad], duration: {base: 1ms}}
    - {name: other, duration: {base: 1ms}}
)");
  const LocalResult r = run(s, 2);
  CHECK(r.trace.tasks_failed == 1);
  std::multiset<std::uint32_t> steps;
  for (const AttemptRecord& a : r.trace.attempts) steps.insert(a.step);
  CHECK(steps.count(0) == 2);
  CHECK(steps.count(1) == 0);
  CHECK(steps.count(2) == 1);
}

TEST_CASE("Local: the simulator and the local backend run the same attempts from the same draws", "[exec]") {
  // Sampled noise, stragglers and failures; parallelism 1 so that the start order is fully determined.
  const Scenario s = scenario(R"(pipeline:
  steps:
    - name: work
      parallel_for: {count: 12, parallelism: 1}
      duration: {base: 1s, noise: {lognormal_sigma: 0.3}, straggler: {p: 0.2, factor: 3}}
      failure: {p: 0.25}
      retries: {max: 4, backoff: 1ms, factor: 1}
    - {name: last, after: [work], duration: {base: 500ms, noise: {lognormal_sigma: 0.5}}}
)");
  const Plan plan = Plan::unroll(s.pipeline);
  sim::SimOptions so;
  so.seed = 11;
  const Trace st = sim::simulate(s, plan, so);
  const double scale = 0.02;  // 1 s of model time is 20 ms here
  const LocalResult lr = run(s, 2, scale, 11);
  const Trace& lt = lr.trace;
  REQUIRE(st.attempts.size() == lt.attempts.size());
  CHECK(st.tasks_failed == lt.tasks_failed);
  // The same attempts in the same order, with the same outcomes, and run times in proportion.
  std::vector<std::size_t> so_order(st.attempts.size()), lo_order(lt.attempts.size());
  for (std::size_t i = 0; i < so_order.size(); ++i) so_order[i] = lo_order[i] = i;
  const auto by_start = [](const Trace& t) {
    return [&t](std::size_t x, std::size_t y) { return t.attempts[x].started < t.attempts[y].started; };
  };
  std::stable_sort(so_order.begin(), so_order.end(), by_start(st));
  std::stable_sort(lo_order.begin(), lo_order.end(), by_start(lt));
  int failures = 0;
  for (std::size_t i = 0; i < so_order.size(); ++i) {
    const AttemptRecord& a = st.attempts[so_order[i]];
    const AttemptRecord& b = lt.attempts[lo_order[i]];
    INFO("attempt " << i << ": task " << a.task << " attempt " << a.attempt);
    CHECK(a.task == b.task);
    CHECK(a.attempt == b.attempt);
    CHECK(a.outcome == b.outcome);
    failures += a.outcome == Outcome::failed ? 1 : 0;
    // Both drew the same: the simulator ran exactly its draw; the local backend reports its own draw,
    // and slept at least that long (times the scale; a timer never fires early).
    const AttemptSample& drawn = lr.samples[lo_order[i]];
    CHECK((a.finished - a.started).ns() == delay_from_ns(drawn.run_ns).ns());
    CHECK(drawn.fails == (a.outcome == Outcome::failed));
    CHECK(drawn.run_ns == sample_attempt(plan.steps()[a.step].component, plan, a.task, a.attempt, 11).run_ns);
    CHECK((b.finished - b.started).seconds() >= drawn.run_ns * 1e-9 * scale);
  }
  CHECK(failures > 0);  // the case exercises sampled failures
}

TEST_CASE("Local: what this machine cannot run is an error before anything runs", "[exec]") {
  const Scenario big = scenario(R"(pipeline:
  steps:
    - {name: big, resources: {cpu: 2}, duration: {base: 1s}}
)");
  const Plan plan = Plan::unroll(big.pipeline);
  LocalOptions lo;
  lo.cores = 1;
  lo.memory = 8 * kGiB;
  try {
    run_local(big, plan, RunOptions{}, lo);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "t.yaml:5:36: pipeline.steps[0].resources.cpu: step big asks for 2 CPUs, more than this machine "
          "(--cores 1, --memory 8Gi) has; lower it with --set or run with a larger --cores");
  }
  // Memory, at its value.
  lo.cores = 4;
  lo.memory = 512 * kMiB;
  const Scenario mem = scenario(R"(pipeline:
  steps:
    - {name: a}
    - name: big
      resources: {cpu: 1, memory: 1Gi}
)");
  try {
    run_local(mem, Plan::unroll(mem.pipeline), RunOptions{}, lo);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "t.yaml:7:35: pipeline.steps[1].resources.memory: step big asks for 1Gi of memory, more than this "
          "machine (--cores 4, --memory 512Mi) has; lower it with --set or run with a larger --memory");
  }
  // Every step's every request at once, a line each (a run said one, then the next).
  lo.cores = 1;
  lo.memory = 512 * kMiB;
  const Scenario many = scenario(R"(pipeline:
  steps:
    - {name: a, resources: {cpu: 2}}
    - {name: b, resources: {cpu: 2, memory: 1Gi}}
)");
  try {
    run_local(many, Plan::unroll(many.pipeline), RunOptions{}, lo);
    FAIL("no error");
  } catch (const InputErrors& e) {
    const std::string machine = "this machine (--cores 1, --memory 512Mi)";
    CHECK(std::string(e.what()) ==
          "t.yaml:5:34: pipeline.steps[0].resources.cpu: step a asks for 2 CPUs, more than " + machine +
              " has; lower it with --set or run with a larger --cores\n"
              "t.yaml:6:34: pipeline.steps[1].resources.cpu: step b asks for 2 CPUs, more than " +
              machine +
              " has; lower it with --set or run with a larger --cores\n"
              "t.yaml:6:45: pipeline.steps[1].resources.memory: step b asks for 1Gi of memory, more than " +
              machine + " has; lower it with --set or run with a larger --memory");
    CHECK(e.problems().size() == 3);
    CHECK(e.field() == "pipeline.steps[0].resources.cpu");
  }
}

TEST_CASE("Local: speculation is refused, naming the field, before anything runs", "[exec]") {
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: s, parallel_for: {count: 4}, duration: {base: 1s}, speculation: {after: 1.5x}}
)");
  try {
    run_local(s, Plan::unroll(s.pipeline), RunOptions{}, LocalOptions{});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "t.yaml:5:65: pipeline.steps[0].speculation: the local backend does not run speculative backups; "
          "remove speculation, or use --backend sim");
  }
}

TEST_CASE("Local: a stop request cancels what waits and returns the partial trace", "[exec]") {
  const Scenario s = scenario(R"(pipeline:
  steps:
    - {name: long, parallel_for: {count: 4}, resources: {cpu: 1}, kernel: {name: spin, seconds: 30s}}
)");
  const Plan plan = Plan::unroll(s.pipeline);
  LocalOptions lo;
  lo.cores = 2;
  lo.memory = 8 * kGiB;
  std::atomic<bool> stop{false};
  RunOptions ro;
  ro.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const LocalResult r = run_local(s, plan, ro, lo);
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  REQUIRE(r.trace.attempts.size() == 4);
  int started = 0;
  for (const AttemptRecord& a : r.trace.attempts) {
    CHECK(a.outcome == Outcome::cancelled);
    started += a.started != kNever ? 1 : 0;
  }
  CHECK(started == 2);
  CHECK(r.trace.tasks_failed == 4);
  // The machine is in the run until its last attempt has ended (they end after the stop, when they
  // notice it): utilization stays within 100%.
  REQUIRE(r.trace.nodes.size() == 1);
  for (const AttemptRecord& a : r.trace.attempts) CHECK(a.finished <= r.trace.nodes[0].down);
  CHECK(compute_metrics(r.trace, plan).peak_cpu_utilization <= 1.0);
}
