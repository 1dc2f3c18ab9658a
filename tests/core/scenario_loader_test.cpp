#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/text.hpp>

using namespace shardflow;

namespace {

// The message load_scenario_text throws for `yaml`, or "loaded" when it loads.
std::string error_of(const std::string& yaml) {
  try {
    (void)load_scenario_text(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

// A valid scenario around one list of steps (indented for `steps:` at column 3).
std::string with_steps(const std::string& steps) {
  return "name: t\n"
         "cluster:\n"
         "  node_pools:\n"
         "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
         "pipeline:\n"
         "  steps:\n" +
         steps;
}

// A valid scenario around one list of node pools.
std::string with_pools(const std::string& pools) {
  return "name: t\n"
         "pipeline:\n"
         "  steps:\n"
         "    - {name: a, resources: {cpu: 1}}\n"
         "cluster:\n"
         "  node_pools:\n" +
         pools;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kSource = SHARDFLOW_SOURCE_DIR;

}  // namespace

TEST_CASE("ScenarioLoader: the seed scenario loads into the full model", "[core]") {
  const Scenario s = load_scenario_file(kSource + "/scenarios/shard-preprocess-train.yaml");
  CHECK(s.name == "shard-preprocess-train");
  CHECK(s.file == kSource + "/scenarios/shard-preprocess-train.yaml");
  CHECK(s.seed == 42);
  CHECK(s.pipeline.name == "shard-preprocess-train");
  REQUIRE(s.pipeline.steps.size() == 3);

  const Step& pre = s.pipeline.steps[0];
  CHECK(pre.name == "preprocess");
  CHECK(pre.where.file == s.file);
  CHECK(pre.where.line == 9);
  CHECK(pre.where.column == 7);
  CHECK(pre.after.empty());
  CHECK(pre.deps.empty());
  CHECK_FALSE(pre.is_group());
  REQUIRE(pre.loop.has_value());
  CHECK(pre.loop->count == 100);
  CHECK(pre.loop->items.empty());
  CHECK(pre.loop->parallelism == 50);
  CHECK(pre.iterations() == 100);
  const Component& c = pre.component;
  CHECK(c.input.per_item.empty());
  CHECK(c.input.dist.kind == Distribution::Kind::constant);
  CHECK(c.input.dist.a == 10.0 * 1024 * 1024 * 1024);
  CHECK(c.resources == Resources{4000, 16 * kGiB, 0});
  CHECK(c.duration.base == Duration::from_s(30));
  CHECK(c.duration.per_gib == Duration::from_s(45));
  CHECK(c.duration.lognormal_sigma == 0.2);
  CHECK(c.duration.straggler_p == 0.02);
  CHECK(c.duration.straggler_factor == 4);
  CHECK(c.failure.p == 0.01);
  CHECK(c.retries.max == 3);
  CHECK(c.retries.backoff == Duration::from_s(10));
  CHECK(c.retries.factor == 2);
  CHECK(c.retries.max_backoff == Duration::from_s(300));
  CHECK(c.image == "ghcr.io/acme/preprocess:1.2");
  CHECK(c.image_size == -1);
  CHECK(c.command == std::vector<std::string>{"python", "preprocess.py", "--shard", "{{item.index}}"});
  CHECK(c.kernel.name == "shard_stats");
  CHECK(c.kernel.params == std::map<std::string, std::string>{{"rows_per_gib", "20000"}});
  CHECK(c.node_selector.empty());
  CHECK(c.tolerations.empty());

  const Step& agg = s.pipeline.steps[1];
  CHECK(agg.name == "aggregate");
  CHECK(agg.after == std::vector<std::string>{"preprocess"});
  CHECK(agg.deps == std::vector<StepIndex>{0});
  CHECK_FALSE(agg.loop.has_value());
  CHECK(agg.iterations() == 1);
  CHECK(agg.component.resources == Resources{8000, 32 * kGiB, 0});
  CHECK(agg.component.duration.base == Duration::from_s(300));
  CHECK(agg.component.duration.per_gib == Duration::zero());
  CHECK(agg.component.duration.lognormal_sigma == 0);
  CHECK(agg.component.duration.straggler_p == 0);
  CHECK(agg.component.duration.straggler_factor == 1);
  CHECK(agg.component.failure.p == 0);
  CHECK(agg.component.retries.max == 0);
  CHECK(agg.component.input.dist.a == 0);
  CHECK(agg.component.image.empty());
  CHECK(agg.component.kernel.name.empty());

  const Step& train = s.pipeline.steps[2];
  CHECK(train.name == "train");
  CHECK(train.deps == std::vector<StepIndex>{1});
  REQUIRE(train.loop.has_value());
  CHECK(train.loop->count == 3);
  CHECK(train.loop->items == std::vector<std::string>{R"({"lr":0.1})", R"({"lr":0.01})", R"({"lr":0.001})"});
  CHECK(train.loop->parallelism == 3);
  CHECK(train.component.resources == Resources{8000, 64 * kGiB, 1});
  CHECK(train.component.duration.base == Duration::from_s(45 * 60));

  REQUIRE(s.cluster.node_pools.size() == 2);
  const NodePool& cpu = s.cluster.node_pools[0];
  CHECK(cpu.name == "cpu");
  CHECK(cpu.where.line == 32);
  CHECK(cpu.cpu == 16000);
  CHECK(cpu.memory == 64 * kGiB);
  CHECK(cpu.gpu == 0);
  CHECK(cpu.count == 20);
  CHECK(cpu.price_per_hour == 0.77);
  CHECK(cpu.speed == 1.0);
  CHECK(cpu.labels.empty());
  CHECK(cpu.taints.empty());
  CHECK(cpu.mtbf == Duration::zero());
  CHECK_FALSE(cpu.spot);
  CHECK_FALSE(cpu.autoscaling.enabled());
  const NodePool& gpu = s.cluster.node_pools[1];
  CHECK(gpu.name == "gpu");
  CHECK(gpu.cpu == 32000);
  CHECK(gpu.memory == 256 * kGiB);
  CHECK(gpu.gpu == 4);
  CHECK(gpu.count == 2);
  CHECK(gpu.price_per_hour == 12.0);
  CHECK(gpu.labels == std::map<std::string, std::string>{{"accel", "a100"}});

  const SchedulerConfig& sc = s.cluster.scheduler;
  CHECK(sc.policy == ScorePolicy::least_allocated);
  CHECK(sc.percentage_of_nodes_to_score == 0);
  CHECK(sc.decisions_per_second == 100);
  CHECK(sc.bind_latency == Duration::from_ms(20));
  CHECK(sc.initial_backoff == Duration::from_s(1));
  CHECK(sc.max_backoff == Duration::from_s(10));
  CHECK(sc.backoff_window == Duration::from_s(1));
  CHECK(s.cluster.storage.read_bytes_per_second == 0);
  CHECK(s.cluster.storage.write_bytes_per_second == 0);

  CHECK(s.overheads.orchestrator == "kfp-v2");
  CHECK(s.overheads.pods_per_task == 2);
  CHECK(s.overheads.driver_pod_duration == Duration::from_s(3));
  CHECK(s.overheads.sandbox_start == Duration::from_s(1));
  CHECK(s.overheads.image_pull_bytes_per_second == 100.0 * 1024 * 1024);
  CHECK(s.overheads.default_image_size == kGiB);
}

TEST_CASE("ScenarioLoader: shardflow's own result files are named as such, not read as scenarios", "[core]") {
  const std::string tail = " (the scenario is the file it was made from)";
  CHECK(error_of("{\n  \"format\": \"shardflow-trace\",\n  \"version\": 1\n}\n") ==
        "bad.yaml:2:13: format: this is a run's trace (trace.json), not a scenario: `shardflow report DIR` "
        "makes "
        "its page, `shardflow calibrate SCENARIO DIR` fits the scenario to it" +
            tail);
  CHECK(
      error_of("{\n  \"kind\": \"compare\",\n  \"scenario\": \"s\"\n}\n") ==
      "bad.yaml:2:11: kind: this is a comparison's result (compare.json), not a scenario: `shardflow report "
      "DIR` makes its page" +
          tail);
  CHECK(error_of("{\"scenario\": \"s\", \"dimensions\": [], \"configurations\": []}\n") ==
        "bad.yaml:1:33: dimensions: this is a sweep's result (sweep.json), not a scenario: `shardflow report "
        "DIR` makes its page, `shardflow merge` combines slices" +
            tail);
  CHECK(
      error_of("{\"makespan_s\": 50.0, \"critical_path_s\": 10.0}\n") ==
      "bad.yaml:1:16: makespan_s: this is a run's metrics (metrics.json), not a scenario: `shardflow report "
      "DIR` makes the run's page" +
          tail);
  // A scenario's own unknown key is still one.
  CHECK(error_of("{\"kind\": \"sweep\"}\n").find("unknown key \"kind\"") != std::string::npos);
}

TEST_CASE("ScenarioLoader: every scenario in scenarios/ loads", "[core]") {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    INFO(f.string());
    CHECK_NOTHROW(load_scenario_file(f.string()));
  }
}

TEST_CASE("ScenarioLoader: the Argo examples become groups and limits", "[core]") {
  SECTION("parallelism limit") {
    const Scenario s = load_scenario_file(kSource + "/scenarios/argo-parallelism-limit.yaml");
    REQUIRE(s.pipeline.steps.size() == 1);
    CHECK(s.pipeline.steps[0].loop->count == 10);
    CHECK(s.pipeline.steps[0].loop->parallelism == 2);
    CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(10));
  }
  SECTION("nested DAG, written once with an anchor") {
    const Scenario s = load_scenario_file(kSource + "/scenarios/argo-parallelism-nested-dag.yaml");
    REQUIRE(s.pipeline.steps.size() == 1);
    const Step& a = s.pipeline.steps[0];
    CHECK(a.is_group());
    CHECK(a.parallelism == 2);
    REQUIRE(a.steps.size() == 5);
    CHECK(a.steps[0].deps.empty());
    CHECK(a.steps[1].deps == std::vector<StepIndex>{0});
    CHECK(a.steps[4].deps == std::vector<StepIndex>{1, 2, 3});
    for (const Step& b : a.steps) {
      REQUIRE(b.steps.size() == 3);
      CHECK(b.parallelism == 0);
      CHECK(b.steps[1].deps == std::vector<StepIndex>{0});
      CHECK(b.steps[2].deps == std::vector<StepIndex>{0});
      CHECK(b.steps[2].component.duration.base == Duration::from_s(10));
    }
  }
}

TEST_CASE("ScenarioLoader: overheads none switches every overhead off", "[core]") {
  const std::string base = "name: t\noverheads: none\npipeline: {steps: [{name: a}]}\n";
  SECTION("scheduler defaults become free") {
    const Scenario s = load_scenario_text(
        base + "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}]}", "x.yaml");
    CHECK(s.overheads.orchestrator == "none");
    CHECK(s.overheads.pods_per_task == 1);
    CHECK(s.overheads.driver_pod_duration == Duration::zero());
    CHECK(s.overheads.sandbox_start == Duration::zero());
    CHECK(s.overheads.image_pull_bytes_per_second == 0);
    CHECK(s.overheads.default_image_size == 0);
    CHECK(s.cluster.scheduler.decisions_per_second == 0);
    CHECK(s.cluster.scheduler.bind_latency == Duration::zero());
    CHECK(!s.overheads.control_plane.enabled());
    // Defaults of a component without resources: one core, no memory.
    CHECK(s.pipeline.steps[0].component.resources == Resources{1000, 0, 0});
  }
  SECTION("unless the scenario sets them") {
    const Scenario s =
        load_scenario_text(base +
                               "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}],\n"
                               "  scheduler: {decisions_per_second: 50, bind_latency: 5ms}}",
                           "x.yaml");
    CHECK(s.cluster.scheduler.decisions_per_second == 50);
    CHECK(s.cluster.scheduler.bind_latency == Duration::from_ms(5));
  }
}

TEST_CASE("ScenarioLoader: overhead presets per orchestrator", "[core]") {
  const std::string base =
      "name: t\npipeline: {steps: [{name: a}]}\n"
      "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}]}\n";
  SECTION("argo runs one pod per task") {
    const Scenario s =
        load_scenario_text(base + "overheads: {orchestrator: argo, sandbox_start: 2s}", "x.yaml");
    CHECK(s.overheads.orchestrator == "argo");
    CHECK(s.overheads.pods_per_task == 1);
    CHECK(s.overheads.driver_pod_duration == Duration::zero());
    CHECK(s.overheads.sandbox_start == Duration::from_s(2));
    CHECK(s.overheads.image_pull_bytes_per_second == 100.0 * 1024 * 1024);
    CHECK(s.overheads.default_image_size == kGiB);
  }
  SECTION("kfp-v2 with a slower driver and faster pulls") {
    const Scenario s = load_scenario_text(
        base + "overheads: {driver_pod: 5s, image_pull_bandwidth: 1GiB/s, image_size: 500Mi}", "x.yaml");
    CHECK(s.overheads.pods_per_task == 2);
    CHECK(s.overheads.driver_pod_duration == Duration::from_s(5));
    CHECK(s.overheads.image_pull_bytes_per_second == 1024.0 * 1024 * 1024);
    CHECK(s.overheads.default_image_size == 500 * kMiB);
    CHECK(s.overheads.control_plane.sync_period == Duration::from_s(10));  // Argo's DEFAULT_REQUEUE_TIME
    CHECK(s.overheads.control_plane.scope == ControlPlane::Scope::run);
  }
  SECTION("indexed-job: the Job controller's latencies, each key overridable") {
    const Scenario s = load_scenario_text(base +
                                              "overheads: {orchestrator: indexed-job, control_plane: "
                                              "{create_batch: 2ms, max_failure_backoff: 6m}}",
                                          "x.yaml");
    const ControlPlane& c = s.overheads.control_plane;
    CHECK(c.sync_period == Duration::from_s(1));
    CHECK(c.scope == ControlPlane::Scope::step);
    CHECK(c.create_batch == Duration::from_ms(2));
    CHECK(c.max_creates_per_sync == 500);
    CHECK(c.failure_backoff == Duration::from_s(10));
    CHECK(c.max_failure_backoff == Duration::from_s(360));
  }
  SECTION("sync_latency: 0 in the preset, set on its own, and less than sync_period") {
    CHECK(load_scenario_text(base + "overheads: {orchestrator: indexed-job}", "x.yaml")
              .overheads.control_plane.sync_latency == Duration::zero());
    CHECK(load_scenario_text(
              base + "overheads: {orchestrator: indexed-job, control_plane: {sync_latency: 80ms}}", "x.yaml")
              .overheads.control_plane.sync_latency == Duration::from_ms(80));
    CHECK(load_scenario_text(
              base + "overheads: {orchestrator: indexed-job, control_plane: {complete_latency: 90ms}}",
              "x.yaml")
              .overheads.control_plane.complete_latency == Duration::from_ms(90));
    CHECK_THROWS_WITH(
        load_scenario_text(base + "overheads: {orchestrator: indexed-job, control_plane: {sync_latency: 1s}}",
                           "x.yaml"),
        "x.yaml:4:70: overheads.control_plane.sync_latency: must be less than sync_period (1s): a sync's "
        "writes land before the next sync it asks for");
  }
  SECTION("api_qps and api_burst: kube-controller-manager's 20 and 30 in indexed-job, none in argo") {
    const ControlPlane job =
        load_scenario_text(base + "overheads: {orchestrator: indexed-job}", "x.yaml").overheads.control_plane;
    CHECK(job.api_qps == 20);
    CHECK(job.api_burst == 30);
    const ControlPlane argo =
        load_scenario_text(base + "overheads: {orchestrator: argo}", "x.yaml").overheads.control_plane;
    CHECK(argo.api_qps == 0);
    const ControlPlane set = load_scenario_text(base +
                                                    "overheads: {orchestrator: indexed-job, control_plane: "
                                                    "{api_qps: 2000, api_burst: 2000}}",
                                                "x.yaml")
                                 .overheads.control_plane;
    CHECK(set.api_qps == 2000);
    CHECK(set.api_burst == 2000);
    CHECK_THROWS_WITH(
        load_scenario_text(base + "overheads: {orchestrator: indexed-job, control_plane: {api_burst: 0}}",
                           "x.yaml"),
        "x.yaml:4:67: overheads.control_plane.api_burst: must be >= 1, got 0");
    CHECK_THROWS_WITH(
        load_scenario_text(base + "overheads: {orchestrator: indexed-job, control_plane: {api_qps: -1}}",
                           "x.yaml"),
        "x.yaml:4:65: overheads.control_plane.api_qps: must be >= 0, got -1");
  }
  SECTION("timestamp_resolution and clock_phase: 0 in the preset; the phase less than the resolution") {
    const ControlPlane none =
        load_scenario_text(base + "overheads: {orchestrator: indexed-job}", "x.yaml").overheads.control_plane;
    CHECK(none.timestamp_resolution == Duration::zero());
    CHECK(none.clock_phase == Duration::zero());
    const ControlPlane c = load_scenario_text(base +
                                                  "overheads: {orchestrator: indexed-job, control_plane: "
                                                  "{clock_phase: 250ms, timestamp_resolution: 1s}}",
                                              "x.yaml")
                               .overheads.control_plane;
    CHECK(c.timestamp_resolution == Duration::from_s(1));
    CHECK(c.clock_phase == Duration::from_ms(250));
    CHECK_THROWS_WITH(
        load_scenario_text(
            base + "overheads: {orchestrator: indexed-job, control_plane: {timestamp_resolution: 1s, "
                   "clock_phase: 1s}}",
            "x.yaml"),
        "x.yaml:4:95: overheads.control_plane.clock_phase: must be less than timestamp_resolution (1s): the "
        "wall clock's time past a multiple of it at simulated time 0");
    CHECK_THROWS_WITH(
        load_scenario_text(base + "overheads: {orchestrator: indexed-job, control_plane: {clock_phase: 1ms}}",
                           "x.yaml"),
        Catch::Contains("overheads.control_plane.clock_phase: must be less than timestamp_resolution (0s)"));
    CHECK_THROWS_WITH(
        load_scenario_text(
            base + "overheads: {orchestrator: indexed-job, control_plane: {timestamp_resolution: -1s}}",
            "x.yaml"),
        Catch::Contains("overheads.control_plane.timestamp_resolution: must be >= 0, got -1s"));
  }
  SECTION("job_sync is the former name of control_plane.sync_period") {
    const Scenario s =
        load_scenario_text(base + "overheads: {orchestrator: indexed-job, job_sync: 500ms}", "x.yaml");
    CHECK(s.overheads.control_plane.sync_period == Duration::from_ms(500));
  }
  SECTION("bad control_plane values") {
    CHECK_THROWS_WITH(load_scenario_text(base + "overheads: {control_plane: {scope: pod}}", "x.yaml"),
                      "x.yaml:4:36: overheads.control_plane.scope: expected step or run, got \"pod\"");
    CHECK_THROWS_WITH(load_scenario_text(base + "overheads: {control_plane: {period: 1s}}", "x.yaml"),
                      Catch::Contains("overheads.control_plane.period: unknown key"));
  }
}

TEST_CASE("ScenarioLoader: input sizes as a constant, a list or a distribution", "[core]") {
  auto input_of = [](const std::string& step) {
    return load_scenario_text(with_steps(step), "x.yaml").pipeline.steps[0].component.input;
  };
  SECTION("list") {
    const DataSize in =
        input_of("    - {name: a, parallel_for: {count: 3}, input: {size: [1Gi, 2GiB, 1000]}}\n");
    CHECK(in.per_item == std::vector<ByteCount>{kGiB, 2 * kGiB, 1000});
  }
  SECTION("lognormal") {
    const DataSize in =
        input_of("    - {name: a, input: {size: {distribution: lognormal, median: 2GiB, sigma: 0.5}}}\n");
    CHECK(in.dist == Distribution{Distribution::Kind::lognormal, 2.0 * kGiB, 0.5});
  }
  SECTION("uniform") {
    const DataSize in =
        input_of("    - {name: a, input: {size: {distribution: uniform, min: 1Gi, max: 4Gi}}}\n");
    CHECK(in.dist == Distribution{Distribution::Kind::uniform, 1.0 * kGiB, 4.0 * kGiB});
  }
  SECTION("normal") {
    const DataSize in =
        input_of("    - {name: a, input: {size: {distribution: normal, mean: 3Gi, stddev: 1Gi}}}\n");
    CHECK(in.dist == Distribution{Distribution::Kind::normal, 3.0 * kGiB, 1.0 * kGiB});
  }
  SECTION("exponential") {
    const DataSize in = input_of("    - {name: a, input: {size: {distribution: exponential, mean: 1Mi}}}\n");
    CHECK(in.dist == Distribution{Distribution::Kind::exponential, 1.0 * kMiB, 0});
  }
  SECTION("output takes the same forms") {
    const Component c = load_scenario_text(with_steps("    - {name: a, parallel_for: {count: 2}, input: "
                                                      "{size: 1Gi}, output: {size: [2Mi, 3Mi]}}\n"),
                                           "x.yaml")
                            .pipeline.steps[0]
                            .component;
    CHECK(c.input.dist.a == static_cast<double>(kGiB));
    CHECK(c.output.per_item == std::vector<ByteCount>{2 * kMiB, 3 * kMiB});
  }
}

TEST_CASE("ScenarioLoader: loop items keep their YAML types as compact JSON", "[core]") {
  const Scenario s = load_scenario_text(
      with_steps(
          "    - name: a\n"
          "      parallel_for:\n"
          "        items: [1, -2.5, \"3\", true, null, text, {b: 2, a: [x, 1e3]}, [], 'quoted \"q\"']\n"),
      "x.yaml");
  CHECK(s.pipeline.steps[0].loop->count == 9);
  CHECK(s.pipeline.steps[0].loop->items ==
        std::vector<std::string>{"1", "-2.5", R"("3")", "true", "null", R"("text")",
                                 R"({"b":2,"a":["x",1000.0]})", "[]", R"("quoted \"q\"")"});
}

TEST_CASE("ScenarioLoader: pools, taints, spot, autoscaling, scheduler and storage", "[core]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: a\n"
      "      resources: {cpu: 500m, memory: 1Gi, gpu: 1}\n"
      "      node_selector: {accel: t4}\n"
      "      tolerations: [{key: gpu, operator: Exists}, {key: team, value: ml, effect: NoExecute}]\n"
      "      image_size: 3GiB\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - name: g\n"
      "      cpu: 8\n"
      "      memory: 32Gi\n"
      "      gpu: 1\n"
      "      price_per_hour: 1.5\n"
      "      speed: 1.25\n"
      "      labels: {accel: t4}\n"
      "      taints: [{key: gpu, value: 'yes'}, {key: team, value: ml, effect: NoExecute}]\n"
      "      mtbf: 24h\n"
      "      spot: {discount: 0.6, mean_reclaim: 3h}\n"
      "      autoscaling: {min: 1, max: 10, scale_up_delay: 5s, boot_time: 2m, scale_down_idle: 15m}\n"
      "  scheduler: {policy: balanced-allocation, percentage_of_nodes_to_score: 50, decisions_per_second: "
      "300,\n"
      "              bind_latency: 1ms, initial_backoff: 2s, max_backoff: 20s, backoff_window: 250ms}\n"
      "  storage: {read_bandwidth: 500MiB/s, write_bandwidth: 200MiB/s}\n",
      "x.yaml");
  const Component& c = s.pipeline.steps[0].component;
  CHECK(c.resources == Resources{500, kGiB, 1});
  CHECK(c.image_size == 3 * kGiB);
  CHECK(c.node_selector == std::map<std::string, std::string>{{"accel", "t4"}});
  CHECK(c.tolerations ==
        std::vector<Toleration>{{"gpu", "Exists", "", ""}, {"team", "Equal", "ml", "NoExecute"}});
  const NodePool& p = s.cluster.node_pools[0];
  CHECK(p.count == 1);  // autoscaling.min when count is not given
  CHECK(p.speed == 1.25);
  CHECK(p.taints == std::vector<Taint>{{"gpu", "yes", "NoSchedule"}, {"team", "ml", "NoExecute"}});
  CHECK(p.mtbf == Duration::from_s(24 * 3600));
  CHECK(p.spot);
  CHECK(p.spot_discount == 0.6);
  CHECK(p.spot_mean_reclaim == Duration::from_s(3 * 3600));
  CHECK(p.autoscaling.min == 1);
  CHECK(p.autoscaling.max == 10);
  CHECK(p.autoscaling.scale_up_delay == Duration::from_s(5));
  CHECK(p.autoscaling.boot_time == Duration::from_s(120));
  CHECK(p.autoscaling.scale_down_idle == Duration::from_s(900));
  const SchedulerConfig& sc = s.cluster.scheduler;
  CHECK(sc.policy == ScorePolicy::balanced_allocation);
  CHECK(sc.percentage_of_nodes_to_score == 50);
  CHECK(sc.decisions_per_second == 300);
  CHECK(sc.bind_latency == Duration::from_ms(1));
  CHECK(sc.initial_backoff == Duration::from_s(2));
  CHECK(sc.max_backoff == Duration::from_s(20));
  CHECK(sc.backoff_window == Duration::from_ms(250));
  CHECK(s.cluster.storage.read_bytes_per_second == 500.0 * 1024 * 1024);
  CHECK(s.cluster.storage.write_bytes_per_second == 200.0 * 1024 * 1024);
}

TEST_CASE("ScenarioLoader: cluster.autoscaler.scale_down_delay_after_add", "[core]") {
  // An autoscaled pool, and the cluster-wide autoscaler settings after it (line 8).
  const auto with_autoscaler = [](const std::string& autoscaler) {
    return with_pools("    - {name: p, cpu: 4, memory: 1Gi, autoscaling: {max: 3}}\n") + autoscaler;
  };
  SECTION("Cluster Autoscaler's 10 minutes unless set, with or without overheads") {
    CHECK(load_scenario_text(with_autoscaler(""), "x.yaml").cluster.autoscaler.scale_down_delay_after_add ==
          Duration::from_s(600));
    CHECK(load_scenario_text(with_autoscaler("overheads: none\n"), "x.yaml")
              .cluster.autoscaler.scale_down_delay_after_add == Duration::from_s(600));
    CHECK(load_scenario_text(with_autoscaler("  autoscaler: {}\n"), "x.yaml")
              .cluster.autoscaler.scale_down_delay_after_add == Duration::from_s(600));
  }
  SECTION("read as a duration; 0s turns it off") {
    CHECK(load_scenario_text(with_autoscaler("  autoscaler: {scale_down_delay_after_add: 5m30s}\n"), "x.yaml")
              .cluster.autoscaler.scale_down_delay_after_add == Duration::from_s(330));
    CHECK(load_scenario_text(with_autoscaler("  autoscaler:\n    scale_down_delay_after_add: 0s\n"), "x.yaml")
              .cluster.autoscaler.scale_down_delay_after_add == Duration::zero());
  }
  SECTION("bad input: file:line:col, the field, what is wrong") {
    CHECK(error_of(with_autoscaler("  autoscaler: {scale_down_delay_after_add: -1m}\n")) ==
          "bad.yaml:8:44: cluster.autoscaler.scale_down_delay_after_add: must be >= 0, got -1m");
    CHECK(error_of(with_autoscaler("  autoscaler: {scale_down_delay_after_add: 10}\n")) == "loaded");  // 10 s
    CHECK(error_of(with_autoscaler("  autoscaler: {scale_down_delay_after_add: 10 minutes}\n")) ==
          "bad.yaml:8:44: cluster.autoscaler.scale_down_delay_after_add: a space in duration \"10 minutes\": "
          "write each number with its unit, without spaces (h, m, s, ms, us or ns: 90s, 2h30m, 500ms)");
    CHECK(
        error_of(with_autoscaler("  autoscaler: {scale_down_delay: 5m}\n")) ==
        "bad.yaml:8:16: cluster.autoscaler.scale_down_delay: unknown key \"scale_down_delay\" (expected one "
        "of: scale_down_delay_after_add, scan_interval)");
    CHECK(error_of(with_autoscaler("  autoscaler: 10m\n")) ==
          "bad.yaml:8:15: cluster.autoscaler: expected a mapping, got \"10m\"");
    CHECK(error_of(with_autoscaler("  autoscaling: {scale_down_delay_after_add: 5m}\n")) ==
          "bad.yaml:8:3: cluster.autoscaling: unknown key \"autoscaling\" (did you mean \"autoscaler\"?)");
  }
}

TEST_CASE("ScenarioLoader: cluster.autoscaler.scan_interval", "[core]") {
  const auto with_autoscaler = [](const std::string& autoscaler) {
    return with_pools("    - {name: p, cpu: 4, memory: 1Gi, autoscaling: {max: 3}}\n") + autoscaler;
  };
  // 0 unless set (a node goes at the instant it is due); a duration; not negative.
  CHECK(load_scenario_text(with_autoscaler(""), "x.yaml").cluster.autoscaler.scan_interval ==
        Duration::zero());
  CHECK(load_scenario_text(with_autoscaler("  autoscaler: {scan_interval: 10s}\n"), "x.yaml")
            .cluster.autoscaler.scan_interval == Duration::from_s(10));
  CHECK(error_of(with_autoscaler("  autoscaler: {scan_interval: -10s}\n")) ==
        "bad.yaml:8:31: cluster.autoscaler.scan_interval: must be >= 0, got -10s");
}

TEST_CASE("ScenarioLoader: 64 node pools at most, said by validate as by simulate", "[core]") {
  std::string pools;
  for (int i = 0; i < 65; ++i)
    pools += "    - {name: p" + std::to_string(i) + ", cpu: 4, memory: 1Gi, count: 1}\n";
  CHECK(error_of(with_pools(pools)) ==
        "bad.yaml:71:7: cluster.node_pools[64]: at most 64 node pools, got 65");
  pools.resize(pools.rfind("    - "));  // 64 load
  CHECK(error_of(with_pools(pools)) == "loaded");
}

TEST_CASE("ScenarioLoader: max_pods, driver_resources and serialize_image_pulls", "[core]") {
  const std::string steps = "pipeline: {steps: [{name: a}]}\n";
  SECTION("read into the model") {
    const Scenario s = load_scenario_text(
        "name: t\n" + steps +
            "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1, max_pods: 8},\n"
            "                       {name: q, cpu: 2, memory: 1Gi, count: 1}]}\n"
            "overheads: {driver_resources: {cpu: 250m, memory: 64Mi}, serialize_image_pulls: false}\n",
        "x.yaml");
    CHECK(s.cluster.node_pools[0].max_pods == 8);
    CHECK(s.cluster.node_pools[1].max_pods == 110);
    CHECK(s.overheads.driver_cpu == 250);
    CHECK(s.overheads.driver_memory == 64 * kMiB);
    CHECK_FALSE(s.overheads.serialize_image_pulls);
  }
  SECTION("one driver request alone keeps the other's default; booleans in the core schema's spellings") {
    const std::string head =
        "name: t\n" + steps + "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}]}\n";
    const Scenario cpu = load_scenario_text(head + "overheads: {driver_resources: {cpu: 1}}\n", "x.yaml");
    CHECK(cpu.overheads.driver_cpu == 1000);
    CHECK(cpu.overheads.driver_memory == 128 * kMiB);
    const Scenario mem = load_scenario_text(
        head + "overheads: {driver_resources: {memory: 1Gi}, serialize_image_pulls: TRUE}\n", "x.yaml");
    CHECK(mem.overheads.driver_cpu == 100);
    CHECK(mem.overheads.driver_memory == kGiB);
    CHECK(mem.overheads.serialize_image_pulls);
    const Scenario off = load_scenario_text(head + "overheads: {serialize_image_pulls: False}\n", "x.yaml");
    CHECK_FALSE(off.overheads.serialize_image_pulls);
  }
  SECTION("defaults") {
    const Scenario s = load_scenario_file(kSource + "/scenarios/shard-preprocess-train.yaml");
    for (const NodePool& p : s.cluster.node_pools) CHECK(p.max_pods == 110);
    CHECK(s.overheads.driver_cpu == 100);
    CHECK(s.overheads.driver_memory == 128 * kMiB);
    CHECK(s.overheads.serialize_image_pulls);
  }
  SECTION("overheads none keeps the defaults, which cost nothing without a driver or pulls") {
    const Scenario s =
        load_scenario_text("name: t\noverheads: none\n" + steps +
                               "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1}]}\n",
                           "x.yaml");
    CHECK(s.overheads.pods_per_task == 1);
    CHECK(s.overheads.image_pull_bytes_per_second == 0);
    CHECK(s.overheads.driver_cpu == 100);
    CHECK(s.overheads.driver_memory == 128 * kMiB);
    CHECK(s.overheads.serialize_image_pulls);
  }
  SECTION("a driver that fits only the untainted pool") {
    const Scenario s =
        load_scenario_text("name: t\n" + steps +
                               "cluster: {node_pools: [{name: p, cpu: 2, memory: 1Gi, count: 1},\n"
                               "                       {name: big, cpu: 64, memory: 1Ti, count: 1, taints: "
                               "[{key: k, effect: PreferNoSchedule}]}]}\n"
                               "overheads: {driver_resources: {cpu: 32}}\n",
                           "x.yaml");
    CHECK(s.overheads.driver_cpu == 32000);
  }
}

TEST_CASE("ScenarioLoader: nested groups resolve dependencies among siblings", "[core]") {
  const Scenario s = load_scenario_text(with_steps("    - name: g\n"
                                                   "      parallel_for: {count: 4, parallelism: 2}\n"
                                                   "      parallelism: 1\n"
                                                   "      steps:\n"
                                                   "        - {name: x}\n"
                                                   "        - name: inner\n"
                                                   "          after: [x]\n"
                                                   "          steps: [{name: y}, {name: z, after: [y]}]\n"
                                                   "    - {name: last, after: [g]}\n"),
                                        "x.yaml");
  const Step& g = s.pipeline.steps[0];
  CHECK(g.is_group());
  CHECK(g.loop->count == 4);
  CHECK(g.loop->parallelism == 2);
  CHECK(g.parallelism == 1);
  CHECK(g.steps[1].deps == std::vector<StepIndex>{0});
  CHECK(g.steps[1].steps[1].deps == std::vector<StepIndex>{0});
  CHECK(g.steps[1].steps[1].where.line == 14);
  CHECK(s.pipeline.steps[1].deps == std::vector<StepIndex>{0});
}

TEST_CASE("ScenarioLoader: files that cannot be read", "[core]") {
  SECTION("missing") {
    CHECK_THROWS_WITH(load_scenario_file("no/such/file.yaml"),
                      "no/such/file.yaml: cannot open the file (it does not exist or is not readable)");
  }
  SECTION("a name longer than a file name may be: the system's reason") {
    const std::string name = std::string(300, 'a') + ".yaml";
    CHECK_THROWS_WITH(load_scenario_file(name), name + ": cannot open the file (File name too long)");
  }
  SECTION("a directory") {
    CHECK_THROWS_WITH(load_scenario_file(kSource + "/scenarios"),
                      kSource + "/scenarios: is a directory, not a scenario file");
  }
  SECTION("bad files under tests/data name their own path") {
    const std::string f = kSource + "/tests/data/scenario-bad-syntax.yaml";
    CHECK_THROWS_WITH(load_scenario_file(f), f + ":5:4: YAML syntax error: end of map flow not found");
  }
}

TEST_CASE("ScenarioLoader: each kind of bad input gets one exact message", "[core]") {
  struct Case {
    const char* kind;
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"YAML syntax", "name: [\n", "bad.yaml:2:1: YAML syntax error: end of sequence flow not found"},
      {"empty file", "",
       "bad.yaml:1:1: the file is empty; expected a mapping with name, pipeline and cluster"},
      {"only comments", "# nothing here\n",
       "bad.yaml:1:1: the file is empty; expected a mapping with name, pipeline and cluster"},
      {"top level not a mapping", "- a\n- b\n",
       "bad.yaml:1:1: the top level must be a mapping with name, pipeline and cluster, got a list"},
      {"two documents", "name: a\n---\nname: b\n",
       "bad.yaml:2:1: expected one YAML document, found more than one"},
      {"a stray flow token", "name: a\n}\n", "bad.yaml:2:1: YAML syntax error: illegal flow end"},
      {"a stray flow token first", ", x\n", "bad.yaml:1:1: YAML syntax error: unexpected \",\""},
      {"a JSON surrogate pair", "name: \"x\\ud83d\\ude00\"\n",
       "bad.yaml:1:15: YAML syntax error: invalid unicode: 55357: \\uD83D is half of a UTF-16 surrogate "
       "pair, as "
       "JSON writes a character above U+FFFF; YAML's \\u takes the character's code point: write \\U0001F600 "
       "(\\U "
       "and 8 hex digits) or the character itself"},
      {"a lone low surrogate", "name: \"\\uDC00\"\n",
       "bad.yaml:1:14: YAML syntax error: invalid unicode: 56320: \\uDC00 is half of a UTF-16 surrogate "
       "pair, as "
       "JSON writes a character above U+FFFF; YAML's \\u takes the character's code point: write \\U and its "
       "8 "
       "hex digits, or the character itself"},
      {"past the last code point", "name: \"\\U00110000\"\n",
       "bad.yaml:1:18: YAML syntax error: invalid unicode: 1114112: U+110000 is past U+10FFFF, the last "
       "Unicode "
       "code point"},
      {"unknown key with a suggestion",
       with_steps("    - name: a\n      parallel_for: {count: 3, paralelism: 2}\n"),
       "bad.yaml:8:32: pipeline.steps[0].parallel_for.paralelism: unknown key \"paralelism\" (did you mean "
       "\"parallelism\"?)"},
      {"unknown key, nothing close", "name: t\nzzzzzzzzzzzz: 1\n",
       "bad.yaml:2:1: zzzzzzzzzzzz: unknown key \"zzzzzzzzzzzz\" (expected one of: name, description, seed, "
       "pipeline, cluster, overheads)"},
      {"missing required key at the top", "name: t\npipeline: {steps: [{name: a}]}\n",
       "bad.yaml:1:1: missing required key \"cluster\""},
      {"missing step name", with_steps("    - {after: []}\n"),
       "bad.yaml:7:7: pipeline.steps[0]: missing required key \"name\""},
      {"missing pool cpu", with_pools("    - {name: p, memory: 1Gi, count: 1}\n"),
       "bad.yaml:7:7: cluster.node_pools[0]: missing required key \"cpu\""},
      {"expected a mapping", with_steps("    - {name: a, resources: 4}\n"),
       "bad.yaml:7:28: pipeline.steps[0].resources: expected a mapping, got \"4\" (write resources: {cpu: "
       "4})"},
      {"expected a list", with_steps("    - {name: a}\n    - {name: b, after: a}\n"),
       "bad.yaml:8:24: pipeline.steps[1].after: expected a list, got \"a\""},
      {"expected a number", with_steps("    - {name: a, failure: {p: high}}\n"),
       "bad.yaml:7:30: pipeline.steps[0].failure.p: expected a number, got \"high\""},
      {"expected an integer", with_steps("    - {name: a, parallel_for: {count: 2.5}}\n"),
       "bad.yaml:7:39: pipeline.steps[0].parallel_for.count: expected an integer, got \"2.5\""},
      {"expected a string", "name: [a]\n", "bad.yaml:1:7: name: expected a string, got a list"},
      {"null where a mapping is needed", with_steps("    - name: a\n      duration:\n"),
       "bad.yaml:8:7: pipeline.steps[0].duration: expected a mapping, got nothing (null)"},
      {"bad CPU quantity", with_steps("    - {name: a, resources: {cpu: 4x}}\n"),
       "bad.yaml:7:34: pipeline.steps[0].resources.cpu: expected a CPU quantity such as 4, 1.5 or 500m, got "
       "\"4x\""},
      {"bad memory quantity", with_pools("    - {name: p, cpu: 4, memory: 16GX, count: 1}\n"),
       "bad.yaml:7:33: cluster.node_pools[0].memory: expected a size such as 16Gi, 512Mi, 10GiB or 1e9, got "
       "\"16GX\""},
      {"bad duration", with_steps("    - {name: a, duration: {base: 5 minutes}}\n"),
       "bad.yaml:7:34: pipeline.steps[0].duration.base: a space in duration \"5 minutes\": write each number "
       "with its unit, without spaces (h, m, s, ms, us or ns: 90s, 2h30m, 500ms)"},
      {"negative parallelism", with_steps("    - {name: a, parallel_for: {count: 3, parallelism: -2}}\n"),
       "bad.yaml:7:55: pipeline.steps[0].parallel_for.parallelism: must be >= 0, got -2"},
      {"negative duration", with_steps("    - {name: a, retries: {backoff: -5s}}\n"),
       "bad.yaml:7:36: pipeline.steps[0].retries.backoff: must be >= 0, got -5s"},
      {"zero CPU", with_steps("    - {name: a, resources: {cpu: 0}}\n"),
       "bad.yaml:7:34: pipeline.steps[0].resources.cpu: must be > 0, got 0"},
      {"zero speed", with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, speed: 0}\n"),
       "bad.yaml:7:55: cluster.node_pools[0].speed: must be > 0, got 0"},
      {"probability above 1", with_steps("    - {name: a, failure: {p: 1.5}}\n"),
       "bad.yaml:7:30: pipeline.steps[0].failure.p: must be a probability between 0 and 1, got 1.5"},
      {"straggler probability below 0", with_steps("    - {name: a, duration: {straggler: {p: -0.1}}}\n"),
       "bad.yaml:7:43: pipeline.steps[0].duration.straggler.p: must be a probability between 0 and 1, got "
       "-0.1"},
      {"straggler factor below 1", with_steps("    - {name: a, duration: {straggler: {factor: 0.5}}}\n"),
       "bad.yaml:7:48: pipeline.steps[0].duration.straggler.factor: must be >= 1, got 0.5"},
      {"retry max_backoff below backoff",
       with_steps("    - {name: a, retries: {backoff: 1m, max_backoff: 30s}}\n"),
       "bad.yaml:7:53: pipeline.steps[0].retries.max_backoff: must be >= backoff (1m), got 30s"},
      {"duplicate step name", with_steps("    - {name: a}\n    - {name: a}\n"),
       "bad.yaml:8:14: pipeline.steps[1].name: duplicate step name \"a\" (first at line 7)"},
      {"bad step name", with_steps("    - {name: 'a b'}\n"),
       "bad.yaml:7:14: pipeline.steps[0].name: must contain only ASCII letters, digits, '-' and '_', got \"a "
       "b\""},
      {"unknown dependency", with_steps("    - {name: a}\n    - {name: b}\n    - {name: c, after: [nope]}\n"),
       "bad.yaml:9:25: pipeline.steps[2].after[0]: unknown step \"nope\" (steps here: a, b)"},
      {"misspelled dependency",
       with_steps("    - {name: preprocess}\n    - {name: b}\n    - {name: c, after: [preproces]}\n"),
       "bad.yaml:9:25: pipeline.steps[2].after[0]: unknown step \"preproces\" (did you mean "
       "\"preprocess\"?)"},
      {"dependency listed twice", with_steps("    - {name: a}\n    - {name: b, after: [a, a]}\n"),
       "bad.yaml:8:28: pipeline.steps[1].after[1]: \"a\" is listed twice"},
      {"self-dependency", with_steps("    - {name: a, after: [a]}\n"),
       "bad.yaml:7:25: pipeline.steps[0].after[0]: step \"a\" cannot wait for itself"},
      {"dependency cycle",
       with_steps("    - {name: a, after: [c]}\n    - {name: b, after: [a]}\n    - {name: c, after: [b]}\n"),
       "bad.yaml:8:25: pipeline.steps[1].after[0]: dependency cycle: a -> b -> c -> a (each step runs before "
       "the "
       "next)"},
      {"cycle inside a nested group",
       with_steps("    - {name: x}\n"
                  "    - name: g\n"
                  "      steps:\n"
                  "        - {name: p, after: [q]}\n"
                  "        - {name: q, after: [p]}\n"),
       "bad.yaml:11:29: pipeline.steps[1].steps[1].after[0]: dependency cycle: p -> q -> p (each step runs "
       "before "
       "the next)"},
      {"a long dependency cycle, named in part",
       with_steps(
           "    - {name: s0, after: [s11]}\n    - {name: s1, after: [s0]}\n    - {name: s2, after: [s1]}\n"
           "    - {name: s3, after: [s2]}\n    - {name: s4, after: [s3]}\n    - {name: s5, after: [s4]}\n"
           "    - {name: s6, after: [s5]}\n    - {name: s7, after: [s6]}\n    - {name: s8, after: [s7]}\n"
           "    - {name: s9, after: [s8]}\n    - {name: s10, after: [s9]}\n    - {name: s11, after: "
           "[s10]}\n"),
       "bad.yaml:8:26: pipeline.steps[1].after[0]: dependency cycle: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 "
       "-> s7 "
       "-> s8 -> s9 -> ... (and 2 more) -> s0 (each step runs before the next)"},
      {"unknown dependency in a nested group names its own siblings",
       with_steps("    - {name: x}\n    - name: g\n      steps: [{name: p, after: [x]}]\n"),
       "bad.yaml:9:33: pipeline.steps[1].steps[0].after[0]: unknown step \"x\" (no other steps here)"},
      {"empty loop (count 0)", with_steps("    - {name: a, parallel_for: {count: 0}}\n"),
       "bad.yaml:7:39: pipeline.steps[0].parallel_for.count: must be >= 1, got 0"},
      {"empty loop (items [])", with_steps("    - {name: a, parallel_for: {items: []}}\n"),
       "bad.yaml:7:39: pipeline.steps[0].parallel_for.items: must not be empty (an empty loop runs nothing)"},
      {"both count and items", with_steps("    - {name: a, parallel_for: {count: 2, items: [x, y]}}\n"),
       "bad.yaml:7:42: pipeline.steps[0].parallel_for.items: give either count or items, not both"},
      {"neither count nor items", with_steps("    - {name: a, parallel_for: {parallelism: 2}}\n"),
       "bad.yaml:7:31: pipeline.steps[0].parallel_for: needs count (a number of iterations) or items (a "
       "list)"},
      {"size list length mismatch",
       with_steps("    - {name: a, parallel_for: {count: 3}, input: {size: [1Gi, 2Gi]}}\n"),
       "bad.yaml:7:57: pipeline.steps[0].input.size: has 2 sizes but the loop has 3 items"},
      {"output size list length mismatch",
       with_steps("    - {name: a, parallel_for: {count: 3}, output: {size: [1Gi]}}\n"),
       "bad.yaml:7:58: pipeline.steps[0].output.size: has 1 sizes but the loop has 3 items"},
      {"output on a group", with_steps("    - {name: g, steps: [{name: a}], output: {size: 1Gi}}\n"),
       "bad.yaml:7:37: pipeline.steps[0].output: a group (a step with steps:) cannot have component key "
       "\"output\"; put it on the steps inside"},
      {"size list without a loop", with_steps("    - {name: a, input: {size: [1Gi]}}\n"),
       "bad.yaml:7:31: pipeline.steps[0].input.size: a list of sizes needs a parallel_for (one size per "
       "item); "
       "use one size for a single task"},
      {"unknown distribution",
       with_steps("    - {name: a, input: {size: {distribution: gamma, mean: 1Gi}}}\n"),
       "bad.yaml:7:46: pipeline.steps[0].input.size.distribution: unknown distribution \"gamma\" (expected "
       "constant, uniform, normal, lognormal or exponential)"},
      {"distribution key of another distribution",
       with_steps("    - {name: a, input: {size: {distribution: uniform, min: 1Gi, max: 2Gi, sigma: 1}}}\n"),
       "bad.yaml:7:75: pipeline.steps[0].input.size.sigma: does not apply to a uniform distribution (it "
       "takes min "
       "and max)"},
      {"task larger than every node", with_steps("    - {name: big, resources: {cpu: 8, memory: 4Gi}}\n"),
       "bad.yaml:7:30: pipeline.steps[0].resources: step \"big\" asks for cpu 8, memory 4Gi, gpu 0, more "
       "than any "
       "node it may use can hold (largest: pool \"p\" with cpu 4, memory 8Gi, gpu 0)"},
      {"no pool matches the node selector: said at it, not at the resources",
       with_steps("    - {name: a, resources: {cpu: 1}, node_selector: {accel: a100}}\n"),
       "bad.yaml:7:53: pipeline.steps[0].node_selector: step \"a\" fits no node pool: its node_selector and "
       "tolerations match none of the pools with nodes (p: no label accel=a100)"},
      {"the labels match, a taint is not tolerated: said at the tolerations",
       "name: t\npipeline:\n  steps:\n"
       "    - {name: a, resources: {cpu: 1}, tolerations: [{key: spot, operator: Exists}]}\n"
       "cluster:\n  node_pools:\n"
       "    - {name: p, cpu: 4, memory: 8Gi, count: 1, taints: [{key: gpu, value: \"yes\", effect: "
       "NoSchedule}]}\n",
       "bad.yaml:4:51: pipeline.steps[0].tolerations: step \"a\" fits no node pool: its node_selector and "
       "tolerations match none of the pools with nodes (p: taint gpu=yes:NoSchedule not tolerated)"},
      {"too large for the pools it may use, and a large enough pool it may not: both said",
       "name: t\npipeline:\n  steps:\n"
       "    - {name: a, resources: {cpu: 10}}\n"
       "cluster:\n  node_pools:\n"
       "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
       "    - {name: g, cpu: 64, memory: 8Gi, count: 1, taints: [{key: gpu, effect: NoSchedule}]}\n",
       "bad.yaml:4:28: pipeline.steps[0].resources: step \"a\" asks for cpu 10, memory 0, gpu 0, more than "
       "any "
       "node it may use can hold (largest: pool \"p\" with cpu 4, memory 8Gi, gpu 0); large enough but not "
       "for "
       "it: g: taint gpu:NoSchedule not tolerated"},
      {"a taint and no tolerations: said at the step",
       "name: t\npipeline:\n  steps:\n"
       "    - {name: a, resources: {cpu: 1}}\n"
       "cluster:\n  node_pools:\n"
       "    - {name: p, cpu: 4, memory: 8Gi, count: 1, taints: [{key: gpu, value: \"yes\", effect: "
       "NoSchedule}]}\n",
       "bad.yaml:4:7: pipeline.steps[0]: step \"a\" fits no node pool: its node_selector and "
       "tolerations match none of the pools with nodes (p: taint gpu=yes:NoSchedule not tolerated)"},
      {"job_sync and control_plane.sync_period, two values of one setting",
       "name: t\noverheads: {orchestrator: argo, job_sync: 500ms, control_plane: {sync_period: 2s}}\n"
       "pipeline: {steps: [{name: a}]}\ncluster:\n  node_pools: [{name: p, cpu: 1, memory: 1Gi, count: 1}]\n",
       "bad.yaml:2:43: overheads.job_sync: is the former name of control_plane.sync_period, which is given "
       "too, with another value (500ms here, 2s there): keep one"},
      {"unknown scheduler policy",
       "name: t\npipeline: {steps: [{name: a}]}\n"
       "cluster:\n  node_pools: [{name: p, cpu: 1, memory: 1Gi, count: 1}]\n  scheduler: {policy: spread}\n",
       "bad.yaml:5:23: cluster.scheduler.policy: unknown policy \"spread\" (expected least-allocated, "
       "most-allocated, balanced-allocation, requested-to-capacity-ratio or list)"},
      {"percentage out of range",
       "name: t\npipeline: {steps: [{name: a}]}\n"
       "cluster:\n  node_pools: [{name: p, cpu: 1, memory: 1Gi, count: 1}]\n"
       "  scheduler: {percentage_of_nodes_to_score: 101}\n",
       "bad.yaml:5:45: cluster.scheduler.percentage_of_nodes_to_score: must be <= 100, got 101"},
      {"duplicate pool names",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1}\n    - {name: p, cpu: 8, memory: 1Gi, "
                  "count: 1}\n"),
       "bad.yaml:8:7: cluster.node_pools[1].name: duplicate pool name \"p\" (first at line 7)"},
      {"no node pools", "name: t\npipeline: {steps: [{name: a}]}\ncluster: {node_pools: []}\n",
       "bad.yaml:3:23: cluster.node_pools: needs at least one node pool"},
      {"a cluster without nodes", with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 0}\n"),
       "bad.yaml:7:5: cluster.node_pools: the cluster has no nodes (every pool has count 0 and no "
       "autoscaling)"},
      {"count outside the autoscaling range",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 5, autoscaling: {min: 1, max: 3}}\n"),
       "bad.yaml:7:45: cluster.node_pools[0].count: must be between autoscaling.min and autoscaling.max "
       "(1..3), "
       "got 5"},
      {"bad taint effect",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, taints: [{key: k, effect: Never}]}\n"),
       "bad.yaml:7:74: cluster.node_pools[0].taints[0].effect: must be NoSchedule, PreferNoSchedule or "
       "NoExecute, "
       "got \"Never\""},
      {"spot discount of 1",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, spot: {discount: 1}}\n"),
       "bad.yaml:7:65: cluster.node_pools[0].spot.discount: must be >= 0 and < 1 (a fraction of the price), "
       "got 1"},
      {"group with component keys",
       with_steps("    - name: g\n      resources: {cpu: 1}\n      steps: [{name: x}]\n"),
       "bad.yaml:8:7: pipeline.steps[0].resources: a group (a step with steps:) cannot have component key "
       "\"resources\"; put it on the steps inside"},
      {"parallelism on a component", with_steps("    - {name: a, parallelism: 2}\n"),
       "bad.yaml:7:17: pipeline.steps[0].parallelism: only a group (a step with steps:) has parallelism; for "
       "a "
       "loop use parallel_for.parallelism"},
      {"empty steps list", with_steps("    - {name: g, steps: []}\n"),
       "bad.yaml:7:24: pipeline.steps[0].steps: must not be empty (a group needs at least one step)"},
      {"duplicate YAML key",
       with_steps("    - name: a\n      duration: {base: 1s}\n      duration: {base: 2s}\n"),
       "bad.yaml:9:7: pipeline.steps[0].duration: duplicate key \"duration\" (first at line 8)"},
      {"toleration Exists with a value",
       with_steps("    - {name: a, tolerations: [{key: k, operator: Exists, value: v}]}\n"),
       "bad.yaml:7:65: pipeline.steps[0].tolerations[0].value: must be empty when the operator is Exists"},
      {"unknown orchestrator",
       "name: t\noverheads: {orchestrator: airflow}\npipeline: {steps: [{name: a}]}\n"
       "cluster: {node_pools: [{name: p, cpu: 1, memory: 1Gi, count: 1}]}\n",
       "bad.yaml:2:27: overheads.orchestrator: unknown orchestrator \"airflow\" (expected kfp-v2, argo, "
       "indexed-job or none)"},
      {"overheads as an unknown word", "name: t\noverheads: some\n",
       "bad.yaml:2:12: overheads: expected a mapping or \"none\", got \"some\""},
      {"driver pod without a driver", "name: t\noverheads: {orchestrator: argo, driver_pod: 2s}\n",
       "bad.yaml:2:45: overheads.driver_pod: applies only with a driver pod (orchestrator kfp-v2, or "
       "pods_per_task "
       ">= 2)"},
      {"more nodes than the simulator takes",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1000000}\n"
                  "    - {name: q, cpu: 4, memory: 1Gi, count: 1, autoscaling: {max: 2}}\n"),
       "bad.yaml:7:5: cluster.node_pools: the cluster has up to 1000002 nodes (each pool's count, or "
       "autoscaling.max); the limit is 1000000"},
      {"a node's memory past what scores can hold",
       with_pools("    - {name: p, cpu: 4, memory: 100Pi, count: 1}\n"),
       "bad.yaml:7:33: cluster.node_pools[0].memory: must be at most 1Pi (a node's memory), got 100Pi"},
      {"a price that makes the cost infinite",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, price_per_hour: 1e308}\n"),
       "bad.yaml:7:64: cluster.node_pools[0].price_per_hour: must be at most 1e9 (per node-hour), got 1e308"},
      {"max_pods of 0", with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, max_pods: 0}\n"),
       "bad.yaml:7:58: cluster.node_pools[0].max_pods: must be >= 1, got 0"},
      {"max_pods not an integer",
       with_pools("    - {name: p, cpu: 4, memory: 1Gi, count: 1, max_pods: many}\n"),
       "bad.yaml:7:58: cluster.node_pools[0].max_pods: expected an integer, got \"many\""},
      {"driver resources without a driver",
       "name: t\noverheads: {orchestrator: indexed-job, driver_resources: {cpu: 1}}\n",
       "bad.yaml:2:58: overheads.driver_resources: applies only with a driver pod (orchestrator kfp-v2, or "
       "pods_per_task >= 2)"},
      {"driver resources not a mapping", "name: t\noverheads: {driver_resources: 1}\n",
       "bad.yaml:2:31: overheads.driver_resources: expected a mapping, got \"1\""},
      {"driver resources with zero CPU", "name: t\noverheads: {driver_resources: {cpu: 0}}\n",
       "bad.yaml:2:37: overheads.driver_resources.cpu: must be > 0, got 0"},
      {"driver resources with a GPU", "name: t\noverheads: {driver_resources: {cpu: 1, gpu: 1}}\n",
       "bad.yaml:2:40: overheads.driver_resources.gpu: a driver pod requests no GPUs (only cpu and memory)"},
      {"driver resources with an unknown key", "name: t\noverheads: {driver_resources: {cpus: 1}}\n",
       "bad.yaml:2:32: overheads.driver_resources.cpus: unknown key \"cpus\" (did you mean \"cpu\"?)"},
      {"a driver larger than every node",
       "name: t\noverheads: {driver_resources: {cpu: 4, memory: 1Gi}}\npipeline: {steps: [{name: a}]}\n"
       "cluster: {node_pools: [{name: p, cpu: 2, memory: 8Gi, count: 1}, {name: q, cpu: 3, memory: 1Gi, "
       "count: "
       "1}]}\n",
       "bad.yaml:2:31: overheads.driver_resources: the driver pod asks for cpu 4, memory 1Gi, more than any "
       "node "
       "it may use can hold (largest: pool \"q\" with cpu 3, memory 1Gi)"},
      {"the default driver larger than every node",
       "name: t\npipeline: {steps: [{name: a}]}\n"
       "cluster: {node_pools: [{name: p, cpu: 2, memory: 64Mi, count: 1}]}\n",
       "bad.yaml:3:10: overheads.driver_resources: the driver pod asks for cpu 100m, memory 128Mi, more than "
       "any "
       "node it may use can hold (largest: pool \"p\" with cpu 2, memory 64Mi)"},
      {"a driver that fits only a tainted pool",
       "name: t\noverheads: {driver_resources: {cpu: 4}}\npipeline: {steps: [{name: a}]}\n"
       "cluster: {node_pools: [{name: p, cpu: 2, memory: 8Gi, count: 1},\n"
       "  {name: q, cpu: 8, memory: 8Gi, count: 1, taints: [{key: k}]}]}\n",
       "bad.yaml:2:31: overheads.driver_resources: the driver pod asks for cpu 4, memory 128Mi, more than "
       "any "
       "node it may use can hold (largest: pool \"p\" with cpu 2, memory 8Gi)"},
      {"serialize_image_pulls not a boolean", "name: t\noverheads: {serialize_image_pulls: yes}\n",
       "bad.yaml:2:36: overheads.serialize_image_pulls: expected true or false, got \"yes\""},
      {"serialize_image_pulls as a list", "name: t\noverheads: {serialize_image_pulls: [true]}\n",
       "bad.yaml:2:36: overheads.serialize_image_pulls: expected true or false, got a list"},
      {"bad rate", "name: t\noverheads: {image_pull_bandwidth: 100MiB}\n",
       "bad.yaml:2:35: overheads.image_pull_bandwidth: expected a rate such as 200MiB/s or 1Gi/s, got "
       "\"100MiB\""},
      {"negative seed", "name: t\nseed: -1\n",
       "bad.yaml:2:7: seed: expected an integer from 0 to 18446744073709551615, got \"-1\""},
      {"empty name", "name: ''\n", "bad.yaml:1:7: name: must not be empty"},
      {"loop item that is not UTF-8", with_steps("    - {name: a, parallel_for: {items: [ok, \"\xff\"]}}\n"),
       "bad.yaml:7:45: the file is not UTF-8 text here (byte 0xFF; Latin-1?); save it as UTF-8"},
      {"a name that is not UTF-8 (Latin-1)", "name: caf\xe9\n",
       "bad.yaml:1:10: the file is not UTF-8 text here (byte 0xE9; Latin-1?); save it as UTF-8"},
      {"an overlong UTF-8 form", "name: t\xc0\xaf\n",
       "bad.yaml:1:8: the file is not UTF-8 text here (byte 0xC0; Latin-1?); save it as UTF-8"},
      {"a UTF-8 surrogate", "name: t\xed\xa0\x80\n",
       "bad.yaml:1:8: the file is not UTF-8 text here (byte 0xED; Latin-1?); save it as UTF-8"},
      {"a truncated UTF-8 sequence at the end", "name: t\xe2\x82",
       "bad.yaml:1:8: the file is not UTF-8 text here (byte 0xE2; Latin-1?); save it as UTF-8"},
      // Columns count characters, as editors do: "éé" (4 bytes) before a place counts 2, a BOM none.
      {"a column after characters of two bytes",
       with_steps("    - {name: \"\xc3\xa9\xc3\xa9\", duration: {base: xx}}\n"),
       "bad.yaml:7:14: pipeline.steps[0].name: must contain only ASCII letters, digits, '-' and '_', got "
       "\"\xc3\xa9\xc3\xa9\""},
      {"a column after a byte order mark and a character of three bytes",
       "\xef\xbb\xbfname: \xe2\x82\xac\nseed: -1\n",
       "bad.yaml:2:7: seed: expected an integer from 0 to 18446744073709551615, got \"-1\""},
      {"a key after a byte order mark", "\xef\xbb\xbf{name: t, seed: x}\n",
       "bad.yaml:1:17: seed: expected an integer from 0 to 18446744073709551615, got \"x\""},
      {"a column after characters of two bytes, in a flow mapping", "{name: \"\xc3\xa9\", seed: x}\n",
       "bad.yaml:1:19: seed: expected an integer from 0 to 18446744073709551615, got \"x\""},
      {"not UTF-8 after a character of two bytes", "name: \xc3\xa9\xe9\n",
       "bad.yaml:1:8: the file is not UTF-8 text here (byte 0xE9; Latin-1?); save it as UTF-8"},
      {"a key that is not a name", "name: t\n[a]: 1\n",
       "bad.yaml:2:1: a key must be a plain name, got a list"},
      {"loop items that refer to themselves", with_steps("    - {name: a, parallel_for: {items: &x [*x]}}\n"),
       "bad.yaml:7:39: pipeline.steps[0].parallel_for.items[0]" + repeat("[0]", 65) +
           ": nested too deeply (more than 64 levels)"},
      // A plain value where a step's mapping belongs: how to write it.
      {"a bare duration", with_steps("    - {name: a, duration: 10}\n"),
       "bad.yaml:7:27: pipeline.steps[0].duration: expected a mapping, got \"10\" (write duration: {base: "
       "10s})"},
      {"a bare loop count", with_steps("    - {name: a, parallel_for: 200}\n"),
       "bad.yaml:7:31: pipeline.steps[0].parallel_for: expected a mapping, got \"200\" (write parallel_for: "
       "{count: 200})"},
      {"a bare failure probability", with_steps("    - {name: a, failure: 0.01}\n"),
       "bad.yaml:7:26: pipeline.steps[0].failure: expected a mapping, got \"0.01\" (write failure: {p: "
       "0.01})"},
      {"a bare retry count", with_steps("    - {name: a, retries: 3}\n"),
       "bad.yaml:7:26: pipeline.steps[0].retries: expected a mapping, got \"3\" (write retries: {max: 3})"},
      {"a group that contains itself", with_steps("    - &g {name: g, steps: [*g]}\n"),
       "bad.yaml:7:27: pipeline.steps[0]" + repeat(".steps[0]", 32) +
           ".steps: groups nest too deeply (more than 32 levels)"},
  };
  for (const auto& c : cases) {
    INFO(c.kind);
    const std::string got = error_of(c.yaml);
    CHECK(got == c.message);
  }
}

