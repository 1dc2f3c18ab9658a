// Subcommands of `shardflow` that need more than a few lines of wiring.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace shardflow::cli {

struct SimulateArgs {
  std::string file;
  std::string seed_text;  // checked to be a uint64 by the option's validator
  std::string out_dir;
  bool quiet = false;
};

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args);

}  // namespace shardflow::cli
