// WfCommons instances read as scenarios (core/wfcommons_import.cpp, docs/wfcommons-import.md): what each
// field maps to, both schema versions, every executedAt form, and the exact error each kind of bad input
// gets (tests/data/wfcommons/bad/: small instances written for these tests).
#include "../../core/wfcommons_import.hpp"  // core-private: the importer and its timestamp reader

#include <filesystem>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/plan_summary.hpp>
#include <shardflow/core/scenario.hpp>

using namespace shardflow;

namespace {

const std::string kData = std::string(SHARDFLOW_SOURCE_DIR) + "/tests/data/wfcommons/";

std::string error_of_file(const std::string& name, const LoadOptions& o = {}) {
  try {
    (void)load_scenario_file(kData + name, o);
  } catch (const InputError& e) {
    std::string m = e.what();
    if (m.rfind(kData, 0) == 0) m = m.substr(kData.size());
    return m;
  }
  return "loaded";
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    (void)load_scenario_text(text, "w.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded";
}

// A WfFormat 1.4 instance: tasks with files and parents inline, machines at the top.
const std::string kV14 = R"({
  "name": "old", "schemaVersion": "1.4",
  "workflow": {
    "makespanInSeconds": 100, "executedAt": "03-23-21T06:04:36Z",
    "machines": [{"nodeName": "n1", "cpu": {"count": 2, "speed": 2000}, "memoryInBytes": 1000000}],
    "tasks": [
      {"name": "split", "type": "compute", "parents": [], "runtimeInSeconds": 4,
       "files": [{"name": "in", "sizeInBytes": 300, "link": "input"}, {"name": "p", "sizeInBytes": 20, "link": "output"}]},
      {"name": "work.1", "type": "compute", "parents": ["split"], "runtimeInSeconds": 10, "cores": 2,
       "files": [{"name": "p", "sizeInBytes": 20, "link": "input"}]},
      {"name": "work.2", "type": "compute", "parents": ["split"], "runtimeInSeconds": 6}
    ]
  }
})";

// Every field of a scenario that an import sets or the loader defaults, as text, so that two scenarios
// compare field by field (a difference shows as the first differing line).
std::string fingerprint(const Scenario& s) {
  std::ostringstream o;
  o << "name " << s.name << "\ndescription " << s.description << "\nfile " << s.file << "\nseed " << s.seed
    << "\npipeline " << s.pipeline.name << "\n";
  const auto dist = [&](const char* what, const DataSize& d) {
    o << " " << what << " " << static_cast<int>(d.dist.kind) << " " << d.dist.a << " " << d.dist.b << " "
      << d.per_item.size();
  };
  for (const Step& st : s.pipeline.steps) {
    const Component& c = st.component;
    o << "step " << st.name << " at " << st.where.str() << " after";
    for (const auto& a : st.after) o << " " << a;
    o << " deps";
    for (auto d : st.deps) o << " " << d;
    o << " loop " << st.loop.has_value() << " steps " << st.steps.size() << " par " << st.parallelism
      << " cpu " << c.resources.cpu << " mem " << c.resources.memory << " gpu " << c.resources.gpu << " base "
      << c.duration.base.ns() << " per_gib " << c.duration.per_gib.ns() << " sigma "
      << c.duration.lognormal_sigma << " straggler " << c.duration.straggler_p << "/"
      << c.duration.straggler_factor << " fail " << c.failure.p << " retries " << c.retries.max << "/"
      << c.retries.backoff.ns() << "/" << c.retries.factor << "/" << c.retries.max_backoff.ns() << " image "
      << c.image << "/" << c.image_size << " command " << c.command.size() << " kernel " << c.kernel.name
      << "/" << c.kernel.params.size() << " selector " << c.node_selector.size() << " tolerations "
      << c.tolerations.size() << " affinity " << c.preferred_node_affinity.size();
    dist("input", c.input);
    dist("output", c.output);
    o << "\n";
  }
  for (const NodePool& p : s.cluster.node_pools) {
    o << "pool " << p.name << " at " << p.where.str() << " cpu " << p.cpu << " mem " << p.memory << " gpu "
      << p.gpu << " count " << p.count << " price " << p.price_per_hour << " speed " << p.speed
      << " max_pods " << p.max_pods << " taints " << p.taints.size() << " mtbf " << p.mtbf.ns() << " spot "
      << p.spot << "/" << p.spot_discount << "/" << p.spot_mean_reclaim.ns() << " autoscaling "
      << p.autoscaling.min << "/" << p.autoscaling.max << " labels";
    for (const auto& [k, v] : p.labels) o << " " << k << "=" << v;
    o << "\n";
  }
  const SchedulerConfig& c = s.cluster.scheduler;
  o << "scheduler " << static_cast<int>(c.policy) << " " << static_cast<int>(c.fit_strategy) << " "
    << c.percentage_of_nodes_to_score << " " << c.decisions_per_second << " " << c.bind_latency.ns() << " "
    << c.initial_backoff.ns() << " " << c.max_backoff.ns() << " " << (c.score_weights == ScoreWeights{})
    << " " << (c.fit_resource_weights == FitResourceWeights{}) << " "
    << c.requested_to_capacity_ratio_shape.size() << " list_order";
  for (const auto& n : c.list_order) o << " " << n;
  o << "\nstorage " << s.cluster.storage.read_bytes_per_second << " "
    << s.cluster.storage.write_bytes_per_second;
  const Overheads& v = s.overheads;
  o << "\noverheads " << v.orchestrator << " " << v.pods_per_task << " " << v.driver_pod_duration.ns() << " "
    << v.driver_cpu << " " << v.driver_memory << " " << v.sandbox_start.ns() << " "
    << v.image_pull_bytes_per_second << " " << v.default_image_size << " " << v.serialize_image_pulls << " "
    << v.repeat_first_attempt << " " << v.preset << " " << v.control_plane.sync_period.ns() << " "
    << v.control_plane.follow_pods << "\n";
  const Plan plan = Plan::unroll(s.pipeline);
  write_summary_json(o, summarize(plan, s.pipeline));
  return o.str();
}

