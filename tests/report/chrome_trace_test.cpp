#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <shardflow/report/chrome_trace.hpp>

using namespace shardflow;

namespace {

SimTime s(double seconds) {
  return Duration::from_seconds(seconds);
}

// Two nodes; on cpu-0 two pods overlap and a third comes after one of them ended; one pod never bound.
Trace small_trace() {
  Trace t;
  t.backend = "sim";
  t.steps = {"prep", "train"};
  t.pod_prefixes = {"prep-", "train-"};
  t.nodes = {NodeRecord{"cpu-0", "cpu", 4000, kGiB, 0, 1, s(0), s(10), s(0)},
             NodeRecord{"cpu-1", "cpu", 4000, kGiB, 0, 1, s(0), s(10), s(0)}};
  AttemptRecord a;  // bound at 1, pulls 0.5 s, reads 0.25 s, runs 2..4, writes 4..5
  a.task = 0;
  a.node = 0;
  a.submitted = s(0);
  a.scheduled = s(1);
  a.image_pull = s(0.5);
  a.input_read = s(0.25);
  a.started = s(2);
  a.output_write = s(1);
  a.finished = s(5);
  AttemptRecord b;  // overlaps a on cpu-0: a second lane
  b.task = 1;
  b.item = 1;
  b.node = 0;
  b.submitted = s(0);
  b.scheduled = s(1.5);
  b.started = s(1.5);
  b.finished = s(3);
  AttemptRecord c;  // after b ended: b's lane again; evicted before it started, while reading its input
  c.task = 2;
  c.step = 1;
  c.node = 0;
  c.submitted = s(3);
  c.scheduled = s(3.5);
  c.finished = s(4.000000001);
  c.input_read = s(0.25);  // cut short: the read until the eviction
  c.outcome = Outcome::evicted;
  AttemptRecord d;  // never bound
  d.task = 3;
  d.step = 1;
  d.item = 2;
  d.attempt = 1;
  d.kind = AttemptKind::backup;  // a backup cancelled before it was bound (its original won)
  d.submitted = s(0);
  d.finished = s(2);
  d.outcome = Outcome::cancelled;
  t.attempts = {a, b, c, d};
  return t;
}

}  // namespace

