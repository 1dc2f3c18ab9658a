// read_trace_json and read_metrics_json: the inverses of write_trace_json (core/trace.cpp) and
// write_metrics_json (core/metrics.cpp), for the files of any backend's run.
#include <charconv>
#include <cstdint>
#include <istream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/metrics.hpp>
#include <shardflow/core/trace.hpp>

#include "json_document.hpp"

namespace shardflow {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const std::string& file, std::string_view text) : file_(file), text_(text) {}

  // The field's place is found only now, by reading the text again with a reader that keeps places
  // (json_document.hpp): nlohmann's keeps none, and a good file never pays for it.
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(locate(field), field, message);
  }

  // The place of a field named as in errors (`attempts[3].kind`, `steps`, `the top level`): its value's,
  // or, for a missing one, the place of the object that lacks it.
  [[nodiscard]] SourceLocation locate(std::string_view field) const {
    try {
      const JsonDocument doc = parse_json_document(text_, file_);
      const JsonValue* v = &doc.root();
      std::size_t i = 0;
      while (i < field.size()) {
        if (field[i] == '.') {
          ++i;
        } else if (field[i] == '[') {
          const std::size_t close = field.find(']', i);
          std::uint32_t index = 0;
          if (close == std::string_view::npos ||
              std::from_chars(field.data() + i + 1, field.data() + close, index).ec != std::errc{} ||
              v->kind != JsonValue::Kind::array || index >= v->count)
            break;
          v = &doc.item(*v, index);
          i = close + 1;
        } else {
          const std::size_t end = std::min(field.find_first_of(".[", i), field.size());
          const JsonValue* m =
              v->kind == JsonValue::Kind::object ? doc.member(*v, field.substr(i, end - i)) : nullptr;
          if (m == nullptr) break;
          v = m;
          i = end;
        }
      }
      return doc.where(*v);
    } catch (const InputError&) {
      return {file_, 0, 0};
    }
  }

  // "a string", "-3", "{...}": what a value is, for messages.
  static std::string got(const json& v) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }

  const json& get(const json& object, const std::string& key, const std::string& path) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(path.empty() ? key : path + "." + key, "missing");
    return *it;
  }

  std::string string(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(field, "expected a string, got " + got(v));
    return v.get<std::string>();
  }

  std::int64_t integer(const json& v, const std::string& field, std::int64_t lo, std::int64_t hi) const {
    bool ok = false;
    std::int64_t x = 0;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      ok = u <= static_cast<std::uint64_t>(hi);
      x = ok ? static_cast<std::int64_t>(u) : 0;
    } else if (v.is_number_integer()) {
      x = v.get<std::int64_t>();
      ok = x >= lo && x <= hi;
    } else {
      fail(field, "expected an integer, got " + got(v));
    }
    if (!ok || x < lo)
      fail(field, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                      got(v));
    return x;
  }

  std::uint64_t unsigned64(const json& v, const std::string& field) const {
    if (!v.is_number_unsigned())
      fail(field, "expected an integer from 0 to 18446744073709551615, got " + got(v));
    return v.get<std::uint64_t>();
  }

  std::uint32_t u32(const json& v, const std::string& field) const {
    return static_cast<std::uint32_t>(integer(v, field, 0, std::numeric_limits<std::uint32_t>::max()));
  }

  Duration time(const json& v, const std::string& field) const {
    return Duration::from_ns(integer(v, field, -1, std::numeric_limits<std::int64_t>::max()));
  }
  Duration span(const json& v, const std::string& field) const {
    return Duration::from_ns(integer(v, field, 0, std::numeric_limits<std::int64_t>::max()));
  }

  double number(const json& v, const std::string& field) const {
    if (!v.is_number()) fail(field, "expected a number, got " + got(v));
    return v.get<double>();
  }

  // A field of an object by key, named in errors as `path.key` (`key` at the top level).
  double number_at(const json& object, const std::string& key, const std::string& path) const {
    return number(get(object, key, path), path.empty() ? key : path + "." + key);
  }
  std::uint64_t unsigned64_at(const json& object, const std::string& key, const std::string& path) const {
    return unsigned64(get(object, key, path), path.empty() ? key : path + "." + key);
  }

  const json& array(const json& v, const std::string& field) const {
    if (!v.is_array()) fail(field, "expected a list, got " + got(v));
    return v;
  }
  const json& object(const json& v, const std::string& field) const {
    if (!v.is_object()) fail(field, "expected an object, got " + got(v));
    return v;
  }

 private:
  const std::string& file_;
  std::string_view text_;
};

Outcome parse_outcome(const Reader& r, const json& v, const std::string& field) {
  const std::string s = r.string(v, field);
  for (Outcome o : {Outcome::succeeded, Outcome::failed, Outcome::evicted, Outcome::cancelled})
    if (s == to_string(o)) return o;
  r.fail(field, "expected succeeded, failed, evicted or cancelled, got " + Reader::got(v));
}

