// The `shardflow` command as a user meets it: exit codes, messages, files written.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "cli_helpers.hpp"
#include "text_place.hpp"
namespace fs = std::filesystem;
using namespace shardflow::clitest;

TEST_CASE("cli: validate reports each scenario that loads", "[cli]") {
  const Result r =
      run("validate scenarios/argo-parallelism-limit.yaml scenarios/argo-parallelism-nested-dag.yaml");
  CHECK(r.err == "");
  CHECK(r.status == 0);
  CHECK(r.out ==
        "scenarios/argo-parallelism-limit.yaml: ok (10 tasks from 1 component step; 1 node in 1 pool)\n"
        "scenarios/argo-parallelism-nested-dag.yaml: ok (15 tasks from 15 component steps; 1 node in 1 "
        "pool)\n");
}

TEST_CASE("cli: validate checks every file, the bad ones too, and exits 2 if any is bad", "[cli]") {
  const Result r =
      run("validate scenarios/argo-parallelism-limit.yaml tests/data/scenario-bad-syntax.yaml "
          "scenarios/argo-parallelism-nested-dag.yaml");
  CHECK(r.status == 2);
  CHECK(r.out ==
        "scenarios/argo-parallelism-limit.yaml: ok (10 tasks from 1 component step; 1 node in 1 pool)\n"
        "scenarios/argo-parallelism-nested-dag.yaml: ok (15 tasks from 15 component steps; 1 node in 1 "
        "pool)\n");
  CHECK(r.err == "tests/data/scenario-bad-syntax.yaml:5:4: YAML syntax error: end of map flow not found\n");
  // A file that is missing, or a directory, is one more problem: the others are still checked.
  const Result m = run("validate scenarios/argo-parallelism-limit.yaml no-such.yaml scenarios");
  CHECK(m.status == 2);
  CHECK(m.out ==
        "scenarios/argo-parallelism-limit.yaml: ok (10 tasks from 1 component step; 1 node in 1 pool)\n");
  CHECK(m.err ==
        "no-such.yaml: does not exist\n"
        "scenarios: is a directory; name a file in it (a scenario or compiled KFP pipeline, YAML, or a "
        "WfCommons instance, JSON)\n");
  // A --set that fails on one of several files: its message names no file, so the file is named after it.
  const Result s =
      run("validate scenarios/argo-parallelism-limit.yaml scenarios/shard-preprocess-train.yaml "
          "--set 'cluster.node_pools[cpu].count=3'");
  CHECK(s.status == 2);
  CHECK(s.err ==
        "--set cluster.node_pools[cpu].count=3: cluster.node_pools[cpu]: no element named \"cpu\" in "
        "cluster.node_pools (names: default)\nscenarios/argo-parallelism-limit.yaml: 1 problem\n");
}

TEST_CASE("cli: validate reports every problem of a file, then how many", "[cli]") {
  const fs::path dir = scratch("validate-many");
  const std::string bad = (dir / "bad.yaml").string();
  std::ofstream(bad) << "name: bad\n"
                        "pipeline:\n"
                        "  steps:\n"
                        "    - name: a\n"
                        "      duraton: {base: 1s}\n"
                        "    - name: b\n"
                        "      after: [a]\n"
                        "      resources: {memory: 2Gb}\n"
                        "cluster:\n"
                        "  node_pools:\n"
                        "    - {name: p, cpu: 4, memory: 8Gi, count: -2}\n";
  const Result r = run("validate '" + bad + "' scenarios/argo-parallelism-limit.yaml");
  CHECK(r.status == 2);
  CHECK(r.out ==
        "scenarios/argo-parallelism-limit.yaml: ok (10 tasks from 1 component step; 1 node in 1 pool)\n");
  CHECK(r.err ==
        bad + ":5:7: pipeline.steps[0].duraton: unknown key \"duraton\" (did you mean \"duration\"?)\n" +
            bad +
            ":8:27: pipeline.steps[1].resources.memory: expected a size such as 16Gi, 512Mi, 10GiB or 1e9, "
            "got \"2Gb\"\n" +
            bad + ":11:45: cluster.node_pools[0].count: must be >= 0, got -2\n" + bad + ": 3 problems\n");
  // run and simulate report them all too (they stopped at the first), and write nothing.
  for (const std::string command : {"run", "simulate"}) {
    const Result sim = run(command + " '" + bad + "' --out '" + (dir / "out").string() + "'");
    CHECK(sim.status == 2);
    CHECK(sim.out == "");
    CHECK(sim.err == r.err);
    CHECK_FALSE(fs::exists(dir / "out"));
  }
}

TEST_CASE("cli: validate refuses an unknown kernel as run --backend local does", "[cli]") {
  const std::string set = " --set 'pipeline.steps[shard].kernel.name=shard_stat'";
  // Blamed on the --set that gave the name, not on the file's kernel mapping.
  const std::string message =
      "--set pipeline.steps[shard].kernel.name=shard_stat: pipeline.steps[0].kernel.name: unknown kernel "
      "\"shard_stat\" (did you mean \"shard_stats\"?)\n";
  const Result v = run("validate scenarios/local-ridge.yaml" + set);
  CHECK(v.status == 2);
  CHECK(v.out == "");
  CHECK(v.err == message);
  const Result r = run("run scenarios/local-ridge.yaml --backend local -q --out '" +
                       scratch("bad-kernel").string() + "'" + set);
  CHECK(r.status == 2);
  CHECK(r.err == message);
}

TEST_CASE("cli: validate reports every kernel problem, by line, the upstream ones too", "[cli]") {
  const std::string bad = (scratch("kernels") / "k.yaml").string();
  std::ofstream(bad) << "name: k\n"
                        "pipeline:\n"
                        "  steps:\n"
                        "    - {name: shards, parallel_for: {count: 3}, kernel: {name: spin, secondz: 1}}\n"
                        "    - {name: agg, after: [shards], kernel: {name: aggregate}}\n"
                        "    - {name: solve, after: [agg], kernel: {name: ridge_solv, lambda: 1}}\n"
                        "cluster:\n"
                        "  node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]\n";
  const Result r = run("validate '" + bad + "'");
  CHECK(r.status == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        bad +
            ":4:78: pipeline.steps[0].kernel.secondz: unknown parameter \"secondz\" for kernel spin "
            "(expected one of: fail_attempts, seconds)\n" +
            bad +
            ":5:44: pipeline.steps[1].kernel: aggregate sums the shard statistics of the tasks before "
            "it, and none makes any: the steps before it (shards) run no shard_stats or aggregate "
            "kernel\n" +
            bad +
            ":6:50: pipeline.steps[2].kernel.name: unknown kernel \"ridge_solv\" (did you mean "
            "\"ridge_solve\"?)\n" +
            bad + ": 3 problems\n");
  // run --backend local refuses the run with every one of them; the simulator does not run kernels.
  const fs::path out = scratch("kernels-run") / "out";
  const Result local = run("run '" + bad + "' --backend local -q --out '" + out.string() + "'");
  CHECK(local.status == 2);
  CHECK(local.err == r.err);
  CHECK_FALSE(fs::exists(out));
  CHECK(run("run '" + bad + "' -q --out '" + out.string() + "'").status == 0);
}

TEST_CASE("cli: validate reports the kernel problems of the steps it could read beside other problems",
          "[cli]") {
  // shard is left out for its negative retries (its kernel is not looked at); other has nothing else
  // wrong, and its kernel problem is reported with the rest, not after the retries are fixed.
  const std::string bad = (scratch("kernels-and-more") / "k.yaml").string();
  std::ofstream(bad) << "name: two-mistakes\n"
                        "pipeline:\n"
                        "  steps:\n"
                        "    - name: shard\n"
                        "      parallel_for: {count: 4}\n"
                        "      retries: {max: -1}\n"
                        "      kernel: {name: shard_stat, rows: 100}\n"
                        "    - name: other\n"
                        "      kernel: {name: spinn}\n"
                        "    - {name: third, kernel: {name: sleep, secs: 1}, resources: {cpu: x}}\n"
                        "cluster:\n"
                        "  node_pools:\n"
                        "    - {name: p, cpu: 2, memory: 4Gi, count: 1}\n";
  const Result r = run("validate '" + bad + "'");
  CHECK(r.status == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        bad + ":6:22: pipeline.steps[0].retries.max: must be >= 0, got -1\n" + bad +
            ":9:22: pipeline.steps[1].kernel.name: unknown kernel \"spinn\" (did you mean \"spin\"?)\n" +
            bad +
            ":10:70: pipeline.steps[2].resources.cpu: expected a CPU quantity such as 4, 1.5 or 500m, got "
            "\"x\"\n" +
            bad + ": 3 problems\n");
}

TEST_CASE("cli: every scenario in scenarios/ validates", "[cli]") {
  std::string files;
  for (const auto& e : fs::directory_iterator(fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".yaml") files += " scenarios/" + e.path().filename().string();
  REQUIRE(!files.empty());
  const Result r = run("validate" + files);
  CHECK(r.err == "");
  CHECK(r.status == 0);
}

TEST_CASE("cli: bad input exits 2 with one clear message", "[cli]") {
  SECTION("a scenario with a negative parallelism") {
    const fs::path dir = scratch("bad");
    std::ofstream(dir / "bad.yaml") << "name: bad\n"
                                       "pipeline:\n"
                                       "  steps:\n"
                                       "    - name: shard\n"
                                       "      parallel_for: {count: 4, parallelism: -2}\n"
                                       "      resources: {cpu: 1}\n"
                                       "cluster:\n"
                                       "  node_pools: [{name: a, cpu: 4, memory: 8Gi, count: 1}]\n";
    const Result r = run("validate '" + (dir / "bad.yaml").string() + "'");
    CHECK(r.status == 2);
    CHECK(r.out == "");
    CHECK(r.err == (dir / "bad.yaml").string() +
                       ":5:45: pipeline.steps[0].parallel_for.parallelism: must be >= 0, got -2\n");
  }
  SECTION("a file that does not exist") {
    const Result r = run("explain nope.yaml");
    CHECK(r.status == 2);
    CHECK(r.err.find("nope.yaml") != std::string::npos);
  }
  SECTION("an unknown option") {
    const Result r = run("simulate scenarios/argo-parallelism-limit.yaml --sead 3");
    CHECK(r.status == 2);
    CHECK(r.err.find("--sead") != std::string::npos);
  }
  SECTION("a seed that is not a number") {
    const Result r = run("simulate scenarios/argo-parallelism-limit.yaml --seed many");
    CHECK(r.status == 2);
    CHECK(r.err.find("--seed: want a whole number from 0 to 18446744073709551615, got \"many\"") == 0);
  }
  SECTION("a negative seed or one past 2^64 - 1 (CLI11 alone would wrap them)") {
    for (const char* seed : {"-1", "18446744073709551616"}) {
      const Result r = run(std::string("simulate scenarios/argo-parallelism-limit.yaml --seed ") + seed);
      CHECK(r.status == 2);
      CHECK(r.err.find(std::string("got \"") + seed + "\"") != std::string::npos);
    }
  }
  SECTION("no command") {
    const Result r = run("");
    CHECK(r.status == 2);
    CHECK(r.err.find("A subcommand is required") != std::string::npos);
  }
  SECTION("an unknown command") {
    const Result r = run("simualte scenarios/argo-parallelism-limit.yaml");
    CHECK(r.status == 2);
    CHECK(r.err ==
          "shardflow: unknown command \"simualte\" (did you mean simulate?); the commands are validate, "
          "explain, simulate, run, "
          "sweep, merge, compare, "
          "calibrate, report and k8s (shardflow --help)\n");
  }
  SECTION("an --out that cannot be a directory, found before simulating") {
    const fs::path dir = scratch("out-is-a-file");
    std::ofstream(dir / "taken") << "x";
    const Result r =
        run("simulate scenarios/argo-parallelism-limit.yaml --out '" + (dir / "taken").string() + "'");
    CHECK(r.status == 2);
    CHECK(r.out == "");
    CHECK(r.err == "--out: " + (dir / "taken").string() +
                       " is a file, not a directory: --out names the directory the results go in\n");
    const Result under = run("simulate scenarios/argo-parallelism-limit.yaml --out '" +
                             (dir / "taken" / "sub").string() + "'");
    CHECK(under.status == 2);
    CHECK(under.err == "--out: " + (dir / "taken").string() + " is a file, not a directory (" +
                           (dir / "taken" / "sub").string() +
                           " would be made in it): --out names the directory the results go in\n");
  }
  SECTION("an --out directory no file can be made in, found before running (not after, losing the run)") {
    // A mode of 0500 stops a user but not root; procfs takes no new file from anyone.
    const fs::path ro = scratch("out-read-only") / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    const fs::path dir = ::geteuid() == 0 ? fs::path("/proc/self") : ro;
    if (fs::is_directory(dir)) {
      const Result r =
          run("run scenarios/argo-parallelism-limit.yaml --backend local --time-scale 0.02 --out " +
              dir.string());
      CHECK(r.status == 2);
      CHECK(r.out == "");
      CHECK(r.err.find("--out: cannot write in directory " + dir.string() + " (") == 0);
      const Result s = run("simulate scenarios/argo-parallelism-limit.yaml --out " + dir.string());
      CHECK(s.status == 2);
      CHECK(s.err.find("--out: cannot write in directory " + dir.string() + " (") == 0);
    } else {
      WARN("no directory that refuses files here (root without /proc): not checked");
    }
    fs::permissions(ro, fs::perms::owner_all);
  }
  SECTION("--out through a symlink to nothing: said so") {
    const fs::path dir = scratch("out-dangling");
    fs::create_symlink("nowhere/x", dir / "dang");
    for (const std::string& out : {(dir / "dang").string(), (dir / "dang" / "sub").string()}) {
      const Result r = run("simulate scenarios/argo-parallelism-limit.yaml --out '" + out + "'");
      CHECK(r.status == 2);
      CHECK(r.err ==
            "--out: " + (dir / "dang").string() +
                " is a symlink to nowhere/x, which does not exist: make it, or name another directory\n");
    }
  }
  SECTION("a result file that cannot be written after the run: the summary is printed, then what failed") {
    // A directory where metrics.json goes: trace.json and trace.csv are written, then the write fails.
    const fs::path dir = scratch("out-blocked");
    fs::create_directories(dir / "metrics.json");
    const Result r = run("simulate scenarios/argo-parallelism-limit.yaml --out '" + dir.string() + "'");
    CHECK(r.status == 1);
    CHECK(r.out.rfind("simulated argo-parallelism-limit (seed ", 0) == 0);
    CHECK(r.out.find("\n  makespan     ") != std::string::npos);
    CHECK(r.out.find("wrote ") == std::string::npos);
    CHECK(r.err == "simulate: cannot write " + (dir / "metrics.json").string() +
                       " (Is a directory): the results in " + dir.string() +
                       " are not written: the files there are as they were (the summary is above)\n");
    // None of the set is put in place, and no temporary file is left.
    CHECK(!fs::exists(dir / "trace.json"));
    for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().filename() == "metrics.json");
    // A sweep's and a comparison's table the same way.
    fs::create_directories(dir / "sweep.csv");
    const Result sw =
        run("sweep scenarios/argo-parallelism-limit.yaml --vary "
            "'pipeline.steps[sleep].parallel_for.parallelism=1,2' -r 1 --out '" +
            dir.string() + "'");
    CHECK(sw.status == 1);
    CHECK(sw.out.find("pipeline.steps[sleep].parallel_for.parallelism") != std::string::npos);
    CHECK(sw.out.find("wrote ") == std::string::npos);
    CHECK(sw.err == "sweep: cannot write " + (dir / "sweep.csv").string() +
                        " (Is a directory): the results in " + dir.string() +
                        " are not written: the files there are as they were (the summary is above)\n");
    // `run` says it is run, whatever the backend.
    const Result as_run = run("run scenarios/argo-parallelism-limit.yaml -q --out '" + dir.string() + "'");
    CHECK(as_run.status == 1);
    CHECK(as_run.err == "run: cannot write " + (dir / "metrics.json").string() +
                            " (Is a directory): the results in " + dir.string() +
                            " are not written: the files there are as they were\n");
    const Result q = run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + dir.string() + "'");
    CHECK(q.status == 1);
    CHECK(q.out == "");
    CHECK(q.err == "simulate: cannot write " + (dir / "metrics.json").string() +
                       " (Is a directory): the results in " + dir.string() +
                       " are not written: the files there are as they were\n");
  }
}

TEST_CASE("cli: simulate's queue wait says what it measures: pods, or work-queue items", "[cli]") {
  const fs::path dir = scratch("queue-wait");
  const std::string cluster =
      "cluster: {node_pools: [{name: p, count: 2, cpu: 8, memory: 32Gi}]}\noverheads: none\n";
  std::ofstream(dir / "static.yaml")
      << "name: s\npipeline: {steps: [{name: a, parallel_for: {count: 100}, duration: "
         "{base: 10s}, resources: {cpu: 1, memory: 1Gi}}]}\n"
      << cluster;
  std::ofstream(dir / "queue.yaml")
      << "name: q\npipeline: {steps: [{name: a, parallel_for: {count: 100, workers: 10}, "
         "duration: {base: 10s}, resources: {cpu: 1, memory: 1Gi}}]}\n"
      << cluster;
  // 16 slots for 100 pods of 10 s: waves of 16 (nearest rank: the 50th waits 30 s, the 95th 50 s, the 99th 60
  // s); 10 workers take 10 items at a time (40 s, 90 s, 90 s).
  CHECK(run("simulate --no-files '" + (dir / "static.yaml").string() + "'")
            .out.find("  queue wait   p50 30.000 s, p95 50.000 s, p99 60.000 s (pod created -> bound)\n") !=
        std::string::npos);
  CHECK(run("simulate --no-files '" + (dir / "queue.yaml").string() + "'")
            .out.find(
                "  queue wait   p50 40.000 s, p95 90.000 s, p99 90.000 s (pod created -> bound; a work-queue "
                "item: queued -> taken by a worker pod)\n") != std::string::npos);
}

