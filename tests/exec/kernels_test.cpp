#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <tbb/task_arena.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/exec/kernels.hpp>

using namespace shardflow;
using namespace shardflow::exec;

namespace {

// A valid scenario around one list of steps (indented for `steps:` at column 3); the steps start on line 7.
std::string with_steps(const std::string& steps) {
  return "name: t\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
         "pipeline:\n"
         "  steps:\n" +
         steps;
}

// kernel_problems' messages for the scenario of these steps, a line each ("" for none).
std::string kernel_problems_text(const std::string& steps) {
  const Scenario s = load_scenario_text(with_steps(steps), "t.yaml");
  std::string out;
  for (const InputError& e : kernel_problems(s, Plan::unroll(s.pipeline))) (out += e.what()) += '\n';
  return out;
}

// The message check_kernels throws for the scenario, or "ok".
std::string check_error(const std::string& steps) {
  const Scenario s = load_scenario_text(with_steps(steps), "t.yaml");
  try {
    check_kernels(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "ok";
}

std::vector<TaskId> tasks_of(const Plan& plan, const std::string& path) {
  std::vector<TaskId> out;
  for (TaskId t = 0; t < plan.size(); ++t)
    if (!plan.is_join(t) && plan.steps()[plan.step_of(t)].path == path) out.push_back(t);
  return out;
}

const KernelSpec& kernel_of(const Plan& plan, TaskId t) {
  return plan.steps()[plan.step_of(t)].component.kernel;
}

KernelContext context(const Plan& plan, TaskId t, std::uint64_t seed, int threads = 1) {
  KernelContext c;
  c.plan = &plan;
  c.task = t;
  c.seed = seed;
  c.threads = threads;
  return c;
}

template <class T>
std::shared_ptr<const T> as(const std::shared_ptr<const Value>& v) {
  auto p = std::dynamic_pointer_cast<const T>(v);
  REQUIRE(p);
  return p;
}

double rel_diff(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).norm() / b.norm();
}

// A ridge pipeline: `shards` shards of `rows` rows, aggregate, three lambdas, evaluate, select.
std::string ridge_pipeline(int shards, int rows) {
  return with_steps(
      "    - name: shards\n"
      "      parallel_for: {count: " +
      std::to_string(shards) +
      "}\n"
      "      kernel: {name: shard_stats, rows: " +
      std::to_string(rows) +
      ", features: 6, noise: 0.5}\n"
      "    - name: agg\n"
      "      after: [shards]\n"
      "      kernel: {name: aggregate}\n"
      "    - name: ridge\n"
      "      after: [agg]\n"
      "      parallel_for: {items: [{lambda: 0.01}, {lambda: 30}, {lambda: 3000}]}\n"
      "      kernel: {name: ridge_solve}\n"
      "    - name: eval\n"
      "      after: [ridge]\n"
      "      kernel: {name: evaluate, rows: 4000, features: 6, noise: 0.5}\n"
      "    - name: best\n"
      "      after: [eval]\n"
      "      kernel: {name: select_best}\n");
}

struct RidgeRun {
  std::vector<std::shared_ptr<const Value>> shards, models;
  std::shared_ptr<const ShardStats> agg;
  std::shared_ptr<const Evaluation> eval;
  std::shared_ptr<const Selection> best;
};

RidgeRun run_ridge_pipeline(const Plan& plan, std::uint64_t seed, int threads) {
  RidgeRun r;
  tbb::task_arena arena(threads);
  for (TaskId t : tasks_of(plan, "shards"))
    r.shards.push_back(
        arena.execute([&] { return run_kernel(kernel_of(plan, t), context(plan, t, seed, threads)); }));
  const TaskId agg = tasks_of(plan, "agg").at(0);
  KernelContext c = context(plan, agg, seed);
  c.upstream = r.shards;
  r.agg = as<ShardStats>(run_kernel(kernel_of(plan, agg), c));
  for (TaskId t : tasks_of(plan, "ridge")) {
    c = context(plan, t, seed);
    c.upstream = {r.agg};
    r.models.push_back(run_kernel(kernel_of(plan, t), c));
  }
  const TaskId ev = tasks_of(plan, "eval").at(0);
  c = context(plan, ev, seed, threads);
  c.upstream = r.models;
  r.eval = as<Evaluation>(arena.execute([&] { return run_kernel(kernel_of(plan, ev), c); }));
  const TaskId best = tasks_of(plan, "best").at(0);
  c = context(plan, best, seed);
  c.upstream = {r.eval};
  r.best = as<Selection>(run_kernel(kernel_of(plan, best), c));
  return r;
}

// A fresh directory for command output, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("shardflow-kernels-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

TEST_CASE("Kernels: the distributed ridge answer equals one pass over all the rows", "[exec]") {
  for (const auto& [shards, rows] : {std::pair{5, 3000}, std::pair{2, 1500}}) {
    CAPTURE(shards, rows);
    const Scenario s = load_scenario_text(ridge_pipeline(shards, rows), "t.yaml");
    check_kernels(s);
    const Plan plan = Plan::unroll(s.pipeline);
    const std::uint64_t seed = 11;
    const RidgeRun one = run_ridge_pipeline(plan, seed, 1);
    const RidgeRun two = run_ridge_pipeline(plan, seed, 2);

    // Statistics do not depend on the thread count, to the bit.
    REQUIRE(one.shards.size() == static_cast<std::size_t>(shards));
    for (std::size_t i = 0; i < one.shards.size(); ++i) {
      const auto a = as<ShardStats>(one.shards[i]);
      const auto b = as<ShardStats>(two.shards[i]);
      CHECK(a->rows == static_cast<std::uint64_t>(rows));
      CHECK(a->xtx == b->xtx);
      CHECK(a->xty == b->xty);
      CHECK(a->yty == b->yty);
    }
    // Each shard has its own rows.
    CHECK(as<ShardStats>(one.shards[0])->xty != as<ShardStats>(one.shards[1])->xty);
    CHECK(one.agg->rows == static_cast<std::uint64_t>(shards * rows));
    CHECK(one.agg->describe() == std::to_string(shards * rows) + " rows, 6 features");

    // One pass: every shard's rows in one matrix.
    const Eigen::Index n = shards * rows;
    Eigen::MatrixXd x(n, 6);
    Eigen::VectorXd y(n);
    for (int i = 0; i < shards; ++i) {
      Eigen::MatrixXd xi;
      Eigen::VectorXd yi;
      generate_rows(seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(rows), 6, 0.5, xi, yi);
      x.middleRows(i * rows, rows) = xi;
      y.segment(i * rows, rows) = yi;
    }
    const Eigen::MatrixXd xtx = x.transpose() * x;
    const Eigen::VectorXd xty = x.transpose() * y;
    CHECK((one.agg->xtx - xtx).norm() / xtx.norm() < 1e-12);
    CHECK(std::abs(one.agg->yty - y.squaredNorm()) / y.squaredNorm() < 1e-12);

    REQUIRE(one.models.size() == 3);
    const double lambdas[] = {0.01, 30, 3000};
    for (std::size_t i = 0; i < 3; ++i) {
      const auto m = as<RidgeModel>(one.models[i]);
      CHECK(m->lambda == lambdas[i]);
      Eigen::MatrixXd a = xtx;
      a.diagonal().array() += lambdas[i];
      const Eigen::VectorXd w = a.ldlt().solve(xty);
      CHECK(rel_diff(m->w, w) < 1e-9);
      CHECK(as<RidgeModel>(two.models[i])->w == m->w);
    }
    // With little shrinkage the model finds the true weights.
    CHECK(rel_diff(as<RidgeModel>(one.models[0])->w, true_weights(seed, 6)) < 0.05);
    // Heavy shrinkage does not.
    CHECK(rel_diff(as<RidgeModel>(one.models[2])->w, true_weights(seed, 6)) > 0.1);
  }
}

TEST_CASE("Kernels: evaluate's held-out MSE is the MSE on the generated held-out rows", "[exec]") {
  const Scenario s = load_scenario_text(ridge_pipeline(4, 2000), "t.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  const std::uint64_t seed = 3;
  const RidgeRun r = run_ridge_pipeline(plan, seed, 2);

  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  generate_rows(seed, 4294967295ULL, 4000, 6, 0.5, x, y);
  REQUIRE(r.eval->entries.size() == 3);
  std::size_t argmin = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto m = as<RidgeModel>(r.models[i]);
    const double mse = (x * m->w - y).squaredNorm() / 4000.0;
    CHECK(r.eval->entries[i].lambda == m->lambda);
    CHECK(std::abs(r.eval->entries[i].mse - mse) / mse < 1e-9);
    CHECK(r.eval->entries[i].w == m->w);
    if (r.eval->entries[i].mse < r.eval->entries[argmin].mse) argmin = i;
  }
  // The noise is 0.5, so the best held-out MSE is near 0.25; lambda 3000 shrinks too much.
  CHECK(r.eval->entries[argmin].mse > 0.2);
  CHECK(r.eval->entries[argmin].mse < 0.3);
  CHECK(r.eval->entries[2].mse > 0.5);
  CHECK(argmin != 2);

  CHECK(r.best->lambda == r.eval->entries[argmin].lambda);
  CHECK(r.best->mse == r.eval->entries[argmin].mse);
  CHECK(r.best->w == r.eval->entries[argmin].w);
  CHECK(r.best->describe() == "chose lambda " + g(r.best->lambda) + ": held-out MSE " + g(r.best->mse));
  CHECK(r.eval->describe() == "lambda 0.01: held-out MSE " + g(r.eval->entries[0].mse) +
                                  "; lambda 30: held-out MSE " + g(r.eval->entries[1].mse) +
                                  "; lambda 3000: held-out MSE " + g(r.eval->entries[2].mse));
}

TEST_CASE("Kernels: select_best takes the lowest MSE, the smallest lambda on ties, w from a model",
          "[exec]") {
  auto e1 = std::make_shared<Evaluation>();
  e1->entries = {{1.0, 0.5, {}}, {0.5, 0.25, {}}};
  auto e2 = std::make_shared<Evaluation>();
  e2->entries = {{0.1, 0.25, {}}, {2.0, 0.25, {}}};
  auto model = std::make_shared<RidgeModel>();
  model->lambda = 0.1;
  model->w = Eigen::VectorXd::Constant(3, 2.0);
  KernelContext c;
  c.upstream = {e1, nullptr, model, e2};
  KernelSpec k;
  k.name = "select_best";
  const auto best = as<Selection>(run_kernel(k, c));
  CHECK(best->lambda == 0.1);
  CHECK(best->mse == 0.25);
  CHECK(best->w == model->w);
  CHECK(best->describe() == "chose lambda 0.1: held-out MSE 0.25");

  Selection s;
  s.lambda = 0.1;
  s.mse = 0.0100312345;
  CHECK(s.describe() == "chose lambda 0.1: held-out MSE 0.0100312");

  c.upstream = {model};
  CHECK_THROWS_WITH(run_kernel(k, c), "select_best: no upstream task produced an evaluation");
}

TEST_CASE("Kernels: aggregate sums statistics, skips nulls, rejects none and mixed feature counts",
          "[exec]") {
  auto a = std::make_shared<ShardStats>();
  a->xtx = Eigen::MatrixXd::Identity(2, 2);
  a->xty = Eigen::VectorXd::Constant(2, 1.0);
  a->yty = 3;
  a->rows = 10;
  auto b = std::make_shared<ShardStats>(*a);
  b->rows = 5;
  KernelSpec k;
  k.name = "aggregate";
  KernelContext c;
  c.upstream = {a, nullptr, b};
  const auto sum = as<ShardStats>(run_kernel(k, c));
  CHECK(sum->rows == 15);
  CHECK(sum->yty == 6);
  CHECK(sum->xtx == 2 * Eigen::MatrixXd::Identity(2, 2));
  CHECK(sum->xty == Eigen::VectorXd::Constant(2, 2.0));

  c.upstream = {nullptr};
  CHECK_THROWS_WITH(run_kernel(k, c), "aggregate: no upstream task produced shard statistics");
  auto wide = std::make_shared<ShardStats>();
  wide->xtx = Eigen::MatrixXd::Identity(3, 3);
  wide->xty = Eigen::VectorXd::Zero(3);
  c.upstream = {a, wide};
  CHECK_THROWS_WITH(run_kernel(k, c), "aggregate: upstream statistics have 2 and 3 features");
}

TEST_CASE("Kernels: shard_stats rows from rows_per_gib and the task's input", "[exec]") {
  KernelSpec k;
  k.name = "shard_stats";
  k.params = {{"rows_per_gib", "1000"}, {"features", "3"}};
  KernelContext c;
  c.input_bytes = 1.5 * 1024 * 1024 * 1024;
  CHECK(as<ShardStats>(run_kernel(k, c))->rows == 1500);
  c.input_bytes = 10;
  CHECK(as<ShardStats>(run_kernel(k, c))->rows == 1);
  CHECK(as<ShardStats>(run_kernel(k, c))->xty.size() == 3);
}

TEST_CASE("Kernels: ridge_solve takes lambda from the parameter, or from the item's lambda_key", "[exec]") {
  const Scenario s = load_scenario_text(with_steps("    - name: r\n"
                                                   "      parallel_for: {items: [{lr: 2.5}, {lr: 0}]}\n"
                                                   "      kernel: {name: ridge_solve, lambda_key: lr}\n"),
                                        "t.yaml");
  check_kernels(s);
  const Plan plan = Plan::unroll(s.pipeline);
  auto stats = std::make_shared<ShardStats>();
  stats->xtx = Eigen::MatrixXd::Identity(2, 2) * 2.0;
  stats->xty = Eigen::VectorXd::Constant(2, 9.0);
  stats->rows = 2;
  KernelContext c = context(plan, 0, 1);
  c.upstream = {stats};
  const auto m = as<RidgeModel>(run_kernel(kernel_of(plan, 0), c));
  CHECK(m->lambda == 2.5);
  CHECK(m->w == Eigen::VectorXd::Constant(2, 2.0));  // (2 + 2.5) w = 9
  CHECK(m->describe() == "lambda 2.5: 2 weights, |w| 2.82843");

  KernelSpec k = kernel_of(plan, 0);
  k.params = {{"lambda", "7"}};
  CHECK(as<RidgeModel>(run_kernel(k, c))->w == Eigen::VectorXd::Constant(2, 1.0));

  KernelSpec wrong = kernel_of(plan, 0);
  wrong.params = {{"lambda_key", "lambda"}};
  CHECK_THROWS_WITH(run_kernel(wrong, c),
                    "ridge_solve: no parameter lambda, and the loop item {\"lr\":2.5} has no key \"lambda\"");
  c.upstream = {};
  CHECK_THROWS_WITH(run_kernel(k, c), "ridge_solve: no upstream task produced shard statistics");
}

TEST_CASE("Kernels: check_kernels names the place and the field of every problem", "[exec]") {
  const auto step = [](const std::string& kernel_body) {
    return "    - name: a\n"
           "      kernel:\n" +
           kernel_body;
  };
  // The kernel mapping starts at 9:9; a parameter's value on line 10 at column 9 + len("key: ").
  CHECK(check_error(step("        name: shard_stat\n"
                         "        rows: 10\n")) ==
        "t.yaml:9:15: pipeline.steps[0].kernel.name: unknown kernel \"shard_stat\" (did you mean "
        "\"shard_stats\"?)");
  CHECK(check_error(step("        name: x\n")) ==
        "t.yaml:9:15: pipeline.steps[0].kernel.name: unknown kernel \"x\" (the kernels are: aggregate, "
        "command, "
        "evaluate, noop, ridge_solve, select_best, shard_stats, sleep, spin)");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rowz: 10\n")) ==
        "t.yaml:10:15: pipeline.steps[0].kernel.rowz: unknown parameter \"rowz\" for kernel shard_stats "
        "(expected one of: fail_attempts, features, noise, rows, rows_per_gib)");
  CHECK(check_error(step("        name: aggregate\n"
                         "        rows: 10\n")) ==
        "t.yaml:10:15: pipeline.steps[0].kernel.rows: unknown parameter \"rows\" for kernel aggregate "
        "(expected one of: fail_attempts)");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows: abc\n")) ==
        "t.yaml:10:15: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), "
        "got \"abc\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows: 0\n")) ==
        "t.yaml:10:15: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), "
        "got \"0\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows: 1.5\n")) ==
        "t.yaml:10:15: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), "
        "got \"1.5\"");
  // 2^64 - 1 rows overflowed the reduction's stack; anything past 1e12 would run for days.
  CHECK(
      check_error(step("        name: shard_stats\n"
                       "        rows: 18446744073709551615\n")) ==
      "t.yaml:10:15: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), got "
      "\"18446744073709551615\"");
  CHECK(
      check_error(step("        name: evaluate\n"
                       "        rows: 1000000000001\n")) ==
      "t.yaml:10:15: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), got "
      "\"1000000000001\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows_per_gib: -3\n")) ==
        "t.yaml:10:23: pipeline.steps[0].kernel.rows_per_gib: expected a number > 0, got \"-3\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows_per_gib: 1e3x\n")) ==
        "t.yaml:10:23: pipeline.steps[0].kernel.rows_per_gib: expected a number > 0, got \"1e3x\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        features: 1001\n"
                         "        rows: 5\n")) ==
        "t.yaml:10:19: pipeline.steps[0].kernel.features: expected an integer from 1 to 1000, got \"1001\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        noise: -0.1\n"
                         "        rows: 5\n")) ==
        "t.yaml:10:16: pipeline.steps[0].kernel.noise: expected a number >= 0, got \"-0.1\"");
  CHECK(check_error(step("        name: spin\n"
                         "        fail_attempts: -1\n")) ==
        "t.yaml:10:24: pipeline.steps[0].kernel.fail_attempts: expected an integer >= 0, got \"-1\"");
  CHECK(check_error(step("        name: spin\n"
                         "        seconds: soon\n")) ==
        "t.yaml:10:18: pipeline.steps[0].kernel.seconds: expected a duration such as 90s, 2h30m or 500ms, "
        "got \"soon\"");
  CHECK(check_error(step("        name: shard_stats\n"
                         "        rows: 5\n"
                         "        rows_per_gib: 5\n")) ==
        "t.yaml:9:9: pipeline.steps[0].kernel: shard_stats takes rows or rows_per_gib, not both");
  CHECK(
      check_error(step("        name: shard_stats\n"
                       "        features: 5\n")) ==
      "t.yaml:9:9: pipeline.steps[0].kernel: shard_stats needs rows (a row count) or rows_per_gib (rows per "
      "GiB of the task's input)");
  CHECK(check_error(step("        name: command\n")) ==
        "t.yaml:9:9: pipeline.steps[0].kernel: kernel command needs the step's command");
  CHECK(check_error("    - name: a\n"
                    "      command: [nosuchprog-shardflow, x]\n"
                    "      kernel: {name: command}\n") ==
        "t.yaml:9:15: pipeline.steps[0].kernel: command \"nosuchprog-shardflow\" not found on PATH");
  {
    const TempDir dir;
    std::filesystem::create_directories(dir.path);
    const std::string plain = (dir.path / "plain.txt").string();
    std::ofstream(plain) << "not a program\n";
    std::filesystem::permissions(plain,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    CHECK(check_error("    - name: a\n"
                      "      command: [\"" +
                      plain +
                      "\"]\n"
                      "      kernel: {name: command}\n") ==
          "t.yaml:9:15: pipeline.steps[0].kernel: command \"" + plain + "\" is not an executable file");
    // A directory is not a program either.
    CHECK(check_error("    - name: a\n"
                      "      command: [\"" +
                      dir.path.string() +
                      "\"]\n"
                      "      kernel: {name: command}\n") ==
          "t.yaml:9:15: pipeline.steps[0].kernel: command \"" + dir.path.string() +
              "\" is not an executable file");
  }
  CHECK(check_error(step("        name: ridge_solve\n")) ==
        "t.yaml:9:9: pipeline.steps[0].kernel: ridge_solve needs a lambda: give the parameter lambda, or run "
        "the step in a loop over items with a key \"lambda\"");
  CHECK(
      check_error("    - name: a\n"
                  "      parallel_for: {items: [{lambda: 1}, {lr: 2}]}\n"
                  "      kernel: {name: ridge_solve}\n") ==
      "t.yaml:9:15: pipeline.steps[0].kernel: ridge_solve takes lambda from the loop item's key \"lambda\", "
      "but item 1 ({\"lr\":2}) has no such key");
  CHECK(
      check_error("    - name: a\n"
                  "      parallel_for: {items: [{lambda: -1}]}\n"
                  "      kernel: {name: ridge_solve}\n") ==
      "t.yaml:9:15: pipeline.steps[0].kernel: ridge_solve takes lambda from the loop item's key \"lambda\", "
      "but item 0 has -1 there, not a number >= 0");
  // Every {{item.KEY}} of a command must have a value in every item.
  CHECK(
      check_error("    - name: a\n"
                  "      parallel_for: {items: [{lr: 1}, {lrr: 2}]}\n"
                  "      command: [printf, \"%s %s\", \"{{item.index}}\", \"x{{item.lr}}\"]\n"
                  "      kernel: {name: command}\n") ==
      "t.yaml:10:15: pipeline.steps[0].kernel: the command uses {{item.lr}}, but item 1 ({\"lrr\":2}) has no "
      "key \"lr\"");
  CHECK(check_error("    - name: a\n"
                    "      parallel_for: {count: 2}\n"
                    "      command: [printf, \"{{item.lr}}\"]\n"
                    "      kernel: {name: command}\n") ==
        "t.yaml:10:15: pipeline.steps[0].kernel: the command uses {{item.lr}}, but the step's loop has no "
        "items "
        "(a count: loop)");
  CHECK(
      check_error("    - name: a\n"
                  "      command: [printf, \"{{item.lr}}\"]\n"
                  "      kernel: {name: command}\n") ==
      "t.yaml:9:15: pipeline.steps[0].kernel: the command uses {{item.lr}}, but the step's loop has no items "
      "(no loop)");
  // Inside a group, with the group's loop items.
  CHECK(check_error("    - name: g\n"
                    "      parallel_for: {items: [{lambda: 1}, {lambda: 2}]}\n"
                    "      steps:\n"
                    "        - name: ok\n"
                    "          kernel: {name: ridge_solve}\n"
                    "        - name: bad\n"
                    "          kernel: {name: spin, secs: 1}\n") ==
        "t.yaml:13:38: pipeline.steps[0].steps[1].kernel.secs: unknown parameter \"secs\" for kernel spin "
        "(expected one of: fail_attempts, seconds)");
  // Good kernels pass.
  CHECK(check_error("    - name: a\n"
                    "      parallel_for: {count: 2}\n"
                    "      command: [printf, \"{{item}}\"]\n"
                    "      kernel: {name: command, fail_attempts: 1}\n"
                    "    - name: b\n"
                    "      kernel: {name: spin, seconds: 1.5s}\n"
                    "    - name: c\n"
                    "      kernel: {name: evaluate, rows: 10, features: 3, noise: 0, holdout_item: 7}\n"
                    "    - name: d\n"
                    "      kernel: {name: sleep}\n"
                    "    - name: e\n") == "ok");
}

