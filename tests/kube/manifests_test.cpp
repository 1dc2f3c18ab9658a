// The Kubernetes manifests: one Job per step instance, exactly as the API server will see them.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/k8s/manifests.hpp>

using nlohmann::json;
using namespace shardflow;

namespace {

const char* const kThreeSteps = R"(name: mf
seed: 7
pipeline:
  steps:
    - name: prep
      parallel_for: {count: 4, parallelism: 2}
      resources: {cpu: 500m, memory: 1Gi}
      duration: {base: 2s, noise: {lognormal_sigma: 0.3}}
      failure: {p: 0.4}
      retries: {max: 2}
      image: ghcr.io/acme/prep:1
      command: [python, prep.py, --shard, "{{item.index}}", "cost=$5"]
    - name: agg
      after: [prep]
      resources: {cpu: 1, memory: 512Mi}
      duration: {base: 5s}
      image: ghcr.io/acme/agg:1
    - name: Train_GPU
      after: [agg]
      resources: {cpu: 2, memory: 4Gi, gpu: 1}
      duration: {base: 10s}
      retries: {max: 1}
      image: ghcr.io/acme/train:1
      node_selector: {accel: a100}
      tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
cluster:
  node_pools:
    - {name: cpu, cpu: 16, memory: 64Gi, count: 2}
    - {name: gpu, cpu: 32, memory: 256Gi, gpu: 4, count: 1, labels: {accel: a100}, taints: [{key: gpu}]}
)";

const char* const kExpected = R"json([
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "sf-r1-prep", "namespace": "ml",
   "labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1", "shardflow.io/step": "prep"},
   "annotations": {"shardflow.io/step-path": "prep"}},
 "spec": {"completionMode": "Indexed", "completions": 4, "parallelism": 2, "backoffLimitPerIndex": 2,
   "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
   "template": {
     "metadata": {"labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1",
                             "shardflow.io/step": "prep"}},
     "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "ghcr.io/acme/prep:1",
       "command": ["python", "prep.py", "--shard", "$(JOB_COMPLETION_INDEX)", "cost=$$5"],
       "env": [{"name": "SHARDFLOW_ITEM", "valueFrom": {"fieldRef":
         {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}],
       "resources": {"requests": {"cpu": "500m", "memory": "1073741824"},
                     "limits": {"cpu": "500m", "memory": "1073741824"}}}]}}}},
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "sf-r1-agg", "namespace": "ml",
   "labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1", "shardflow.io/step": "agg"},
   "annotations": {"shardflow.io/step-path": "agg"}},
 "spec": {"backoffLimit": 0,
   "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
   "template": {
     "metadata": {"labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1",
                             "shardflow.io/step": "agg"}},
     "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "ghcr.io/acme/agg:1",
       "env": [{"name": "SHARDFLOW_ITEM", "value": "0"}],
       "resources": {"requests": {"cpu": "1000m", "memory": "536870912"},
                     "limits": {"cpu": "1000m", "memory": "536870912"}}}]}}}},
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "sf-r1-train-gpu", "namespace": "ml",
   "labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1",
              "shardflow.io/step": "train-gpu"},
   "annotations": {"shardflow.io/step-path": "Train_GPU"}},
 "spec": {"backoffLimit": 1,
   "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
   "template": {
     "metadata": {"labels": {"app.kubernetes.io/managed-by": "shardflow", "shardflow.io/run": "r1",
                             "shardflow.io/step": "train-gpu"}},
     "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "ghcr.io/acme/train:1",
       "env": [{"name": "SHARDFLOW_ITEM", "value": "0"}],
       "resources": {"requests": {"cpu": "2000m", "memory": "4294967296"},
                     "limits": {"cpu": "2000m", "memory": "4294967296", "nvidia.com/gpu": "1"}}}],
       "nodeSelector": {"accel": "a100"},
       "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}}}}
])json";