TEST_CASE("ScenarioLoader: a file that is not UTF-8 is named as such", "[core]") {
  const std::string yaml = with_steps("    - {name: a}\n");
  // ASCII text as UTF-16 (little or big endian) or UTF-32, with the byte order mark or without.
  const auto wide = [](const std::string& ascii, const std::string& bom, std::size_t width, bool big) {
    std::string out = bom;
    for (const char c : ascii) {
      const std::string zeros(width - 1, '\0');
      out += big ? zeros + c : c + zeros;
    }
    return out;
  };
  CHECK(error_of(wide(yaml, "\xFF\xFE", 2, false)) ==
        "bad.yaml: the file is UTF-16 (its byte order mark is FF FE); save it as UTF-8");
  CHECK(error_of(wide(yaml, "\xFE\xFF", 2, true)) ==
        "bad.yaml: the file is UTF-16 (its byte order mark is FE FF); save it as UTF-8");
  CHECK(error_of(wide(yaml, std::string("\xFF\xFE\0\0", 4), 4, false)) ==
        "bad.yaml: the file is UTF-32 (its byte order mark is FF FE 00 00); save it as UTF-8");
  CHECK(error_of(wide(yaml, "", 2, false)) ==
        "bad.yaml:1:2: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  CHECK(error_of(std::string("name: t\ndescription: a\0b\n", 24)) ==
        "bad.yaml:2:15: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  // A UTF-8 byte order mark is fine.
  CHECK(error_of("\xEF\xBB\xBF" + yaml) == "loaded");
  LoadOptions o;
  o.overlays.push_back({"o.yaml", wide("seed: 3\n", "\xFF\xFE", 2, false)});
  CHECK_THROWS_WITH(load_scenario_text(yaml, "s.yaml", o),
                    "o.yaml: the file is UTF-16 (its byte order mark is FF FE); save it as UTF-8");
}

TEST_CASE("ScenarioLoader: large groups load, and messages about them stay short", "[core]") {
  std::string steps;
  for (int i = 0; i < 5000; ++i) steps += "    - {name: s" + std::to_string(i) + "}\n";
  SECTION("five thousand siblings and a fan-in over all of them") {
    std::string fan_in = "    - name: all\n      after: [";
    for (int i = 0; i < 5000; ++i) fan_in += (i ? ", s" : "s") + std::to_string(i);
    const Scenario s = load_scenario_text(with_steps(steps + fan_in + "]\n"), "big.yaml");
    REQUIRE(s.pipeline.steps.size() == 5001);
    CHECK(s.pipeline.steps.back().deps.size() == 5000);
    CHECK(s.pipeline.steps.back().deps[4999] == 4999);
  }
  SECTION("an unknown dependency lists ten siblings and counts the rest") {
    CHECK(error_of(with_steps(steps + "    - {name: x, after: [nope]}\n")) ==
          "bad.yaml:5007:25: pipeline.steps[5000].after[0]: unknown step \"nope\" (steps here: s0, s1, s2, "
          "s3, "
          "s4, s5, s6, s7, s8, s9, and 4,990 more)");
  }
}

TEST_CASE("ScenarioLoader: every fuzz corpus file loads or gets an InputError", "[core]") {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/fuzz/corpus"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    INFO(f.string());
    try {
      (void)load_scenario_file(f.string());
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).rfind(f.string() + ":", 0) == 0);  // names the file, then a position
    }
  }
}

