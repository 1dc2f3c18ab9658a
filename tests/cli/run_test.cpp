// `shardflow run`: one command for every backend, the same files, clear errors before any work.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace shardflow::clitest;

TEST_CASE("cli: run --backend sim writes what simulate writes", "[cli]") {
  const fs::path a = scratch("run-sim-a"), b = scratch("run-sim-b");
  const Result r1 =
      run("run scenarios/argo-parallelism-limit.yaml --backend sim -q --out '" + a.string() + "'");
  const Result r2 = run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + b.string() + "'");
  CHECK(r1.status == 0);
  CHECK(r2.status == 0);
  for (const char* f :
       {"trace.json", "trace.csv", "metrics.json", "metrics.csv", "timeline.json", "report.html"}) {
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
  CHECK(slurp(dir / "report.html").find("backend local") != std::string::npos);
}

TEST_CASE("cli: run --backend local refuses, before any work, what this machine cannot run", "[cli]") {
  const Result big =
      run("run scenarios/argo-parallelism-limit.yaml --backend local --cores 1 --memory 1Gi --set "
          "pipeline.steps[0].resources.cpu=2 --out '" +
          scratch("big").string() + "'");
  CHECK(big.status == 2);
  CHECK(big.out.empty());
  // At the --set that asked for it, not at the step in the file.
  CHECK(big.err ==
        "--set pipeline.steps[0].resources.cpu=2: pipeline.steps[0].resources.cpu: step sleep asks for 2 "
        "CPUs, more than this machine (--cores 1, --memory 1Gi) has; lower it with --set or run with a "
        "larger --cores\n");
}

TEST_CASE("cli: run --backend k8s without a kubeconfig names the file it looked for", "[cli]") {
  const Result r =
      run("run scenarios/argo-parallelism-limit.yaml --backend k8s --kubeconfig /nonexistent/kc.yaml");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "/nonexistent/kc.yaml: cannot open the file (No such file or directory)\n");
  const Result k = run("run scenarios/argo-parallelism-limit.yaml --backend local --kubeconfig kc.yaml");
  CHECK(k.status == 2);
  CHECK(k.err == "--kubeconfig: applies to --backend k8s only (this run uses --backend local)\n");
}

TEST_CASE("cli: run rejects a bad --memory and an unknown --backend", "[cli]") {
  const Result m = run("run scenarios/argo-parallelism-limit.yaml --backend local --memory lots");
  CHECK(m.status == 2);
  CHECK(m.err.rfind("--memory lots: ", 0) == 0);
  // A number alone is bytes: 8 bytes hold no task (8Gi was meant); 0.5 is a byte (it echoed as "--memory 1").
  const Result bare = run("run scenarios/argo-parallelism-limit.yaml --backend local --memory 8");
  CHECK(bare.status == 2);
  CHECK(bare.err ==
        "--memory 8: is 8 bytes, less than 1Mi: give the unit (8Gi, 512Mi; a number alone counts bytes)\n");
  CHECK(run("run scenarios/argo-parallelism-limit.yaml --backend local --memory 0.5").err ==
        "--memory 0.5: is 1 bytes, less than 1Mi: give the unit (8Gi, 512Mi; a number alone counts bytes)\n");
  const Result c = run("run scenarios/argo-parallelism-limit.yaml --cores 2");
  CHECK(c.status == 2);
  CHECK(c.err == "--cores: applies to --backend local only (this run uses --backend sim)\n");
  const Result b = run("run scenarios/argo-parallelism-limit.yaml --backend cloud");
  CHECK(b.status == 2);
  CHECK(b.err.find("--backend") != std::string::npos);
}

