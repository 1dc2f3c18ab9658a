#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/report/chrome_trace.hpp>
#include <shardflow/sim/simulator.hpp>

#include "commands.hpp"

namespace shardflow::cli {
namespace {

// Above this many attempts the timeline is not written: its JSON (some 600 bytes an attempt) would be more
// than the trace viewers load.
constexpr std::size_t kTimelineMaxAttempts = 100'000;

std::string human_seconds(double s) {
  return format_duration(Duration::from_ms(static_cast<std::int64_t>(s * 1000 + 0.5)));
}

}  // namespace

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option(
         "--set", sets,
         "Change the scenario before it is read, as PATH=VALUE (repeatable): PATH names keys with dots "
         "and list elements with [index] or [name]; VALUE is YAML. "
         "E.g. --set cluster.node_pools[gpu].count=4 --set "
         "pipeline.steps[preprocess].parallel_for.parallelism=20")
      ->allow_extra_args(false)
      ->type_name("PATH=VALUE");
}

void add_load_options(CLI::App* cmd, LoadArgs& args) {
  add_set_option(cmd, args.sets);
  cmd->add_option("--overlay", args.overlays,
                  "A partial scenario (YAML) merged over the scenario before it is read (repeatable, in "
                  "order, before any --set): mappings merge key by key, list elements with a `name` merge "
                  "with the element of that name (or are appended), anything else is replaced. E.g. "
                  "--overlay fitted.yaml with `pipeline: {steps: [{name: preprocess, duration: {base: "
                  "40s}}]}`. Errors in it name the overlay's file:line:col")
      ->allow_extra_args(false)
      ->type_name("FILE");
  cmd->add_option("--cluster", args.cluster,
                  "Replace the scenario's cluster with a preset. `local`: this machine as one node (the "
                  "CPUs this process may use, its physical memory, no GPUs, no pod limit, price 0), a free "
                  "scheduler, no storage model, and no orchestrator overheads (one pod per task, no "
                  "sandbox start, no image pulls); overlays and --set still apply on top, so --overlay "
                  "can add measured overheads")
      ->type_name("local");
}

LoadOptions load_options(const LoadArgs& args) {
  LoadOptions o;
  for (const std::string& path : args.overlays) o.overlays.push_back(read_overlay_file(path));
  o.sets = args.sets;
  o.cluster = args.cluster;
  return o;
}

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args) {
  auto* cmd =
      app.add_subcommand("simulate",
                         "Simulate a scenario on its modelled Kubernetes cluster; print a summary and write "
                         "the trace and metrics (JSON, CSV) and a timeline for ui.perfetto.dev");
  cmd->add_option("file", args.file, "Scenario file (YAML)")->required()->check(CLI::ExistingFile);
  // CLI11 2.1 wraps "-1" and 2^64 into a uint64 silently, so the seed is read as text and checked here.
  cmd->add_option("--seed", args.seed_text, "Random seed, 0 to 2^64-1 (default: the scenario's `seed`)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size())
              return "want a whole number from 0 to 18446744073709551615, got \"" + text + "\"";
            return "";
          },
          "UINT64"));
  cmd->add_option(
      "--out", args.out_dir,
      "Directory for trace.json, trace.csv, metrics.json, metrics.csv and timeline.json (default: "
      "out/<scenario name>)");
  add_load_options(cmd, args.load);
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  cmd->footer(
      "Examples:\n  shardflow simulate scenarios/shard-preprocess-train.yaml --seed 7 --out out/seed7\n"
      "  shardflow simulate scenarios/shard-preprocess-train.yaml --set cluster.node_pools[cpu].count=40\n"
      "The same scenario and seed always give the same trace, on any machine.\n"
      "timeline.json is a Chrome trace: open it in https://ui.perfetto.dev or chrome://tracing to see\n"
      "each node's pods (pull, read, run, write) and the pods waiting for the scheduler. It is left\n"
      "out above 100,000 attempts (60 MB and more), too many for those viewers.");
  return cmd;
}