TEST_CASE("ScenarioLoader: --set overrides change the file's content before it is read", "[core]") {
  const std::string text = with_steps(
      "    - {name: a, parallel_for: {count: 4, parallelism: 2}}\n"
      "    - {name: b, after: [a]}\n");
  const auto load = [&](const std::vector<std::string>& sets) {
    return load_scenario_text(text, "x.yaml", sets);
  };
  SECTION("by list index and by element name, a scalar and a mapping, made keys") {
    const Scenario s =
        load({"cluster.node_pools[0].count=7", "pipeline.steps[a].parallel_for.parallelism=3",
              "pipeline.steps[b].output={size: 1Gi}", "cluster.storage.write_bandwidth=1GiB/s", "seed=99"});
    CHECK(s.cluster.node_pools[0].count == 7);
    CHECK(s.pipeline.steps[0].loop->parallelism == 3);
    CHECK(s.pipeline.steps[0].loop->count == 4);  // its sibling key is kept
    CHECK(s.pipeline.steps[1].component.output.dist.a == static_cast<double>(kGiB));
    CHECK(s.cluster.storage.write_bytes_per_second == static_cast<double>(kGiB));
    CHECK(s.seed == 99);
  }
  SECTION("the cluster autoscaler's delay, made where the file has no cluster.autoscaler") {
    CHECK(load({"cluster.autoscaler.scale_down_delay_after_add=2m"})
              .cluster.autoscaler.scale_down_delay_after_add == Duration::from_s(120));
    CHECK(load({"cluster.autoscaler={scale_down_delay_after_add: 0s}"})
              .cluster.autoscaler.scale_down_delay_after_add == Duration::zero());
  }
  SECTION("the last of two overrides of one key wins") {
    CHECK(load({"cluster.node_pools[p].count=2", "cluster.node_pools[p].count=5"})
              .cluster.node_pools[0]
              .count == 5);
  }
  SECTION("bad overrides, each with one clear message") {
    const auto error = [&](const std::string& set) {
      try {
        load({set});
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CHECK(error("cluster.node_pools[0].count") ==
          "--set cluster.node_pools[0].count: expected PATH=VALUE, as in cluster.node_pools[0].count=8");
    CHECK(error("cluster.node_pools[3].count=1") ==
          "--set cluster.node_pools[3].count=1: cluster.node_pools[3]: no such element: cluster.node_pools "
          "has 1 "
          "element");
    CHECK(error("pipeline.steps[prep].parallel_for.parallelism=2") ==
          "--set pipeline.steps[prep].parallel_for.parallelism=2: pipeline.steps[prep]: no element named "
          "\"prep\" "
          "in pipeline.steps (names: a, b)");
    // An earlier --set that replaced the element without its name is named as the likely cause.
    {
      std::string message;
      try {
        (void)load({"cluster.node_pools[0]={cpu: 8, memory: 32Gi}", "cluster.node_pools[p].count=3"});
      } catch (const InputError& e) {
        message = e.what();
      }
      CHECK(message ==
            "--set cluster.node_pools[p].count=3: cluster.node_pools[p]: no element named \"p\" in "
            "cluster.node_pools; cluster.node_pools[0] has no name since cluster.node_pools[0]={cpu: 8, "
            "memory: 32Gi} replaced it: give `name: p` in that value to keep it");
    }
    // A long list's names: the first ten, and how many more.
    {
      std::string steps;
      for (int i = 0; i < 12; ++i) steps += "    - {name: s" + std::to_string(i) + "}\n";
      std::string message;
      try {
        (void)load_scenario_text(with_steps(steps), "x.yaml", {"pipeline.steps[nope].image=x"});
      } catch (const InputError& e) {
        message = e.what();
      }
      CHECK(message ==
            "--set pipeline.steps[nope].image=x: pipeline.steps[nope]: no element named \"nope\" in "
            "pipeline.steps (names: s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, and 2 more)");
    }
    CHECK(error("name.x=1") == "--set name.x=1: name: is not a mapping: it has no key \"x\"");
    // A list's element selected with a dot, by name or by index: the selector's syntax.
    CHECK(error("cluster.node_pools.n.count=20") ==
          "--set cluster.node_pools.n.count=20: cluster.node_pools: is a list: select an element by name or "
          "index, as cluster.node_pools[n] or cluster.node_pools[0]");
    CHECK(error("cluster.node_pools.0.count=20") ==
          "--set cluster.node_pools.0.count=20: cluster.node_pools: is a list: select an element by name or "
          "index, as cluster.node_pools[0]");
    CHECK(
        error("pipeline.steps.b.after=[]") ==
        "--set pipeline.steps.b.after=[]: pipeline.steps: is a list: select an element by name or index, as "
        "pipeline.steps[b] or pipeline.steps[0]");
    CHECK(error("cluster[0]=1") == "--set cluster[0]=1: cluster: is not a list: [0] selects nothing");
    // A key the scenario does not have, then a selector: the key's likely spelling.
    CHECK(error("cluster.node_pool[n].count=4") ==
          "--set cluster.node_pool[n].count=4: cluster.node_pool: unknown key \"node_pool\" (did you mean "
          "\"node_pools\"?): the scenario has no such list, so [n] selects nothing");
    CHECK(error("cluster..count=1") ==
          "--set cluster..count=1: an empty key in the path (two dots, or a leading dot)");
    CHECK(error("cluster.node_pools[0=1") == "--set cluster.node_pools[0=1: a '[' in the path has no ']'");
    CHECK(error("seed=[1").rfind("--set seed=[1: seed: the value is not valid YAML: ", 0) == 0);
    // What follows a value's first YAML value was dropped without a word: {a: 1},{b: 2} read as {a: 1}.
    CHECK(error("cluster.node_pools[0].labels={a: x},{b: y}") ==
          "--set cluster.node_pools[0].labels={a: x},{b: y}: cluster.node_pools[0].labels: the value goes on "
          "after its first YAML value (\",{b: y}\"): a --set gives one value (a list is [A, B]; quote text "
          "that has these characters)");
    CHECK(error("description=\"x\" y") ==
          "--set description=\"x\" y: description: the value goes on after its first YAML value (\"y\"): a "
          "--set gives one value (a list is [A, B]; quote text that has these characters)");
    // A mapping the --set made on its way, and a request too large for any node, name the --set.
    CHECK(
        error("cluster.node_pools[0].labels.a.b=1") ==
        "--set cluster.node_pools[0].labels.a.b=1: cluster.node_pools[0].labels.a: expected a string, got a "
        "mapping");
    CHECK(
        error("pipeline.steps[a].resources.cpu=100") ==
        "--set pipeline.steps[a].resources.cpu=100: pipeline.steps[0].resources.cpu: step \"a\" asks for cpu "
        "100, memory 0, gpu 0, more than any node it may use can hold (largest: pool \"p\" with cpu 4, "
        "memory 8Gi, gpu 0)");
    // A short value that aliases make huge (10^7 values in 300 bytes: gigabytes once copied) is refused
    // before it is copied, as an overlay's is.
    std::string bomb = "[&l0 [x,x,x,x,x,x,x,x,x,x]";
    for (int level = 1; level <= 6; ++level) {
      bomb += ", &l" + std::to_string(level) + " [";
      for (int k = 0; k < 10; ++k) bomb += (k == 0 ? "*l" : ",*l") + std::to_string(level - 1);
      bomb += "]";
    }
    bomb += "]";
    // The --set is named by its first 100 characters: a message does not repeat a huge value.
    REQUIRE(bomb.size() == 309);
    CHECK(error("description=" + bomb) ==
          "--set description=" + bomb.substr(0, 88) +
              "... (221 more characters): description: the value is too large (more than 100000 values, "
              "counting what aliases repeat, or more than 64 levels)");
    // A long value is read whole (20,000 items, in a time linear in its size), and named in part.
    std::string items = "[a";
    for (int i = 1; i < 20000; ++i) items += ",a";
    items += "]";  // 40,001 characters
    const Scenario long_set = load({"pipeline.steps[a].command=" + items});
    CHECK(long_set.pipeline.steps[0].component.command.size() == 20000);
    CHECK(error("pipeline.steps[a].image=" + items) ==
          "--set pipeline.steps[a].image=" + items.substr(0, 76) +
              "... (39,925 more characters): pipeline.steps[0].image: expected a string, got a list");
    // Characters, not bytes: a UTF-8 character is never cut in two.
    CHECK(flag_place("--set", "a=" + std::string(97, 'x') + "\xc3\xa9\xc3\xa9z") ==
          "--set a=" + std::string(97, 'x') + "\xc3\xa9... (2 more characters)");
    CHECK(flag_place("--set", "a=" + std::string(98, 'x')) == "--set a=" + std::string(98, 'x'));
    // What the loader finds wrong in a value set this way names the override, not a line of the file.
    CHECK(error("pipeline.steps[a].parallel_for.parallelism=-2") ==
          "--set pipeline.steps[a].parallel_for.parallelism=-2: pipeline.steps[0].parallel_for.parallelism: "
          "must "
          "be >= 0, got -2");
    CHECK(error("cluster.autoscaler.scale_down_delay_after_add=-5s") ==
          "--set cluster.autoscaler.scale_down_delay_after_add=-5s: "
          "cluster.autoscaler.scale_down_delay_after_add: must be >= 0, got -5s");
    CHECK(error("cluster.node_pools[0].coutn=3") ==
          "--set cluster.node_pools[0].coutn=3: cluster.node_pools[0].coutn: unknown key \"coutn\" (did you "
          "mean "
          "\"count\"?)");
    CHECK(error("pipeline.steps[b].output={size: -1Gi}")
              .rfind("--set pipeline.steps[b].output={size: -1Gi}: "
                     "pipeline.steps[1].output.size: ",
                     0) == 0);
  }
}

TEST_CASE("ScenarioLoader: a pipeline over the task limit is refused at its widest loop, before unrolling",
          "[core]") {
  // 100,000 x 100,000 = 10^10 tasks, in a looped group at 300 bytes each about 2794 GiB: refused at the wider
  // loop (the inner one), not with std::bad_alloc.
  const std::string nested = with_steps(
      "    - name: outer\n"
      "      parallel_for: {count: 1000}\n"
      "      steps:\n"
      "        - name: inner\n"
      "          parallel_for: {count: 10000000}\n"
      "          resources: {cpu: 1}\n");
  CHECK(error_of(nested) ==
        "bad.yaml:11:33: pipeline.steps[0].steps[0].parallel_for.count: the pipeline unrolls to "
        "10,000,000,000 tasks (about 2794 GiB of memory to simulate); the limit is 50,000,000 (--max-tasks "
        "raises it; `explain` counts without unrolling)");
  // 4,000,000,000 items in one loop.
  CHECK(error_of(with_steps("    - {name: a, parallel_for: {count: 4000000000}, resources: {cpu: 1}}\n")) ==
        "bad.yaml:7:39: pipeline.steps[0].parallel_for.count: the pipeline unrolls to 4,000,000,000 tasks "
        "(about 764 GiB of memory to simulate); the limit is 50,000,000 (--max-tasks raises it; `explain` "
        "counts without unrolling)");
  // The limit is LoadOptions::max_tasks: 10 + 1 tasks pass a limit of 11 and fail one of 10.
  const std::string small = with_steps(
      "    - {name: a, parallel_for: {items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, resources: {cpu: 1}}\n"
      "    - {name: b, after: [a], resources: {cpu: 1}}\n");
  LoadOptions o;
  o.max_tasks = 11;
  CHECK(load_scenario_text(small, "s.yaml", o).pipeline.steps.size() == 2);
  o.max_tasks = 10;
  try {
    (void)load_scenario_text(small, "s.yaml", o);
    FAIL("loaded over the limit");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "s.yaml:7:39: pipeline.steps[0].parallel_for.items: the pipeline unrolls to 11 tasks (about 1 MiB "
          "of memory to simulate); the limit is 10 (--max-tasks raises it; `explain` counts without "
          "unrolling)");
  }
}

TEST_CASE("ScenarioLoader: reserved resources and DaemonSets", "[core]") {
  const auto pools_of = [](const std::string& pools) {
    return load_scenario_text(with_pools(pools), "r.yaml").cluster.node_pools;
  };
  SECTION("GKE's reservation, worked out by hand from its published rates") {
    // 16 cores: 6% of the first (60m), 1% of the second (10m), 0.5% of the next two (10m), 0.25% of the
    // other 12 (30m). 64 GiB: 25% of 4 GiB (1073741824), 20% of 4 GiB (858993459.2, down to a byte),
    // 10% of 8 GiB (858993459), 6% of 48 GiB (3092376453), and the 100 MiB eviction threshold.
    const auto big = pools_of("    - {name: n, cpu: 16, memory: 64Gi, count: 1, reserved: gke}\n");
    CHECK(big[0].reserved_cpu == 110);
    CHECK(big[0].cpu == 15890);
    CHECK(big[0].reserved_memory == ByteCount{1073741824} + 858993459 + 858993459 + 3092376453 + 100 * kMiB);
    CHECK(big[0].memory == 64 * kGiB - big[0].reserved_memory);
    // 2 cores, 8 GiB (an e2-standard-2: GKE lists 1930m allocatable): 70m; 1 GiB + 858993459 + 100 MiB.
    // 200 GiB: 1 GiB + 858993459 + 858993459 + 6% of 112 GiB (7215545057) + 2% of 72 GiB (1546188226).
    const auto two = pools_of(
        "    - {name: a, cpu: 2, memory: 8Gi, count: 1, reserved: gke}\n"
        "    - {name: b, cpu: 1500m, memory: 512Mi, count: 1, reserved: gke}\n"
        "    - {name: c, cpu: 96, memory: 200Gi, count: 1, reserved: gke}\n");
    CHECK(two[0].cpu == 1930);
    CHECK(two[0].reserved_memory == kGiB + 858993459 + 100 * kMiB);
    CHECK(two[1].reserved_cpu == 65);                  // 60m + 1% of 500m
    CHECK(two[1].reserved_memory == 355 * kMiB);       // under 1 GiB: 255 MiB, and the eviction threshold
    CHECK(two[2].reserved_cpu == 60 + 10 + 10 + 230);  // 0.25% of 92 cores
    CHECK(two[2].reserved_memory == kGiB + 858993459 + 858993459 + 7215545057 + 1546188226 + 100 * kMiB);
  }
  SECTION("EKS's: memory by the node's max_pods") {
    // 4 cores: 60m + 10m + 2 x 5m. max_pods 58 (an m5.xlarge's): 11 x 58 + 255 = 893 MiB, and 100 MiB
    // of eviction threshold. max_pods given after `reserved` in the file counts all the same.
    const auto p = pools_of(
        "    - {name: a, cpu: 4, memory: 16Gi, count: 1, reserved: eks, max_pods: 58}\n"
        "    - {name: b, cpu: 4, memory: 16Gi, count: 1, reserved: eks}\n");
    CHECK(p[0].cpu == 3920);
    CHECK(p[0].reserved_memory == 993 * kMiB);
    CHECK(p[1].reserved_memory == (11 * 110 + 355) * kMiB);  // the default max_pods, 110
  }
  SECTION("AKS's: CPU by its table, memory by max_pods up to a quarter of the node") {
    // 16 cores: 60m + 40m (4% of the second core) + 2 x 20m + 12 x 10m = 260m, the page's value for 16.
    // max_pods 30: 20 MiB x 30 + 50 MiB = 650 MiB (less than 16 GiB, a quarter of 64), and the 100 MiB
    // eviction threshold. 4 cores: 140m; the default max_pods 110: 2250 MiB (less than 4 GiB) + 100 MiB.
    const auto p = pools_of(
        "    - {name: a, cpu: 16, memory: 64Gi, count: 1, reserved: aks, max_pods: 30}\n"
        "    - {name: b, cpu: 4, memory: 16Gi, count: 1, reserved: aks}\n");
    CHECK(p[0].reserved_cpu == 260);
    CHECK(p[0].cpu == 15740);
    CHECK(p[0].reserved_memory == 750 * kMiB);
    CHECK(p[0].memory == 64 * kGiB - 750 * kMiB);
    CHECK(p[1].reserved_cpu == 140);
    CHECK(p[1].cpu == 3860);
    CHECK(p[1].reserved_memory == 2350 * kMiB);
    // The page's second example, 4 GB and 70 pods: 25% of 4 GiB (1 GiB) is less than 1450 MiB. Between and
    // beyond the table's points: 3 cores 120m; 1.5 cores 60m + 20m; 96 cores 60m + 40m + 40m + 920m.
    const auto q = pools_of(
        "    - {name: a, cpu: 2, memory: 4Gi, count: 1, reserved: aks, max_pods: 70}\n"
        "    - {name: b, cpu: 3, memory: 16Gi, count: 1, reserved: aks}\n"
        "    - {name: c, cpu: 1500m, memory: 16Gi, count: 1, reserved: aks}\n"
        "    - {name: d, cpu: 96, memory: 384Gi, count: 1, reserved: aks, max_pods: 250}\n");
    CHECK(q[0].reserved_cpu == 100);
    CHECK(q[0].reserved_memory == kGiB + 100 * kMiB);
    CHECK(q[1].reserved_cpu == 120);
    CHECK(q[2].reserved_cpu == 80);
    CHECK(q[3].reserved_cpu == 1060);
    CHECK(q[3].reserved_memory == (20 * 250 + 50 + 100) * kMiB);
    // The table's other points.
    std::string table;
    for (const int cores : {1, 2, 8, 32, 64})
      table += "    - {name: n" + std::to_string(cores) + ", cpu: " + std::to_string(cores) +
               ", memory: 8Gi, count: 1, reserved: aks}\n";
    const auto t = pools_of(table);
    CHECK(t[0].reserved_cpu == 60);
    CHECK(t[1].reserved_cpu == 100);
    CHECK(t[2].reserved_cpu == 180);
    CHECK(t[3].reserved_cpu == 420);
    CHECK(t[4].reserved_cpu == 740);
  }
  SECTION("given, or none") {
    const auto p = pools_of(
        "    - {name: a, cpu: 8, memory: 32Gi, count: 1, reserved: {cpu: 500m, memory: 2Gi}}\n"
        "    - {name: b, cpu: 8, memory: 32Gi, count: 1, reserved: none}\n");
    CHECK(p[0].cpu == 7500);
    CHECK(p[0].memory == 30 * kGiB);
    CHECK(p[1].cpu == 8000);
    CHECK(p[1].reserved_cpu == 0);
  }
  SECTION("DaemonSets add up on the pools they run on") {
    const Scenario s =
        load_scenario_text(with_pools("    - {name: cpu, cpu: 16, memory: 64Gi, count: 1}\n"
                                      "    - {name: gpu, cpu: 32, memory: 128Gi, gpu: 4, count: 1}\n"
                                      "  daemonsets:\n"
                                      "    - {name: logging, cpu: 100m, memory: 200Mi}\n"
                                      "    - {name: device-plugin, memory: 64Mi, pools: [gpu]}\n"),
                           "r.yaml");
    const NodePool& cpu = s.cluster.node_pools[0];
    const NodePool& gpu = s.cluster.node_pools[1];
    CHECK(cpu.daemon_pods == 1);
    CHECK(cpu.daemon_cpu == 100);
    CHECK(cpu.pod_cpu() == 15900);
    CHECK(gpu.daemon_pods == 2);
    CHECK(gpu.daemon_cpu == 100);
    CHECK(gpu.daemon_memory == 264 * kMiB);
    CHECK(gpu.daemon_nonzero_cpu == 200);  // the plugin's missing request counts 100m for scoring
    CHECK(gpu.max_pods == 108);
    REQUIRE(s.cluster.daemonsets.size() == 2);
    CHECK(s.cluster.daemonsets[1].pools == std::vector<std::string>{"gpu"});
  }
  SECTION("DaemonSets run only on the pools whose NoSchedule and NoExecute taints they tolerate") {
    // gpu's taint (NoSchedule by default) and ml's NoExecute keep logging off; spot's PreferNoSchedule
    // does not; cordoned's node.kubernetes.io/unschedulable is one the DaemonSet controller tolerates.
    // gpu-agent tolerates gpu's taint, so runs on every pool but ml; device-plugin on the pool it names.
    const Scenario s = load_scenario_text(
        with_pools(
            "    - {name: cpu, cpu: 16, memory: 64Gi, count: 1}\n"
            "    - {name: gpu, cpu: 32, memory: 128Gi, gpu: 4, count: 1,\n"
            "       taints: [{key: nvidia.com/gpu, value: present}]}\n"
            "    - {name: spot, cpu: 8, memory: 32Gi, count: 1, taints: [{key: spot, effect: "
            "PreferNoSchedule}]}\n"
            "    - {name: ml, cpu: 8, memory: 32Gi, count: 1, taints: [{key: team, value: ml, effect: "
            "NoExecute}]}\n"
            "    - {name: cordoned, cpu: 8, memory: 32Gi, count: 1, taints: [{key: "
            "node.kubernetes.io/unschedulable}]}\n"
            "  daemonsets:\n"
            "    - {name: logging, cpu: 100m, memory: 200Mi}\n"
            "    - {name: gpu-agent, cpu: 10m, tolerations: [{key: nvidia.com/gpu, operator: Exists}]}\n"
            "    - {name: device-plugin, cpu: 50m, pools: [gpu],\n"
            "       tolerations: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n"),
        "r.yaml");
    const auto& p = s.cluster.node_pools;
    CHECK(p[0].daemon_pods == 2);  // logging, gpu-agent
    CHECK(p[0].daemon_cpu == 110);
    CHECK(p[1].daemon_pods == 2);  // gpu-agent, device-plugin
    CHECK(p[1].daemon_cpu == 60);
    CHECK(p[1].daemon_memory == 0);
    CHECK(p[1].daemon_nonzero_memory == 400 * kMiB);  // two pods without a memory request
    CHECK(p[1].max_pods == 108);
    CHECK(p[2].daemon_pods == 2);  // logging, gpu-agent
    CHECK(p[2].daemon_cpu == 110);
    CHECK(p[3].daemon_pods == 0);  // gpu-agent tolerates nvidia.com/gpu only
    CHECK(p[3].max_pods == 110);
    CHECK(p[4].daemon_pods == 2);  // logging, gpu-agent
    CHECK(p[4].daemon_cpu == 110);
    REQUIRE(s.cluster.daemonsets.size() == 3);
    CHECK(s.cluster.daemonsets[0].tolerations.empty());  // the controller's are not the DaemonSet's own
    CHECK(s.cluster.daemonsets[1].pools.empty());
    CHECK(s.cluster.daemonsets[2].tolerations ==
          std::vector<Toleration>{{"nvidia.com/gpu", "Equal", "present", "NoSchedule"}});
  }
  SECTION("a DaemonSet's pools must all be ones whose taints it tolerates") {
    const std::string pools =
        "    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
        "    - {name: gpu, cpu: 8, memory: 32Gi, gpu: 1, count: 1, taints: [{key: nvidia.com/gpu, value: "
        "present}]}\n"
        "  daemonsets:\n";
    CHECK(error_of(with_pools(pools + "    - {name: x, cpu: 1, pools: [p, gpu]}\n")) ==
          "bad.yaml:10:36: cluster.daemonsets[0].pools[1]: daemonset \"x\" does not tolerate pool \"gpu\"'s "
          "taint "
          "nvidia.com/gpu=present:NoSchedule (give it a toleration of that taint, or leave the pool out)");
    // A toleration of another value, or of another effect, is no toleration of it.
    CHECK(error_of(with_pools(
              pools + "    - {name: x, cpu: 1, pools: [gpu], tolerations: [{key: nvidia.com/gpu, "
                      "value: absent}, {key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]}\n")) ==
          "bad.yaml:10:33: cluster.daemonsets[0].pools[0]: daemonset \"x\" does not tolerate pool \"gpu\"'s "
          "taint "
          "nvidia.com/gpu=present:NoSchedule (give it a toleration of that taint, or leave the pool out)");
    CHECK(error_of(with_pools(
              pools + "    - {name: x, cpu: 1, pools: [gpu], tolerations: [{key: nvidia.com/gpu}]}\n")) ==
          "bad.yaml:10:33: cluster.daemonsets[0].pools[0]: daemonset \"x\" does not tolerate pool \"gpu\"'s "
          "taint "
          "nvidia.com/gpu=present:NoSchedule (give it a toleration of that taint, or leave the pool out)");
    CHECK(
        error_of(with_pools(pools + "    - {name: x, tolerations: [{key: a, operator: In}]}\n")) ==
        "bad.yaml:10:50: cluster.daemonsets[0].tolerations[0].operator: must be Equal or Exists, got \"In\"");
    CHECK(error_of(with_pools(
              pools +
              "    - {name: x, pools: [gpu], tolerations: [{key: nvidia.com/gpu, operator: Exists}]}\n")) ==
          "loaded");
  }
  SECTION("bad input") {
    CHECK(error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1, reserved: azure}\n")) ==
          "bad.yaml:7:58: cluster.node_pools[0].reserved: unknown preset \"azure\" (expected gke, eks, aks, "
          "none, or a mapping {cpu: ..., memory: ...})");
    CHECK(
        error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1, reserved: {cpu: 4}}\n")) ==
        "bad.yaml:7:58: cluster.node_pools[0].reserved: reserves cpu 4 of the node's 4: nothing is left for "
        "pods");
    // 0 reserves none, as memory 0 does (it was refused as "must be > 0"); below 0 is refused.
    CHECK(error_of(with_pools(
              "    - {name: p, cpu: 4, memory: 8Gi, count: 1, reserved: {cpu: 0, memory: 1Gi}}\n")) ==
          "loaded");
    CHECK(error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1, reserved: {cpu: -1}}\n")) ==
          "bad.yaml:7:64: cluster.node_pools[0].reserved.cpu: must be >= 0, got -1");
    CHECK(error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                              "  daemonsets:\n"
                              "    - {name: x, cpu: 1, pools: [gpu]}\n")) ==
          "bad.yaml:9:33: cluster.daemonsets[0].pools[0]: no node pool named \"gpu\" (pools: p)");
    CHECK(
        error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                            "  daemonsets:\n"
                            "    - {name: x, cpu: 3}\n"
                            "    - {name: y, cpu: 2}\n")) ==
        "bad.yaml:10:7: cluster.daemonsets[1]: the daemonsets up to \"y\" need more cpu than a node of pool "
        "\"p\" has for pods (5 of 4); leave it off that pool with `pools:`");
    CHECK(error_of(with_pools("    - {name: p, cpu: 4, memory: 8Gi, count: 1}\n"
                              "  daemonsets:\n"
                              "    - {name: x, cpu: 1}\n"
                              "    - {name: x, cpu: 1}\n")) ==
          "bad.yaml:10:7: cluster.daemonsets[1].name: duplicate daemonset name \"x\" (first at line 9)");
    // A step that fits the node but not beside its DaemonSet pods and reservation.
    CHECK(error_of(with_pools("    - {name: p, cpu: 2, memory: 8Gi, count: 1, reserved: gke}\n"
                              "  daemonsets:\n"
                              "    - {name: x, cpu: 950m}\n")) ==
          "bad.yaml:4:28: pipeline.steps[0].resources: step \"a\" asks for cpu 1, memory 0, gpu 0, more than "
          "any node it may use can hold (largest: pool \"p\" with cpu 980m, memory 6.1Gi, gpu 0 for pods, "
          "after its reserved resources and daemonsets)");
  }
}

