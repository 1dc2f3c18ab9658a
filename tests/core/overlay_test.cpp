// Overlays (--overlay) and the local cluster preset (--cluster local), as the loader applies them.
#include <sched.h>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>

using namespace shardflow;

namespace {

const std::string kBase =
    "name: t\n"                                             // 1
    "seed: 1\n"                                             // 2
    "overheads: {sandbox_start: 2s}\n"                      // 3
    "cluster:\n"                                            // 4
    "  node_pools:\n"                                       // 5
    "    - {name: cpu, cpu: 4, memory: 8Gi, count: 2}\n"    // 6
    "    - {name: big, cpu: 16, memory: 64Gi, count: 1}\n"  // 7
    "  storage: {read_bandwidth: 1GiB/s}\n"                 // 8
    "pipeline:\n"                                           // 9
    "  steps:\n"                                            // 10
    "    - name: preprocess\n"                              // 11
    "      parallel_for: {count: 10, parallelism: 5}\n"     // 12
    "      duration: {base: 10s, per_gib: 2s}\n"            // 13
    "      command: [python, pre.py]\n"                     // 14
    "    - name: train\n"                                   // 15
    "      after: [preprocess]\n"                           // 16
    "      duration: {base: 1m}\n";                         // 17

LoadOptions with(std::vector<std::string> overlays, std::vector<std::string> sets = {},
                 std::string cluster = "") {
  LoadOptions o;
  for (std::size_t i = 0; i < overlays.size(); ++i)
    o.overlays.push_back({"o" + std::to_string(i + 1) + ".yaml", std::move(overlays[i])});
  o.sets = std::move(sets);
  o.cluster = std::move(cluster);
  return o;
}

Scenario load(const LoadOptions& o, const std::string& base = kBase) {
  return load_scenario_text(base, "base.yaml", o);
}

std::string error_of(const LoadOptions& o, const std::string& base = kBase) {
  try {
    (void)load(o, base);
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return CPU_COUNT(&set);
}

}  // namespace

TEST_CASE("Overlay: mappings merge key by key", "[core]") {
  const Scenario s = load(with({"cluster: {storage: {write_bandwidth: 2GiB/s}}\n"}));
  CHECK(s.cluster.storage.read_bytes_per_second == 1024.0 * 1024 * 1024);  // kept from the scenario
  CHECK(s.cluster.storage.write_bytes_per_second == 2048.0 * 1024 * 1024);
  REQUIRE(s.cluster.node_pools.size() == 2);  // untouched
  CHECK(s.cluster.node_pools[0].count == 2);
  CHECK(s.overheads.sandbox_start == Duration::from_s(2));
  CHECK(s.overheads.orchestrator == "kfp-v2");
}

TEST_CASE("Overlay: list elements with a name merge with the element of that name", "[core]") {
  const Scenario s =
      load(with({"pipeline: {steps: [{name: preprocess, duration: {base: 20s}}]}\n"
                 "cluster:\n"
                 "  node_pools:\n"
                 "    - {name: big, count: 3}\n"}));
  REQUIRE(s.pipeline.steps.size() == 2);
  const Step& pre = s.pipeline.steps[0];
  CHECK(pre.name == "preprocess");
  CHECK(pre.component.duration.base == Duration::from_s(20));
  CHECK(pre.component.duration.per_gib == Duration::from_s(2));  // kept
  REQUIRE(pre.loop);
  CHECK(pre.loop->count == 10);
  CHECK(pre.component.command == std::vector<std::string>{"python", "pre.py"});
  CHECK(pre.where.file == "base.yaml");  // the step is still the scenario's
  CHECK(pre.where.line == 11);
  CHECK(s.pipeline.steps[1].name == "train");
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(60));
  REQUIRE(s.cluster.node_pools.size() == 2);
  CHECK(s.cluster.node_pools[0].name == "cpu");
  CHECK(s.cluster.node_pools[0].count == 2);
  CHECK(s.cluster.node_pools[1].name == "big");
  CHECK(s.cluster.node_pools[1].count == 3);
  CHECK(s.cluster.node_pools[1].cpu == 16000);
}