TEST_CASE("Kernels: check_kernel_specs refuses what check_kernels does, but a program missing here",
          "[exec]") {
  const auto specs_error = [](const std::string& steps) -> std::string {
    const Scenario s = load_scenario_text(with_steps(steps), "t.yaml");
    try {
      check_kernel_specs(s);
    } catch (const InputError& e) {
      return e.what();
    }
    return "ok";
  };
  // In a group, after a component without a kernel (sleep): the name is found at any depth.
  const std::string misspelled =
      "    - name: a\n"
      "    - name: g\n"
      "      steps:\n"
      "        - name: b\n"
      "          kernel: {name: shard_stat, rows: 10}\n";
  CHECK(specs_error(misspelled) ==
        "t.yaml:11:26: pipeline.steps[1].steps[0].kernel.name: unknown kernel \"shard_stat\" (did you mean "
        "\"shard_stats\"?)");
  CHECK(specs_error(misspelled) == check_error(misspelled));
  // A parameter: the same message as a local run's.
  const std::string param =
      "    - name: b\n"
      "      kernel: {name: shard_stats, rowz: 10}\n";
  CHECK(specs_error(param) != "ok");
  CHECK(specs_error(param) == check_error(param));
  // A program that does not exist on this machine is a local run's problem only; its {{item.KEY}} is not.
  const std::string program =
      "    - name: a\n"
      "      command: [nosuchprog-shardflow, x]\n"
      "      kernel: {name: command}\n";
  CHECK(specs_error(program) == "ok");
  CHECK(check_error(program) != "ok");
  const std::string placeholder =
      "    - name: a\n"
      "      parallel_for: {count: 2}\n"
      "      command: [sh, \"{{item.x}}\"]\n"
      "      kernel: {name: command}\n";
  CHECK(specs_error(placeholder) != "ok");
  CHECK(specs_error(placeholder) == check_error(placeholder));
}