TEST_CASE("ScenarioLoader: lists and mappings nested past the parser's limit are named as such", "[core]") {
  // yaml-cpp stops at 500 levels with "bad file", which said nothing of what was wrong.
  const std::string deep = "name: " + std::string(600, '[') + std::string(600, ']') + "\n";
  const std::string e = error_of(deep);
  // At the bracket that opens the deepest list (yaml-cpp's mark was the end of the outermost one).
  CHECK(e ==
        "bad.yaml:1:606: lists and mappings nest too deeply here (more than 500 levels): no scenario, "
        "pipeline or workflow nests so deep");
  // The same with the closing brackets on the next line, after brackets that open nothing: quoted, in
  // a plain scalar, in a comment.
  const std::string before = "note: 'a[[['\nother: b[0]  # [[[\n";
  CHECK(error_of(before + "name: " + std::string(600, '[') + "\n" + std::string(600, ']') + "\n")
            .starts_with("bad.yaml:3:606: "));
  // Mappings: yaml-cpp's mark, where the nesting passed the limit.
  std::string maps = before + "name: ";
  for (int i = 0; i < 600; ++i) maps += "{a: ";
  maps += "1" + std::string(600, '}') + "\n";
  CHECK(error_of(maps).starts_with("bad.yaml:3:1998: lists and mappings nest too deeply here"));
  // 400 levels parse, and get the loader's own error for the field.
  CHECK(error_of("name: " + std::string(400, '[') + std::string(400, ']') + "\n").find("nest too deeply") ==
        std::string::npos);
}

