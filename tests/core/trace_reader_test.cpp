#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/trace.hpp>

#include "text_place.hpp"

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
        "task,step,item,attempt,node,submitted_s,scheduled_s,started_s,finished_s,outcome,kind,image_pull_s,"
        "input_read_s,output_write_s,pod,error\n"
        "0,prep,0,0,host,0.000000000,0.000000005,0.000120000,1.500000000,succeeded,first,0.000000000,"
        "0.000000000,0.003000000,prep-0-0,\n"
        "1,grp/train,0,0,host,0.000000000,0.000000005,0.000120000,1.500000000,failed,first,0.000000000,"
        "0.000000000,0.003000000,grp-train-7xk2q,\"kernel shard_stats: bad row 7, \"\"x\"\"\nat line 3\"\n"
        "2,prep,4,0,,0.000000000,,,1.500000000,cancelled,first,0.000000000,0.000000000,0.003000000,"
        "prep-4-0,\n");
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
  // A run that stopped with tasks unfinished, and one whose failure left tasks unrun: kept, so that a
  // report rebuilt from the files says what the run's own did.
  Trace stopped = sample_trace();
  stopped.tasks_failed = 3;
  stopped.tasks_unfinished = 2;
  stopped.tasks_waiting = 1;
  stopped.stopped_early = "every node failed";
  stopped.tasks_not_run = {7, 9};
  const std::string text = json(stopped);
  CHECK(
      text.find("\n  \"tasks_unfinished\": 2, \"tasks_waiting\": 1, \"stopped_early\": \"every node failed\""
                ",\n  \"tasks_not_run\": [7, 9]") != std::string::npos);
  std::istringstream again(text);
  const Trace read = read_trace_json(again, "x.json");
  CHECK(read.tasks_unfinished == 2);
  CHECK(read.tasks_waiting == 1);
  CHECK(read.stopped_early == "every node failed");
  CHECK(read.tasks_not_run == std::vector<TaskId>{7, 9});
  CHECK(json(read) == text);
  CHECK(json(t).find("tasks_unfinished") == std::string::npos);  // none: as before they were written
}

TEST_CASE("Trace: trace_field_location finds a field of a trace read before, by its name", "[core][trace]") {
  // A trace as write_trace_json writes it; the places expected are found in its text.
  const std::string text = json(sample_trace());
  const auto place = [&](std::size_t offset) { return "x.json:" + testing::line_col(text, offset); };
  const auto at = [&](std::string_view field) {
    std::istringstream in(text);
    return trace_field_location(in, "x.json", field).str();
  };
  CHECK(at("steps") == place(text.find("\"steps\": ") + 9));
  const std::size_t second = text.find("{\"task\"", text.find("{\"task\"") + 1);
  CHECK(at("attempts[1].task") == place(second + 9));
  CHECK(at("attempts[1]") == place(second));
  CHECK(at("nodes[0].pool") == place(text.find("\"pool\": ") + 8));
  // No such field, index or file content: the file alone.
  CHECK(at("attempts[3].task") == "x.json");
  CHECK(at("attempts[1].nothing") == "x.json");
  CHECK(at("attempts[x]") == "x.json");
  CHECK(at("steps.name") == "x.json");     // a member of an array
  CHECK(at("steps[0].name") == "x.json");  // a member of a string
  std::istringstream bad("{not json");
  CHECK(trace_field_location(bad, "x.json", "steps").str() == "x.json");
}

