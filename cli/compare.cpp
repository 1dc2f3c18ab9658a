#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/machine.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/exec/kernels.hpp>
#include <shardflow/exec/local_backend.hpp>
#include <shardflow/planner/compare.hpp>

#include "commands.hpp"

namespace shardflow::cli {

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args) {
  auto* cmd = app.add_subcommand("compare",
                                 "Compare strategies: run named variants of a scenario side by side on the "
                                 "same random draws and say how "
                                 "each differs from the first (the baseline) in makespan and cost, with "
                                 "paired 95% confidence intervals");
  cmd->add_option("file", args.file, kInputFileHelp)->required()->transform(input_file_check());
  cmd->add_option(
         "--variant", args.variant,
         "A variant, as NAME:PATH=VALUE[,PATH=VALUE...] (repeatable, in order; the first is the "
         "baseline). PATH as for --set, each field once per variant (in any spelling: [cpu] or [0]); "
         "a variant's fields override the common --set. NAME alone is the scenario as it is")
      ->allow_extra_args(false)
      ->type_name("NAME:PATH=V,...");
  cmd->add_option("--variants", args.variants_file,
                  "A YAML file with `variants:`, a list of {name, set: {PATH: VALUE}, overlay: FILE}; its "
                  "variants come after any --variant ones")
      ->type_name("FILE");
  add_load_options(cmd, args.load);
  cmd->add_option("-r,--replications", args.replications,
                  "Runs per variant, with seeds seed, seed+1, ... (the same for every variant; default 10)")
      ->check(whole_number(1, 100000));
  cmd->add_option(
      "--deadline", args.deadline_text,
      "Makespan to meet, as a duration (90m, 2h30m): the cheapest variant that meets it is marked");
  cmd->add_option("--quantile", args.quantile,
                  "The makespan percentile that must meet the deadline, 1 to 100 (default 95)")
      ->check(finite_number(1, 100));
  cmd->add_option("--seed", args.seed, "First seed, 0 to 2^64-1 (default: the scenario's `seed`)")
      ->check(whole_number(0))
      ->type_name("SEED");
  cmd->add_option(
         "--backend", args.backend,
         "sim (default) or local: also run each variant for real on this machine (one run at a time, "
         "--measure-runs of them) and show the measured makespan next to the simulator's prediction")
      ->check(CLI::IsMember({"sim", "local"}));
  cmd->add_option("--measure-runs", args.measure_runs,
                  "local: real runs per variant (seeds seed, seed+1, ...; default 1)")
      ->check(whole_number(1, 1000));
  cmd->add_option("--cores", args.cores,
                  "local: CPU capacity in cores (default: the CPUs this process may use)")
      ->check(whole_number(1, 4096));
  cmd->add_option("--time-scale", args.time_scale,
                  "local: model time to real time for `sleep` and `spin` kernels (as for `run`; default 1)")
      ->check(finite_number(1e-6, 1000));
  cmd->add_option(
      "--out", args.out_dir,
      "Directory for compare.json, compare.csv and report.html (default: out/<scenario name>/compare)");
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->footer(
      "Examples:\n"
      "  shardflow compare scenarios/shard-preprocess-train.yaml -r 30 \\\n"
      "      --variant baseline \\\n"
      "      --variant 'wide:pipeline.steps[preprocess].parallel_for.parallelism=100' \\\n"
      "      --variant 'more-nodes:cluster.node_pools[cpu].count=40,pipeline.steps[preprocess].parallel_for."
      "parallelism=100'\n"
      "  shardflow compare scenarios/local/fanout.yaml --variants variants.yaml --backend local --cores 2\n"
      "A variants file:\n"
      "  variants:\n"
      "    - name: baseline\n"
      "    - name: wide\n"
      "      set:\n"
      "        pipeline.steps[preprocess].parallel_for.parallelism: 100\n"
      "      overlay: spot.yaml              # optional, relative to the variants file\n"
      "Replication k of every variant uses seed+k, so the variants see the same random durations (common\n"
      "random numbers) and each difference to the baseline is taken per seed: its 95% interval is much\n"
      "narrower than the two means' intervals. Column significant: yes when that interval excludes 0.\n"
      "Runs go in parallel on every core; the output is the same for any number of cores.\n"
      "report.html draws each variant's mean makespan and cost with their intervals, and the paired\n"
      "differences (docs/compare-format.md describes compare.json).");
  return cmd;
}