TEST_CASE("ScenarioLoader: clear_places makes two loads of one scenario from other places equal", "[core]") {
  // Every kind of place: steps, loops (workers), fan_in, speculation, kernels and their parameters, node
  // pools, DaemonSets. Loaded from another file, one line lower: every place differs.
  const std::string text = R"y(name: places
pipeline:
  steps:
    - name: shard
      parallel_for: {count: 8}
      duration: {base: 10s}
      speculation: {after: 1.5x, max: 1}
      kernel: {name: shard_stats, rows_per_gib: 1000}
    - name: merge
      after: [shard]
      fan_in: {arity: 4}
      duration: {base: 5s}
    - name: queue
      parallel_for: {count: 4, workers: 2}
      duration: {base: 1s}
cluster:
  node_pools:
    - {name: cpu, cpu: 16, memory: 64Gi, count: 2}
  daemonsets:
    - {name: logs, cpu: 100m, memory: 100Mi}
)y";
  Scenario a = load_scenario_text(text, "a.yaml");
  Scenario b = load_scenario_text("# moved down a line\n" + text, "b.yaml");
  CHECK_FALSE(a == b);
  clear_places(a);
  CHECK_FALSE(a == b);
  clear_places(b);
  CHECK(a == b);
  // A difference in a value is still one.
  Scenario c = load_scenario_text(text, "a.yaml", {"pipeline.steps[merge].fan_in.arity=2"});
  clear_places(c);
  CHECK_FALSE(a == c);
}