TEST_CASE("Trace: read_trace_json names the file and the field of a bad trace", "[core][trace]") {
  CHECK(read_error("") ==
        "run/trace.json:1:1: not valid JSON: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
  CHECK(read_error("{\n  \"format\": shardflow}") ==
        "run/trace.json:2:13: not valid JSON: syntax error while parsing value - invalid literal; last read: "
        "'\"format\": s'");
  CHECK(read_error("[1]") == "run/trace.json:1:1: the top level: expected an object, got [1]");
  // A NUL byte (a file cut short by a crash, or saved as UTF-16) read as the end of the input.
  CHECK(read_error(edited("\"version\": 1", std::string("\"version\": 1\0", 13))) ==
        "run/trace.json:3:15: the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  CHECK(read_error("\xFF\xFE{") ==
        "run/trace.json: the file is UTF-16 (its byte order mark is FF FE); save it as UTF-8");
  CHECK(read_error(edited("\"format\": \"shardflow-trace\"", "\"format\": \"csv\"")) ==
        "run/trace.json:2:13: format: expected \"shardflow-trace\", got \"csv\"");
  CHECK(read_error(edited("\"version\": 1", "\"version\": 2")) ==
        "run/trace.json:3:14: version: this shardflow reads version 1, got 2");
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": -1")) ==
        "run/trace.json:6:11: seed: expected an integer from 0 to 18446744073709551615, got -1");
  CHECK(read_error(edited("\"steps\": [\"prep\", ", "\"steps\": [7, ")) ==
        "run/trace.json:9:13: steps[0]: expected a string, got 7");
  CHECK(read_error(edited("\"cpu_milli\": 2000, ", "")) ==
        "run/trace.json:11:5: nodes[0].cpu_milli: missing");
  CHECK(
      read_error(edited("\"task\": 2, \"step\": 0, \"item\": 4, \"attempt\": 0, \"node\": -1, \"submitted\": "
                        "0, \"scheduled\": -1, \"started\": -1",
                        "\"task\": 2, \"step\": 0, \"item\": 4, \"attempt\": 0, \"node\": -1, \"submitted\": "
                        "0, \"scheduled\": -1, \"started\": \"soon\"")) ==
      "run/trace.json:16:109: attempts[2].started: expected an integer, got \"soon\"");
  CHECK(read_error(edited("\"started\": 120000, ", "")) ==
        "run/trace.json:14:5: attempts[0].started: missing");
  CHECK(read_error(edited("\"started\": 120000", "\"started\": -2")) ==
        "run/trace.json:14:107: attempts[0].started: expected an integer from -1 to 9223372036854775807, got "
        "-2");
  CHECK(read_error(edited("\"started\": 120000", "\"started\": 1.5")) ==
        "run/trace.json:14:107: attempts[0].started: expected an integer, got 1.5");
  // An attempt that ends before it started (an edited trace): refused at `finished`.
  {
    const std::string text = edited("\"finished\": 1500000000", "\"finished\": 10");
    CHECK(read_error(text) ==
          "run/trace.json:" + testing::line_col(text, text.find("10, \"outcome\"")) +
              ": attempts[0].finished: ends before the attempt started (started 120000 ns), "
              "got 10");
    // Its output write (3 ms) the whole of it: fine; longer than it ran, or no end at all: refused.
    CHECK(read_error(edited("\"finished\": 1500000000", "\"finished\": 3120000")) == "no error");
    const std::string longer = edited("\"finished\": 1500000000", "\"finished\": 120000");
    CHECK(read_error(longer) ==
          "run/trace.json:" + testing::line_col(longer, longer.find("3000000", longer.find("output_write"))) +
              ": attempts[0].output_write: is longer than the attempt ran (started 120000 "
              "ns, finished 120000 ns), got 3000000");
    const std::string never = edited("\"finished\": 1500000000", "\"finished\": -1");
    CHECK(read_error(never) ==
          "run/trace.json:" + testing::line_col(never, never.find("-1, \"outcome\"")) +
              ": attempts[0].finished: an attempt always ends: finished is when, whatever "
              "its outcome, got -1");
  }
  // An attempt that never ended (the clock's last value), a node down before it was up or billed, a negative
  // price: refused where they are.
  {
    const std::string never = edited("\"finished\": 1500000000", "\"finished\": 9223372036854775807");
    CHECK(read_error(never) ==
          "run/trace.json:" + testing::line_col(never, never.find("9223372036854775807")) +
              ": attempts[0].finished: an attempt always ends: finished is when, whatever its "
              "outcome, got 9223372036854775807");
    const std::string late = edited("\"up\": 0", "\"up\": 10000000000");
    CHECK(read_error(late) ==
          "run/trace.json:" + testing::line_col(late, late.find("9000000000")) +
              ": nodes[0].down: is before the node was up (up 10000000000 ns), got 9000000000");
    const std::string billed = edited("\"billed_from\": 0", "\"billed_from\": 9000000001");
    CHECK(read_error(billed) ==
          "run/trace.json:" + testing::line_col(billed, billed.find("9000000000")) +
              ": nodes[0].down: is before the node was billed (billed_from 9000000001 ns), got 9000000000");
    const std::string price = edited("\"price_per_hour\": 0.1", "\"price_per_hour\": -0.1");
    CHECK(read_error(price) == "run/trace.json:" + testing::line_col(price, price.find("-0.1")) +
                                   ": nodes[0].price_per_hour: must be at least 0, got -0.1");
  }
  CHECK(read_error(edited("\"task\": 1, \"step\": 1", "\"task\": 1, \"step\": 2")) ==
        "run/trace.json:15:25: attempts[1].step: 2 is not an index into steps (2 of them)");
  CHECK(read_error(edited("\"node\": 0", "\"node\": 1")) ==
        "run/trace.json:14:61: attempts[0].node: 1 is not an index into nodes (1 of them)");
  CHECK(read_error(edited("\"outcome\": \"failed\"", "\"outcome\": \"crashed\"")) ==
        "run/trace.json:15:150: attempts[1].outcome: expected succeeded, failed, evicted or cancelled, got "
        "\"crashed\"");
  CHECK(read_error(edited("\"error\": \"kernel", "\"error\": [\"kernel\"], \"x\": \"")) ==
        "run/trace.json:15:271: attempts[1].error: expected a string, got [\"kernel\"]");
  // A key given twice is read at its last occurrence (as nlohmann keeps it), and named there: column 42
  // is the second "format"'s value (the place was once the first one's, column 13).
  CHECK(read_error(
            edited("\"format\": \"shardflow-trace\"", "\"format\": \"shardflow-trace\", \"format\": 7")) ==
        "run/trace.json:2:42: format: expected a string, got 7");
  CHECK(read_error(edited("\"version\": 1", "\"version\": 2, \"version\": 1.0")) == "no error");
  // A number too large for a double is bad input at its place (it was nlohmann's out_of_range, exit 1).
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": 1e400")) ==
        "run/trace.json:6:11: invalid JSON: number 1e400 is too large for a double (overflow)");
  // Integers: unsigned unless written with '-' ("-0" too), exact to 64 bits; a value in a message is
  // nlohmann's dump of it.
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": -0")) ==
        "run/trace.json:6:11: seed: expected an integer from 0 to 18446744073709551615, got 0");
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": 18446744073709551616")) ==
        "run/trace.json:6:11: seed: expected an integer from 0 to 18446744073709551615, got "
        "1.8446744073709552e+19");
  CHECK(read_error(edited("\"seed\": 18446744073709551615", "\"seed\": {\"b\": 1E2, \"a\": \"\\u00e9\"}")) ==
        "run/trace.json:6:11: seed: expected an integer from 0 to 18446744073709551615, got "
        "{\"a\":\"\u00e9\",\"b\":100.0}");
}

