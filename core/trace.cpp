#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <shardflow/core/out_buffer.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/trace.hpp>

namespace shardflow {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::succeeded:
      return "succeeded";
    case Outcome::failed:
      return "failed";
    case Outcome::evicted:
      return "evicted";
    case Outcome::cancelled:
      return "cancelled";
  }
  return "unknown";
}

const char* to_string(AttemptKind k) {
  switch (k) {
    case AttemptKind::first:
      return "first";
    case AttemptKind::retry:
      return "retry";
    case AttemptKind::backup:
      return "backup";
    case AttemptKind::replacement:
      return "replacement";
  }
  return "unknown";
}

void set_kinds_from_order(Trace& trace) {
  std::uint32_t tasks = 0;
  for (const AttemptRecord& a : trace.attempts) tasks = std::max(tasks, a.task + 1);
  std::vector<const AttemptRecord*> last(tasks, nullptr);  // each task's latest attempt so far
  for (AttemptRecord& a : trace.attempts) {
    const AttemptRecord* before = last[a.task];
    if (a.attempt == 0 || before == nullptr)
      a.kind = AttemptKind::first;
    else
      a.kind = before->outcome == Outcome::evicted ? AttemptKind::replacement : AttemptKind::retry;
    last[a.task] = &a;
  }
}

std::string pod_name_prefix(const std::string& step_path) {
  std::string out;
  out.reserve(step_path.size() + 1);
  for (char ch : step_path) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    out += ok ? ch : (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : '-';
  }
  out += '-';
  return out;
}

std::string_view Trace::error_text(const AttemptRecord& a) const {
  return a.error < errors.size() ? std::string_view(errors[a.error]) : std::string_view();
}

std::string Trace::pod_name(const AttemptRecord& a) const {
  std::string out;
  append_pod_name(out, a);
  return out;
}

void Trace::append_pod_name(std::string& out, const AttemptRecord& a) const {
  if (a.pod < pod_names.size()) {
    out += pod_names[a.pod];
  } else if (a.step < pod_prefixes.size()) {
    char b[24];
    out += pod_prefixes[a.step];
    out.append(b, std::to_chars(b, b + sizeof b, a.item).ptr);
    out += '-';
    out.append(b, std::to_chars(b, b + sizeof b, a.attempt).ptr);
  }
}

// Traces can hold millions of attempts, so they are written field by field rather than through a JSON
// document tree.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  // Runs of characters that need no escape in one append each.
  std::size_t from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {  // a UTF-8 sequence passes whole; a byte that starts none is U+FFFD (JSON is UTF-8)
      if (const std::size_t len = utf8_length(s, i); len != 0) {
        i += len - 1;
        continue;
      }
      out.append(s.data() + from, i - from);
      from = i + 1;
      out += "\xEF\xBF\xBD";
      continue;
    }
    if (c != '"' && c != '\\' && u >= 0x20) continue;
    out.append(s.data() + from, i - from);
    from = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
        out += kHex[static_cast<unsigned char>(c) & 0xF];
      }
    }
  }
  out.append(s.data() + from, s.size() - from);
  out += '"';
}

void write_json_string(std::ostream& out, std::string_view s) {
  std::string text;
  append_json_string(text, s);
  out << text;
}

namespace {

// The shortest text that reads back as `v` ("0.05", not "0.050000000000000003").
void json_shortest(OutBuffer& out, double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out << std::string_view(buf, ec == std::errc() ? static_cast<std::size_t>(end - buf) : 0);
}

// Exact decimal seconds from integer nanoseconds ("12.000000001"), appended; nothing for kNever.
void append_seconds(std::string& out, Duration d) {
  if (d != kNever) append_fixed_point(out, d.ns(), 9);
}

// A CSV field, appended: quoted (its quotes doubled) when it holds a comma, a quote or a line break.
void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

}  // namespace

