// Subcommands of `shardflow` that need more than a few lines of wiring.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace shardflow::cli {

struct SimulateArgs {
  std::string file;
  std::string seed_text;  // checked to be a uint64 by the option's validator
  std::string out_dir;
  std::vector<std::string> sets;  // --set PATH=VALUE overrides
  bool quiet = false;
};

struct SweepArgs {
  std::string file;
  std::vector<std::string> vary;
  std::vector<std::string> sets;
  int replications = 10;
  std::string deadline_text;
  double quantile = 95;
  std::optional<std::uint64_t> seed;
  std::string out_dir;
  bool quiet = false;
};

struct CalibrateArgs {
  std::string file;
  std::vector<std::string> traces;  // trace.json files, or directories holding one
  std::string out;                  // the overlay to write
  std::vector<std::string> sets;
  bool quiet = false;
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);
int run_calibrate_command(const CalibrateArgs& args);

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args);
int run_sweep_command(const SweepArgs& args);

/// The output directory: `out_dir`, or out/<scenario name>. Made at once, so that a bad --out is an
/// InputError before any work is done.
std::filesystem::path make_out_dir(const std::string& out_dir, const std::string& scenario_name);
/// Writes `path` through `write`; a failure to open or write names the path.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

/// Adds the repeatable `--set PATH=VALUE` option (scenario overrides) to a command.
void add_set_option(CLI::App* cmd, std::vector<std::string>& sets);

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args);

}  // namespace shardflow::cli
