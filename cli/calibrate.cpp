#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/planner/calibrate.hpp>

#include "commands.hpp"

namespace shardflow::cli {
namespace {

// A word as a POSIX shell reads it back (for the command in the overlay's header).
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                        "_-+=./:,@%[]") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit the scenario's step durations (base, per_gib, noise) and dispatch overhead to measured runs; "
      "write them as a partial scenario to lay over the scenario file");
  cmd->add_option("file", args.file, "Scenario file (YAML) the runs were made from")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("traces", args.traces, "Traces: trace.json files, or directories holding one")->required();
  cmd->add_option("--out", args.out, "The overlay to write (YAML)")->required();
  add_set_option(cmd, args.sets);
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors and warnings");
  cmd->footer(
      "Example:\n"
      "  shardflow calibrate scenarios/shard-preprocess-train.yaml out/run1 out/run2 --out calibrated.yaml\n"
      "Each step's run time (finished - started - output_write) is fitted by least squares against its\n"
      "input size in GiB; the noise sigma is the spread of log(measured / fitted). Evicted and cancelled\n"
      "attempts are left out. The traces must be runs of this scenario (with the same --set changes).\n"
      "A run at a --time-scale (its trace records it) has the run times of its sleep and spin steps\n"
      "divided by it, back into model time; other kernels ran at their own speed and are fitted as\n"
      "measured.");
  return cmd;
}

int run_calibrate_command(const CalibrateArgs& args) {
  const Scenario scenario = load_scenario_file(args.file, args.sets);
  const Plan plan = Plan::unroll(scenario.pipeline);
  std::vector<Trace> traces;
  std::vector<std::string> names;
  for (const std::string& arg : args.traces) {
    std::filesystem::path p(arg);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) p /= "trace.json";
    const std::string name = p.string();
    std::ifstream in(p, std::ios::binary);
    if (!in || std::filesystem::is_directory(p, ec))
      throw InputError({name, 0, 0}, "",
                       std::filesystem::exists(p, ec) ? "cannot read the file" : "no such file");
    traces.push_back(read_trace_json(in, name));
    names.push_back(name);
  }
  planner::CalibrationResult result = planner::calibrate(scenario, plan, traces, names);
  for (const std::string& w : result.warnings) std::cerr << "warning: " << w << "\n";
  // The steps and tasks matched (calibrate checks them); a renamed scenario is worth a word only.
  for (std::size_t i = 0; i < traces.size(); ++i)
    if (!args.quiet && traces[i].scenario != scenario.name)
      std::cerr << "note: " << names[i] << " is a run of scenario \"" << traces[i].scenario << "\", not \""
                << scenario.name << "\"\n";
  result.command = "shardflow calibrate " + shell_word(args.file);
  for (const std::string& t : args.traces) result.command += " " + shell_word(t);
  result.command += " --out " + shell_word(args.out);
  for (const std::string& s : args.sets) result.command += " --set " + shell_word(s);
  try {
    write_file(args.out, [&](std::ostream& o) { planner::write_overlay_yaml(o, result); });
  } catch (const std::runtime_error& e) {
    throw InputError({}, "--out", e.what());
  }
  if (!args.quiet) {
    planner::print_calibration(std::cout, result);
    std::cout << "wrote " << args.out << "\n";
  }
  return 0;
}

}  // namespace shardflow::cli
