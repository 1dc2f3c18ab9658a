// The Trace: what happened in one run, one record per attempt, the same for every backend.
// Times are integer nanoseconds since the start of the run. A time an attempt never reached (a pod never
// bound, a container never started) is kNever (-1 ns); `finished` is always set (when the attempt ended,
// whatever the outcome).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <shardflow/core/big_alloc.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow {

inline constexpr Duration kNever = Duration::from_ns(-1);
inline constexpr std::uint32_t kNoPod = 0xFFFFFFFFu;
inline constexpr std::uint32_t kNoError = 0xFFFFFFFFu;

enum class Outcome : std::uint8_t {
  succeeded,
  failed,     // the attempt failed (its task may be retried)
  evicted,    // the node failed or was reclaimed under it
  cancelled,  // the run stopped before it finished
};
const char* to_string(Outcome o);

/// Why an attempt exists.
enum class AttemptKind : std::uint8_t {
  first,        // the task's first attempt (attempt 0)
  retry,        // after a failed attempt (the step's retries, a Job's backoffLimit)
  backup,       // a speculative copy of a straggling attempt (`speculation`); the first to succeed wins
  replacement,  // a new pod after the node failed or was reclaimed (spot) or the pod was evicted
};
const char* to_string(AttemptKind k);

/// One attempt of one task.
struct AttemptRecord {
  TaskId task = 0;
  std::uint32_t step = 0;  // index into Plan::steps()
  std::uint32_t item = 0;
  std::uint32_t attempt = 0;   // 0 for the first attempt
  std::int32_t node = -1;      // index into Trace::nodes, -1 if never placed
  std::uint32_t pod = kNoPod;  // index into Trace::pod_names; see Trace::pod_name
  SimTime submitted;           // the pod was created (the task was admitted past its limits)
  SimTime scheduled = kNever;  // bound to a node
  SimTime started = kNever;    // its main container started running (after pulls, sandbox, input)
  SimTime finished;            // the attempt ended
  Outcome outcome = Outcome::succeeded;
  AttemptKind kind = AttemptKind::first;  // in the padding after `outcome`: the record does not grow
  std::uint32_t error = kNoError;         // index into Trace::errors (why it failed, if the backend knows)
  Duration image_pull;                    // time spent pulling the image for this attempt
  Duration input_read;                    // time spent reading input
  Duration output_write;                  // time spent writing output (after the run, before `finished`)
};

static_assert(sizeof(AttemptRecord) == 88, "traces hold millions of records: keep AttemptRecord at 88 bytes");

/// A trace's attempt records: millions in a large simulation, so allocated as BigAllocator does.
using AttemptRecords = std::vector<AttemptRecord, BigAllocator<AttemptRecord>>;

/// A node that existed during the run (for utilization and cost).
struct NodeRecord {
  std::string name;
  std::string pool;
  MilliCpu cpu = 0;
  ByteCount memory = 0;
  int gpu = 0;
  double price_per_hour = 0;  // what this node costs (after any spot discount)
  SimTime up;                 // became usable (after boot)
  SimTime down;               // removed, failed or the run ended
  SimTime billed_from;        // billing starts here (at boot request for autoscaled nodes)
};

/// How the scenario of a run was loaded: its file and the options that changed it, as given on the
/// command line (overlays by absolute path), so that a later `calibrate` can be given the same.
struct LoadRecord {
  std::string file;
  std::vector<std::string> overlays, sets, params;
  std::string cluster;
  friend bool operator==(const LoadRecord&, const LoadRecord&) = default;
};