// LoadOptions with these sets, overlays (path, text) and --cluster.
LoadOptions with(std::vector<std::string> sets, std::vector<ScenarioFile> overlays = {},
                 std::string cluster = "") {
  LoadOptions o;
  o.sets = std::move(sets);
  o.overlays = std::move(overlays);
  o.cluster = std::move(cluster);
  return o;
}

}  // namespace

TEST_CASE("WfCommons import: the direct route and the scenario document give the same scenario",
          "[wfcommons]") {
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    INFO(path);
    const std::string text = read_scenario_file(path);
    const Scenario direct_scenario = import_wfcommons(text, path, {});
    const Scenario document_scenario = import_wfcommons(text, path, {}, true);
    const std::string direct = fingerprint(direct_scenario);
    const std::string document = fingerprint(document_scenario);
    CHECK(direct == document);
    CHECK(direct_scenario == document_scenario);  // every field, the fingerprint's and the others
    CHECK(direct.find("step ") != std::string::npos);
  }
  const std::string text = read_scenario_file(kData + "bad/good.json");
  CHECK(fingerprint(import_wfcommons(text, "good.json", {})) ==
        fingerprint(import_wfcommons(text, "good.json", {}, true)));
  CHECK(fingerprint(import_wfcommons(kV14, "old.json", {})) ==
        fingerprint(import_wfcommons(kV14, "old.json", {}, true)));
  // WfFormat 1.6 (1.5 with optional metrics) and a fractional core count (millicores), by both routes.
  std::string v16 = text;
  v16.replace(v16.find("\"1.5\""), 5, "\"1.6\"");
  v16.replace(v16.find("\"coreCount\": 1, \"machines\""), 14, "\"coreCount\": 1.25");
  v16.replace(v16.find("{\"coreCount\": 1, \"speedInMHz\""), 15, "{\"coreCount\": 2");
  for (const bool document : {false, true}) {
    const Scenario s = import_wfcommons(v16, "v16.json", {}, document);
    CHECK(s.pipeline.steps[2].component.resources.cpu == 1250);
    CHECK(s.cluster.node_pools[0].cpu == 2000);
  }
  CHECK(fingerprint(import_wfcommons(v16, "v16.json", {})) ==
        fingerprint(import_wfcommons(v16, "v16.json", {}, true)));
  // Without a name, both are named after the file.
  const std::string unnamed = R"({"workflow": {"specification": {"tasks": [{"id": "a"}]}, "execution": )"
                              R"({"tasks": [{"id": "a", "runtimeInSeconds": 1}], )"
                              R"("machines": [{"nodeName": "m1", "cpu": {"coreCount": 1}}]}}})";
  CHECK(import_wfcommons(unnamed, "dir/unnamed.json", {}).name == "unnamed");
  CHECK(import_wfcommons(unnamed, "dir/unnamed.json", {}, true).name == "unnamed");
}