TEST_CASE("cli: run --backend local reports bad kernels, commands and overlays before any work", "[cli]") {
  const fs::path dir = scratch("bad-local");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string head = "name: bad\npipeline:\n  steps:\n    - name: s\n";
  const std::string tail = "cluster:\n  node_pools: [{name: n, cpu: 2, memory: 4Gi, count: 1}]\n";
  struct Case {
    std::string step;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"      kernel: {name: shard_stat, rows: 10}\n",
       ":5:22: pipeline.steps[0].kernel.name: unknown kernel \"shard_stat\" (did you mean "
       "\"shard_stats\"?)\n"},
      {"      kernel: {name: shard_stats, rows: many}\n",
       ":5:41: pipeline.steps[0].kernel.rows: expected an integer from 1 to 1000000000000 (1e12), got "
       "\"many\"\n"},
      {"      kernel: {name: command}\n      command: [no-such-program-here, x]\n",
       ":5:15: pipeline.steps[0].kernel: command \"no-such-program-here\" not found on PATH\n"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].step);
    const std::string file = write("s" + std::to_string(i) + ".yaml", head + cases[i].step + tail);
    const fs::path out = dir / ("out" + std::to_string(i));
    const Result r = run("run '" + file + "' --backend local --out '" + out.string() + "'");
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == file + cases[i].error);
    CHECK(!fs::exists(out));  // nothing ran, nothing was written
  }
  const std::string ok = write("ok.yaml", head + "      kernel: {name: noop}\n" + tail);
  const std::string overlay =
      write("overlay.yaml", "pipeline:\n  steps:\n    - {name: s, kernal: {name: spin}}\n");
  const Result r = run("run '" + ok + "' --backend local --overlay '" + overlay + "' --out '" +
                       (dir / "out-overlay").string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err ==
        overlay + ":3:17: pipeline.steps[0].kernal: unknown key \"kernal\" (did you mean \"kernel\"?)\n");
  CHECK(!fs::exists(dir / "out-overlay"));
}

TEST_CASE("cli: Ctrl-C (or SIGTERM) stops a local run cleanly: exit 130 (143), the partial trace written",
          "[cli]") {
  // SIGTERM (timeout, a CI runner cancelling) used to kill the process: no trace, the commands orphaned.
  // A `command` (SIGTERM to its process) is cancelled as a spin is: no error on its attempts either.
  // The same signal twice at once (`timeout` signals the process, then its process group) is one stop:
  // it used to end the process at once, with nothing written.
  struct Case {
    const char* sig;
    const char* status;
    const char* kernel;
    int copies;
  };
  for (const auto& [sig, status, kernel, copies] :
       {Case{"INT", "130", "kernel: {name: spin, seconds: 600s}", 1},
        Case{"TERM", "143", "kernel: {name: spin, seconds: 600s}", 1},
        Case{"INT", "130", "command: [sleep, '600'], kernel: {name: command}", 1},
        Case{"INT", "130", "kernel: {name: spin, seconds: 600s}", 2}}) {
    INFO("SIG" << sig << ", " << kernel << ", " << copies << " at once");
    const fs::path dir =
        scratch(std::string("interrupt-") + sig + "-" + kernel[0] + "-" + std::to_string(copies));
    std::string kill;
    for (int i = 0; i < copies; ++i) kill += "kill -" + std::string(sig) + " $pid; ";
    std::ofstream(dir / "long.yaml")
        << "name: long\npipeline:\n  steps:\n"
           "    - {name: spin, parallel_for: {count: 6}, "
        << kernel
        << "}\n"
           "cluster:\n  node_pools: [{name: n, cpu: 2, memory: 4Gi, count: 1}]\n";
    const std::string cmd = "cd '" + std::string(SHARDFLOW_SOURCE_DIR) + "' && { '" + SHARDFLOW_EXE +
                            "' run '" + (dir / "long.yaml").string() + "' --backend local --cores 2 --out '" +
                            (dir / "out").string() + "' >'" + (dir / "stdout").string() +
                            "' 2>&1 & pid=$!; sleep 1; " + kill + "wait $pid; echo $? >'" +
                            (dir / "status").string() + "'; }";
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(std::chrono::steady_clock::now() - t0 <
          std::chrono::seconds(120));  // not the 600 s the spins ask for
    CHECK(slurp(dir / "status") == std::string(status) + "\n");
    const std::string out = slurp(dir / "stdout");
    CHECK(out.find("interrupted: what had not finished is recorded as cancelled") != std::string::npos);
    // Not one of them failed: they had not finished (counted in tasks failed, as the trace defines it).
    CHECK(out.find("  failed tasks ") == std::string::npos);
    CHECK(out.find("\n  unfinished   6 tasks had not finished when the run was interrupted; it ended at ") !=
          std::string::npos);
    const auto trace = nlohmann::json::parse(slurp(dir / "out" / "trace.json"));
    REQUIRE(trace["attempts"].size() == 6);
    int started = 0;
    for (const auto& a : trace["attempts"]) {
      CHECK(a["outcome"] == "cancelled");
      CHECK(!a.contains("error"));  // cancelled, not failed: the spins' "cancelled" is not an error
      started += a["started"].get<std::int64_t>() >= 0 ? 1 : 0;
    }
    CHECK(started == 2);
    CHECK(trace["tasks_failed"] == 6);
  }
}

