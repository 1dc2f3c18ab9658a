#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <shardflow/core/out_buffer.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/report/chrome_trace.hpp>

#include "lanes.hpp"

namespace shardflow::report {

namespace {

using detail::assign_lanes;
using detail::Interval;

constexpr int kPendingPid = 1;  // the process of pods waiting for the scheduler
constexpr int kFirstNodePid = 2;

// Microseconds with three decimals, exactly, from integer nanoseconds.
std::string micros(std::int64_t ns) {
  return fixed_point(ns, 3);
}

class Writer {
 public:
  Writer(std::ostream& out, const Trace& t) : out_(out), t_(t) {}

  void write() {
    out_ << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [";
    process(kPendingPid, "pending pods");
    pending();
    for (std::size_t n = 0; n < t_.nodes.size(); ++n)
      process(kFirstNodePid + static_cast<int>(n),  // a live cluster's node may have no pool
              t_.nodes[n].pool.empty() ? t_.nodes[n].name : t_.nodes[n].name + " (" + t_.nodes[n].pool + ")");
    placed();
    out_ << "\n]}\n";
    out_.flush();
  }

 private:
  void begin_event() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }

  void process(int pid, const std::string& name) {
    begin_event();
    out_ << "{\"ph\": \"M\", \"pid\": " << pid << ", \"name\": \"process_name\", \"args\": {\"name\": ";
    append_json_string(out_.text(), name);
    out_ << "}}";
    begin_event();
    out_ << "{\"ph\": \"M\", \"pid\": " << pid
         << ", \"name\": \"process_sort_index\", \"args\": {\"sort_index\": " << pid << "}}";
  }

  void slice(std::string_view name, std::string_view cat, std::int64_t begin, std::int64_t end, int pid,
             int tid, const AttemptRecord* args) {
    begin_event();
    out_ << "{\"ph\": \"X\", \"name\": ";
    append_json_string(out_.text(), name);
    out_ << ", \"cat\": ";
    append_json_string(out_.text(), cat);
    out_ << ", \"ts\": " << micros(begin) << ", \"dur\": " << micros(end - begin) << ", \"pid\": " << pid
         << ", \"tid\": " << tid;
    if (args != nullptr) {
      out_ << ", \"args\": {\"task\": " << args->task << ", \"item\": " << args->item
           << ", \"attempt\": " << args->attempt << ", \"kind\": \"" << to_string(args->kind)
           << "\", \"outcome\": \"" << to_string(args->outcome) << "\"}";
    }
    out_ << "}";
  }

  [[nodiscard]] std::string step_name(const AttemptRecord& a) const {
    return a.step < t_.steps.size() ? t_.steps[a.step] : std::to_string(a.step);
  }
  [[nodiscard]] std::string label(const AttemptRecord& a) const {
    std::string pod = t_.pod_name(a);
    if (!pod.empty()) return pod;
    return step_name(a) + "[" + std::to_string(a.item) + "]#" + std::to_string(a.attempt);
  }

  // Creation to binding (or to the end, for a pod never bound), on lanes of the pending process.
  void pending() {
    std::vector<Interval> v;
    for (std::size_t i = 0; i < t_.attempts.size(); ++i) {
      const AttemptRecord& a = t_.attempts[i];
      const std::int64_t end = a.scheduled != kNever ? a.scheduled.ns() : a.finished.ns();
      if (end > a.submitted.ns()) v.push_back({a.submitted.ns(), end, i});
    }
    const std::vector<int> lane = assign_lanes(v);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const AttemptRecord& a = t_.attempts[v[k].attempt];
      slice(label(a), step_name(a), v[k].begin, v[k].end, kPendingPid, lane[k], &a);
    }
  }

  // Each bound pod on its node: binding to end, with its phases nested inside.
  void placed() {
    std::vector<std::vector<Interval>> per_node(t_.nodes.size());
    for (std::size_t i = 0; i < t_.attempts.size(); ++i) {
      const AttemptRecord& a = t_.attempts[i];
      if (a.node < 0 || static_cast<std::size_t>(a.node) >= t_.nodes.size() || a.scheduled == kNever)
        continue;
      per_node[static_cast<std::size_t>(a.node)].push_back({a.scheduled.ns(), a.finished.ns(), i});
    }
    for (std::size_t n = 0; n < per_node.size(); ++n) {
      const std::vector<int> lane = assign_lanes(per_node[n]);
      const int pid = kFirstNodePid + static_cast<int>(n);
      for (std::size_t k = 0; k < per_node[n].size(); ++k) {
        const AttemptRecord& a = t_.attempts[per_node[n][k].attempt];
        const std::string cat = step_name(a);
        const std::int64_t bound = a.scheduled.ns();
        const std::int64_t end = a.finished.ns();
        slice(label(a), cat, bound, end, pid, lane[k], &a);
        const auto phase = [&](const char* name, std::int64_t b, std::int64_t e) {
          b = std::clamp(b, bound, end);
          e = std::clamp(e, b, end);
          if (e > b) slice(name, cat, b, e, pid, lane[k], nullptr);
        };
        phase("image pull", bound, bound + a.image_pull.ns());
        if (a.started != kNever) {
          phase("input read", a.started.ns() - a.input_read.ns(), a.started.ns());
          phase("run", a.started.ns(), end - a.output_write.ns());
        } else {
          phase("input read", end - a.input_read.ns(), end);  // cut short while reading (an eviction)
        }
        phase("output write", end - a.output_write.ns(), end);
      }
    }
  }

  OutBuffer out_;
  const Trace& t_;
  bool first_ = true;
};

}  // namespace

void write_chrome_trace(std::ostream& out, const Trace& trace) {
  Writer(out, trace).write();
}

}  // namespace shardflow::report