// With overlays, --set or --cluster that leave the pipeline alone, the steps are built directly and only
// the name, cluster and overheads go through a scenario document: the same scenario as the whole document
// gives, field by field. Changes to the pipeline, and errors, take the whole document.
TEST_CASE("WfCommons import: cluster changes keep the direct steps and give the document's scenario",
          "[wfcommons]") {
  const std::vector<std::pair<std::string, LoadOptions>> changes = {
      {"--set count", with({"cluster.node_pools[0].count=2"})},
      {"--set cpu and the scheduler",
       with({"cluster.node_pools[0].cpu=96", "cluster.scheduler.policy=least-allocated",
             "cluster.scheduler.decisions_per_second=50"})},
      {"an overlay with overheads, a name and a seed",
       with({}, {{"pegasus.yaml",
                  "name: renamed\nseed: 9\noverheads: {orchestrator: none, sandbox_start: 2s}\n"
                  "cluster: {scheduler: {decisions_per_second: 0.5}}\n"}})},
      {"--cluster local", with({}, {}, "local")},
      {"--cluster local and a --set", with({"cluster.node_pools[local].cpu=64"}, {}, "local")},
  };
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string path = entry.path().string();
    const std::string text = read_scenario_file(path);
    for (const auto& [what, options] : changes) {
      INFO(path << ": " << what);
      WfRoute route = WfRoute::document;
      const Scenario fast = import_wfcommons(text, path, options, false, &route);
      CHECK(route == WfRoute::direct_steps);
      const Scenario whole = import_wfcommons(text, path, options, true);
      CHECK(fingerprint(fast) == fingerprint(whole));
      CHECK(fast == whole);
    }
  }
  CHECK(files == 8);
  const std::string path = kData + "seismology-chameleon-100p-001.json";
  const std::string text = read_scenario_file(path);
  SECTION("a change to the pipeline takes the whole document") {
    WfRoute route = WfRoute::direct;
    const LoadOptions options = with({"pipeline.steps[0].duration.base=7s"});
    const Scenario s = import_wfcommons(text, path, options, false, &route);
    CHECK(route == WfRoute::document);
    CHECK(s.pipeline.steps[0].component.duration.base == Duration::from_s(7));
    CHECK(s == import_wfcommons(text, path, options, true));
  }
  SECTION("an overlay's step that the workflow lacks is an error, by either route") {
    const LoadOptions options =
        with({}, {{"o.yaml", "pipeline: {steps: [{name: nope, after: [missing]}]}\n"}});
    for (const bool document : {false, true}) {
      try {
        (void)import_wfcommons(text, path, options, document);
        FAIL("loaded");
      } catch (const InputError& e) {
        const std::string m = e.what();
        INFO(m);
        CHECK(
            m.starts_with("o.yaml:1:27: pipeline.steps[0].name: the imported pipeline has no step \"nope\" "
                          "here (its steps here: "));
        CHECK(m.ends_with("); an overlay changes an imported pipeline's steps by name and adds none"));
        // An instance of many steps is named by its first ten, in its order (it listed all 101).
        CHECK(m.find("(its steps here: sG1IterDecon_ID0000001, sG1IterDecon_ID0000002, ") !=
              std::string::npos);
        CHECK(m.find(", sG1IterDecon_ID0000010, and 91 more); an overlay") != std::string::npos);
      }
    }
  }
  SECTION("errors read as the whole document's") {
    // The machine made too small for a task, a bad value, an overlay with a pipeline error.
    const std::vector<LoadOptions> bad = {
        with({"cluster.node_pools[0].cpu=0"}), with({"cluster.node_pools[0].count=-1"}),
        with({}, {{"o.yaml", "pipeline: {steps: [{name: nope, after: [missing]}]}\n"}})};
    for (const LoadOptions& options : bad) {
      std::string fast, whole;
      try {
        import_wfcommons(text, path, options);
      } catch (const InputError& e) {
        fast = e.what();
      }
      try {
        import_wfcommons(text, path, options, true);
      } catch (const InputError& e) {
        whole = e.what();
      }
      INFO(fast);
      CHECK(!fast.empty());
      CHECK(fast == whole);
    }
  }
}

