// The named presets of the cluster reader (core/cluster_reader.cpp): each has the values
// docs/scenario-format.md documents ("Overheads", "Control-plane latencies", "Overhead presets", the
// scheduler's defaults), the structs' own defaults are the "switched off" presets, and loading a file
// gives the preset it asks for.
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/scenario.hpp>
#include <shardflow/core/units.hpp>

#include "core/cluster_reader.hpp"  // core-private

using namespace shardflow;
using namespace shardflow::detail;

namespace {

// Field by field (the structs have no operator==): a message names the field that differs.
void check_same(const ControlPlane& a, const ControlPlane& b) {
  CHECK(a.sync_period == b.sync_period);
  CHECK(a.scope == b.scope);
  CHECK(a.create_batch == b.create_batch);
  CHECK(a.max_creates_per_sync == b.max_creates_per_sync);
  CHECK(a.failure_backoff == b.failure_backoff);
  CHECK(a.max_failure_backoff == b.max_failure_backoff);
  CHECK(a.follow_pods == b.follow_pods);
  CHECK(a.sync_latency == b.sync_latency);
  CHECK(a.complete_latency == b.complete_latency);
  CHECK(a.timestamp_resolution == b.timestamp_resolution);
  CHECK(a.clock_phase == b.clock_phase);
}

void check_same(const Overheads& a, const Overheads& b) {
  CHECK(a.orchestrator == b.orchestrator);
  CHECK(a.pods_per_task == b.pods_per_task);
  CHECK(a.driver_pod_duration == b.driver_pod_duration);
  CHECK(a.driver_cpu == b.driver_cpu);
  CHECK(a.driver_memory == b.driver_memory);
  CHECK(a.sandbox_start == b.sandbox_start);
  CHECK(a.image_pull_bytes_per_second == b.image_pull_bytes_per_second);
  CHECK(a.default_image_size == b.default_image_size);
  CHECK(a.serialize_image_pulls == b.serialize_image_pulls);
  CHECK(a.repeat_first_attempt == b.repeat_first_attempt);
  CHECK(a.preset == b.preset);
  check_same(a.control_plane, b.control_plane);
}

void check_same(const SchedulerConfig& a, const SchedulerConfig& b) {
  CHECK(a.policy == b.policy);
  CHECK(a.percentage_of_nodes_to_score == b.percentage_of_nodes_to_score);
  CHECK(a.decisions_per_second == b.decisions_per_second);
  CHECK(a.bind_latency == b.bind_latency);
  CHECK(a.initial_backoff == b.initial_backoff);
  CHECK(a.max_backoff == b.max_backoff);
  CHECK(a.fit_strategy == b.fit_strategy);
  CHECK(a.score_weights == b.score_weights);
  CHECK(a.fit_resource_weights == b.fit_resource_weights);
  CHECK(a.requested_to_capacity_ratio_shape == b.requested_to_capacity_ratio_shape);
}

Scenario load_with(const std::string& overheads) {
  return load_scenario_text(
      "name: t\n"
      "pipeline: {steps: [{name: a}]}\n"
      "cluster: {node_pools: [{name: p, cpu: 4, memory: 8Gi, count: 1}]}\n" +
          overheads,
      "presets.yaml");
}

}  // namespace

TEST_CASE("Presets: the control planes have the documented values", "[core]") {
  const ControlPlane job = indexed_job_control_plane();
  CHECK(job.sync_period == Duration::from_s(1));
  CHECK(job.scope == ControlPlane::Scope::step);
  CHECK(job.create_batch == Duration::from_ms(5));
  CHECK(job.max_creates_per_sync == 500);
  CHECK(job.failure_backoff == Duration::from_s(10));
  CHECK(job.max_failure_backoff == Duration::from_s(600));
  CHECK_FALSE(job.follow_pods);

  const ControlPlane argo = argo_control_plane();
  CHECK(argo.sync_period == Duration::from_s(10));
  CHECK(argo.scope == ControlPlane::Scope::run);
  CHECK(argo.create_batch == Duration::zero());
  CHECK(argo.max_creates_per_sync == 0);
  CHECK(argo.failure_backoff == Duration::zero());
  CHECK(argo.max_failure_backoff == Duration::zero());
  CHECK_FALSE(argo.follow_pods);

  check_same(control_plane_for("indexed-job"), job);
  check_same(control_plane_for("argo"), argo);
  check_same(control_plane_for("kfp-v2"), argo);  // KFP v2 runs on Argo
  check_same(control_plane_for("none"), ControlPlane{});
  CHECK_FALSE(ControlPlane{}.enabled());  // the struct's defaults: no controller
}