TEST_CASE("Trace: every attempt kind is written, read back and written again the same", "[core][trace]") {
  Trace t = sample_trace();
  // Task 0: its first attempt was cancelled, a backup (1) won; task 1: evicted, replaced (1), failed,
  // retried (2).
  t.attempts[0].outcome = Outcome::cancelled;
  AttemptRecord backup = t.attempts[0];
  backup.attempt = 1;
  backup.kind = AttemptKind::backup;
  backup.outcome = Outcome::succeeded;
  t.attempts[1].outcome = Outcome::evicted;
  t.attempts[1].error = kNoError;
  AttemptRecord replacement = t.attempts[1];
  replacement.attempt = 1;
  replacement.kind = AttemptKind::replacement;
  replacement.outcome = Outcome::failed;
  replacement.pod = kNoPod;
  AttemptRecord retry = replacement;
  retry.attempt = 2;
  retry.kind = AttemptKind::retry;
  retry.outcome = Outcome::succeeded;
  t.attempts = {t.attempts[0], backup, t.attempts[1], replacement, retry, t.attempts[2]};
  const std::string written = json(t);
  CHECK(written.find("\"attempt\": 1, \"node\": 0, \"submitted\": 0, \"scheduled\": 5, \"started\": 120000, "
                     "\"finished\": 1500000000, \"outcome\": \"succeeded\", \"kind\": \"backup\"") !=
        std::string::npos);
  std::istringstream in(written);
  const Trace back = read_trace_json(in, "x.json");
  CHECK(json(back) == written);
  REQUIRE(back.attempts.size() == 6);
  const std::vector<AttemptKind> kinds = {AttemptKind::first,       AttemptKind::backup, AttemptKind::first,
                                          AttemptKind::replacement, AttemptKind::retry,  AttemptKind::first};
  for (std::size_t i = 0; i < kinds.size(); ++i) CHECK(back.attempts[i].kind == kinds[i]);
  std::ostringstream csv;
  write_trace_csv(csv, back);
  CHECK(csv.str().find(",1.500000000,failed,replacement,0.000000000,") != std::string::npos);
}