TEST_CASE("cli: - reads the scenario from standard input, and its problems name /dev/stdin", "[cli]") {
  const Result ok = run("simulate - --no-files < scenarios/argo-parallelism-limit.yaml");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("  makespan     50s (50.000 s)") != std::string::npos);
  const Result bad = run("explain - < tests/data/scenario-bad-syntax.yaml");
  CHECK(bad.status == 2);
  CHECK(bad.err == "/dev/stdin:5:4: YAML syntax error: end of map flow not found\n");
  // validate too (it read a file named "-", which did not exist).
  const Result valid = run("validate - < scenarios/argo-parallelism-limit.yaml");
  CHECK(valid.status == 0);
  CHECK(valid.out == "/dev/stdin: ok (10 tasks from 1 component step; 1 node in 1 pool)\n");
  const Result invalid = run("validate - < tests/data/scenario-bad-syntax.yaml");
  CHECK(invalid.status == 2);
  CHECK(invalid.err == "/dev/stdin:5:4: YAML syntax error: end of map flow not found\n");
}

TEST_CASE("cli: a run's result files are a set: put in place together or not at all", "[cli]") {
  const auto seed_of = [](const fs::path& trace) {
    return nlohmann::json::parse(slurp(trace))["seed"].get<std::uint64_t>();
  };
  SECTION("a failure after some files were written keeps the earlier run's files, all of them") {
    const fs::path dir = scratch("set-kept");
    REQUIRE(run("simulate scenarios/argo-parallelism-limit.yaml --seed 1 -q --out '" + dir.string() + "'")
                .status == 0);
    const std::string metrics = slurp(dir / "metrics.json");
    fs::remove(dir / "report.html");
    fs::create_directories(dir / "report.html");  // in the way of the page, written after the trace
    const Result r =
        run("simulate scenarios/argo-parallelism-limit.yaml --seed 2 -q --out '" + dir.string() + "'");
    CHECK(r.status == 1);
    CHECK(r.err == "simulate: cannot write " + (dir / "report.html").string() +
                       " (Is a directory): the results in " + dir.string() +
                       " are not written: the files there are as they were\n");
    CHECK(seed_of(dir / "trace.json") == 1);
    CHECK(slurp(dir / "metrics.json") == metrics);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      CHECK(e.path().filename().string()[0] != '.');  // no temporary file left
      ++files;
    }
    CHECK(files == 6);  // trace.json, trace.csv, metrics.json, metrics.csv, timeline.json and the directory
  }
  SECTION("a result file that is a symlink is replaced; the file it pointed to is left as it was") {
    const fs::path dir = scratch("set-symlink");
    fs::create_directories(dir / "out");
    std::ofstream(dir / "precious.txt") << "keep me\n";
    fs::create_symlink("../precious.txt", dir / "out" / "trace.json");
    fs::create_symlink("../nowhere/new.json", dir / "out" / "report.html");  // dangling
    REQUIRE(run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + (dir / "out").string() + "'")
                .status == 0);
    CHECK(slurp(dir / "precious.txt") == "keep me\n");
    CHECK(fs::is_regular_file(fs::symlink_status(dir / "out" / "trace.json")));
    CHECK(fs::is_regular_file(fs::symlink_status(dir / "out" / "report.html")));
    CHECK(!fs::exists(dir / "nowhere"));
    CHECK(seed_of(dir / "out" / "trace.json") == 1);
  }
  SECTION("the set is put in place under a lock on the directory: a writer waits for the holder") {
    // flock(1) holds the directory's lock (-o: not passed on to the shell) while a simulate into it runs: the
    // simulate writes its files, then waits; half a second later none is in place. Once the lock is let go,
    // they all are.
    const fs::path dir = scratch("set-lock");
    const std::string cmd =
        "cd '" + std::string(SHARDFLOW_SOURCE_DIR) + "' && flock -o '" + dir.string() + "' sh -c \"'" +
        SHARDFLOW_EXE + "' simulate -q scenarios/argo-parallelism-limit.yaml --out '" + dir.string() +
        "' & sleep 0.5; ls -A '" + dir.string() + "' > '" + (dir / "..").string() + "/set-lock.seen'\"; wait";
    REQUIRE(std::system(cmd.c_str()) == 0);
    // While held: only the temporary files (dot files), no result in place.
    std::istringstream seen(slurp(dir / ".." / "set-lock.seen"));
    for (std::string name; std::getline(seen, name);) CHECK(name[0] == '.');
    // The simulate ends after the lock is let go (`wait` in the shell above waits for it too).
    for (int i = 0; i < 600 && !fs::exists(dir / "report.html"); ++i) ::usleep(100'000);
    CHECK(fs::exists(dir / "trace.json"));
    CHECK(fs::exists(dir / "report.html"));
  }
  SECTION("a page with a name too long for its temporary file's usual name is written") {
    const fs::path dir = scratch("set-long");
    REQUIRE(run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + dir.string() + "'").status ==
            0);
    const fs::path page = dir / (std::string(250, 'p') + ".html");
    const Result r = run("report '" + dir.string() + "' -q --out '" + page.string() + "'");
    CHECK(r.status == 0);
    CHECK(r.err == "");
    CHECK(fs::file_size(page) == fs::file_size(dir / "report.html"));
  }
}

// main() builds only the named command's CLI11 options when it can (for speed: issue #13); help, errors
// and a later word that names another command read exactly as with every command built.
TEST_CASE("cli: building only the named command changes nothing a user sees", "[cli]") {
  SECTION("--help lists every command") {
    const Result r = run("--help");
    CHECK(r.status == 0);
    const auto at = r.out.find("\nSubcommands:\n");
    REQUIRE(at != std::string::npos);
    CHECK(r.out.substr(at).find("\n  validate ") == 13);
    std::string names;
    for (std::size_t p = at + 14; p < r.out.size() && r.out.compare(p, 2, "  ") == 0;
         p = r.out.find('\n', p) + 1)
      names += r.out.substr(p + 2, r.out.find(' ', p + 2) - p - 2) + " ";
    CHECK(names == "validate explain simulate run sweep merge compare calibrate report k8s ");
  }
  SECTION("a command's --help, with the other commands built") {
    const Result r = run("simulate --help");
    CHECK(r.status == 0);
    CHECK(r.out.find("Simulate a scenario on its modelled Kubernetes cluster; print a summary and write the "
                     "trace and metrics (JSON, CSV) and a timeline for ui.perfetto.dev (the same as `run "
                     "--backend sim`)\nUsage: " +
                     std::string(SHARDFLOW_EXE) + " simulate [OPTIONS] file\n\nPositionals:\n") == 0);
  }
  SECTION("an error of the one command built") {
    for (const char* args : {"simulate", "sweep"}) {
      const Result r = run(args);
      CHECK(r.status == 2);
      CHECK(r.out == "");
      CHECK(r.err == "file is required\nRun with --help for more information.\n");
    }
    const Result k = run("k8s");
    CHECK(k.status == 2);
    CHECK(k.err == "A subcommand is required\nRun with --help for more information.\n");
  }
  SECTION("a later word naming another command: every command built, as CLI11 reads it") {
    const Result r = run("validate tests/data/wfcommons/bad/good.json explain");
    CHECK(r.status == 2);
    CHECK(r.err == "explain: does not exist\n");  // validate reports it with the other files' problems
  }
  SECTION("a directory for a file: says to name a file in it") {
    for (const char* cmd : {"simulate", "explain", "sweep", "compare", "calibrate x", "validate"}) {
      std::string c = cmd;
      const bool calibrate = c == "calibrate x";
      const Result r = run(calibrate ? "calibrate scenarios x" : c + " scenarios");
      INFO(cmd);
      CHECK(r.status == 2);
      CHECK(r.err == std::string(c == "validate" ? "" : "file: ") +
                         "scenarios: is a directory; name a file in it (a scenario or compiled KFP pipeline, "
                         "YAML, or a WfCommons instance, JSON)\n" +
                         (c == "validate" ? "" : "Run with --help for more information.\n"));
    }
  }
}

// CLI11 names a mistyped option as an extra argument after its value ("The following arguments were not
// expected: 3 --sead") or not at all ("file is required" when the file is missing too); main() names it,
// with the options (or commands) closest to it: containing it or contained in it, else a small edit
// distance, a transposition counting as one edit.
TEST_CASE("cli: a mistyped option or command is named, with what was probably meant", "[cli]") {
  const std::string f = " scenarios/argo-parallelism-limit.yaml";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"simulate" + f + " --sead 3",  // one edit from --seed, two from --set
       "shardflow simulate: unknown option \"--sead\" (did you mean --seed?); shardflow simulate --help "
       "lists "
       "the options\n"},
      {"simulate" + f + " --sed 3",  // one edit from both
       "shardflow simulate: unknown option \"--sed\" (did you mean --seed or --set?); shardflow simulate "
       "--help "
       "lists the options\n"},
      {"run" + f + " --scale 0.01",  // contained in --time-scale
       "shardflow run: unknown option \"--scale\" (did you mean --time-scale?); shardflow run --help lists "
       "the "
       "options\n"},
      {"sweep" + f + " --vary-x a",  // contains --vary; CLI11 said "--vary is required"
       "shardflow sweep: unknown option \"--vary-x\" (did you mean --vary?); shardflow sweep --help lists "
       "the "
       "options\n"},
      {"sweep" + f + " --vary a=1 --deadlien=3s",  // a transposition, given with =
       "shardflow sweep: unknown option \"--deadlien\" (did you mean --deadline?); shardflow sweep --help "
       "lists "
       "the options\n"},
      // A space after a comma: CLI11 said "The following argument was not expected: 6".
      {"sweep" + f + " --vary pipeline.steps[sleep].parallel_for.parallelism=1, 2",
       "--vary pipeline.steps[sleep].parallel_for.parallelism=1, 2: a space after a comma split one value "
       "list "
       "in two; write it without the space (pipeline.steps[sleep].parallel_for.parallelism=1,2) or quote "
       "it\n"},
      // Another command's option (none close in this one): its commands named; one before the command: said.
      {"simulate" + f + " --backend local",
       "shardflow simulate: unknown option \"--backend\" (an option of `shardflow run` and `shardflow "
       "compare`); "
       "shardflow simulate --help lists the options\n"},
      {"validate" + f + " --vary a=1",
       "shardflow validate: unknown option \"--vary\" (an option of `shardflow sweep`); shardflow validate "
       "--help lists the options\n"},
      {"--seed 3 simulate" + f,
       "shardflow: unknown option \"--seed\" (options go after the command: shardflow COMMAND --seed ...); "
       "shardflow --help lists the options\n"},
      {"simulate --bogus",  // nothing close; CLI11 said "file is required"
       "shardflow simulate: unknown option \"--bogus\"; shardflow simulate --help lists the options\n"},
      {"simulate" + f + " -x",
       "shardflow simulate: unknown option \"-x\"; shardflow simulate --help lists the options\n"},
      {"k8s status --kubeconfg x",
       "shardflow k8s status: unknown option \"--kubeconfg\" (did you mean --kubeconfig?); shardflow k8s "
       "status "
       "--help lists the options\n"},
      {"k8s stat x",
       "shardflow k8s: unknown command \"stat\" (did you mean status?); the commands are cleanup and status "
       "(shardflow k8s --help)\n"},
      {"simulat" + f,
       "shardflow: unknown command \"simulat\" (did you mean simulate?); the commands are validate, explain, "
       "simulate, run, sweep, merge, compare, calibrate, report and k8s (shardflow --help)\n"},
      {"xyzzy",
       "shardflow: unknown command \"xyzzy\"; the commands are validate, explain, simulate, run, sweep, "
       "merge, "
       "compare, calibrate, report and k8s (shardflow --help)\n"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Result r = run(args);
    CHECK(r.status == 2);
    CHECK(r.out == "");
    CHECK(r.err == message);
  }
  SECTION("values that look like options are values: a negative seed is still the seed's error") {
    const Result r = run("simulate" + f + " --seed -1");
    CHECK(r.status == 2);
    CHECK(r.err.find("--seed: want a whole number from 0 to 18446744073709551615, got \"-1\"") == 0);
  }
  SECTION("after --, words are positional") {
    const Result r = run("validate -- --not-an-option");
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown option") == std::string::npos);
  }
}

TEST_CASE("cli: --set changes the scenario for one run", "[cli]") {
  const fs::path dir = scratch("simulate-set");
  // parallelism 5 instead of 2: two waves of 10 s instead of five.
  const Result r =
      run("simulate scenarios/argo-parallelism-limit.yaml -q --set "
          "'pipeline.steps[sleep].parallel_for.parallelism=5' --out '" +
          dir.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(slurp(dir / "metrics.json"))["makespan_s"] == 20.0);
  const Result e =
      run("explain scenarios/argo-parallelism-limit.yaml --json --set "
          "'pipeline.steps[sleep].parallel_for.count=3'");
  REQUIRE(e.status == 0);
  CHECK(nlohmann::json::parse(e.out)["tasks"] == 3);
  const Result bad =
      run("validate scenarios/argo-parallelism-limit.yaml --set 'cluster.node_pools[gpu].count=1'");
  CHECK(bad.status == 2);
  CHECK(bad.err ==
        "--set cluster.node_pools[gpu].count=1: cluster.node_pools[gpu]: no element named \"gpu\" in "
        "cluster.node_pools (names: default)\n");
}

TEST_CASE("cli: --overlay and --cluster change the scenario for one run", "[cli]") {
  const fs::path dir = scratch("overlay");
  // Three nodes, and the steps 20 s each instead of 10.
  std::ofstream(dir / "more.yaml") << "cluster: {node_pools: [{name: default, count: 3}]}\n"
                                      "pipeline: {steps: [{name: sleep, duration: {base: 20s}}]}\n";
  std::ofstream(dir / "bad.yaml") << "pipeline:\n"
                                     "  steps:\n"
                                     "    - name: sleep\n"
                                     "      duraton: {base: 1s}\n";
  const Result v =
      run("validate scenarios/argo-parallelism-limit.yaml --overlay '" + (dir / "more.yaml").string() + "'");
  CHECK(v.err == "");
  CHECK(v.status == 0);
  CHECK(v.out ==
        "scenarios/argo-parallelism-limit.yaml: ok (10 tasks from 1 component step; 3 nodes in 1 pool)\n");
  const Result sim = run("simulate scenarios/argo-parallelism-limit.yaml -q --overlay '" +
                         (dir / "more.yaml").string() + "' --out '" + (dir / "out").string() + "'");
  REQUIRE(sim.status == 0);
  CHECK(nlohmann::json::parse(slurp(dir / "out" / "metrics.json"))["makespan_s"] == 100.0);
  const Result bad =
      run("validate scenarios/argo-parallelism-limit.yaml --overlay '" + (dir / "bad.yaml").string() + "'");
  CHECK(bad.status == 2);
  CHECK(bad.out == "");
  CHECK(bad.err ==
        (dir / "bad.yaml").string() +
            ":4:7: pipeline.steps[0].duraton: unknown key \"duraton\" (did you mean \"duration\"?)\n");
  const Result missing = run("explain scenarios/argo-parallelism-limit.yaml --overlay nope.yaml");
  CHECK(missing.status == 2);
  CHECK(missing.err == "--overlay nope.yaml: cannot open the file (it does not exist or is not readable)\n");
  const Result local = run("validate scenarios/argo-parallelism-limit.yaml --cluster local");
  CHECK(local.status == 0);
  CHECK(local.out.find("; 1 node in 1 pool)\n") != std::string::npos);
  const Result other = run("validate scenarios/argo-parallelism-limit.yaml --cluster gke");
  CHECK(other.status == 2);
  CHECK(
      other.err ==
      "--cluster: expected \"local\" or a cluster file (YAML with `cluster:`, for an imported pipeline), got "
      "\"gke\", which does not exist\n");
  // A cluster file or a --param given to a scenario, which has its own cluster and no parameters.
  const Result file =
      run("validate scenarios/argo-parallelism-limit.yaml --cluster scenarios/local-ridge.yaml");
  CHECK(file.status == 2);
  CHECK(file.err ==
        "--cluster: a cluster file is for an imported pipeline (compiled KFP, WfCommons); "
        "scenarios/argo-parallelism-limit.yaml is a scenario with a cluster of its own: change it with "
        "--overlay "
        "scenarios/local-ridge.yaml or --set, or give --cluster local\n");
  const Result param = run("validate scenarios/argo-parallelism-limit.yaml --param shards=3");
  CHECK(param.status == 2);
  CHECK(param.err ==
        "--param: a compiled Kubeflow pipeline's parameter; scenarios/argo-parallelism-limit.yaml is a "
        "scenario, "
        "which has none: change its fields with --set\n");
  const Result wf = run("validate tests/data/wfcommons/blast-chameleon-small-001.json --param shards=3");
  CHECK(wf.status == 2);
  CHECK(wf.err ==
        "--param: a compiled Kubeflow pipeline's parameter; "
        "tests/data/wfcommons/blast-chameleon-small-001.json is "
        "a WfCommons instance, which has none: change its fields with --set\n");
}