TEST_CASE("ScenarioLoader: lines that end in a CR alone (classic Mac OS) are lines, as YAML 1.2 says",
          "[core]") {
  const std::string lf =
      "name: s\npipeline: {steps: [{name: a, duration: {base: 5s}}]}\r\n"
      "cluster: {node_pools: [{name: p, cpu: 4, memory: 16Gi, count: 1}]}\n";
  std::string cr = lf;
  for (std::size_t i = 0; i < cr.size(); ++i)
    if (cr[i] == '\n' && (i == 0 || cr[i - 1] != '\r')) cr[i] = '\r';  // the CRLF line stays CRLF
  const Scenario a = load_scenario_text(lf, "lf.yaml"), b = load_scenario_text(cr, "cr.yaml");
  CHECK(b.pipeline.steps.size() == 1);
  CHECK(b.pipeline.steps[0].component.duration.base == a.pipeline.steps[0].component.duration.base);
  CHECK(b.cluster.node_pools[0].memory == a.cluster.node_pools[0].memory);
  // Its problems at their lines (yaml-cpp saw one line: "illegal map value" at 1:17).
  std::string bad = cr;
  bad.replace(bad.find("5s"), 2, "-1s");
  CHECK(error_of(bad) == "bad.yaml:2:47: pipeline.steps[0].duration.base: must be >= 0, got -1s");
}