TEST_CASE("Trace: a trace without kinds (older shardflow) reads attempt 0 as first, a later one as retry",
          "[core][trace]") {
  Trace t = sample_trace();
  AttemptRecord again = t.attempts[1];
  again.attempt = 1;
  again.kind = AttemptKind::replacement;  // what an older trace could not say
  t.attempts.push_back(again);
  std::string text = json(t);
  for (const char* k : {", \"kind\": \"first\"", ", \"kind\": \"replacement\""})
    for (std::size_t at = text.find(k); at != std::string::npos; at = text.find(k))
      text.erase(at, std::string(k).size());
  REQUIRE(text.find("\"kind\"") == std::string::npos);
  std::istringstream in(text);
  const Trace back = read_trace_json(in, "old.json");
  REQUIRE(back.attempts.size() == 4);
  CHECK(back.attempts[0].kind == AttemptKind::first);
  CHECK(back.attempts[2].kind == AttemptKind::first);
  CHECK(back.attempts[3].kind == AttemptKind::retry);
}

TEST_CASE("Trace: read_trace_json refuses an attempt of a task recorded twice", "[core][trace]") {
  // The third record (line 16) made task 1's attempt 0 again: named at its attempt, with the first.
  CHECK(read_error(edited("\"task\": 2, \"step\": 0, \"item\": 4, \"attempt\": 0",
                          "\"task\": 1, \"step\": 0, \"item\": 4, \"attempt\": 0")) ==
        "run/trace.json:16:50: attempts[2].attempt: attempt 0 of task 1 is recorded twice (attempts[1] too)");
}

TEST_CASE("Trace: read_trace_json refuses an unknown kind, and a kind that contradicts the attempt number",
          "[core][trace]") {
  // The second attempt record is on line 15; its kind's value starts at column 168.
  CHECK(read_error(edited("\"outcome\": \"failed\", \"kind\": \"first\"",
                          "\"outcome\": \"failed\", \"kind\": \"speculative\"")) ==
        "run/trace.json:15:168: attempts[1].kind: expected first, retry, backup or replacement, got "
        "\"speculative\"");
  CHECK(read_error(
            edited("\"outcome\": \"failed\", \"kind\": \"first\"", "\"outcome\": \"failed\", \"kind\": 2")) ==
        "run/trace.json:15:168: attempts[1].kind: expected a string, got 2");
  CHECK(read_error(edited("\"outcome\": \"failed\", \"kind\": \"first\"",
                          "\"outcome\": \"failed\", \"kind\": \"retry\"")) ==
        "run/trace.json:15:168: attempts[1].kind: attempt 0 is the first, got \"retry\"");
  CHECK(read_error(edited("\"item\": 0, \"attempt\": 0, \"node\": 0, \"submitted\": 0, \"scheduled\": 5, "
                          "\"started\": 120000, \"finished\": 1500000000, \"outcome\": \"failed\"",
                          "\"item\": 0, \"attempt\": 3, \"node\": 0, \"submitted\": 0, \"scheduled\": 5, "
                          "\"started\": 120000, \"finished\": 1500000000, \"outcome\": \"failed\"")) ==
        "run/trace.json:15:168: attempts[1].kind: only attempt 0 is the first, this is attempt 3");
}

