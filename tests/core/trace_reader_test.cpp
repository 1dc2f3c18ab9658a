#include <functional>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/trace.hpp>

using namespace shardflow;

namespace {

Trace sample_trace() {
  Trace t;
  t.backend = "local";
  t.scenario = "tiny \"one\"";
  t.seed = 18446744073709551615ull;
  t.steps = {"prep", "grp/train"};
  t.tasks_failed = 1;
  NodeRecord n{"host",          "local", 2000, 8 * kGiB, 0, 0.1, Duration::zero(), Duration::from_s(9),
               Duration::zero()};
  t.nodes = {n};
  AttemptRecord a;
  a.task = 0;
  a.submitted = Duration::zero();
  a.scheduled = Duration::from_ns(5);
  a.started = Duration::from_ns(120'000);
  a.finished = Duration::from_ms(1500);
  a.node = 0;
  a.output_write = Duration::from_ms(3);
  AttemptRecord failed = a;
  failed.task = 1;
  failed.step = 1;
  failed.outcome = Outcome::failed;
  failed.error = 0;
  failed.pod = 0;
  AttemptRecord never = a;
  never.task = 2;
  never.item = 4;
  never.node = -1;
  never.scheduled = kNever;
  never.started = kNever;
  never.outcome = Outcome::cancelled;
  t.attempts = {a, failed, never};
  t.errors = {"kernel shard_stats: bad row 7, \"x\"\nat line 3"};
  t.pod_names = {"grp-train-7xk2q"};
  t.pod_prefixes = {"prep-", "grp-train-"};
  return t;
}

std::string json(const Trace& t) {
  std::ostringstream out;
  write_trace_json(out, t);
  return out.str();
}

std::string read_error(const std::string& text) {
  std::istringstream in(text);
  try {
    read_trace_json(in, "run/trace.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// The sample trace's JSON with `from` replaced by `to` (once).
std::string edited(const std::string& from, const std::string& to) {
  std::string s = json(sample_trace());
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("Trace: an attempt's error is written only when it has one", "[core][trace]") {
  const Trace t = sample_trace();
  const std::string j = json(t);
  CHECK(
      j.find("\"pod\": \"grp-train-7xk2q\", \"error\": \"kernel shard_stats: bad row 7, \\\"x\\\"\\nat line "
             "3\"}") != std::string::npos);
  CHECK(j.find("\"error\"") == j.rfind("\"error\""));  // once
  std::ostringstream csv;
  write_trace_csv(csv, t);
  CHECK(csv.str() ==
        "task,step,item,attempt,node,submitted_s,scheduled_s,started_s,finished_s,outcome,image_pull_s,"
        "input_read_s,output_write_s,pod,error\n"
        "0,prep,0,0,host,0.000000000,0.000000005,0.000120000,1.500000000,succeeded,0.000000000,0.000000000,"
        "0.003000000,prep-0-0,\n"
        "1,grp/train,0,0,host,0.000000000,0.000000005,0.000120000,1.500000000,failed,0.000000000,0.000000000,"
        "0.003000000,grp-train-7xk2q,\"kernel shard_stats: bad row 7, \"\"x\"\"\nat line 3\"\n"
        "2,prep,4,0,,0.000000000,,,1.500000000,cancelled,0.000000000,0.000000000,0.003000000,prep-4-0,\n");
}

TEST_CASE("Trace: read_trace_json reads what write_trace_json writes", "[core][trace]") {
  const Trace t = sample_trace();
  std::istringstream in(json(t));
  const Trace back = read_trace_json(in, "x.json");
  CHECK(json(back) == json(t));
  CHECK(back.seed == 18446744073709551615ull);
  CHECK(back.tasks_failed == 1);
  REQUIRE(back.attempts.size() == 3);
  CHECK(back.attempts[1].outcome == Outcome::failed);
  CHECK(back.error_text(back.attempts[1]) == t.errors[0]);
  CHECK(back.error_text(back.attempts[0]).empty());
  CHECK(back.attempts[2].started == kNever);
  CHECK(back.attempts[2].node == -1);
  CHECK(back.pod_name(back.attempts[2]) == "prep-4-0");  // stored per attempt once read
  CHECK(back.pod_names.size() == 3);
  CHECK(back.nodes[0].memory == 8 * kGiB);
  CHECK(back.nodes[0].price_per_hour == 0.1);
}

TEST_CASE("Trace: read_trace_json names the file and the field of a bad trace", "[core][trace]") {
  CHECK(read_error("") ==
        "run/trace.json:1:1: not valid JSON: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
  CHECK(read_error("{\n  \"format\": shardflow}") ==
        "run/trace.json:2:13: not valid JSON: syntax error while parsing value - invalid literal; last read: "
        "'\"format\": s'");
  CHECK(read_error("[1]") == "run/trace.json: the top level: expected an object, got [1]");
  CHECK(read_error(edited("\"format\": \"shardflow-trace\"", "\"format\": \"csv\"")) ==
        "run/trace.json: format: expected \"shardflow-trace\", got \"csv\"");
  CHECK(read_error(edited("\"version\": 1", "\"version\": 2")) ==
        "run/trace.json: version: this shardflow reads version 1, got 2");
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": -1")) ==
        "run/trace.json: seed: expected an integer from 0 to 18446744073709551615, got -1");
  CHECK(read_error(edited("\"steps\": [\"prep\", ", "\"steps\": [7, ")) ==
        "run/trace.json: steps[0]: expected a string, got 7");
  CHECK(read_error(edited("\"cpu_milli\": 2000, ", "")) == "run/trace.json: nodes[0].cpu_milli: missing");
  CHECK(
      read_error(edited("\"task\": 2, \"step\": 0, \"item\": 4, \"attempt\": 0, \"node\": -1, \"submitted\": "
                        "0, \"scheduled\": -1, \"started\": -1",
                        "\"task\": 2, \"step\": 0, \"item\": 4, \"attempt\": 0, \"node\": -1, \"submitted\": "
                        "0, \"scheduled\": -1, \"started\": \"soon\"")) ==
      "run/trace.json: attempts[2].started: expected an integer, got \"soon\"");
  CHECK(read_error(edited("\"started\": 120000, ", "")) == "run/trace.json: attempts[0].started: missing");
  CHECK(read_error(edited("\"started\": 120000", "\"started\": -2")) ==
        "run/trace.json: attempts[0].started: expected an integer from -1 to 9223372036854775807, got -2");
  CHECK(read_error(edited("\"started\": 120000", "\"started\": 1.5")) ==
        "run/trace.json: attempts[0].started: expected an integer, got 1.5");
  CHECK(read_error(edited("\"task\": 1, \"step\": 1", "\"task\": 1, \"step\": 2")) ==
        "run/trace.json: attempts[1].step: 2 is not an index into steps (2 of them)");
  CHECK(read_error(edited("\"node\": 0", "\"node\": 1")) ==
        "run/trace.json: attempts[0].node: 1 is not an index into nodes (1 of them)");
  CHECK(read_error(edited("\"outcome\": \"failed\"", "\"outcome\": \"crashed\"")) ==
        "run/trace.json: attempts[1].outcome: expected succeeded, failed, evicted or cancelled, got "
        "\"crashed\"");
  CHECK(read_error(edited("\"error\": \"kernel", "\"error\": [\"kernel\"], \"x\": \"")) ==
        "run/trace.json: attempts[1].error: expected a string, got [\"kernel\"]");
}