TEST_CASE("ScenarioLoader: a key with no space after its colon is named where it is, with the fix",
          "[core]") {
  // "overheads:none" is one plain string to YAML; the next line's key is where yaml-cpp fails.
  CHECK(error_of("name: s\noverheads:none\npipeline: {steps: [{name: a}]}\n") ==
        "bad.yaml:2:10: YAML syntax error (illegal map value at 3:9): a key needs a space after its colon: "
        "\"overheads:none\" is one string to YAML; write \"overheads: none\"");
  CHECK(error_of("name: s\npipeline:\n  steps:\n    - name: a\n    - name: b\n      after:[a]\n"
                 "cluster: {node_pools: [{name: p, cpu: 4, memory: 16Gi, count: 1}]}\n") ==
        "bad.yaml:6:12: YAML syntax error (illegal map value at 7:8): a key needs a space after its colon: "
        "\"after:[a]\" is one string to YAML; write \"after: [a]\"");
  // Read as a key, or as a value where a mapping belongs.
  const std::string cluster = "cluster: {node_pools: [{name: p, cpu: 4, memory: 16Gi, count: 1}]}\n";
  CHECK(error_of("name: s\npipeline:\n  steps:\n    - name: a\n      duration:{base: 5s}\n" + cluster) ==
        "bad.yaml:5:7: pipeline.steps[0].duration:{base: unknown key \"duration:{base\": a key needs a space "
        "after its colon (\"duration: {base\"), else YAML reads the two as one string");
  CHECK(
      error_of("name: s\npipeline:\n  steps:\n    - name: a\n      duration:\n        base:5s\n" + cluster) ==
      "bad.yaml:6:9: pipeline.steps[0].duration: expected a mapping, got \"base:5s\" (a key needs a space "
      "after its colon: \"base: 5s\")");
  // A quoted value is the user's string as written: no hint.
  CHECK(error_of("name: s\npipeline:\n  steps:\n    - name: a\n      duration: \"base:5s\"\n" + cluster) ==
        "bad.yaml:5:17: pipeline.steps[0].duration: expected a mapping, got \"base:5s\"");
}