TEST_CASE("Trace: set_kinds_from_order: first, then replacement after an eviction, else retry",
          "[core][trace]") {
  Trace t;
  auto add = [&t](TaskId task, std::uint32_t attempt, Outcome outcome) {
    AttemptRecord a;
    a.task = task;
    a.attempt = attempt;
    a.outcome = outcome;
    a.kind = AttemptKind::backup;  // overwritten
    t.attempts.push_back(a);
  };
  // Task 3 (interleaved with 0): evicted, replaced, failed, retried, cancelled at the run's end.
  add(3, 0, Outcome::evicted);
  add(0, 0, Outcome::failed);
  add(3, 1, Outcome::failed);
  add(0, 1, Outcome::succeeded);
  add(3, 2, Outcome::evicted);
  add(3, 3, Outcome::cancelled);
  set_kinds_from_order(t);
  const std::vector<AttemptKind> want = {AttemptKind::first, AttemptKind::first, AttemptKind::replacement,
                                         AttemptKind::retry, AttemptKind::retry, AttemptKind::replacement};
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(t.attempts[i].kind == want[i]);
}

TEST_CASE("Trace: a run's time scale and its scaled steps are written, read back and written again the same",
          "[core][trace]") {
  Trace t = sample_trace();
  t.time_scale = 0.05;
  t.time_scaled_steps = {1};
  const std::string written = json(t);
  CHECK(
      written.find("\"tasks_failed\": 1,\n  \"time_scale\": 0.05, \"time_scaled_steps\": [1],\n  \"steps\": "
                   "[\"prep\", \"grp/train\"],") != std::string::npos);
  std::istringstream in(written);
  const Trace back = read_trace_json(in, "x.json");
  CHECK(back.time_scale == 0.05);
  CHECK(back.time_scaled_steps == std::vector<std::uint32_t>{1});
  CHECK(json(back) == written);
  // A scale that no short decimal gives back is written with every digit it needs.
  t.time_scale = 1.0 / 3;
  std::istringstream third(json(t));
  CHECK(read_trace_json(third, "x.json").time_scale == 1.0 / 3);
}

TEST_CASE("Trace: a trace without a time scale (any run at scale 1, or an older shardflow) reads as scale 1",
          "[core][trace]") {
  const std::string text = json(sample_trace());
  REQUIRE(text.find("time_scale") == std::string::npos);
  std::istringstream in(text);
  const Trace back = read_trace_json(in, "old.json");
  CHECK(back.time_scale == 1);
  CHECK(back.time_scaled_steps.empty());
  CHECK(json(back) == text);
}

TEST_CASE(
    "Trace: read_trace_json refuses a time scale out of run's range, and a scaled step it does not have",
    "[core][trace]") {
  const std::string tasks_failed = "\"tasks_failed\": 1";
  CHECK(read_error(edited(tasks_failed, tasks_failed + ", \"time_scale\": 0, \"time_scaled_steps\": []")) ==
        "run/trace.json:8:36: time_scale: expected a number from 0.000001 to 1000, got 0");
  CHECK(read_error(
            edited(tasks_failed, tasks_failed + ", \"time_scale\": 1e-300, \"time_scaled_steps\": []")) ==
        "run/trace.json:8:36: time_scale: expected a number from 0.000001 to 1000, got 1e-300");
  CHECK(read_error(edited(tasks_failed, tasks_failed + ", \"time_scale\": \"fast\"")) ==
        "run/trace.json:8:36: time_scale: expected a number, got \"fast\"");
  CHECK(read_error(edited(tasks_failed, tasks_failed + ", \"time_scale\": 0.5")) ==
        "run/trace.json:1:1: time_scaled_steps: missing");
  CHECK(read_error(
            edited(tasks_failed, tasks_failed + ", \"time_scale\": 0.5, \"time_scaled_steps\": [0, 2]")) ==
        "run/trace.json:8:66: time_scaled_steps[1]: 2 is not an index into steps (2 of them)");
}

