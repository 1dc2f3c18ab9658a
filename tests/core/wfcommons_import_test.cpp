// WfCommons instances read as scenarios (core/wfcommons_import.cpp, docs/wfcommons-import.md): what each
// field maps to, both schema versions, every executedAt form, and the exact error each kind of bad input
// gets (tests/data/wfcommons/bad/: small instances written for these tests).
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>

#include "wfcommons_import.hpp"

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

}  // namespace

TEST_CASE("WfCommons import: the tiny instance's fields, as mapped", "[wfcommons]") {
  const Scenario s = load_scenario_file(kData + "bad/good.json");
  CHECK(s.name == "tiny");
  CHECK(s.description == "WfCommons instance (WfFormat 1.5); recorded makespan 40 s, executed at 2020-04-15T16:33:33Z");
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
  CHECK(s.description == "WfCommons instance (WfFormat 1.4); recorded makespan 100 s, executed at 2021-03-23T06:04:36Z");
  const Plan plan = Plan::unroll(s.pipeline);
  CHECK(plan.task_count() == 3);
  CHECK(plan.edge_count() == 2);
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
        "bad/truncated.json:9:60: invalid JSON: syntax error while parsing object key - invalid string: missing "
        "closing quote; last read: '\"chi'; expected string literal");
  CHECK(error_of_file("bad/unknown-parent.json") ==
        "bad/unknown-parent.json:8:48: workflow.specification.tasks[1].parents[0]: unknown parent task \"a_9\" "
        "(no task has this id)");
  // The loader's cycle check, at the JSON value that made the edge (a_1's child "b_2"; b_2 lists a_1 as its
  // parent too).
  CHECK(error_of_file("bad/cycle.json") ==
        "bad/cycle.json:7:69: pipeline.steps[1].after[0]: dependency cycle: a_1 -> b_2 -> a_1 (each step runs "
        "before the next)");
  CHECK(error_of_file("bad/negative-runtime.json") ==
        "bad/negative-runtime.json:18:43: workflow.execution.tasks[1].runtimeInSeconds: must be >= 0 (and at most "
        "1e9 s), got -20");
  CHECK(error_of_file("bad/bad-timestamp.json") ==
        "bad/bad-timestamp.json:15:21: workflow.execution.executedAt: unrecognized timestamp \"April 15th\" "
        "(expected a form such as 2020-12-25T20:10:08+00:00, 20200415T183333+0000 or 03-23-21T06:04:36Z)");
}

TEST_CASE("WfCommons import: schema errors at the value", "[wfcommons]") {
  CHECK(error_of("{\"workflow\": 3}") == "w.json:1:14: workflow: expected an object, got a number");
  CHECK(error_of("{\"schemaVersion\": \"1.3\", \"workflow\": {}}") ==
        "w.json:1:19: schemaVersion: shardflow reads WfFormat 1.5 and 1.4, got \"1.3\"");
  CHECK(error_of("{\"workflow\": {}}") ==
        "w.json:1:14: workflow: expected `specification` (WfFormat 1.5) or `tasks` (WfFormat 1.4): this is not a "
        "WfCommons instance");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}}}") ==
        "w.json:1:14: workflow: missing key \"execution\": shardflow needs the recorded runtimes "
        "(execution.tasks[].runtimeInSeconds)");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}, \"execution\": {\"tasks\": []}}}") ==
        "w.json:1:52: workflow.specification.tasks[0].id: task \"a\" has no entry in workflow.execution.tasks "
        "(its runtimeInSeconds)");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}}}") ==
        "w.json:1:66: workflow.specification.tasks[1].id: task id \"a\" is used twice");
  CHECK(error_of("{\"workflow\": {\"specification\": {\"tasks\": [{\"id\": \"a\"}]}, \"execution\": {\"tasks\": "
                 "[{\"id\": \"a\", \"runtimeInSeconds\": \"5\"}]}}}") ==
        "w.json:1:115: workflow.execution.tasks[0].runtimeInSeconds: expected a number, got a string");
  // JSON syntax: the offending byte's line and column.
  CHECK(error_of("{\"workflow\": {\n  \"tasks\": [1,,2]}}") ==
        "w.json:2:15: invalid JSON: syntax error while parsing value - unexpected ','; expected '[', '{', or "
        "literal");
  // A task that fits no machine after a --set: the loader's check, at the task's place in the JSON.
  LoadOptions o;
  o.sets = {"pipeline.steps[b_2].resources.cpu=2"};
  CHECK(error_of_file("bad/good.json", o).rfind("--set pipeline.steps[b_2].resources.cpu=2: ", 0) == 0);
}