TEST_CASE("cli: sweep finds the cheapest configuration that meets a deadline", "[cli]") {
  const fs::path dir = scratch("sweep");
  const Result r =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5' -r 2 --deadline 30s --out '" +
          dir.string() + "'");
  // An Argo example has no prices: said, since "cheapest" then means nothing.
  CHECK(r.err ==
        "sweep: warning: no node pool has a price_per_hour: every configuration costs 0, and the cheapest "
        "that meets the deadline is the fastest\n");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("3 configurations x 2 replications") != std::string::npos);
  CHECK(r.out.find("(30 s): pipeline.steps[sleep].parallel_for.parallelism=5;") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir / "sweep.json"));
  CHECK(j["configurations"][0]["makespan_s"]["mean"] == 100.0);
  CHECK(j["configurations"][2]["makespan_s"]["mean"] == 20.0);
  CHECK(j["recommended"] == 2);
  const std::string csv = slurp(dir / "sweep.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);  // header + 3 configurations
  const std::string page = slurp(dir / "report.html");
  CHECK(page.find("data-points=\"3\"") != std::string::npos);
  CHECK(page.find("<circle class=\"pt pareto rec\"") != std::string::npos);
  fs::remove(dir / "report.html");
  const Result rebuilt = run("report '" + dir.string() + "'");
  CHECK(rebuilt.out == "wrote " + (dir / "report.html").string() + " (sweep report)\n");
  CHECK(slurp(dir / "report.html") == page);
  CHECK(rebuilt.err == "");
  // A run's files beside the sweep's: the newer is reported, and the other named; with one time for both
  // (a copy that did not keep them), the first kind of trace.json, sweep.json, compare.json.
  {
    const fs::path both = scratch("report-both");
    REQUIRE(run("sweep scenarios/argo-parallelism-limit.yaml --vary "
                "'pipeline.steps[sleep].parallel_for.parallelism=1,2' "
                "-r 1 -q --out '" +
                both.string() + "'")
                .status == 0);
    REQUIRE(run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + both.string() + "'").status ==
            0);
    fs::last_write_time(both / "sweep.json",
                        fs::last_write_time(both / "trace.json") - std::chrono::seconds(5));
    const Result newer = run("report '" + both.string() + "'");
    CHECK(newer.out == "wrote " + (both / "report.html").string() + " (run report)\n");
    CHECK(newer.err ==
          "warning: " + both.string() +
              " also holds sweep.json (a sweep); reporting a run (trace.json, the newest): give each "
              "command its own --out\n");
    fs::last_write_time(both / "sweep.json",
                        fs::last_write_time(both / "trace.json") + std::chrono::seconds(5));
    CHECK(run("report '" + both.string() + "'").out ==
          "wrote " + (both / "report.html").string() + " (sweep report)\n");
    fs::last_write_time(both / "sweep.json", fs::last_write_time(both / "trace.json"));
    const Result tie = run("report '" + both.string() + "'");
    CHECK(tie.out == "wrote " + (both / "report.html").string() + " (run report)\n");
    CHECK(tie.err ==
          "warning: " + both.string() +
              " also holds sweep.json (a sweep); reporting a run (trace.json, written at the same time as "
              "another: the first of trace.json, sweep.json, compare.json): give each command its own "
              "--out\n");
  }
  const Result bad =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --deadline soon");
  CHECK(bad.status == 2);
  CHECK(bad.err == "--deadline: expected a duration such as 90s, 2h30m or 500ms, got \"soon\"\n");
  // --budget is a cost: 0 or more; the recommendation is then the fastest within it.
  const Result budget =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --budget -1");
  CHECK(budget.status == 2);
  CHECK(budget.err.starts_with("--budget: want a finite number >= 0, got \"-1\"\n"));
  // -0 is 0 (it was printed "within the budget (-0)" and written as -0.0).
  const Result minus_zero =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' "
          "-r 1 --budget -0 --out '" +
          (dir / "minus-zero").string() + "'");
  CHECK(minus_zero.out.find("within the budget (mean cost 0 or less)") != std::string::npos);
  // --confidence is a percent below 100, said as given.
  const Result sure =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --deadline 1m --confidence 100");
  CHECK(sure.status == 2);
  CHECK(sure.err.starts_with("--confidence: want a number > 0 and < 100, got \"100\"\n"));
  // A fraction meant as a percent (0.9 for 90%) was taken as 0.9% sure, with no word.
  const Result fraction =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --deadline 1m --confidence 0.9");
  CHECK(fraction.status == 2);
  CHECK(fraction.err.starts_with(
      "--confidence: is a percent, 1 to below 100: \"0.9\" would be 0.9% sure; for 90% give 90\n"));
  const Result surer =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --deadline 1m --confidence "
          "99.999999 -r 10");
  CHECK(surer.status == 2);
  CHECK(surer.err ==
        "--confidence: 99.999999% that 95% of runs meet the deadline needs at least 360 replications, all of "
        "them by the deadline; -r is 10: give -r 360 or more (more runs let a configuration miss now and "
        "then: with -r 1440, 30 of them may miss)\n");
  // Blanks around the duration, as a quoted shell variable leaves them, are not part of it.
  const Result blanks =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5' -r 2 --deadline ' 30s ' -q --out '" +
          (dir / "blanks").string() + "'");
  CHECK(blanks.err == "");
  REQUIRE(blanks.status == 0);
  const auto jb = nlohmann::json::parse(slurp(dir / "blanks" / "sweep.json"));
  CHECK(jb["deadline_s"] == 30.0);
  CHECK(jb["recommended"] == 2);
  const Result zero =
      run("sweep scenarios/argo-parallelism-limit.yaml --vary "
          "'pipeline.steps[sleep].parallel_for.parallelism=1,2' --deadline 0s");
  CHECK(zero.status == 2);
  CHECK(zero.err == "--deadline: must be > 0, got 0s\n");
}

TEST_CASE("cli: sweep simulates price-only variants once, and --no-reuse writes the same files", "[cli]") {
  const fs::path dir = scratch("sweep-reuse");
  const std::string sweep =
      "sweep scenarios/argo-parallelism-limit.yaml --vary "
      "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5,10' "
      "--vary 'cluster.node_pools[default].price_per_hour=1,2.5' -r 4 --deadline 30s";
  const Result shared = run(sweep + " --out '" + (dir / "shared").string() + "'");
  const Result each = run(sweep + " --no-reuse --out '" + (dir / "each").string() + "'");
  CHECK(shared.err == "");
  CHECK(each.err == "");
  REQUIRE(shared.status == 0);
  REQUIRE(each.status == 0);
  // 4 parallelism limits x 2 prices: 4 distinct simulations a replication.
  const std::string line =
      "8 configurations x 4 replications, 32 runs, 16 distinct simulations (configurations "
      "that differ only in prices share them)\n";
  CHECK(shared.out.find(line) != std::string::npos);
  CHECK(each.out.find("8 configurations x 4 replications, 32 runs, 32 distinct simulations (--no-reuse)\n") !=
        std::string::npos);
  // Everything before that line (the table, the recommendation, the Pareto front) is the same.
  CHECK(shared.out.substr(0, shared.out.find("8 configurations x 4 replications, 32 runs")) ==
        each.out.substr(0, each.out.find("8 configurations x 4 replications, 32 runs")));
  for (const char* file : {"sweep.json", "sweep.csv", "report.html"})
    CHECK(slurp(dir / "shared" / file) == slurp(dir / "each" / file));
}

TEST_CASE("cli: slices of a --cluster local sweep run on machines of different shapes do not merge",
          "[cli]") {
  // --cluster local is the machine each slice ran on: one CPU here (taskset), all of this machine there.
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || std::system("taskset -c 0 true") != 0) {
    WARN("skipped: needs 2 CPUs and taskset");
    return;
  }
  const fs::path dir = scratch("sweep-local-shapes");
  const std::string sweep =
      "sweep scenarios/local-ridge.yaml --cluster local --vary "
      "'pipeline.steps[shard].parallel_for.parallelism=1,2' -r 1 -q --shard ";
  const std::string one = std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && taskset -c 0 '" + SHARDFLOW_EXE +
                          "' " + sweep + "0/2 --out '" + (dir / "s0").string() + "'";
  REQUIRE(std::system(one.c_str()) == 0);
  REQUIRE(run(sweep + "1/2 --out '" + (dir / "s1").string() + "'").status == 0);
  const Result merged = run("merge '" + (dir / "s0").string() + "' '" + (dir / "s1").string() + "'");
  CHECK(merged.status == 2);
  CHECK_THAT(merged.err,
             Catch::Contains(": inputs_hash: is ") &&
                 Catch::Contains("or --cluster local was run on machines of different CPUs or memory)"));
}

TEST_CASE("cli: sweep --shard slices merge into the one-machine sweep, byte for byte", "[cli]") {
  const fs::path dir = scratch("sweep-shards");
  const std::string sweep =
      "sweep scenarios/argo-parallelism-limit.yaml --vary "
      "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5,10' "
      "--vary 'pipeline.steps[sleep].duration={base: 10s, noise: {lognormal_sigma: 0.3}},{base: 5s}' -r 4 "
      "--deadline 60s -q";
  const Result whole = run(sweep + " --out '" + (dir / "whole").string() + "'");
  REQUIRE(whole.status == 0);
  std::string merge = "merge";
  for (int i : {1, 0, 2}) {
    const std::string out = (dir / ("s" + std::to_string(i))).string();
    const Result slice = run(sweep + " --shard " + std::to_string(i) + "/3 --out '" + out + "'");
    CHECK(slice.err == "");
    REQUIRE(slice.status == 0);
    merge += " '" + out + "'";
  }
  const Result merged = run(merge + " --out '" + (dir / "merged").string() + "'");
  CHECK(merged.err == "");
  REQUIRE(merged.status == 0);
  CHECK(merged.out.find("merged 3 slices; wrote ") != std::string::npos);
  CHECK(slurp(dir / "merged" / "sweep.json") == slurp(dir / "whole" / "sweep.json"));
  CHECK(slurp(dir / "merged" / "sweep.csv") == slurp(dir / "whole" / "sweep.csv"));
  CHECK(slurp(dir / "merged" / "report.html") == slurp(dir / "whole" / "report.html"));

  const Result missing = run("merge '" + (dir / "s0").string() + "' '" + (dir / "s2").string() + "'");
  CHECK(missing.status == 2);
  CHECK(missing.err == "merge: slice 1/3 is missing: give every slice (given: 0/3 in " +
                           (dir / "s0" / "sweep.json").string() + ", 2/3 in " +
                           (dir / "s2" / "sweep.json").string() + ")\n");
  const Result other = run(
      "sweep scenarios/argo-parallelism-limit.yaml --vary "
      "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5,10' "
      "--vary 'pipeline.steps[sleep].duration={base: 10s, noise: {lognormal_sigma: 0.3}},{base: 5s}' -r 5 "
      "--deadline 60s -q --shard 1/3 --out '" +
      (dir / "r5").string() + "'");
  REQUIRE(other.status == 0);
  const Result mixed = run("merge '" + (dir / "s0").string() + "' '" + (dir / "r5").string() + "' '" +
                           (dir / "s2").string() + "'");
  CHECK(mixed.status == 2);
  CHECK(mixed.err == (dir / "r5" / "sweep.json").string() + ": replications: is 5 here but 4 in " +
                         (dir / "s0" / "sweep.json").string() + ": these are not slices of one sweep\n");
  const Result whole_as_slice = run("merge '" + (dir / "whole").string() + "'");
  CHECK(whole_as_slice.status == 2);
  CHECK(whole_as_slice.err ==
        (dir / "whole" / "sweep.json").string() +
            ": shard: missing: not a slice (run `shardflow sweep ... --shard I/N` for each "
            "slice)\n");
  // A slice whose configuration was edited (or mixed up) by hand: named, not merged under another's name.
  fs::create_directories(dir / "e1");
  {
    auto j = nlohmann::json::parse(slurp(dir / "s1" / "sweep.json"));
    j["configurations"][0]["values"][0] = "9";
    std::ofstream(dir / "e1" / "sweep.json") << j.dump(2);
  }
  const Result edited = run("merge '" + (dir / "s0").string() + "' '" + (dir / "e1").string() + "' '" +
                            (dir / "s2").string() + "' --out '" + (dir / "em").string() + "'");
  CHECK(edited.status == 2);
  CHECK(edited.err ==
        (dir / "e1" / "sweep.json").string() +
            ": configurations[0].values[0]: \"9\" is not the value of configuration 1 of the sweep "
            "(pipeline.steps[sleep].parallel_for.parallelism=1)\n");
  // An --out that is one of the slices: refused, the slice's sweep.json kept.
  const std::string s0 = slurp(dir / "s0" / "sweep.json");
  const Result onto = run(merge + " --out '" + (dir / "s0").string() + "'");
  CHECK(onto.status == 2);
  CHECK(onto.err == "--out: " + (dir / "s0").string() + " is one of the slices (" + (dir / "s0").string() +
                        "): its sweep.json would be replaced; name a new directory\n");
  CHECK(slurp(dir / "s0" / "sweep.json") == s0);
  const Result bad = run(sweep + " --shard 3/3");
  CHECK(bad.status == 2);
  CHECK(bad.err == "--shard: expected I/N with 0 <= I < N, as in 2/8, got \"3/3\"\n");
}

TEST_CASE("cli: sweep --search auto recommends what the grid does, with fewer simulations", "[cli]") {
  const std::string sweep =
      "sweep scenarios/argo-parallelism-limit.yaml --vary "
      "'pipeline.steps[sleep].parallel_for.parallelism=1,2,5,10' "
      "--vary 'cluster.node_pools[default].price_per_hour=1,2' -r 4 --deadline 30s";
  const fs::path dir = scratch("sweep-auto");
  const Result grid = run(sweep + " --out '" + (dir / "grid").string() + "'");
  const Result autos = run(sweep + " --search auto --out '" + (dir / "auto").string() + "'");
  REQUIRE(grid.status == 0);
  REQUIRE(autos.status == 0);
  const auto line = [](const std::string& out) {
    const auto at = out.find("cheapest configuration");
    return at == std::string::npos ? out : out.substr(at, out.find('\n', at) - at);
  };
  CHECK(line(autos.out) == line(grid.out));
  CHECK(line(grid.out).find("(30 s): pipeline.steps[sleep].parallel_for.parallelism=10, "
                            "cluster.node_pools[default].price_per_hour=1;") != std::string::npos);
  CHECK(autos.out.find("auto search: ") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir / "auto" / "sweep.json"));
  CHECK(j["search"] == "auto");
  CHECK(j["configurations_in_space"] == 8);
  CHECK(j["simulations"].get<int>() < 32);
  const Result refused = run(
      "sweep scenarios/argo-parallelism-limit.yaml --vary 'cluster.node_pools[default].price_per_hour=1,2' "
      "--deadline 30s --search auto");
  CHECK(refused.status == 2);
  CHECK(refused.err ==
        "--search: auto needs a --vary of a node pool's count or a parallelism (it assumes the makespan does "
        "not "
        "grow along them); use --search grid\n");
}

TEST_CASE("cli: --help teaches the commands", "[cli]") {
  const Result r = run("--help");
  CHECK(r.status == 0);
  for (const char* word : {"validate", "explain", "simulate", "sweep", "compare", "calibrate", "report",
                           "docs/scenario-format.md", "Exit status"})
    CHECK(r.out.find(word) != std::string::npos);
}

TEST_CASE("cli: simulate on a terminal shows its progress, then each large file as it is written", "[cli]") {
  // `script` (util-linux) gives the run a terminal; what it shows is in the typescript, with the summary.
  const fs::path dir = scratch("tty");
  std::ofstream(dir / "w.yaml")
      << "name: w\npipeline: {steps: [{name: a, parallel_for: {count: 100000}, duration: "
         "{base: 10s}, resources: {cpu: 1, memory: 1Gi}}]}\n"
         "cluster: {node_pools: [{name: p, count: 100, cpu: 64, memory: 256Gi}]}\n";
  const std::string inner = std::string("'") + SHARDFLOW_EXE + "' simulate '" + (dir / "w.yaml").string() +
                            "' --out '" + (dir / "out").string() + "'";
  const std::string cmd = "script -qec \"" + inner + "\" '" + (dir / "typescript").string() + "' >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string shown = slurp(dir / "typescript");
  const std::string out = (dir / "out").string();
  // Progress, from the start to 100%, then the line cleared; each file named on one line, rewritten in
  // place (\r, then the rest of the line erased: ESC [ K), cut to the terminal's width (none here: `script`
  // without a terminal has 0 columns); then cleared before the summary.
  CHECK(shown.find("simulating...\rsimulating...   1%") != std::string::npos);
  CHECK(shown.find("\rsimulating... 100%\r") != std::string::npos);
  const std::string json = "writing " + out + "/trace.json...", csv = "writing " + out + "/trace.csv...",
                    html = "writing " + out + "/report.html...",
                    timeline = "writing " + out + "/timeline.json...";
  const std::string erase = "\033[K";
  const std::size_t at = shown.find("\r" + json + erase + "\r" + csv + erase + "\r" + html + erase + "\r" +
                                    timeline + erase + "\r" + erase);
  CHECK(at != std::string::npos);
  const std::size_t cleared = shown.find(timeline + erase + "\r" + erase, at);
  CHECK(cleared != std::string::npos);
  CHECK(shown.find("simulated w (seed 1): 100000 tasks", cleared) != std::string::npos);
  // Without a terminal: none of it.
  const Result plain = run("simulate '" + (dir / "w.yaml").string() + "' --out '" + out + "'");
  CHECK(plain.status == 0);
  CHECK(plain.err.find("writing") == std::string::npos);
  CHECK(plain.err.find("simulating") == std::string::npos);
}

TEST_CASE("cli: explain --json gives counts, critical path and work", "[cli]") {
  const Result r = run("explain --json scenarios/argo-parallelism-limit.yaml");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["tasks"] == 10);
  CHECK(j["joins"] == 0);
  CHECK(j["critical_path_s"] == 10.0);
  CHECK(j["total_work_s"] == 100.0);
  CHECK(j["cpu_capacity_bound_s"] == 100.0 / 16.0);  // 100 core-s over one 16-core node
  CHECK(j["steps"][0]["parallelism"] == 2);
  // 10 tasks of 10 s, 2 at once: 5 waves, 50 s (what simulate gives, docs/scenario-format.md).
  CHECK(j["loop_limit_bound"] == nlohmann::json::parse(R"({"bound_s": 50.0, "step": "sleep", "tasks": 10,
                                                           "at_once": 2, "step_s": 50.0})"));
  const Result text = run("explain scenarios/argo-parallelism-limit.yaml");
  CHECK(text.out.find(
            "\nwith the loop limits (mean durations, no overheads): 50s  -- sleep's 10 tasks, at most 2 at "
            "once, take at least 50s\n") != std::string::npos);
}