AttemptKind parse_kind(const Reader& r, const json& v, const std::string& field) {
  const std::string s = r.string(v, field);
  for (AttemptKind k :
       {AttemptKind::first, AttemptKind::retry, AttemptKind::backup, AttemptKind::replacement})
    if (s == to_string(k)) return k;
  r.fail(field, "expected first, retry, backup or replacement, got " + Reader::got(v));
}

std::string read_all(std::istream& in, const std::string& file, const char* kind) {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError({file, 0, 0}, "", std::string("cannot read the ") + kind);
  return text;
}

json parse(const std::string& text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 2, column 3: syntax error while ..."
    static const std::regex kAt(R"(at line (\d+), column (\d+): (.*))");
    std::smatch m;
    const std::string what = e.what();
    if (std::regex_search(what, m, kAt))
      throw InputError({file, std::stoi(m[1]), std::stoi(m[2])}, "", "not valid JSON: " + m[3].str());
    throw InputError({file, 0, 0}, "", "not valid JSON at byte " + std::to_string(e.byte) + ": " + what);
  }
  return doc;
}

Percentiles read_percentiles(const Reader& r, const json& v, const std::string& field) {
  r.object(v, field);
  return {r.number_at(v, "p50", field), r.number_at(v, "p95", field), r.number_at(v, "p99", field),
          r.number_at(v, "max", field), r.number_at(v, "mean", field)};
}

}  // namespace

Metrics read_metrics_json(std::istream& in, const std::string& file) {
  const std::string text = read_all(in, file, "metrics");
  const json doc = parse(text, file);
  const Reader r(file, text);
  r.object(doc, "the top level");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Metrics m;
  m.makespan_s = r.number_at(doc, "makespan_s", "");
  m.critical_path_s = r.number_at(doc, "critical_path_s", "");
  m.total_work_s = r.number_at(doc, "total_work_s", "");
  m.cpu_work_core_s = r.number_at(doc, "cpu_work_core_s", "");
  m.mean_cpu_utilization = r.number_at(doc, "mean_cpu_utilization", "");
  m.peak_cpu_utilization = r.number_at(doc, "peak_cpu_utilization", "");
  m.queue_wait_s = read_percentiles(r, r.get(doc, "queue_wait_s", ""), "queue_wait_s");
  m.cost = r.number_at(doc, "cost", "");
  m.attempts = r.unsigned64_at(doc, "attempts", "");
  m.retries = r.unsigned64_at(doc, "retries", "");
  m.failed_attempts = r.unsigned64_at(doc, "failed_attempts", "");
  // Older files have none of these (their retries counted every attempt after the first).
  for (auto [key, field] :
       {std::pair{"backups", &m.backups}, std::pair{"backups_won", &m.backups_won},
        std::pair{"replacements", &m.replacements}, std::pair{"cancelled_attempts", &m.cancelled_attempts}})
    if (const auto it = doc.find(key); it != doc.end()) *field = r.unsigned64(*it, key);
  m.tasks_failed = r.unsigned64_at(doc, "tasks_failed", "");
  const json& steps = r.array(r.get(doc, "steps", ""), "steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string p = "steps[" + std::to_string(i) + "]";
    const json& s = r.object(steps[i], p);
    StepMetrics sm;
    sm.step = r.string(r.get(s, "step", p), p + ".step");
    sm.attempts = r.unsigned64_at(s, "attempts", p);
    sm.failures = r.unsigned64_at(s, "failures", p);
    sm.run_seconds = read_percentiles(r, r.get(s, "run_s", p), p + ".run_s");
    if (const auto q = s.find("requests"); q != s.end()) {
      const std::string f = p + ".requests";
      r.object(*q, f);
      sm.requests.cpu = r.integer(r.get(*q, "cpu_milli", f), f + ".cpu_milli", 0, kMax);
      sm.requests.memory = r.integer(r.get(*q, "memory_bytes", f), f + ".memory_bytes", 0, kMax);
      sm.requests.gpu =
          static_cast<int>(r.integer(r.get(*q, "gpu", f), f + ".gpu", 0, std::numeric_limits<int>::max()));
    }
    m.per_step.push_back(std::move(sm));
  }
  if (const auto c = doc.find("critical_path"); c != doc.end()) {
    r.array(*c, "critical_path");
    for (std::size_t i = 0; i < c->size(); ++i)
      m.critical_path.push_back(r.u32((*c)[i], "critical_path[" + std::to_string(i) + "]"));
  }
  return m;
}

