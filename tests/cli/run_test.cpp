// `shardflow run`: one command for every backend, the same files, clear errors before any work.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  fs::path dir = fs::path(SHARDFLOW_BINARY_DIR) / "test-scratch" / "cli" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `shardflow ARGS` from the source directory (so scenario paths read as a user types them). Each run
// gets its own output files: CTest runs these test cases in parallel processes.
Result run(const std::string& args) {
  static int runs = 0;
  const fs::path dir = scratch("backend-run-" + std::to_string(getpid()) + "-" + std::to_string(++runs));
  const std::string cmd = std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && '" + SHARDFLOW_EXE + "' " +
                          args + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

}  // namespace

TEST_CASE("cli: run --backend sim writes what simulate writes", "[cli]") {
  const fs::path a = scratch("run-sim-a"), b = scratch("run-sim-b");
  const Result r1 =
      run("run scenarios/argo-parallelism-limit.yaml --backend sim -q --out '" + a.string() + "'");
  const Result r2 = run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + b.string() + "'");
  CHECK(r1.status == 0);
  CHECK(r2.status == 0);
  for (const char* f : {"trace.json", "trace.csv", "metrics.json", "metrics.csv", "timeline.json"}) {
    INFO(f);
    CHECK(slurp(a / f) == slurp(b / f));
    CHECK(!slurp(a / f).empty());
  }
}

TEST_CASE("cli: run --backend local runs the ridge pipeline and prints its answer", "[cli]") {
  const fs::path dir = scratch("run-local");
  const Result r =
      run("run scenarios/local-ridge.yaml --backend local --cores 2 --set "
          "pipeline.steps[shard].kernel.rows_per_gib=2000 --out '" +
          dir.string() + "'");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("ran local-ridge (seed 42): 25 tasks, 25 attempts on 2 cores of this machine in ") == 0);
  CHECK(r.out.find("  result       chose lambda ") != std::string::npos);
  const auto trace = nlohmann::json::parse(slurp(dir / "trace.json"));
  CHECK(trace["backend"] == "local");
  CHECK(trace["attempts"].size() == 25);
  CHECK(trace["nodes"][0]["cpu_milli"] == 2000);
  CHECK(fs::exists(dir / "metrics.json"));
  CHECK(fs::exists(dir / "timeline.json"));
}

TEST_CASE("cli: run --backend local refuses, before any work, what this machine cannot run", "[cli]") {
  const Result big =
      run("run scenarios/argo-parallelism-limit.yaml --backend local --cores 1 --memory 1Gi --set "
          "pipeline.steps[0].resources.cpu=2 --out '" +
          scratch("big").string() + "'");
  CHECK(big.status == 2);
  CHECK(big.out.empty());
  CHECK(big.err ==
        "scenarios/argo-parallelism-limit.yaml:8:7: pipeline.steps[0].resources.cpu: step sleep asks for 2 "
        "CPUs, "
        "more than this machine (--cores 1, --memory 1Gi) has; lower it with --set or run with a larger "
        "--cores\n");
}

TEST_CASE("cli: run --backend k8s says it is not there yet", "[cli]") {
  const Result r = run("run scenarios/argo-parallelism-limit.yaml --backend k8s");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--backend k8s: the Kubernetes backend is not built yet; use --backend sim or --backend local\n");
}

TEST_CASE("cli: run rejects a bad --memory and an unknown --backend", "[cli]") {
  const Result m = run("run scenarios/argo-parallelism-limit.yaml --backend local --memory lots");
  CHECK(m.status == 2);
  CHECK(m.err.rfind("--memory lots: ", 0) == 0);
  const Result b = run("run scenarios/argo-parallelism-limit.yaml --backend cloud");
  CHECK(b.status == 2);
  CHECK(b.err.find("--backend") != std::string::npos);
}