TEST_CASE("ScenarioLoader: orchestrator kfp-v2 over a preset has its driver pod", "[core]") {
  // `preset: none` (or kwok-testenv) has one pod per task: kfp-v2 over it kept that, with KFP's
  // controller, and refused a driver_pod beside it ("applies only with a driver pod").
  const auto load = [](const std::string& overheads) {
    return load_scenario_text("name: s\noverheads: " + overheads +
                                  "\npipeline: {steps: [{name: a}]}\n"
                                  "cluster: {node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]}\n",
                              "s.yaml")
        .overheads;
  };
  const Overheads none = load("{preset: none, orchestrator: kfp-v2}");
  CHECK(none.pods_per_task == 2);
  CHECK(none.driver_pod_duration == Duration::from_s(3));
  CHECK(none.sandbox_start == Duration::zero());  // the preset's, otherwise
  CHECK(load("{preset: none, orchestrator: kfp-v2, driver_pod: 5s}").driver_pod_duration ==
        Duration::from_s(5));
  CHECK(load("{preset: kwok-testenv, orchestrator: kfp-v2}").pods_per_task == 2);
  CHECK(load("{preset: none, orchestrator: none, pods_per_task: 2}").pods_per_task == 2);
  // The model has one driver pod at most: 3 behaved as 2, silently.
  CHECK_THROWS_WITH(
      load("{preset: none, orchestrator: kfp-v2, pods_per_task: 3}"),
      "s.yaml:2:64: overheads.pods_per_task: must be 1 (the task's pod alone) or 2 (a driver pod, "
      "then the executor pod, as KFP v2 runs a task), got 3");
  CHECK(load("{orchestrator: argo}").pods_per_task == 1);
}

TEST_CASE("loader: steps whose pods would share names in a trace are refused at the later one", "[core]") {
  const std::string rule =
      " would give their pods the same names (both have %): a pod is named by its step's path in lower case, "
      "with '-' for '_', '/' and '.', and its iteration numbers; rename one of the steps";
  const auto msg = [&](const std::string& where, const std::string& what, const std::string& example) {
    std::string r = rule;
    r.replace(r.find('%'), 1, example);
    return where + what + r;
  };
  // Case, '_' and '-'.
  CHECK(error_of(with_steps("    - {name: prep_a}\n    - {name: Prep-A}\n")) ==
        msg("bad.yaml:8:14: pipeline.steps[1].name: ", "step Prep-A and step prep_a", "prep-a-0-0"));
  // A group's '/' against a step's '-'.
  CHECK(error_of(with_steps("    - name: g\n      steps:\n        - {name: x}\n    - {name: g-x}\n")) ==
        msg("bad.yaml:10:14: pipeline.steps[1].name: ", "step g-x and step g/x", "g-x-0-0"));
  // A looped group's iteration number: outer[2]/inner[i] is outer-inner-2-i-0, as step outer-inner-2's
  // item i; outer has 3 iterations, so "outer-inner-3" meets nothing, nor "outer-inner-02" (no number
  // is written with a leading zero).
  const std::string group =
      "    - name: outer\n      parallel_for: {count: 3}\n      steps:\n"
      "        - {name: inner, parallel_for: {count: 2}}\n";
  CHECK(error_of(with_steps(group + "    - {name: outer-inner-2}\n")) ==
        msg("bad.yaml:11:14: pipeline.steps[1].name: ", "step outer-inner-2 and step outer/inner",
            "outer-inner-2-0-0"));
  // The other way round, the step first: said at the later one, the group's step.
  CHECK(error_of(with_steps("    - {name: outer-inner-2}\n" + group)) ==
        msg("bad.yaml:11:18: pipeline.steps[1].steps[0].name: ", "step outer/inner and step outer-inner-2",
            "outer-inner-2-0-0"));
  CHECK(error_of(with_steps(group + "    - {name: outer-inner-3}\n")) == "loaded");
  CHECK(error_of(with_steps(group + "    - {name: outer-inner-02}\n")) == "loaded");
  // Without a loop of its own, a step in the looped group takes the group's iteration as its item.
  CHECK(error_of(with_steps("    - name: outer\n      parallel_for: {count: 3}\n      steps:\n"
                            "        - {name: inner}\n    - {name: outer-inner}\n")) ==
        msg("bad.yaml:11:14: pipeline.steps[1].name: ", "step outer-inner and step outer/inner",
            "outer-inner-0-0"));
  // A tree fan-in's level (agg.level1) against a step of the same pod name, either way round.
  const std::string tree =
      "    - {name: shards, parallel_for: {count: 9}}\n"
      "    - {name: agg, after: [shards], fan_in: {arity: 3}}\n";
  CHECK(error_of(with_steps(tree + "    - {name: agg_level1}\n")) ==
        msg("bad.yaml:9:14: pipeline.steps[2].name: ",
            "step agg_level1 and step agg.level1 (a level of step agg's tree fan-in)", "agg-level1-0-0"));
  CHECK(error_of(with_steps("    - {name: agg_level1}\n" + tree)) ==
        msg("bad.yaml:9:36: pipeline.steps[2].fan_in: ",
            "step agg.level1 (a level of step agg's tree fan-in) and step agg_level1", "agg-level1-0-0"));
  // Names that only look alike are kept.
  CHECK(error_of(with_steps("    - {name: a__b}\n    - {name: a-b}\n    - {name: ab}\n")) == "loaded");
}