TEST_CASE("WfCommons import: the tiny instance's fields, as mapped", "[wfcommons]") {
  const Scenario s = load_scenario_file(kData + "bad/good.json");
  CHECK(s.name == "tiny");
  CHECK(s.description ==
        "WfCommons instance (WfFormat 1.5); recorded makespan 40 s, executed at 2020-04-15T16:33:33Z");
  REQUIRE(s.pipeline.steps.size() == 3);
  const Component& a = s.pipeline.steps[0].component;
  CHECK(s.pipeline.steps[0].name == "a_1");
  CHECK(a.duration.base == Duration::from_ms(10'500));
  CHECK(a.input.dist.a == 1000.0);  // file "in"
  CHECK(a.output.dist.a == 500.0);  // file "mid"
  CHECK(a.resources.cpu == 1000);
  CHECK(s.pipeline.steps[1].after == std::vector<std::string>{"a_1"});
  CHECK(s.pipeline.steps[2].component.duration.base == Duration::from_ms(5'250));
  REQUIRE(s.cluster.node_pools.size() == 1);
  const NodePool& p = s.cluster.node_pools[0];
  CHECK(p.name == "m1");
  CHECK(p.cpu == 1000);
  CHECK(p.count == 1);
  CHECK(p.labels.at("wfcommons.org/speed-mhz") == "2400");
  CHECK(s.cluster.scheduler.policy == ScorePolicy::list);
  CHECK(s.cluster.scheduler.decisions_per_second == 0);
  CHECK(s.overheads.orchestrator == "none");
  CHECK(s.overheads.sandbox_start == Duration::zero());
}

TEST_CASE("WfCommons import: WfFormat 1.4 (tasks, files and machines inline)", "[wfcommons]") {
  const Scenario s = load_scenario_text(kV14, "old.json");
  REQUIRE(s.pipeline.steps.size() == 3);
  CHECK(s.pipeline.steps[1].name == "work_1");  // '.' is not allowed in a step name
  CHECK(s.pipeline.steps[1].after == std::vector<std::string>{"split"});
  CHECK(s.pipeline.steps[1].component.resources.cpu == 2000);
  CHECK(s.pipeline.steps[1].component.input.dist.a == 20.0);
  CHECK(s.pipeline.steps[0].component.input.dist.a == 300.0);
  CHECK(s.pipeline.steps[0].component.output.dist.a == 20.0);
  CHECK(s.cluster.node_pools[0].cpu == 2000);
  CHECK(s.cluster.node_pools[0].memory == 1000000);
  CHECK(s.description ==
        "WfCommons instance (WfFormat 1.4); recorded makespan 100 s, executed at 2021-03-23T06:04:36Z");
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(plan.task_count() == 3);
  CHECK(plan.edge_count() == 2);
  // Tasks with an id as well, referred to by name (1.4 refers by name; the format's migration tool
  // resolves a name first, then an id): the step is named by the id, the edges found by the name.
  std::string both = kV14;
  both.replace(both.find("{\"name\": \"split\","), 17, "{\"name\": \"split\", \"id\": \"ID01\",");
  both.replace(both.find("{\"name\": \"work.2\","), 18, "{\"name\": \"work.2\", \"id\": \"ID03\",");
  const Scenario t = load_scenario_text(both, "old.json");
  REQUIRE(t.pipeline.steps.size() == 3);
  CHECK(t.pipeline.steps[0].name == "ID01");
  CHECK(t.pipeline.steps[1].after == std::vector<std::string>{"ID01"});
  CHECK(t.pipeline.steps[2].after == std::vector<std::string>{"ID01"});
  CHECK(error_of(replace_once(both, "\"parents\": [\"split\"], \"runtimeInSeconds\": 6",
                              "\"parents\": [\"splat\"], \"runtimeInSeconds\": 6")) ==
        "w.json:11:71: workflow.tasks[2].parents[0]: unknown parent task \"splat\" (no task has this name or "
        "id)");
}

TEST_CASE("WfCommons import: every executedAt form of the published instances", "[wfcommons]") {
  CHECK(normalize_wfcommons_timestamp("2020-12-25T20:10:08+00:00") == "2020-12-25T20:10:08Z");
  CHECK(normalize_wfcommons_timestamp("20200415T183333+0000") == "2020-04-15T18:33:33Z");
  CHECK(normalize_wfcommons_timestamp("03-23-21T06:04:36Z") == "2021-03-23T06:04:36Z");
  // Offsets are applied: 00:30 at +01:00 is 23:30 of the day before, UTC (and across a year's end).
  CHECK(normalize_wfcommons_timestamp("2021-01-01T00:30:00+01:00") == "2020-12-31T23:30:00Z");
  CHECK(normalize_wfcommons_timestamp("20200229T120000-0130") == "2020-02-29T13:30:00Z");
  CHECK(normalize_wfcommons_timestamp("2020-12-25T20:10:08.123Z") == "2020-12-25T20:10:08Z");
  CHECK_FALSE(normalize_wfcommons_timestamp("2021-02-29T00:00:00Z"));  // not a leap year
  CHECK_FALSE(normalize_wfcommons_timestamp("13-01-21T00:00:00Z"));    // month 13
  CHECK_FALSE(normalize_wfcommons_timestamp("April 15th"));
  CHECK_FALSE(normalize_wfcommons_timestamp("2020-12-25T20:10:08+0"));
}

TEST_CASE("WfCommons import: bad input gets one error at file:line:col", "[wfcommons]") {
  CHECK(error_of_file("bad/truncated.json") ==
        "bad/truncated.json:9:60: invalid JSON: missing closing quote of the string that starts at line 9, "
        "column 56");
  CHECK(
      error_of_file("bad/unknown-parent.json") ==
      "bad/unknown-parent.json:8:48: workflow.specification.tasks[1].parents[0]: unknown parent task \"a_9\" "
      "(no task has this id)");
  // The loader's cycle check, at the JSON value that made the edge (a_1's child "b_2"; b_2 lists a_1 as its
  // parent too).
  CHECK(
      error_of_file("bad/cycle.json") ==
      "bad/cycle.json:7:69: pipeline.steps[1].after[0]: dependency cycle: a_1 -> b_2 -> a_1 (each step runs "
      "before the next)");
  CHECK(error_of_file("bad/negative-runtime.json") ==
        "bad/negative-runtime.json:18:43: workflow.execution.tasks[1].runtimeInSeconds: must be >= 0 (and at "
        "most 315360000 s, ten years: the simulator's horizon), got -20");
  {  // Longer than the simulator's horizon: refused here, not left unfinished by the simulation.
    std::string text = read_scenario_file(kData + "bad/negative-runtime.json");
    text.replace(text.find("-20"), 3, "4e8");
    CHECK(
        error_of(text) ==
        "w.json:18:43: workflow.execution.tasks[1].runtimeInSeconds: must be >= 0 (and at most 315360000 s, "
        "ten years: the simulator's horizon), got 400000000");
  }
  CHECK(error_of_file("bad/bad-timestamp.json") ==
        "bad/bad-timestamp.json:15:21: workflow.execution.executedAt: unrecognized timestamp \"April 15th\" "
        "(expected a form such as 2020-12-25T20:10:08+00:00, 20200415T183333+0000 or 03-23-21T06:04:36Z)");
}

TEST_CASE("WfCommons import: a misspelled workflow key is said so, not read as a PipelineSpec or a scenario",
          "[wfcommons]") {
  // With a schemaVersion (as WfCommons writes) it was taken for a KFP PipelineSpec ("unsupported
  // PipelineSpec field name"); without one, "Workflow" for a scenario (missing cluster, pipeline, ...).
  const std::string with_schema = replace_once(kV14, "\"workflow\"", "\"Workflow\"");
  CHECK(
      error_of(with_schema) ==
      "w.json:3:3: Workflow: unknown key \"Workflow\" (did you mean \"workflow\"? keys are case-sensitive)");
  CHECK(
      error_of(replace_once(with_schema, "\"schemaVersion\": \"1.4\",", "")) ==
      "w.json:3:3: Workflow: unknown key \"Workflow\" (did you mean \"workflow\"? keys are case-sensitive)");
  CHECK(error_of(replace_once(kV14, "\"workflow\"", "\"worklfow\"")) ==
        "w.json:3:3: worklfow: unknown key \"worklfow\" (did you mean \"workflow\"?)");
  // Far from it, with a schemaVersion and no PipelineSpec key: the WfCommons reader's missing key.
  CHECK(error_of(replace_once(kV14, "\"workflow\"", "\"run\"")) ==
        "w.json:1:1: missing required key \"workflow\"");
  // A PipelineSpec compiled to JSON (schemaVersion and pipelineInfo) is still read as one.
  CHECK(error_of(R"({"pipelineInfo": {"name": "p"}, "schemaVersion": "2.1.0"})").find("w.json:1:1: root:") ==
        0);
}

TEST_CASE("WfCommons import: a long dependency cycle is named in part, at the edge that closes it",
          "[wfcommons]") {
  // t_0 -> t_1 -> ... -> t_29 -> t_0: each task on a line of its own, listing its parent.
  std::string tasks, runtimes;
  for (int i = 0; i < 30; ++i) {
    const std::string id = "t_" + std::to_string(i), parent = "t_" + std::to_string((i + 29) % 30);
    tasks += std::string(i ? ",\n" : "") + R"({"id": ")" + id + R"(", "parents": [")" + parent + "\"]}";
    runtimes += std::string(i ? ", " : "") + R"({"id": ")" + id + R"(", "runtimeInSeconds": 1})";
  }
  const std::string text = "{\"workflow\": {\"specification\": {\"tasks\": [\n" + tasks +
                           "\n]}, \"execution\": {\"tasks\": [" + runtimes +
                           R"(], "machines": [{"nodeName": "m", "cpu": {"coreCount": 1}}]}}})";
  // The edge t_0 -> t_1, from t_1's parents (line 3).
  CHECK(
      error_of(text) ==
      "w.json:3:27: pipeline.steps[1].after[0]: dependency cycle: t_0 -> t_1 -> t_2 -> t_3 -> t_4 -> t_5 -> "
      "t_6 -> t_7 -> t_8 -> t_9 -> ... (and 20 more) -> t_0 (each step runs before the next)");
}

TEST_CASE("WfCommons import: schema errors at the value", "[wfcommons]") {
  CHECK(error_of("{\"workflow\": 3}") == "w.json:1:14: workflow: expected an object, got a number");
  CHECK(error_of("{\"schemaVersion\": \"1.3\", \"workflow\": {}}") ==
        "w.json:1:19: schemaVersion: shardflow reads WfFormat 1.6, 1.5 and 1.4, got \"1.3\"");
  CHECK(error_of("{\"workflow\": {}}") ==
        "w.json:1:14: workflow: expected `specification` (WfFormat 1.5) or `tasks` (WfFormat 1.4): this is "
        "not a "
        "WfCommons instance");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}}}") ==
        "w.json:1:14: workflow: missing key \"execution\": shardflow needs the recorded runtimes "
        "(execution.tasks[].runtimeInSeconds)");
  CHECK(
      error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}, \"execution\": "
               "{\"tasks\": []}}}") ==
      "w.json:1:50: workflow.specification.tasks[0].id: task \"a\" has no entry in workflow.execution.tasks "
      "(its runtimeInSeconds)");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}, "
                 "\"execution\": {\"tasks\": [{\"id\": \"a\", \"runtimeInSeconds\": 1}]}}}") ==
        "w.json:1:63: workflow.specification.tasks[1].id: task id \"a\" is used twice");
  CHECK(error_of(
            "{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}, \"execution\": {\"tasks\": "
            "[{\"id\": \"a\", \"runtimeInSeconds\": \"5\"}]}}}") ==
        "w.json:1:114: workflow.execution.tasks[0].runtimeInSeconds: expected a number, got a string");
  // JSON syntax: the offending byte's line and column.
  CHECK(
      error_of("{\"workflow\": {\n  \"tasks\": [1,,2]}}") ==
      "w.json:2:15: invalid JSON: unexpected ','; expected a value (an object, an array, a string, a number, "
      "true, false or null)");
  // A task that fits no machine after a --set: the loader's check, naming the --set that asked for more
  // than any machine has.
  LoadOptions o;
  o.sets = {"pipeline.steps[b_2].resources.cpu=2"};
  CHECK(
      error_of_file("bad/good.json", o) ==
      "--set pipeline.steps[b_2].resources.cpu=2: pipeline.steps[1].resources.cpu: step \"b_2\" asks for cpu "
      "2, memory 0, gpu 0, more than any node it may use can hold (largest: pool \"m1\" with cpu 1, memory "
      "0, "
      "gpu 0)");
}