k8s::ManifestOptions opts(bool emulate = false) {
  k8s::ManifestOptions o;
  o.run_id = "r1";
  o.namespace_name = "ml";
  o.emulate = emulate;
  o.seed = 11;
  return o;
}

}  // namespace

TEST_CASE("manifests: a loop, a single step and a GPU step, exactly", "[kube]") {
  const Scenario s = load_scenario_text(kThreeSteps, "mf.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  const auto jobs = k8s::job_manifests(s, plan, opts());
  const json expected = json::parse(kExpected);
  REQUIRE(jobs.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(jobs[i].dump(2));
    CHECK(jobs[i] == expected[i]);
  }
}

TEST_CASE("manifests: emulate annotations are attempt 0's sampled durations and failures", "[kube]") {
  Scenario s = load_scenario_text(kThreeSteps, "mf.yaml");
  s.pipeline.steps[1].component.image.clear();  // emulate: a placeholder image
  const Plan plan = Plan::unroll(s.pipeline);
  const auto jobs = k8s::job_manifests(s, plan, opts(true));
  REQUIRE(jobs.size() == 3);
  // prep: tasks in id order are its indexes 0..3.
  std::string by_index, fails;
  std::uint32_t idx = 0;
  for (TaskId t = 0; t < plan.size(); ++t) {
    if (plan.is_join(t) || plan.steps()[plan.step_of(t)].path != "prep") continue;
    REQUIRE(plan.item(t) == idx);
    const AttemptSample a = sample_attempt(plan.steps()[plan.step_of(t)].component, plan, t, 0, 11);
    by_index += (idx ? "," : "") + std::to_string(std::llround(a.run_ns / 1e6));
    if (a.fails) fails += (fails.empty() ? "" : ",") + std::to_string(idx);
    ++idx;
  }
  REQUIRE(idx == 4);
  const json& ann = jobs[0]["spec"]["template"]["metadata"]["annotations"];
  CHECK(ann["shardflow.io/duration-ms-by-index"] == by_index);
  CHECK(ann["shardflow.io/duration-ms"] == by_index.substr(0, by_index.find(',')));
  if (fails.empty())
    CHECK(!ann.contains("shardflow.io/fail-indexes"));
  else
    CHECK(ann["shardflow.io/fail-indexes"] == fails);
  CHECK(by_index != "2000,2000,2000,2000");  // the noise is there
  // agg: a constant 5 s, and the placeholder image.
  CHECK(jobs[1]["spec"]["template"]["metadata"]["annotations"] == json{{"shardflow.io/duration-ms", "5000"}});
  CHECK(jobs[1]["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.10");
  CHECK(jobs[2]["spec"]["template"]["spec"]["containers"][0]["image"] == "ghcr.io/acme/train:1");
}

TEST_CASE("manifests: a step without an image is an error naming it, unless emulating", "[kube]") {
  Scenario s = load_scenario_text(kThreeSteps, "mf.yaml");
  s.pipeline.steps[1].component.image.clear();
  const Plan plan = Plan::unroll(s.pipeline);
  try {
    (void)k8s::job_manifests(s, plan, opts());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "mf.yaml:13:7: pipeline.steps[1].image: step agg has no image; the Kubernetes backend runs every "
          "step in a container (or use --emulate for a test cluster without a kubelet)");
  }
}

TEST_CASE("manifests: an image that is no image reference is refused, naming the step and why", "[kube]") {
  Scenario s = load_scenario_text(kThreeSteps, "mf.yaml");
  s.pipeline.steps[1].component.image = "acme/Agg:1";
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK_THROWS_WITH(
      k8s::job_manifests(s, plan, opts()),
      "mf.yaml:13:7: pipeline.steps[1].image: step agg's image \"acme/Agg:1\" is not an image "
      "reference ([REGISTRY[:PORT]/]NAME[:TAG][@DIGEST]): its repository name acme/Agg has capitals: "
      "repository names are lower case");
}

TEST_CASE("image_reference_problem: the reference grammar, each rule with the reason given", "[kube]") {
  const std::string hex64(64, 'a');
  for (const char* ok :
       {"alpine", "alpine:3.19", "python:3.9-slim", "ghcr.io/acme/train:1", "registry.k8s.io/pause:3.10",
        "localhost:5000/x/y:1.0", "a--b_c__d.e:latest", "my-reg.example.com:443/team/img", "[::1]:5000/x",
        "library/busybox:_tag", "x:Tag.1-2"})
    CHECK(k8s::image_reference_problem(ok).empty());
  CHECK(k8s::image_reference_problem("busybox@sha256:" + hex64).empty());
  CHECK(k8s::image_reference_problem("busybox:1.36@sha256:" + hex64).empty());
  CHECK(k8s::image_reference_problem("") == "it is empty");
  CHECK(k8s::image_reference_problem("bad image") == "it has a space");
  CHECK(k8s::image_reference_problem("a\nb") == "it has a line break");
  CHECK(k8s::image_reference_problem(std::string("a\x01b")) == "it has a control character");
  CHECK(k8s::image_reference_problem("caf\xc3\xa9") == "it has a character outside ASCII");
  CHECK(k8s::image_reference_problem("Alpine") ==
        "its repository name Alpine has capitals: repository names are lower case");
  CHECK(k8s::image_reference_problem("ghcr.io/Acme/x") ==
        "its repository name Acme/x has capitals: repository names are lower case");
  const std::string bad_tag =
      "its tag after ':' is not 1 to 128 letters, digits, '_', '.' or '-' (not starting with '.' or '-')";
  CHECK(k8s::image_reference_problem("alpine:") == bad_tag);
  CHECK(k8s::image_reference_problem("alpine:.x") == bad_tag);
  CHECK(k8s::image_reference_problem("alpine:" + std::string(129, 'a')) == bad_tag);
  CHECK(k8s::image_reference_problem("alpine:" + std::string(128, 'a')).empty());
  const std::string bad_digest =
      "its digest after '@' is not ALGORITHM:HEX with 32 hex digits or more (e.g. sha256: and 64 hex digits)";
  CHECK(k8s::image_reference_problem("alpine@sha256:abc") == bad_digest);
  CHECK(k8s::image_reference_problem("alpine@" + hex64) == bad_digest);
  CHECK(k8s::image_reference_problem("alpine@1sha:" + hex64) == bad_digest);
  CHECK(k8s::image_reference_problem("alpine@sha256:" + std::string(64, 'g')) == bad_digest);
  CHECK(k8s::image_reference_problem(":1") == "it has no name before its tag or digest");
  CHECK(k8s::image_reference_problem(std::string(256, 'a')) == "its name is longer than 255 characters");
  CHECK(k8s::image_reference_problem("host:port/x") == "its registry's port after ':' is not a number");
  CHECK(k8s::image_reference_problem("-reg.io/x") ==
        "its registry -reg.io is not a host name with an optional :PORT");
  CHECK(k8s::image_reference_problem("a//b") ==
        "its name has an empty path component (two '/' together, or one at an end)");
  CHECK(k8s::image_reference_problem("a/") ==
        "its name has an empty path component (two '/' together, or one at an end)");
  for (const char* bad : {"a-/b", "a/-b", "a...b", "a___b", "a.-b"})
    CHECK(k8s::image_reference_problem(bad).rfind("its name's component ", 0) == 0);
}

TEST_CASE("manifests: a tree fan-in is refused, naming the field, before any Job is made", "[kube]") {
  std::string text = kThreeSteps;
  const std::string after = "      after: [prep]\n";
  text.insert(text.find(after) + after.size(), "      fan_in: {arity: 2}\n");
  const Scenario s = load_scenario_text(text, "mf.yaml");
  const Plan plan = Plan::unroll(s.pipeline);
  REQUIRE(plan.steps().size() == 4);  // prep, agg, Train_GPU and agg.level1 (2 tasks over 4 shards)
  CHECK_THROWS_WITH(
      k8s::job_manifests(s, plan, opts()),
      "mf.yaml:15:7: pipeline.steps[1].fan_in: the Kubernetes backend does not run a tree fan-in "
      "(one Job per level is not implemented); remove fan_in, or use --backend sim or local");
}

TEST_CASE("manifests: a work queue is refused, naming the field", "[kube]") {
  std::string text = kThreeSteps;
  const std::string loop = "parallel_for: {count: 4, parallelism: 2}";
  text.replace(text.find(loop), loop.size(), "parallel_for: {count: 4, parallelism: 2, workers: 2}");
  const Scenario s = load_scenario_text(text, "mf.yaml");
  CHECK_THROWS_WITH(
      k8s::job_manifests(s, Plan::unroll(s.pipeline), opts()),
      "mf.yaml:6:48: pipeline.steps[0].parallel_for.workers: the Kubernetes backend does not run a "
      "work queue (it makes one pod per item); remove workers, or use --backend sim or local");
}

TEST_CASE("manifests: speculation is refused, naming the field", "[kube]") {
  std::string text = kThreeSteps;
  const std::string loop = "parallel_for: {count: 4, parallelism: 2}";
  text.replace(text.find(loop), loop.size(), loop + "\n      speculation: {after: 1.5x}");
  const Scenario s = load_scenario_text(text, "mf.yaml");
  CHECK_THROWS_WITH(k8s::job_manifests(s, Plan::unroll(s.pipeline), opts()),
                    "mf.yaml:7:7: pipeline.steps[0].speculation: the Kubernetes backend does not run "
                    "speculative backups; remove speculation, or use --backend sim");
}

TEST_CASE("manifests: names and labels are DNS-1123 labels, long ones hash-truncated", "[kube]") {
  CHECK(k8s::dns_label("sf-r1-Train_GPU") == "sf-r1-train-gpu");
  CHECK(k8s::dns_label("sf-r1-outer/inner-outer[3]/x[12]") == "sf-r1-outer-inner-outer-3-x-12");
  CHECK(k8s::dns_label("__") == "x");
  const std::string long_a = "sf-r1-" + std::string(80, 'a') + "-1";
  const std::string long_b = "sf-r1-" + std::string(80, 'a') + "-2";
  const std::string a = k8s::dns_label(long_a), b = k8s::dns_label(long_b);
  CHECK(a.size() == 63);
  CHECK(a.substr(0, 54) == "sf-r1-" + std::string(48, 'a'));
  CHECK(a[54] == '-');
  CHECK(a != b);
  CHECK(a == k8s::dns_label(long_a));  // deterministic
  CHECK_THROWS_WITH(k8s::job_manifests(load_scenario_text(kThreeSteps, "mf.yaml"),
                                       Plan::unroll(load_scenario_text(kThreeSteps, "mf.yaml").pipeline),
                                       [] {
                                         auto o = opts();
                                         o.run_id = "Bad_Id";
                                         return o;
                                       }()),
                    Catch::Contains("--run-id Bad_Id"));
}

TEST_CASE("manifests: group iterations and item-valued commands get a Job each", "[kube]") {
  const char* const yaml = R"(name: groups
pipeline:
  steps:
    - name: sweep
      parallel_for: {items: [{lr: 0.1}, {lr: 0.01}]}
      steps:
        - name: fit
          image: fit:1
          command: [fit, --lr, "{{item.lr}}", --i, "{{item.index}}"]
        - name: score
          after: [fit]
          parallel_for: {count: 3}
          image: score:1
    - name: a_very_long_step_name_that_goes_on_and_on_and_on_beyond_sixty_three
      after: [sweep]
      parallel_for: {items: [x, y]}
      image: long:1
      command: [echo, "{{item}}"]
cluster:
  node_pools:
    - {name: cpu, cpu: 16, memory: 64Gi, count: 2}
)";
  const Scenario s = load_scenario_text(yaml, "groups.yaml");
  const auto jobs = k8s::job_manifests(s, Plan::unroll(s.pipeline), opts());
  std::vector<std::string> names;
  for (const auto& j : jobs) names.push_back(j["metadata"]["name"]);
  REQUIRE(names.size() == 6);
  CHECK(names[0] == "sf-r1-sweep-fit-sweep-0");
  CHECK(jobs[0]["spec"]["template"]["spec"]["containers"][0]["command"] ==
        json({"fit", "--lr", "0.1", "--i", "0"}));
  CHECK(jobs[0]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == R"({"lr":0.1})");
  CHECK(jobs[0]["metadata"]["annotations"]["shardflow.io/scope"] == "sweep[0]");
  CHECK(jobs[0]["metadata"]["labels"]["shardflow.io/step"] == "sweep-fit");
  CHECK(names[1] == "sf-r1-sweep-score-sweep-0");
  CHECK(jobs[1]["spec"]["completions"] == 3);
  CHECK(jobs[1]["spec"]["parallelism"] == 3);
  CHECK(names[2] == "sf-r1-sweep-fit-sweep-1");
  CHECK(jobs[2]["spec"]["template"]["spec"]["containers"][0]["command"] ==
        json({"fit", "--lr", "0.01", "--i", "1"}));
  CHECK(names[3] == "sf-r1-sweep-score-sweep-1");
  for (std::size_t i : {4, 5}) {
    INFO(names[i]);
    CHECK(names[i].size() == 63);
    CHECK(names[i].starts_with("sf-r1-a-very-long-step-name-that-goes-on-and-on-and-on-"));
    CHECK(jobs[i]["spec"]["backoffLimit"] == 0);
    CHECK(!jobs[i]["metadata"]["labels"]["shardflow.io/step"].get<std::string>().empty());
    CHECK(jobs[i]["metadata"]["labels"]["shardflow.io/step"].get<std::string>().size() <= 63);
  }
  CHECK(names[4] != names[5]);
  CHECK(jobs[4]["spec"]["template"]["spec"]["containers"][0]["command"] == json({"echo", "\"x\""}));
  CHECK(jobs[5]["spec"]["template"]["spec"]["containers"][0]["command"] == json({"echo", "\"y\""}));
}