TEST_CASE("Overlay: an element whose name the list lacks is appended, and validated", "[core]") {
  const Scenario s =
      load(with({"pipeline:\n"
                 "  steps:\n"
                 "    - name: evaluate\n"
                 "      after: [train]\n"
                 "      duration: {base: 5s}\n"}));
  REQUIRE(s.pipeline.steps.size() == 3);
  const Step& ev = s.pipeline.steps[2];
  CHECK(ev.name == "evaluate");
  CHECK(ev.deps == std::vector<StepIndex>{1});
  CHECK(ev.component.duration.base == Duration::from_s(5));
  CHECK(ev.where.file == "o1.yaml");
  CHECK(ev.where.line == 3);
  CHECK(ev.where.column == 7);
  CHECK(error_of(with({"pipeline: {steps: [{name: evaluate, after: [nope]}]}\n"})) ==
        "o1.yaml:1:45: pipeline.steps[2].after[0]: unknown step \"nope\" (steps here: preprocess, train)");
  CHECK(
      error_of(with({"pipeline:\n"
                     "  steps:\n"
                     "    - name: huge\n"
                     "      resources: {cpu: 100}\n"})) ==
      "o1.yaml:4:24: pipeline.steps[2].resources.cpu: step \"huge\" asks for cpu 100, memory 0, gpu 0, more "
      "than any node it may use can hold (largest: pool \"big\" with cpu 16, memory 64Gi, gpu 0)");
}

TEST_CASE("Overlay: a dependency cycle closed by an overlay or a --set is reported there, not at the file",
          "[core]") {
  // The file's `after: [preprocess]` (line 16) is right as written; what closed the cycle is the
  // command line's (it was reported at line 16).
  const std::string cycle =
      "pipeline.steps[0].after[0]: dependency cycle: preprocess -> train -> preprocess (each step runs "
      "before "
      "the next)";
  CHECK(error_of(with({}, {"pipeline.steps[preprocess].after=[train]"})) ==
        "--set pipeline.steps[preprocess].after=[train]: " + cycle);
  CHECK(error_of(with({"pipeline: {steps: [{name: preprocess, after: [train]}]}\n"})) ==
        "o1.yaml:1:47: " + cycle);
  // Written in the file, it stays there.
  std::string base = kBase;
  base.replace(base.find("      command: [python, pre.py]\n"), 0, "      after: [train]\n");
  CHECK(error_of(with({}), base) ==
        "base.yaml:17:15: pipeline.steps[1].after[0]: dependency cycle: preprocess -> train -> preprocess "
        "(each "
        "step runs before the next)");
}

TEST_CASE("Overlay: a name close to one the list has is warned of, and a name given twice is refused",
          "[core]") {
  LoadOptions o = with({"pipeline:\n  steps:\n    - name: preprocesss\n      duration: {base: 40s}\n"});
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  const Scenario s = load(o);
  CHECK(s.pipeline.steps.size() == 3);  // added, as documented
  CHECK(warnings ==
        std::vector<std::string>{"o1.yaml:3:13: warning: pipeline.steps: no element is named "
                                 "\"preprocesss\" (did you mean \"preprocess\"?): it is added as a "
                                 "new one"});
  // A new name nothing like the others: added without a word.
  warnings.clear();
  o.overlays[0].text = "pipeline:\n  steps:\n    - {name: evaluate, after: [train]}\n";
  CHECK(load(o).pipeline.steps.size() == 3);
  CHECK(warnings.empty());
  CHECK(
      error_of(
          with({"cluster:\n  node_pools:\n    - {name: cpu, count: 1}\n    - {name: cpu, count: 3}\n"})) ==
      "o1.yaml:4:14: cluster.node_pools[1].name: the name \"cpu\" is given twice in this list (first at line "
      "3): an overlay changes the element of a name, so give each name once");
}