void write_trace_json(std::ostream& out, const Trace& t) {
  if (!t.records) throw std::logic_error("write_trace_json: the trace kept no attempt records");
  OutBuffer w(out);
  w << "{\n  \"format\": \"shardflow-trace\",\n  \"version\": 1,\n  \"backend\": ";
  append_json_string(w.text(), t.backend);
  w << ",\n  \"scenario\": ";
  append_json_string(w.text(), t.scenario);
  w << ",\n  \"seed\": " << t.seed << ",\n  \"time_unit\": \"ns\",\n  \"tasks_failed\": " << t.tasks_failed;
  // Only a scaled run has these: a trace of any other run reads and writes as before they existed.
  if (t.time_scale != 1) {
    w << ",\n  \"time_scale\": ";
    json_shortest(w, t.time_scale);
    w << ", \"time_scaled_steps\": [";
    for (std::size_t i = 0; i < t.time_scaled_steps.size(); ++i)
      w << (i ? ", " : "") << t.time_scaled_steps[i];
    w << "]";
  }
  // Only a run that stopped with tasks unfinished, or whose failures left tasks unrun, has these.
  if (t.tasks_unfinished != 0 || t.tasks_waiting != 0 || !t.stopped_early.empty()) {
    w << ",\n  \"tasks_unfinished\": " << t.tasks_unfinished << ", \"tasks_waiting\": " << t.tasks_waiting;
    // When the simulation stopped (its horizon, or stopped_early's churn): later than any attempt's end
    // when no pod was alive then (a retry waiting its backoff).
    if (t.last_finished > SimTime::zero()) w << ", \"stopped_at\": " << t.last_finished.ns();
    if (!t.stopped_early.empty()) {
      w << ", \"stopped_early\": ";
      append_json_string(w.text(), t.stopped_early);
    }
  }
  if (!t.tasks_not_run.empty()) {
    w << ",\n  \"tasks_not_run\": [";
    for (std::size_t i = 0; i < t.tasks_not_run.size(); ++i) w << (i ? ", " : "") << t.tasks_not_run[i];
    w << "]";
  }
  if (t.load) {
    const auto list = [&](const char* key, const std::vector<std::string>& v) {
      w << ", \"" << key << "\": [";
      for (std::size_t i = 0; i < v.size(); ++i) {
        w << (i ? ", " : "");
        append_json_string(w.text(), v[i]);
      }
      w << "]";
    };
    w << ",\n  \"load\": {\"file\": ";
    append_json_string(w.text(), t.load->file);
    list("overlays", t.load->overlays);
    list("sets", t.load->sets);
    list("params", t.load->params);
    w << ", \"cluster\": ";
    append_json_string(w.text(), t.load->cluster);
    w << "}";
  }
  w << ",\n  \"steps\": [";
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    w << (i ? ", " : "");
    append_json_string(w.text(), t.steps[i]);
  }
  w << "],\n  \"nodes\": [";
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const NodeRecord& n = t.nodes[i];
    w << (i ? ",\n    " : "\n    ") << "{\"name\": ";
    append_json_string(w.text(), n.name);
    w << ", \"pool\": ";
    append_json_string(w.text(), n.pool);
    w << ", \"cpu_milli\": " << n.cpu << ", \"memory_bytes\": " << n.memory << ", \"gpu\": " << n.gpu
      << ", \"price_per_hour\": ";
    json_shortest(w, n.price_per_hour);
    w << ", \"billed_from\": " << n.billed_from.ns() << ", \"up\": " << n.up.ns()
      << ", \"down\": " << n.down.ns() << "}";
  }
  w << (t.nodes.empty() ? "" : "\n  ") << "],\n  \"attempts\": [";
  std::string pod;
  for (std::size_t i = 0; i < t.attempts.size(); ++i) {
    const AttemptRecord& a = t.attempts[i];
    w << (i ? ",\n    " : "\n    ") << "{\"task\": " << a.task << ", \"step\": " << a.step
      << ", \"item\": " << a.item << ", \"attempt\": " << a.attempt << ", \"node\": " << a.node
      << ", \"submitted\": " << a.submitted.ns() << ", \"scheduled\": " << a.scheduled.ns()
      << ", \"started\": " << a.started.ns() << ", \"finished\": " << a.finished.ns() << ", \"outcome\": \""
      << to_string(a.outcome) << "\", \"kind\": \"" << to_string(a.kind)
      << "\", \"image_pull\": " << a.image_pull.ns() << ", \"input_read\": " << a.input_read.ns()
      << ", \"output_write\": " << a.output_write.ns();
    pod.clear();
    t.append_pod_name(pod, a);
    if (!pod.empty()) {
      w << ", \"pod\": ";
      append_json_string(w.text(), pod);
    }
    if (a.error < t.errors.size()) {
      w << ", \"error\": ";
      append_json_string(w.text(), t.errors[a.error]);
    }
    w << "}";
  }
  w << (t.attempts.empty() ? "" : "\n  ") << "]\n}\n";
  w.flush();
}

void write_trace_csv(std::ostream& out, const Trace& t) {
  if (!t.records) throw std::logic_error("write_trace_csv: the trace kept no attempt records");
  OutBuffer w(out);
  w << "task,step,item,attempt,node,submitted_s,scheduled_s,started_s,finished_s,outcome,kind,image_pull_s,"
       "input_read_s,output_write_s,pod,error\n";
  std::string& text = w.text();
  std::string scratch;  // a pod name before it is quoted
  for (const AttemptRecord& a : t.attempts) {
    w << a.task << ',';
    if (a.step < t.steps.size())
      append_csv_field(text, t.steps[a.step]);
    else
      w << a.step;
    w << ',' << a.item << ',' << a.attempt << ',';
    if (a.node >= 0 && static_cast<std::size_t>(a.node) < t.nodes.size())
      append_csv_field(text, t.nodes[a.node].name);
    for (const Duration d : {a.submitted, a.scheduled, a.started, a.finished}) {
      text += ',';
      append_seconds(text, d);
    }
    w << ',' << to_string(a.outcome) << ',' << to_string(a.kind);
    for (const Duration d : {a.image_pull, a.input_read, a.output_write}) {
      text += ',';
      append_seconds(text, d);
    }
    text += ',';
    scratch.clear();
    t.append_pod_name(scratch, a);
    append_csv_field(text, scratch);
    text += ',';
    append_csv_field(text, t.error_text(a));
    text += '\n';
  }
  w.flush();
}

}  // namespace shardflow