TEST_CASE("cli: a task waiting out its retry backoff when the run is interrupted is unfinished, not failed",
          "[cli]") {
  // Attempt 0 fails at once (fail_attempts 1); its retry would come 600 s later: interrupted before.
  const fs::path dir = scratch("interrupt-backoff");
  std::ofstream(dir / "backoff.yaml")
      << "name: backoff\npipeline:\n  steps:\n"
         "    - {name: flaky, parallel_for: {count: 2}, duration: {base: 1ms}, kernel: {name: sleep, "
         "fail_attempts: 1}, retries: {max: 2, backoff: 600s}}\n"
         "cluster:\n  node_pools: [{name: n, cpu: 2, memory: 4Gi, count: 1}]\n";
  const std::string cmd =
      "{ '" + std::string(SHARDFLOW_EXE) + "' run '" + (dir / "backoff.yaml").string() +
      "' --backend local --cores 2 --out '" + (dir / "out").string() + "' >'" + (dir / "stdout").string() +
      "' 2>&1 & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo $? >'" + (dir / "status").string() + "'; }";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(slurp(dir / "status") == "130\n");
  const std::string out = slurp(dir / "stdout");
  CHECK(out.find("  failed tasks ") == std::string::npos);  // it listed flaky[0] and flaky[1] (1 attempt)
  CHECK(out.find("\n  unfinished   2 tasks had not finished when the run was interrupted; it ended at ") !=
        std::string::npos);
}