TEST_CASE("cli: explain's critical path bound counts the cluster's fastest nodes", "[cli]") {
  // argo-parallelism-limit: 10 s tasks. On speed-1 nodes no cluster finishes in less than 10 s; nodes of
  // speed 2 run the path in 5 s (what simulate gives), of speed 0.5 in 20 s.
  const Result one = run("explain scenarios/argo-parallelism-limit.yaml");
  CHECK(one.out.find(
            "\ncritical path (mean durations, no overheads): 10s  -- no cluster can finish sooner\n") !=
        std::string::npos);
  const Result fast =
      run("explain scenarios/argo-parallelism-limit.yaml --set cluster.node_pools[0].speed=2");
  CHECK(fast.out.find(
            "\ncritical path (mean durations at speed 1, no overheads): 10s; on this cluster's fastest "
            "nodes (speed 2): 5s  -- it cannot finish sooner\n") != std::string::npos);
  const Result slow =
      run("explain scenarios/argo-parallelism-limit.yaml --set cluster.node_pools[0].speed=0.5");
  CHECK(slow.out.find("on this cluster's fastest nodes (speed 0.5): 20s  -- it cannot finish sooner\n") !=
        std::string::npos);
}

TEST_CASE("cli: explain shows each group with its loop and limits, before the steps inside it", "[cli]") {
  // 12 items, at most 4 at once: the group's loop; train and evaluate have no loop of their own.
  const Result r = run("explain scenarios/hyperparameter-sweep.yaml");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("pipeline hyperparameter-sweep: 26 tasks, 37 dependency edges (widest fan-out 12, widest "
                   "fan-in 12)\nand 1 join node (where a step waits for a whole loop or group)\n\n") == 0);
  CHECK(r.out.find(
            "  step                tasks     loop parallelism       mean         work    cpu   memory  gpu\n"
            "  features                1        -           -         6m           6m      8     32Gi    0\n"
            "  sweep                   -       12           4  group\n"
            "  sweep/train            12        -           -        21m        4h12m      8     48Gi    1\n"
            "  sweep/evaluate         12        -           -         2m          24m      4     16Gi    0\n"
            "  pick-best               1        -           -        10s          10s   500m      1Gi    "
            "0\n") != std::string::npos);
  const auto j = nlohmann::json::parse(run("explain --json scenarios/hyperparameter-sweep.yaml").out);
  REQUIRE(j["groups"].size() == 1);
  CHECK(j["groups"][0] == nlohmann::json{{"path", "sweep"},
                                         {"instances", 12},
                                         {"loop_count", 12},
                                         {"parallelism", 4},
                                         {"group_parallelism", 0}});
  // A component's own fields keep their meaning: its own loop (none here).
  CHECK(j["steps"][1]["path"] == "sweep/train");
  CHECK(j["steps"][1]["loop_count"] == 1);
  CHECK(j["steps"][1]["parallelism"] == 0);

  // A group's own parallelism (its direct steps at once), and groups inside groups, in nesting order.
  const Result a = run("explain scenarios/argo-parallelism-nested-dag.yaml");
  REQUIRE(a.status == 0);
  CHECK(a.out.find(
            "  A                -        -           -  group, at most 2 steps at once\n"
            "  A/b1             -        -           -  group\n"
            "  A/b1/c1          1        -           -        10s          10s      1        0    0\n") !=
        std::string::npos);
  // One at a time: "1 step", not "1 steps".
  const Result one =
      run("explain scenarios/argo-parallelism-nested-dag.yaml --set 'pipeline.steps[A].parallelism=1'");
  CHECK(one.out.find("  A                -        -           -  group, at most 1 step at once\n") !=
        std::string::npos);
  const auto aj = nlohmann::json::parse(run("explain --json scenarios/argo-parallelism-nested-dag.yaml").out);
  REQUIRE(aj["groups"].size() == 6);
  CHECK(aj["groups"][0]["path"] == "A");
  CHECK(aj["groups"][0]["group_parallelism"] == 2);
  CHECK(aj["groups"][0]["parallelism"] == 0);
  CHECK(aj["groups"][5]["path"] == "A/b5");
  // Without groups the list is there, empty, and the header names no join nodes when there are none.
  const Result flat = run("explain --json scenarios/argo-parallelism-limit.yaml");
  CHECK(nlohmann::json::parse(flat.out)["groups"] == nlohmann::json::array());
  CHECK(run("explain scenarios/argo-parallelism-limit.yaml")
            .out.find("pipeline argo-parallelism-limit: 10 tasks, 0 dependency edges") == 0);
}

TEST_CASE("cli: explain shows what pods can use of a node after reserved resources and DaemonSets", "[cli]") {
  const fs::path dir = scratch("node-room");
  std::ofstream(dir / "room.yaml") << "name: room\n"
                                      "pipeline:\n"
                                      "  steps:\n"
                                      "    - {name: w, resources: {cpu: 4, memory: 1Gi}}\n"
                                      "cluster:\n"
                                      "  node_pools:\n"
                                      "    - {name: n, cpu: 16, memory: 64Gi, count: 2, reserved: gke}\n"
                                      "    - {name: g, cpu: 8, memory: 32Gi, gpu: 1, count: 1}\n"
                                      "  daemonsets:\n"
                                      "    - {name: logging, cpu: 100m, memory: 200Mi, pools: [n]}\n";
  const std::string file = (dir / "room.yaml").string();
  const Result text = run("explain '" + file + "'");
  REQUIRE(text.status == 0);
  // 16 cores less GKE's 110m; 64 GiB less 5988962795 bytes (58.42 GiB); less the DaemonSet's 100m, 200 MiB.
  CHECK(
      text.out.find("what pods can use of a node (reserved resources and DaemonSets):\n"
                    "  pool n: cpu 16, memory 64Gi; allocatable cpu 15890m, memory 58.4Gi; for the pipeline, "
                    "beside 1 DaemonSet pod: cpu 15790m, memory 58.2Gi, 109 pods\n"
                    "  pool g: cpu 8, memory 32Gi\n") != std::string::npos);
  const Result json = run("explain --json '" + file + "'");
  REQUIRE(json.status == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["node_room"].size() == 2);
  CHECK(j["node_room"][0]["allocatable_memory_bytes"] == 68719476736 - 5988962795);
  CHECK(j["node_room"][0]["pod_memory_bytes"] == 68719476736 - 5988962795 - 200 * 1048576);
  CHECK(j["node_room"][0]["pods"] == 109);
  // One pod left beside the DaemonSet's: "1 pod".
  std::ofstream(dir / "one.yaml")
      << "name: one\npipeline: {steps: [{name: w, resources: {cpu: 1, memory: 1Gi}}]}\n"
         "cluster:\n  node_pools: [{name: s, cpu: 4, memory: 8Gi, count: 1, max_pods: 2}]\n"
         "  daemonsets: [{name: logging, cpu: 100m, memory: 200Mi}]\n";
  const Result one = run("explain '" + (dir / "one.yaml").string() + "'");
  CHECK(one.out.find(
            "  pool s: cpu 4, memory 8Gi; for the pipeline, beside 1 DaemonSet pod: cpu 3.9, memory 7.8Gi, "
            "1 pod\n") != std::string::npos);
  CHECK(j["node_room"][1]["pod_gpu"] == 1);
  // Without either, explain says nothing about it.
  CHECK(run("explain scenarios/argo-parallelism-limit.yaml").out.find("what pods can use") ==
        std::string::npos);
  CHECK(nlohmann::json::parse(run("explain --json scenarios/argo-parallelism-limit.yaml").out)
            .count("node_room") == 0);
}

TEST_CASE("cli: simulate prints a summary and writes trace and metrics", "[cli]") {
  const fs::path dir = scratch("simulate");
  const Result r = run("simulate scenarios/argo-parallelism-limit.yaml --out '" + dir.string() + "'");
  CHECK(r.err == "");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("makespan     50s (50.000 s)") != std::string::npos);
  const auto metrics = nlohmann::json::parse(slurp(dir / "metrics.json"));
  CHECK(metrics["makespan_s"] == 50.0);
  CHECK(metrics["attempts"] == 10);
  const std::string csv = slurp(dir / "trace.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 11);  // header + 10 attempts
  // The timeline: each of the 10 pods once pending (for 0 s here: left out) and once on its node, with
  // its run nested inside.
  const auto timeline = nlohmann::json::parse(slurp(dir / "timeline.json"));
  int pods = 0, runs = 0;
  for (const auto& e : timeline["traceEvents"]) {
    if (e["ph"] != "X") continue;
    pods += e.contains("args") ? 1 : 0;
    runs += e["name"] == "run" ? 1 : 0;
  }
  CHECK(pods == 10);
  CHECK(runs == 10);
  CHECK(r.out.find("metrics.csv,report.html,timeline.json}") != std::string::npos);

  SECTION("the same seed gives a byte-identical trace") {
    const fs::path again = scratch("simulate-again");
    REQUIRE(run("simulate -q scenarios/argo-parallelism-limit.yaml --out '" + again.string() + "'").status ==
            0);
    CHECK(slurp(dir / "trace.json") == slurp(again / "trace.json"));
  }
}

TEST_CASE("cli: calibrate fits a run's durations and writes the overlay", "[cli]") {
  const fs::path dir = scratch("calibrate");
  REQUIRE(run("simulate -q scenarios/argo-parallelism-limit.yaml --out '" + dir.string() + "'").status == 0);
  const std::string overlay = (dir / "cal.yaml").string();
  // A simulation's trace stands for a measured run here, and calibrate says what it is.
  const std::string sim_warning =
      "warning: " + (dir / "trace.json").string() +
      ": a simulation's trace (backend sim): fitted to it, the model is fitted to its "
      "own prediction; calibrate is for measured runs (run --backend local or k8s)\n";
  const Result r =
      run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " + overlay);
  CHECK(r.err == sim_warning);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "step  attempts           base        per_gib    sigma     R^2  measured mean    fitted mean\n"
        "sleep       10            10s   - (one size)        0       -       10.000 s       10.000 s\n"
        "sandbox_start 0s (10th percentile of 10 attempts' dispatch times)\n"
        "wrote " +
            overlay + "\n");
  CHECK(slurp(overlay) ==
        "# Calibration of scenario \"argo-parallelism-limit\" from 1 trace:\n"
        "#   " +
            (dir / "trace.json").string() +
            "\n"
            "# made by: shardflow calibrate scenarios/argo-parallelism-limit.yaml " +
            dir.string() + " --out " + overlay +
            "\n"
            "# Lay it over the scenario: steps are matched by name (inside their groups).\n"
            "pipeline:\n"
            "  steps:\n"
            "    - name: sleep\n"
            "      duration: {base: 10s, per_gib: 0s, noise: {lognormal_sigma: 0}}\n"
            "overheads: {preset: none, sandbox_start: 0s}\n");
  // Laid over the scenario (overheads: none) it keeps every other overhead off: the same 50 s, not the
  // 2m30s the defaults a bare {sandbox_start} brought back made of it.
  const Result shown =
      run("simulate scenarios/argo-parallelism-limit.yaml --overlay " + overlay + " --no-files");
  CHECK(shown.status == 0);
  CHECK(shown.out.find("  makespan     50s (50.000 s)") != std::string::npos);

  SECTION("--out: its directory is made; a directory or a path through a file is refused, with why") {
    const fs::path made = dir / "new" / "deeper" / "fit.yaml";
    const Result ok =
        run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " + made.string());
    CHECK(ok.status == 0);
    CHECK(fs::is_regular_file(made));
    const Result d = run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " +
                         (dir / "new").string());
    CHECK(d.status == 2);
    CHECK(d.err == sim_warning + "--out: " + (dir / "new").string() +
                       " names a directory: calibrate writes one file, the overlay (e.g. " +
                       (dir / "new" / "calibrated.yaml").string() + ")\n");
    // A name ending in '/' too, before the directory is made.
    const Result slash = run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " +
                             (dir / "nd").string() + "/");
    CHECK(slash.status == 2);
    CHECK(slash.err == sim_warning + "--out: " + (dir / "nd").string() +
                           "/ names a directory: calibrate writes one file, the overlay (e.g. " +
                           (dir / "nd" / "calibrated.yaml").string() + ")\n");
    CHECK(!fs::exists(dir / "nd"));
    const Result f = run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " +
                         (made / "x.yaml").string());
    CHECK(f.status == 2);
    CHECK(f.err == sim_warning + "--out: " + made.string() + " is a file, not a directory (" +
                       (made / "x.yaml").string() +
                       " would be made in it): --out names the file the overlay is written to\n");
  }
  SECTION("a trace of another scenario is bad input") {
    const Result other =
        run("calibrate scenarios/argo-parallelism-nested-dag.yaml " + dir.string() + " --out " + overlay);
    CHECK(other.status == 2);
    CHECK(other.err ==
          (dir / "trace.json").string() +
              ":9:12: steps: the trace's steps (sleep) are not the scenario's (A/b1/c1, A/b1/c2, "
              "A/b1/c3, A/b2/c1, A/b2/c2, A/b2/c3, A/b3/c1, A/b3/c2, A/b3/c3, A/b4/c1, A/b4/c2, "
              "A/b4/c3, A/b5/c1, A/b5/c2, A/b5/c3): give calibrate the same --set/--overlay "
              "options the run had\n");
  }
  SECTION("a missing trace is bad input") {
    const Result missing = run("calibrate scenarios/argo-parallelism-limit.yaml " + (dir / "none").string() +
                               " --out " + overlay);
    CHECK(missing.status == 2);
    CHECK(missing.err == (dir / "none").string() + ": no such file\n");
  }
}

TEST_CASE("cli: a name that is not UTF-8 is shown in hex in a message", "[cli]") {
  const fs::path dir = scratch("latin1-kubeconfig");
  std::ofstream(dir / "kc.yaml") << "apiVersion: v1\nkind: Config\ncurrent-context: caf\xe9\ncontexts: []\n"
                                    "clusters: []\nusers: []\n";
  const Result r = run("run scenarios/argo-parallelism-limit.yaml --backend k8s --kubeconfig '" +
                       (dir / "kc.yaml").string() + "' --out '" + (dir / "out").string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err == (dir / "kc.yaml").string() +
                     ":3:18: current-context: no context named \"caf\\xE9\" (contexts: none are defined)\n");
}

TEST_CASE("cli: a local run on more cores than the machine has is warned about", "[cli]") {
  const fs::path dir = scratch("local-more-cores");
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);  // at least what the affinity mask allows
  const std::string more = std::to_string(cpus + 1);
  const Result r = run("run scenarios/argo-parallelism-limit.yaml --backend local --cores " + more +
                       " --time-scale 0.01 --out '" + dir.string() + "'");
  CHECK(r.status == 0);
  CHECK_THAT(r.err, Catch::StartsWith("run: warning: --cores " + more + " is more than the "));
  CHECK_THAT(r.err,
             Catch::Contains(" CPUs this process may use: the tasks share them, and take longer than on " +
                             more + " cores\n"));
  // Quiet, or within the machine: no warning.
  CHECK(run("run scenarios/argo-parallelism-limit.yaml --backend local --cores " + more +
            " --time-scale 0.01 -q --out '" + dir.string() + "'")
            .err == "");
  // (Its step sleep has a command and no kernel: the one note there is.)
  CHECK(run("run scenarios/argo-parallelism-limit.yaml --backend local --cores 1 --time-scale 0.01 --out '" +
            dir.string() + "'")
            .err ==
        "run: note: step sleep has a command but no kernel: the local backend waited each task's "
        "modelled run time instead of running it (kernel: {name: command} runs the command here)\n");
}

TEST_CASE("cli: calibrate turns a local run at --time-scale 0.05 back into model time", "[cli]") {
  const fs::path dir = scratch("calibrate-time-scale");
  REQUIRE(
      run("run scenarios/argo-parallelism-limit.yaml --backend local --cores 2 --time-scale 0.05 -q --out '" +
          dir.string() + "'")
          .status == 0);
  const auto trace = nlohmann::json::parse(slurp(dir / "trace.json"));
  CHECK(trace["time_scale"] == 0.05);
  CHECK(trace["time_scaled_steps"] == nlohmann::json::array({0}));
  const std::string overlay = (dir / "cal.yaml").string();
  const Result r =
      run("calibrate scenarios/argo-parallelism-limit.yaml " + dir.string() + " --out " + overlay);
  REQUIRE(r.status == 0);
  const std::string name = (dir / "trace.json").string();
  CHECK(r.out.find(
            "\n" + name +
            ": a run at time scale 0.05: the run times of sleep (sleep and spin, which --time-scale "
            "scales) are divided by 0.05, into model time; the dispatch times are fitted as measured\n") !=
        std::string::npos);
  CHECK(r.err.find("warning: " + name +
                   ": each attempt of sleep also holds real-time latency (timer wake-up, thread hand-off), "
                   "which is divided by 0.05 with its run time: it counts 20 times over in the fit; the "
                   "shortest of those attempts ran 0.5") == 0);
  // Each sleep took its 0.5 s and a little more: the model's 10 s, and 20 times that little more.
  const std::string text = slurp(overlay);
  const std::size_t at = text.find("duration: {base: ");
  REQUIRE(at != std::string::npos);
  std::size_t used = 0;
  const double base = std::stod(text.substr(at + 17), &used);
  CHECK(text.substr(at + 17 + used, 2) == "s,");
  CHECK(base >= 10);
  CHECK(base < 11);
}

