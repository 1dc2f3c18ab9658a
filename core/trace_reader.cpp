// read_trace_json and read_metrics_json: the inverses of write_trace_json (core/trace.cpp) and
// write_metrics_json (core/metrics.cpp), for the files of any backend's run.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <istream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/trace.hpp>

#include "json_reader.hpp"
#include "overrides.hpp"

namespace shardflow {
namespace {

using nlohmann::json;
using Kind = JsonValue::Kind;

Outcome parse_outcome(const JsonReader& r, const JsonValue& v, const std::string& field) {
  const std::string s = r.string(v, field);
  for (Outcome o : {Outcome::succeeded, Outcome::failed, Outcome::evicted, Outcome::cancelled})
    if (s == to_string(o)) return o;
  r.fail(v, field, "expected succeeded, failed, evicted or cancelled, got " + r.got(v));
}

AttemptKind parse_kind(const JsonReader& r, const JsonValue& v, const std::string& field) {
  const std::string s = r.string(v, field);
  for (AttemptKind k :
       {AttemptKind::first, AttemptKind::retry, AttemptKind::backup, AttemptKind::replacement})
    if (s == to_string(k)) return k;
  r.fail(v, field, "expected first, retry, backup or replacement, got " + r.got(v));
}

Percentiles read_percentiles(const JsonReader& r, const JsonValue& v, const std::string& field) {
  r.object(v, field);
  return {r.number_at(v, "p50", field), r.number_at(v, "p95", field), r.number_at(v, "p99", field),
          r.number_at(v, "max", field), r.number_at(v, "mean", field)};
}

}  // namespace

Metrics read_metrics_json(std::istream& in, const std::string& file) {
  const std::string text = read_json_input(in, file, "metrics");
  const JsonDocument d = parse_json_input(text, file);
  const JsonValue& doc = d.root();
  const JsonReader r(d, text);
  r.object(doc, "the top level");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Metrics m;
  // Times, work, utilization and cost are never negative (a report showed "makespan -1s").
  const auto non_negative = [&](const char* key) { return r.non_negative(r.get(doc, key, ""), key); };
  m.makespan_s = non_negative("makespan_s");
  m.critical_path_s = non_negative("critical_path_s");
  m.total_work_s = non_negative("total_work_s");
  m.cpu_work_core_s = non_negative("cpu_work_core_s");
  m.mean_cpu_utilization = non_negative("mean_cpu_utilization");
  m.peak_cpu_utilization = non_negative("peak_cpu_utilization");
  m.queue_wait_s = read_percentiles(r, r.get(doc, "queue_wait_s", ""), "queue_wait_s");
  m.cost = non_negative("cost");
  m.attempts = r.unsigned64_at(doc, "attempts", "");
  m.retries = r.unsigned64_at(doc, "retries", "");
  m.failed_attempts = r.unsigned64_at(doc, "failed_attempts", "");
  // Older files have none of these (their retries counted every attempt after the first).
  for (auto [key, field] :
       {std::pair{"backups", &m.backups}, std::pair{"backups_won", &m.backups_won},
        std::pair{"replacements", &m.replacements}, std::pair{"cancelled_attempts", &m.cancelled_attempts}})
    if (const JsonValue* v = r.find(doc, key)) *field = r.unsigned64(*v, key);
  m.tasks_failed = r.unsigned64_at(doc, "tasks_failed", "");
  const JsonValue& steps = r.array(r.get(doc, "steps", ""), "steps");
  for (std::uint32_t i = 0; i < steps.count; ++i) {
    const std::string p = "steps[" + std::to_string(i) + "]";
    const JsonValue& s = r.object(r.item(steps, i), p);
    StepMetrics sm;
    sm.step = r.string(r.get(s, "step", p), p + ".step");
    sm.attempts = r.unsigned64_at(s, "attempts", p);
    sm.failures = r.unsigned64_at(s, "failures", p);
    // `succeeded` and an absent `run_s` (no successful attempt) since 2026-12-05; before, run_s was always
    // there (0 s without a successful attempt) and nothing counted them.
    if (const JsonValue* v = r.find(s, "run_s")) sm.run_seconds = read_percentiles(r, *v, p + ".run_s");
    if (const JsonValue* v = r.find(s, "succeeded"))
      sm.succeeded = r.unsigned64(*v, p + ".succeeded");
    else if (r.find(s, "run_s") != nullptr)
      sm.succeeded = sm.attempts > sm.failures ? sm.attempts - sm.failures : 0;
    if (const JsonValue* q = r.find(s, "requests")) {
      const std::string f = p + ".requests";
      r.object(*q, f);
      sm.requests.cpu = r.integer(r.get(*q, "cpu_milli", f), f + ".cpu_milli", 0, kMax);
      sm.requests.memory = r.integer(r.get(*q, "memory_bytes", f), f + ".memory_bytes", 0, kMax);
      sm.requests.gpu =
          static_cast<int>(r.integer(r.get(*q, "gpu", f), f + ".gpu", 0, std::numeric_limits<int>::max()));
    }
    m.per_step.push_back(std::move(sm));
  }
  if (const JsonValue* c = r.find(doc, "critical_path")) {
    r.array(*c, "critical_path");
    for (std::uint32_t i = 0; i < c->count; ++i)
      m.critical_path.push_back(r.u32(r.item(*c, i), "critical_path[" + std::to_string(i) + "]"));
  }
  return m;
}

SourceLocation trace_field_location(std::istream& in, const std::string& file, std::string_view field) {
  try {
    const std::string text = read_json_input(in, file, "trace");
    const JsonDocument d = parse_json_input(text, file);
    const JsonValue* v = &d.root();
    for (const detail::PathPart& part : detail::parse_override_path(field, {file, 0, 0})) {
      if (!part.key.empty()) {
        if (v->kind != Kind::object || (v = d.member(*v, part.key)) == nullptr)
          return SourceLocation{file, 0, 0};
        continue;
      }
      std::uint32_t i = 0;
      const std::string& s = part.selector;
      const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      if (ec != std::errc() || p != s.data() + s.size() || v->kind != Kind::array || i >= v->count)
        return SourceLocation{file, 0, 0};
      v = &d.item(*v, i);
    }
    return d.where(*v);
  } catch (const InputError&) {
    return SourceLocation{file, 0, 0};
  }
}

Trace read_trace_json(std::istream& in, const std::string& file) {
  const std::string text = read_json_input(in, file, "trace");
  const JsonDocument d = parse_json_input(text, file);
  const JsonValue& doc = d.root();
  const JsonReader r(d, text);
  r.object(doc, "the top level");
  if (const JsonValue& v = r.get(doc, "format", ""); r.string(v, "format") != "shardflow-trace")
    r.fail(v, "format", "expected \"shardflow-trace\", got " + r.got(v));
  // nlohmann's `v != 1`: any number equal to 1 (1, 1.0, 1e0), nothing else.
  if (const JsonValue& v = r.get(doc, "version", ""); v.kind != Kind::number || v.number != 1)
    r.fail(v, "version", "this shardflow reads version 1, got " + r.got(v));
  if (const JsonValue& v = r.get(doc, "time_unit", ""); r.string(v, "time_unit") != "ns")
    r.fail(v, "time_unit", "expected \"ns\", got " + r.got(v));

  Trace t;
  t.backend = r.string(r.get(doc, "backend", ""), "backend");
  t.scenario = r.string(r.get(doc, "scenario", ""), "scenario");
  t.seed = r.unsigned64(r.get(doc, "seed", ""), "seed");
  t.tasks_failed = r.unsigned64(r.get(doc, "tasks_failed", ""), "tasks_failed");

  const JsonValue& steps = r.array(r.get(doc, "steps", ""), "steps");
  for (std::uint32_t i = 0; i < steps.count; ++i)
    t.steps.push_back(r.string(r.item(steps, i), "steps[" + std::to_string(i) + "]"));
  // Only a run at a time scale other than 1 has these; older traces never do (scale 1, nothing scaled).
  if (const JsonValue* v = r.find(doc, "time_scale")) {
    t.time_scale = r.number(*v, "time_scale");
    // What `run --time-scale` takes: a smaller scale runs steps in no time, and dividing by it is no fit.
    if (!(t.time_scale >= 1e-6 && t.time_scale <= 1000))
      r.fail(*v, "time_scale", "expected a number from 0.000001 to 1000, got " + r.got(*v));
    const JsonValue& scaled = r.array(r.get(doc, "time_scaled_steps", ""), "time_scaled_steps");
    for (std::uint32_t i = 0; i < scaled.count; ++i) {
      const std::string p = "time_scaled_steps[" + std::to_string(i) + "]";
      const JsonValue& step = r.item(scaled, i);
      t.time_scaled_steps.push_back(r.u32(step, p));
      if (t.time_scaled_steps.back() >= t.steps.size())
        r.fail(step, p,
               std::to_string(t.time_scaled_steps.back()) + " is not an index into steps (" +
                   std::to_string(t.steps.size()) + " of them)");
    }
  }

  // Only a run that stopped with tasks unfinished, or whose failures left tasks unrun, has these.
  if (const JsonValue* v = r.find(doc, "tasks_unfinished")) {
    t.tasks_unfinished = r.unsigned64(*v, "tasks_unfinished");
    t.tasks_waiting = r.unsigned64(r.get(doc, "tasks_waiting", ""), "tasks_waiting");
    if (t.tasks_unfinished > t.tasks_failed || t.tasks_waiting > t.tasks_failed - t.tasks_unfinished)
      r.fail(*v, "tasks_unfinished",
             "tasks_unfinished (" + std::to_string(t.tasks_unfinished) + ") and tasks_waiting (" +
                 std::to_string(t.tasks_waiting) + ") are counted in tasks_failed (" +
                 std::to_string(t.tasks_failed) + "): more than it");
    if (const JsonValue* at = r.find(doc, "stopped_at"))
      t.last_finished =
          SimTime::from_ns(r.integer(*at, "stopped_at", 0, std::numeric_limits<std::int64_t>::max()));
    if (const JsonValue* why = r.find(doc, "stopped_early"))
      t.stopped_early = r.string(*why, "stopped_early");
  }
  if (const JsonValue* v = r.find(doc, "tasks_not_run")) {
    const JsonValue& ids = r.array(*v, "tasks_not_run");
    for (std::uint32_t i = 0; i < ids.count; ++i)
      t.tasks_not_run.push_back(r.u32(r.item(ids, i), "tasks_not_run[" + std::to_string(i) + "]"));
  }

  // Only a local run's trace has it.
  if (const JsonValue* v = r.find(doc, "load")) {
    r.object(*v, "load");
    LoadRecord l;
    l.file = r.string(r.get(*v, "file", "load"), "load.file");
    const auto list = [&](const char* key, std::vector<std::string>& out) {
      const std::string f = std::string("load.") + key;
      const JsonValue& a = r.array(r.get(*v, key, "load"), f);
      for (std::uint32_t i = 0; i < a.count; ++i)
        out.push_back(r.string(r.item(a, i), f + "[" + std::to_string(i) + "]"));
    };
    list("overlays", l.overlays);
    list("sets", l.sets);
    list("params", l.params);
    l.cluster = r.string(r.get(*v, "cluster", "load"), "load.cluster");
    t.load = std::move(l);
  }

  const JsonValue& nodes = r.array(r.get(doc, "nodes", ""), "nodes");
  t.nodes.reserve(nodes.count);
  for (std::uint32_t i = 0; i < nodes.count; ++i) {
    const std::string p = "nodes[" + std::to_string(i) + "]";
    const JsonValue& n = r.object(r.item(nodes, i), p);
    NodeRecord rec;
    rec.name = r.string(r.get(n, "name", p), p + ".name");
    rec.pool = r.string(r.get(n, "pool", p), p + ".pool");
    rec.cpu =
        r.integer(r.get(n, "cpu_milli", p), p + ".cpu_milli", 0, std::numeric_limits<std::int64_t>::max());
    rec.memory = r.integer(r.get(n, "memory_bytes", p), p + ".memory_bytes", 0,
                           std::numeric_limits<std::int64_t>::max());
    rec.gpu = static_cast<int>(r.integer(r.get(n, "gpu", p), p + ".gpu", 0, std::numeric_limits<int>::max()));
    rec.price_per_hour = r.non_negative(r.get(n, "price_per_hour", p), p + ".price_per_hour");
    rec.billed_from = r.time(r.get(n, "billed_from", p), p + ".billed_from");
    rec.up = r.time(r.get(n, "up", p), p + ".up");
    // An edited or foreign trace: a node down before it was up, or billed from after it was down, would
    // give negative node time and cost.
    const JsonValue& down = r.get(n, "down", p);
    rec.down = r.time(down, p + ".down");
    if (rec.down < rec.up || rec.down < rec.billed_from)
      r.fail(down, p + ".down",
             "is before the node was " + std::string(rec.down < rec.up ? "up (up " : "billed (billed_from ") +
                 std::to_string((rec.down < rec.up ? rec.up : rec.billed_from).ns()) + " ns), got " +
                 std::to_string(rec.down.ns()));
    t.nodes.push_back(std::move(rec));
  }

  const JsonValue& attempts = r.array(r.get(doc, "attempts", ""), "attempts");
  t.attempts.reserve(attempts.count);
  for (std::uint32_t i = 0; i < attempts.count; ++i) {
    const std::string p = "attempts[" + std::to_string(i) + "]";
    const JsonValue& a = r.object(r.item(attempts, i), p);
    AttemptRecord rec;
    rec.task = r.u32(r.get(a, "task", p), p + ".task");
    const JsonValue& step = r.get(a, "step", p);
    rec.step = r.u32(step, p + ".step");
    if (rec.step >= t.steps.size())
      r.fail(step, p + ".step",
             std::to_string(rec.step) + " is not an index into steps (" + std::to_string(t.steps.size()) +
                 " of them)");
    rec.item = r.u32(r.get(a, "item", p), p + ".item");
    rec.attempt = r.u32(r.get(a, "attempt", p), p + ".attempt");
    const JsonValue& node = r.get(a, "node", p);
    rec.node =
        static_cast<std::int32_t>(r.integer(node, p + ".node", -1, std::numeric_limits<std::int32_t>::max()));
    if (rec.node >= 0 && static_cast<std::size_t>(rec.node) >= t.nodes.size())
      r.fail(node, p + ".node",
             std::to_string(rec.node) + " is not an index into nodes (" + std::to_string(t.nodes.size()) +
                 " of them)");
    rec.submitted = r.time(r.get(a, "submitted", p), p + ".submitted");
    rec.scheduled = r.time(r.get(a, "scheduled", p), p + ".scheduled");
    rec.started = r.time(r.get(a, "started", p), p + ".started");
    const JsonValue& finished = r.get(a, "finished", p);
    rec.finished = r.time(finished, p + ".finished");
    // An edited or foreign trace: an attempt that ends before it started would make negative run times,
    // one that never ended a run as long as the clock (calibrate fitted either, silently).
    if (rec.finished < SimTime::zero() || rec.finished == SimTime::max())
      r.fail(finished, p + ".finished",
             "an attempt always ends: finished is when, whatever its outcome, got " +
                 std::to_string(rec.finished.ns()));
    if (rec.started >= SimTime::zero() && rec.finished < rec.started)
      r.fail(finished, p + ".finished",
             "ends before the attempt started (started " + std::to_string(rec.started.ns()) + " ns), got " +
                 std::to_string(rec.finished.ns()));
    rec.outcome = parse_outcome(r, r.get(a, "outcome", p), p + ".outcome");
    // Older traces have no kind: attempt 0 was the first, a later one counted as a retry.
    if (const JsonValue* kind = r.find(a, "kind")) {
      rec.kind = parse_kind(r, *kind, p + ".kind");
      if ((rec.kind == AttemptKind::first) != (rec.attempt == 0))
        r.fail(*kind, p + ".kind",
               rec.attempt == 0
                   ? "attempt 0 is the first, got " + r.got(*kind)
                   : "only attempt 0 is the first, this is attempt " + std::to_string(rec.attempt));
    } else {
      rec.kind = rec.attempt == 0 ? AttemptKind::first : AttemptKind::retry;
    }
    rec.image_pull = r.span(r.get(a, "image_pull", p), p + ".image_pull");
    rec.input_read = r.span(r.get(a, "input_read", p), p + ".input_read");
    const JsonValue& write = r.get(a, "output_write", p);
    rec.output_write = r.span(write, p + ".output_write");
    // The write is the end of the run, in the attempt's time from its start to its end.
    if (rec.started >= SimTime::zero() && rec.output_write > rec.finished - rec.started)
      r.fail(write, p + ".output_write",
             "is longer than the attempt ran (started " + std::to_string(rec.started.ns()) +
                 " ns, finished " + std::to_string(rec.finished.ns()) + " ns), got " +
                 std::to_string(rec.output_write.ns()));
    if (const JsonValue* pod = r.find(a, "pod")) {
      rec.pod = static_cast<std::uint32_t>(t.pod_names.size());
      t.pod_names.push_back(r.string(*pod, p + ".pod"));
    }
    if (const JsonValue* error = r.find(a, "error")) {
      rec.error = static_cast<std::uint32_t>(t.errors.size());
      t.errors.push_back(r.string(*error, p + ".error"));
    }
    t.attempts.push_back(rec);
  }
  // Each attempt of a task once: a record written twice would count twice (calibrate's fit, the metrics).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keys(t.attempts.size());
  for (std::uint32_t i = 0; i < t.attempts.size(); ++i)
    keys[i] = {std::uint64_t{t.attempts[i].task} << 32 | t.attempts[i].attempt, i};
  std::sort(keys.begin(), keys.end());
  for (std::size_t k = 1; k < keys.size(); ++k)
    if (keys[k].first == keys[k - 1].first) {
      const std::uint32_t i = keys[k].second;
      const std::string p = "attempts[" + std::to_string(i) + "]";
      r.fail(r.get(r.object(r.item(attempts, i), p), "attempt", p), p + ".attempt",
             "attempt " + std::to_string(t.attempts[i].attempt) + " of task " +
                 std::to_string(t.attempts[i].task) + " is recorded twice (attempts[" +
                 std::to_string(keys[k - 1].second) + "] too)");
    }
  return t;
}

}  // namespace shardflow
