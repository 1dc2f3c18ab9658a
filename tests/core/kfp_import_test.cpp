// Compiled Kubeflow Pipelines files (PipelineSpec IR) read as scenarios. The expected shapes were worked
// out by hand from each file in tests/data/kfp/ (copied from kubeflow/pipelines, see ORIGIN there).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>

#include "kfp_helpers.hpp"

using namespace shardflow;
using shardflow::test::options;
using shardflow::test::shape;

namespace {

const std::string kValid =
    std::string(SHARDFLOW_SOURCE_DIR) + "/tests/data/kfp/test_data/sdk_compiled_pipelines/valid/";

std::string error_of(const std::string& text, const LoadOptions& o = {}) {
  try {
    (void)load_scenario_text(text, "p.yaml", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

// Replaces the one occurrence of `from` in `text`.
std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("KFP import: parallelfor_parallelism: 10 loops, limits 2/1/1, raw, parameter and output items",
          "[kfp]") {
  // loop_parameter has no default: --param gives it (3 items); the five list-dict-makers' outputs get
  // their lengths from the overlay.
  const Scenario s = load_scenario_file(
      kValid + "pipeline_with_parallelfor_parallelism.yaml",
      options("kfp:\n  outputs: {list-dict-maker-0.Output: 2, list-dict-maker-1.Output: 3, "
              "list-dict-maker-2.Output: 4, list-dict-maker-3.Output: 5, list-dict-maker-1-2.Output: 6}\n",
              {"loop_parameter=[a, b, c]"}));
  CHECK(s.name == "pipeline-with-loops");
  CHECK(shape(s.pipeline.steps) ==
        "for-loop-1[3/2]{for-loop-2[3]{print-text-2} print-text} "
        "for-loop-10[3](after list-dict-maker-1){print-int-3} "
        "for-loop-11[4](after list-dict-maker-2){print-int-4} "
        "for-loop-12[5](after list-dict-maker-3){print-int-5} "
        "for-loop-13[6](after list-dict-maker-1-2){print-int-6} "
        "for-loop-4[2]{for-loop-6[2/1]{print-text-5 print-text-6} print-text-3 print-text-4} "
        "for-loop-8[3/1]{print-int} "
        "for-loop-9[2](after list-dict-maker-0){print-int-2} "
        "list-dict-maker-0 list-dict-maker-1 list-dict-maker-1-2 list-dict-maker-2 list-dict-maker-3");
  // 3 x (3 + 1) + 3 + 4 + 5 + 6 + 2 x (2 x 2 + 2) + 3 + 2 + 5 makers
  CHECK(Plan::unroll(s.pipeline).task_count() == 52);
  // The raw items are kept as the loop's items.
  CHECK(s.pipeline.steps[6].loop->items ==
        std::vector<std::string>{R"({"a":1,"b":2})", R"({"a":2,"b":3})", R"({"a":3,"b":4})"});
}

TEST_CASE("KFP import: parallelfor_pipeline_param: limits 1 and 2, a loop inside a raw loop", "[kfp]") {
  const Scenario s = load_scenario_file(kValid + "pipeline_with_parallelfor_pipeline_param.yaml",
                                        options("", {"loop_parameter=[1, 2, 3, 4]"}));
  CHECK(shape(s.pipeline.steps) ==
        "for-loop-1[4/1]{print-with-prefix} for-loop-2[4](after make-prefix){print-with-prefix-2} "
        "for-loop-4[2/2]{for-loop-5[4]{print-with-prefix-3}} make-prefix");
  CHECK(Plan::unroll(s.pipeline).task_count() == 4 + 4 + 2 * 4 + 1);
}

TEST_CASE("KFP import: a long --param is read whole, and a message names it by its first 100 characters",
          "[kfp]") {
  std::string items = "[0";
  for (int i = 1; i < 20000; ++i) items += ",0";
  items += "]";  // 40,001 characters
  const std::string file = kValid + "pipeline_with_parallelfor_pipeline_param.yaml";
  const Scenario s = load_scenario_file(file, options("", {"loop_parameter=" + items}));
  REQUIRE(s.pipeline.steps[0].loop.has_value());
  CHECK(s.pipeline.steps[0].loop->count == 20000);
  std::string message;
  try {
    (void)load_scenario_file(file, options("", {"loop_parameter=" + items, "nope=" + items}));
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message ==
        "--param nope=" + items.substr(0, 95) +
            "... (39,906 more characters): --param: unknown pipeline parameter \"nope\" (parameters: "
            "loop_parameter, prefix)");
  // An overlay's unknown kfp.params name: at its line and column in the overlay.
  message.clear();
  try {
    (void)load_scenario_file(file,
                             options("seed: 1\nkfp:\n  params:\n    loop_parameter: [1]\n    nope: 3\n"));
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message ==
        "model.yaml:5:5: kfp.params.nope: unknown pipeline parameter \"nope\" (parameters: loop_parameter, "
        "prefix)");
}

TEST_CASE("KFP import: pipeline_with_loops: a parameter's default, an upstream output given as a list, raw",
          "[kfp]") {
  const Scenario s = load_scenario_file(
      kValid + "parallel_and_nested/pipeline_with_loops.yaml",
      options("kfp:\n  outputs:\n    args-generator-op.Output: [{A_a: '1', B_b: '2'}, {A_a: '3', B_b: '4'}, "
              "{A_a: '5', B_b: '6'}]\n"));
  CHECK(shape(s.pipeline.steps) ==
        "args-generator-op for-loop-1[2]{print-text} "
        "for-loop-2[3](after args-generator-op){print-struct print-text-2 print-text-3} "
        "for-loop-4[2]{print-struct-2 print-text-4 print-text-5}");
  CHECK(s.pipeline.steps[1].loop->items == std::vector<std::string>{R"("a")", R"("b")"});
  // The overlay's items stay whole although the tasks inside select fields of them.
  CHECK(s.pipeline.steps[2].loop->items == std::vector<std::string>{R"({"A_a":"1","B_b":"2"})",
                                                                    R"({"A_a":"3","B_b":"4"})",
                                                                    R"({"A_a":"5","B_b":"6"})"});
  CHECK(Plan::unroll(s.pipeline).task_count() == 1 + 2 + 3 * 3 + 2 * 3);
}

TEST_CASE("KFP import: pipeline_with_nested_loops: an inner loop over a field of the outer item", "[kfp]") {
  // loop_parameter's default has two items, each with a p_a of two; for-loop-6 has three raw items.
  const Scenario s = load_scenario_file(kValid + "pipeline_with_nested_loops.yaml", options());
  CHECK(shape(s.pipeline.steps) ==
        "for-loop-1[2]{for-loop-2[2]{print-op}} for-loop-4[2]{for-loop-6[3]{print-op-3} print-op-2}");
  // The inner lists differ between outer items, so only their common length is kept.
  CHECK(s.pipeline.steps[0].steps[0].loop->items.empty());
  CHECK(Plan::unroll(s.pipeline).task_count() == 2 * 2 + 2 * 3 + 2);
}

TEST_CASE("KFP import: collected_parameters: fan-out in a sub-DAG, dsl.Collected fan-in", "[kfp]") {
  const Scenario s = load_scenario_file(kValid + "critical/collected_parameters.yaml",
                                        options("kfp: {outputs: {split-ids.Output: 3}}\n"));
  CHECK(shape(s.pipeline.steps) ==
        "collecting-parameters{consume-ids(after for-loop-1) "
        "for-loop-1[3](after split-ids){consume-single-id(after prepend-id) prepend-id} split-ids} "
        "consume-ids(after collecting-parameters)");
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(plan.task_count() == 1 + 3 * 2 + 1 + 1);
}

TEST_CASE("KFP import: parallel_for_after_dependency: two tasks wait for every iteration", "[kfp]") {
  std::vector<std::string> warnings;
  const Scenario s =
      load_scenario_file(kValid + "critical/parallel_for_after_dependency.yaml", options("", {}, &warnings));
  CHECK(shape(s.pipeline.steps) ==
        "for-loop-2[3]{print-op} print-op-2(after for-loop-2) print-op-3(after for-loop-2)");
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(plan.task_count() == 5);
  std::uint64_t joins = 0;
  for (TaskId t = 0; t < plan.size(); ++t) joins += plan.is_join(t) ? 1 : 0;
  CHECK(joins == 1);  // one join over the 3 iterations, shared by both dependents
  // Defaults: the cluster, and 1m for each component without a model, each said once.
  const std::string f = kValid + "critical/parallel_for_after_dependency.yaml: warning: ";
  CHECK(warnings ==
        std::vector<std::string>{
            f + "component \"comp-print-op\" has no duration model in the overlay (kfp: {components: "
                "{comp-print-op: {duration: ...}}}); each of its tasks runs the default, 1m",
            f + "component \"comp-print-op-2\" has no duration model in the overlay (kfp: "
                "{components: {comp-print-op-2: {duration: ...}}}); each of its tasks runs the "
                "default, 1m",
            f + "component \"comp-print-op-3\" has no duration model in the overlay (kfp: "
                "{components: {comp-print-op-3: {duration: ...}}}); each of its tasks runs the "
                "default, 1m",
            f + "no cluster given (--cluster FILE or an overlay's cluster:); using the default "
                "cluster: 20 nodes of 16 CPUs and 64Gi, 2 nodes of 32 CPUs, 256Gi and 4 GPUs "
                "(docs/kfp-import.md)"});
  CHECK(s.cluster.node_pools.size() == 2);
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(60));
  CHECK(s.pipeline.steps[1].component.image == "python:3.11");
}

TEST_CASE("KFP import: the Argo Workflow the KFP backend compiles to is named as such", "[kfp]") {
  const std::string f =
      std::string(SHARDFLOW_SOURCE_DIR) +
      "/tests/data/kfp/test_data/compiled-workflows/pipeline_with_parallelfor_parallelism.yaml";
  try {
    (void)load_scenario_file(f, LoadOptions{});
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(
        std::string(e.what()) ==
        f + ":2:7: kind: this is an Argo Workflow, not a KFP PipelineSpec: shardflow reads the file `kfp` "
            "compiles (compiler.Compiler().compile(pipeline, \"pipeline.yaml\")), not the Argo Workflow the "
            "KFP backend makes of it; an Argo Workflow of your own is not read either: write it as a "
            "scenario "
            "(scenarios/argo-*.yaml are two of Argo's examples written so)");
  }
}

namespace {

// A small IR as kfp 2.17 compiles it (trimmed): an exit handler around a task and an If/Else, a retried
// task with the newer resource fields and a GPU, another with the older cpuLimit/memoryLimit.
const std::string kIr =
    "components:\n"                                    // 1
    "  comp-cleanup: {executorLabel: exec-cleanup}\n"  // 2
    "  comp-work: {executorLabel: exec-work}\n"        // 3
    "  comp-old: {executorLabel: exec-old}\n"          // 4
    "  comp-condition-3:\n"                            // 5
    "    dag:\n"                                       // 6
    "      tasks:\n"                                   // 7
    "        work:\n"                                  // 8
    "          componentRef: {name: comp-work}\n"      // 9
    "          retryPolicy: {backoffDuration: 10s, backoffFactor: 2.0, backoffMaxDuration: 3600s, "
    "maxRetryCount: 3}\n"                                                                                // 10
    "  comp-condition-4:\n"                                                                              // 11
    "    dag:\n"                                                                                         // 12
    "      tasks:\n"                                                                                     // 13
    "        old: {componentRef: {name: comp-old}}\n"                                                    // 14
    "  comp-exit-handler-1:\n"                                                                           // 15
    "    dag:\n"                                                                                         // 16
    "      tasks:\n"                                                                                     // 17
    "        flip: {componentRef: {name: comp-old}}\n"                                                   // 18
    "        condition-3:\n"                                                                             // 19
    "          componentRef: {name: comp-condition-3}\n"                                                 // 20
    "          dependentTasks: [flip]\n"                                                                 // 21
    "          triggerPolicy: {condition: \"inputs.parameter_values['x'] == 'heads'\"}\n"                // 22
    "        condition-4:\n"                                                                             // 23
    "          componentRef: {name: comp-condition-4}\n"                                                 // 24
    "          dependentTasks: [flip]\n"                                                                 // 25
    "          triggerPolicy: {condition: \"!(inputs.parameter_values['x'] == 'heads')\"}\n"             // 26
    "deploymentSpec:\n"                                                                                  // 27
    "  executors:\n"                                                                                     // 28
    "    exec-cleanup: {container: {image: 'alpine:3', command: [sh, -c], args: [exit 0]}}\n"            // 29
    "    exec-work:\n"                                                                                   // 30
    "      container:\n"                                                                                 // 31
    "        image: python:3.11\n"                                                                       // 32
    "        resources: {resourceCpuRequest: '2', resourceCpuLimit: '4', resourceMemoryRequest: 4Gi,\n"  // 33
    "                    resourceMemoryLimit: 8G, accelerator: {resourceType: nvidia.com/gpu, "
    "resourceCount: '1'}}\n"                                                                           // 34
    "    exec-old: {container: {image: python:3.11, resources: {cpuLimit: 0.5, memoryLimit: 2.0}}}\n"  // 35
    "pipelineInfo: {name: cond-exit}\n"                                                                // 36
    "root:\n"                                                                                          // 37
    "  dag:\n"                                                                                         // 38
    "    tasks:\n"                                                                                     // 39
    "      cleanup:\n"                                                                                 // 40
    "        componentRef: {name: comp-cleanup}\n"                                                     // 41
    "        dependentTasks: [exit-handler-1]\n"                                                       // 42
    "        triggerPolicy: {strategy: ALL_UPSTREAM_TASKS_COMPLETED}\n"                                // 43
    "      exit-handler-1: {componentRef: {name: comp-exit-handler-1}}\n"                              // 44
    "schemaVersion: 2.1.0\n";                                                                          // 45

const std::string kCluster = "cluster: {node_pools: [{name: g, cpu: 8, memory: 32Gi, gpu: 1, count: 1}]}\n";

}  // namespace

TEST_CASE("KFP import: exit handler, conditions, retries, resources", "[kfp]") {
  SECTION("every condition is taken by default; an overlay gives 0 for a branch never taken") {
    const Scenario s = load_scenario_text(kIr, "p.yaml", options(kCluster));
    CHECK(shape(s.pipeline.steps) ==
          "cleanup(after exit-handler-1) exit-handler-1{flip condition-3(after flip){work} "
          "condition-4(after flip){old}}");
    const Scenario t =
        load_scenario_text(kIr, "p.yaml", options(kCluster + "kfp: {conditions: {condition-4: 0}}\n"));
    CHECK(shape(t.pipeline.steps) ==
          "cleanup(after exit-handler-1) exit-handler-1{flip condition-3(after flip){work}}");
    // The models of what the branch runs stay in the overlay: they are for when it runs (they were
    // refused as "no component \"work\" in the pipeline", a typo's message).
    const Scenario u = load_scenario_text(
        kIr, "p.yaml",
        options(kCluster + "kfp: {conditions: {condition-3: 0}, components: {work: {duration: {base: 7s}}}, "
                           "tasks: {work: {resources: {cpu: 1}}}}\n"));
    CHECK(shape(u.pipeline.steps) ==
          "cleanup(after exit-handler-1) exit-handler-1{flip condition-4(after flip){old}}");
  }
  SECTION("retryPolicy, the newer resource fields (requests first) and the older ones (limits in CPUs, GB)") {
    const Scenario s = load_scenario_text(kIr, "p.yaml", options(kCluster));
    const Component& work = s.pipeline.steps[1].steps[1].steps[0].component;
    CHECK(work.retries.max == 3);
    CHECK(work.retries.backoff == Duration::from_s(10));
    CHECK(work.retries.factor == 2.0);
    CHECK(work.retries.max_backoff == Duration::from_s(3600));
    CHECK(work.retries.max_duration == Duration::from_s(3600));
    CHECK(work.resources == Resources{2000, ByteCount{4} << 30, 1});
    CHECK(work.image == "python:3.11");
    const Component& old = s.pipeline.steps[1].steps[2].steps[0].component;
    CHECK(old.resources == Resources{500, 2'000'000'000, 0});
    const Component& cleanup = s.pipeline.steps[0].component;
    CHECK(cleanup.command == std::vector<std::string>{"sh", "-c", "exit 0"});
    CHECK(cleanup.image == "alpine:3");
  }
  SECTION("a kfp.tasks name that tasks of two DAGs share: both get the model, and a warning names the DAGs") {
    std::string ir = replace(kIr, "flip: {componentRef", "old: {componentRef");
    ir = replace(ir, "dependentTasks: [flip]\n          triggerPolicy: {condition: \"inputs",
                 "dependentTasks: [old]\n          triggerPolicy: {condition: \"inputs");
    ir = replace(ir, "dependentTasks: [flip]", "dependentTasks: [old]");
    std::vector<std::string> warnings;
    const Scenario s = load_scenario_text(
        ir, "p.yaml", options(kCluster + "kfp: {tasks: {old: {duration: {base: 5s}}}}\n", {}, &warnings));
    CHECK(std::count(
              warnings.begin(), warnings.end(),
              "p.yaml: warning: kfp.tasks.old applies to the 2 tasks of that name (in comp-exit-handler-1, "
              "comp-condition-4): a task's name is unique only within its DAG; give a component's model "
              "(kfp.components) to tell them apart") == 1);
    // Without the shared name (the IR as it is): no such warning.
    warnings.clear();
    (void)load_scenario_text(
        kIr, "p.yaml", options(kCluster + "kfp: {tasks: {old: {duration: {base: 5s}}}}\n", {}, &warnings));
    CHECK(std::none_of(warnings.begin(), warnings.end(), [](const std::string& w) {
      return w.find("kfp.tasks.old applies") != std::string::npos;
    }));
  }
  SECTION("the branches of one dsl.If/Elif/Else all run: a warning, with the overlay that keeps one") {
    std::string ir = replace(kIr, "  comp-exit-handler-1:\n", "  comp-condition-branches-1:\n");
    ir = replace(ir, "{componentRef: {name: comp-exit-handler-1}}",
                 "{componentRef: {name: comp-condition-branches-1}}");
    std::vector<std::string> warnings;
    (void)load_scenario_text(ir, "p.yaml", options(kCluster, {}, &warnings));
    CHECK(std::count(
              warnings.begin(), warnings.end(),
              "p.yaml: warning: the branches condition-3, condition-4 of one dsl.If/Elif/Else all run (a "
              "condition is taken unless the overlay says 0; to keep one branch, set the others to 0: kfp: "
              "{conditions: {condition-4: 0}})") == 1);
  }
  SECTION("a sub-DAG whose every task a condition set to 0 leaves out is left out too") {
    // condition-4's DAG holds one task, itself a dsl.If (a loop or group around a lone If is common):
    // with it set to 0, condition-4 has nothing to run and goes, as a task set to 0 does.
    const std::string ir =
        replace(kIr, "        old: {componentRef: {name: comp-old}}\n",
                "        old: {componentRef: {name: comp-old}, triggerPolicy: {condition: x}}\n");
    const Scenario s = load_scenario_text(ir, "p.yaml", options(kCluster + "kfp: {conditions: {old: 0}}\n"));
    CHECK(shape(s.pipeline.steps) ==
          "cleanup(after exit-handler-1) exit-handler-1{flip condition-3(after flip){work}}");
    // Left out to the root: nothing would run, an error at the overlay's condition.
    const std::string lone =
        "components: {comp-a: {executorLabel: exec-a}}\n"
        "deploymentSpec: {executors: {exec-a: {container: {image: alpine}}}}\n"
        "pipelineInfo: {name: p}\n"
        "root: {dag: {tasks: {a: {componentRef: {name: comp-a}, triggerPolicy: {condition: c}}}}}\n"
        "schemaVersion: 2.1.0\n";
    CHECK(error_of(lone, options(kCluster + "kfp: {conditions: {a: 0}}\n")) ==
          "model.yaml:2:23: kfp.conditions.a: the conditions set to 0 (a) leave out every task of the "
          "pipeline: nothing would run");
  }
  SECTION("backoffMaxDuration is the retries' deadline (max_duration); no wait is capped below it") {
    // What kfp 2.17's set_retry(num_retries=2, backoff_duration="2h") writes (backoffMaxDuration 3600s):
    // Argo never retries (the first wait ends past the deadline); the simulator's test of max_duration
    // shows it. The cap is the longer of the two, so that the reader takes it.
    const Scenario s = load_scenario_text(replace(kIr, "{backoffDuration: 10s, backoffFactor: 2.0",
                                                  "{backoffDuration: 7200s, backoffFactor: 2.0"),
                                          "p.yaml", options(kCluster));
    const RetryPolicy& r = s.pipeline.steps[1].steps[1].steps[0].component.retries;
    CHECK(r.max == 3);
    CHECK(r.backoff == Duration::from_s(7200));
    CHECK(r.max_backoff == Duration::from_s(7200));
    CHECK(r.max_duration == Duration::from_s(3600));
    // Without backoffMaxDuration: the compiler's default, 3600 s.
    const Scenario t = load_scenario_text(replace(kIr, "backoffFactor: 2.0, backoffMaxDuration: 3600s,",
                                                  "backoffFactor: 2.0, backoffMaxDuration: 90m,"),
                                          "p.yaml", options(kCluster));
    CHECK(t.pipeline.steps[1].steps[1].steps[0].component.retries.max_duration == Duration::from_s(5400));
    const Scenario u =
        load_scenario_text(replace(kIr, " backoffMaxDuration: 3600s,", ""), "p.yaml", options(kCluster));
    CHECK(u.pipeline.steps[1].steps[1].steps[0].component.retries.max_duration == Duration::from_s(3600));
    CHECK(u.pipeline.steps[1].steps[1].steps[0].component.retries.max_backoff == Duration::from_s(3600));
    // A factor below 1 (the SDK takes any) is refused at the IR field.
    CHECK(error_of(replace(kIr, "backoffFactor: 2.0,", "backoffFactor: 0.5,"), options(kCluster)) ==
          "p.yaml:10:62: components.comp-condition-3.dag.tasks.work.retryPolicy.backoffFactor: a factor "
          "below 1 (waits "
          "that "
          "shrink) is not modelled; shardflow takes factors >= 1, got 0.5");
    // A request over its limit: Kubernetes refuses the pod, so does the import, at the request.
    CHECK(error_of(replace(kIr, "resourceCpuLimit: '4'", "resourceCpuLimit: 500m"), options(kCluster)) ==
          "p.yaml:33:41: deploymentSpec.executors.exec-work.container.resources.resourceCpuRequest: the CPU "
          "request 2 is more than its limit 500m "
          "(deploymentSpec.executors.exec-work.container.resources.resourceCpuLimit): Kubernetes refuses "
          "such a "
          "pod (a request must be <= its limit)");
    CHECK(
        error_of(replace(kIr, "resourceMemoryLimit: 8G,", "resourceMemoryLimit: 1Gi,"), options(kCluster)) ==
        "p.yaml:33:92: deploymentSpec.executors.exec-work.container.resources.resourceMemoryRequest: the "
        "memory request 4Gi is more than its limit 1Gi "
        "(deploymentSpec.executors.exec-work.container.resources.resourceMemoryLimit): Kubernetes refuses "
        "such a pod (a request must be <= its limit)");
    // The older cpuLimit counts CPUs: the same, at its field.
    for (const std::string bad : {"500m", "-1", "four"})
      CHECK(error_of(replace(kIr, "cpuLimit: 0.5,", "cpuLimit: " + bad + ","), options(kCluster)) ==
            "p.yaml:35:" +
                std::to_string(std::string("    exec-old: {container: {image: python:3.11, resources: "
                                           "{cpuLimit: ")
                                   .size() +
                               1) +
                ": deploymentSpec.executors.exec-old.container.resources.cpuLimit: expected a number of "
                "CPUs, 0 "
                "or more (the SDK writes set_cpu_limit('500m') as 0.5; the newer resourceCpuLimit holds the "
                "text), got \"" +
                bad + "\"");
    // The older memoryLimit counts gigabytes: a size written there is refused at the IR field, as written.
    const std::string line =
        "    exec-old: {container: {image: python:3.11, resources: {cpuLimit: 0.5, memoryLimit: 2.0}}}";
    for (const std::string bad : {"2Gi", "-1", "two"})
      CHECK(error_of(replace(kIr, "memoryLimit: 2.0}", "memoryLimit: " + bad + "}"), options(kCluster)) ==
            "p.yaml:35:" + std::to_string(line.find("2.0") + 1) +
                ": deploymentSpec.executors.exec-old.container.resources.memoryLimit: expected a number of "
                "gigabytes, 0 or more (the SDK writes set_memory_request('16Gi') as 17.179869184; the newer "
                "resourceMemoryRequest holds the text), got \"" +
                bad + "\"");
  }
  SECTION("the newer string resource fields are Kubernetes quantities, each checked at its IR field") {
    const std::string l33 =
        "        resources: {resourceCpuRequest: '2', resourceCpuLimit: '4', resourceMemoryRequest: 4Gi,";
    const std::string l34 =
        "                    resourceMemoryLimit: 8G, accelerator: {resourceType: nvidia.com/gpu, ";
    const std::string at = "p.yaml:33:";
    const std::string field = ": deploymentSpec.executors.exec-work.container.resources.";
    // A limit is checked although the request gives the value.
    CHECK(error_of(replace(kIr, "resourceCpuLimit: '4'", "resourceCpuLimit: 'four'"), options(kCluster)) ==
          at + std::to_string(l33.find("'4'") + 1) + field +
              "resourceCpuLimit: expected a CPU quantity such as 4, 1.5 or 500m, got \"four\"");
    CHECK(error_of(replace(kIr, "resourceCpuRequest: '2'", "resourceCpuRequest: '0'"), options(kCluster)) ==
          at + std::to_string(l33.find("'2'") + 1) + field + "resourceCpuRequest: must be > 0, got 0");
    CHECK(error_of(replace(kIr, "resourceMemoryRequest: 4Gi", "resourceMemoryRequest: 4Gb"),
                   options(kCluster)) == at + std::to_string(l33.find("4Gi") + 1) + field +
                                             "resourceMemoryRequest: expected a size such as 16Gi, 512Mi, "
                                             "10GiB or 1e9, got \"4Gb\"");
    CHECK(error_of(replace(kIr, "resourceMemoryLimit: 8G,", "resourceMemoryLimit: -8G,"),
                   options(kCluster)) == "p.yaml:34:" + std::to_string(l34.find("8G") + 1) + field +
                                             "resourceMemoryLimit: must be >= 0, got -8G");
    // An accelerator other than NVIDIA's is another resource than a pool's `gpu` (which the Kubernetes
    // backend requests as nvidia.com/gpu): refused at its type, whatever its name says.
    for (const std::string type : {"amd.com/gpu", "gpu.intel.com/i915", "TPU_V3"})
      CHECK(error_of(replace(kIr, "resourceType: nvidia.com/gpu", "resourceType: " + type),
                     options(kCluster)) ==
            "p.yaml:34:" + std::to_string(l34.find("nvidia.com/gpu") + 1) + field +
                "accelerator.resourceType: unsupported accelerator \"" + type +
                "\": shardflow models NVIDIA GPUs only (a step's gpu is nvidia.com/gpu, which its Kubernetes "
                "backend requests)");
    for (const std::string type : {"NVIDIA_TESLA_T4", "nvidia.com/gpu"})
      CHECK(load_scenario_text(replace(kIr, "resourceType: nvidia.com/gpu", "resourceType: " + type),
                               "p.yaml", options(kCluster))
                .pipeline.steps[1]
                .steps[1]
                .steps[0]
                .component.resources.gpu == 1);
    // Kubernetes' decimal kilo with a capital K is a size too; the request gives the value.
    const Scenario s =
        load_scenario_text(replace(kIr, "resourceMemoryLimit: 8G,", "resourceMemoryLimit: 8000000K,"),
                           "p.yaml", options(kCluster));
    CHECK(s.pipeline.steps[1].steps[1].steps[0].component.resources.memory == 4 * kGiB);
    CHECK(s.pipeline.steps[1].steps[1].steps[0].component.resources.cpu == 2000);
  }
  SECTION("ALL_UPSTREAM_TASKS_COMPLETED outside an exit handler (ignore_upstream_failure) gets a warning") {
    const std::string warning =
        "p.yaml: warning: task \"cleanup\" runs in KFP once its upstream tasks end, failed or not "
        "(ignore_upstream_failure); shardflow runs it only after they succeed: the two agree unless one "
        "fails "
        "for good";
    std::vector<std::string> exit_task, ignoring;
    (void)load_scenario_text(kIr, "p.yaml", options(kCluster, {}, &exit_task));
    CHECK(std::count(exit_task.begin(), exit_task.end(), warning) == 0);
    // The same task after the group renamed: no longer an exit task.
    std::string ir = kIr;
    for (std::size_t at; (at = ir.find("exit-handler-1")) != std::string::npos;)
      ir.replace(at, 14, "stage-one");
    const Scenario s = load_scenario_text(ir, "p.yaml", options(kCluster, {}, &ignoring));
    CHECK(std::count(ignoring.begin(), ignoring.end(), warning) == 1);
    CHECK(s.pipeline.steps[0].after == std::vector<std::string>{"stage-one"});
  }
  SECTION("the overlay's models by component (with or without comp-) and by task; the task's win") {
    const Scenario s = load_scenario_text(
        kIr, "p.yaml",
        options(kCluster + "kfp:\n  components:\n    old: {duration: {base: 30s}, failure: {p: 0.1}}\n"
                           "    comp-work: {duration: {base: 2m}, input: {size: 1Gi}}\n"
                           "  tasks:\n    flip: {duration: {base: 5s}}\n"));
    CHECK(s.pipeline.steps[1].steps[0].component.duration.base == Duration::from_s(5));  // flip
    CHECK(s.pipeline.steps[1].steps[0].component.failure.p == 0.1);                      // comp-old's
    CHECK(s.pipeline.steps[1].steps[2].steps[0].component.duration.base == Duration::from_s(30));
    CHECK(s.pipeline.steps[1].steps[1].steps[0].component.duration.base == Duration::from_s(120));
    CHECK(s.pipeline.steps[1].steps[1].steps[0].component.input.dist.a == 1073741824.0);
  }
}

TEST_CASE("KFP import: bad input names the file, line, column and IR field", "[kfp]") {
  const LoadOptions o = options(kCluster);
  // `components` as a list (the fuzzer's): iterated as a mapping, yaml-cpp threw "invalid node" (exit 1).
  CHECK(error_of("components:\n- comp-a: {executorLabel: x}\n", o) ==
        "p.yaml:2:1: components: expected a mapping");
  // A sub-DAG without tasks: refused, not dropped with the dependencies on it.
  CHECK(error_of(replace(kIr, "      tasks:\n        old: {componentRef: {name: comp-old}}\n",
                         "      tasks: {}\n"),
                 o) ==
        "p.yaml:13:14: components.comp-condition-4.dag.tasks: must not be empty (a DAG runs at "
        "least one task)");
  // A component that is both a sub-DAG and a container; a sub-DAG that runs itself, directly or not.
  CHECK(error_of(replace(kIr, "comp-work: {executorLabel: exec-work}",
                         "comp-work: {executorLabel: exec-work, dag: {}}"),
                 o) ==
        "p.yaml:3:14: components.comp-work: has both a dag and an executorLabel: a component is a "
        "sub-DAG or a container, not both");
  CHECK(error_of(replace(kIr, "old: {componentRef: {name: comp-old}}",
                         "old: {componentRef: {name: comp-condition-4}}"),
                 o) ==
        "p.yaml:14:36: components.comp-condition-4.dag.tasks.old.componentRef.name: component "
        "\"comp-condition-4\" runs itself: comp-condition-4 -> task old -> comp-condition-4; a "
        "sub-DAG cannot contain itself");
  CHECK(error_of(replace(kIr, "old: {componentRef: {name: comp-old}}",
                         "old: {componentRef: {name: comp-exit-handler-1}}"),
                 o) ==
        "p.yaml:14:36: components.comp-condition-4.dag.tasks.old.componentRef.name: component "
        "\"comp-exit-handler-1\" runs itself: comp-exit-handler-1 -> task condition-4 -> "
        "comp-condition-4 -> task old -> comp-exit-handler-1; a sub-DAG cannot contain itself");
  CHECK(error_of(replace(kIr, "{name: comp-condition-4}", "{name: comp-nope}"), o) ==
        "p.yaml:24:32: components.comp-exit-handler-1.dag.tasks.condition-4.componentRef.name: unknown "
        "component "
        "\"comp-nope\" (components: comp-cleanup, comp-condition-3, comp-condition-4, comp-exit-handler-1, "
        "comp-old, comp-work)");
  CHECK(
      error_of(replace(kIr, "      exit-handler-1: {componentRef: {name: comp-exit-handler-1}}\n",
                       "      exit-handler-1:\n        componentRef: {name: comp-exit-handler-1}\n"
                       "        parameterIterator: {itemInput: i, items: {range: 3}}\n"),
               o) ==
      "p.yaml:46:51: root.dag.tasks.exit-handler-1.parameterIterator.items.range: unsupported iterator field "
      "\"range\" (shardflow reads: raw, inputParameter)");
  CHECK(error_of(replace(kIr, "      exit-handler-1: {componentRef: {name: comp-exit-handler-1}}\n",
                         "      exit-handler-1:\n        componentRef: {name: comp-exit-handler-1}\n"
                         "        artifactIterator: {itemInput: i, items: {inputArtifact: models}}\n"),
                 o) ==
        "p.yaml:46:65: root.dag.tasks.exit-handler-1.artifactIterator.items.inputArtifact: the task has no "
        "input \"models\" (inputs.artifacts)");
  CHECK(error_of(kIr.substr(0, kIr.find("      container:\n")) + "      container: {image: [\n", o) ==
        "p.yaml:32:1: YAML syntax error: end of sequence flow not found");
  CHECK(error_of(kIr, options(kCluster + "kfp: {conditions: {condition-4: 0.5}}\n")) ==
        "model.yaml:2:33: kfp.conditions.condition-4: shardflow's model has no conditional steps yet: a "
        "condition "
        "(\"!(inputs.parameter_values['x'] == 'heads')\") is taken always (1) or never (0), got \"0.5\"");
  CHECK(
      error_of(replace(kIr, "resourceCount: '1'", "resourceCount: '2'"), o) ==
      "p.yaml:33:20: pipeline.steps[1].steps[1].steps[0].resources: step \"work\" asks for cpu 2, memory "
      "4Gi, gpu "
      "2, more than any node it may use can hold (largest: pool \"g\" with cpu 8, memory 32Gi, gpu 1); pool "
      "\"g\" has gpu 1 from model.yaml:1:61");
  // A model for a name the pipeline lacks is an error, not a model silently unused.
  CHECK(error_of(kIr, options(kCluster + "kfp: {components: {trian: {duration: {base: 1m}}}}\n")) ==
        "model.yaml:2:20: kfp.components.trian: no component \"trian\" in the pipeline (components: "
        "cleanup, old, work)");
  CHECK(error_of(kIr, options(kCluster + "kfp: {components: {wrok: {duration: {base: 1m}}}}\n")) ==
        "model.yaml:2:20: kfp.components.wrok: no component \"wrok\" in the pipeline (did you mean "
        "\"work\"?)");
  // A sub-DAG's task runs no container: a model of it would be dropped, so it is refused.
  CHECK(error_of(kIr, options(kCluster + "kfp: {tasks: {condition-3: {duration: {base: 1m}}}}\n")) ==
        "model.yaml:2:15: kfp.tasks.condition-3: no container task \"condition-3\" in the pipeline");
  CHECK(
      error_of(kIr, options(kCluster + "kfp: {conditions: {conditon-4: 0}}\n")) ==
      "model.yaml:2:20: kfp.conditions.conditon-4: no condition task \"conditon-4\" in the pipeline (did you "
      "mean \"condition-4\"?)");
  CHECK(error_of(kIr, options(kCluster + "kfp: {tasks: {flp: {duration: {base: 1m}}}}\n")) ==
        "model.yaml:2:15: kfp.tasks.flp: no container task \"flp\" in the pipeline (did you mean \"flip\"?)");
  // Aliases and self-reference are bounded, not followed forever.
  CHECK(error_of("components:\n  comp-loop:\n    dag: {tasks: {again: {componentRef: {name: comp-loop}}}}\n"
                 "pipelineInfo: {name: cyc}\nroot: {dag: {tasks: {l: {componentRef: {name: comp-loop}}}}}\n"
                 "schemaVersion: 2.1.0\n") ==
        "p.yaml:3:48: components.comp-loop.dag.tasks.again.componentRef.name: component \"comp-loop\" runs "
        "itself: "
        "comp-loop -> task again -> comp-loop; a sub-DAG cannot contain itself");
  // Nesting without a cycle is bounded too: 34 components, each the next one's only task.
  {
    std::string deep = "components:\n";
    for (int i = 0; i < 34; ++i)
      deep += "  comp-d" + std::to_string(i) + ": {dag: {tasks: {t: {componentRef: {name: comp-d" +
              std::to_string(i + 1) + "}}}}}\n";
    deep +=
        "  comp-d34: {executorLabel: exec-x}\ndeploymentSpec: {executors: {exec-x: {container: {image: "
        "a}}}}\n"
        "pipelineInfo: {name: deep}\nroot: {dag: {tasks: {t: {componentRef: {name: comp-d0}}}}}\n"
        "schemaVersion: 2.1.0\n";
    CHECK(error_of(deep) ==
          "p.yaml:34:13: components.comp-d32: component DAGs nest too deeply (more than 32 levels)");
  }
  CHECK(error_of(replace(kIr, "      exit-handler-1: {componentRef: {name: comp-exit-handler-1}}\n",
                         "      exit-handler-1:\n        componentRef: {name: comp-exit-handler-1}\n"
                         "        parameterIterator: {itemInput: i, items: {raw: '&a [*a]'}}\n"),
                 o) == "p.yaml:46:56: a value nests too deeply (more than 64 levels)");
  // Component DAGs used twice at each of 13 levels: 2^13 leaves from a file of 2 KB.
  std::string nested = "components:\n  comp-leaf: {executorLabel: exec-leaf}\n";
  for (int i = 0; i < 13; ++i) {
    const std::string next = i + 1 < 13 ? "comp-l" + std::to_string(i + 1) : "comp-leaf";
    nested += "  comp-l" + std::to_string(i) + ": {dag: {tasks: {a: {componentRef: {name: " + next +
              "}}, b: {componentRef: {name: " + next + "}}}}}\n";
  }
  nested +=
      "deploymentSpec: {executors: {exec-leaf: {container: {image: alpine}}}}\npipelineInfo: {name: big}\n"
      "root: {dag: {tasks: {top: {componentRef: {name: comp-l0}}}}}\nschemaVersion: 2.1.0\n";
  CHECK(error_of(nested) ==
        "p.yaml:14:31: components.comp-l11.dag.tasks.a: the pipeline has more than 5000 tasks "
        "(counting a component DAG once for every task that uses it)");
}

TEST_CASE("KFP import: a key given twice is an error, in the IR and in an overlay's kfp section", "[kfp]") {
  // A field shardflow reads (one of the two values was taken), and one it does not read.
  const std::string ir = read_scenario_file(kValid + "pipeline_with_parallelfor_parallelism.yaml");
  CHECK(error_of(
            replace(ir, "parallelismLimit: 2\n", "parallelismLimit: 2\n          parallelismLimit: 5\n")) ==
        "p.yaml:866:11: root.dag.tasks.for-loop-1.iteratorPolicy.parallelismLimit: duplicate key "
        "\"parallelismLimit\" (first at line 865)");
  CHECK(error_of(replace(kIr, "{name: cond-exit}", "{name: cond-exit, name: other}"), options(kCluster)) ==
        "p.yaml:36:33: pipelineInfo.name: duplicate key \"name\" (first at line 36)");
  CHECK(error_of(kIr, options(kCluster + "kfp:\n  components:\n    comp-work: {duration: {base: 1m}}\n"
                                         "    comp-work: {duration: {base: 2m}}\n")) ==
        "model.yaml:5:5: kfp.components.comp-work: duplicate key \"comp-work\" (first at line 4)");
  CHECK(error_of(kIr, options(kCluster + "kfp: {conditions: {condition-4: 0}}\nkfp: {conditions: {}}\n")) ==
        "model.yaml:3:1: kfp: duplicate key \"kfp\" (first at line 2)");
}

TEST_CASE("KFP import: a null value is reported at its key", "[kfp]") {
  // Empty or ~: the loader's error at the IR key (it had no place); the importer's at the key, not at the
  // next token (the line after).
  const std::string ir = read_scenario_file(kValid + "pipeline_with_parallelfor_parallelism.yaml");
  const LoadOptions o = options(
      "kfp:\n  outputs: {list-dict-maker-0.Output: 2, list-dict-maker-1.Output: 3, "
      "list-dict-maker-2.Output: 4, list-dict-maker-3.Output: 5, list-dict-maker-1-2.Output: 6}\n",
      {"loop_parameter=[a, b, c]"});
  for (const std::string null : {"", " ~"})
    CHECK(
        error_of(replace(ir, "parallelismLimit: 2\n", "parallelismLimit:" + null + "\n"), o) ==
        "p.yaml:865:11: pipeline.steps[0].parallel_for.parallelism: expected an integer, got nothing (null)");
  CHECK(error_of(replace(kIr, "schemaVersion: 2.1.0\n", "schemaVersion:\n"), options(kCluster)) ==
        "p.yaml:45:1: schemaVersion: expected a string");
  // The SDK writes schemaVersion last: a file without it was cut short, and read whole it could load.
  CHECK(error_of(replace(kIr, "schemaVersion: 2.1.0\n", ""), options(kCluster)) ==
        "p.yaml:1:1: schemaVersion: missing required key of a PipelineSpec (the KFP SDK writes it after the "
        "pipeline: is the file cut short?)");
  CHECK(error_of(replace(kIr, "old: {componentRef: {name: comp-old}}", "old: {componentRef: }"),
                 options(kCluster)) ==
        "p.yaml:14:15: components.comp-condition-4.dag.tasks.old.componentRef.name: missing required key");
  CHECK(error_of(replace(kIr, "old: {componentRef: {name: comp-old}}", "old: {componentRef: comp-old}"),
                 options(kCluster)) ==
        "p.yaml:14:29: components.comp-condition-4.dag.tasks.old.componentRef: expected a mapping {name: "
        "COMPONENT} (the SDK writes componentRef: {name: comp-...}), got \"comp-old\"");
  // An overlay's model: the loader's error at the overlay's key.
  CHECK(
      error_of(kIr, options(kCluster + "kfp:\n  components:\n    comp-work:\n      duration:\n")) ==
      "model.yaml:5:7: pipeline.steps[1].steps[1].steps[0].duration: expected a mapping, got nothing (null)");
}

namespace {

// A pipeline of one loop over raw items per width, each item 0.
std::string raw_loops(const std::vector<std::size_t>& widths) {
  std::string ir =
      "components:\n  comp-body: {dag: {tasks: {w: {componentRef: {name: comp-w}}}}}\n"
      "  comp-w: {executorLabel: exec-w}\n"
      "deploymentSpec: {executors: {exec-w: {container: {image: alpine}}}}\n"
      "pipelineInfo: {name: big}\nroot:\n  dag:\n    tasks:\n";
  for (std::size_t i = 0; i < widths.size(); ++i) {
    std::string items = "[0";
    for (std::size_t j = 1; j < widths[i]; ++j) items += ",0";
    ir += "      l" + std::to_string(i) + ":\n        componentRef: {name: comp-body}\n" +
          "        parameterIterator: {itemInput: it, items: {raw: '" + items + "]'}}\n";
  }
  return ir + "schemaVersion: 2.1.0\n";
}

}  // namespace

TEST_CASE("KFP import: raw items past the loader's limit are refused as they are parsed", "[kfp]") {
  CHECK(error_of(raw_loops({1'000'001})) ==
        "p.yaml:11:57: root.dag.tasks.l0.parameterIterator.items.raw: the loop's items are too large (more "
        "than "
        "1000000 values; that is the limit for the items of all the pipeline's loops together)");
}

TEST_CASE("KFP import: raw items that do not parse say what is read, and where in the string", "[kfp]") {
  // KFP writes JSON there; it is read as YAML, of which JSON is a part, so a YAML flow list passes too.
  const auto with_raw = [](const std::string& raw) {
    std::string ir = raw_loops({1});
    return ir.replace(ir.find("'[0]'"), 5, raw);
  };
  CHECK(error_of(with_raw("'[a, b]'")) == "loaded");
  CHECK(error_of(with_raw("'[1, 2'")) ==
        "p.yaml:11:57: root.dag.tasks.l0.parameterIterator.items.raw: the raw items are not a valid JSON or "
        "YAML list: at column 1 of the string: YAML syntax error: end of sequence flow not found");
  CHECK(error_of(with_raw("\"[1,\\n 2,\\n {\\\"a\\\": 1, ]\"")) ==
        "p.yaml:11:57: root.dag.tasks.l0.parameterIterator.items.raw: the raw items are not a valid JSON or "
        "YAML list: at line 3, column 11 of the string: YAML syntax error: illegal flow end");
  // A character beyond U+FFFF as JSON writes it (json.dumps: a surrogate pair of escapes), as the SDK
  // does for ParallelFor(items=["model-\U0001F680", "model-b"]): one character, not a YAML error.
  {
    std::string ir = raw_loops({1});
    ir.replace(ir.find("'[0]'"), 5, R"('["model-\ud83d\ude80", "model-b", "\\ud83d"]')");
    const Scenario s = load_scenario_text(ir, "p.yaml");
    REQUIRE(s.pipeline.steps[0].loop.has_value());
    CHECK(s.pipeline.steps[0].loop->items ==
          std::vector<std::string>{"\"model-\xF0\x9F\x9A\x80\"", "\"model-b\"", "\"\\\\ud83d\""});
  }
  CHECK(error_of(with_raw("'{a: 1}'")) ==
        "p.yaml:11:57: root.dag.tasks.l0.parameterIterator.items.raw: the loop's items are not a list: "
        "\"{a: 1}\"");
  // A null is said as the user wrote it, not as yaml-cpp writes one back ("~").
  CHECK(error_of(with_raw("'null'")) ==
        "p.yaml:11:57: root.dag.tasks.l0.parameterIterator.items.raw: the loop's items are not a list: null");
}

TEST_CASE("KFP import: resources set from a pipeline parameter take its value at import", "[kfp]") {
  // set_cpu_limit(cpu) with a pipeline parameter: the executor holds a placeholder for the task's input.
  const std::string ir =
      "components:\n  comp-w: {executorLabel: exec-w}\n"
      "deploymentSpec: {executors: {exec-w: {container: {image: alpine, resources: {resourceCpuLimit: "
      "\"{{$.inputs.parameters['pipelinechannel--cpu']}}\", accelerator: {resourceCount: "
      "\"{{$.inputs.parameters['pipelinechannel--gpus']}}\", resourceType: NVIDIA_TESLA_T4}}}}}}\n"
      "pipelineInfo: {name: p}\nroot:\n  dag:\n    tasks:\n      w:\n        componentRef: {name: comp-w}\n"
      "        inputs: {parameters: {pipelinechannel--cpu: {componentInputParameter: cpu}, "
      "pipelinechannel--gpus: {componentInputParameter: gpus}}}\n"
      "  inputDefinitions: {parameters: {cpu: {parameterType: STRING}, gpus: {parameterType: NUMBER_INTEGER, "
      "defaultValue: 1.0}}}\nschemaVersion: 2.1.0\n";
  const std::string cluster = "cluster: {node_pools: [{name: g, cpu: 8, memory: 32Gi, gpu: 2, count: 1}]}\n";
  // The integer parameter's default as the SDK writes it (1.0) is one GPU.
  const Scenario s = load_scenario_text(ir, "p.yaml", options(cluster, {"cpu=3"}));
  CHECK(s.pipeline.steps[0].component.resources.cpu == 3000);
  CHECK(s.pipeline.steps[0].component.resources.gpu == 1);
  CHECK(load_scenario_text(ir, "p.yaml", options(cluster, {"cpu=500m", "gpus=2"}))
            .pipeline.steps[0]
            .component.resources == Resources{500, 0, 2});
  CHECK(error_of(ir, options(cluster)) ==
        "p.yaml:3:96: deploymentSpec.executors.exec-w.container.resources.resourceCpuLimit: set at run time "
        "from "
        "the pipeline parameter \"cpu\": shardflow needs the value when it imports the pipeline; it has no "
        "value; give it with --param cpu=VALUE or in an overlay as kfp: {params: {cpu: VALUE}}");
  // A value that does not do: at the IR's field, saying where it came from.
  CHECK(
      error_of(ir, options(cluster, {"cpu=0"})) ==
      "p.yaml:3:96: deploymentSpec.executors.exec-w.container.resources.resourceCpuLimit: must be > 0, got 0 "
      "(the value of the pipeline parameter \"cpu\", given with --param)");
  CHECK(error_of(ir, options(cluster, {"cpu=[1]"})) ==
        "p.yaml:3:96: deploymentSpec.executors.exec-w.container.resources.resourceCpuLimit: set from the "
        "pipeline parameter \"cpu\", given with --param, which is a list: expected one value");
  CHECK(error_of(ir, options(cluster, {"cpu=lots"}))
            .rfind("p.yaml:3:96: deploymentSpec.executors.exec-w.container.resources.resourceCpuLimit: ",
                   0) == 0);
}

TEST_CASE("KFP import: a component's model reaches the SDK's copies of it that run the same container",
          "[kfp]") {
  // Three uses of one component function: the SDK writes comp-w, comp-w-2 (another resource setting, the
  // same container) and comp-w-3; here comp-w-3 runs another image, so it is another function.
  const std::string ir =
      "components:\n  comp-w: {executorLabel: exec-w}\n  comp-w-2: {executorLabel: exec-w-2}\n"
      "  comp-w-3: {executorLabel: exec-w-3}\n"
      "deploymentSpec: {executors: {exec-w: {container: {image: alpine, command: [run]}}, exec-w-2: "
      "{container: {image: alpine, command: [run], resources: {resourceCpuLimit: '2'}}}, exec-w-3: "
      "{container: {image: busybox, command: [run]}}}}\n"
      "pipelineInfo: {name: p}\nroot:\n  dag:\n    tasks:\n      w: {componentRef: {name: comp-w}}\n"
      "      w-2: {componentRef: {name: comp-w-2}}\n      w-3: {componentRef: {name: comp-w-3}}\n"
      "schemaVersion: 2.1.0\n";
  std::vector<std::string> warnings;
  const Scenario s = load_scenario_text(
      ir, "p.yaml", options("kfp: {components: {w: {duration: {base: 10m}}}}\n", {}, &warnings));
  REQUIRE(s.pipeline.steps.size() == 3);
  CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(600));
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(600));
  CHECK(s.pipeline.steps[1].component.resources.cpu == 2000);
  CHECK(s.pipeline.steps[2].component.duration.base == Duration::from_s(60));  // the default
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("component \"comp-w-3\" has no duration model") != std::string::npos;
        }) == 1);
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("component \"comp-w-2\"") != std::string::npos;
        }) == 0);
}