TEST_CASE("Kernels: the scenarios in scenarios/ pass check_kernels", "[exec]") {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SHARDFLOW_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    const Scenario s = load_scenario_file(entry.path().string());
    CHECK_NOTHROW(check_kernels(s));
  }
}

TEST_CASE("Kernels: item_json, kernel_blocks, kernel_sleeps, kernel_names", "[exec]") {
  const Scenario s = load_scenario_text(with_steps("    - name: a\n"
                                                   "      parallel_for: {items: [{lr: 0.1}, x]}\n"
                                                   "    - name: b\n"
                                                   "      parallel_for: {count: 3}\n"),
                                        "t.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  const auto a = tasks_of(plan, "a");
  const auto b = tasks_of(plan, "b");
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 3);
  CHECK(item_json(plan, a[0]) == "{\"lr\":0.1}");
  CHECK(item_json(plan, a[1]) == "\"x\"");
  CHECK(item_json(plan, b[2]) == "2");

  KernelSpec k;
  CHECK(kernel_sleeps(k));
  CHECK_FALSE(kernel_blocks(k));
  k.name = "sleep";
  CHECK(kernel_sleeps(k));
  k.name = "command";
  CHECK(kernel_blocks(k));
  CHECK_FALSE(kernel_sleeps(k));
  k.name = "spin";
  CHECK_FALSE(kernel_blocks(k));
  CHECK_FALSE(kernel_sleeps(k));
  CHECK(kernel_names() == std::vector<std::string>{"aggregate", "command", "evaluate", "noop", "ridge_solve",
                                                   "select_best", "shard_stats", "sleep", "spin"});
  CHECK(kernel_is_noop(KernelSpec{"noop", {}, {}, {}, {}, {}}));
  for (const char* name : {"aggregate", "ridge_solve", "evaluate", "select_best"})
    CHECK(kernel_uses_upstream(KernelSpec{name, {}, {}, {}, {}, {}}));
  for (const char* name : {"shard_stats", "spin", "noop", "sleep", "command", ""})
    CHECK_FALSE(kernel_uses_upstream(KernelSpec{name, {}, {}, {}, {}, {}}));
  CHECK(!kernel_is_noop(KernelSpec{"noop", {{"fail_attempts", "1"}}, {}, {}, {}, {}}));
}