TEST_CASE("manifests: two steps whose Jobs would have one name: an error at the second step", "[kube]") {
  const char* const yaml = R"(name: jn
pipeline:
  steps:
    - {name: a__b, image: x:1}
    - name: a-b
      image: x:1
cluster:
  node_pools:
    - {name: cpu, cpu: 4, memory: 16Gi, count: 1}
)";
  // Pod names in a trace keep "a--b" and "a-b" apart (the loader accepts them); Job names are DNS labels.
  const Scenario s = load_scenario_text(yaml, "jn.yaml");
  try {
    (void)k8s::job_manifests(s, Plan::unroll(s.pipeline), opts());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "jn.yaml:5:7: pipeline.steps[1].name: the Jobs of a__b and a-b would both be "
          "named sf-r1-a-b; rename one of the steps");
  }
}

TEST_CASE("manifests: a $ in an item reaches the pod's environment as written", "[kube]") {
  // Kubernetes expands $(VAR) and turns $$ into $ in env values too: each $ is doubled.
  const char* const yaml = R"y(name: dollars
pipeline:
  steps:
    - name: one
      parallel_for: {items: ["price$$5", "$(SHARDFLOW_ITEM)"]}
      image: a:1
      command: [echo, "{{item}}"]
    - name: all
      parallel_for: {items: ["price$5", "$(HOME)"]}
      image: a:1
cluster:
  node_pools:
    - {name: cpu, cpu: 16, memory: 64Gi, count: 2}
)y";
  const Scenario s = load_scenario_text(yaml, "dollars.yaml");
  const auto jobs = k8s::job_manifests(s, Plan::unroll(s.pipeline), opts());
  REQUIRE(jobs.size() == 3);
  const auto env = [&](std::size_t j) {
    return jobs[j]["spec"]["template"]["spec"]["containers"][0]["env"][0];
  };
  CHECK(env(0)["value"] == R"y("price$$$$5")y");
  CHECK(env(1)["value"] == R"y("$$(SHARDFLOW_ITEM)")y");
  CHECK(env(2)["name"] == "SHARDFLOW_ITEMS");
  CHECK(env(2)["value"] == R"y(["price$$5","$$(HOME)"])y");
}

