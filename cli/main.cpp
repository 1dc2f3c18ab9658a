// The `shardflow` command: CLI11 wiring only; the work lives in the layers.
#include <cstdio>
#include <cstring>
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

  // Building every subcommand's options is most of what `main` costs before the work starts, so only
  // the named subcommand is built when that cannot change what CLI11 does: argv[1] names it, no later
  // word names another (CLI11 would read it as that subcommand) and no help is asked for. Otherwise
  // (no argument, an option first, an unknown command, --help) all of them are, as before.
  static constexpr const char* kCommands[] = {"validate", "explain", "simulate",  "run",    "sweep",
                                              "merge",    "compare", "calibrate", "report", "k8s"};
  const auto is_command = [](const char* word) {
    for (const char* name : kCommands)
      if (std::strcmp(word, name) == 0) return true;
    return false;
  };
  const char* only = nullptr;
  if (argc >= 2 && is_command(argv[1])) {
    only = argv[1];
    for (int i = 2; i < argc && only != nullptr; ++i)
      if (is_command(argv[i]) || std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0)
        only = nullptr;
  }
  const auto wanted = [&](const char* name) { return only == nullptr || std::strcmp(only, name) == 0; };

  std::vector<std::string> validate_files;
  CLI::App* validate = nullptr;
  cli::LoadArgs validate_load, explain_load;
  if (wanted("validate")) {
    validate =
        app.add_subcommand("validate", "Check scenario files; report every problem with file:line:col");
    validate->add_option("files", validate_files, "Scenario files (YAML)")
        ->required()
        ->check(CLI::ExistingFile);
  }

  std::string explain_file;
  bool explain_json = false;
  CLI::App* explain = nullptr;
  if (wanted("explain")) {
    explain = app.add_subcommand(
        "explain",
        "Show what a scenario unrolls to: steps, task counts, fan-out widths, critical path, total work");
    explain->add_option("file", explain_file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
    explain->add_flag("--json", explain_json, "Print JSON instead of a table");
  }
  if (validate != nullptr) cli::add_load_options(validate, validate_load);
  if (explain != nullptr) cli::add_load_options(explain, explain_load);

  cli::SimulateArgs sim_args;
  CLI::App* simulate = wanted("simulate") ? cli::add_simulate_command(app, sim_args) : nullptr;
  cli::SimulateArgs run_args;
  CLI::App* run = wanted("run") ? cli::add_run_command(app, run_args) : nullptr;
  cli::SweepArgs sweep_args;
  CLI::App* sweep = wanted("sweep") ? cli::add_sweep_command(app, sweep_args) : nullptr;
  cli::MergeArgs merge_args;
  CLI::App* merge = wanted("merge") ? cli::add_merge_command(app, merge_args) : nullptr;
  cli::CompareArgs compare_args;
  CLI::App* compare = wanted("compare") ? cli::add_compare_command(app, compare_args) : nullptr;
  cli::CalibrateArgs calibrate_args;
  CLI::App* calibrate = wanted("calibrate") ? cli::add_calibrate_command(app, calibrate_args) : nullptr;
  cli::ReportArgs report_args;
  CLI::App* report = wanted("report") ? cli::add_report_command(app, report_args) : nullptr;
  cli::K8sArgs k8s_args;
  CLI::App* k8s = wanted("k8s") ? cli::add_k8s_command(app, k8s_args) : nullptr;

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
  const auto parsed = [](const CLI::App* cmd) { return cmd != nullptr && cmd->parsed(); };
  try {
    if (parsed(validate)) return cli::validate(validate_files, validate_load);
    if (parsed(explain)) return cli::explain(explain_file, explain_json, explain_load);
    if (parsed(simulate)) return cli::run_simulate(sim_args);
    if (parsed(run)) return cli::run_simulate(run_args);
    if (parsed(sweep)) return cli::run_sweep_command(sweep_args);
    if (parsed(merge)) return cli::run_merge_command(merge_args);
    if (parsed(compare)) return cli::run_compare_command(compare_args);
    if (parsed(calibrate)) return cli::run_calibrate_command(calibrate_args);
    if (parsed(report)) return cli::run_report_command(report_args);
    if (parsed(k8s)) return cli::run_k8s_command(*k8s, k8s_args);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardflow: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