TEST_CASE("Trace: how a local run loaded its scenario is written, read back and written again the same",
          "[core][trace]") {
  Trace t = sample_trace();
  t.load = LoadRecord{
      "/s/x.yaml", {"/s/a.yaml", "/s/b \"q\".yaml"}, {"seed=3", "pipeline.steps[0].x=1"}, {"n=4"}, "local"};
  const std::string written = json(t);
  CHECK(written.find(
            "\"tasks_failed\": 1,\n  \"load\": {\"file\": \"/s/x.yaml\", \"overlays\": [\"/s/a.yaml\", "
            "\"/s/b \\\"q\\\".yaml\"], \"sets\": [\"seed=3\", \"pipeline.steps[0].x=1\"], \"params\": "
            "[\"n=4\"], \"cluster\": \"local\"},\n  \"steps\": ") != std::string::npos);
  std::istringstream in(written);
  const Trace back = read_trace_json(in, "x.json");
  REQUIRE(back.load);
  CHECK(*back.load == *t.load);
  CHECK(json(back) == written);
  // Without it (a simulation's trace, an older one): none.
  std::istringstream plain(json(sample_trace()));
  CHECK_FALSE(read_trace_json(plain, "x.json").load);
  // Bad input at its place.
  const std::string tasks_failed = "\"tasks_failed\": 1";
  CHECK(read_error(edited(tasks_failed, tasks_failed + ", \"load\": {\"file\": \"x\", \"overlays\": [3]}")) ==
        "run/trace.json:8:57: load.overlays[0]: expected a string, got 3");
  CHECK(read_error(edited(tasks_failed, tasks_failed + ", \"load\": []")) ==
        "run/trace.json:8:30: load: expected an object, got []");
}

TEST_CASE("append_json_string escapes what JSON needs escaped, and nothing else", "[core]") {
  std::string out = "x";
  append_json_string(out, std::string_view("a\"b\\c\nd\re\tf\x01g\x1f"
                                           "h/\xc3\xa9"));
  CHECK(out == "x\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001fh/\xc3\xa9\"");
  out.clear();
  append_json_string(out, "");
  CHECK(out == "\"\"");
  // JSON is UTF-8: a byte that starts no UTF-8 sequence (Latin-1, a cut character) is written as U+FFFD;
  // whole sequences, of every length, pass.
  out.clear();
  append_json_string(out, std::string_view("\xff-\xc3-\xe2\x82\xac\xf0\x9f\x98\x80-\xa9\"\xe2\x82"));
  CHECK(
      out ==
      "\"\xEF\xBF\xBD-\xEF\xBF\xBD-\xe2\x82\xac\xf0\x9f\x98\x80-\xEF\xBF\xBD\\\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  std::ostringstream s;
  write_json_string(s, "plain");
  CHECK(s.str() == "\"plain\"");
}

TEST_CASE("Trace: a bad value is shown as nlohmann dumps it, however deep or long", "[core][trace]") {
  const auto shown = [](const std::string& value) {
    std::string text = nlohmann::json::parse(value).dump();  // the same value read another way
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
  };
  for (const std::string& value :
       {std::string("[{\"b\":1,\"a\":[true,null,\"x\\\"y\"],\"a\":2}]"),
        std::string("[1.5e300,-3,18446744073709551615,0.1]"),
        std::string("[{\"z\":{},\"y\":[],\"x\":{\"q\":[[[\"long string past the cut\"]]]}}]"),
        std::string("[]"), std::string("[{\"k\":\"\\u00e9\\n\"}]")}) {
    INFO(value);
    CHECK(read_error(value) == "run/trace.json:1:1: the top level: expected an object, got " + shown(value));
  }
  // Nested 100,000 deep (nlohmann's own dump would overflow the stack): its first 37 characters.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(read_error(deep) ==
        "run/trace.json:1:1: the top level: expected an object, got " + std::string(37, '[') + "...");
}
