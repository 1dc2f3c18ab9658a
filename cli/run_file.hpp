// run.json, which `shardflow run --backend k8s` writes in its output directory (k8s/controller.cpp) and
// `k8s status` and `run --resume` read back. Private to the CLI.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardflow::cli {

struct RunFile {
  std::string run_id, namespace_name, server, context, kubeconfig, scenario;
  std::string state = "running";  // running (or killed), interrupted, finished, failed
  std::string error;              // failed: what stopped it
  std::optional<std::uint64_t> seed;
  bool emulate = false, kept = false;
  std::int64_t started_unix_ns = 0;
  std::optional<std::int64_t> finished_unix_ns;
  std::uint64_t api_requests = 0;
  bool objects_deleted = false;  // the run ended and deleted its owner object
  /// The controller that wrote the file: its machine's host name and its process id (files written
  /// before 2026-12-05 have none).
  std::string controller_host;
  std::int64_t controller_pid = 0;
  std::int64_t controller_start = -1;  // its process start (k8s::process_start_ticks); -1: not given
  /// How the run was started, for --resume (files written before it have none).
  struct Invocation {
    std::string file, cluster;
    std::vector<std::string> sets, overlays;
    double qps = 50;
    int burst = 100;
  };
  std::optional<Invocation> invocation;
};

/// Reads `dir`/run.json. No file: an InputError saying this is not a k8s run's directory; bad JSON or a
/// field of the wrong type: an InputError at its file:line:col, naming the field.
RunFile read_run_file(const std::filesystem::path& dir);

}  // namespace shardflow::cli
