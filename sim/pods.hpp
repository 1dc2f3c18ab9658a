// What the simulator's parts share (private to sim/): the event kinds, a pod attempt's phase and its
// place in the model, and small helpers. See model.hpp for how the parts fit together.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <utility>
#include <vector>

#include <shardflow/core/big_alloc.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/core/trace.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::sim {
namespace {

enum Kind : std::uint8_t {
  kAdmit = 1,     // admit the tasks that became ready at this instant
  kDecide,        // the scheduler finishes one decision
  kClassWake,     // a pod class's backoff expired, or the 5-minute unschedulable flush
  kReadStart,     // image present and sandbox started: read input
  kStorage,       // the next transfer of a storage channel (target: 0 reads, 1 writes) ends
  kRunDone,       // the main container exited
  kRetry,         // create the next attempt of a failed task
  kDriverDone,    // a kfp-v2 driver pod finished
  kNodeFail,      // a node failed or its spot instance was reclaimed
  kNodeUp,        // a booting node became ready
  kScaleUpCheck,  // the autoscaler looks at a class's unschedulable pods
  kScaleDown,     // a node has been idle for scale_down_idle
  kSync,          // the orchestrator's controller syncs a key (controller.inl)
  kCreatePod,     // a pod the controller's sync creates in a later slow-start batch
  kImagePulled,   // an image ImageLocality scores is on a node (target: slot * images + image; gen: slot's)
  kSpecCheck,     // a speculative step's earliest running attempt may have become a straggler (target: step)
  kSyncWrite,     // a controller sync's writes land, sync_latency after it (controller.inl)
  kScaleDownResume,  // scale_down_delay_after_add after the last scale-up: the nodes it held back may go
};

enum class Phase : std::uint8_t {
  driver_queued,
  driver_on_node,
  queued,
  starting,
  reading,
  running,
  writing,
  finished,
  evicted
};

constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;

// Seconds to a delay, clamped to [0, ~31 years] (delay_from_ns, core/sampling.hpp).
Duration delay_from_seconds(double s) {
  return delay_from_ns(s * 1e9);
}

// One pod of a task: what the model reads of it. Its trace record (Trace::attempts at the same index) is
// written only (Model::rec); a run without records (SimOptions::records false) has none, and a pod's
// task, number, kind, outcome and end are here so that the run goes the same way without them.
struct Attempt {
  double transfer_target = 0;  // storage virtual time at which its read or write completes
  std::uint32_t seq = 0;       // pod creation order, for the FIFO queue
  TaskId task = 0;
  std::uint32_t number = 0;  // AttemptRecord::attempt
  std::uint32_t slot = kNoSlot;
  std::uint32_t next = kNoSlot;  // pods on the same node (intrusive list)
  std::uint32_t prev = kNoSlot;
  Phase phase = Phase::queued;
  AttemptKind kind = AttemptKind::first;
  Outcome outcome = Outcome::succeeded;
  bool will_fail = false;
  bool cancelled = false;      // cancelled while queued: the scheduler drops it when it comes up
  bool past_deadline = false;  // a retry stopped at its task's retries.max_duration (will_fail too)
  bool ended = false;          // AttemptRecord::finished is set
};

static_assert(sizeof(Attempt) == 40, "one per attempt: keep Attempt at 40 bytes");

// The pods of a run, by attempt index (as many as its trace's records).
using Attempts = std::vector<Attempt, BigAllocator<Attempt>>;

// The duration stream's attempt key of backup attempts: far from any retry's number, so that a backup's
// draw is its own (common random numbers: the same seed gives the same backups).
constexpr std::uint32_t kBackupKey = 0x40000000u;

// A work-queue loop (`parallel_for.workers`): at most `workers` pods of the step exist at once; an item
// that wants a pod while they all do, or while a worker is finishing an item (it will take the next
// one), waits in `pending` (with the time it was queued) until a worker takes it.
struct WorkQueue {
  std::uint32_t workers = 0;  // 0: not a work queue
  std::uint32_t live = 0;     // worker pods that exist (queued, starting or running an item)
  bool handing = false;       // a worker finished an item and takes the next one
  std::deque<std::pair<TaskId, SimTime>> pending;
  [[nodiscard]] bool full() const { return live >= workers || handing; }
};

// A step with `speculation` (docs/strategies.md): the run times of its finished iterations (sorted, for
// the nearest-rank median) and its running attempts by start time; one pending kSpecCheck event (gen).
struct Speculation {
  double after = 0;
  std::uint32_t max = 0;                                     // 0: the step does not speculate
  std::vector<std::int64_t> runs;                            // run times (ns) of successful runs, sorted
  std::set<std::pair<std::int64_t, std::uint32_t>> running;  // (started, attempt)
  std::uint32_t gen = 0;
  // The nearest-rank median (rank ceil(n/2)) of the finished runs; -1 before the first.
  [[nodiscard]] std::int64_t median() const { return runs.empty() ? -1 : runs[(runs.size() + 1) / 2 - 1]; }
};

// A task that got a backup: its attempts that have not ended, and the backups made.
struct SpecTask {
  std::vector<std::uint32_t> live;
  std::uint32_t backups = 0;
  bool won = false;  // an attempt succeeded: pods created for it later are cancelled at once
};

// v % n for n > 0, without a division in the usual case v < 2n (a start index plus at most n slots).
std::uint32_t wrap(std::uint64_t v, std::uint64_t n) {
  if (v >= n) v -= n;
  return static_cast<std::uint32_t>(v < n ? v : v % n);
}

}  // namespace
}  // namespace shardflow::sim