TEST_CASE("Overlay: a cluster left without nodes by an overlay or a --set is reported at its count",
          "[core]") {
  const std::string no_nodes = "the cluster has no nodes (every pool has count 0 and no autoscaling)";
  CHECK(error_of(
            with({"cluster:\n  node_pools:\n    - {name: cpu, count: 0}\n    - {name: big, count: 0}\n"})) ==
        "o1.yaml:4:26: cluster.node_pools[1].count: " + no_nodes);
  // The last count given there: the file's pool big has count 1 until the second --set.
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].count=0", "cluster.node_pools[big].count=0"})) ==
        "--set cluster.node_pools[big].count=0: cluster.node_pools[1].count: " + no_nodes);
  // One of them in the file: the count the command line gave is still what left it without nodes.
  std::string base = kBase;
  base.replace(base.find("count: 1}"), 8, "count: 0");
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].count=0"}), base) ==
        "--set cluster.node_pools[cpu].count=0: cluster.node_pools[0].count: " + no_nodes);
  // Written in the file, it stays at the file's node_pools.
  base.replace(base.find("count: 2}"), 8, "count: 0");
  CHECK(error_of(with({}), base) == "base.yaml:6:5: cluster.node_pools: " + no_nodes);
}

TEST_CASE("Overlay: a step that no longer fits names the pool sizes an overlay or a --set gave", "[core]") {
  // train asks for 8 CPUs, which only big holds: shrunk by an overlay, emptied by a --set (cpu's memory,
  // also given, is not named: the request is not over it), or with the request over every pool as the
  // file has them (then no pool size is named).
  std::string base = kBase;
  base += "      resources: {cpu: 8, memory: 1Gi}\n";  // line 18
  const std::string problem =
      "base.yaml:18:18: pipeline.steps[1].resources: step \"train\" asks for cpu 8, memory 1Gi, gpu 0, more "
      "than any node it may use can hold (largest: pool ";
  CHECK(error_of(with({"cluster:\n  node_pools:\n    - {name: big, cpu: 6}\n"}), base) ==
        problem + "\"big\" with cpu 6, memory 64Gi, gpu 0); pool \"big\" has cpu 6 from o1.yaml:3:24");
  CHECK(error_of(with({}, {"cluster.node_pools[big].count=0", "cluster.node_pools[cpu].memory=4Gi"}), base) ==
        problem +
            "\"cpu\" with cpu 4, memory 4Gi, gpu 0); pool \"big\" has count 0 from --set "
            "cluster.node_pools[big].count=0");
  CHECK(error_of(with({}, {"pipeline.steps[train].resources.memory=2Gi"}),
                 base.replace(base.find("cpu: 16"), 7, "cpu: 7")) ==
        problem.substr(0, problem.find("cpu 8, memory 1Gi")) +
            "cpu 8, memory 2Gi, gpu 0, more than any node it "
            "may use can hold (largest: pool \"big\" with cpu 7, memory 64Gi, gpu 0)");
  // Many sizes given (a --cluster file gives all): five named, then how many more.
  const std::string six =
      "cluster: {node_pools: [{name: cpu, cpu: 1, memory: 512Mi}, {name: big, cpu: 1, "
      "memory: 512Mi}, {name: p3, cpu: 1, memory: 512Mi, count: 1}]}\n";
  const std::string many = error_of(with({six}), kBase + "      resources: {cpu: 8, memory: 1Gi}\n");
  CHECK(
      many.find("(largest: pool \"cpu\" with cpu 1, memory 512Mi, gpu 0); pool \"cpu\" has cpu 1 from "
                "o1.yaml:1:41; pool \"cpu\" has memory 512Mi from o1.yaml:1:52; pool \"big\" has cpu 1 from "
                "o1.yaml:1:77; pool \"big\" has memory 512Mi from o1.yaml:1:88; pool \"p3\" has cpu 1 from "
                "o1.yaml:1:112; and 1 more pool size from outside this file") != std::string::npos);
}