TEST_CASE("Presets: the overheads have the documented values", "[core]") {
  const Overheads kfp = kfp_v2_overheads();
  CHECK(kfp.orchestrator == "kfp-v2");
  CHECK(kfp.pods_per_task == 2);
  CHECK(kfp.driver_pod_duration == Duration::from_s(3));
  CHECK(kfp.driver_cpu == 100);
  CHECK(kfp.driver_memory == 128 * kMiB);
  CHECK(kfp.sandbox_start == Duration::from_s(1));
  CHECK(kfp.image_pull_bytes_per_second == 100.0 * 1024 * 1024);
  CHECK(kfp.default_image_size == 1024LL * 1024 * 1024);
  CHECK(kfp.serialize_image_pulls);
  CHECK_FALSE(kfp.repeat_first_attempt);
  CHECK(kfp.preset.empty());
  check_same(kfp.control_plane, argo_control_plane());

  const Overheads kwok = kwok_testenv_overheads();
  CHECK(kwok.preset == "kwok-testenv");
  CHECK(kwok.orchestrator == "indexed-job");
  CHECK(kwok.pods_per_task == 1);
  CHECK(kwok.driver_pod_duration == Duration::zero());
  CHECK(kwok.sandbox_start == Duration::from_ms(15));
  CHECK(kwok.image_pull_bytes_per_second == 0);
  CHECK(kwok.default_image_size == 0);
  CHECK(kwok.repeat_first_attempt);
  ControlPlane followed = indexed_job_control_plane();
  followed.follow_pods = true;
  check_same(kwok.control_plane, followed);

  const Overheads none = no_overheads();
  CHECK(none.orchestrator == "none");
  CHECK(none.pods_per_task == 1);
  CHECK(none.driver_pod_duration == Duration::zero());
  CHECK(none.sandbox_start == Duration::zero());
  CHECK(none.image_pull_bytes_per_second == 0);
  CHECK(none.default_image_size == 0);
  check_same(none.control_plane, ControlPlane{});
}

TEST_CASE("Presets: the schedulers have the documented values", "[core]") {
  CHECK(default_scheduler().decisions_per_second == 100);
  CHECK(default_scheduler().bind_latency == Duration::from_ms(20));
  CHECK(kwok_testenv_scheduler().decisions_per_second == 500);
  CHECK(kwok_testenv_scheduler().bind_latency == Duration::from_ms(10));
  CHECK(free_scheduler().decisions_per_second == 0);
  CHECK(free_scheduler().bind_latency == Duration::zero());
  // The presets change the scheduler's costs only: everything else is kube-scheduler's default.
  for (SchedulerConfig s : {default_scheduler(), kwok_testenv_scheduler()}) {
    s.decisions_per_second = 0;
    s.bind_latency = Duration::zero();
    check_same(s, free_scheduler());
  }
  CHECK(free_scheduler().initial_backoff == Duration::from_s(1));  // podInitialBackoffSeconds
  CHECK(free_scheduler().max_backoff == Duration::from_s(10));     // podMaxBackoffSeconds
}

TEST_CASE("Presets: the structs' defaults are the switched-off presets", "[core]") {
  check_same(Overheads{}, no_overheads());
  check_same(SchedulerConfig{}, free_scheduler());
  check_same(ControlPlane{}, control_plane_for("none"));
}

TEST_CASE("Presets: a scenario file gets the preset it asks for", "[core]") {
  SECTION("no overheads key: KFP v2 and the default scheduler") {
    const Scenario s = load_with("");
    check_same(s.overheads, kfp_v2_overheads());
    check_same(s.cluster.scheduler, default_scheduler());
  }
  SECTION("overheads: none: everything off and a free scheduler") {
    const Scenario s = load_with("overheads: none\n");
    check_same(s.overheads, no_overheads());
    check_same(s.cluster.scheduler, free_scheduler());
  }
  SECTION("overheads.preset: none: overheads: none with keys over it, and a free scheduler") {
    const Scenario s = load_with("overheads: {preset: none, sandbox_start: 2s}\n");
    Overheads want = no_overheads();
    want.sandbox_start = Duration::from_s(2);
    check_same(s.overheads, want);
    check_same(s.cluster.scheduler, free_scheduler());
    check_same(load_with("overheads: {preset: none}\n").overheads, load_with("overheads: none\n").overheads);
  }
  SECTION("overheads.preset: kwok-testenv") {
    const Scenario s = load_with("overheads: {preset: kwok-testenv}\n");
    check_same(s.overheads, kwok_testenv_overheads());
    check_same(s.cluster.scheduler, kwok_testenv_scheduler());
  }
  SECTION("an orchestrator brings its control plane") {
    check_same(load_with("overheads: {orchestrator: indexed-job}\n").overheads.control_plane,
               indexed_job_control_plane());
    check_same(load_with("overheads: {orchestrator: argo}\n").overheads.control_plane, argo_control_plane());
    check_same(load_with("overheads: {orchestrator: none}\n").overheads.control_plane, ControlPlane{});
  }
}