TEST_CASE("cli: calibrate loads the scenario as the run did: --overlay, and a hint when it differs",
          "[cli]") {
  const fs::path dir = scratch("calibrate-overlay");
  REQUIRE(
      run("run scenarios/local-ridge.yaml --overlay tests/data/ridge-small.yaml --backend local --cores 2 "
          "-q --out '" +
          dir.string() + "'")
          .status == 0);
  const std::string overlay = (dir / "cal.yaml").string();
  const Result ok = run("calibrate scenarios/local-ridge.yaml " + dir.string() +
                        " --overlay tests/data/ridge-small.yaml -q --out " + overlay);
  CHECK(ok.err == "");
  CHECK(ok.status == 0);
  CHECK(slurp(overlay).find("# made by: shardflow calibrate scenarios/local-ridge.yaml " + dir.string() +
                            " --out " + overlay + " --overlay tests/data/ridge-small.yaml\n") !=
        std::string::npos);
  {
    const std::string small_path = (fs::path(SHARDFLOW_SOURCE_DIR) / "tests/data/ridge-small.yaml").string();
    // The same tasks under other options (here a seed; an input size is the same case): refused, as the fit
    // would be of another model; the same options in another order of --set are the same.
    const Result other = run("calibrate scenarios/local-ridge.yaml " + dir.string() +
                             " --overlay tests/data/ridge-small.yaml --set seed=3 -q --out " + overlay);
    CHECK(other.status == 2);
    CHECK(other.err ==
          (dir / "trace.json").string() + ": the run had --overlay " + small_path + ", calibrate --overlay " +
              small_path +
              " --set seed=3: give calibrate the options the run had (with others, the same tasks "
              "are fitted to another model)\n");
    // Options other in text that load the same scenario are the run's: the overlay copied elsewhere, or
    // --set of what it changes, a step named by its index or by its name.
    fs::copy_file(small_path, dir / "copy.yaml", fs::copy_options::overwrite_existing);
    const Result copy = run("calibrate scenarios/local-ridge.yaml " + dir.string() + " --overlay '" +
                            (dir / "copy.yaml").string() + "' -q --out " + overlay);
    CHECK(copy.err == "");
    CHECK(copy.status == 0);
    const Result sets = run("calibrate scenarios/local-ridge.yaml " + dir.string() +
                            " --set 'pipeline.steps[shard].parallel_for.count=4' --set "
                            "'pipeline.steps[0].kernel.rows_per_gib=2000' --set "
                            "'pipeline.steps[evaluate].kernel.rows=20000' -q --out " +
                            overlay);
    CHECK(sets.err == "");
    CHECK(sets.status == 0);
    // One run given twice, as its directory and its trace.json: refused, it would count twice.
    const Result twice =
        run("calibrate scenarios/local-ridge.yaml " + dir.string() + " " + (dir / "trace.json").string() +
            " --overlay tests/data/ridge-small.yaml -q --out " + overlay);
    CHECK(twice.status == 2);
    CHECK(twice.err == (dir / "trace.json").string() + ": given twice (as " + (dir / "trace.json").string() +
                           " too): each run counts once\n");
    // An --out that is an input: refused before anything is written.
    const Result onto =
        run("calibrate scenarios/local-ridge.yaml " + dir.string() +
            " --overlay tests/data/ridge-small.yaml -q --out " + (dir / "trace.json").string());
    CHECK(onto.status == 2);
    CHECK(onto.err == "--out: " + (dir / "trace.json").string() + " is one of the inputs (" +
                          (dir / "trace.json").string() + "): name a new file\n");
    CHECK(slurp(dir / "trace.json").starts_with("{"));
  }

  // The message names the place of attempts[4].task in the trace.json as it is then (written by the run,
  // or rewritten on one line below): found here in its text.
  const auto mismatch_text = [&] {
    const std::string text = slurp(dir / "trace.json");
    std::size_t at = text.find("\"attempts\":");
    for (int i = 0; i < 5; ++i) at = text.find('{', at + 1);
    at = text.find_first_not_of(' ', text.find("\"task\":", at) + 7);
    return (dir / "trace.json").string() + ":" + shardflow::testing::line_col(text, at) +
           ": attempts[4].task: task 5 (step aggregate, item 0) is not a task of the "
           "scenario's plan (a run of another scenario, or of other settings?): ";
  };
  const std::string mismatch = mismatch_text();
  CHECK(mismatch.starts_with((dir / "trace.json").string() + ":19:14: "));  // one attempt a line, from 15
  // The local run's trace records how it loaded the scenario: the hint names that.
  const std::string small = (fs::path(SHARDFLOW_SOURCE_DIR) / "tests/data/ridge-small.yaml").string();
  const auto recorded = nlohmann::json::parse(slurp(dir / "trace.json"));
  CHECK(recorded["load"] ==
        nlohmann::json{{"file", (fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios/local-ridge.yaml").string()},
                       {"overlays", {small}},
                       {"sets", nlohmann::json::array()},
                       {"params", nlohmann::json::array()},
                       {"cluster", ""}});
  const Result without = run("calibrate scenarios/local-ridge.yaml " + dir.string() + " --out " + overlay);
  CHECK(without.status == 2);
  CHECK(without.err == mismatch + "the run had --overlay " + small + ": give calibrate the same\n");
  // Another scenario file: named first (the same options would not make it the run's).
  const Result other = run("calibrate scenarios/local/loop.yaml " + dir.string() + " --out " + overlay);
  CHECK(other.status == 2);
  CHECK(other.err.ends_with(": it ran the scenario file " +
                            (fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios/local-ridge.yaml").string() +
                            " with --overlay " + small + ", not scenarios/local/loop.yaml\n"));

  SECTION("a trace that does not record them (an older one): which options to look at") {
    auto old = recorded;
    old.erase("load");
    std::ofstream(dir / "trace.json") << old.dump();
    const Result generic = run("calibrate scenarios/local-ridge.yaml " + dir.string() + " --out " + overlay);
    CHECK(generic.status == 2);
    CHECK(generic.err == mismatch_text() + "give calibrate the same --set/--overlay options the run had\n");
  }
  SECTION("a run directory that records its options (a k8s run's run.json) names them") {
    auto old = recorded;
    old.erase("load");
    std::ofstream(dir / "trace.json") << old.dump();
    std::ofstream(dir / "run.json")
        << "{\"state\": \"finished\", \"invocation\": {\"file\": \"/x/local-ridge.yaml\", "
           "\"overlays\": [\""
        << small << "\"], \"sets\": [\"seed=3\"], \"cluster\": \"\"}}\n";
    const Result named = run("calibrate scenarios/local-ridge.yaml " + dir.string() + " --out " + overlay);
    CHECK(named.status == 2);
    CHECK(named.err == mismatch_text() + "the run had --overlay " + small + " --set seed=3 (" +
                           (dir / "run.json").string() + "): give calibrate the same\n");
  }
}

TEST_CASE("cli: report rebuilds a run's report.html from its files, and names what is missing", "[cli]") {
  const fs::path dir = scratch("report");
  REQUIRE(run("simulate -q scenarios/argo-parallelism-limit.yaml --out '" + dir.string() + "'").status == 0);
  const std::string first = slurp(dir / "report.html");
  CHECK(first.find("<title>shardflow run: argo-parallelism-limit</title>") != std::string::npos);
  fs::remove(dir / "report.html");
  const Result r = run("report '" + dir.string() + "'");
  CHECK(r.err == "");
  CHECK(r.status == 0);
  CHECK(r.out == "wrote " + (dir / "report.html").string() + " (run report)\n");
  CHECK(slurp(dir / "report.html") == first);
  SECTION("a metrics.json of another run beside the trace is refused, both named") {
    const fs::path other = scratch("report-mixed");
    REQUIRE(run("simulate -q scenarios/shard-preprocess-train.yaml --out '" + other.string() + "'").status ==
            0);
    fs::copy_file(dir / "metrics.json", other / "metrics.json", fs::copy_options::overwrite_existing);
    const Result mixed = run("report '" + other.string() + "'");
    CHECK(mixed.status == 2);
    CHECK(mixed.err == (other / "metrics.json").string() + ": is not of the run in " +
                           (other / "trace.json").string() +
                           ": it counts 10 attempts of steps sleep, the trace has 105 of steps preprocess, "
                           "aggregate, train (keep a run's trace.json and metrics.json together)\n");
  }
  SECTION("a metrics.json of the same scenario's run with another seed: the makespans and costs differ") {
    const fs::path seven = scratch("report-seed-7"), eight = scratch("report-seed-8");
    for (const auto& [seed, out] : {std::pair{"7", seven}, std::pair{"8", eight}})
      REQUIRE(run("simulate -q scenarios/shard-preprocess-train.yaml --seed " + std::string(seed) +
                  " --out '" + out.string() + "'")
                  .status == 0);
    // Each seed's own figures, from its metrics.json, as the message gives them (%.9g).
    const auto figures = [](const fs::path& d) {
      const auto j = nlohmann::json::parse(slurp(d / "metrics.json"));
      char text[128];
      std::snprintf(text, sizeof text, "%.9g s and cost %.9g", j["makespan_s"].get<double>(),
                    j["cost"].get<double>());
      return std::string(text);
    };
    const std::string theirs = figures(seven), own = figures(eight);
    REQUIRE(theirs != own);
    fs::copy_file(seven / "metrics.json", eight / "metrics.json", fs::copy_options::overwrite_existing);
    const Result mixed = run("report '" + eight.string() + "'");
    CHECK(mixed.status == 2);
    std::string own_pair = own;
    own_pair.replace(own_pair.find(" and cost "), 10, " and ");
    CHECK(mixed.err == (eight / "metrics.json").string() + ": is not of the run in " +
                           (eight / "trace.json").string() + ": its makespan is " + theirs +
                           ", the trace's " + own_pair +
                           " (keep a run's trace.json and metrics.json together)\n");
  }
  SECTION("two runs of other loop widths: compared, with a warning naming the steps") {
    const fs::path wider = scratch("report-wider");
    REQUIRE(run("simulate -q scenarios/argo-parallelism-limit.yaml --set "
                "'pipeline.steps[sleep].parallel_for.count=12' "
                "--out '" +
                wider.string() + "'")
                .status == 0);
    const Result w = run("report --predicted '" + dir.string() + "' --measured '" + wider.string() + "' -q");
    CHECK(w.status == 0);
    CHECK(w.err ==
          "warning: the runs have different numbers of tasks (sleep 10 predicted, 12 measured): were they "
          "run with the same --set and overlays?\n");
  }
  SECTION("two runs: predicted against measured") {
    const Result p = run("report --predicted '" + dir.string() + "' --measured '" + dir.string() +
                         "' --out '" + (dir / "p.html").string() + "'");
    CHECK(p.status == 0);
    CHECK(slurp(dir / "p.html").find("makespan error") != std::string::npos);
    CHECK(p.err == "");
    // A differently named scenario with the same steps: said, and compared by step name.
    const fs::path renamed = scratch("report-renamed");
    REQUIRE(run("simulate -q scenarios/argo-parallelism-limit.yaml --set name=other --out '" +
                renamed.string() + "'")
                .status == 0);
    const Result named =
        run("report --predicted '" + dir.string() + "' --measured '" + renamed.string() + "'");
    CHECK(named.status == 0);
    CHECK(named.err == "warning: --predicted " + dir.string() +
                           " is a run of scenario 'argo-parallelism-limit' and " + "--measured " +
                           renamed.string() + " of 'other': compared step by step by name all the same\n");
    CHECK(slurp(renamed / "prediction.html")
              .find("The two runs are of differently named scenarios: predicted of argo-parallelism-limit, "
                    "measured "
                    "of other.") != std::string::npos);
    // A run of another pipeline (no step in common): refused, both named.
    const fs::path other = scratch("report-other");
    REQUIRE(
        run("simulate -q scenarios/local-ridge.yaml --cluster local --out '" + other.string() + "'").status ==
        0);
    const Result apart = run("report --predicted '" + other.string() + "' --measured '" + dir.string() + "'");
    CHECK(apart.status == 2);
    CHECK(apart.err ==
          dir.string() + ": --measured: no step of this run (scenario 'argo-parallelism-limit', steps " +
              "sleep) is in --predicted " + other.string() + " (scenario 'local-ridge', steps shard, " +
              "aggregate, solve, evaluate, select): they are runs of different pipelines, with nothing " +
              "to compare\n");
    CHECK_FALSE(fs::exists(dir / "prediction.html"));
  }
  SECTION("bad input") {
    const fs::path empty = scratch("report-empty");
    const Result e = run("report '" + empty.string() + "'");
    CHECK(e.status == 2);
    CHECK(
        e.err ==
        empty.string() +
            ": holds neither trace.json (a run) nor sweep.json (a sweep) nor compare.json (a comparison)\n");
    const Result half = run("report --predicted '" + dir.string() + "'");
    CHECK(half.status == 2);
    CHECK(half.err == "--predicted: --predicted and --measured go together\n");
    // An --out that cannot be written: the user's input (exit 2, the flag named), not a failed run (1).
    const std::string nowhere = (empty / "no-such-dir" / "r.html").string();
    const Result o = run("report '" + dir.string() + "' --out '" + nowhere + "'");
    CHECK(o.status == 2);
    CHECK(o.err == "--out: cannot write " + nowhere + " (No such file or directory)\n");
    // A bad input found while the page is made leaves the page that was there as it was (it was emptied).
    const std::string page = slurp(dir / "report.html");
    const std::string trace = slurp(dir / "trace.json");
    std::ofstream(dir / "trace.json") << trace.substr(0, trace.size() / 2);
    const Result cut = run("report -q '" + dir.string() + "'");
    CHECK(cut.status == 2);
    CHECK(cut.out == "");
    CHECK(slurp(dir / "report.html") == page);
    for (const auto& entry : fs::directory_iterator(dir))
      CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
    std::ofstream(dir / "trace.json") << trace;
    CHECK(run("report -q '" + dir.string() + "'").out == "");
    // A device is written in place, never replaced.
    CHECK(run("report '" + dir.string() + "' --out /dev/null").status == 0);
    CHECK(fs::is_character_file("/dev/null"));
    fs::remove(dir / "metrics.json");
    const Result m = run("report '" + dir.string() + "'");
    CHECK(m.status == 2);
    CHECK(m.err ==
          (dir / "metrics.json").string() + ": cannot open it (is this a shardflow output directory?)\n");
  }
}

TEST_CASE("cli: --max-tasks: simulate refuses a pipeline over it, explain counts it without unrolling",
          "[cli]") {
  const fs::path dir = scratch("max-tasks");
  std::ofstream(dir / "big.yaml") << "name: big\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - name: outer\n"
                                     "      parallel_for: {count: 100000}\n"
                                     "      steps:\n"
                                     "        - name: inner\n"
                                     "          parallel_for: {count: 100000}\n"
                                     "          resources: {cpu: 1}\n"
                                     "          duration: {base: 2s}\n"
                                     "cluster:\n"
                                     "  node_pools: [{name: a, cpu: 4, memory: 8Gi, count: 1}]\n";
  const std::string file = (dir / "big.yaml").string();
  const Result sim = run("simulate -q '" + file + "' --out '" + (dir / "out").string() + "'");
  CHECK(sim.status == 2);
  CHECK(sim.err == file +
                       ":5:29: pipeline.steps[0].parallel_for.count: the pipeline unrolls to 10,000,000,000 "
                       "tasks (about 2794 GiB of memory to simulate); the limit is 50,000,000 (--max-tasks "
                       "raises it; `explain` counts without unrolling)\n");
  // With the limit raised past it, the machine's memory is (2,794 GiB: more than any machine this runs
  // on): refused with a message, not killed by the system mid-unroll; the --out directory is not made.
  const Result raised =
      run("simulate -q '" + file + "' --max-tasks 20000000000 --out '" + (dir / "out-raised").string() + "'");
  CHECK(raised.status == 2);
  CHECK(raised.err.rfind(file +
                             ":5:29: pipeline.steps[0].parallel_for.count: the pipeline unrolls to "
                             "10,000,000,000 tasks (about 2794 GiB of memory to simulate); this machine has ",
                         0) == 0);
  CHECK(raised.err.find(" GiB: shrink this loop (`explain` counts without unrolling)\n") !=
        std::string::npos);
  CHECK(!fs::exists(dir / "out-raised"));
  // So are validate, sweep and compare, which unroll it too (validate was killed by the system, and with
  // less memory said only "std::bad_alloc"); explain counts it without unrolling and says why.
  const std::string raised_err = raised.err.substr(file.size());
  for (const std::string& cmd :
       {"validate '" + file + "' --max-tasks 20000000000",
        "sweep '" + file + "' --max-tasks 20000000000 -r 1 --vary 'cluster.node_pools[a].count=1,2' --out '" +
            (dir / "sweep").string() + "'",
        "compare '" + file + "' --max-tasks 20000000000 -r 1 --variant a --variant 'b:seed=3' --out '" +
            (dir / "compare").string() + "'"}) {
    INFO(cmd);
    const Result r = run(cmd);
    CHECK(r.status == 2);
    CHECK(r.err == file + raised_err);
  }
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer cannot start under a small ulimit -v
  // Memory the process may not have (ulimit -v, under what the machine holds) is said so, exit 1.
  {
    const std::string cmd =
        "ulimit -v 1000000 && '" + std::string(SHARDFLOW_EXE) + "' simulate -q --no-files '" + file +
        "' --set pipeline.steps[0].parallel_for.count=300 2>'" + (dir / "oom.err").string() + "'";
    const int raw = std::system(cmd.c_str());
    CHECK(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 1);
    CHECK(
        slurp(dir / "oom.err") ==
        "shardflow: out of memory: the run needs more than this machine (or the process's limit, ulimit -v) "
        "gives: try a smaller pipeline or cluster\n");
  }
#endif
  CHECK(
      run("explain '" + file + "' --max-tasks 20000000000")
          .out.starts_with("pipeline big: 10000000000 tasks (counted, not unrolled: more than this machine's "
                           "memory holds)\n"));
  // 10^10 tasks of 2 s on one core: 2 * 10^10 core-seconds = 5,555,556 h; over 4 cores 1,388,889 h.
  const Result ex = run("explain '" + file + "'");
  CHECK(ex.status == 0);
  CHECK(ex.out.find("pipeline big: 10000000000 tasks (counted, not unrolled: over the --max-tasks limit)") ==
        0);
  // A higher --max-tasks would not unroll it either: what is said is the memory.
  CHECK(ex.out.find("\ncritical path, join nodes and edges: not known without unrolling (unrolling it takes "
                    "more memory than this machine has)") != std::string::npos);
  // The columns widen to their widest cell: the 11-digit count stays under its heading.
  CHECK(
      ex.out.find(
          "\n  step              tasks     loop parallelism       mean         work    cpu   memory  gpu\n"
          "  outer                 -   100000           -  group\n"
          "  outer/inner 10000000000   100000           -         2s     5555556h      1        0    0\n") !=
      std::string::npos);
  CHECK(ex.out.find("CPU capacity bound: 1388889h") != std::string::npos);
  // Under a raised limit the same file is unrolled by explain; a lower one refuses validate too.
  const Result small =
      run("explain '" + file + "' --set pipeline.steps[0].parallel_for.count=3 --max-tasks 300000");
  CHECK(small.status == 0);
  CHECK(small.out.find("pipeline big: 300000 tasks, ") == 0);
  const Result v =
      run("validate '" + file + "' --set pipeline.steps[0].parallel_for.count=3 --max-tasks 299999");
  CHECK(v.status == 2);
  CHECK(v.err.find(
            ":8:33: pipeline.steps[0].steps[0].parallel_for.count: the pipeline unrolls to 300,000 tasks") !=
        std::string::npos);
}

TEST_CASE("cli: explain says a task count past 2^64 - 1 is more, and its work is still right", "[cli]") {
  // Three nested loops of 2^31: 2^93 tasks of 1 h each, on 4 cores: 2^93 h of work, 2^91 h bound.
  const fs::path dir = scratch("saturated-count");
  std::ofstream(dir / "huge.yaml") << "name: huge\n"
                                      "pipeline:\n"
                                      "  steps:\n"
                                      "    - name: a\n"
                                      "      parallel_for: {count: 2147483648}\n"
                                      "      steps:\n"
                                      "        - name: b\n"
                                      "          parallel_for: {count: 2147483648}\n"
                                      "          steps:\n"
                                      "            - name: c\n"
                                      "              parallel_for: {count: 2147483648}\n"
                                      "              duration: {base: 1h}\n"
                                      "cluster:\n"
                                      "  node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]\n";
  const Result ex = run("explain '" + (dir / "huge.yaml").string() + "'");
  CHECK(ex.status == 0);
  CHECK(ex.out.find("pipeline huge: more than 18446744073709551615 tasks (counted, not unrolled: over the "
                    "--max-tasks limit)\n") == 0);
  CHECK(ex.out.find(
            "\n  step       tasks       loop parallelism       mean                          work    cpu"
            "   memory  gpu\n"
            "  a              - 2147483648           -  group\n"
            "  a/b            - 2147483648           -  group\n"
            "  a/b/c   > 2^64-1 2147483648           -         1h 9903520314283042199192993792h      1"
            "        0    0\n") != std::string::npos);
  CHECK(ex.out.find("CPU capacity bound: 2475880078570760549798248448h") != std::string::npos);
  const Result js = run("explain --json '" + (dir / "huge.yaml").string() + "'");
  CHECK(js.status == 0);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j.at("tasks").get<std::uint64_t>() == 18446744073709551615ull);
  CHECK(j.at("tasks_saturated") == true);
  CHECK(j.at("steps").at(0).at("instances_saturated") == true);
  // Past 10^30 h the work is in powers of ten, with its unit (a 31-digit figure lost its "h").
  std::ofstream(dir / "huger.yaml") << "name: huger\n"
                                       "pipeline:\n"
                                       "  steps:\n"
                                       "    - name: a\n"
                                       "      parallel_for: {count: 4294967295}\n"
                                       "      steps:\n"
                                       "        - name: b\n"
                                       "          parallel_for: {count: 4294967295}\n"
                                       "          steps:\n"
                                       "            - name: c\n"
                                       "              parallel_for: {count: 4294967295}\n"
                                       "              duration: {base: 2000000h}\n"
                                       "cluster:\n"
                                       "  node_pools: [{name: n, cpu: 32, memory: 8Gi, count: 1}]\n";
  const Result big = run("explain '" + (dir / "huger.yaml").string() + "'");
  CHECK(big.out.find("total work: 1.58e+35h of task time, 1.58e+35 core-hours requested\n") !=
        std::string::npos);
  // A tiny pipeline's core-hours in two digits, not "0.00": one task of 1 CPU for 1 s.
  std::ofstream(dir / "tiny.yaml")
      << "name: tiny\npipeline:\n  steps:\n    - {name: a, duration: {base: 1s}, "
         "resources: {cpu: 1}}\n"
         "cluster:\n  node_pools: [{name: n, cpu: 2, memory: 8Gi, count: 1}]\n";
  CHECK(run("explain '" + (dir / "tiny.yaml").string() + "'")
            .out.find("total work: 1s of task time, 0.00028 core-hours requested\n") != std::string::npos);
}

TEST_CASE("cli: the seed's strategy variants (reports/strategies.md) all run", "[cli]") {
  const fs::path dir = scratch("seed-strategies");
  const Result r =
      run("compare scenarios/shard-preprocess-train.yaml --variants "
          "scenarios/variants/seed-strategies.yaml -r 2 -q --out '" +
          dir.string() + "'");
  CHECK(r.status == 0);
  CHECK(r.err == "");
  std::ifstream csv(dir / "compare.csv");
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 1 + 13);  // a header and the 13 variants
}

TEST_CASE("cli: a simulation that reaches its horizon says which tasks had not finished", "[cli]") {
  // A task of 100,000 hours runs past the 10-year horizon (87,600 h); the two after it never become
  // ready. All three are reported failed, and why; the run exits 1 as with any failed task.
  const fs::path dir = scratch("simulate-horizon");
  const fs::path yaml = dir / "long.yaml";
  std::ofstream(yaml) << "name: long\nseed: 1\noverheads: none\ncluster:\n  node_pools:\n"
                         "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1, price_per_hour: 1}\n"
                         "pipeline:\n  steps:\n"
                         "    - {name: a, duration: {base: 100000h}}\n"
                         "    - {name: b, after: [a], duration: {base: 1s}}\n"
                         "    - {name: c, after: [b], duration: {base: 1s}}\n";
  const Result r = run("simulate '" + yaml.string() + "' --no-files");
  CHECK(r.err == "");
  CHECK(r.status == 1);
  CHECK(r.out.find("  retries      0; failed attempts 0; tasks failed 3\n") != std::string::npos);
  CHECK(r.out.find("  unfinished   1 task had not finished when the run stopped at 87600h, the simulation's "
                   "horizon: look for a duration or a count far too large, and 2 after it never started "
                   "(counted in tasks failed)\n") != std::string::npos);
}

TEST_CASE("cli: flag values CLI11 would wrap, let through or read as absent are refused", "[cli]") {
  const std::string seed = "scenarios/shard-preprocess-train.yaml";
  const std::string vary =
      " --vary cluster.node_pools[cpu].count=1,2 -q --out '" + scratch("flags").string() + "'";
  const struct {
    std::string args, err;
  } cases[] = {
      {"sweep " + seed + vary + " --seed -1",
       "--seed: want a whole number from 0 to 18446744073709551615, got \"-1\""},
      {"compare " + seed + " --variant a --variant b --seed 18446744073709551616",
       "--seed: want a whole number from 0 to 18446744073709551615, got \"18446744073709551616\""},
      {"validate " + seed + " --max-tasks -1",
       "--max-tasks: want a whole number from 1 to 18446744073709551615, got \"-1\""},
      {"sweep " + seed + vary + " --quantile nan", "--quantile: want a number >= 1 and <= 100, got \"nan\""},
      {"run scenarios/local-ridge.yaml --backend local --time-scale nan",
       "--time-scale: want a number >= 1e-06 and <= 1000, got \"nan\""},
      // A scale past 1000 slept for ever (and its nanoseconds overflowed); a cleanup timeout of 1e10 s
      // overflowed into no wait at all.
      {"run scenarios/local-ridge.yaml --backend local --time-scale 1e300",
       "--time-scale: want a number >= 1e-06 and <= 1000, got \"1e300\""},
      {"compare " + seed + " --variant a --variant b --backend local --time-scale 1001",
       "--time-scale: want a number >= 1e-06 and <= 1000, got \"1001\""},
      // Whole numbers in a range: a word, a fraction or hex said "not in range" or was read as hex.
      {"run scenarios/local-ridge.yaml --backend local --cores abc",
       "--cores: want a whole number from 1 to 4096, got \"abc\""},
      {"run scenarios/local-ridge.yaml --backend local --cores 0x2",
       "--cores: want a whole number from 1 to 4096, got \"0x2\""},
      {"compare " + seed + " --variant a -r 1.5",
       "--replications: want a whole number from 1 to 100000, got \"1.5\""},
      {"k8s cleanup abc --timeout 1e10", "--timeout: want a number > 0 and <= 31536000, got \"1e10\""},
      {"run " + seed + " --backend k8s --dry-run --qps inf", "--qps: want a finite number > 0, got \"inf\""},
      {"sweep " + seed + vary + " --budget 1e400", "--budget: want a finite number >= 0, got \"1e400\""},
      {"simulate " + seed + " --out ''",
       "--out: the value is empty; give one (an empty value is not taken for the option left out)"},
      {"sweep " + seed + vary + " --deadline ''",
       "--deadline: the value is empty; give one (an empty value is not taken for the option left out)"},
      // A value left out takes the next argument, a flag too: the run failed on its steps' images.
      {"run " + seed + " --backend k8s --kubeconfig --emulate",
       "--kubeconfig: got --emulate, which is a flag of this command: give the option its value (it took "
       "the next argument)"},
      {"simulate " + seed + " --out -q",
       "--out: got -q, which is a flag of this command: give the option its value (it took the next "
       "argument)"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const Result r = run(c.args);
    CHECK(r.status == 2);
    CHECK(r.err.rfind(c.err + "\n", 0) == 0);
  }
}

TEST_CASE("cli: devices, bad names and damaged run.json files are refused before any request", "[cli]") {
  const std::string seed = "scenarios/shard-preprocess-train.yaml";
  // /dev/zero never ends: read whole, it filled the memory.
  Result r = run("explain /dev/zero");
  CHECK(r.status == 2);
  CHECK(r.err == "/dev/zero: is a device, not a scenario file\n");
  r = run("explain " + seed + " --overlay /dev/zero");
  CHECK(r.status == 2);
  CHECK(r.err == "--overlay /dev/zero: is a device, not a scenario file\n");
  // A namespace and a run id go into API paths: '../x' and 'a/b' are not names.
  const fs::path dir = scratch("k8s-names");
  std::ofstream(dir / "kc.yaml")
      << "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', "
         "insecure-skip-tls-verify: true}\ncontexts:\n- name: a\n  context: {cluster: "
         "c, namespace: ml}\ncurrent-context: a\n";
  const std::string kc = " --kubeconfig '" + (dir / "kc.yaml").string() + "'";
  r = run("k8s cleanup abc --namespace ../../x" + kc);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--namespace ../../x: a namespace is 1 to 63 characters a-z, 0-9 and '-', starting and ending with a "
        "letter or digit\n");
  r = run("k8s cleanup a/b" + kc);
  CHECK(r.status == 2);
  CHECK(r.err ==
        "k8s cleanup a/b: a run id is 1 to 20 characters a-z, 0-9 and '-', starting and ending with a "
        "letter or digit\n");
  // A run.json with a field of the wrong type: named, exit 2, not a library's exception.
  std::ofstream(dir / "run.json") << "{\"run_id\": \"abc\", \"namespace\": \"ml\", \"seed\": \"x\"}\n";
  r = run("k8s status '" + dir.string() + "'" + kc);
  CHECK(r.status == 2);
  const std::string rj = (dir / "run.json").string();
  CHECK(r.err == rj + ":1:46: seed: expected an integer from 0 to 18446744073709551615, got \"x\"\n");
  // A server that does not answer (port 1 is closed): named with where its address came from, exit 1.
  r = run("k8s cleanup abc" + kc);
  CHECK(r.status == 1);
  CHECK(r.err.starts_with("shardflow: no answer from the API server (" + (dir / "kc.yaml").string() +
                          "): GET /api/v1/namespaces/ml/configmaps"));
  // --resume reads the same file: each wrong field at its place, exit 2, before any request.
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"run_id": "abc", "seed": 3, "invocation": {"file": "a.yaml", "sets": "x"}})",
            ":1:71: invocation.sets: expected a list, got \"x\""},
           {R"({"run_id": "abc", "seed": 3, "invocation": {"file": "a.yaml", "burst": 0}})",
            ":1:72: invocation.burst: expected an integer from 1 to 100000, got 0"},
           {R"({"run_id": "abc", "seed": 3, "state": "done", "invocation": {"file": "a.yaml"}})",
            ":1:39: state: expected \"running\", \"interrupted\", \"finished\" or \"failed\", got \"done\""},
           {R"({"run_id": "abc", "invocation": {"file": "a.yaml"}})",
            ": not the run.json of a `shardflow run --backend k8s`: it does not say the run's seed"},
           {R"({"run_id": "abc", "seed": 3})",
            ": not the run.json of a `shardflow run --backend k8s`: it does not say how the run was started"},
           {R"({"run_id": "abc", "seed": 3, "invocation": {"file": "a.yaml"})",
            ":1:62: not valid JSON: syntax error while parsing object - unexpected end of input; expected "
            "'}'"}}) {
    std::ofstream(dir / "run.json") << text;
    r = run("run --resume '" + dir.string() + "'" + kc);
    INFO(text);
    CHECK(r.status == 2);
    CHECK(r.err == rj + message + "\n");
  }
  // A local or simulated run's directory (no run.json): --resume is for k8s runs.
  std::filesystem::remove(dir / "run.json");
  r = run("run --resume '" + dir.string() + "' --backend local" + kc);
  CHECK(r.status == 2);
  CHECK(r.err == "--resume " + dir.string() +
                     ": continues a `run --backend k8s` only (its pods go on without shardflow); a run of "
                     "--backend local is run again, without --resume\n");
  // A flag that would change the resumed run, or not run it (--dry-run), is refused before any request
  // (port 1 is closed: a request would fail otherwise), not dropped.
  std::ofstream(dir / "run.json") << R"({"run_id": "abc", "seed": 3, "invocation": {"file": "a.yaml"}})";
  const std::string why =
      ": cannot be given with --resume, which continues run abc as it was started (its scenario, "
      "options, seed, namespace and output directory, from " +
      rj + "; --kubeconfig, --context, --keep and -q may be given)";
  for (const auto& [flags, flag] :
       std::vector<std::pair<std::string, std::string>>{{"--backend k8s --dry-run", "--dry-run"},
                                                        {"--backend local", "--backend"},
                                                        {"--set seed=4", "--set"},
                                                        {"--seed 9", "--seed"},
                                                        {"--namespace other", "--namespace"},
                                                        {"--no-files", "--no-files"},
                                                        {"--out /tmp/elsewhere", "--out"},
                                                        {"--qps 5", "--qps"}}) {
    r = run("run --resume '" + dir.string() + "' " + flags + kc);
    INFO(flags);
    CHECK(r.status == 2);
    CHECK(
        r.err ==
        flag + why +
            (flag == "--dry-run" ? ": a dry run of it would be `run` with those options and --dry-run" : "") +
            "\n");
  }
}