TEST_CASE("KFP import: a component's model reaches a copy made inside a sub-pipeline (comp-NAME-2-2)",
          "[kfp]") {
  // A sub-pipeline that uses w twice, and w twice more outside: the SDK names the copies comp-w-2,
  // comp-w-3 and, for the sub-pipeline's second use, comp-w-2-2 (compiled with kfp 2.17). comp-w-4-2
  // runs another image: a function of its own.
  const std::string ir =
      "components:\n  comp-w: {executorLabel: exec-w}\n  comp-w-2: {executorLabel: exec-w-2}\n"
      "  comp-w-2-2: {executorLabel: exec-w-2-2}\n  comp-w-4-2: {executorLabel: exec-w-4-2}\n"
      "deploymentSpec: {executors: {exec-w: {container: {image: alpine, command: [run]}}, exec-w-2: "
      "{container: {image: alpine, command: [run]}}, exec-w-2-2: {container: {image: alpine, command: "
      "[run]}}, "
      "exec-w-4-2: {container: {image: busybox, command: [run]}}}}\n"
      "pipelineInfo: {name: p}\nroot:\n  dag:\n    tasks:\n      w: {componentRef: {name: comp-w}}\n"
      "      w-2: {componentRef: {name: comp-w-2}}\n      w-2-2: {componentRef: {name: comp-w-2-2}}\n"
      "      w-4-2: {componentRef: {name: comp-w-4-2}}\n"
      "schemaVersion: 2.1.0\n";
  std::vector<std::string> warnings;
  const Scenario s = load_scenario_text(
      ir, "p.yaml", options("kfp: {components: {w: {duration: {base: 10m}}}}\n", {}, &warnings));
  REQUIRE(s.pipeline.steps.size() == 4);
  CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(600));
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(600));
  CHECK(s.pipeline.steps[2].component.duration.base == Duration::from_s(600));
  CHECK(s.pipeline.steps[3].component.duration.base == Duration::from_s(60));  // the default
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("has no duration model") != std::string::npos;
        }) == 1);
}