TEST_CASE("manifests: YAML output quotes what would read as another type", "[kube]") {
  const json doc = {{"a", "2000"},
                    {"b", "true"},
                    {"c", "plain-text.x/y"},
                    {"d", 3},
                    {"e", json::array()},
                    {"f", {{"g", {1, "x"}}}},
                    {"h", json::array({json{{"k", "v"}, {"l", "on"}}})}};
  CHECK(k8s::to_yaml(doc) ==
        "a: \"2000\"\nb: \"true\"\nc: plain-text.x/y\nd: 3\ne: []\nf:\n  g:\n    - 1\n    - x\nh:\n  - k: v\n"
        "    l: \"on\"\n");
  CHECK(k8s::to_yaml_stream({json{{"a", 1}}, json{{"b", 2}}}) == "a: 1\n---\nb: 2\n");
}

TEST_CASE("manifests: a command that reads SHARDFLOW_ITEM gets it on every backend's terms", "[kube]") {
  // The local backend sets SHARDFLOW_ITEM for every task. A count: loop's Indexed Job takes it from the
  // pod's completion index; an items: loop whose command names it gets a Job per item (an Indexed Job
  // cannot give each index its own value), one that names only SHARDFLOW_ITEMS keeps its Indexed Job.
  const char* const yaml = R"y(name: item-env
pipeline:
  steps:
    - name: counted
      parallel_for: {count: 3}
      image: a:1
      command: [sh, -c, 'echo "$SHARDFLOW_ITEM"']
    - name: listed
      parallel_for: {items: [a, b]}
      image: a:1
      command: [sh, -c, 'echo "${SHARDFLOW_ITEM}"']
    - name: all
      parallel_for: {items: [a, b]}
      image: a:1
      command: [sh, -c, 'echo "$SHARDFLOW_ITEMS" $SHARDFLOW_ITEM_X']
cluster:
  node_pools:
    - {name: cpu, cpu: 16, memory: 64Gi, count: 2}
)y";
  const Scenario s = load_scenario_text(yaml, "item-env.yaml");
  const auto jobs = k8s::job_manifests(s, Plan::unroll(s.pipeline), opts());
  REQUIRE(jobs.size() == 4);
  const auto env = [&](std::size_t j) { return jobs[j]["spec"]["template"]["spec"]["containers"][0]["env"]; };
  CHECK(jobs[0]["spec"]["completionMode"] == "Indexed");
  CHECK(env(0) == json::parse(R"j([{"name": "SHARDFLOW_ITEM", "valueFrom": {"fieldRef":
      {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}])j"));
  CHECK(jobs[1]["metadata"]["name"] == "sf-r1-listed-0");
  CHECK(!jobs[1]["spec"].contains("completionMode"));
  CHECK(env(1) == json::parse(R"j([{"name": "SHARDFLOW_ITEM", "value": "\"a\""}])j"));
  CHECK(jobs[2]["metadata"]["name"] == "sf-r1-listed-1");
  CHECK(env(2) == json::parse(R"j([{"name": "SHARDFLOW_ITEM", "value": "\"b\""}])j"));
  CHECK(jobs[3]["spec"]["completionMode"] == "Indexed");
  CHECK(env(3) == json::parse(R"j([{"name": "SHARDFLOW_ITEMS", "value": "[\"a\",\"b\"]"}])j"));
}