TEST_CASE("WfCommons import: a key given twice is an error, not its first value taken", "[wfcommons]") {
  const std::string json = read_scenario_file(kData + "bad/good.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = json;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return error_of(text.replace(at, from.size(), to));
  };
  CHECK(
      with("\"runtimeInSeconds\": 10.5,", "\"runtimeInSeconds\": 10.5, \"runtimeInSeconds\": 99,") ==
      "w.json:17:49: workflow.execution.tasks[0].runtimeInSeconds: duplicate key \"runtimeInSeconds\" (first "
      "at line 17)");
  CHECK(with("    \"execution\": {",
             "    \"specification\": {\"tasks\": [{\"id\": \"z\"}]},\n    \"execution\": {") ==
        "w.json:13:5: workflow.specification: duplicate key \"specification\" (first at line 5)");
  // An object of more than 16 members (looked up by hash), and a key shardflow does not read.
  std::string members;
  for (int i = 0; i < 17; ++i) members += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  CHECK(with("{\"name\": \"a\", \"id\": \"a_1\", ",
             "{\"name\": \"a\", \"id\": \"a_1\", " + members + "\"k3\": 0, ") ==
        "w.json:7:203: workflow.specification.tasks[0].k3: duplicate key \"k3\" (first at line 7)");
}

