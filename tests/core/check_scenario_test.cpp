// check_scenario_file (shardflow validate): every problem a scenario file has, each once, in file order;
// what it skips so that one mistake is one message; and that load_scenario_file is unchanged by it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

using namespace shardflow;
namespace fs = std::filesystem;

namespace {

// `text` written to a file of its own (test cases run in parallel processes); its path.
std::string write_file(const std::string& name, const std::string& text) {
  const fs::path dir =
      fs::path(SHARDFLOW_BINARY_DIR) / "test-scratch" / "check-scenario" / std::to_string(getpid());
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::vector<std::string> messages(const ScenarioCheck& c) {
  std::vector<std::string> out;
  for (const InputError& e : c.problems) out.emplace_back(e.what());
  return out;
}

// The message load_scenario_file throws, or "loaded".
std::string first_error(const std::string& path, const LoadOptions& options = {}) {
  try {
    (void)load_scenario_file(path, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

}  // namespace

TEST_CASE("check_scenario_file: every problem of a file, in the file's order", "[core]") {
  const std::string f = write_file("many.yaml",
                                   "name: many\n"                                           // 1
                                   "sede: 3\n"                                              // 2
                                   "pipeline:\n"                                            // 3
                                   "  steps:\n"                                             // 4
                                   "    - name: a\n"                                        // 5
                                   "      duration: {base: 10 parsecs}\n"                   // 6
                                   "    - name: b\n"                                        // 7
                                   "      after: [a]\n"                                     // 8
                                   "      parallel_for: {count: 4, paralelism: 2}\n"        // 9
                                   "    - name: c\n"                                        // 10
                                   "      after: [b]\n"                                     // 11
                                   "      retries: {max: -1}\n"                             // 12
                                   "cluster:\n"                                             // 13
                                   "  node_pools:\n"                                        // 14
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 2}\n"       // 15
                                   "    - {name: q, cpu: four, memory: 8Gi, count: 1}\n");  // 16
  const ScenarioCheck c = check_scenario_file(f, {});
  CHECK_FALSE(c.scenario);
  const std::vector<std::string> expected{
      f + ":2:1: sede: unknown key \"sede\" (did you mean \"seed\"?)",
      f + ":6:24: pipeline.steps[0].duration.base: a space in duration \"10 parsecs\": write each number "
          "with "
          "its unit, without spaces (h, m, s, ms, us or ns: 90s, 2h30m, 500ms)",
      f + ":9:32: pipeline.steps[1].parallel_for.paralelism: unknown key \"paralelism\" (did you mean "
          "\"parallelism\"?)",
      f + ":12:22: pipeline.steps[2].retries.max: must be >= 0, got -1",
      f + ":16:22: cluster.node_pools[1].cpu: expected a CPU quantity such as 4, 1.5 or 500m, got \"four\"",
  };
  CHECK(messages(c) == expected);
  // Without collecting, the load stops at the first problem it meets, one of those.
  const std::string first = first_error(f);
  CHECK(std::find(expected.begin(), expected.end(), first) != expected.end());
}

TEST_CASE("check_scenario_file: every step's fan_in problem, not the first alone", "[core]") {
  const std::string f = write_file("fan-in.yaml",
                                   "name: v\n"                                                     // 1
                                   "overheads: none\n"                                             // 2
                                   "pipeline:\n"                                                   // 3
                                   "  steps:\n"                                                    // 4
                                   "    - {name: pre, parallel_for: {count: 4}}\n"                 // 5
                                   "    - {name: pre2, parallel_for: {count: 4}}\n"                // 6
                                   "    - {name: single}\n"                                        // 7
                                   "    - {name: agg2, after: [single], fan_in: {arity: 2}}\n"     // 8
                                   "    - {name: agg3, after: [pre, pre2], fan_in: {arity: 2}}\n"  // 9
                                   "cluster: {node_pools: [{name: n, cpu: 1, memory: 4Gi, count: 1}]}\n");
  const ScenarioCheck c = check_scenario_file(f, {});
  CHECK_FALSE(c.scenario);
  const std::vector<std::string> expected{
      f + ":8:37: pipeline.steps[3].fan_in: needs an `after` step with a parallel_for (the loop whose "
          "outputs it "
          "merges)",
      f + ":9:40: pipeline.steps[4].fan_in: waits for two loops (pre and pre2); fan_in merges one",
  };
  CHECK(messages(c) == expected);
  CHECK(first_error(f) == expected[0]);
}

TEST_CASE(
    "check_scenario_file: fan_in is checked beside other steps' problems, and every pod-name clash is said",
    "[core]") {
  // A misplaced fan_in went unsaid whenever any step anywhere had a problem; only the first pair of steps
  // whose pods share names was said, at the step's index among those kept and at its mapping.
  const std::string f = write_file("beside.yaml",
                                   "name: beside\n"                                     // 1
                                   "pipeline:\n"                                        // 2
                                   "  steps:\n"                                         // 3
                                   "    - {name: a, parallel_for: {count: 8}}\n"        // 4
                                   "    - {name: m, fan_in: {arity: 2}}\n"              // 5
                                   "    - {name: z, resources: {cpu: 9}}\n"             // 6
                                   "    - {name: q}\n"                                  // 7
                                   "    - {name: Q}\n"                                  // 8
                                   "    - {name: r_s}\n"                                // 9
                                   "    - {name: R-S}\n"                                // 10
                                   "    - {name: y, after: [z], fan_in: {arity: 2}}\n"  // 11
                                   "cluster: {node_pools: [{name: n, cpu: 8, memory: 8Gi, count: 1}]}\n");
  const ScenarioCheck c = check_scenario_file(f, {});
  CHECK_FALSE(c.scenario);
  const std::string rule =
      " would give their pods the same names (both have %): a pod is named by its step's path in lower case, "
      "with '-' for '_', '/' and '.', and its iteration numbers; rename one of the steps";
  const auto clash = [&](const std::string& head, const std::string& example) {
    std::string r = rule;
    r.replace(r.find('%'), 1, example);
    return head + r;
  };
  // y waits for z, which was left out for its problem: its fan_in is not checked (z may be its loop).
  const std::vector<std::string> expected{
      f + ":5:17: pipeline.steps[1].fan_in: needs an `after` step with a parallel_for (the loop whose "
          "outputs it merges)",
      f + ":6:28: pipeline.steps[2].resources: step \"z\" asks for cpu 9, memory 0, gpu 0, more than any "
          "node "
          "it may use can hold (largest: pool \"n\" with cpu 8, memory 8Gi, gpu 0)",
      clash(f + ":8:14: pipeline.steps[4].name: step Q and step q", "q-0-0"),
      clash(f + ":10:14: pipeline.steps[6].name: step R-S and step r_s", "r-s-0-0"),
  };
  CHECK(messages(c) == expected);
}

TEST_CASE("check_scenario_file: every bad key of a pool's spot and autoscaling is said", "[core]") {
  // Only the first of each mapping was said (and not the file's first: the keys were read in a fixed order).
  const std::string f = write_file("pool-keys.yaml",
                                   "name: e\n"                                       // 1
                                   "pipeline: {steps: [{name: t}]}\n"                // 2
                                   "cluster:\n"                                      // 3
                                   "  node_pools:\n"                                 // 4
                                   "    - name: p\n"                                 // 5
                                   "      cpu: 4\n"                                  // 6
                                   "      memory: 16Gi\n"                            // 7
                                   "      spot: {discount: 1, mean_reclaim: -1s}\n"  // 8
                                   "      autoscaling:\n"                            // 9
                                   "        max: 2\n"                                // 10
                                   "        boot_time: -1s\n"                        // 11
                                   "        scale_down_idle: -1s\n"                  // 12
                                   "        scale_up_delay: -1s\n");                 // 13
  const ScenarioCheck c = check_scenario_file(f, {});
  CHECK_FALSE(c.scenario);
  const std::string pool = "cluster.node_pools[0].";
  const std::vector<std::string> expected{
      f + ":8:24: " + pool + "spot.discount: must be >= 0 and < 1 (a fraction of the price), got 1",
      f + ":8:41: " + pool + "spot.mean_reclaim: must be >= 0, got -1s",
      f + ":11:20: " + pool + "autoscaling.boot_time: must be >= 0, got -1s",
      f + ":12:26: " + pool + "autoscaling.scale_down_idle: must be >= 0, got -1s",
      f + ":13:25: " + pool + "autoscaling.scale_up_delay: must be >= 0, got -1s",
  };
  CHECK(messages(c) == expected);
  // An unknown key, or a bad max, hides none of the others.
  const std::string g = write_file("pool-keys-2.yaml",
                                   "name: e\n"
                                   "pipeline: {steps: [{name: t}]}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - name: p\n"
                                   "      cpu: 4\n"
                                   "      memory: 16Gi\n"
                                   "      spot: {discont: 0.5, mean_reclaim: -1s}\n"
                                   "      autoscaling: {max: 0, boot_tme: 1s, scale_up_delay: -1s}\n");
  const ScenarioCheck d = check_scenario_file(g, {});
  CHECK(messages(d) ==
        std::vector<std::string>{
            g + ":8:14: " + pool + "spot.discont: unknown key \"discont\" (did you mean \"discount\"?)",
            g + ":8:42: " + pool + "spot.mean_reclaim: must be >= 0, got -1s",
            g + ":9:26: " + pool + "autoscaling.max: must be >= 1, got 0",
            g + ":9:29: " + pool +
                "autoscaling.boot_tme: unknown key \"boot_tme\" (did you mean \"boot_time\"?)",
            g + ":9:59: " + pool + "autoscaling.scale_up_delay: must be >= 0, got -1s"});
}

TEST_CASE("check_scenario_file: one mistake, one message", "[core]") {
  SECTION("a step left out for its problem may still be named in `after`") {
    const std::string f = write_file("after.yaml",
                                     "name: t\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - name: a\n"
                                     "      resources: {cpu: lots}\n"
                                     "    - name: b\n"
                                     "      after: [a]\n"
                                     "    - name: c\n"
                                     "      after: [a, nowhere]\n"
                                     "cluster:\n"
                                     "  node_pools:\n"
                                     "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
    CHECK(
        messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{
            f + ":5:24: pipeline.steps[0].resources.cpu: expected a CPU quantity such as 4, 1.5 or 500m, got "
                "\"lots\"",
            f + ":9:18: pipeline.steps[2].after[1]: unknown step \"nowhere\" (steps here: a, b)"});
  }
  SECTION("a misspelled required key is reported once, as unknown") {
    const std::string f = write_file("name.yaml",
                                     "nmae: t\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - nme: a\n"
                                     "cluster:\n"
                                     "  node_pools:\n"
                                     "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
    CHECK(messages(check_scenario_file(f, {})) ==
          std::vector<std::string>{
              f + ":1:1: nmae: unknown key \"nmae\" (did you mean \"name\"?)",
              f + ":4:7: pipeline.steps[0].nme: unknown key \"nme\" (did you mean \"name\"?)"});
    // Not collecting: the first, as before.
    CHECK(first_error(f) == f + ":1:1: nmae: unknown key \"nmae\" (did you mean \"name\"?)");
  }
  SECTION("a required key simply missing is reported") {
    const std::string f = write_file("missing.yaml",
                                     "name: t\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - duration: {base: 1s}\n"
                                     "cluster:\n"
                                     "  node_pools:\n"
                                     "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
    CHECK(messages(check_scenario_file(f, {})) ==
          std::vector<std::string>{f + ":4:7: pipeline.steps[0]: missing required key \"name\""});
  }
  SECTION("a step's fit is not checked against a cluster whose pools had problems") {
    const std::string f =
        write_file("fit.yaml",
                   "name: t\n"
                   "pipeline:\n"
                   "  steps:\n"
                   "    - name: a\n"
                   "      resources: {cpu: 32}\n"
                   "cluster:\n"
                   "  node_pools:\n"
                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                   "    - {name: big, cpu: 64, memory: 8Gi, count: 1, price_per_hour: -1}\n");
    const std::vector<std::string> got = messages(check_scenario_file(f, {}));
    REQUIRE(got.size() == 1);
    CHECK(got[0] == f + ":9:67: cluster.node_pools[1].price_per_hour: must be >= 0, got -1");
    // With the pool fixed, the fit holds; with no node of it, the fit is the problem.
    LoadOptions fixed;
    fixed.sets = {"cluster.node_pools[1].price_per_hour=1"};
    CHECK(messages(check_scenario_file(f, fixed)).empty());
    fixed.sets.push_back("cluster.node_pools[1].count=0");
    const std::vector<std::string> fit = messages(check_scenario_file(f, fixed));
    REQUIRE(fit.size() == 1);
    CHECK(fit[0] == first_error(f, fixed));
    CHECK(fit[0] ==
          f + ":5:18: pipeline.steps[0].resources: step \"a\" asks for cpu 32, memory 0, gpu 0, more than "
              "any node it may use can hold (largest: pool \"p\" with cpu 4, memory 8Gi, gpu 0); pool "
              "\"big\" has "
              "count 0 from --set cluster.node_pools[1].count=0");
  }
  SECTION("duplicate names: the second is reported (with its own problems) and left out") {
    const std::string f = write_file("dup.yaml",
                                     "name: t\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - name: a\n"
                                     "    - name: a\n"
                                     "      duration: {base: never}\n"
                                     "cluster:\n"
                                     "  node_pools:\n"
                                     "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                                     "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
    const std::vector<std::string> got = messages(check_scenario_file(f, {}));
    REQUIRE(got.size() == 3);
    CHECK(got[0] == f + ":5:13: pipeline.steps[1].name: duplicate step name \"a\" (first at line 4)");
    CHECK(got[1] == f + ":6:24: pipeline.steps[1].duration.base: expected a duration such as 90s, 2h30m or "
                        "500ms, got \"never\"");
    CHECK(got[2] == f + ":10:7: cluster.node_pools[1].name: duplicate pool name \"p\" (first at line 9)");
  }
}

TEST_CASE("check_scenario_file: every key of a step on its own", "[core]") {
  const std::string f = write_file("step-keys.yaml",
                                   "name: t\n"                                                  // 1
                                   "pipeline:\n"                                                // 2
                                   "  steps:\n"                                                 // 3
                                   "    - name: a\n"                                            // 4
                                   "      parallel_for: {count: -1}\n"                          // 5
                                   "      input: {per_item: 1Gi}\n"                             // 6
                                   "      duration: {base: 3s, noise: {lognormal_sigma: x}}\n"  // 7
                                   "      resources: {cpu: 64}\n"                               // 8
                                   "      retries: {max: two}\n"                                // 9
                                   "      failure: {p: 2}\n"                                    // 10
                                   "    - name: b\n"                                            // 11
                                   "      after: [a, a]\n"                                      // 12
                                   "      image_size: big\n"                                    // 13
                                   "      parallelism: 3\n"                                     // 14
                                   "    - name: g\n"                                            // 15
                                   "      duration: {base: 1s}\n"                               // 16
                                   "      parallelism: -2\n"                                    // 17
                                   "      steps:\n"                                             // 18
                                   "        - {name: x, duration: {base: 1s}}\n"                // 19
                                   "cluster:\n"                                                 // 20
                                   "  node_pools:\n"                                            // 21
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");         // 22
  const ScenarioCheck c = check_scenario_file(f, {});
  CHECK_FALSE(c.scenario);
  // The loop's problem hides nothing else; `input` (which needs the loop) is not checked on a step whose
  // loop had a problem, the fit of 64 CPUs is (it needs only the name, resources, selector, tolerations).
  const std::vector<std::string> expected{
      f + ":5:29: pipeline.steps[0].parallel_for.count: must be >= 1, got -1",
      f + ":7:53: pipeline.steps[0].duration.noise.lognormal_sigma: expected a number, got \"x\"",
      f + ":8:18: pipeline.steps[0].resources: step \"a\" asks for cpu 64, memory 0, gpu 0, more than any "
          "node "
          "it may use can hold (largest: pool \"p\" with cpu 4, memory 8Gi, gpu 0)",
      f + ":9:22: pipeline.steps[0].retries.max: expected an integer, got \"two\"",
      f + ":10:20: pipeline.steps[0].failure.p: must be a probability between 0 and 1, got 2",
      f + ":12:18: pipeline.steps[1].after[1]: \"a\" is listed twice",
      f + ":13:19: pipeline.steps[1].image_size: expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got "
          "\"big\"",
      f + ":14:7: pipeline.steps[1].parallelism: only a group (a step with steps:) has parallelism; for a "
          "loop use parallel_for.parallelism",
      f + ":16:7: pipeline.steps[2].duration: a group (a step with steps:) cannot have component key "
          "\"duration\"; put it on the steps inside",
      f + ":17:20: pipeline.steps[2].parallelism: must be >= 0, got -2",
  };
  CHECK(messages(c) == expected);
  const std::string first = first_error(f);
  CHECK(first == expected.front());
}

TEST_CASE("check_scenario_file: an element with a misspelled key is left out whole", "[core]") {
  // The pool without `count` and the step without its toleration are not checked further: no "missing
  // count", no "fits no node pool" for what the misspelling took away.
  const std::string f =
      write_file("element.yaml",
                 "name: t\n"
                 "pipeline:\n"
                 "  steps:\n"
                 "    - name: a\n"
                 "      toleration: [{key: gpu, operator: Exists}]\n"
                 "    - name: b\n"
                 "      parallel_for: {cont: 4}\n"
                 "cluster:\n"
                 "  node_pools:\n"
                 "    - {name: p, cpu: 4, memory: 8Gi, count: 1, taints: [{key: gpu, value: x}]}\n"
                 "    - {name: q, cpu: 4, memory: 8Gi, cont: 1}\n");
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{
            f + ":5:7: pipeline.steps[0].toleration: unknown key \"toleration\" (did you mean "
                "\"tolerations\"?)",
            f + ":7:22: pipeline.steps[1].parallel_for.cont: unknown key \"cont\" (did you mean \"count\"?)",
            f + ":11:38: cluster.node_pools[1].cont: unknown key \"cont\" (did you mean \"count\"?)"});
}

TEST_CASE("check_scenario_file: a step left out for a misspelled key still hides no unknown `after`",
          "[core]") {
  // c is left out for its misspelling, by its name: b's `after: [nope]` names no step at all and is
  // reported; d's `after: [c]` names the step left out and is not.
  const std::string f = write_file("left-out.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - {name: b, after: [nope]}\n"
                                   "    - {name: c, duraton: 1}\n"
                                   "    - {name: d, after: [c]}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 16, memory: 64Gi, count: 2}\n");
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{
            f + ":4:25: pipeline.steps[0].after[0]: unknown step \"nope\" (steps here: c, d)",
            f + ":5:17: pipeline.steps[1].duraton: unknown key \"duraton\" (did you mean \"duration\"?)"});
}

TEST_CASE(
    "check_scenario_file: a step with an unknown key is read on: its other problems, each "
    "toleration's and retries key's, its duplicate name and unknown `after` are reported too",
    "[core]") {
  const std::string f = write_file("read-on.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - name: a\n"
                                   "      retries: {limit: 1, backoff: xx}\n"
                                   "      tolerations: [{key: a, operator: Bogus}, {key: b, effect: Nope}]\n"
                                   "    - name: b\n"
                                   "      colour: red\n"
                                   "      duration: {base: -1s, straggler: {p: 2, factor: 0.5}}\n"
                                   "      after: [zz, a]\n"
                                   "    - name: a\n"
                                   "      duration: {base: 1s, noise: {lognormal_sigma: 9}}\n"
                                   "cluster:\n"
                                   "  node_pools: [{name: n, cpu: 4, memory: 8Gi, count: 1}]\n");
  CHECK(
      messages(check_scenario_file(f, {})) ==
      std::vector<std::string>{
          f + ":5:17: pipeline.steps[0].retries.limit: unknown key \"limit\" (expected one of: max, backoff, "
              "factor, max_backoff, max_duration)",
          f + ":5:36: pipeline.steps[0].retries.backoff: expected a duration such as 90s, 2h30m or 500ms, "
              "got \"xx\"",
          f + ":6:40: pipeline.steps[0].tolerations[0].operator: must be Equal or Exists, got \"Bogus\"",
          f + ":6:65: pipeline.steps[0].tolerations[1].effect: must be NoSchedule, PreferNoSchedule or "
              "NoExecute (or empty for any), got \"Nope\"",
          f + ":8:7: pipeline.steps[1].colour: unknown key \"colour\" (expected one of: name, after, "
              "parallel_for, steps, parallelism, input, output, resources, duration, failure, retries, "
              "image, "
              "image_size, command, kernel, node_selector, tolerations, node_affinity, fan_in, speculation)",
          f + ":9:24: pipeline.steps[1].duration.base: must be >= 0, got -1s",
          f + ":9:44: pipeline.steps[1].duration.straggler.p: must be a probability between 0 and 1, got 2",
          f + ":9:55: pipeline.steps[1].duration.straggler.factor: must be >= 1, got 0.5",
          f + ":10:15: pipeline.steps[1].after[0]: unknown step \"zz\" (steps here: a)",
          f + ":11:13: pipeline.steps[2].name: duplicate step name \"a\" (first at line 4)",
          f + ":12:53: pipeline.steps[2].duration.noise.lognormal_sigma: must be <= 4, got 9"});
}

TEST_CASE("check_scenario_file: each DaemonSet on its own", "[core]") {
  const std::string f = write_file("daemonsets.yaml",
                                   "name: t\n"
                                   "pipeline: {steps: [{name: a}]}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                                   "  daemonsets:\n"
                                   "    - {name: y, cpus: 100m}\n"
                                   "    - {name: z, memory: lots}\n"
                                   "    - {name: w, pools: [nopool]}\n");
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{
            f + ":7:17: cluster.daemonsets[0].cpus: unknown key \"cpus\" (did you mean \"cpu\"?)",
            f + ":8:25: cluster.daemonsets[1].memory: expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got "
                "\"lots\"",
            f + ":9:25: cluster.daemonsets[2].pools[0]: no node pool named \"nopool\" (pools: p)"});
}

TEST_CASE("check_scenario_file: DaemonSets on the pools that were read", "[core]") {
  // Pool g is left out for its problem: naming it is not one, naming a pool that does not exist is, and
  // a DaemonSet's own problems are still found. (The message lists the pools read.)
  const std::string f = write_file("daemonsets-pools.yaml",
                                   "name: t\n"                                          // 1
                                   "pipeline: {steps: [{name: a}]}\n"                   // 2
                                   "cluster:\n"                                         // 3
                                   "  node_pools:\n"                                    // 4
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"   // 5
                                   "    - {name: g, cpu: 4, memory: 8Gi, count: -1}\n"  // 6
                                   "  daemonsets:\n"                                    // 7
                                   "    - {name: y, pools: [g, p], cpu: 100m}\n"        // 8
                                   "    - {name: z, pools: [gg]}\n"                     // 9
                                   "    - {name: w, pools: [p], cpu: 5}\n");            // 10
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{
            f + ":6:45: cluster.node_pools[1].count: must be >= 0, got -1",
            f + ":9:25: cluster.daemonsets[1].pools[0]: no node pool named \"gg\" (pools: p, g)",
            f + ":10:7: cluster.daemonsets[2]: the daemonsets up to \"w\" need more cpu than a node of pool "
                "\"p\" has for pods (5.1 of 4); leave it off that pool with `pools:`"});
  // A pool whose name cannot be read: what the DaemonSets name cannot be told from a typo; not read.
  const std::string g = write_file("daemonsets-unnamed.yaml",
                                   "name: t\n"
                                   "pipeline: {steps: [{name: a}]}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {cpu: 4, memory: 8Gi, count: 1}\n"
                                   "  daemonsets:\n"
                                   "    - {name: z, pools: [gg]}\n");
  CHECK(messages(check_scenario_file(g, {})) ==
        std::vector<std::string>{g + ":5:7: cluster.node_pools[0]: missing required key \"name\""});
}

TEST_CASE("check_scenario_file: the rest of the cluster without its node pools", "[core]") {
  const std::string f = write_file("nopools.yaml",
                                   "name: t\n"
                                   "pipeline: {steps: [{name: a}]}\n"
                                   "cluster:\n"
                                   "  nodepools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]\n"
                                   "  scheduler: {policy: fastest}\n");
  const std::vector<std::string> got = messages(check_scenario_file(f, {}));
  REQUIRE(got.size() == 2);
  CHECK(got[0] == f + ":4:3: cluster.nodepools: unknown key \"nodepools\" (did you mean \"node_pools\"?)");
  CHECK(got[1] ==
        f + ":5:23: cluster.scheduler.policy: unknown policy \"fastest\" (expected least-allocated, "
            "most-allocated, balanced-allocation, requested-to-capacity-ratio or list)");
}

TEST_CASE("check_scenario_file: an unknown step's message lists the other steps in file order", "[core]") {
  // Steps left out for their problems (a, c) are listed where they are in the file, among those kept, and
  // the step asking is not listed: for d (kept) and for e (left out) alike.
  const std::string f = write_file("order.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - {name: a, resources: {cpu: lots}}\n"
                                   "    - {name: b}\n"
                                   "    - {name: c, resources: {memory: lots}}\n"
                                   "    - {name: d, after: [zz]}\n"
                                   "    - {name: e, after: [yy], resources: {gpu: x}}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
  const std::vector<std::string> got = messages(check_scenario_file(f, {}));
  REQUIRE(got.size() == 5);
  CHECK(got[2] == f + ":7:25: pipeline.steps[3].after[0]: unknown step \"zz\" (steps here: a, b, c, e)");
  CHECK(got[3] == f + ":8:25: pipeline.steps[4].after[0]: unknown step \"yy\" (steps here: a, b, c, d)");
}

TEST_CASE("check_scenario_file: every dependency problem of a list, each once", "[core]") {
  const std::string f = write_file("deps.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - {name: a}\n"
                                   "    - {name: b, after: [a, nope]}\n"
                                   "    - {name: c, after: [d]}\n"
                                   "    - {name: d, after: [c]}\n"
                                   "    - {name: e, after: [e]}\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
  const std::vector<std::string> got = messages(check_scenario_file(f, {}));
  CHECK(got == std::vector<std::string>{
                   f + ":5:28: pipeline.steps[1].after[1]: unknown step \"nope\" (steps here: a, c, d, e)",
                   f + ":7:25: pipeline.steps[3].after[0]: dependency cycle: c -> d -> c (each step runs "
                       "before the next)",
                   f + ":8:25: pipeline.steps[4].after[0]: step \"e\" cannot wait for itself"});
  // Not collecting: the first of them.
  CHECK(first_error(f) == got.front());
}

TEST_CASE("check_scenario_file: without a cluster the pipeline is still read", "[core]") {
  const std::string f = write_file("nocluster.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - {name: a, resources: {cpu: 0}}\n"
                                   "    - {name: b, after: [nope]}\n"
                                   "clustr:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
  CHECK(
      messages(check_scenario_file(f, {})) ==
      std::vector<std::string>{f + ":4:34: pipeline.steps[0].resources.cpu: must be > 0, got 0",
                               f + ":5:25: pipeline.steps[1].after[0]: unknown step \"nope\" (steps here: a)",
                               f + ":6:1: clustr: unknown key \"clustr\" (did you mean \"cluster\"?)"});
  const std::string bare = write_file("bare.yaml", "name: x\n");
  CHECK(messages(check_scenario_file(bare, {})) ==
        std::vector<std::string>{bare + ":1:1: missing required key \"cluster\"",
                                 bare + ":1:1: missing required key \"pipeline\""});
}

TEST_CASE("check_scenario_file: the task limit whatever else is wrong, and an alias's problem once",
          "[core]") {
  const std::string f = write_file("limit.yaml",
                                   "name: t\n"
                                   "pipeline:\n"
                                   "  steps:\n"
                                   "    - {name: a, resources: &R {cpu: 0}}\n"
                                   "    - {name: b, resources: *R}\n"
                                   "    - name: d\n"
                                   "      parallel_for: {count: 100000}\n"
                                   "      steps: [{name: e, parallel_for: {count: 100000}}]\n"
                                   "cluster:\n"
                                   "  node_pools:\n"
                                   "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n");
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{f + ":4:37: pipeline.steps[0].resources.cpu: must be > 0, got 0",
                                 f + ":7:29: pipeline.steps[2].parallel_for.count: the pipeline unrolls to "
                                     "10,000,000,000 tasks (about "
                                     "2794 GiB of memory to simulate); the limit is 50,000,000 (--max-tasks "
                                     "raises it; `explain` counts "
                                     "without unrolling)"});
  // One anchor used by a step's retries.max and by a pool's count: a problem in each field, both named
  // (it was one, under the field of the use read first, at the anchor's line).
  const std::string two = write_file("alias2.yaml",
                                     "name: al\n"
                                     "overheads: none\n"
                                     "pipeline:\n"
                                     "  steps:\n"
                                     "    - {name: a, retries: {max: &n -1}}\n"
                                     "cluster:\n"
                                     "  node_pools:\n"
                                     "    - {name: p, cpu: 4, memory: 16Gi, count: *n}\n");
  CHECK(messages(check_scenario_file(two, {})) ==
        std::vector<std::string>{two + ":5:32: cluster.node_pools[0].count: must be >= 0, got -1",
                                 two + ":5:32: pipeline.steps[0].retries.max: must be >= 0, got -1"});
}

TEST_CASE("check_scenario_file: a sound file gives the scenario load_scenario_file gives", "[core]") {
  const std::string seed = std::string(SHARDFLOW_SOURCE_DIR) + "/scenarios/shard-preprocess-train.yaml";
  const ScenarioCheck c = check_scenario_file(seed, {});
  CHECK(c.problems.empty());
  REQUIRE(c.scenario);
  CHECK(*c.scenario == load_scenario_file(seed));
}

TEST_CASE("check_scenario_file: what stops at its first problem", "[core]") {
  SECTION("a YAML syntax error") {
    const std::string f = write_file("syntax.yaml", "name: [t\nsede: 1\n");
    const ScenarioCheck c = check_scenario_file(f, {});
    REQUIRE(c.problems.size() == 1);
    CHECK(std::string(c.problems[0].what()) == first_error(f));
  }
  SECTION("a bad --set comes first, then the file is not read") {
    const std::string f = write_file("set.yaml",
                                     "name: t\n"
                                     "sede: 1\n"
                                     "pipeline: {steps: [{name: a}]}\n"
                                     "cluster: {node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]}\n");
    LoadOptions o;
    o.sets = {"cluster.node_pools[nope].count=2"};
    const ScenarioCheck c = check_scenario_file(f, o);
    REQUIRE(c.problems.size() == 1);
    CHECK(std::string(c.problems[0].what()) == first_error(f, o));
  }
  SECTION("a file that does not exist") {
    const ScenarioCheck c = check_scenario_file("/nonexistent/x.yaml", {});
    REQUIRE(c.problems.size() == 1);
    CHECK(std::string(c.problems[0].what()) ==
          "/nonexistent/x.yaml: cannot open the file (it does not exist or is not readable)");
  }
}

TEST_CASE("check_scenario_file: a pipeline past the step limit is one problem, not one per enclosing list",
          "[core]") {
  // Group g holds group h (100,001 steps) and z; y follows g. The limit is met inside h; g's list and the
  // top list each reported it again at their next step.
  std::string text =
      "name: l\npipeline:\n  steps:\n    - name: g\n      steps:\n        - name: h\n          steps:\n";
  for (int i = 0; i < 100'001; ++i) text += "            - {name: s" + std::to_string(i) + "}\n";
  text +=
      "        - {name: z}\n    - {name: y}\ncluster: {node_pools: [{name: p, cpu: 4, memory: 16Gi, count: "
      "1}]}\n";
  const std::string f = write_file("steps.yaml", text);
  // Step 100,001 counting g and h: h's 99,999th, on line 7 + 99,999.
  CHECK(messages(check_scenario_file(f, {})) ==
        std::vector<std::string>{f +
                                 ":100006:15: pipeline.steps[0].steps[0].steps[99998]: the pipeline has more "
                                 "than 100000 steps"});
}

TEST_CASE("check_scenario_file: each key of resources, parallel_for, overheads and a node pool on its own",
          "[core]") {
  // One problem per mapping was reported, and not always the first in the file: overheads read its
  // orchestrator before its sandbox_start, a pool its labels before its taints.
  const std::string f =
      write_file("keys.yaml",
                 "name: o\n"
                 "overheads: {sandbox_start: -1s, orchestrator: kfp}\n"
                 "pipeline: {steps: [{name: a, resources: {cpu: 0, memory: -1Gi, gpu: -2}, parallel_for: "
                 "{count: 0, parallelism: -1}}]}\n"
                 "cluster:\n"
                 "  node_pools:\n"
                 "    - {name: p, cpu: 4, memory: 16Gi, count: 1, taints: [{value: x}], labels: {a: [1]}}\n");
  CHECK(
      messages(check_scenario_file(f, {})) ==
      std::vector<std::string>{f + ":2:28: overheads.sandbox_start: must be >= 0, got -1s",
                               f + ":2:47: overheads.orchestrator: unknown orchestrator \"kfp\" (expected "
                                   "kfp-v2, argo, indexed-job or "
                                   "none)",
                               f + ":3:47: pipeline.steps[0].resources.cpu: must be > 0, got 0",
                               f + ":3:58: pipeline.steps[0].resources.memory: must be >= 0, got -1Gi",
                               f + ":3:69: pipeline.steps[0].resources.gpu: must be >= 0, got -2",
                               f + ":3:96: pipeline.steps[0].parallel_for.count: must be >= 1, got 0",
                               f + ":3:112: pipeline.steps[0].parallel_for.parallelism: must be >= 0, got -1",
                               f + ":6:58: cluster.node_pools[0].taints[0]: missing required key \"key\"",
                               f + ":6:83: cluster.node_pools[0].labels.a: expected a string, got a list"});
}