TEST_CASE("cli: output that cannot be written is a failed run, not a success", "[cli]") {
  // /dev/full refuses every write (ENOSPC): the command's table is lost, so it must not exit 0.
  const fs::path dir = scratch("dev-full");
  for (const std::string& command : std::vector<std::string>{
           "explain scenarios/shard-preprocess-train.yaml",
           "explain --json scenarios/shard-preprocess-train.yaml",
           "simulate scenarios/shard-preprocess-train.yaml --out '" + (dir / "sim").string() + "'"}) {
    const std::string cmd = std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && '" + SHARDFLOW_EXE + "' " +
                            command + " >/dev/full 2>'" + (dir / "err").string() + "'";
    const int raw = std::system(cmd.c_str());
    INFO(command);
    CHECK(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 1);
    const std::string err = slurp(dir / "err");
    CHECK(err.rfind("shardflow: could not write all of the output to standard output", 0) == 0);
  }
}

TEST_CASE("cli: a scenario's name makes one directory under out/, whatever its characters", "[cli]") {
  // The default output directory is out/<name>: a name with '/' or '..' must not reach outside out/.
  const fs::path dir = scratch("name-dir");
  const fs::path yaml = dir / "n.yaml";
  const fs::path work = dir / "work";
  fs::create_directories(work);
  for (const auto& [name, made] : std::vector<std::pair<std::string, std::string>>{
           {"../escaped", "___escaped-2f8f9807"},
           {"/tmp/abs", "_tmp_abs-50645dc4"},
           {"..", "__-a3d4a70d"},
           {".hidden", "_hidden-4747f185"},
           {"a b:c", "a_b_c-7eda9561"},
           {"v1.2", "v1.2"},
           {"训练", "训练"},
           {"训练 2", "训练_2-7f5b0c8f"},
           // Changed names get a hash of the whole name (FNV-1a, computed apart): "team/a" and "team_a"
           // have a directory each, and so do two long names that begin alike.
           {"team/a", "team_a-32e196e8"},
           {"team_a", "team_a"},
           {std::string(150, 'x'), std::string(100, 'x') + "-4e5566bd"},
           {"a\xc2\x9b"
            "b",
            "a_b-c78a0653"},  // a C1 control character (CSI) is not kept
           // Nor one that prints as nothing or as a space: `a<U+200B>b` read as `ab` in a listing.
           {"a\xe2\x80\x8b"
            "b",
            "a_b-ec86cb37"},
           {"a\xe2\x80\xae"
            "b",
            "a_b-f22a56d6"},  // a right-to-left override
           {"a\xc2\xa0"
            "b",
            "a_b-fd296054"}}) {  // a no-break space
    std::ofstream(yaml) << "name: '" << name
                        << "'\noverheads: none\ncluster:\n  node_pools:\n"
                           "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1}\n"
                           "pipeline:\n  steps:\n    - {name: a, duration: {base: 1s}}\n";
    const std::string cmd = "cd '" + work.string() + "' && '" + SHARDFLOW_EXE + "' simulate '" +
                            yaml.string() + "' -q >/dev/null 2>&1";
    INFO(name);
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(fs::exists(work / "out" / made / "trace.json"));
  }
  CHECK_FALSE(fs::exists(dir / "escaped"));
  CHECK_FALSE(fs::exists(work / "escaped"));
}