TEST_CASE("Overlay: an autoscaling min a --set gives over the file's max is reported at the min", "[core]") {
  std::string base = kBase;
  base.replace(base.find("count: 2}"), 9, "autoscaling: {min: 0, max: 3}}");
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].autoscaling.min=5"}), base) ==
        "--set cluster.node_pools[cpu].autoscaling.min=5: cluster.node_pools[0].autoscaling.min: must be <= "
        "max "
        "(3)");
  // Both in the file: at the max, as before.
  base.replace(base.find("min: 0"), 6, "min: 5");
  CHECK(error_of(with({}), base) ==
        "base.yaml:6:67: cluster.node_pools[0].autoscaling.max: must be >= min (5)");
}

TEST_CASE("Overlay: scalars, lists without names and changes of type replace", "[core]") {
  const Scenario s =
      load(with({"seed: 9\n"
                 "overheads: none\n"
                 "pipeline:\n"
                 "  steps:\n"
                 "    - name: preprocess\n"
                 "      command: [bash, run.sh]\n"
                 "      parallel_for: {count: 4}\n"}));
  CHECK(s.seed == 9);
  CHECK(s.overheads.orchestrator == "none");  // `none` replaced the mapping: every overhead off
  CHECK(s.overheads.sandbox_start == Duration::zero());
  const Step& pre = s.pipeline.steps[0];
  CHECK(pre.component.command == std::vector<std::string>{"bash", "run.sh"});  // not [bash, run.sh, ...]
  REQUIRE(pre.loop);
  CHECK(pre.loop->count == 4);
  CHECK(pre.loop->parallelism == 5);
  // A list with an element without a name replaces the whole list.
  CHECK(error_of(with({"cluster: {node_pools: [{name: cpu, count: 1}, 7]}\n"})) ==
        "o1.yaml:1:24: cluster.node_pools[0]: missing required key \"cpu\"");
}

TEST_CASE("Overlay: overlays apply in order, then --set", "[core]") {
  const Scenario s =
      load(with({"seed: 2\npipeline: {steps: [{name: preprocess, duration: {base: 20s}}]}\n",
                 "seed: 3\npipeline: {steps: [{name: preprocess, duration: {per_gib: 3s}}]}\n"}));
  CHECK(s.seed == 3);
  CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(20));
  CHECK(s.pipeline.steps[0].component.duration.per_gib == Duration::from_s(3));
  const Scenario set = load(with({"seed: 2\n"}, {"seed=5", "pipeline.steps[preprocess].duration.base=30s"}));
  CHECK(set.seed == 5);
  CHECK(set.pipeline.steps[0].component.duration.base == Duration::from_s(30));
  // A --set that replaces an overlay's value is what an error names.
  CHECK(error_of(with({"pipeline: {steps: [{name: preprocess, duration: {base: 20s}}]}\n"},
                      {"pipeline.steps[preprocess].duration.base=-1s"})) ==
        "--set pipeline.steps[preprocess].duration.base=-1s: pipeline.steps[0].duration.base: must be >= 0, "
        "got -1s");
  // --set may select an element an overlay appended.
  CHECK(load(with({"pipeline: {steps: [{name: ev, after: [train]}]}\n"},
                  {"pipeline.steps[ev].duration.base=7s"}))
            .pipeline.steps[2]
            .component.duration.base == Duration::from_s(7));
}

TEST_CASE("Overlay: a first layer of overlays and --set applies before the other overlays and --set",
          "[core]") {
  LoadOptions o =
      with({"seed: 2\n", "seed: 4\npipeline: {steps: [{name: preprocess, duration: {base: 20s}}]}\n"},
           {"seed=3", "pipeline.steps[preprocess].duration.base=30s"});
  CHECK(load(o).seed == 3);  // overlays, then --set
  o.first_layer = {1, 1};    // o1.yaml, seed=3, o2.yaml, base=30s
  const Scenario layered = load(o);
  CHECK(layered.seed == 4);
  CHECK(layered.pipeline.steps[0].component.duration.base == Duration::from_s(30));
  o.first_layer = {1, 2};  // o1.yaml, both sets, o2.yaml
  CHECK(load(o).pipeline.steps[0].component.duration.base == Duration::from_s(20));
  o.first_layer = {9, 9};  // past the ends: everything in the first layer, as without one
  CHECK(load(o).seed == 3);
}

