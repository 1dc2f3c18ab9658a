// The `shardflow` command: CLI11 wiring only; the work lives in the layers.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/scenario.hpp>

#include "commands.hpp"

namespace shardflow::cli {
namespace {

std::string count(std::uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

int validate(const std::vector<std::string>& files, const LoadArgs& args) {
  const LoadOptions options = load_options(args);
  for (const std::string& f : files) {
    const Scenario s = load_scenario_file(f, options);
    const Plan plan = Plan::unroll(s.pipeline);
    int nodes = 0;
    for (const NodePool& p : s.cluster.node_pools) nodes += p.count;
    std::cout << f << ": ok (" << count(plan.task_count(), "task") << " from "
              << count(plan.steps().size(), "component step") << "; "
              << count(static_cast<std::uint64_t>(nodes), "node") << " in "
              << count(s.cluster.node_pools.size(), "pool") << ")\n";
  }
  return 0;
}

int explain(const std::string& file, bool json, const LoadArgs& args) {
  // Loaded without the limit: a pipeline over it is counted from the pipeline model, never unrolled.
  LoadOptions options = load_options(args);
  options.max_tasks = std::numeric_limits<std::uint64_t>::max();
  const Scenario s = load_scenario_file(file, options);
  const PlanSummary summary = Plan::count_tasks(s.pipeline) > args.max_tasks
                                  ? summarize_pipeline(s.pipeline)
                                  : summarize(Plan::unroll(s.pipeline), s.pipeline);
  const double cpu_bound = cpu_capacity_bound_s(summary, s.cluster);
  if (json)
    write_summary_json(std::cout, summary, cpu_bound);
  else
    print_summary(std::cout, summary, cpu_bound);
  return 0;
}

}  // namespace
}  // namespace shardflow::cli

int main(int argc, char** argv) {
  using namespace shardflow;
  CLI::App app{
      "shardflow: plan capacity for, benchmark and run fan-out/fan-in ML pipelines (Kubeflow ParallelFor, "
      "sweeps) on Kubernetes.\n\nA scenario file (YAML, see docs/scenario-format.md) describes the pipeline "
      "and "
      "the cluster.\nStart with:  shardflow explain scenarios/shard-preprocess-train.yaml\n"};
  app.set_version_flag("--version", "shardflow " SHARDFLOW_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success, 1 the run failed, 2 bad input (the message names file:line:column and "
      "field).");

  std::vector<std::string> validate_files;
  auto* validate =
      app.add_subcommand("validate", "Check scenario files; report every problem with file:line:col");
  validate->add_option("files", validate_files, "Scenario files (YAML)")
      ->required()
      ->check(CLI::ExistingFile);

  std::string explain_file;
  bool explain_json = false;
  auto* explain = app.add_subcommand(
      "explain",
      "Show what a scenario unrolls to: steps, task counts, fan-out widths, critical path, total work");
  explain->add_option("file", explain_file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  explain->add_flag("--json", explain_json, "Print JSON instead of a table");
  cli::LoadArgs validate_load, explain_load;
  cli::add_load_options(validate, validate_load);
  cli::add_load_options(explain, explain_load);

  cli::SimulateArgs sim_args;
  auto* simulate = cli::add_simulate_command(app, sim_args);
  cli::SimulateArgs run_args;
  auto* run = cli::add_run_command(app, run_args);
  cli::SweepArgs sweep_args;
  auto* sweep = cli::add_sweep_command(app, sweep_args);
  cli::MergeArgs merge_args;
  auto* merge = cli::add_merge_command(app, merge_args);
  cli::CompareArgs compare_args;
  auto* compare = cli::add_compare_command(app, compare_args);
  cli::CalibrateArgs calibrate_args;
  auto* calibrate = cli::add_calibrate_command(app, calibrate_args);
  cli::ReportArgs report_args;
  auto* report = cli::add_report_command(app, report_args);
  cli::K8sArgs k8s_args;
  auto* k8s = cli::add_k8s_command(app, k8s_args);

  // CLI11 reads an unknown first word as a stray argument ("A subcommand is required"); name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    const auto subs = app.get_subcommands([](CLI::App*) { return true; });
    for (std::size_t i = 0; i < subs.size(); ++i) {
      known = known || subs[i]->check_name(argv[1]);
      names += (i == 0 ? "" : i + 1 == subs.size() ? " and " : ", ") + subs[i]->get_name();
    }
    if (!known) {
      std::cerr << "shardflow: unknown command \"" << argv[1] << "\"; the commands are " << names
                << " (shardflow --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (validate->parsed()) return cli::validate(validate_files, validate_load);
    if (explain->parsed()) return cli::explain(explain_file, explain_json, explain_load);
    if (simulate->parsed()) return cli::run_simulate(sim_args);
    if (run->parsed()) return cli::run_simulate(run_args);
    if (sweep->parsed()) return cli::run_sweep_command(sweep_args);
    if (merge->parsed()) return cli::run_merge_command(merge_args);
    if (compare->parsed()) return cli::run_compare_command(compare_args);
    if (calibrate->parsed()) return cli::run_calibrate_command(calibrate_args);
    if (report->parsed()) return cli::run_report_command(report_args);
    if (k8s->parsed()) return cli::run_k8s_command(*k8s, k8s_args);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardflow: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