int run_simulate(const SimulateArgs& args) {
  const Scenario scenario = load_scenario_file(args.file, load_options(args.load));
  // The output directory first: a bad --out is found before the simulation runs, not after.
  const std::filesystem::path dir = make_out_dir(args.out_dir, scenario.name);
  const Plan plan = Plan::unroll(scenario.pipeline);
  sim::SimOptions options;
  options.seed = scenario.seed;
  if (!args.seed_text.empty())
    std::from_chars(args.seed_text.data(), args.seed_text.data() + args.seed_text.size(), options.seed);
  const bool show_progress = !args.quiet && isatty(STDERR_FILENO) != 0;
  if (show_progress)
    options.progress = [](double done) { std::fprintf(stderr, "\rsimulating... %3.0f%%", done * 100); };
  const auto t0 = std::chrono::steady_clock::now();
  const Trace trace = sim::simulate(scenario, plan, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (show_progress) std::fprintf(stderr, "\r%*s\r", 20, "");
  const Metrics m = compute_metrics(trace, plan);

  write_file(dir / "trace.json", [&](std::ostream& o) { write_trace_json(o, trace); });
  write_file(dir / "trace.csv", [&](std::ostream& o) { write_trace_csv(o, trace); });
  write_file(dir / "metrics.json", [&](std::ostream& o) { write_metrics_json(o, m); });
  write_file(dir / "metrics.csv", [&](std::ostream& o) { write_metrics_csv(o, m); });
  const bool timeline = trace.attempts.size() <= kTimelineMaxAttempts;
  if (timeline) {
    write_file(dir / "timeline.json", [&](std::ostream& o) { report::write_chrome_trace(o, trace); });
  } else {
    std::error_code ignored;  // a timeline from an earlier run would not match this trace
    std::filesystem::remove(dir / "timeline.json", ignored);
  }

  if (!args.quiet) {
    char line[256];
    std::printf("simulated %s (seed %llu): %llu tasks, %llu attempts on %zu node%s in %.*f %s of wall time\n",
                scenario.name.c_str(), static_cast<unsigned long long>(options.seed),
                static_cast<unsigned long long>(plan.task_count()),
                static_cast<unsigned long long>(m.attempts), trace.nodes.size(),
                trace.nodes.size() == 1 ? "" : "s", wall < 1 ? 1 : 3, wall < 1 ? wall * 1e3 : wall,
                wall < 1 ? "ms" : "s");
    std::printf("  makespan     %s (%.3f s); critical path of what ran %s\n",
                human_seconds(m.makespan_s).c_str(), m.makespan_s, human_seconds(m.critical_path_s).c_str());
    std::printf("  cost         %.2f (price units per hour x node hours)\n", m.cost);
    std::printf("  utilization  CPU mean %.1f%%, peak %.1f%%\n", m.mean_cpu_utilization * 100,
                m.peak_cpu_utilization * 100);
    std::snprintf(line, sizeof line,
                  "  queue wait   p50 %.3f s, p95 %.3f s, p99 %.3f s (pod created -> bound)\n",
                  m.queue_wait_s.p50, m.queue_wait_s.p95, m.queue_wait_s.p99);
    std::fputs(line, stdout);
    std::printf("  retries      %llu; failed attempts %llu; tasks failed %llu\n",
                static_cast<unsigned long long>(m.retries),
                static_cast<unsigned long long>(m.failed_attempts),
                static_cast<unsigned long long>(m.tasks_failed));
    std::printf("wrote %s/{trace.json,trace.csv,metrics.json,metrics.csv%s}\n", dir.string().c_str(),
                timeline ? ",timeline.json" : "");
    if (!timeline)
      std::printf("(no timeline.json: %zu attempts, over the %zu that trace viewers load)\n",
                  trace.attempts.size(), kTimelineMaxAttempts);
  }
  return m.tasks_failed > 0 ? 1 : 0;
}

}  // namespace shardflow::cli