TEST_CASE("Kernels: command fills in placeholders, writes its output to files, reports failures", "[exec]") {
  const Scenario s = load_scenario_text(
      with_steps(
          "    - name: p\n"
          "      parallel_for: {items: [{lr: 0.1, name: x}, {lr: 0.01, name: \"y z\", n: [1, 2]}]}\n"
          "      command: [printf, \"%s|%s|%s|%s\", \"{{item.lr}}\", \"{{item.index}}\", \"{{item.name}}\", "
          "\"{{item}}\"]\n"
          "      kernel: {name: command}\n"
          "    - name: env\n"
          "      parallel_for: {items: [{lr: 0.1}]}\n"
          "      command: [sh, -c, 'printf %s \"$SHARDFLOW_ITEM/$SHARDFLOW_ATTEMPT\"; echo warn >&2']\n"
          "      kernel: {name: command}\n"
          "    - name: count\n"
          "      parallel_for: {count: 3}\n"
          "      command: [printf, \"{{item}}-{{item.index}}-{{other}}\"]\n"
          "      kernel: {name: command}\n"
          "    - name: nokey\n"
          "      parallel_for: {items: [{lr: 0.1, name: x}]}\n"
          "      command: [printf, \"{{item.nope}}\"]\n"
          "      kernel: {name: command}\n"
          "    - name: countkey\n"
          "      parallel_for: {count: 1}\n"
          "      command: [printf, \"{{item.lr}}\"]\n"
          "      kernel: {name: command}\n"
          "    - name: fails\n"
          "      command: [\"false\"]\n"
          "      kernel: {name: command}\n"
          "    - name: boom\n"
          "      command: [sh, -c, \"echo starting; echo boom >&2; exit 3\"]\n"
          "      kernel: {name: command}\n"
          "    - name: utf8\n"  // 601 bytes of UTF-8: the last 500 start inside a character
          "      command: [sh, -c, 'i=0; while [ $i -lt 300 ]; do printf \"\\303\\251\" >&2; i=$((i+1)); "
          "done; "
          "printf x >&2; exit 2']\n"
          "      kernel: {name: command}\n"
          "    - name: latin1\n"
          "      command: [sh, -c, 'printf \"bad\\377\\376end\\n\" >&2; exit 4']\n"
          "      kernel: {name: command}\n"
          "    - name: signal\n"
          "      command: [sh, -c, \"kill -9 $$\"]\n"
          "      kernel: {name: command}\n"
          "    - name: long\n"
          "      command: [sleep, \"30\"]\n"
          "      kernel: {name: command}\n"),
      "t.yaml");
  // check_kernels rejects nokey and countkey (see above); run_kernel must still fail them cleanly.
  const Plan plan = Plan::unroll(s.pipeline);
  const TempDir dir;
  const auto run = [&](const std::string& step, std::size_t i, std::uint32_t attempt = 0) {
    KernelContext c = context(plan, tasks_of(plan, step).at(i), 1);
    c.attempt = attempt;
    c.out_dir = dir.path;
    return run_kernel(kernel_of(plan, c.task), c);
  };

  const auto r0 = as<CommandResult>(run("p", 0));
  CHECK(r0->exit_status == 0);
  CHECK(r0->stdout_path == dir.path / "p[0].attempt0.stdout");
  CHECK(r0->stderr_path == dir.path / "p[0].attempt0.stderr");
  CHECK(read_file(r0->stdout_path) == "0.1|0|x|{\"lr\":0.1,\"name\":\"x\"}");
  CHECK(read_file(r0->stderr_path).empty());
  CHECK(r0->describe() == "exit status 0, output in " + (dir.path / "p[0].attempt0.stdout").string());
  const auto r1 = as<CommandResult>(run("p", 1, 2));
  CHECK(r1->stdout_path == dir.path / "p[1].attempt2.stdout");
  CHECK(read_file(r1->stdout_path) == "0.01|1|y z|{\"lr\":0.01,\"name\":\"y z\",\"n\":[1,2]}");

  const auto e = as<CommandResult>(run("env", 0, 4));
  CHECK(read_file(e->stdout_path) == "{\"lr\":0.1}/4");
  CHECK(read_file(e->stderr_path) == "warn\n");

  CHECK(read_file(as<CommandResult>(run("count", 2))->stdout_path) == "2-2-{{other}}");

  CHECK_THROWS_WITH(
      run("nokey", 0),
      "{{item.nope}}: unknown item key \"nope\" (the item {\"lr\":0.1,\"name\":\"x\"} has: lr, name)");
  CHECK_THROWS_WITH(run("countkey", 0), "{{item.lr}}: the loop item 0 is not a mapping");
  CHECK_THROWS_WITH(run("fails", 0), "command exited with status 1");
  CHECK_THROWS_WITH(run("boom", 0), "command exited with status 3; stderr: boom");
  CHECK(read_file(dir.path / "boom.attempt0.stdout") == "starting\n");
  // The stderr tail in the message is UTF-8 (it goes into trace.json): cut where a character starts, a byte
  // that starts none shown as U+FFFD.
  std::string e_acute;
  for (int i = 0; i < 249; ++i) e_acute += "\xC3\xA9";
  CHECK_THROWS_WITH(run("utf8", 0), "command exited with status 2; stderr: " + e_acute + "x");
  CHECK_THROWS_WITH(run("latin1", 0),
                    "command exited with status 4; stderr: bad\xEF\xBF\xBD\xEF\xBF\xBD"
                    "end");
  CHECK_THROWS_WITH(run("signal", 0), "command killed by signal 9");

  // Cancelled: SIGTERM at once.
  std::atomic<bool> stop{true};
  KernelContext c = context(plan, tasks_of(plan, "long").at(0), 1);
  c.out_dir = dir.path;
  c.stop = &stop;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_kernel(kernel_of(plan, c.task), c), "command killed by signal 15 (cancelled)");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("Kernels: spin keeps a core busy for the attempt's run time, and stops when cancelled", "[exec]") {
  KernelSpec k;
  k.name = "spin";
  KernelContext c;
  c.run_seconds = 0;
  CHECK(run_kernel(k, c) == nullptr);  // calibrates

  c.run_seconds = 0.2;
  auto t0 = std::chrono::steady_clock::now();
  CHECK(run_kernel(k, c) == nullptr);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(dt >= 0.19);
  CHECK(dt < 0.5);

  k.params = {{"seconds", "100ms"}};
  t0 = std::chrono::steady_clock::now();
  CHECK(run_kernel(k, c) == nullptr);
  dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(dt >= 0.095);
  CHECK(dt < 0.4);

  std::atomic<bool> stop{true};
  c.stop = &stop;
  c.run_seconds = 30;
  k.params.clear();
  t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_kernel(k, c), "cancelled");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
}