TEST_CASE("WfCommons import: an instance without tasks gets one error, whatever else it has", "[wfcommons]") {
  const std::string machines = R"("machines": [{"nodeName": "m1", "cpu": {"coreCount": 1}}])";
  const std::string error =
      "w.json:1:42: workflow.specification.tasks: must not be empty (a workflow needs at least one task)";
  // No execution tasks either; some; no machines; and with --cluster local (the scenario document's route).
  const std::string none =
      R"({"workflow": {"specification": {"tasks": []}, "execution": {"tasks": [], )" + machines + "}}}";
  CHECK(error_of(none) == error);
  CHECK(error_of(R"({"workflow": {"specification": {"tasks": []}, "execution": {"tasks": [{"id": "a", )"
                 R"("runtimeInSeconds": 1}], )" +
                 machines + "}}}") == error);
  CHECK(error_of(R"({"workflow": {"specification": {"tasks": []}, "execution": {"tasks": []}}})") == error);
  LoadOptions local;
  local.cluster = "local";
  try {
    (void)load_scenario_text(none, "w.json", local);
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == error);
  }
  CHECK(error_of(R"({"schemaVersion": "1.4", "workflow": {"tasks": []}})") ==
        "w.json:1:48: workflow.tasks: must not be empty (a workflow needs at least one task)");
}

