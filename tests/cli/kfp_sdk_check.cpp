// The seed pipeline as the kfp SDK compiles it: run by tests/cli/kfp_sdk_test.sh after the SDK compiled
// scenarios/kfp/shard_preprocess_train.py (a program of its own, not in the layer suites: it needs that
// file). The expected values are the Python source's.
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>

#include "core/kfp_helpers.hpp"

using namespace shardflow;
using shardflow::test::options;
using shardflow::test::shape;

TEST_CASE("KFP import: the seed pipeline as the kfp SDK compiles it", "[kfp-sdk]") {
  const char* compiled = std::getenv("SHARDFLOW_KFP_COMPILED");
  REQUIRE(compiled != nullptr);
  std::vector<std::string> warnings;
  const Scenario s = load_scenario_file(compiled, options("", {}, &warnings));
  CHECK(s.name == "shard-preprocess-train");
  // aggregate(stats=dsl.Collected(pre.output)) waits for every shard; the learning-rate loop for aggregate.
  CHECK(shape(s.pipeline.steps) ==
        "aggregate(after for-loop-2) for-loop-2[100/50]{preprocess} for-loop-4[3/3](after aggregate){train}");
  const Step& shards = s.pipeline.steps[1];
  REQUIRE(shards.loop->items.size() == 100);  // ParallelFor(items=list(range(SHARDS)), parallelism=50)
  CHECK(shards.loop->items.front() == "0");
  CHECK(shards.loop->items.back() == "99");
  const Component& pre = shards.steps[0].component;
  CHECK(pre.resources == Resources{4000, ByteCount{16} << 30, 0});
  CHECK(pre.retries.max == 3);
  CHECK(pre.retries.backoff == Duration::from_s(10));
  CHECK(pre.retries.factor == 2.0);
  // set_retry(backoff_max_duration="3600s"): the retries' deadline; Argo caps no wait below it.
  CHECK(pre.retries.max_duration == Duration::from_s(3600));
  CHECK(pre.retries.max_backoff == Duration::from_s(3600));
  CHECK(pre.image == "ghcr.io/acme/preprocess:1.2");
  CHECK(s.pipeline.steps[0].component.resources == Resources{8000, ByteCount{32} << 30, 0});
  const Step& lrs = s.pipeline.steps[2];
  CHECK(lrs.loop->items == std::vector<std::string>{"0.1", "0.01", "0.001"});
  CHECK(lrs.steps[0].component.resources == Resources{8000, ByteCount{64} << 30, 1});
  CHECK(lrs.steps[0].component.image == "ghcr.io/acme/train:1.2");

  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(plan.task_count() == 100 + 1 + 3);
  // One join gathers the 100 shards for aggregate; aggregate fans out to the 3 training runs.
  std::vector<TaskId> joins;
  for (TaskId t = 0; t < plan.size(); ++t)
    if (plan.is_join(t)) joins.push_back(t);
  REQUIRE(joins.size() == 1);
  CHECK(plan.preds(joins[0]).size() == 100);
  REQUIRE(plan.succs(joins[0]).size() == 1);
  const TaskId aggregate = plan.succs(joins[0])[0];
  CHECK(plan.task_name(aggregate) == "aggregate");
  CHECK(plan.succs(aggregate).size() == 3);
  CHECK(warnings.size() == 4);  // three components without a duration model, and the default cluster
}
