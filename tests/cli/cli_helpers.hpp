// Helpers for the command-line tests: run the built `shardflow` and capture what it prints.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace shardflow::clitest {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path scratch(const std::string& name) {
  fs::path dir = fs::path(SHARDFLOW_BINARY_DIR) / "test-scratch" / "cli" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `shardflow ARGS` from the source directory (so scenario paths read as a user types them). Each run
// gets its own output files: CTest runs these test cases in parallel processes.
inline Result run(const std::string& args) {
  static int runs = 0;
  const fs::path dir = scratch("run-" + std::to_string(getpid()) + "-" + std::to_string(++runs));
  const std::string cmd = std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && '" + SHARDFLOW_EXE + "' " +
                          args + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

}  // namespace shardflow::clitest