TEST_CASE("cli: every seed scenario runs for real at its documented local scale", "[cli][slow]") {
  struct Case {
    std::string args;
    std::string expect;  // a line the run prints
  };
  const std::vector<Case> cases = {
      {"scenarios/shard-preprocess-train.yaml --overlay scenarios/local-overlays/shard-preprocess-train.yaml "
       "--time-scale 0.001",
       "ran shard-preprocess-train (seed 42): 104 tasks, 105 attempts on 2 cores"},
      {"scenarios/hyperparameter-sweep.yaml --overlay scenarios/local-overlays/hyperparameter-sweep.yaml "
       "--time-scale 0.001",
       "  result       chose lambda "},
      {"scenarios/regional-evaluation.yaml --overlay scenarios/local-overlays/regional-evaluation.yaml "
       "--time-scale 0.001",
       "ran regional-evaluation (seed 2024): 307 tasks, 308 attempts on 2 cores"},
      {"scenarios/argo-parallelism-limit.yaml --time-scale 0.05", "tasks failed 0"},
      {"scenarios/argo-parallelism-nested-dag.yaml --time-scale 0.05", "tasks failed 0"},
      {"scenarios/local-ridge.yaml --set pipeline.steps[shard].kernel.rows_per_gib=5000 --set "
       "pipeline.steps[evaluate].kernel.rows=20000",
       "  result       chose lambda "},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r =
        run("run " + c.args + " --backend local --cores 2 --out '" + scratch("seed-local").string() + "'");
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("cli: run --backend local --no-files writes no command output files either", "[cli]") {
  // The command kernel's stdout and stderr went to out/<name>/commands/ even with --no-files.
  const fs::path dir = scratch("run-no-files");
  const std::string name = "no-files-" + std::to_string(getpid());
  std::ofstream(dir / "cmd.yaml")
      << "name: " << name
      << "\npipeline:\n  steps:\n    - name: c\n      resources: {cpu: 100m}\n"
         "      command: [sh, -c, \"echo hello; echo oops >&2; exit 3\"]\n"
         "      kernel: {name: command}\n"
         "cluster:\n  node_pools:\n    - {name: local, cpu: 2, memory: 1Gi, count: 1}\n"
         "overheads: none\n";
  const Result r = run("run '" + (dir / "cmd.yaml").string() + "' --backend local --no-files");
  CHECK(r.status == 1);
  // The error text still comes from the command's stderr (read from a scratch directory).
  CHECK(r.out.find("oops") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(SHARDFLOW_SOURCE_DIR) / "out" / name));
}

TEST_CASE("cli: a second Ctrl-C ends a local run at once, and kills the commands that ignore SIGTERM",
          "[cli]") {
  // The second signal skipped the SIGTERM-then-SIGKILL of the commands: they went on as orphans. The first
  // comes once both commands have started (they write their pids), however slow the machine.
  const fs::path dir = scratch("interrupt-twice");
  std::ofstream(dir / "cmd.yaml")
      << "name: cmd\npipeline:\n  steps:\n    - name: work\n      parallel_for: {count: 2}\n"
         "      kernel: {name: command}\n"
         "      command: [sh, -c, \"trap '' TERM; echo $$ > " +
             (dir / "pid").string() +
             "{{item.index}}; sleep 60\"]\n"
             "cluster: {node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]}\n";
  const std::string cmd =
      "{ '" + std::string(SHARDFLOW_EXE) + "' run '" + (dir / "cmd.yaml").string() +
      "' --backend local --cores 2 --out '" + (dir / "out").string() + "' >/dev/null 2>&1 & " +
      "pid=$!; for i in $(seq 1 300); do [ -s '" + (dir / "pid0").string() + "' ] && [ -s '" +
      (dir / "pid1").string() +
      "' ] && break; sleep 0.1; done; kill -INT $pid; sleep 0.8; kill -INT $pid; wait $pid; echo $? >'" +
      (dir / "status").string() + "'; }";
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));  // not the commands' 60 s
  CHECK(slurp(dir / "status") == "130\n");
  for (const char* i : {"0", "1"}) {
    const std::string pid = slurp(dir / (std::string("pid") + i));
    REQUIRE_FALSE(pid.empty());
    // Killed with their process group: gone, or a zombie that whoever adopted it has not reaped yet.
    const auto dead = [](const std::string& p) {
      if (::kill(std::stoi(p), 0) != 0) return true;
      const std::string stat = slurp(fs::path("/proc") / p / "stat");
      const auto close = stat.rfind(')');
      return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
    };
    bool gone = false;
    for (int k = 0; k < 100 && !gone; ++k) {
      gone = dead(pid.substr(0, pid.find('\n')));
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(gone);
  }
}

TEST_CASE("cli: Ctrl-C (or SIGTERM) stops a sweep or a comparison with a word and exit 130 (143)", "[cli]") {
  // A signal ended them with nothing said, the progress line left open and their new --out left empty.
  const fs::path dir = scratch("interrupt-sweep");
  std::ofstream(dir / "big.yaml") << "name: big\npipeline:\n  steps:\n"
                                     "    - {name: w, parallel_for: {count: 200000}, resources: {cpu: 1}, "
                                     "duration: {base: 10s, noise: {lognormal_sigma: 0.3}}}\n"
                                     "cluster: {node_pools: [{name: p, cpu: 8, memory: 64Gi, count: 100}]}\n";
  struct Case {
    const char* sig;
    const char* status;
    const char* command;
    const char* name;
  };
  for (const auto& [sig, status, command, name] :
       {Case{"INT", "130", "sweep --vary 'cluster.node_pools[p].count=50,100' -r 100000", "sweep"},
        Case{"TERM", "143", "compare --variant a --variant 'b:cluster.node_pools[p].count=50' -r 100000",
             "compare"}}) {
    INFO(command);
    const fs::path out = dir / (std::string(name) + "-out");
    const std::string cmd = "{ '" + std::string(SHARDFLOW_EXE) + "' " + command + " '" +
                            (dir / "big.yaml").string() + "' --out '" + out.string() + "' >'" +
                            (dir / "stdout").string() + "' 2>'" + (dir / "stderr").string() +
                            "' & pid=$!; sleep 2; kill -" + sig + " $pid; wait $pid; echo $? >'" +
                            (dir / "status").string() + "'; }";
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
    CHECK(slurp(dir / "status") == std::string(status) + "\n");
    CHECK(slurp(dir / "stdout") == "");
    const std::string err = slurp(dir / "stderr");
    CHECK(err.starts_with(std::string(name) + ": interrupted with "));
    CHECK(err.ends_with(
        " of its runs done: nothing written (its figures need every run; run it again, with "
        "fewer replications or " +
        std::string(name == std::string("sweep") ? "values" : "variants") + " for a shorter one)\n"));
    CHECK(!fs::exists(out));  // made for this run, left empty: removed
  }
}

