// The `shardflow` command: CLI11 wiring only; the work lives in the layers.
#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"shardflow: simulate, benchmark and run fan-out/fan-in ML pipelines on Kubernetes"};
  app.set_version_flag("--version", "shardflow 0.1.0");
  app.require_subcommand(0);
  CLI11_PARSE(app, argc, argv);
  std::cout << app.help();
  return 0;
}