TEST_CASE("Chrome trace: processes per node, lanes per pod, phases nested, exact text", "[report]") {
  std::ostringstream out;
  report::write_chrome_trace(out, small_trace());
  CHECK(
      out.str() ==
      "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
      "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"pending pods\"}},\n"
      "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_sort_index\", \"args\": {\"sort_index\": 1}},\n"
      "{\"ph\": \"X\", \"name\": \"prep-0-0\", \"cat\": \"prep\", \"ts\": 0.000, \"dur\": 1000000.000, "
      "\"pid\": 1, "
      "\"tid\": 0, \"args\": {\"task\": 0, \"item\": 0, \"attempt\": 0, \"kind\": \"first\", \"outcome\": "
      "\"succeeded\"}},\n"
      "{\"ph\": \"X\", \"name\": \"prep-1-0\", \"cat\": \"prep\", \"ts\": 0.000, \"dur\": 1500000.000, "
      "\"pid\": 1, "
      "\"tid\": 1, \"args\": {\"task\": 1, \"item\": 1, \"attempt\": 0, \"kind\": \"first\", \"outcome\": "
      "\"succeeded\"}},\n"
      "{\"ph\": \"X\", \"name\": \"train-0-0\", \"cat\": \"train\", \"ts\": 3000000.000, \"dur\": "
      "500000.000, "
      "\"pid\": 1, \"tid\": 0, \"args\": {\"task\": 2, \"item\": 0, \"attempt\": 0, \"kind\": \"first\", "
      "\"outcome\": "
      "\"evicted\"}},\n"
      "{\"ph\": \"X\", \"name\": \"train-2-1\", \"cat\": \"train\", \"ts\": 0.000, \"dur\": 2000000.000, "
      "\"pid\": 1, "
      "\"tid\": 2, \"args\": {\"task\": 3, \"item\": 2, \"attempt\": 1, \"kind\": \"backup\", \"outcome\": "
      "\"cancelled\"}},\n"
      "{\"ph\": \"M\", \"pid\": 2, \"name\": \"process_name\", \"args\": {\"name\": \"cpu-0 (cpu)\"}},\n"
      "{\"ph\": \"M\", \"pid\": 2, \"name\": \"process_sort_index\", \"args\": {\"sort_index\": 2}},\n"
      "{\"ph\": \"M\", \"pid\": 3, \"name\": \"process_name\", \"args\": {\"name\": \"cpu-1 (cpu)\"}},\n"
      "{\"ph\": \"M\", \"pid\": 3, \"name\": \"process_sort_index\", \"args\": {\"sort_index\": 3}},\n"
      "{\"ph\": \"X\", \"name\": \"prep-0-0\", \"cat\": \"prep\", \"ts\": 1000000.000, \"dur\": 4000000.000, "
      "\"pid\": 2, \"tid\": 0, \"args\": {\"task\": 0, \"item\": 0, \"attempt\": 0, \"kind\": \"first\", "
      "\"outcome\": "
      "\"succeeded\"}},\n"
      "{\"ph\": \"X\", \"name\": \"image pull\", \"cat\": \"prep\", \"ts\": 1000000.000, \"dur\": "
      "500000.000, "
      "\"pid\": 2, \"tid\": 0},\n"
      "{\"ph\": \"X\", \"name\": \"input read\", \"cat\": \"prep\", \"ts\": 1750000.000, \"dur\": "
      "250000.000, "
      "\"pid\": 2, \"tid\": 0},\n"
      "{\"ph\": \"X\", \"name\": \"run\", \"cat\": \"prep\", \"ts\": 2000000.000, \"dur\": 2000000.000, "
      "\"pid\": 2, "
      "\"tid\": 0},\n"
      "{\"ph\": \"X\", \"name\": \"output write\", \"cat\": \"prep\", \"ts\": 4000000.000, \"dur\": "
      "1000000.000, "
      "\"pid\": 2, \"tid\": 0},\n"
      "{\"ph\": \"X\", \"name\": \"prep-1-0\", \"cat\": \"prep\", \"ts\": 1500000.000, \"dur\": 1500000.000, "
      "\"pid\": 2, \"tid\": 1, \"args\": {\"task\": 1, \"item\": 1, \"attempt\": 0, \"kind\": \"first\", "
      "\"outcome\": "
      "\"succeeded\"}},\n"
      "{\"ph\": \"X\", \"name\": \"run\", \"cat\": \"prep\", \"ts\": 1500000.000, \"dur\": 1500000.000, "
      "\"pid\": 2, "
      "\"tid\": 1},\n"
      "{\"ph\": \"X\", \"name\": \"train-0-0\", \"cat\": \"train\", \"ts\": 3500000.000, \"dur\": "
      "500000.001, "
      "\"pid\": 2, \"tid\": 1, \"args\": {\"task\": 2, \"item\": 0, \"attempt\": 0, \"kind\": \"first\", "
      "\"outcome\": "
      "\"evicted\"}},\n"
      "{\"ph\": \"X\", \"name\": \"input read\", \"cat\": \"train\", \"ts\": 3750000.001, \"dur\": "
      "250000.000, "
      "\"pid\": 2, \"tid\": 1}\n"
      "]}\n");
}

TEST_CASE("Chrome trace: valid JSON, and slices on one lane never overlap unless nested", "[report]") {
  // A bigger hand-made trace: 200 pods of staggered lengths on 3 nodes.
  Trace t;
  t.steps = {"w"};
  t.nodes = {NodeRecord{"n0", "p", 1, 1, 0, 0, s(0), s(1000), s(0)},
             NodeRecord{"n1", "p", 1, 1, 0, 0, s(0), s(1000), s(0)},
             NodeRecord{"n2", "p", 1, 1, 0, 0, s(0), s(1000), s(0)}};
  for (std::uint32_t i = 0; i < 200; ++i) {
    AttemptRecord a;
    a.task = i;
    a.item = i;
    a.node = static_cast<std::int32_t>(i % 3);
    a.submitted = s(i * 0.5);
    a.scheduled = s(i * 0.5 + 0.25);
    a.started = s(i * 0.5 + 0.5);
    a.finished = s(i * 0.5 + 1 + (i % 7));
    t.attempts.push_back(a);
  }
  std::ostringstream out;
  report::write_chrome_trace(out, t);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  // Per (pid, tid), the top-level slices (those with args) must not overlap.
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  int pods = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || !e.contains("args")) continue;
    ++pods;
    lanes[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(
        e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  }
  CHECK(pods == 400);  // each pod once pending, once on its node
  for (auto& [key, v] : lanes) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i].first >= v[i - 1].second);
  }
}

TEST_CASE("Chrome trace: a node without a pool (a live cluster's) is named alone", "[report]") {
  Trace t = small_trace();
  t.nodes[1].pool.clear();
  std::ostringstream out;
  report::write_chrome_trace(out, t);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::vector<std::string> names;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") names.push_back(e["args"]["name"]);
  CHECK(names == std::vector<std::string>{"pending pods", "cpu-0 (cpu)", "cpu-1"});
}