TEST_CASE("cli: a local run's command logs are its own: an earlier run's that it did not make go", "[cli]") {
  // Four items, then two into the same --out: work[2] and work[3]'s logs said "out 2" and "out 3" beside
  // the new run's, as if it had made them. Other files there stay.
  const fs::path dir = scratch("command-logs");
  std::ofstream(dir / "c.yaml") << "name: c\npipeline:\n  steps:\n    - name: work\n"
                                   "      parallel_for: {count: 4}\n      kernel: {name: command}\n"
                                   "      command: [sh, -c, \"echo out {{item.index}}\"]\n"
                                   "cluster: {node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]}\n";
  const std::string base =
      "run '" + (dir / "c.yaml").string() + "' --backend local -q --out '" + (dir / "out").string() + "'";
  REQUIRE(run(base).status == 0);
  std::ofstream(dir / "out" / "commands" / "notes.txt") << "mine\n";
  REQUIRE(run(base + " --set 'pipeline.steps[work].parallel_for.count=2'").status == 0);
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "out" / "commands")) names.insert(e.path().filename());
  CHECK(names == std::set<std::string>{"notes.txt", "work[0].attempt0.stderr", "work[0].attempt0.stdout",
                                       "work[1].attempt0.stderr", "work[1].attempt0.stdout"});
  CHECK(slurp(dir / "out" / "commands" / "work[1].attempt0.stdout") == "out 1\n");
}

TEST_CASE("cli: compare --backend local keeps each variant's each run's command logs", "[cli]") {
  // They went into one OUT/commands, each run's replacing the one before's: the logs there were the last
  // variant's last run's. Now OUT/commands/VARIANT/seedN; an earlier comparison's logs there that this one
  // did not make again go, and so do those written into OUT/commands itself.
  const fs::path dir = scratch("compare-command-logs");
  std::ofstream(dir / "c.yaml") << "name: c\npipeline:\n  steps:\n    - name: work\n"
                                   "      parallel_for: {count: 2}\n      kernel: {name: command}\n"
                                   "      command: [sh, -c, \"echo $SHARDFLOW_ITEM {{item.index}}\"]\n"
                                   "cluster: {node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]}\n";
  const fs::path out = dir / "out";
  fs::create_directories(out / "commands" / "wide" / "seed1");
  std::ofstream(out / "commands" / "work[0].attempt0.stdout") << "an old comparison's\n";
  std::ofstream(out / "commands" / "wide" / "seed1" / "work[5].attempt0.stdout") << "an old comparison's\n";
  std::ofstream(out / "commands" / "notes.txt") << "mine\n";
  // An earlier comparison's runs that this one does not make again: their logs go, and their directories
  // when that empties them; a user's own file keeps its directory.
  fs::create_directories(out / "commands" / "wide" / "seed7");
  std::ofstream(out / "commands" / "wide" / "seed7" / "work[0].attempt0.stdout") << "an old comparison's\n";
  fs::create_directories(out / "commands" / "gone" / "seed1");
  std::ofstream(out / "commands" / "gone" / "seed1" / "work[0].attempt0.stderr") << "an old comparison's\n";
  fs::create_directories(out / "commands" / "kept" / "seed2");
  std::ofstream(out / "commands" / "kept" / "seed2" / "work[0].attempt0.stdout") << "an old comparison's\n";
  std::ofstream(out / "commands" / "kept" / "seed2" / "mine.txt") << "mine\n";
  const Result r = run("compare '" + (dir / "c.yaml").string() +
                       "' -r 2 --variant base --variant 'wide:pipeline.steps[work].parallel_for.count=3' "
                       "--backend local --measure-runs 2 -q --out '" +
                       out.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(r.err == "");
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(out / "commands"))
    if (e.is_regular_file()) names.insert(fs::relative(e.path(), out / "commands").string());
  std::set<std::string> want = {"notes.txt", "kept/seed2/mine.txt"};
  for (const auto& [variant, items] : {std::pair{"base", 2}, std::pair{"wide", 3}})
    for (const char* seed : {"seed1", "seed2"})
      for (int i = 0; i < items; ++i)
        for (const char* ext : {".stdout", ".stderr"})
          want.insert(std::string(variant) + "/" + seed + "/work[" + std::to_string(i) + "].attempt0" + ext);
  CHECK(names == want);
  CHECK(slurp(out / "commands" / "wide" / "seed2" / "work[2].attempt0.stdout") == "2 2\n");
  CHECK(slurp(out / "commands" / "base" / "seed1" / "work[1].attempt0.stdout") == "1 1\n");
  CHECK_FALSE(fs::exists(out / "commands" / "wide" / "seed7"));
  CHECK_FALSE(fs::exists(out / "commands" / "gone"));
}