Trace read_trace_json(std::istream& in, const std::string& file) {
  const std::string text = read_all(in, file, "trace");
  const json doc = parse(text, file);
  const Reader r(file, text);
  r.object(doc, "the top level");
  if (const std::string f = r.string(r.get(doc, "format", ""), "format"); f != "shardflow-trace")
    r.fail("format", "expected \"shardflow-trace\", got " + Reader::got(doc["format"]));
  if (const json& v = r.get(doc, "version", ""); v != 1)
    r.fail("version", "this shardflow reads version 1, got " + Reader::got(v));
  if (const std::string u = r.string(r.get(doc, "time_unit", ""), "time_unit"); u != "ns")
    r.fail("time_unit", "expected \"ns\", got " + Reader::got(doc["time_unit"]));

  Trace t;
  t.backend = r.string(r.get(doc, "backend", ""), "backend");
  t.scenario = r.string(r.get(doc, "scenario", ""), "scenario");
  t.seed = r.unsigned64(r.get(doc, "seed", ""), "seed");
  t.tasks_failed = r.unsigned64(r.get(doc, "tasks_failed", ""), "tasks_failed");

  const json& steps = r.array(r.get(doc, "steps", ""), "steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    t.steps.push_back(r.string(steps[i], "steps[" + std::to_string(i) + "]"));

  const json& nodes = r.array(r.get(doc, "nodes", ""), "nodes");
  t.nodes.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string p = "nodes[" + std::to_string(i) + "]";
    const json& n = r.object(nodes[i], p);
    NodeRecord rec;
    rec.name = r.string(r.get(n, "name", p), p + ".name");
    rec.pool = r.string(r.get(n, "pool", p), p + ".pool");
    rec.cpu =
        r.integer(r.get(n, "cpu_milli", p), p + ".cpu_milli", 0, std::numeric_limits<std::int64_t>::max());
    rec.memory = r.integer(r.get(n, "memory_bytes", p), p + ".memory_bytes", 0,
                           std::numeric_limits<std::int64_t>::max());
    rec.gpu = static_cast<int>(r.integer(r.get(n, "gpu", p), p + ".gpu", 0, std::numeric_limits<int>::max()));
    rec.price_per_hour = r.number(r.get(n, "price_per_hour", p), p + ".price_per_hour");
    rec.billed_from = r.time(r.get(n, "billed_from", p), p + ".billed_from");
    rec.up = r.time(r.get(n, "up", p), p + ".up");
    rec.down = r.time(r.get(n, "down", p), p + ".down");
    t.nodes.push_back(std::move(rec));
  }

  const json& attempts = r.array(r.get(doc, "attempts", ""), "attempts");
  t.attempts.reserve(attempts.size());
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const std::string p = "attempts[" + std::to_string(i) + "]";
    const json& a = r.object(attempts[i], p);
    AttemptRecord rec;
    rec.task = r.u32(r.get(a, "task", p), p + ".task");
    rec.step = r.u32(r.get(a, "step", p), p + ".step");
    if (rec.step >= t.steps.size())
      r.fail(p + ".step", std::to_string(rec.step) + " is not an index into steps (" +
                              std::to_string(t.steps.size()) + " of them)");
    rec.item = r.u32(r.get(a, "item", p), p + ".item");
    rec.attempt = r.u32(r.get(a, "attempt", p), p + ".attempt");
    rec.node = static_cast<std::int32_t>(
        r.integer(r.get(a, "node", p), p + ".node", -1, std::numeric_limits<std::int32_t>::max()));
    if (rec.node >= 0 && static_cast<std::size_t>(rec.node) >= t.nodes.size())
      r.fail(p + ".node", std::to_string(rec.node) + " is not an index into nodes (" +
                              std::to_string(t.nodes.size()) + " of them)");
    rec.submitted = r.time(r.get(a, "submitted", p), p + ".submitted");
    rec.scheduled = r.time(r.get(a, "scheduled", p), p + ".scheduled");
    rec.started = r.time(r.get(a, "started", p), p + ".started");
    rec.finished = r.time(r.get(a, "finished", p), p + ".finished");
    rec.outcome = parse_outcome(r, r.get(a, "outcome", p), p + ".outcome");
    // Older traces have no kind: attempt 0 was the first, a later one counted as a retry.
    if (const auto kind = a.find("kind"); kind != a.end()) {
      rec.kind = parse_kind(r, *kind, p + ".kind");
      if ((rec.kind == AttemptKind::first) != (rec.attempt == 0))
        r.fail(p + ".kind", rec.attempt == 0 ? "attempt 0 is the first, got " + Reader::got(*kind)
                                             : "only attempt 0 is the first, this is attempt " +
                                                   std::to_string(rec.attempt));
    } else {
      rec.kind = rec.attempt == 0 ? AttemptKind::first : AttemptKind::retry;
    }
    rec.image_pull = r.span(r.get(a, "image_pull", p), p + ".image_pull");
    rec.input_read = r.span(r.get(a, "input_read", p), p + ".input_read");
    rec.output_write = r.span(r.get(a, "output_write", p), p + ".output_write");
    if (const auto pod = a.find("pod"); pod != a.end()) {
      rec.pod = static_cast<std::uint32_t>(t.pod_names.size());
      t.pod_names.push_back(r.string(*pod, p + ".pod"));
    }
    if (const auto error = a.find("error"); error != a.end()) {
      rec.error = static_cast<std::uint32_t>(t.errors.size());
      t.errors.push_back(r.string(*error, p + ".error"));
    }
    t.attempts.push_back(rec);
  }
  return t;
}

}  // namespace shardflow