TEST_CASE("Overrides: a --set key in double quotes holds dots (a Kubernetes label key)", "[core]") {
  const Scenario s = load(with({}, {"cluster.node_pools[cpu].labels.\"topology.kubernetes.io/zone\"=a",
                                    "cluster.node_pools[cpu].labels.\"kubernetes.io/arch\"=arm64",
                                    "cluster.node_pools[cpu].labels.tier=web"}));
  const auto& labels = s.cluster.node_pools[0].labels;
  REQUIRE(labels.size() == 3);
  CHECK(labels.at("topology.kubernetes.io/zone") == "a");
  CHECK(labels.at("kubernetes.io/arch") == "arm64");
  CHECK(labels.at("tier") == "web");
  // A message names the quoted key as it was written.
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].labels.\"topology.kubernetes.io/zone\".x=a"})) ==
        "--set cluster.node_pools[cpu].labels.\"topology.kubernetes.io/zone\".x=a: "
        "cluster.node_pools[0].labels.topology.kubernetes.io/zone: expected a string, got a mapping");
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].labels.\"zone=a"})) ==
        "--set cluster.node_pools[cpu].labels.\"zone=a: a '\"' in the path has no closing '\"'");
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].\"labels\"x=a"})) ==
        "--set cluster.node_pools[cpu].\"labels\"x=a: a quoted key is followed by '.', '[' or '=', not 'x'");
  CHECK(error_of(with({}, {"cluster.node_pools[cpu].labels.\"\"=a"})) ==
        "--set cluster.node_pools[cpu].labels.\"\"=a: an empty key in quotes (\"\") in the path");
}

// An alias shares its anchor's node: a --set (a sweep's --vary) that reaches it through one step changes
// that step only, as an overlay does, and an error in it names that step only.
TEST_CASE("Overrides: a step renamed by --set into a pod-name clash is said at the --set", "[core]") {
  // It was said at the file's step mapping (line 15), which the user did not write that name in.
  CHECK(error_of(with({}, {"pipeline.steps[train].name=Preprocess"})) ==
        "--set pipeline.steps[train].name=Preprocess: pipeline.steps[1].name: step Preprocess and step "
        "preprocess would give their pods the same names (both have preprocess-0-0): a pod is named by its "
        "step's path in lower case, with '-' for '_', '/' and '.', and its iteration numbers; rename one of "
        "the steps");
}

TEST_CASE("Overrides: a --set through an alias changes that place only, not the anchor's others", "[core]") {
  const std::string anchored =
      "name: al\n"
      "pipeline:\n"
      "  steps:\n"
      "    - {name: a, duration: &dur {base: 10s}, resources: &res {cpu: 1}}\n"
      "    - {name: b, duration: *dur, resources: *res}\n"
      "    - {name: c, after: [a, b], duration: *dur, resources: *res}\n"
      "cluster:\n"
      "  node_pools: [{name: p, cpu: 4, memory: 16Gi, count: 1}]\n";
  const Scenario s =
      load(with({}, {"pipeline.steps[b].duration.base=99s", "pipeline.steps[c].resources.cpu=2",
                     "pipeline.steps[a].duration.per_gib=3s"}),
           anchored);
  CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(10));
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(99));
  CHECK(s.pipeline.steps[2].component.duration.base == Duration::from_s(10));
  CHECK(s.pipeline.steps[0].component.duration.per_gib == Duration::from_s(3));
  CHECK(s.pipeline.steps[1].component.duration.per_gib == Duration::zero());
  CHECK(s.pipeline.steps[0].component.resources.cpu == 1000);
  CHECK(s.pipeline.steps[1].component.resources.cpu == 1000);
  CHECK(s.pipeline.steps[2].component.resources.cpu == 2000);
  // The same change as an overlay: the same scenario.
  CHECK(s ==
        load(with({"pipeline: {steps: [{name: b, duration: {base: 99s}}, {name: c, resources: {cpu: 2}}, "
                   "{name: a, duration: {per_gib: 3s}}]}\n"}),
             anchored));
  // One error, at the step the --set names.
  CHECK(error_of(with({}, {"pipeline.steps[b].duration.base=-1s"}), anchored) ==
        "--set pipeline.steps[b].duration.base=-1s: pipeline.steps[1].duration.base: must be >= 0, got -1s");
  // A key the --set makes under an aliased mapping is that place's too.
  const Scenario made = load(with({}, {"pipeline.steps[c].duration.noise.lognormal_sigma=0.5"}), anchored);
  CHECK(made.pipeline.steps[2].component.duration.lognormal_sigma == 0.5);
  CHECK(made.pipeline.steps[0].component.duration.lognormal_sigma == 0);
  CHECK(made.pipeline.steps[1].component.duration.lognormal_sigma == 0);
}