TEST_CASE("cli: a local run without a terminal logs its progress every minute from its first minute on",
          "[cli][slow]") {
  // A CI log of a long local run showed nothing until its summary. Two 65 s sleeps at once: one line at
  // 1m00s (both running), then the last state at the end; a run shorter than a minute logs nothing (every
  // other local run in these tests, whose standard error is checked empty).
  const fs::path dir = scratch("local-progress");
  std::ofstream(dir / "long.yaml")
      << "name: long\noverheads: none\npipeline:\n  steps:\n"
         "    - {name: w, parallel_for: {count: 2}, duration: {base: 65s}, kernel: "
         "{name: sleep}}\n"
         "cluster:\n  node_pools: [{name: n, cpu: 2, memory: 4Gi, count: 1}]\n";
  const Result r = run("run '" + (dir / "long.yaml").string() + "' --backend local --out '" +
                       (dir / "out").string() + "'");
  REQUIRE(r.status == 0);
  CHECK(r.err ==
        "0/2 tasks done, 2 running, 0 pending; 1m00s elapsed\n"
        "2/2 tasks done, 0 running, 0 pending; 1m05s elapsed\n");
}

TEST_CASE("cli: a simulation does not replace a local run's results in the default directory", "[cli]") {
  // simulate and run share out/NAME: a simulation replaced a local run's trace there, silently.
  const fs::path dir = scratch("default-out");
  std::ofstream(dir / "c.yaml") << "name: shared-default\noverheads: none\npipeline:\n  steps:\n"
                                   "    - {name: w, duration: {base: 1s}, kernel: {name: noop}}\n"
                                   "cluster: {node_pools: [{name: n, cpu: 1, memory: 1Gi, count: 1}]}\n";
  const std::string in_dir = "cd '" + dir.string() + "' && '" + std::string(SHARDFLOW_EXE) + "' ";
  const auto sh = [&](const std::string& args) {
    return std::system(
        (in_dir + args + " >'" + (dir / "out.txt").string() + "' 2>'" + (dir / "err.txt").string() + "'")
            .c_str());
  };
  REQUIRE(sh("run c.yaml --backend local -q") == 0);
  CHECK(WEXITSTATUS(sh("simulate c.yaml -q")) == 2);
  CHECK(
      slurp(dir / "err.txt") ==
      "--out: out/shared-default holds the results of a local run (trace.json), which this simulation would "
      "replace: give --out DIR for it, or remove them first\n");
  CHECK(slurp(dir / "out" / "shared-default" / "trace.json").find("\"backend\": \"local\"") !=
        std::string::npos);
  // With --out the user says where; a local run again, or over a simulation, replaces as before.
  CHECK(sh("simulate c.yaml -q --out out/shared-default") == 0);
  CHECK(sh("run c.yaml --backend local -q") == 0);
}