TEST_CASE("Kernels: fail_attempts fails the first attempts", "[exec]") {
  KernelSpec k;
  k.name = "shard_stats";
  k.params = {{"rows", "10"}, {"fail_attempts", "2"}};
  KernelContext c;
  c.attempt = 0;
  CHECK_THROWS_WITH(run_kernel(k, c), "injected failure: attempt 0 of fail_attempts 2");
  c.attempt = 1;
  CHECK_THROWS_WITH(run_kernel(k, c), "injected failure: attempt 1 of fail_attempts 2");
  c.attempt = 2;
  CHECK(as<ShardStats>(run_kernel(k, c))->rows == 10);

  k.name = "sleep";
  k.params = {{"fail_attempts", "1"}};
  c.attempt = 0;
  CHECK_THROWS_WITH(run_kernel(k, c), "injected failure: attempt 0 of fail_attempts 1");
  c.attempt = 1;
  c.run_seconds = 0.02;
  CHECK(run_kernel(k, c) == nullptr);
}

TEST_CASE(
    "Kernels: aggregate and ridge_solve with no task before them that makes shard statistics are "
    "refused before anything runs",
    "[exec]") {
  const auto upstream_error = [](const std::string& steps) {
    const Scenario s = load_scenario_text(with_steps(steps), "t.yaml");
    try {
      check_kernel_upstream(Plan::unroll(s.pipeline));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("ok");
  };
  const std::string shards = "    - {name: shards, parallel_for: {count: 3}, kernel: {name: noop}}\n";
  CHECK(upstream_error(shards + "    - {name: agg, after: [shards], kernel: {name: aggregate}}\n") ==
        "t.yaml:8:44: pipeline.steps[1].kernel: aggregate sums the shard statistics of the tasks before it, "
        "and none makes any: the steps before it (shards) run no shard_stats or aggregate kernel");
  CHECK(
      upstream_error("    - {name: solve, kernel: {name: ridge_solve, lambda: 1}}\n") ==
      "t.yaml:7:29: pipeline.steps[0].kernel: ridge_solve sums the shard statistics of the tasks before it, "
      "and none makes any: no step runs before it");
  // Through a group (its join stands for the steps inside) and a tree fan-in (its levels aggregate too).
  CHECK(
      upstream_error("    - name: g\n"
                     "      steps:\n"
                     "        - {name: s, parallel_for: {count: 4}, kernel: {name: shard_stats, rows: 10}}\n"
                     "    - {name: agg, after: [g], kernel: {name: aggregate}}\n"
                     "    - {name: solve, after: [agg], kernel: {name: ridge_solve, lambda: 1}}\n") == "ok");
  CHECK(upstream_error("    - {name: s, parallel_for: {count: 8}, kernel: {name: shard_stats, rows: 10}}\n"
                       "    - {name: agg, after: [s], fan_in: {arity: 2}, kernel: {name: aggregate}}\n") ==
        "ok");
}

TEST_CASE(
    "Kernels: kernel_problems gives every step's kernel problem, the upstream ones too, and one message "
    "a mistake",
    "[exec]") {
  const auto problems = &kernel_problems_text;
  // A bad parameter, an aggregate with nothing before it that makes statistics, an unknown name; the
  // step after the unknown kernel is not blamed for it (the name may be a misspelled shard_stats).
  CHECK(problems("    - {name: shards, parallel_for: {count: 3}, kernel: {name: spin, secondz: 1}}\n"
                 "    - {name: agg, after: [shards], kernel: {name: aggregate}}\n"
                 "    - {name: solve, after: [agg], kernel: {name: ridge_solv, lambda: 1}}\n"
                 "    - {name: fit, after: [solve], kernel: {name: ridge_solve, lambda: 1}}\n") ==
        "t.yaml:7:78: pipeline.steps[0].kernel.secondz: unknown parameter \"secondz\" for kernel spin "
        "(expected one of: fail_attempts, seconds)\n"
        "t.yaml:9:50: pipeline.steps[2].kernel.name: unknown kernel \"ridge_solv\" (did you mean "
        "\"ridge_solve\"?)\n"
        "t.yaml:8:44: pipeline.steps[1].kernel: aggregate sums the shard statistics of the tasks before it, "
        "and none makes any: the steps before it (shards) run no shard_stats or aggregate kernel\n");
  CHECK(problems("    - {name: shards, parallel_for: {count: 3}, kernel: {name: shard_stats, rows: 10}}\n"
                 "    - {name: agg, after: [shards], kernel: {name: aggregate}}\n") == "");
}

TEST_CASE(
    "Kernels: evaluate and select_best with nothing before them to read and widths that disagree are "
    "refused before anything runs",
    "[exec]") {
  const auto problems = &kernel_problems_text;
  const std::string shards =
      "    - {name: a, parallel_for: {count: 2}, kernel: {name: shard_stats, rows: 10}}\n";
  // evaluate with statistics but no model before it; select_best with a model but no evaluation.
  CHECK(problems(shards + "    - {name: e, after: [a], kernel: {name: evaluate}}\n" +
                 "    - {name: s, after: [a], kernel: {name: ridge_solve, lambda: 1}}\n" +
                 "    - {name: b, after: [s], kernel: {name: select_best}}\n") ==
        "t.yaml:8:37: pipeline.steps[1].kernel: evaluate scores the ridge models of the tasks before it, and "
        "none makes any: the steps before it (a) run no ridge_solve kernel\n"
        "t.yaml:10:37: pipeline.steps[3].kernel: select_best picks the best of the evaluations of the tasks "
        "before it, and none makes any: the steps before it (s) run no evaluate kernel\n");
  // Statistics of 8 (the default) and 24 features summed; models of 8 and 24 weights scored.
  CHECK(
      problems(
          shards +
          "    - {name: w, parallel_for: {count: 2}, kernel: {name: shard_stats, rows: 10, features: 24}}\n"
          "    - {name: agg, after: [a, w], kernel: {name: aggregate}}\n"
          "    - {name: s8, after: [a], kernel: {name: ridge_solve, lambda: 1}}\n"
          "    - {name: s24, after: [w], kernel: {name: ridge_solve, lambda: 1}}\n"
          "    - {name: e, after: [s8, s24], kernel: {name: evaluate}}\n") ==
      "t.yaml:9:42: pipeline.steps[2].kernel: aggregate sums the shard statistics of the tasks before it, "
      "and they differ in width: step a's have 8 features, step w's 24: give the shard_stats steps one "
      "features value\n"
      "t.yaml:12:43: pipeline.steps[5].kernel: evaluate scores the ridge models of the tasks before it, and "
      "they differ in width: step s8's have 8 weights, step s24's 24 (the features of the shard statistics "
      "before them)\n");
  // evaluate's own features against its models' (through an aggregate), at the parameter.
  const std::string chain =
      "    - {name: w, parallel_for: {count: 2}, kernel: {name: shard_stats, rows: 10, "
      "features: 24}}\n"
      "    - {name: agg, after: [w], kernel: {name: aggregate}}\n"
      "    - {name: s, after: [agg], kernel: {name: ridge_solve, lambda: 1}}\n";
  CHECK(
      problems(chain + "    - {name: e, after: [s], kernel: {name: evaluate, features: 8}}\n") ==
      "t.yaml:10:64: pipeline.steps[3].kernel.features: features is 8, but the ridge models evaluate scores "
      "(step s) have 24 weights, from the shard statistics before them: leave features out to take theirs, "
      "or make the shard_stats steps' features 8\n");
  CHECK(problems(chain + "    - {name: e, after: [s], kernel: {name: evaluate, features: 24}}\n" +
                 "    - {name: b, after: [e, s], kernel: {name: select_best}}\n") == "");
  // A bad features value has its own message, and the width is not guessed from it.
  CHECK(problems(chain + "    - {name: e, after: [s], kernel: {name: evaluate, features: 0}}\n") ==
        "t.yaml:10:64: pipeline.steps[3].kernel.features: expected an integer from 1 to 1000, got \"0\"\n");
  // The first problem alone is what run --backend local reports.
  const Scenario s = load_scenario_text(
      with_steps(chain + "    - {name: e, after: [s], kernel: {name: evaluate, features: 8}}\n"), "t.yaml");
  CHECK_THROWS_WITH(check_kernel_upstream(Plan::unroll(s.pipeline)),
                    Catch::Contains("features is 8, but the ridge models evaluate scores (step s) have 24"));
}

TEST_CASE("command kernel: its log names, and which names are such logs", "[exec]") {
  CHECK(exec::is_command_log_name("work[0].attempt0.stdout"));
  CHECK(exec::is_command_log_name("grp-a[3].attempt12.stderr"));
  CHECK_FALSE(exec::is_command_log_name("notes.txt"));
  CHECK_FALSE(exec::is_command_log_name("work[0].attempt.stdout"));  // no number
  CHECK_FALSE(exec::is_command_log_name(".attempt0.stdout"));        // no task name
  CHECK_FALSE(exec::is_command_log_name("work[0].attempt0.stdout.bak"));
  CHECK_FALSE(exec::is_command_log_name("work[0].attempt0x.stderr"));
}