TEST_CASE("Overlay: errors about its values name the overlay's file, line and column", "[core]") {
  CHECK(error_of(with({"pipeline:\n"
                       "  steps:\n"
                       "    - name: preprocess\n"
                       "      duraton: {base: 1s}\n"})) ==
        "o1.yaml:4:7: pipeline.steps[0].duraton: unknown key \"duraton\" (did you mean \"duration\"?)");
  CHECK(error_of(with({"seed: 2\n", "cluster:\n  node_pools:\n    - name: cpu\n      count: -1\n"})) ==
        "o2.yaml:4:14: cluster.node_pools[0].count: must be >= 0, got -1");
  CHECK(error_of(with({"clustr: {}\n"})) ==
        "o1.yaml:1:1: clustr: unknown key \"clustr\" (did you mean \"cluster\"?)");
  CHECK(error_of(with({"name: x\nseed:\n"})) ==
        "o1.yaml:2:1: seed: expected a non-negative integer, got nothing (null)");
  CHECK(error_of(with({"seed: 1\nseed: 2\n"})) ==
        "o1.yaml:2:1: seed: duplicate key \"seed\" (first at line 1)");
  CHECK(error_of(with({"pipeline: {steps: [{name: preprocess, duration: {base: 1s}, duration: {}}]}\n"})) ==
        "o1.yaml:1:61: pipeline.steps[0].duration: duplicate key \"duration\" (first at line 1)");
  CHECK(error_of(
            with({"pipeline: {steps: [{name: preprocess, duration: {noise: {lognormal_sigma: x}}}]}\n"})) ==
        "o1.yaml:1:75: pipeline.steps[0].duration.noise.lognormal_sigma: expected a number, got \"x\"");
  // What the overlay merged into is still the scenario's: the step, here, that no longer fits.
  CHECK(error_of(with({"cluster: {node_pools: [{name: cpu, cpu: 500m}, {name: big, cpu: 500m}]}\n"})) ==
        "base.yaml:11:7: pipeline.steps[0]: step \"preprocess\" asks for cpu 1, memory 0, gpu 0, more than "
        "any node it may use can hold (largest: pool \"big\" with cpu 500m, memory 64Gi, gpu 0); pool "
        "\"cpu\" has "
        "cpu 500m from o1.yaml:1:41; pool \"big\" has cpu 500m from o1.yaml:1:65");
  CHECK(error_of(with({"pipeline: {steps: [{name: train, after: [nope]}]}\n"})) ==
        "o1.yaml:1:42: pipeline.steps[1].after[0]: unknown step \"nope\" (steps here: preprocess)");
}