struct Trace {
  std::string backend;   // "sim", "local", "k8s"
  std::string scenario;  // scenario name
  std::uint64_t seed = 0;
  /// Written by `run --backend local` (a k8s run records it in run.json; a simulation, which calibrate
  /// does not read, and a trace written before the field existed have none).
  std::optional<LoadRecord> load;
  std::vector<std::string> steps;  // step paths, indexed by AttemptRecord::step
  std::vector<NodeRecord> nodes;
  AttemptRecords attempts;
  /// False for a run that kept no attempt records (RunOptions::records false, as a sweep runs): then
  /// `attempts` is empty, and `last_finished` and the task counts below are what is known of them.
  bool records = true;
  /// The latest `finished` of the run's attempts (0 if it had none): its makespan (makespan_s).
  SimTime last_finished = SimTime::zero();
  /// Tasks that exhausted their retries, or had not finished when the run stopped.
  std::uint64_t tasks_failed = 0;
  /// The local backend's --time-scale (model time to real time): the run times of the steps in
  /// `time_scaled_steps` (sleep, and spin without `seconds`: the kernels that run for the attempt's
  /// sampled run time) and the retry backoffs were multiplied by it. Every time in the trace is real
  /// time, as measured; the other steps' kernels ran at their own speed. 1 for the other backends, and
  /// for a trace written before the field existed.
  double time_scale = 1;
  /// Indexes into `steps`; empty when time_scale is 1.
  std::vector<std::uint32_t> time_scaled_steps;
  /// Of tasks_failed, those that had not finished when the run stopped (interrupted, or a simulation at
  /// its horizon). In trace.json when not 0 (with tasks_waiting and stopped_early).
  std::uint64_t tasks_unfinished = 0;
  /// Of tasks_failed, those that had not started when the run stopped because they waited for unfinished
  /// ones.
  std::uint64_t tasks_waiting = 0;
  /// Tasks that never ran because a task they depend on failed (not counted in tasks_failed), in id
  /// order. In trace.json when there are some.
  std::vector<TaskId> tasks_not_run;
  /// Why a simulation stopped before its horizon with tasks unfinished, when it did (empty otherwise).
  std::string stopped_early;

  // Pod names. A backend that learns its pods' names stores them here, each attempt pointing at its own
  // with AttemptRecord::pod. A backend that names pods by rule (the simulator) sets `pod_prefixes`, one
  // per step (see pod_name_prefix), instead of storing a string per attempt: an attempt with no stored
  // name is then "<pod_prefixes[step]><item>-<attempt>".
  std::vector<std::string> pod_names;
  std::vector<std::string> pod_prefixes;

  /// Error texts (a failed kernel's exception, a pod's termination message), pointed at by
  /// AttemptRecord::error.
  std::vector<std::string> errors;

  /// The attempt's error text; empty if it has none.
  [[nodiscard]] std::string_view error_text(const AttemptRecord& a) const;

  /// The attempt's pod name, stored or by rule; empty if it has none.
  [[nodiscard]] std::string pod_name(const AttemptRecord& a) const;
  /// The same appended to `out` (writers of large files: no string per attempt).
  void append_pod_name(std::string& out, const AttemptRecord& a) const;
};

/// Sets every attempt's kind from the attempt before it of the same task (in the order of
/// Trace::attempts): attempt 0 is the first; one after an evicted attempt replaces it; one after any
/// other outcome is a retry. For a backend that learns outcomes after it numbers attempts and makes no
/// backups (the Kubernetes backend, at the run's end).
void set_kinds_from_order(Trace& trace);

/// The pod-name prefix of a step: its path lower-cased, other characters than [a-z0-9-] as '-', then a
/// '-' ("Prep/x" -> "prep-x-"): a valid part of a Kubernetes name.
std::string pod_name_prefix(const std::string& step_path);

/// JSON with every field (a stable, documented shape; see docs/trace-format.md).
void write_trace_json(std::ostream& out, const Trace& trace);
/// CSV, one row per attempt, header first; times in seconds with nanosecond precision.
void write_trace_csv(std::ostream& out, const Trace& trace);
/// Reads what write_trace_json writes (any backend's trace.json). `file` names the input in errors.
/// Throws InputError for text that is not JSON (with the line and column), a missing field or a field
/// of the wrong type or range (named as in `attempts[3].started`), or another format or version.
/// Pod names are kept per attempt (Trace::pod_names), so writing the result again gives the same bytes.
Trace read_trace_json(std::istream& in, const std::string& file);
/// Where in a trace.json that read_trace_json read the value of `field` (named as in
/// `attempts[3].task`) is: for a problem found after reading (the Trace keeps no places), read again.
/// The file alone if it cannot be read again or has no such field.
SourceLocation trace_field_location(std::istream& in, const std::string& file, std::string_view field);
/// `s` as a JSON string literal, quoted and escaped (for the writers of other trace formats).
void write_json_string(std::ostream& out, std::string_view s);
/// The same, appended to `out`.
void append_json_string(std::string& out, std::string_view s);

}  // namespace shardflow
