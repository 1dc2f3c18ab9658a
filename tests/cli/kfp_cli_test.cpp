// The commands on compiled Kubeflow pipelines (tests/data/kfp/, docs/kfp-import.md).
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace shardflow::clitest;

namespace {

const std::string kData = "tests/data/kfp/test_data/sdk_compiled_pipelines/valid/";
const std::string kAfter = kData + "critical/parallel_for_after_dependency.yaml";
const std::string kParam = kData + "pipeline_with_parallelfor_pipeline_param.yaml";

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A copy of a data file with one piece of text replaced, in a scratch directory.
std::string edited(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = slurp(fs::path(SHARDFLOW_SOURCE_DIR) / kAfter);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  const fs::path p = scratch("kfp-" + name) / "pipeline.yaml";
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("cli: a compiled KFP pipeline simulates on its own, with one warning per default", "[cli][kfp]") {
  const Result r = run("simulate " + kAfter + " -q --out " + scratch("kfp-sim").string());
  CHECK(r.status == 0);
  CHECK(lines(r.err) == 4);  // three components without a duration model, the default cluster
  CHECK(r.err.find(kAfter + ": warning: no cluster given") != std::string::npos);
  CHECK(fs::exists(scratch("kfp-sim").parent_path() / "kfp-sim"));
}

TEST_CASE("cli: --param and --cluster FILE for a KFP pipeline, in sweep too", "[cli][kfp]") {
  const Result r =
      run("explain --json " + kParam +
          " --param 'loop_parameter=[1, 2, 3, 4]' --cluster scenarios/shard-preprocess-train.yaml");
  CHECK(r.status == 0);
  CHECK(r.out.find("\"tasks\": 17,") != std::string::npos);  // 4 + 4 + 2 x 4 + 1
  CHECK(r.err.find("no cluster given") == std::string::npos);
  const Result s = run("sweep " + kParam +
                       " --param 'loop_parameter=[1, 2]' --vary 'cluster.node_pools[cpu].count=1,2' "
                       "-r 1 -q --out " +
                       scratch("kfp-sweep").string());
  CHECK(s.status == 0);
  CHECK(lines(s.err) == 5);  // once, not once per configuration: four components and the cluster
  const Result u = run("explain " + kParam + " --param nope=1");
  CHECK(u.status == 2);
  CHECK(u.err ==
        "--param nope=1: --param: unknown pipeline parameter \"nope\" (parameters: loop_parameter, "
        "prefix)\n");
  // A value that is not the list a loop needs: the loop's place, and that --param gave it.
  const Result l = run("explain " + kParam + " --param loop_parameter=abc");
  CHECK(l.status == 2);
  CHECK(l.err ==
        kParam +
            ":285:29: root.dag.tasks.for-loop-1.parameterIterator.items.inputParameter: the loop's items "
            "are not a list: \"abc\" (the pipeline parameter \"loop_parameter\", given with --param)\n");
}

TEST_CASE("cli: explain shows each KFP loop as a group with its count and parallelismLimit", "[cli][kfp]") {
  // for-loop-1 (parallelismLimit 1) and for-loop-2 (none) over the parameter's 4 items; for-loop-4
  // (parallelismLimit 2) over 2 items holds for-loop-5 over 4: its components have no loop of their own.
  const std::string args = kParam + " --param 'loop_parameter=[1, 2, 3, 4]'";
  const Result r = run("explain " + args);
  REQUIRE(r.status == 0);
  CHECK(
      r.out.find("  for-loop-1                                         -        4           1  group\n"
                 "  for-loop-1/print-with-prefix                       4        -           -         1m") !=
      std::string::npos);
  CHECK(r.out.find("  for-loop-2                                         -        4           -  group\n") !=
        std::string::npos);
  CHECK(
      r.out.find("  for-loop-4                                         -        2           2  group\n"
                 "  for-loop-4/for-loop-5                              -        4           -  group\n"
                 "  for-loop-4/for-loop-5/print-with-prefix-3          8        -           -         1m") !=
      std::string::npos);
  const Result j = run("explain --json " + args);
  REQUIRE(j.status == 0);
  const auto groups = nlohmann::json::parse(j.out).at("groups");
  REQUIRE(groups.size() == 4);
  CHECK(groups[0] == nlohmann::json{{"path", "for-loop-1"},
                                    {"instances", 4},
                                    {"loop_count", 4},
                                    {"parallelism", 1},
                                    {"group_parallelism", 0}});
  CHECK(groups[2]["path"] == "for-loop-4");
  CHECK(groups[2]["parallelism"] == 2);
  CHECK(groups[3] == nlohmann::json{{"path", "for-loop-4/for-loop-5"},
                                    {"instances", 8},
                                    {"loop_count", 4},
                                    {"parallelism", 0},
                                    {"group_parallelism", 0}});
}

TEST_CASE("cli: bad KFP input exits 2 with one line naming file:line:col and the IR field", "[cli][kfp]") {
  SECTION("an unknown componentRef") {
    const std::string f = edited("ref", "name: comp-print-op-2\n", "name: comp-print-op-9\n");
    const Result r = run("simulate " + f);
    CHECK(r.status == 2);
    CHECK(r.err == f + ":160:17: root.dag.tasks.print-op-2.componentRef.name: unknown component "
                       "\"comp-print-op-9\" (components: comp-for-loop-2, comp-print-op, comp-print-op-2, "
                       "comp-print-op-3)\n");
  }
  SECTION("an unsupported iterator") {
    const std::string f = edited("iter", "            raw: '[1, 2, 3]'", "            range: 3");
    const Result r = run("explain " + f);
    CHECK(r.status == 2);
    CHECK(r.err ==
          f + ":153:13: root.dag.tasks.for-loop-2.parameterIterator.items.range: unsupported iterator "
              "field \"range\" (shardflow reads: raw, inputParameter)\n");
  }
  SECTION("malformed YAML") {
    const std::string f = edited("yaml", "            raw: '[1, 2, 3]'", "            raw: [1, 2, 3");
    const Result r = run("sweep " + f + " --vary cluster.node_pools[cpu].count=1,2");
    CHECK(r.status == 2);
    CHECK(r.err == f + ":154:17: YAML syntax error: end of sequence flow not found\n");
  }
  SECTION("the Argo Workflow the KFP backend makes") {
    const Result r =
        run("run tests/data/kfp/test_data/compiled-workflows/pipeline_with_parallelfor_parallelism.yaml");
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(":2:7: kind: this is an Argo Workflow, not a KFP PipelineSpec") != std::string::npos);
  }
}