TEST_CASE("cli: explain and simulate print a control character of a name as a hex escape", "[cli]") {
  // An escape sequence in the scenario's name drove the terminal (colours here); a line break in it broke
  // the summary line.
  const fs::path dir = scratch("name-escape");
  for (const auto& [written, shown] : {std::pair<std::string, std::string>{"a\\e[31mb", "a\\x1B[31mb"},
                                       std::pair<std::string, std::string>{"two\\nlines", "two lines"}}) {
    INFO(written);
    std::ofstream(dir / "e.yaml") << "name: \"" + written +
                                         "\"\noverheads: none\ncluster:\n  node_pools:\n"
                                         "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1}\n"
                                         "pipeline:\n  steps:\n    - {name: a, duration: {base: 1s}}\n";
    const Result ex = run("explain '" + (dir / "e.yaml").string() + "'");
    CHECK(ex.status == 0);
    CHECK(ex.out.rfind("pipeline " + shown + ": 1 task, ", 0) == 0);
    const Result sim = run("simulate '" + (dir / "e.yaml").string() + "' --no-files");
    CHECK(sim.status == 0);
    CHECK(sim.out.rfind("simulated " + shown + " (seed 1): ", 0) == 0);
  }
}

TEST_CASE("cli: simulate names the tasks a failure kept from running", "[cli]") {
  // Every item of w fails (p 1, no retries); m waits on the whole loop (through its join, which is not a
  // task a user wrote and is not named), and the 7 items of t on m; `free` depends on nothing and runs.
  const fs::path dir = scratch("simulate-not-run");
  const fs::path yaml = dir / "fail.yaml";
  std::ofstream(yaml) << "name: fail\nseed: 1\noverheads: none\ncluster:\n  node_pools:\n"
                         "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1, price_per_hour: 1}\n"
                         "pipeline:\n  steps:\n"
                         "    - {name: w, parallel_for: {count: 3}, duration: {base: 1s}, failure: {p: 1},\n"
                         "       retries: {max: 0}}\n"
                         "    - {name: m, after: [w], duration: {base: 1s}}\n"
                         "    - {name: t, after: [m], parallel_for: {count: 7}, duration: {base: 1s}}\n"
                         "    - {name: free, duration: {base: 1s}}\n";
  const Result r = run("simulate '" + yaml.string() + "' --no-files");
  CHECK(r.err == "");
  CHECK(r.status == 1);
  CHECK(r.out.find("  retries      0; failed attempts 3; tasks failed 3\n") != std::string::npos);
  CHECK(r.out.find("  failed tasks w[0] (1 attempt), w[1] (1 attempt), w[2] (1 attempt)\n") !=
        std::string::npos);
  CHECK(
      r.out.find("  not run      8 tasks never started because a task they depend on failed: m, t[0], t[1], "
                 "t[2], t[3], and 3 more\n") != std::string::npos);
  // One task kept from running is named in the singular.
  std::ofstream(yaml) << "name: fail\nseed: 1\noverheads: none\ncluster:\n  node_pools:\n"
                         "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1, price_per_hour: 1}\n"
                         "pipeline:\n  steps:\n"
                         "    - {name: a, duration: {base: 1s}, failure: {p: 1}, retries: {max: 1}}\n"
                         "    - {name: b, after: [a], duration: {base: 1s}}\n";
  const Result one = run("simulate '" + yaml.string() + "' --no-files");
  CHECK(one.status == 1);
  CHECK(one.out.find("  failed tasks a (2 attempts)\n") != std::string::npos);
  CHECK(one.out.find("  not run      1 task never started because a task it depends on failed: b\n") !=
        std::string::npos);
  // Nothing failed: no such line.
  const Result ok = run("simulate scenarios/shard-preprocess-train.yaml --no-files");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("not run") == std::string::npos);
}

TEST_CASE("cli: simulate counts a speculative backup apart from retries, in the summary and the files",
          "[cli]") {
  // tests/sim/speculation_test.cpp's case: 10 items of 10 s, one a 4x straggler (seed 4 makes item 5 one);
  // its backup starts at 15 s, wins at 25 s, and the original is cancelled then.
  const fs::path dir = scratch("simulate-backup");
  const fs::path yaml = dir / "spec.yaml";
  std::ofstream(yaml) << "name: spec\nseed: 4\noverheads: none\ncluster:\n  node_pools:\n"
                         "    - {name: cpu, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 36}\n"
                         "pipeline:\n  steps:\n"
                         "    - {name: shard, parallel_for: {count: 10}, resources: {cpu: 1, memory: 1Gi}, "
                         "duration: {base: 10s, straggler: {p: 0.1, factor: 4}}, "
                         "speculation: {after: 1.5x, max: 1}}\n";
  const Result r = run("simulate '" + yaml.string() + "' --out '" + (dir / "out").string() + "'");
  CHECK(r.err == "");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("makespan     25s (25.000 s)") != std::string::npos);
  CHECK(r.out.find("  retries      0; failed attempts 0; tasks failed 0\n"
                   "  backups      1 (1 won); replacements 0; cancelled attempts 1\n") != std::string::npos);
  const auto metrics = nlohmann::json::parse(slurp(dir / "out" / "metrics.json"));
  CHECK(metrics["attempts"] == 11);
  CHECK(metrics["retries"] == 0);
  CHECK(metrics["backups"] == 1);
  CHECK(metrics["backups_won"] == 1);
  CHECK(metrics["replacements"] == 0);
  CHECK(metrics["failed_attempts"] == 0);
  CHECK(metrics["cancelled_attempts"] == 1);
  const std::string csv = slurp(dir / "out" / "trace.csv");
  CHECK(csv.find(",25.000000000,cancelled,first,") != std::string::npos);
  CHECK(csv.find("5,shard,5,1,cpu-0,15.000000000,15.000000000,15.000000000,25.000000000,succeeded,backup,") !=
        std::string::npos);
  const std::string html = slurp(dir / "out" / "report.html");
  CHECK(html.find("<div class=\"label\">backups</div><div class=\"value\">1</div>") != std::string::npos);
}

TEST_CASE("cli: --help and --version that cannot be written are a failure, not a success", "[cli]") {
  // The help is what the user asked for: lost to a full disk (/dev/full), it must not exit 0 silently.
  const fs::path dir = scratch("dev-full-help");
  for (const std::string args :
       {"--help", "-h", "--version", "validate --help", "explain --help", "simulate --help", "run --help",
        "sweep --help", "merge --help", "compare --help", "calibrate --help", "report --help", "k8s --help",
        "k8s cleanup --help", "k8s status --help"}) {
    const std::string cmd = std::string("cd '") + SHARDFLOW_SOURCE_DIR + "' && '" + SHARDFLOW_EXE + "' " +
                            args + " >/dev/full 2>'" + (dir / "err").string() + "'";
    const int raw = std::system(cmd.c_str());
    INFO(args);
    CHECK(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 1);
    // With the reason when the last write failed; a help larger than the buffer failed at an earlier
    // write, whose errno is gone by then.
    const std::string err = slurp(dir / "err");
    const std::string message = "shardflow: could not write all of the output to standard output";
    CHECK((err == message + "\n" || err == message + " (No space left on device)\n"));
    // Written where it can be, the same help exits 0.
    const Result ok = run(args);
    CHECK(ok.status == 0);
    CHECK(!ok.out.empty());
    CHECK(ok.err.empty());
  }
}

TEST_CASE("cli: a field given twice in two spellings is refused like one given twice", "[cli]") {
  // pool `cpu` is cluster.node_pools[0] in the seed scenario.
  const std::string sweep =
      "sweep scenarios/shard-preprocess-train.yaml -r 1 -q --out '" + scratch("sweep-alias").string() + "' ";
  SECTION("two --vary of one field, by name and by index") {
    const Result r =
        run(sweep + "--vary 'cluster.node_pools[cpu].count=2,3' --vary 'cluster.node_pools[0].count=4,5'");
    CHECK(r.status == 2);
    CHECK(r.out == "");
    CHECK(r.err ==
          "--vary cluster.node_pools[0].count=4,5: cluster.node_pools[0].count: this field is varied twice, "
          "here "
          "and by --vary cluster.node_pools[cpu].count=2,3 (both set cluster.node_pools[0].count); give its "
          "values in one --vary\n");
  }
  SECTION("two --vary of one field in the same spelling: the same message, naming both") {
    const Result r =
        run(sweep + "--vary 'cluster.node_pools[cpu].count=2,3' --vary 'cluster.node_pools[cpu].count=4,5'");
    CHECK(r.status == 2);
    CHECK(r.err ==
          "--vary cluster.node_pools[cpu].count=4,5: cluster.node_pools[cpu].count: this field is varied "
          "twice, "
          "here and by --vary cluster.node_pools[cpu].count=2,3; give its values in one --vary\n");
  }
  SECTION("an index with a leading zero, and no dot after ']'") {
    const Result r =
        run(sweep + "--vary 'cluster.node_pools[0].count=2,3' --vary 'cluster.node_pools[00]count=4,5'");
    CHECK(r.status == 2);
    CHECK(
        r.err ==
        "--vary cluster.node_pools[00]count=4,5: cluster.node_pools[00]count: this field is varied twice, "
        "here and by --vary cluster.node_pools[0].count=2,3 (both set cluster.node_pools[0].count); give its "
        "values in one --vary\n");
  }
  SECTION("a --vary of a field a --set gives: the --set would be lost") {
    const Result r =
        run(sweep + "--set 'cluster.node_pools[0].count=40' --vary 'cluster.node_pools[cpu].count=2,3'");
    CHECK(r.status == 2);
    CHECK(
        r.err ==
        "--vary cluster.node_pools[cpu].count=2,3: cluster.node_pools[cpu].count: this field is also given "
        "by "
        "--set cluster.node_pools[0].count=40 (both set cluster.node_pools[0].count), which no configuration "
        "would use; leave out the --set\n");
  }
  SECTION("two --set of one field: the last wins, in any spelling") {
    const std::string validate = "validate scenarios/shard-preprocess-train.yaml ";
    for (const std::string sets :
         {"--set 'cluster.node_pools[cpu].count=2' --set 'cluster.node_pools[0].count=3'",
          "--set 'cluster.node_pools[0].count=2' --set 'cluster.node_pools[cpu].count=3'",
          "--set 'cluster.node_pools[cpu].count=2' --set 'cluster.node_pools[cpu].count=3'"}) {
      const Result r = run(validate + sets);
      INFO(sets);
      CHECK(r.status == 0);
      CHECK(r.out ==
            "scenarios/shard-preprocess-train.yaml: ok (104 tasks from 3 component steps; 5 nodes in 2 "
            "pools)\n");
    }
  }
}