TEST_CASE("KFP import: a task name of 1,000 characters is shortened in a field's path", "[kfp]") {
  // (YAML refuses a plain key longer than 1,024 characters.)
  const std::string name(1000, 't');
  const std::string ir =
      "components:\n  comp-w: {executorLabel: exec-w}\n"
      "deploymentSpec: {executors: {exec-w: {container: {image: alpine}}}}\n"
      "pipelineInfo: {name: big}\nroot:\n  dag:\n    tasks:\n      " +
      name + ":\n        componentRef: {name: comp-w}\n        bogus: 1\nschemaVersion: 2.1.0\n";
  CHECK(error_of(ir) ==
        "p.yaml:10:9: root.dag.tasks." + std::string(100, 't') +
            "... (900 more characters).bogus: unsupported PipelineSpec field \"bogus\" (shardflow "
            "reads: taskInfo, inputs, dependentTasks, cachingOptions, componentRef, triggerPolicy, "
            "parameterIterator, artifactIterator, iteratorPolicy, retryPolicy)");
}

TEST_CASE("KFP import: loops within the limit on items, together past it", "[kfp][slow]") {
  // The loader's error: the count is of all the loops (the index is the second loop's own).
  CHECK(error_of(raw_loops({600'000, 400'001})) ==
        "p.yaml:14:57: pipeline.steps[1].parallel_for.items[400000]: the pipeline's loop items are too large "
        "(more than 1000000 values in all its loops; an item that is a list or a mapping counts one, and one "
        "more for each value in it)");
}

