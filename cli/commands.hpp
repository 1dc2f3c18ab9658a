// Subcommands of `shardflow` that need more than a few lines of wiring.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace shardflow::cli {

struct SimulateArgs {
  std::string file;
  std::optional<std::uint64_t> seed;
  std::string out_dir;
  bool quiet = false;
};

CLI::App* add_simulate_command(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args);

}  // namespace shardflow::cli