TEST_CASE("Overlay: a file that is no overlay gets an error naming it", "[core]") {
  CHECK(error_of(with({"[1, 2]\n"})) ==
        "o1.yaml:1:1: an overlay must be a mapping of what to change, as in a scenario file, got a list");
  CHECK(error_of(with({"# nothing\n"})) ==
        "o1.yaml:1:1: the overlay is empty; expected a mapping of what to change, as in a scenario file");
  CHECK(error_of(with({"seed: 2\n", "a: [1\n"})).rfind("o2.yaml:2:1: YAML syntax error: ", 0) == 0);
  CHECK(error_of(with({"a: 1\n---\nb: 2\n"})) ==
        "o1.yaml:2:1: expected one YAML document, found more than one");
  try {
    (void)read_overlay_file("/nonexistent/fitted.yaml");
    FAIL("read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--overlay /nonexistent/fitted.yaml: cannot open the file (it does not exist or is not readable)");
  }
  // A scenario that is not a mapping reports its own error, whatever the overlays.
  CHECK(error_of(with({"seed: 2\n"}), "[1]\n") ==
        "base.yaml:1:1: the top level must be a mapping with name, pipeline and cluster, got a list");
}

TEST_CASE("Cluster preset: --cluster local is this machine with no overheads", "[core]") {
  const Scenario s = load(with({}, {}, "local"));
  REQUIRE(s.cluster.node_pools.size() == 1);
  const NodePool& p = s.cluster.node_pools[0];
  CHECK(p.name == "local");
  CHECK(p.count == 1);
  CHECK(p.cpu == affinity_cpus() * 1000);
  CHECK(p.memory == static_cast<ByteCount>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
  CHECK(p.gpu == 0);
  CHECK(p.price_per_hour == 0);
  CHECK(p.max_pods == 1'000'000);
  CHECK(p.labels.empty());
  CHECK(p.taints.empty());
  CHECK_FALSE(p.autoscaling.enabled());
  CHECK(s.cluster.scheduler.decisions_per_second == 0);
  CHECK(s.cluster.scheduler.bind_latency == Duration::zero());
  // The local backend starts the oldest waiting task that fits as soon as room frees, with no backoff.
  CHECK(s.cluster.scheduler.initial_backoff == Duration::zero());
  CHECK(s.cluster.scheduler.max_backoff == Duration::zero());
  CHECK(s.cluster.storage.read_bytes_per_second == 0);
  CHECK(s.cluster.storage.write_bytes_per_second == 0);
  CHECK(s.overheads.orchestrator == "none");  // the scenario's sandbox_start: 2s is gone too
  CHECK(s.overheads.pods_per_task == 1);
  CHECK(s.overheads.driver_pod_duration == Duration::zero());
  CHECK(s.overheads.sandbox_start == Duration::zero());
  CHECK(s.overheads.image_pull_bytes_per_second == 0);
  CHECK(s.overheads.default_image_size == 0);
  CHECK(s.pipeline.steps.size() == 2);

  const std::string x_error =
      "--cluster: expected \"local\" or a cluster file (YAML with `cluster:`, for an imported pipeline), got "
      "\"x\", which does not exist";
  CHECK(error_of(with({}, {}, "x")) == x_error);
  CHECK(error_of(with({}, {}, "x"), "not: [a scenario") == x_error);
  // What cannot run on this machine gets the loader's usual fit error.
  CHECK(error_of(with({"pipeline: {steps: [{name: train, resources: {gpu: 1}}]}\n"}, {}, "local"))
            .rfind("o1.yaml:1:51: pipeline.steps[1].resources.gpu: step \"train\" asks for cpu 1, memory 0, "
                   "gpu 1, "
                   "more than any node it may use can hold (largest: pool \"local\" with cpu ",
                   0) == 0);
  // The node_selector no pool matches is the overlay's: the error points at it there.
  CHECK(error_of(with({"pipeline: {steps: [{name: train, node_selector: {zone: a}}]}\n"}, {}, "local")) ==
        "o1.yaml:1:49: pipeline.steps[1].node_selector: step \"train\" fits no node pool: its node_selector "
        "and tolerations match none of the pools with nodes (local: no label zone=a)");
}

TEST_CASE("Cluster preset: overlays and --set apply on top of it", "[core]") {
  // A fitted overlay's overheads merge over the preset's (orchestrator none stays): a local prediction.
  const Scenario s = load(with({"overheads: {sandbox_start: 50us}\n"
                                "cluster: {node_pools: [{name: local, speed: 2}]}\n"
                                "pipeline: {steps: [{name: train, duration: {base: 3s}}]}\n"},
                               {"cluster.node_pools[local].count=2"}, "local"));
  CHECK(s.overheads.orchestrator == "none");
  CHECK(s.overheads.pods_per_task == 1);
  CHECK(s.overheads.sandbox_start == Duration::from_us(50));
  CHECK(s.overheads.image_pull_bytes_per_second == 0);
  REQUIRE(s.cluster.node_pools.size() == 1);
  CHECK(s.cluster.node_pools[0].cpu == affinity_cpus() * 1000);
  CHECK(s.cluster.node_pools[0].speed == 2);
  CHECK(s.cluster.node_pools[0].count == 2);
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(3));
  // The preset's own values are named as the preset's.
  CHECK(error_of(with({"overheads: {driver_pod: 1s}\n"}, {}, "local")) ==
        "o1.yaml:1:25: overheads.driver_pod: applies only with a driver pod (orchestrator kfp-v2, or "
        "pods_per_task >= 2)");
}

