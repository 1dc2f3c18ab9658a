#include "run_file.hpp"

#include <cmath>
#include <fstream>
#include <limits>

#include <shardflow/core/error.hpp>

#include "../core/json_reader.hpp"  // core's reader of the JSON files shardflow writes
#include "commands.hpp"

namespace shardflow::cli {

namespace {

void read_string(const JsonReader& r, const JsonValue& object, const char* key, const std::string& path,
                 std::string& to) {
  if (const JsonValue* v = r.optional(object, key)) to = r.string(*v, path.empty() ? key : path + "." + key);
}

}  // namespace

RunFile read_run_file(const std::filesystem::path& dir) {
  const std::string file = (dir / "run.json").string();
  std::ifstream in = open_input(
      dir / "run.json", "no run.json here: not the output directory of `shardflow run --backend k8s`");
  const std::string text = read_json_input(in, file, "run file");
  const JsonDocument d = parse_json_input(text, file);
  const JsonReader r(d, text);
  const JsonValue& doc = r.object(d.root(), "the top level");
  constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();
  RunFile f;
  read_string(r, doc, "run_id", "", f.run_id);
  read_string(r, doc, "namespace", "", f.namespace_name);
  read_string(r, doc, "server", "", f.server);
  read_string(r, doc, "context", "", f.context);
  read_string(r, doc, "kubeconfig", "", f.kubeconfig);
  read_string(r, doc, "scenario", "", f.scenario);
  read_string(r, doc, "state", "", f.state);
  if (f.state != "running" && f.state != "interrupted" && f.state != "finished" && f.state != "failed")
    r.fail(r.get(doc, "state", ""), "state",
           "expected \"running\", \"interrupted\", \"finished\" or \"failed\", got " +
               r.got(r.get(doc, "state", "")));
  read_string(r, doc, "error", "", f.error);
  if (const JsonValue* v = r.optional(doc, "seed")) f.seed = r.unsigned64(*v, "seed");
  if (const JsonValue* v = r.optional(doc, "emulate")) f.emulate = r.boolean(*v, "emulate");
  if (const JsonValue* v = r.optional(doc, "kept")) f.kept = r.boolean(*v, "kept");
  if (const JsonValue* v = r.optional(doc, "objects_deleted"))
    f.objects_deleted = r.boolean(*v, "objects_deleted");
  if (const JsonValue* v = r.optional(doc, "started_unix_ns"))
    f.started_unix_ns = r.integer(*v, "started_unix_ns", 0, kMaxNs);
  if (const JsonValue* v = r.optional(doc, "finished_unix_ns"))
    f.finished_unix_ns = r.integer(*v, "finished_unix_ns", 0, kMaxNs);
  if (const JsonValue* v = r.optional(doc, "api_requests")) f.api_requests = r.unsigned64(*v, "api_requests");
  if (const JsonValue* v = r.optional(doc, "controller")) {
    const JsonValue& c = r.object(*v, "controller");
    read_string(r, c, "host", "controller", f.controller_host);
    if (const JsonValue* p = r.optional(c, "pid"))
      f.controller_pid = r.integer(*p, "controller.pid", 1, std::numeric_limits<std::int32_t>::max());
    if (const JsonValue* st = r.optional(c, "start"))
      f.controller_start = r.integer(*st, "controller.start", -1, std::numeric_limits<std::int64_t>::max());
  }
  if (const JsonValue* v = r.optional(doc, "invocation")) {
    const JsonValue& inv = r.object(*v, "invocation");
    RunFile::Invocation i;
    read_string(r, inv, "file", "invocation", i.file);
    read_string(r, inv, "cluster", "invocation", i.cluster);
    if (const JsonValue* s = r.optional(inv, "sets")) i.sets = r.strings(*s, "invocation.sets");
    if (const JsonValue* s = r.optional(inv, "overlays")) i.overlays = r.strings(*s, "invocation.overlays");
    if (const JsonValue* q = r.optional(inv, "qps")) {
      i.qps = r.number(*q, "invocation.qps");
      if (!(i.qps > 0) || !std::isfinite(i.qps))
        r.fail(*q, "invocation.qps", "must be more than 0, got " + r.got(*q));
    }
    if (const JsonValue* b = r.optional(inv, "burst"))
      i.burst = static_cast<int>(r.integer(*b, "invocation.burst", 1, 100000));  // as --burst
    f.invocation = std::move(i);
  }
  return f;
}

}  // namespace shardflow::cli