TEST_CASE("WfCommons import: an instance saved as UTF-16 is named as such", "[wfcommons]") {
  const std::string json = read_scenario_file(kData + "bad/good.json");
  std::string utf16 = "\xFE\xFF";
  for (const char c : json) utf16 += std::string{'\0', c};
  CHECK(error_of(utf16) == "w.json: the file is UTF-16 (its byte order mark is FE FF); save it as UTF-8");
  // It was read as a YAML scenario ("unknown key schemaVersion"): the text has no "workflow" key in ASCII.
  CHECK(error_of(utf16.substr(2)) == "w.json:1:1: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  // A NUL byte after the document (where nlohmann's parser stops reading) is one too.
  CHECK(error_of(json + std::string(1, '\0')) ==
        "w.json:25:1: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  CHECK(error_of("\xEF\xBB\xBF" + json) == "loaded");  // a UTF-8 byte order mark is fine
}

TEST_CASE("WfCommons import: a size or a count out of range names the range", "[wfcommons]") {
  const std::string json = read_scenario_file(kData + "bad/good.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = json;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return error_of(text.replace(at, from.size(), to));
  };
  CHECK(with("\"sizeInBytes\": 1000", "\"sizeInBytes\": 2000000000000000") ==
        "w.json:11:45: workflow.specification.files[0].sizeInBytes: expected an integer from 0 to 1e15, got "
        "2000000000000000");
  // The number as the file has it: 1000000000000001 is not "1e+15".
  CHECK(with("\"coreCount\": 1, \"machines\"", "\"coreCount\": 1000000000000001, \"machines\"") ==
        "w.json:19:62: workflow.execution.tasks[2].coreCount: expected a number of cores from 1 to 1e15 "
        "(fractions allowed), got 1000000000000001");
  CHECK(with("\"coreCount\": 1, \"machines\"", "\"coreCount\": 0.5, \"machines\"") ==
        "w.json:19:62: workflow.execution.tasks[2].coreCount: expected a number of cores from 1 to 1e15 "
        "(fractions allowed), got 0.5");
  CHECK(with("\"coreCount\": 1, \"machines\"", "\"coreCount\": \"2\", \"machines\"") ==
        "w.json:19:62: workflow.execution.tasks[2].coreCount: expected a number, got a string");
  CHECK(with("\"sizeInBytes\": 1000", "\"sizeInBytes\": 1.5e3") ==
        "w.json:11:45: workflow.specification.files[0].sizeInBytes: expected an integer from 0 to 1e15, got "
        "1.5e3");
  CHECK(with("[{\"nodeName\": \"m1\", \"cpu\": {\"coreCount\": 1, \"speedInMHz\": 2400}}]", "[]") ==
        "w.json:21:19: workflow.execution.machines: the instance lists no machines (execution.machines): "
        "give a "
        "cluster with --cluster FILE or --cluster local");
  CHECK(with("\"speedInMHz\": 2400", "\"speedInMHz\": 0") ==
        "w.json:21:77: workflow.execution.machines[0].cpu.speedInMHz: expected an integer from 1 to 1e15, "
        "got 0");
}

TEST_CASE("WfCommons import: --max-tasks holds on every route", "[wfcommons]") {
  // The direct route (no overlay, --set or --cluster) did not check it: 1,001 tasks simulated under a
  // limit of 5.
  LoadOptions o;
  o.max_tasks = 5;
  const std::string limit =
      "seismology-chameleon-1000p-001.json:1:1: pipeline: the pipeline unrolls to 1,001 tasks (about 1 MiB "
      "of "
      "memory to simulate); the limit is 5 (--max-tasks raises it; `explain` counts without unrolling)";
  CHECK(error_of_file("seismology-chameleon-1000p-001.json", o) == limit);
  o.sets = {"cluster.node_pools[0].count=2"};
  CHECK(error_of_file("seismology-chameleon-1000p-001.json", o) == limit);
  o.sets.clear();
  o.max_tasks = 1001;
  CHECK(error_of_file("seismology-chameleon-1000p-001.json", o) == "loaded");
}

TEST_CASE("WfCommons import: more tasks than a pipeline has steps is said at the tasks, before reading them",
          "[wfcommons]") {
  // 100,001 tasks of one line each (`{}`: not even read, the count is enough).
  std::string tasks;
  for (int i = 0; i <= 100'000; ++i) tasks += i == 0 ? "{}" : ",{}";
  const std::string text =
      R"({"workflow": {"specification": {"tasks": [)" + tasks + R"(]}, "execution": {}}})";
  CHECK(error_of(text) ==
        "w.json:1:42: workflow.specification.tasks: has 100001 tasks: shardflow makes a step of each task, "
        "and a "
        "pipeline has at most 100000 steps");
  CHECK(error_of(R"({"schemaVersion": "1.4", "workflow": {"tasks": [)" + tasks + "]}}") ==
        "w.json:1:48: workflow.tasks: has 100001 tasks: shardflow makes a step of each task, and a pipeline "
        "has at "
        "most 100000 steps");
}

TEST_CASE("WfCommons import: tasks whose pods would share names are refused at the later task",
          "[wfcommons]") {
  // Ids that differ in '-' and '_' only: the steps keep their names, their pods would not be told apart.
  const std::string text =
      replace_once(replace_once(kV14, "\"work.1\"", "\"work-1\""), "\"work.2\"", "\"work_1\"");
  CHECK(error_of(text) ==
        "w.json:11:16: pipeline.steps[2].name: step work_1 and step work-1 would give their pods the same "
        "names "
        "(both have work-1-0-0): a pod is named by its step's path in lower case, with '-' for '_', '/' and "
        "'.', "
        "and its iteration numbers; rename one of the steps");
}