TEST_CASE("KFP import: a PipelineSpec saved as UTF-16 is named as such", "[kfp]") {
  std::string utf16 = "\xFF\xFE";
  for (const char c : kIr) utf16 += std::string{c, '\0'};
  CHECK(error_of(utf16, options(kCluster)) ==
        "p.yaml: the file is UTF-16 (its byte order mark is FF FE); save it as UTF-8");
  CHECK(error_of(utf16.substr(2), options(kCluster)) ==
        "p.yaml:1:2: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  CHECK_NOTHROW(load_scenario_text("\xEF\xBB\xBF" + kIr, "p.yaml", options(kCluster)));  // a UTF-8 mark
}

TEST_CASE("KFP import: a PipelineSpec cut short after its components is read as one", "[kfp]") {
  // The SDK writes components first; read as a scenario, the file got "unknown key components" and
  // "missing name" instead.
  const std::string cut = kIr.substr(0, kIr.find("deploymentSpec:"));
  CHECK(error_of(cut, options(kCluster)) ==
        "p.yaml:1:1: pipelineInfo: missing required key of a PipelineSpec (the KFP SDK writes it before "
        "schemaVersion, which is missing too: is the file cut short?)");
}

TEST_CASE("KFP import: kfp.outputs for an output that only a condition reads is an error", "[kfp]") {
  // A condition on flip's output, and no loop over it: a length given for it models nothing (it was
  // taken as used, so a typo of the loop's output went unnoticed).
  const std::string ir =
      "components:\n  comp-flip: {executorLabel: exec-flip}\n  comp-w: {executorLabel: exec-w}\n"
      "  comp-condition-1: {dag: {tasks: {w: {componentRef: {name: comp-w}}}}}\n"
      "deploymentSpec: {executors: {exec-flip: {container: {image: alpine}}, exec-w: {container: {image: "
      "alpine}}}}\n"
      "pipelineInfo: {name: p4}\nroot:\n  dag:\n    tasks:\n"
      "      flip: {componentRef: {name: comp-flip}}\n"
      "      condition-1:\n        componentRef: {name: comp-condition-1}\n        dependentTasks: [flip]\n"
      "        inputs: {parameters: {pipelinechannel--flip-Output: {taskOutputParameter: "
      "{outputParameterKey: "
      "Output, producerTask: flip}}}}\n"
      "        triggerPolicy: {condition: \"inputs.parameter_values['pipelinechannel--flip-Output'] == "
      "'heads'\"}\n"
      "schemaVersion: 2.1.0\n";
  CHECK(error_of(ir, options("kfp: {outputs: {flip.Output: 3}}\n")) ==
        "model.yaml:1:17: kfp.outputs.flip.Output: no loop over the output \"flip.Output\" in the pipeline "
        "(only "
        "a loop's items are modelled)");
  CHECK(error_of(ir, options("kfp: {outputs: {flip.Output: [a, b]}}\n")) ==
        "model.yaml:1:17: kfp.outputs.flip.Output: no loop over the output \"flip.Output\" in the pipeline "
        "(only "
        "a loop's items are modelled)");
}

TEST_CASE("KFP import: a producerTask that names no task of its DAG is refused at that field", "[kfp]") {
  // A loop over the output of a misspelled task: it was taken for an output whose length the overlay had
  // to give ("give its length in an overlay as kfp: {outputs: {mke.Output: N}}"), and only once given was
  // the misspelling reported.
  const auto ir = [](const std::string& producer) {
    return "components:\n  comp-a: {executorLabel: exec-a}\n  comp-b: {executorLabel: exec-b}\n"
           "  comp-for-loop-1: {dag: {tasks: {b: {componentRef: {name: comp-b}}}}}\n"
           "deploymentSpec: {executors: {exec-a: {container: {image: alpine}}, exec-b: {container: {image: "
           "alpine}}}}\n"
           "pipelineInfo: {name: p5}\nroot:\n  dag:\n    tasks:\n"
           "      make: {componentRef: {name: comp-a}}\n"
           "      for-loop-1:\n        componentRef: {name: comp-for-loop-1}\n        dependentTasks: "
           "[make]\n"
           "        inputs: {parameters: {pipelinechannel--make-Output: {taskOutputParameter: "
           "{outputParameterKey: Output, producerTask: " +
           producer +
           "}}}}\n"
           "        parameterIterator: {itemInput: pipelinechannel--make-Output-loop-item, items: "
           "{inputParameter: pipelinechannel--make-Output}}\n"
           "schemaVersion: 2.1.0\n";
  };
  const std::string at =
      "p.yaml:14:126: root.dag.tasks.for-loop-1.inputs.parameters.pipelinechannel--make-"
      "Output.taskOutputParameter.producerTask: ";
  CHECK(error_of(ir("mke"), options(kCluster)) ==
        at + "no task \"mke\" in this DAG (did you mean \"make\"?)");
  CHECK(error_of(ir("zzzzzz"), options(kCluster)) ==
        at + "no task \"zzzzzz\" in this DAG (its tasks: make, for-loop-1)");
  // The task itself: its output's length is asked for.
  CHECK(error_of(ir("make"), options(kCluster)).find("whose length shardflow cannot know") !=
        std::string::npos);
}

// The overlay's `pipeline.steps` change the imported steps by name; a name the pipeline lacks (at the
// pipeline's level or in a loop's group) is an error at the overlay's line, not a step added to the run.
TEST_CASE("KFP import: an overlay's step that the imported pipeline lacks is an error, not a new step",
          "[kfp]") {
  const std::string path = kValid + "critical/parallel_for_after_dependency.yaml";
  const std::string cluster = "cluster: {node_pools: [{name: cpu, cpu: 16, memory: 64Gi, count: 2}]}\n";
  const Scenario s = load_scenario_file(
      path,
      options(cluster + "pipeline:\n  steps:\n    - {name: print-op-2, duration: {base: 10s}}\n"
                        "    - name: for-loop-2\n      steps: [{name: print-op, duration: {base: 5s}}]\n"));
  REQUIRE(s.pipeline.steps.size() == 3);
  CHECK(s.pipeline.steps[0].steps[0].component.duration.base == Duration::from_s(5));
  CHECK(s.pipeline.steps[1].name == "print-op-2");
  CHECK(s.pipeline.steps[1].component.duration.base == Duration::from_s(10));
  try {
    (void)load_scenario_file(path, options(cluster + "pipeline:\n  steps:\n    - {name: print-op-typo}\n"));
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "model.yaml:4:14: pipeline.steps[0].name: the imported pipeline has no step \"print-op-typo\" here "
          "(did you mean \"print-op-2\"? its steps here: for-loop-2, print-op-2, print-op-3); an overlay "
          "changes an imported pipeline's "
          "steps by name and adds none");
  }
  try {
    (void)load_scenario_file(path, options(cluster + "pipeline:\n  steps:\n    - name: for-loop-2\n"
                                                     "      steps: [{name: print-opp}]\n"));
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "model.yaml:5:22: pipeline.steps[0].steps[0].name: the imported pipeline has no step \"print-opp\" "
          "here (did you mean \"print-op\"? its steps here: print-op); an overlay changes an imported "
          "pipeline's steps by name and adds "
          "none");
  }
}

TEST_CASE("KFP import: a --set count on an imported items loop is reported at the --set", "[kfp]") {
  // The loop's items come from the IR (no place of their own): the count the --set added is the mistake.
  const std::string file =
      std::string(SHARDFLOW_SOURCE_DIR) +
      "/tests/data/kfp/test_data/sdk_compiled_pipelines/valid/pipeline_with_nested_loops.yaml";
  LoadOptions o = options(kCluster);
  o.sets = {"pipeline.steps[for-loop-4].parallel_for.count=7"};
  try {
    (void)load_scenario_file(file, o);
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--set pipeline.steps[for-loop-4].parallel_for.count=7: pipeline.steps[1].parallel_for.count: give "
          "either count or items, not both");
  }
}
