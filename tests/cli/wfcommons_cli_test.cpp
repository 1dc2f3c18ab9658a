// The commands on WfCommons instances (tests/data/wfcommons/, docs/wfcommons-import.md).
#include <string>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace shardflow::clitest;

namespace {
const std::string kData = "tests/data/wfcommons/";
}  // namespace

TEST_CASE("cli: explain a WfCommons instance: a task's thousand parents are its fan-in, not a join node",
          "[cli][wfcommons]") {
  // The instance's last task waits for the other 1000 directly: the plan adds no join node for it.
  const Result r = run("explain " + kData + "seismology-chameleon-1000p-001.json");
  CHECK(r.status == 0);
  CHECK(
      r.out.find("pipeline seismology-0: 1001 tasks, 1000 dependency edges (widest fan-out 1, widest fan-in "
                 "1000)\n\n") == 0);
}

TEST_CASE("cli: simulate a WfCommons instance: the zero-overhead makespan, no files with --no-files",
          "[cli][wfcommons]") {
  const Result r = run("simulate " + kData + "seismology-chameleon-100p-001.json --no-files");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // WRENCH 2.3's makespan on the same platform: 2.840 s.
  CHECK(r.out.find("  makespan     2.84s (2.840 s)") != std::string::npos);
  CHECK(r.out.find("wrote") == std::string::npos);
  const Result q = run("simulate " + kData + "bad/good.json --no-files --out somewhere");
  CHECK(q.status == 2);
  CHECK(q.err == "--no-files: writes no files: leave out --out somewhere\n");
}

TEST_CASE("cli: a WfCommons instance in sweep and with --set", "[cli][wfcommons]") {
  // tiny: a_1 (10.5 s) then b_2 (20 s) and c_3 (5.25 s); 1 core: 35.75 s; 2 cores: 10.5 + 20 = 30.5 s.
  const Result one = run("simulate " + kData + "bad/good.json --no-files");
  CHECK(one.out.find("(35.750 s)") != std::string::npos);
  const Result two = run("simulate " + kData + "bad/good.json --no-files --set cluster.node_pools[m1].cpu=2");
  CHECK(two.out.find("(30.500 s)") != std::string::npos);
  const Result s =
      run("sweep " + kData + "bad/good.json --vary cluster.node_pools[m1].cpu=1,2 -r 1 -q --out " +
          scratch("wfc-sweep").string());
  CHECK(s.status == 0);
  CHECK(s.err.empty());
  // A cluster change keeps the directly built steps (core/wfcommons_import.cpp): the sweep still knows
  // which field each --vary sets, so one field given by name and by index is refused there too.
  const Result twice =
      run("sweep " + kData +
          "bad/good.json --vary cluster.node_pools[0].cpu=1,2 --vary cluster.node_pools[m1].cpu=3 "
          "-r 1 -q --out " +
          scratch("wfc-sweep-twice").string());
  CHECK(twice.status == 2);
  CHECK(
      twice.err ==
      "--vary cluster.node_pools[m1].cpu=3: cluster.node_pools[m1].cpu: this field is varied twice, here and "
      "by --vary cluster.node_pools[0].cpu=1,2 (both set cluster.node_pools[0].cpu); give its values in one "
      "--vary\n");
}

TEST_CASE("cli: bad WfCommons input exits 2 with one line naming file:line:col and the field",
          "[cli][wfcommons]") {
  const std::pair<std::string, std::string> cases[] = {
      {"truncated.json",
       ":9:60: invalid JSON: missing closing quote of the string that starts at line 9, column 56\n"},
      {"unknown-parent.json",
       ":8:48: workflow.specification.tasks[1].parents[0]: unknown parent task \"a_9\" (no task has this "
       "id)\n"},
      {"cycle.json",
       ":7:69: pipeline.steps[1].after[0]: dependency cycle: a_1 -> b_2 -> a_1 (each step runs "
       "before the next)\n"},
      {"negative-runtime.json",
       ":18:43: workflow.execution.tasks[1].runtimeInSeconds: must be >= 0 (and at most 315360000 s, ten "
       "years: the simulator's horizon), got -20\n"},
  };
  for (const auto& [file, message] : cases) {
    for (const char* command : {"simulate ", "explain ", "validate "}) {
      INFO(command << file);
      const Result r = run(command + kData + "bad/" + file);
      CHECK(r.status == 2);
      CHECK(r.err == kData + "bad/" + file + message);
    }
  }
}
