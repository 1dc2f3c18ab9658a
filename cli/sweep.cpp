#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/planner/sweep.hpp>

#include "commands.hpp"

namespace shardflow::cli {

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Plan capacity: simulate every combination of some scenario fields, each several times, and find the "
      "cheapest configuration that meets a deadline");
  cmd->add_option("file", args.file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--vary", args.vary,
                  "A field to vary and its values, as PATH=V1,V2,... (repeatable; every combination is run). "
                  "PATH as for --set")
      ->allow_extra_args(false)
      ->type_name("PATH=V1,V2,...")
      ->required();
  add_load_options(cmd, args.load);
  cmd->add_option("-r,--replications", args.replications,
                  "Runs per configuration, with seeds seed, seed+1, ... (the same for every configuration)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--deadline", args.deadline_text, "Makespan to meet, as a duration (90m, 2h30m)");
  cmd->add_option("--quantile", args.quantile,
                  "The makespan percentile that must meet the deadline (default 95: 19 runs in 20)")
      ->check(CLI::Range(1.0, 100.0));
  cmd->add_option("--seed", args.seed, "First seed (default: the scenario's `seed`)");
  cmd->add_option("--out", args.out_dir,
                  "Directory for sweep.json, sweep.csv and report.html (default: out/<scenario name>)");
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->footer(
      "Example:\n"
      "  shardflow sweep scenarios/shard-preprocess-train.yaml --vary cluster.node_pools[cpu].count=10,20,40 "
      "\\\n"
      "      --vary pipeline.steps[preprocess].parallel_for.parallelism=25,50,100 -r 20 --deadline 2h\n"
      "Runs go in parallel on every core. Replication k of every configuration uses the same seed, so\n"
      "configurations are compared on the same random durations (common random numbers).\n"
      "report.html plots each configuration's cost against its makespan quantile, with the Pareto front,\n"
      "the deadline and the recommendation, above a sortable table of the configurations.");
  return cmd;
}

int run_sweep_command(const SweepArgs& args) {
  planner::SweepSpec spec;
  for (const std::string& v : args.vary) spec.dimensions.push_back(planner::parse_dimension(v));
  const LoadOptions load = load_options(args.load);
  spec.overlays = load.overlays;
  spec.sets = load.sets;
  spec.cluster = load.cluster;
  spec.replications = args.replications;
  spec.quantile = args.quantile;
  if (args.seed) spec.base_seed = *args.seed;
  if (!args.deadline_text.empty()) {
    try {
      const Duration d = parse_duration(args.deadline_text);
      if (d <= Duration::zero()) throw std::invalid_argument("must be > 0, got " + args.deadline_text);
      spec.deadline_s = d.seconds();
    } catch (const std::invalid_argument& e) {
      throw InputError({}, "--deadline", e.what());
    }
  }
  const bool show_progress = !args.quiet && isatty(STDERR_FILENO) != 0;
  std::function<void(double)> progress;
  if (show_progress)
    progress = [](double done) { std::fprintf(stderr, "\rsweeping... %3.0f%%", done * 100); };
  // The output directory first (it needs the scenario's name): a bad --out is found before the sweep.
  const std::filesystem::path dir = make_out_dir(args.out_dir, load_scenario_file(args.file, load).name);
  const planner::SweepResult r = planner::run_sweep(args.file, spec, progress);
  if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");

  write_file(dir / "sweep.json", [&](std::ostream& o) { planner::write_sweep_json(o, r); });
  write_file(dir / "sweep.csv", [&](std::ostream& o) { planner::write_sweep_csv(o, r); });
  write_sweep_report_file(dir, r);
  if (!args.quiet) {
    planner::print_sweep(std::cout, r);
    std::cout << "wrote " << dir.string() << "/{sweep.json,sweep.csv,report.html}\n";
  }
  return 0;
}

}  // namespace shardflow::cli