namespace {

// The OUT/commands/VARIANT/seedN directories that are not among `written` (this comparison's runs).
std::vector<std::filesystem::path> earlier_run_dirs(
    const std::filesystem::path& commands,
    const std::vector<std::pair<std::filesystem::path, std::set<std::string>>>& written) {
  std::set<std::filesystem::path> ours;
  for (const auto& [d, logs] : written) ours.insert(d.lexically_normal());
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& variant : std::filesystem::directory_iterator(commands, ec)) {
    if (!variant.is_directory(ec) || variant.is_symlink(ec)) continue;
    std::error_code ec2;
    for (const auto& run : std::filesystem::directory_iterator(variant.path(), ec2)) {
      const std::string name = run.path().filename().string();
      if (run.is_directory(ec2) && !run.is_symlink(ec2) && name.size() > 4 && name.starts_with("seed") &&
          name.find_first_not_of("0123456789", 4) == std::string::npos &&
          !ours.count(run.path().lexically_normal()))
        out.push_back(run.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int run_compare_command(const CompareArgs& args) {
  planner::CompareSpec spec;
  for (const std::string& v : args.variant) spec.variants.push_back(planner::parse_variant(v));
  if (!args.variants_file.empty())
    for (planner::Variant& v : planner::read_variants_file(args.variants_file))
      spec.variants.push_back(std::move(v));
  const LoadOptions load = load_options(args.load);
  spec.overlays = load.overlays;
  spec.sets = load.sets;
  spec.cluster = load.cluster;
  spec.params = load.params;
  spec.max_tasks = load.max_tasks;
  spec.replications = args.replications;
  spec.quantile = args.quantile;
  if (args.seed) spec.base_seed = *args.seed;
  if (!args.deadline_text.empty()) spec.deadline_s = deadline_flag_seconds(args.deadline_text);
  if (args.backend != "local") {
    const char* flag = args.cores != 0          ? "--cores"
                       : args.time_scale != 1   ? "--time-scale"
                       : args.measure_runs != 1 ? "--measure-runs"
                                                : nullptr;
    if (flag != nullptr) throw InputError({std::string(flag), 0, 0}, "", "applies to --backend local only");
  }
  if (spec.variants.size() < 2)
    throw InputError(
        {"--variant", 0, 0}, "",
        "give at least two variants (the first is the baseline the others are compared with); got " +
            std::to_string(spec.variants.size()));
  const bool show_progress = !args.quiet && isatty(STDERR_FILENO) != 0;
  double done = 0;  // the share of runs finished, for an interrupted comparison's message
  const std::function<void(double)> progress = runs_progress("comparing", show_progress, done);
  const std::string yaml = read_scenario_file(args.file);
  // The output directory first (it needs the scenario's name): a bad --out is found before the runs.
  const std::string name = planner::load_variant(yaml, args.file, spec, 0).name;
  std::error_code ec;
  const bool made_dir = !std::filesystem::exists(out_dir_path(args.out_dir, name, "compare"), ec);
  const std::filesystem::path dir = make_out_dir(args.out_dir, name, "compare");
  {
    std::vector<std::string> inputs = load_inputs(args.file, args.load);
    if (!args.variants_file.empty()) inputs.push_back(args.variants_file);
    for (const planner::Variant& v : spec.variants)
      for (const ScenarioFile& o : v.overlays) inputs.push_back(o.path);
    refuse_outputs_over_inputs(dir, {"compare.json", "compare.csv", "report.html"}, inputs);
  }
  // Ctrl-C or SIGTERM: the runs stop, and the comparison says so (a signal ended it with nothing said).
  const Interruptible guard;
  spec.stop = guard.flag();
  planner::CompareResult r;
  try {
    r = planner::run_compare_text(yaml, args.file, spec, progress);
  } catch (const planner::Interrupted&) {
    if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");
    return interrupted_runs("compare", dir, made_dir, "compare.json", done, guard);
  }
  if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");
  // The local runs' command logs: each run's directory and the logs it made.
  std::vector<std::pair<std::filesystem::path, std::set<std::string>>> command_logs;
  const auto began = std::filesystem::file_time_type::clock::now();
  if (args.backend == "local") {
    exec::LocalOptions lo;
    lo.cores = args.cores;
    lo.time_scale = args.time_scale;
    lo.out_dir = dir / "commands";
    const std::unique_ptr<Backend> local = exec::make_local_backend(lo);
    // The prediction: the same variant on a model of this machine (as `run --backend local` predicts).
    const std::vector<std::string> predict_sets = {
        "cluster.node_pools[local].cpu=" + std::to_string(args.cores > 0 ? args.cores : machine_cores())};
    std::function<void(const std::string&)> status;
    if (!args.quiet) status = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
    // Each variant's each run keeps its commands' logs: OUT/commands/VARIANT/seedN (they had one
    // directory, where every run's logs replaced the one before's).
    const auto files_dir = [&](std::size_t v, std::uint64_t seed) {
      return (lo.out_dir / r.variants[v].name / ("seed" + std::to_string(seed))).string();
    };
    const auto measured = [&](std::size_t v, std::uint64_t seed, const Plan& plan, const Trace& t) {
      command_logs.push_back({files_dir(v, seed), exec::command_log_names(plan, t)});
    };
    try {
      planner::measure_variants(
          yaml, args.file, spec, r, *local, "local", args.measure_runs, "local", predict_sets,
          args.time_scale, [](const Component& c) { return exec::kernel_runs_sampled_time(c.kernel); },
          status, files_dir, measured);
    } catch (const planner::Interrupted&) {
      return interrupted_runs("compare", dir, made_dir, "compare.json", -1, guard);
    }
  }
  // An earlier comparison's runs that this one did not make again (other variants, more runs).
  const std::vector<std::filesystem::path> earlier = command_logs.empty()
                                                         ? std::vector<std::filesystem::path>{}
                                                         : earlier_run_dirs(dir / "commands", command_logs);
  const std::string write_error = write_results([&] {
    write_file(dir / "compare.json", [&](std::ostream& o) { planner::write_compare_json(o, r); });
    write_file(dir / "compare.csv", [&](std::ostream& o) { planner::write_compare_csv(o, r); });
    write_compare_report_file(dir, r);
    // An earlier comparison's logs in these runs' directories that these runs did not make again go
    // with the set; and those of the comparisons that wrote every run's logs into OUT/commands itself.
    for (const auto& [logs_dir, ours] : command_logs) remove_stale_command_logs(logs_dir, ours, began);
    if (!command_logs.empty()) {
      remove_stale_command_logs(dir / "commands", {}, began);
      // And the earlier runs': their OUT/commands/VARIANT/seedN logs, written before this one began.
      for (const std::filesystem::path& seed_dir : earlier) remove_stale_command_logs(seed_dir, {}, began);
    }
  });
  // Their directories, if that left them empty (a user's own file there keeps them).
  if (write_error.empty())
    for (const std::filesystem::path& seed_dir : earlier) {
      std::error_code gone;
      std::filesystem::remove(seed_dir, gone);                // only if empty
      std::filesystem::remove(seed_dir.parent_path(), gone);  // likewise
    }
  if (!args.quiet) {
    planner::print_compare(std::cout, r);
    if (write_error.empty())
      std::cout << "wrote " << dir.string() << "/{compare.json,compare.csv,report.html}\n";
  }
  return write_error.empty() ? 0 : results_not_written("compare", write_error, dir, !args.quiet, made_dir);
}

}  // namespace shardflow::cli