TEST_CASE("cli: a 10,000-character step name is shortened in what simulate prints", "[cli]") {
  const fs::path dir = scratch("long-name");
  const std::string name(10'000, 'x');
  const std::string shown = std::string(100, 'x') + "... (9,900 more characters)";
  std::ofstream(dir / "s.yaml") << "name: t\noverheads: none\ncluster:\n  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                                   "pipeline:\n  steps:\n    - {name: "
                                << name
                                << ", failure: {p: 1}, duration: {base: 1s}}\n    - {name: b, after: ["
                                << name << "]}\n";
  const Result r = run("simulate '" + (dir / "s.yaml").string() + "' --out '" + (dir / "out").string() + "'");
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Catch::Contains("\n  failed tasks " + shown + " (1 attempt)\n"));
  CHECK_THAT(r.out, Catch::Contains(
                        "\n  not run      1 task never started because a task it depends on failed: b\n"));
  CHECK(r.out.size() < 2000);
}

TEST_CASE("cli: sweep --emit-job with more slices than configurations is refused", "[cli]") {
  // Each pod of the Indexed Job runs one slice: pods past the configurations would all fail.
  const fs::path dir = scratch("emit-job-many");
  const std::string sweep =
      "sweep scenarios/local-ridge.yaml --vary 'cluster.node_pools[cpu].count=1,2,3' "
      "--vary 'cluster.node_pools[cpu].cpu=4,8' -r 1 --image x --out '" +
      dir.string() + "' --emit-job ";
  const Result r = run(sweep + "7");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--emit-job: 7: the sweep has 6 configurations, fewer than 7 slices: give --emit-job 6 or less\n");
  CHECK_FALSE(fs::exists(dir / "sweep-job.yaml"));
  CHECK(run(sweep + "6").status == 0);
  CHECK(slurp(dir / "sweep-job.yaml").find("completions: 6") != std::string::npos);
  // A scenario name with a line break stays in the first comment line (it ended the comment: the rest of
  // the name was read as YAML).
  CHECK(run(sweep + "6 --set 'name=\"two\\n- lines\"'").status == 0);
  const std::string job = slurp(dir / "sweep-job.yaml");
  CHECK(job.substr(0, job.find('\n')) ==
        "# shardflow sweep of two - lines in 6 slices: an Indexed Job, pod I runs slice I/6.");
  const std::vector<YAML::Node> docs = YAML::LoadAll(job);  // ConfigMap, PersistentVolumeClaim, Job
  REQUIRE(docs.size() == 3);
  CHECK(docs[0]["kind"].as<std::string>() == "ConfigMap");
}

TEST_CASE("cli: sweep --emit-job ships what the pods need and keeps each file's text", "[cli]") {
  const fs::path dir = scratch("emit-job-files");
  // A scenario whose first line is indented: the ConfigMap's block keeps its text (`|2`).
  const std::string text =
      "   # indented first line\n" + slurp(fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios/local-ridge.yaml");
  std::ofstream(dir / "s.yaml") << text;
  const std::string head =
      "sweep '" + (dir / "s.yaml").string() +
      "' --vary 'cluster.node_pools[cpu].count=1,2' -r 1 --image x --emit-job 2 --out '" + dir.string() +
      "/job' ";
  Result r = run(head + "--max-tasks 1000");
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::string job = slurp(dir / "job" / "sweep-job.yaml");
  std::string block;  // the scenario's lines, 4 spaces taken off
  for (std::size_t at = job.find("  scenario.yaml: |2\n") + 20;
       job.compare(at, 4, "    ") == 0 || job[at] == '\n';) {
    const std::size_t end = job.find('\n', at);
    block += job[at] == '\n' ? "\n" : job.substr(at + 4, end + 1 - at - 4);
    at = end + 1;
  }
  CHECK(block == text);
  CHECK(job.find("            - \"--max-tasks\"\n            - \"1000\"\n") != std::string::npos);
  // Byte for byte, whatever the text's end and line breaks (a slice's inputs hash is of the texts): read
  // back as YAML, the ConfigMap holds each file as written.
  for (const std::string& variant :
       {text.substr(0, text.size() - 1), text + "\n\n", std::string(text) + "#\r\n"}) {
    std::ofstream(dir / "v.yaml", std::ios::binary) << variant;
    const Result v = run("sweep '" + (dir / "v.yaml").string() +
                         "' --vary 'cluster.node_pools[cpu].count=1,2' -r 1 --image x --emit-job 2 --out '" +
                         dir.string() + "/jobv'");
    INFO(v.err);
    REQUIRE(v.status == 0);
    const YAML::Node cm = YAML::LoadAllFromFile((dir / "jobv" / "sweep-job.yaml").string()).front();
    CHECK(cm["data"]["scenario.yaml"].as<std::string>() == variant);
  }
  // A $ the user gave reaches the pods as given (Kubernetes expands $(VAR) in args: each $ doubled); the
  // slice's own index is expanded.
  r = run(head + "--set 'description=price $5 run $(JOB_COMPLETION_INDEX)'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  job = slurp(dir / "job" / "sweep-job.yaml");
  CHECK(job.find("            - \"--set\"\n            - \"description=price $$5 run "
                 "$$(JOB_COMPLETION_INDEX)\"\n") != std::string::npos);
  CHECK(job.find("            - \"--shard\"\n            - \"$(JOB_COMPLETION_INDEX)/2\"\n") !=
        std::string::npos);
  // --cluster local is the machine that runs shardflow: in a Job, each pod's own node.
  r = run(head + "--cluster local");
  CHECK(r.status == 2);
  CHECK(
      r.err ==
      "--cluster: local is the machine shardflow runs on: in the Job each pod would model the node it landed "
      "on, and the slices would be of different clusters; give the cluster in the scenario or an overlay\n");
  // A KFP pipeline's cluster file goes in the ConfigMap, and the pods read it there.
  std::ofstream(dir / "clus.yaml") << "cluster: {node_pools: [{name: cpu, cpu: 2, memory: 8Gi, count: 2}]}\n";
  r = run(
      "sweep "
      "tests/data/kfp/test_data/sdk_compiled_pipelines/valid/pipeline_with_parallelfor_pipeline_param.yaml "
      "--param 'loop_parameter=[1,2,3]' --cluster '" +
      (dir / "clus.yaml").string() +
      "' --vary 'cluster.node_pools[cpu].count=1,2' -r 1 --image x --emit-job 2 --out '" + dir.string() +
      "/kfp'");
  REQUIRE(r.status == 0);
  job = slurp(dir / "kfp" / "sweep-job.yaml");
  CHECK(
      job.find(
          "  cluster.yaml: |2\n    cluster: {node_pools: [{name: cpu, cpu: 2, memory: 8Gi, count: 2}]}\n") !=
      std::string::npos);
  CHECK(job.find("            - \"--cluster\"\n            - \"/sweep/input/cluster.yaml\"\n") !=
        std::string::npos);
  // More than a ConfigMap holds (1 MiB of data).
  const std::string wf = "tests/data/wfcommons/seismology-chameleon-1000p-001.json";
  r = run("sweep " + wf + " --vary 'cluster.node_pools[0].count=1,2' -r 1 --image x --emit-job 2 --out '" +
          dir.string() + "/big'");
  CHECK(r.status == 2);
  CHECK(r.err == "--emit-job: " + wf + " is " +
                     std::to_string(fs::file_size(fs::path(SHARDFLOW_SOURCE_DIR) / wf)) + " bytes (" +
                     std::to_string(fs::file_size(fs::path(SHARDFLOW_SOURCE_DIR) / wf) + 13) +
                     " in the ConfigMap, with the keys), more than a ConfigMap holds (1 MiB); run the slices "
                     "with --shard "
                     "I/N on machines of your own and merge them (docs/planner.md)\n");
  CHECK_FALSE(fs::exists(dir / "big" / "sweep-job.yaml"));
}

TEST_CASE("cli: sweep --emit-job names its objects after the sweep, not only its scenario", "[cli]") {
  const fs::path dir = scratch("emit-job-names");
  // A scenario name of 60 characters: the Job's name stays a DNS label of at most 63.
  std::string text = slurp(fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios/local-ridge.yaml");
  const std::size_t at = text.find("\nname: ");
  REQUIRE(at != std::string::npos);
  text.replace(at + 7, text.find('\n', at + 1) - at - 7, std::string(60, 'r'));
  std::ofstream(dir / "s.yaml") << text;
  const auto job_name = [&](const std::string& vary, const std::string& out) {
    const Result r = run("sweep '" + (dir / "s.yaml").string() + "' --vary '" + vary +
                         "' -r 1 --image x --emit-job 2 --out '" + (dir / out).string() + "'");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const std::string job = slurp(dir / out / "sweep-job.yaml");
    const std::string key = "kind: Job\nmetadata:\n  name: ";
    const std::size_t kind = job.find(key);
    REQUIRE(kind != std::string::npos);
    const std::size_t from = kind + key.size();
    const std::string name = job.substr(from, job.find('\n', from) - from);
    // The ConfigMap and the claim carry the same name.
    CHECK(job.find("name: " + name + "-input\n") != std::string::npos);
    CHECK(job.find("claimName: " + name + "-results}") != std::string::npos);
    return name;
  };
  const std::string a = job_name("cluster.node_pools[cpu].count=1,2", "a");
  const std::string again = job_name("cluster.node_pools[cpu].count=1,2", "again");
  const std::string other = job_name("cluster.node_pools[cpu].count=1,3", "other");
  CHECK(a == again);  // the same sweep: the same objects
  CHECK(a != other);  // another sweep of the same scenario: its own objects beside these
  CHECK(a.size() <= 63);
  CHECK(a.starts_with("shardflow-sweep-rrrr"));
  CHECK(std::all_of(a.begin(), a.end(),
                    [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }));
  CHECK(a.back() != '-');
  CHECK(a.substr(0, a.size() - 8) == other.substr(0, other.size() - 8));
}

TEST_CASE("cli: sweep --emit-job refuses what the sweep in its pods would refuse", "[cli]") {
  // The Job's pods run the sweep with these flags: a --vary the sweep refuses would fail every pod, so
  // --emit-job loads every configuration first and writes nothing.
  const fs::path dir = scratch("emit-job-checked");
  const std::string head =
      "sweep scenarios/local-ridge.yaml -r 1 --image x --emit-job 2 --out '" + dir.string() + "' ";
  Result r = run(head + "--vary seed=1,2,3");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--vary seed=1,2,3: seed: the seed is not a setting to compare: every configuration runs the same "
        "seeds (--seed, then one more per -r run); leave it out of --vary\n");
  // A bad value in the last configuration, which only its own slice's pod would have loaded.
  r = run(head + "--vary 'cluster.node_pools[cpu].count=1,2,x'");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--vary cluster.node_pools[cpu].count=1,2,x: cluster.node_pools[0].count: value x: expected "
        "an integer, got \"x\"\n");
  r = run(head + "--vary 'cluster.node_pools[cpu].count=1,2' --vary 'cluster.node_pools[cpu].count=3,4'");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::StartsWith("--vary cluster.node_pools[cpu].count=3,4: "));
  CHECK_FALSE(fs::exists(dir / "sweep-job.yaml"));
  CHECK(run(head + "--vary 'cluster.node_pools[cpu].count=1,2'").status == 0);
  CHECK(fs::exists(dir / "sweep-job.yaml"));
}

TEST_CASE("cli: simulate prints a small cost with two significant digits, not rounded to 0.00", "[cli]") {
  // One 15 s task on a node of 3.6 an hour: 0.015 (it printed 0.01); at 0.036 an hour 0.00015 (0.00).
  const fs::path dir = scratch("small-cost");
  std::ofstream(dir / "c.yaml")
      << "name: c\noverheads: none\npipeline:\n  steps:\n"
         "    - {name: a, duration: {base: 15s}}\ncluster:\n"
         "  node_pools: [{name: p, cpu: 4, memory: 1Gi, count: 1, price_per_hour: 3.6}]\n";
  const std::string file = (dir / "c.yaml").string();
  CHECK(run("simulate '" + file + "' --no-files").out.find("\n  cost         0.015 (") != std::string::npos);
  CHECK(run("simulate '" + file + "' --no-files --set cluster.node_pools[p].price_per_hour=0.036")
            .out.find("\n  cost         0.00015 (") != std::string::npos);
  CHECK(run("simulate '" + file + "' --no-files --set cluster.node_pools[p].price_per_hour=360")
            .out.find("\n  cost         1.50 (") != std::string::npos);
}

TEST_CASE("cli: a run and a sweep and a comparison of one scenario keep their own files under out/<name>",
          "[cli]") {
  // They shared out/<name>: the last one's report.html replaced the others'.
  const fs::path dir = scratch("out-kinds");
  std::ofstream(dir / "k.yaml") << "name: kinds\noverheads: none\ncluster:\n  node_pools:\n"
                                   "    - {name: cpu, cpu: 4, memory: 16Gi, count: 1}\n"
                                   "pipeline:\n  steps:\n    - {name: a, duration: {base: 1s}}\n";
  const auto in_dir = [&](const std::string& args) {
    const std::string cmd =
        "cd '" + dir.string() + "' && '" + SHARDFLOW_EXE + "' " + args + " -q >/dev/null 2>&1";
    return std::system(cmd.c_str());
  };
  CHECK(in_dir("simulate k.yaml") == 0);
  const std::string run_report = slurp(dir / "out" / "kinds" / "report.html");
  CHECK(in_dir("sweep k.yaml -r 2 --vary cluster.node_pools[cpu].count=1,2") == 0);
  CHECK(in_dir("compare k.yaml -r 2 --variant a --variant 'b:cluster.node_pools[cpu].count=2'") == 0);
  CHECK(in_dir("sweep k.yaml -r 2 --vary cluster.node_pools[cpu].count=1,2 --shard 0/2") == 0);
  CHECK(in_dir("sweep k.yaml -r 2 --vary cluster.node_pools[cpu].count=1,2 --shard 1/2") == 0);
  fs::remove_all(dir / "out" / "kinds" / "sweep");
  CHECK(in_dir("merge out/kinds/sweep-shard-0-of-2 out/kinds/sweep-shard-1-of-2") == 0);
  CHECK(fs::exists(dir / "out" / "kinds" / "trace.json"));
  CHECK(slurp(dir / "out" / "kinds" / "report.html") == run_report);
  CHECK(fs::exists(dir / "out" / "kinds" / "sweep" / "sweep.json"));  // the merge's
  CHECK(fs::exists(dir / "out" / "kinds" / "sweep" / "report.html"));
  CHECK(fs::exists(dir / "out" / "kinds" / "compare" / "compare.json"));
  CHECK(fs::exists(dir / "out" / "kinds" / "sweep-shard-0-of-2" / "sweep.json"));
  CHECK(fs::exists(dir / "out" / "kinds" / "sweep-shard-1-of-2" / "sweep.json"));
  CHECK_FALSE(fs::exists(dir / "out" / "kinds" / "sweep.json"));
  CHECK_FALSE(fs::exists(dir / "out" / "kinds" / "compare.json"));
}

TEST_CASE("cli: run --backend local says when a step's command is not run and puts a first error on one line",
          "[cli]") {
  const fs::path dir = scratch("local-command-note");
  const std::string yaml =
      "name: ml\npipeline:\n  steps:\n"
      "    - name: bad\n      resources: {cpu: 1, memory: 64Mi}\n"
      "      command: [sh, -c, \"echo line one >&2; echo >&2; printf 'tab\\\\there\\\\r\\\\n' >&2; exit "
      "3\"]\n"
      "cluster:\n  node_pools: [{name: p, cpu: 2, memory: 4Gi, count: 1}]\n";
  std::ofstream(dir / "ml.yaml") << yaml;
  // No kernel: the task waits its modelled run time (none), and the note says the command did not run.
  const Result waits = run("run '" + (dir / "ml.yaml").string() + "' --backend local --no-files");
  CHECK(waits.status == 0);
  CHECK(waits.err ==
        "run: note: step bad has a command but no kernel: the local backend waited each task's modelled run "
        "time instead of running it (kernel: {name: command} runs the command here)\n");
  // With the command kernel: it fails; the summary's first error is one line, the stderr's lines joined.
  std::string with_kernel = yaml;
  with_kernel.replace(with_kernel.find("      command:"), 0, "      kernel: {name: command}\n");
  std::ofstream(dir / "ml.yaml") << with_kernel;
  const Result fails = run("run '" + (dir / "ml.yaml").string() + "' --backend local --no-files");
  CHECK(fails.status == 1);
  CHECK(fails.err == "");
  CHECK(fails.out.find("\n  first error  bad attempt 0: command exited with status 3; stderr: line one | tab "
                       "here\n") != std::string::npos);
}

TEST_CASE("cli: an --out that would write a result over an input is refused and the input kept", "[cli]") {
  const fs::path dir = scratch("out-over-input");
  const std::string scenario =
      slurp(fs::path(SHARDFLOW_SOURCE_DIR) / "scenarios/argo-parallelism-limit.yaml");
  REQUIRE(!scenario.empty());
  // simulate: a scenario saved as trace.json in the output directory.
  std::ofstream(dir / "trace.json") << scenario;
  const Result sim = run("simulate '" + (dir / "trace.json").string() + "' --out '" + dir.string() + "'");
  CHECK(sim.status == 2);
  CHECK(sim.err == "--out: " + (dir / "trace.json").string() + " would be written over " +
                       (dir / "trace.json").string() +
                       ", an input of this command: name another directory (or move the input)\n");
  CHECK(slurp(dir / "trace.json") == scenario);
  // compare: its overlay as compare.csv.
  std::ofstream(dir / "compare.csv") << "seed: 3\n";
  const Result cmp =
      run("compare scenarios/argo-parallelism-limit.yaml --overlay '" + (dir / "compare.csv").string() +
          "' --variant a --variant b -r 1 --out '" + dir.string() + "'");
  CHECK(cmp.status == 2);
  CHECK(cmp.err.find("--out: " + (dir / "compare.csv").string() + " would be written over ") == 0);
  CHECK(slurp(dir / "compare.csv") == "seed: 3\n");
  // report: --out naming the trace it reads.
  const fs::path runs = dir / "run";
  REQUIRE(run("simulate scenarios/argo-parallelism-limit.yaml -q --out '" + runs.string() + "'").status == 0);
  const std::string trace = slurp(runs / "trace.json");
  const Result rep =
      run("report '" + runs.string() + "' --out '" + (runs / "." / "trace.json").string() + "'");
  CHECK(rep.status == 2);
  CHECK(rep.err == "--out: " + (runs / "." / "trace.json").string() + " is one of the inputs (" +
                       (runs / "trace.json").string() + "): name a new file\n");
  CHECK(slurp(runs / "trace.json") == trace);
}

TEST_CASE("cli: a directory where report or merge reads a file is bad input naming it", "[cli]") {
  const fs::path dir = scratch("input-is-a-directory");
  fs::create_directories(dir / "run" / "trace.json");
  const Result rep = run("report '" + (dir / "run").string() + "'");
  CHECK(rep.status == 2);
  CHECK(rep.err == (dir / "run" / "trace.json").string() + ": is a directory, not the file expected here\n");
  fs::create_directories(dir / "slice" / "sweep.json");
  const Result merge =
      run("merge '" + (dir / "slice").string() + "' --out '" + (dir / "merged").string() + "'");
  CHECK(merge.status == 2);
  CHECK(merge.err ==
        (dir / "slice" / "sweep.json").string() + ": is a directory, not the file expected here\n");
}

TEST_CASE("cli: run --backend local reports a bad file's kernel problems with its others in one go",
          "[cli]") {
  const fs::path dir = scratch("local-all-problems");
  std::ofstream(dir / "k5.yaml")
      << "name: k5\npipeline:\n  steps:\n"
         "    - name: a\n      resources: {cpu: 1, memory: 64Mi}\n"
         "      kernel: {name: shard_stat}\n"
         "    - name: b\n      resources: {cpu: -1, memory: 64Mi}\n"
         "    - name: c\n      after: [nope]\n      kernel: {name: spin, secondz: 1}\n"
         "cluster:\n  node_pools: [{name: p, cpu: 2, memory: 4Gi, count: 1}]\n";
  const std::string file = (dir / "k5.yaml").string();
  const Result v = run("validate '" + file + "'");
  const Result r = run("run '" + file + "' --backend local --no-files");
  CHECK(v.status == 2);
  CHECK(r.status == 2);
  CHECK(r.err == v.err);
  CHECK(r.err.find("unknown kernel \"shard_stat\"") != std::string::npos);
  CHECK(r.err.find("unknown parameter \"secondz\"") != std::string::npos);
  CHECK(r.err.substr(r.err.size() - 13) == ": 4 problems\n");
}

TEST_CASE("cli: a command's output that cannot be written is said as such", "[cli]") {
  const fs::path dir = scratch("command-output-blocked");
  std::ofstream(dir / "cmd.yaml") << "name: cmd\npipeline:\n  steps:\n"
                                     "    - name: c\n      resources: {cpu: 1, memory: 64Mi}\n"
                                     "      kernel: {name: command}\n      command: [sh, -c, \"echo hi\"]\n"
                                     "cluster:\n  node_pools: [{name: p, cpu: 2, memory: 4Gi, count: 1}]\n";
  const std::string file = (dir / "cmd.yaml").string();
  // A file named commands in --out: refused before the run.
  fs::create_directories(dir / "a");
  std::ofstream(dir / "a" / "commands") << "x";
  const Result blocked = run("run '" + file + "' --backend local --out '" + (dir / "a").string() + "'");
  CHECK(blocked.status == 2);
  CHECK(blocked.err == "--out: " + (dir / "a" / "commands").string() +
                           " is a file, not a directory: the commands' standard output and error go in " +
                           (dir / "a" / "commands").string() + "\n");
  // A directory where the attempt's stdout file goes: the attempt fails naming it (not "could not start").
  fs::create_directories(dir / "b" / "commands" / "c.attempt0.stdout");
  const Result in_way = run("run '" + file + "' --backend local --out '" + (dir / "b").string() + "'");
  CHECK(in_way.status == 1);
  CHECK(in_way.out.find("\n  first error  c attempt 0: cannot write the command's output file " +
                        (dir / "b" / "commands" / "c.attempt0.stdout").string() + ": Is a directory\n") !=
        std::string::npos);
}

TEST_CASE("cli: an option given twice or without a value or a switch given one is said plainly", "[cli]") {
  // CLI11's own words were "At Most 1 required but received 2", "1 required TEXT:UINT64 missing" and
  // "Could not convert: --no-files = banana".
  const std::string f = "simulate scenarios/argo-parallelism-limit.yaml ";
  const auto err = [](const std::string& args) {
    const Result r = run(args);
    CHECK(r.status == 2);
    CHECK(r.out == "");
    return r.err;
  };
  CHECK(err(f + "--seed 1 --seed 2") == "--seed: given 2 times; it takes one value: give it once\n");
  CHECK(err(f + "--seed=") == "--seed: the value is missing; give one (--seed VALUE)\n");
  CHECK(err(f + "--no-files=banana") ==
        "--no-files: is a switch and takes no value, got \"banana\" (leave the value out)\n");
  CHECK(err(f + "-q=1") == "-q=1: a short option takes no '=' (-q alone, or its long name --NAME=VALUE)\n");
  CHECK(err("run scenarios/argo-parallelism-limit.yaml --backend ''") ==
        "--backend: the value is empty; give one of sim, local, k8s\n");
  CHECK(err("run scenarios/argo-parallelism-limit.yaml --backend cloud") ==
        "--backend: \"cloud\" is not one of sim, local, k8s\n");
  CHECK(err("merge ''") == "an empty directory name was given; name each directory\n");
}
