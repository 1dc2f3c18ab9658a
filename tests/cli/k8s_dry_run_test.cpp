// `shardflow run --backend k8s --dry-run`: the Jobs as a YAML stream, without any cluster.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "cli_helpers.hpp"

using namespace shardflow::clitest;

TEST_CASE("cli: run --backend k8s --dry-run prints the Jobs as YAML documents", "[cli]") {
  // KUBECONFIG points nowhere: a dry run reads no kubeconfig.
  const Result r =
      run("run scenarios/shard-preprocess-train.yaml --backend k8s --dry-run --emulate "
          "--run-id t1 --namespace ns1 --seed 3");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const std::vector<YAML::Node> docs = YAML::LoadAll(r.out);
  REQUIRE(docs.size() == 3);
  const char* const names[] = {"sf-t1-preprocess", "sf-t1-aggregate", "sf-t1-train"};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(i);
    CHECK(docs[i]["apiVersion"].as<std::string>() == "batch/v1");
    CHECK(docs[i]["kind"].as<std::string>() == "Job");
    CHECK(docs[i]["metadata"]["name"].as<std::string>() == names[i]);
    CHECK(docs[i]["metadata"]["namespace"].as<std::string>() == "ns1");
    CHECK(docs[i]["metadata"]["labels"]["shardflow.io/run"].as<std::string>() == "t1");
    // Annotation values are strings: quoted, so that YAML does not read them as numbers.
    const YAML::Node ms = docs[i]["spec"]["template"]["metadata"]["annotations"]["shardflow.io/duration-ms"];
    CHECK(ms.Tag() == "!");
  }
  CHECK(docs[0]["spec"]["completionMode"].as<std::string>() == "Indexed");
  CHECK(docs[0]["spec"]["completions"].as<int>() == 100);
  CHECK(docs[0]["spec"]["parallelism"].as<int>() == 50);
  CHECK(docs[0]["spec"]["backoffLimitPerIndex"].as<int>() == 3);
  CHECK(docs[2]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
            .as<std::string>() == "1");
  CHECK(docs[2]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"].as<std::string>() ==
        R"([{"lr":0.1},{"lr":0.01},{"lr":0.001}])");
}

TEST_CASE("cli: run --backend k8s without images is an error with or without --dry-run", "[cli]") {
  const Result no_image =
      run("run scenarios/shard-preprocess-train.yaml --backend k8s --dry-run --run-id t1");
  CHECK(no_image.status == 2);
  CHECK(no_image.out.empty());
  CHECK(no_image.err.find("pipeline.steps[1].image: step aggregate has no image") != std::string::npos);
  // A live run finds it before it reads a kubeconfig or contacts a cluster.
  const Result live =
      run("run scenarios/shard-preprocess-train.yaml --backend k8s --kubeconfig /nonexistent");
  CHECK(live.status == 2);
  CHECK(live.err == no_image.err);
  const Result wrong = run("run scenarios/shard-preprocess-train.yaml --backend sim --dry-run");
  CHECK(wrong.status == 2);
  CHECK(wrong.err.find("--dry-run: applies to --backend k8s only") != std::string::npos);
}

TEST_CASE("cli: run --backend k8s --dry-run refuses the flags of a run's files and connection", "[cli]") {
  // They were dropped without a word: --out wrote nothing, --kubeconfig was never read.
  for (const auto& [flags, flag] :
       std::vector<std::pair<std::string, std::string>>{{"--out /tmp/x", "--out"},
                                                        {"--no-files", "--no-files"},
                                                        {"--keep", "--keep"},
                                                        {"--kubeconfig kc.yaml", "--kubeconfig"},
                                                        {"--qps 5", "--qps"}}) {
    const Result r =
        run("run scenarios/argo-parallelism-limit.yaml --backend k8s --dry-run --emulate " + flags);
    INFO(flags);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err ==
          flag +
              ": goes with a run, not with --dry-run, which prints the Jobs to stdout and contacts no "
              "cluster (`> jobs.yaml` keeps them)\n");
  }
}