TEST_CASE("Overlay: a quoted string whose closing quote is missing is named, in the scenario or the overlay",
          "[core]") {
  // yaml-cpp reads the string on to the next quote (or the end): the keys it takes in would be reported
  // missing far from the cause ("missing required key \"cluster\"").
  std::string base = kBase;
  base.replace(base.find("command: [python, pre.py]"), 25, "image: \"pre:1");
  CHECK(error_of({}, base) ==
        "base.yaml:14:14: this quoted string runs to the end of the file (YAML lets a quoted string span "
        "lines) and takes in line 15, \"- name: train\", which reads as a key: is its closing quote "
        "missing?");
  CHECK(error_of(
            with({"pipeline:\n  steps:\n    - name: train\n      image: \"t:1\n      duration: {base: 2m}\n"
                  "    - name: preprocess\n      image: \"p:2\"\n"})) ==
        "o1.yaml:7:15: YAML syntax error: end of map not found; the quoted string opened at 4:14 closes only "
        "at 7:14 (YAML lets a quoted string span lines): is its closing quote missing?");
  CHECK(error_of(with(
            {"pipeline:\n  steps:\n    - name: train\n      image: \"t:1\n      duration: {base: 2m}\n"})) ==
        "o1.yaml:4:14: this quoted string runs to the end of the file (YAML lets a quoted string span lines) "
        "and takes in line 5, \"duration: {base: 2m}\", which reads as a key: is its closing quote missing?");
}

TEST_CASE("Overrides: a name given twice inside a --set value says so, not 'first at line 0'", "[core]") {
  CHECK(error_of(with({}, {"pipeline.steps[preprocess].duration={base: 1s, base: 2s}"})) ==
        "--set pipeline.steps[preprocess].duration={base: 1s, base: 2s}: pipeline.steps[0].duration.base: "
        "duplicate key \"base\" (twice in this value)");
  CHECK(
      error_of(with({}, {"pipeline.steps=[{name: a}, {name: a}]"})) ==
      "--set pipeline.steps=[{name: a}, {name: a}]: pipeline.steps[1].name: duplicate step name \"a\" (twice "
      "in this value)");
}

TEST_CASE("Overrides: a --set into a list the scenario does not give says so, not 'unknown key'", "[core]") {
  // `command` is a step's key; the step has none, so [0] selects nothing. The message called it unknown,
  // "expected one of" the keys this step happens to have.
  CHECK(error_of(with({}, {"pipeline.steps[train].command[0]=z"})) ==
        "--set pipeline.steps[train].command[0]=z: pipeline.steps[train].command: the scenario has no "
        "\"command\" "
        "list here (it has name, after, duration), so [0] selects nothing: set the whole list, as "
        "pipeline.steps[train].command=[...]");
  // A typo of a key that is there is still one.
  CHECK(error_of(with({}, {"cluster.node_pool[cpu].count=3"})) ==
        "--set cluster.node_pool[cpu].count=3: cluster.node_pool: unknown key \"node_pool\" (did you mean "
        "\"node_pools\"?): the scenario has no such list, so [cpu] selects nothing");
}
