// A Trace as a Chrome trace (the Trace Event Format), to look at in ui.perfetto.dev or chrome://tracing.
//
// Each node is a process, named after the node; each pod on it gets a thread (a lane), reused once the
// pod that had it has ended, so pods that overlap in time never share a lane. A pod is one slice from
// its binding to its end, named after the pod, with nested slices for the phases the trace records:
// `image pull`, `input read`, `run` and `output write`. Pods waiting for the scheduler are slices of a
// process "pending pods" (creation to binding, or to the end for a pod never bound). Times are in
// microseconds with nanosecond decimals, as the format wants.
//
//   std::ofstream out("trace.chrome.json");
//   shardflow::report::write_chrome_trace(out, trace);
#pragma once

#include <iosfwd>

#include <shardflow/core/trace.hpp>

namespace shardflow::report {

void write_chrome_trace(std::ostream& out, const Trace& trace);

}  // namespace shardflow::report
