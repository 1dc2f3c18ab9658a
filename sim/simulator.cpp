#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>
#include <vector>

#include <shardflow/core/det_math.hpp>
#include <shardflow/core/error.hpp>
#include <shardflow/core/execution.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/ring.hpp>
#include <shardflow/core/sampling.hpp>
#include <shardflow/sim/simulator.hpp>

#include "engine.hpp"
#include "node_index.hpp"
#include "score_tree.hpp"
#include "scoring.hpp"

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
enum class ClassState : std::uint8_t { active, backoff, unschedulable };

constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
constexpr std::size_t kMaxTreeClasses = 16;  // at most 32: live_mask_ has a bit per class

// Seconds to a delay, clamped to [0, ~31 years] (delay_from_ns, core/sampling.hpp).
Duration delay_from_seconds(double s) {
  return delay_from_ns(s * 1e9);
}
constexpr Duration kUnschedulableFlush = Duration::from_s(300);  // podMaxInUnschedulablePodsDuration

// Pods with the same requirements: the tasks of one step, or all driver pods.
struct PodClass {
  PodRequest request;
  CpuMem nonzero;           // the requests kube-scheduler scores with
  std::uint64_t pools = 0;  // pools whose selector and taints admit it
  bool never_fits = false;  // no eligible pool can ever hold it
  std::uint32_t image = 0;
  Duration pull;
  Ring queue;  // pending pods (attempt ids), oldest first
  ClassState state = ClassState::active;
  int fails = 0;  // consecutive failed scheduling attempts of the head pod
  SimTime backoff_until;
  std::uint32_t wake_gen = 0;
  SimTime blocked_since = kNever;  // when its backlog first found no node
  bool scale_check_pending = false;
};

struct Attempt {
  std::uint64_t seq = 0;  // pod creation order, for the FIFO queue
  std::uint32_t slot = kNoSlot;
  std::uint32_t next = kNoSlot;  // pods on the same node (intrusive list)
  std::uint32_t prev = kNoSlot;
  double transfer_target = 0;  // storage virtual time at which its read or write completes
  Phase phase = Phase::queued;
  bool will_fail = false;
};

struct Slot {
  std::uint32_t pool = 0;
  std::uint32_t record = 0;
  bool alive = false;
  MilliCpu cpu_used = 0;
  ByteCount memory_used = 0;
  int gpu_used = 0;
  int pods = 0;
  MilliCpu nz_cpu = 0;
  ByteCount nz_memory = 0;
  SimTime pull_free;
  std::uint32_t head = kNoSlot;  // first pod on the node
  std::uint32_t gen = 0;         // bumped when the node goes away
  std::uint32_t idle_gen = 0;    // bumped when the node stops being idle
};

// A node's score for one class (cls = class + 1; 0 = nothing cached).
struct ScoreCache {
  std::uint32_t cls = 0;
  std::int32_t score = 0;
};

struct PoolState {
  int nodes = 0;    // up or booting
  int booting = 0;  // requested, not yet up
  int made = 0;     // nodes ever created, for names
};

// A read or a write in progress on shared storage.
struct Transfer {
  double target;
  std::uint32_t attempt;
  bool operator>(const Transfer& o) const {
    return target > o.target || (target == o.target && attempt > o.attempt);
  }
};

// One direction of shared storage (reads, or writes), its bandwidth shared fairly among the transfers in
// progress: processor sharing through a virtual clock. `v` is the bytes each transfer has received since
// the start; one that starts at v0 with b bytes ends when v reaches v0 + b, and v grows at
// bandwidth / active.
enum StorageDir : std::uint32_t { kRead = 0, kWrite = 1 };
struct Channel {
  double bandwidth = 0;          // bytes per second; 0: transfers take no time
  Phase phase = Phase::reading;  // the phase of an attempt whose transfer is on this channel
  std::vector<Transfer> heap;    // min-heap by target; stale entries are dropped lazily
  std::uint32_t active = 0;
  double v = 0;
  SimTime last;
  std::uint32_t gen = 0;
};

std::uint64_t eligible_pools(const std::vector<NodePool>& pools,
                             const std::map<std::string, std::string>& selector,
                             const std::vector<Toleration>& tolerations) {
  std::uint64_t mask = 0;
  for (std::size_t p = 0; p < pools.size(); ++p)
    if (pool_admits(pools[p], selector, tolerations)) mask |= std::uint64_t{1} << p;
  return mask;
}

// v % n for n > 0, without a division in the usual case v < 2n (a start index plus at most n slots).
std::uint32_t wrap(std::uint64_t v, std::uint64_t n) {
  if (v >= n) v -= n;
  return static_cast<std::uint32_t>(v < n ? v : v % n);
}

class Model {
 public:
  Model(const Scenario& scenario, const Plan& plan, const SimOptions& options)
      : sc_(scenario),
        plan_(plan),
        opt_(options),
        sched_rng_(Rng::stream(options.seed, Stream::scheduler)),
        exec_(plan, *this) {
    const auto& pools = sc_.cluster.node_pools;
    if (pools.size() > 64)
      throw InputError(pools[64].where, "cluster.node_pools[64]",
                       "the simulator supports at most 64 node pools, got " + std::to_string(pools.size()));
    trace_.backend = "sim";
    trace_.scenario = sc_.name;
    trace_.seed = opt_.seed;
    for (const PlanStep& s : plan_.steps()) trace_.steps.push_back(s.path);

    const SchedulerConfig& sch = sc_.cluster.scheduler;
    decision_cost_ =
        sch.decisions_per_second > 0 ? delay_from_seconds(1.0 / sch.decisions_per_second) : Duration::zero();
    const Overheads& ov = sc_.overheads;
    // Classes: one per step, then one for driver pods.
    std::vector<std::string> images;
    for (const PlanStep& s : plan_.steps()) {
      const Component& c = s.component;
      PodClass pc;
      pc.request = {c.resources.cpu, c.resources.memory, c.resources.gpu};
      pc.nonzero = {c.resources.cpu ? c.resources.cpu : kDefaultMilliCpuRequest,
                    c.resources.memory ? c.resources.memory : kDefaultMemoryRequest};
      pc.pools = eligible_pools(pools, c.node_selector, c.tolerations);
      auto it = std::find(images.begin(), images.end(), c.image);
      pc.image = static_cast<std::uint32_t>(it - images.begin());
      if (it == images.end()) images.push_back(c.image);
      const ByteCount size = c.image_size >= 0 ? c.image_size : ov.default_image_size;
      pc.pull = ov.image_pull_bytes_per_second > 0
                    ? delay_from_seconds(static_cast<double>(size) / ov.image_pull_bytes_per_second)
                    : Duration::zero();
      // A step's pods can all be pending at once (a fan-out admitted in one instant): make room up
      // front rather than grow the ring by doubling while they are created.
      pc.queue.reserve(static_cast<std::uint32_t>(std::min<std::uint64_t>(s.instances, 1u << 20)));
      classes_.push_back(std::move(pc));
    }
    {
      PodClass driver;
      driver.request = {ov.driver_cpu, ov.driver_memory, 0};
      driver.nonzero = {ov.driver_cpu ? ov.driver_cpu : kDefaultMilliCpuRequest,
                        ov.driver_memory ? ov.driver_memory : kDefaultMemoryRequest};
      driver.pools = eligible_pools(pools, {}, {});
      if (driver.pools == 0)
        driver.pools = pools.size() >= 64 ? ~0ull : (std::uint64_t{1} << pools.size()) - 1;
      driver.image = kNoSlot;
      classes_.push_back(std::move(driver));
    }
    driver_class_ = static_cast<std::uint32_t>(classes_.size() - 1);
    images_ = static_cast<std::uint32_t>(images.size());
    for (PodClass& pc : classes_) {
      pc.never_fits = true;
      for (std::size_t p = 0; p < pools.size(); ++p)
        if ((pc.pools >> p & 1) && pods_per_node(pc, pools[p]) > 0 &&
            (pools[p].count > 0 || pools[p].autoscaling.enabled()))
          pc.never_fits = false;
    }

    const std::uint32_t n = plan_.size();
    channels_[kRead].bandwidth = sc_.cluster.storage.read_bytes_per_second;
    channels_[kRead].phase = Phase::reading;
    channels_[kWrite].bandwidth = sc_.cluster.storage.write_bytes_per_second;
    channels_[kWrite].phase = Phase::writing;
    trace_.attempts.reserve(plan_.task_count() + plan_.task_count() / 8 + 16);
    att_.reserve(trace_.attempts.capacity());
    progress_every_ = std::max<std::uint64_t>(1, n / 100);

    pool_.resize(pools.size());
    for (const NodePool& p : pools) capacity_div_.push_back({Divisor(p.cpu), Divisor(p.memory)});
    std::uint32_t initial = 0;
    for (const NodePool& p : pools) initial += static_cast<std::uint32_t>(std::max(0, initial_count(p)));
    index_.resize(initial);
    // Per-class score trees answer a decision in O(log n); with many classes, keeping every tree up to
    // date on each node change would cost more than it saves, so the node index scan is used instead.
    use_trees_ = opt_.node_search == NodeSearch::score_tree && classes_.size() <= kMaxTreeClasses;
    if (use_trees_) {
      // A class's tree is kept up to date only from its first pod until its step's last task is
      // resolved, so that node changes update the trees of the steps that are running, not of all.
      trees_.assign(classes_.size(), ScoreTree(initial));
      class_left_.assign(classes_.size(), 0);
      for (std::size_t i = 0; i < plan_.steps().size(); ++i) class_left_[i] = plan_.steps()[i].instances;
      if (sc_.overheads.pods_per_task >= 2) class_left_[driver_class_] = plan_.task_count();
    }
    slots_.reserve(initial);
    image_ready_.reserve(static_cast<std::size_t>(initial) * images_);
  }

  void run() {
    for (std::uint32_t p = 0; p < sc_.cluster.node_pools.size(); ++p)
      for (int i = 0; i < initial_count(sc_.cluster.node_pools[p]); ++i)
        add_node(p, SimTime::zero(), SimTime::zero());
    exec_.start();
    if (!exec_.all_resolved()) engine_.run([this](const Event& e) { handle(e); });
    finish();
  }

  Trace take_trace() { return std::move(trace_); }
  [[nodiscard]] SimStats stats() const {
    SimStats s = stats_;
    s.events = engine_.events_processed();
    return s;
  }

 private:
  // ---- helpers -------------------------------------------------------------------------------------
  static int initial_count(const NodePool& p) {
    if (!p.autoscaling.enabled()) return p.count;
    return std::clamp(p.count, p.autoscaling.min, p.autoscaling.max);
  }
  static std::int64_t pods_per_node(const PodClass& c, const NodePool& p) {
    std::int64_t n = p.max_pods;
    if (c.request.cpu > 0) n = std::min<std::int64_t>(n, p.cpu / c.request.cpu);
    if (c.request.memory > 0) n = std::min<std::int64_t>(n, p.memory / c.request.memory);
    if (c.request.gpu > 0) n = std::min<std::int64_t>(n, p.gpu / c.request.gpu);
    return std::max<std::int64_t>(0, n);
  }
  [[nodiscard]] std::uint32_t class_of_step(TaskId t) const { return plan_.step_of(t); }
  [[nodiscard]] const Component& component(TaskId t) const {
    return plan_.steps()[plan_.step_of(t)].component;
  }

  [[nodiscard]] double input_bytes(TaskId t) const { return sample_input_bytes(plan_, t, opt_.seed); }
  [[nodiscard]] double output_bytes(TaskId t) const { return sample_output_bytes(plan_, t, opt_.seed); }

  void handle(const Event& e) {
    if (e.at() > opt_.horizon ||
        (opt_.stop != nullptr && (engine_.events_processed() & 4095) == 0 && opt_.stop->load())) {
      engine_.stop();
      return;
    }
    switch (e.kind()) {
      case kAdmit:
        on_admit();
        break;
      case kDecide:
        on_decide();
        break;
      case kClassWake:
        on_class_wake(e.target, e.gen);
        break;
      case kReadStart:
        on_read_start(e.target);
        break;
      case kStorage:
        on_storage(e.target, e.gen);
        break;
      case kRunDone:
        on_run_done(e.target);
        break;
      case kRetry:
        create_attempt(e.target);
        break;
      case kDriverDone:
        on_driver_done(e.target);
        break;
      case kNodeFail:
        on_node_fail(e.target, e.gen);
        break;
      case kNodeUp:
        node_up(e.target);
        break;
      case kScaleUpCheck:
        on_scale_up_check(e.target);
        break;
      case kScaleDown:
        on_scale_down(e.target, e.gen);
        break;
      default:
        assert(false && "unknown event kind");
    }
  }

  // ---- tasks: the Plan's execution rules are core's Execution; these are its hooks -------------------
 public:
  // A component task became ready: admit it with the others that became ready at this instant.
  void on_ready(TaskId t) {
    ready_batch_.push_back(t);
    if (!admit_pending_) {
      admit_pending_ = true;
      engine_.schedule(Duration::zero(), kAdmit, 0);
    }
  }
  // Admitted past its limits: its first pod is created now.
  void on_start(TaskId t) { create_attempt(t); }
  void on_resolved(TaskId t) {
    const std::uint64_t resolved = exec_.resolved_count();
    if (opt_.progress && resolved % progress_every_ == 0)  // no division when nobody listens
      opt_.progress(static_cast<double>(resolved) / static_cast<double>(plan_.size()));
    if (!plan_.is_join(t) && use_trees_) {
      if (--class_left_[plan_.step_of(t)] == 0) set_live(plan_.step_of(t), false);
      if (sc_.overheads.pods_per_task >= 2 && --class_left_[driver_class_] == 0)
        set_live(driver_class_, false);
    }
  }
  void on_all_resolved() {
    end_ = engine_.now();
    engine_.stop();
  }

 private:
  void on_admit() {
    admit_pending_ = false;
    admitting_.swap(ready_batch_);
    // Usually already in id order (tasks become ready in id order within an instant).
    if (!std::is_sorted(admitting_.begin(), admitting_.end()))
      std::sort(admitting_.begin(), admitting_.end());
    for (TaskId t : admitting_) exec_.admit(t);
    admitting_.clear();
  }

  // ---- pods -------------------------------------------------------------------------------------------
  void create_attempt(TaskId t) {
    const auto a = static_cast<std::uint32_t>(trace_.attempts.size());
    // Every field given: value-initializing the record first (emplace_back()) made GCC clear its 88
    // bytes with `rep stos`, whose start-up cost was a tenth of a simple task's whole simulation.
    trace_.attempts.push_back(AttemptRecord{.task = t,
                                            .step = plan_.step_of(t),
                                            .item = plan_.item(t),
                                            .attempt = exec_.next_attempt(t),
                                            .node = -1,
                                            .pod = kNoPod,
                                            .submitted = engine_.now(),
                                            .scheduled = kNever,
                                            .started = kNever,
                                            .finished = kNever,
                                            .outcome = Outcome::succeeded,
                                            .error = kNoError,
                                            .image_pull = Duration::zero(),
                                            .input_read = Duration::zero(),
                                            .output_write = Duration::zero()});
    att_.push_back(Attempt{});
    PodClass& c = classes_[class_of_step(t)];
    const bool driver = sc_.overheads.pods_per_task >= 2;
    if (c.never_fits || (driver && classes_[driver_class_].never_fits)) {
      trace_.attempts[a].finished = engine_.now();
      trace_.attempts[a].outcome = Outcome::failed;
      att_[a].phase = Phase::finished;
      exec_.fail(t);
      return;
    }
    if (driver) {
      att_[a].phase = Phase::driver_queued;
      enqueue(driver_class_, a);
    } else {
      att_[a].phase = Phase::queued;
      enqueue(class_of_step(t), a);
    }
  }

  void enqueue(std::uint32_t c, std::uint32_t a) {
    att_[a].seq = pod_seq_++;
    PodClass& pc = classes_[c];
    if (use_trees_ && !(live_mask_ >> c & 1)) {
      set_live(c, true);
      trees_[c].rebuild([&](std::uint32_t slot) {
        return fits_on(pc, slots_[slot]) ? static_cast<std::int32_t>(score_node(pc, slots_[slot])) : -1;
      });
    }
    if (pc.queue.empty()) {
      set_state(pc, ClassState::active);
      pc.fails = 0;
    }
    pc.queue.push_back(a);
    kick_scheduler();
  }

  [[nodiscard]] bool has_candidate() const {
    for (const PodClass& c : classes_)
      if (!c.queue.empty() && c.state != ClassState::unschedulable) return true;
    return false;
  }

  void kick_scheduler() {
    if (decide_pending_ || !has_candidate()) return;
    decide_pending_ = true;
    engine_.schedule(decision_cost_, kDecide, 0);
  }

  // One scheduling cycle: the oldest pod of the active queue, else (SchedulerPopFromBackoffQ) the pod
  // whose backoff ends first; filter and score; bind or mark its class unschedulable.
  void on_decide() {
    decide_pending_ = false;
    std::uint32_t best = kNoSlot;
    for (std::uint32_t c = 0; c < classes_.size(); ++c) {
      const PodClass& pc = classes_[c];
      if (pc.queue.empty() || pc.state != ClassState::active) continue;
      if (best == kNoSlot || att_[pc.queue.front()].seq < att_[classes_[best].queue.front()].seq) best = c;
    }
    if (best == kNoSlot) {
      for (std::uint32_t c = 0; c < classes_.size(); ++c) {
        const PodClass& pc = classes_[c];
        if (pc.queue.empty() || pc.state != ClassState::backoff) continue;
        if (best == kNoSlot || pc.backoff_until < classes_[best].backoff_until ||
            (pc.backoff_until == classes_[best].backoff_until &&
             att_[pc.queue.front()].seq < att_[classes_[best].queue.front()].seq))
          best = c;
      }
    }
    if (best == kNoSlot) return;
    PodClass& pc = classes_[best];
    const std::uint32_t a = pc.queue.pop_front();
    ++stats_.scheduling_attempts;
    const std::uint32_t slot = find_node(best);
    if (slot != kNoSlot) {
      set_state(pc, ClassState::active);
      bind(best, a, slot);
      if (pc.queue.empty()) {
        pc.fails = 0;
        pc.blocked_since = kNever;
      }
    } else {
      pc.queue.push_front(a);
      mark_unschedulable(best);
    }
    kick_scheduler();
  }

  // kube-scheduler's findNodesThatFitPod + prioritizeNodes + selectHost. The search starts at
  // next_start_ and stops after numFeasibleNodesToFind fits; the start then moves past the nodes looked
  // at. Scores are cached per (node, class) until the node changes: with hundreds of nodes scored per
  // decision, nearly all of them are unchanged since the previous one. The winner is drawn uniformly
  // among the top-scored nodes, as selectHost's reservoir sampling does, with one draw per decision.
  std::uint32_t find_node(std::uint32_t c) {
    if (use_trees_) return find_node_tree(c);
    const PodClass& pc = classes_[c];
    if (alive_nodes_ == 0 || !index_.may_fit(pc.request, pc.pools)) return kNoSlot;
    const std::int64_t want =
        num_feasible_nodes_to_find(sc_.cluster.scheduler.percentage_of_nodes_to_score, alive_nodes_);
    const std::uint32_t tag = c + 1;
    // Plain pointers: the visitor runs for every feasible node, and vector members would be reloaded.
    ScoreCache* cache = score_cache_.data();
    std::uint32_t* top = top_.data();
    std::size_t tops = 0;
    std::int64_t found = 0, best_score = -1;
    const std::uint32_t processed =
        index_.for_each_fit(next_start_, pc.request, pc.pools, [&](std::uint32_t slot) {
          ScoreCache& entry = cache[slot];
          if (entry.cls != tag) entry = {tag, static_cast<std::int32_t>(score_node(pc, slots_[slot]))};
          const std::int64_t score = entry.score;
          if (score > best_score) {
            best_score = score;
            tops = 0;
          }
          if (score == best_score) top[tops++] = slot;
          return ++found < want;
        });
    stats_.nodes_scored += static_cast<std::uint64_t>(found);
    if (index_.slots() > 0) next_start_ = wrap(next_start_ + processed, index_.slots());
    if (tops == 0) return kNoSlot;
    return tops == 1 ? top[0] : top[sched_rng_.below(tops)];
  }

  // The same decision as find_node's scan, from the class's score tree: the window of the first `want`
  // feasible nodes from next_start_, its best score, and the j-th of the nodes sharing it.
  std::uint32_t find_node_tree(std::uint32_t c) {
    const ScoreTree& tree = trees_[c];
    if (alive_nodes_ == 0 || tree.feasible() == 0) return kNoSlot;
    const std::int64_t want =
        num_feasible_nodes_to_find(sc_.cluster.scheduler.percentage_of_nodes_to_score, alive_nodes_);
    const ScoreTree::Window w = tree.window(next_start_, static_cast<std::uint32_t>(want));
    stats_.nodes_scored += w.found;
    next_start_ = wrap(next_start_ + w.passed, tree.slots());
    return tree.nth_best(w, w.ties == 1 ? 0 : static_cast<std::uint32_t>(sched_rng_.below(w.ties)));
  }

  [[nodiscard]] bool fits_on(const PodClass& pc, const Slot& s) const {
    const NodePool& p = sc_.cluster.node_pools[s.pool];
    return s.alive && (pc.pools >> s.pool & 1) && s.pods < p.max_pods &&
           p.cpu - s.cpu_used >= pc.request.cpu && p.memory - s.memory_used >= pc.request.memory &&
           p.gpu - s.gpu_used >= pc.request.gpu;
  }

  [[nodiscard, gnu::always_inline]] std::int64_t score_node(const PodClass& pc, const Slot& s) const {
    const NodePool& p = sc_.cluster.node_pools[s.pool];
    switch (sc_.cluster.scheduler.policy) {
      // least/most_allocated_score's formulas with the pool's divisors (no divide instruction); with
      // zero capacities the general functions handle the weights.
      case ScorePolicy::least_allocated:
        if (p.cpu == 0 || p.memory == 0)
          return least_allocated_score({s.nz_cpu + pc.nonzero.cpu, s.nz_memory + pc.nonzero.memory},
                                       {p.cpu, p.memory});
        return (least_requested(s.nz_cpu + pc.nonzero.cpu, p.cpu, capacity_div_[s.pool].cpu) +
                least_requested(s.nz_memory + pc.nonzero.memory, p.memory, capacity_div_[s.pool].memory)) /
               2;
      case ScorePolicy::most_allocated:
        if (p.cpu == 0 || p.memory == 0)
          return most_allocated_score({s.nz_cpu + pc.nonzero.cpu, s.nz_memory + pc.nonzero.memory},
                                      {p.cpu, p.memory});
        return (most_requested(s.nz_cpu + pc.nonzero.cpu, p.cpu, capacity_div_[s.pool].cpu) +
                most_requested(s.nz_memory + pc.nonzero.memory, p.memory, capacity_div_[s.pool].memory)) /
               2;
      case ScorePolicy::balanced_allocation:
        return balanced_allocation_score({s.cpu_used + pc.request.cpu, s.memory_used + pc.request.memory},
                                         {p.cpu, p.memory});
    }
    return 0;
  }

  void mark_unschedulable(std::uint32_t c) {
    PodClass& pc = classes_[c];
    set_state(pc, ClassState::unschedulable);
    ++pc.fails;
    const SchedulerConfig& sch = sc_.cluster.scheduler;
    Duration backoff = sch.initial_backoff;
    for (int i = 1; i < pc.fails && backoff < sch.max_backoff; ++i) backoff = backoff * 2;
    pc.backoff_until = engine_.now() + std::min(backoff, sch.max_backoff);
    engine_.schedule(kUnschedulableFlush, kClassWake, c, ++pc.wake_gen);
    if (pc.blocked_since == kNever) pc.blocked_since = engine_.now();
    arm_autoscaler(c);
  }

  // Every class state change goes through here, to keep count of the unschedulable classes.
  void set_state(PodClass& pc, ClassState state) {
    unschedulable_classes_ += (state == ClassState::unschedulable ? 1 : 0);
    unschedulable_classes_ -= (pc.state == ClassState::unschedulable ? 1 : 0);
    pc.state = state;
  }

  // A pod ended or a node came up: unschedulable pods move to the active or backoff queue.
  void on_cluster_change() {
    if (unschedulable_classes_ == 0) {  // the usual case: nothing waits for a change
      kick_scheduler();
      return;
    }
    for (std::uint32_t c = 0; c < classes_.size(); ++c) {
      PodClass& pc = classes_[c];
      if (pc.queue.empty() || pc.state != ClassState::unschedulable) continue;
      ++pc.wake_gen;
      if (pc.backoff_until <= engine_.now()) {
        set_state(pc, ClassState::active);
      } else {
        set_state(pc, ClassState::backoff);
        engine_.schedule_at(pc.backoff_until, kClassWake, c, pc.wake_gen);
      }
    }
    kick_scheduler();
  }

  void on_class_wake(std::uint32_t c, std::uint32_t gen) {
    PodClass& pc = classes_[c];
    if (gen != pc.wake_gen || pc.queue.empty()) return;
    set_state(pc, ClassState::active);
    kick_scheduler();
  }

  void bind(std::uint32_t c, std::uint32_t a, std::uint32_t slot) {
    const PodClass& pc = classes_[c];
    Slot& s = slots_[slot];
    if (s.pods == 0) ++s.idle_gen;
    s.cpu_used += pc.request.cpu;
    s.memory_used += pc.request.memory;
    s.gpu_used += pc.request.gpu;
    s.nz_cpu += pc.nonzero.cpu;
    s.nz_memory += pc.nonzero.memory;
    ++s.pods;
    update_index(slot);
    Attempt& at = att_[a];
    at.slot = slot;
    at.prev = kNoSlot;
    at.next = s.head;
    if (s.head != kNoSlot) att_[s.head].prev = a;
    s.head = a;
    const Duration bind_latency = sc_.cluster.scheduler.bind_latency;
    if (at.phase == Phase::driver_queued) {
      at.phase = Phase::driver_on_node;
    } else {
      at.phase = Phase::starting;
      trace_.attempts[a].node = static_cast<std::int32_t>(s.record);
      trace_.attempts[a].scheduled = engine_.now() + bind_latency;
    }
    schedule_start(a, engine_.now() + bind_latency);
  }

  void release(std::uint32_t a, std::uint32_t c) {
    Attempt& at = att_[a];
    const std::uint32_t slot = at.slot;
    assert(slot != kNoSlot);
    const PodClass& pc = classes_[c];
    Slot& s = slots_[slot];
    s.cpu_used -= pc.request.cpu;
    s.memory_used -= pc.request.memory;
    s.gpu_used -= pc.request.gpu;
    s.nz_cpu -= pc.nonzero.cpu;
    s.nz_memory -= pc.nonzero.memory;
    --s.pods;
    if (at.prev != kNoSlot)
      att_[at.prev].next = at.next;
    else
      s.head = at.next;
    if (at.next != kNoSlot) att_[at.next].prev = at.prev;
    at.slot = at.next = at.prev = kNoSlot;
    update_index(slot);
    if (s.pods == 0) became_idle(slot);
    on_cluster_change();
  }

  // A class's tree is live (kept up to date) while its bit is set; a node change visits the live ones.
  void set_live(std::uint32_t c, bool live) {
    if (live)
      live_mask_ |= 1u << c;
    else
      live_mask_ &= ~(1u << c);
  }

  // The node's state changed: update whichever search structure is in use.
  [[gnu::always_inline]] void update_index(std::uint32_t slot) {
    const Slot& s = slots_[slot];
    if (use_trees_) {
      for (std::uint32_t live = live_mask_; live != 0; live &= live - 1) {
        const auto c = static_cast<std::uint32_t>(__builtin_ctz(live));
        trees_[c].set(slot,
                      fits_on(classes_[c], s) ? static_cast<std::int32_t>(score_node(classes_[c], s)) : -1);
      }
      return;
    }
    score_cache_[slot].cls = 0;  // its cached score is stale
    const NodePool& p = sc_.cluster.node_pools[s.pool];
    index_.set(slot, {p.cpu - s.cpu_used, p.memory - s.memory_used, p.gpu - s.gpu_used, p.max_pods - s.pods},
               s.pool);
  }

  // What follows the binding (at `bound`), computed now: every bind has the same latency, so pods are
  // bound in the order they were decided and the node's pull queue sees the same order either way; this
  // saves an event per pod.
  void schedule_start(std::uint32_t a, SimTime bound) {
    Attempt& at = att_[a];
    const Overheads& ov = sc_.overheads;
    if (at.phase == Phase::driver_on_node) {
      engine_.schedule_at(bound + ov.sandbox_start + ov.driver_pod_duration, kDriverDone, a);
      return;
    }
    AttemptRecord& r = trace_.attempts[a];
    const PodClass& pc = classes_[class_of_step(r.task)];
    Slot& s = slots_[at.slot];
    SimTime& ready = image_ready_[static_cast<std::size_t>(at.slot) * images_ + pc.image];
    if (ready == kNever) {
      // Not on the node and not being pulled: pull it, behind the node's other pulls when kubelet
      // serializes them (its default), else at once (each parallel pull at the full bandwidth).
      const SimTime start = sc_.overheads.serialize_image_pulls ? std::max(bound, s.pull_free) : bound;
      ready = start + pc.pull;
      s.pull_free = std::max(s.pull_free, ready);
    }
    const Duration wait = std::max(Duration::zero(), ready - bound);
    r.image_pull = wait;
    const SimTime start = bound + wait + ov.sandbox_start;
    // Without input to read, the run's start is known now too: schedule its end directly.
    if (channels_[kRead].bandwidth <= 0 || input_bytes(r.task) <= 0)
      start_run(a, start);
    else
      engine_.schedule_at(start, kReadStart, a);
  }

  void on_read_start(std::uint32_t a) {
    if (att_[a].phase != Phase::starting) return;
    const double bytes = input_bytes(trace_.attempts[a].task);
    if (bytes > 0 && channels_[kRead].bandwidth > 0)
      start_transfer(kRead, a, bytes);
    else
      start_run(a, engine_.now());
  }

  // The main container starts at `at` (now, or later when nothing can delay it): sample its run.
  void start_run(std::uint32_t a, SimTime at_time) {
    Attempt& at = att_[a];
    AttemptRecord& r = trace_.attempts[a];
    at.phase = Phase::running;
    r.started = at_time;
    r.input_read = r.started - (r.scheduled + r.image_pull + sc_.overheads.sandbox_start);
    const AttemptSample sample = sample_attempt(component(r.task), plan_, r.task, r.attempt, opt_.seed);
    double ns = sample.run_ns;
    const double speed = sc_.cluster.node_pools[slots_[at.slot].pool].speed;
    if (speed > 0 && speed != 1) ns /= speed;  // a division is slow, and most nodes have speed 1
    at.will_fail = sample.fails;
    engine_.schedule_at(at_time + delay_from_ns(ns), kRunDone, a);
  }

  void on_run_done(std::uint32_t a) {
    Attempt& at = att_[a];
    if (at.phase != Phase::running) return;
    // A successful run writes its output, if any, before the pod ends; a failed one writes nothing.
    if (!at.will_fail && channels_[kWrite].bandwidth > 0) {
      const double bytes = output_bytes(trace_.attempts[a].task);
      if (bytes > 0) {
        trace_.attempts[a].output_write = engine_.now();  // when writing began, until it ends
        start_transfer(kWrite, a, bytes);
        return;
      }
    }
    end_attempt(a);
  }

  // The pod's main container exited after its run (and output write): free the node, then the task is
  // done, or retried, or failed for good.
  void end_attempt(std::uint32_t a) {
    Attempt& at = att_[a];
    AttemptRecord& r = trace_.attempts[a];
    at.phase = Phase::finished;
    r.finished = engine_.now();
    const TaskId t = r.task;
    release(a, class_of_step(t));
    if (!at.will_fail) {
      r.outcome = Outcome::succeeded;
      exec_.succeeded(t);
      return;
    }
    r.outcome = Outcome::failed;
    if (const auto delay = exec_.attempt_failed(t)) engine_.schedule(*delay, kRetry, t);
  }

  void on_driver_done(std::uint32_t a) {
    if (att_[a].phase != Phase::driver_on_node) return;
    att_[a].phase = Phase::queued;
    release(a, driver_class_);
    enqueue(class_of_step(trace_.attempts[a].task), a);
  }

  // ---- shared storage: two channels (reads, writes), each processor sharing -------------------------
  void start_transfer(std::uint32_t dir, std::uint32_t a, double bytes) {
    Channel& ch = channels_[dir];
    att_[a].phase = ch.phase;
    channel_advance(ch);
    att_[a].transfer_target = ch.v + bytes;
    ch.heap.push_back({att_[a].transfer_target, a});
    std::push_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
    ++ch.active;
    channel_reschedule(dir);
  }

  void channel_advance(Channel& ch) {
    const SimTime now = engine_.now();
    if (ch.active > 0)
      ch.v +=
          static_cast<double>((now - ch.last).ns()) * 1e-9 * ch.bandwidth / static_cast<double>(ch.active);
    ch.last = now;
  }

  [[nodiscard]] bool transfer_valid(const Channel& ch, const Transfer& x) const {
    return att_[x.attempt].phase == ch.phase && att_[x.attempt].transfer_target == x.target;
  }

  void channel_reschedule(std::uint32_t dir) {
    Channel& ch = channels_[dir];
    while (!ch.heap.empty() && !transfer_valid(ch, ch.heap.front())) {
      std::pop_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
      ch.heap.pop_back();
    }
    ++ch.gen;
    if (ch.active == 0) return;
    const double left = std::max(0.0, ch.heap.front().target - ch.v);
    const double secs = left * static_cast<double>(ch.active) / ch.bandwidth;
    engine_.schedule(delay_from_ns(std::ceil(secs * 1e9 - 1e-6)), kStorage, dir, ch.gen);
  }

  void on_storage(std::uint32_t dir, std::uint32_t gen) {
    Channel& ch = channels_[dir];
    if (gen != ch.gen) return;
    channel_advance(ch);
    // The event was timed for the first transfer to end; land exactly on its target to avoid drift.
    ch.v = std::max(ch.v, ch.heap.front().target);
    while (!ch.heap.empty()) {
      const Transfer x = ch.heap.front();
      if (transfer_valid(ch, x) && x.target > ch.v) break;
      std::pop_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
      ch.heap.pop_back();
      if (!transfer_valid(ch, x)) continue;
      --ch.active;
      if (dir == kRead) {
        start_run(x.attempt, engine_.now());
      } else {
        AttemptRecord& r = trace_.attempts[x.attempt];
        r.output_write = engine_.now() - r.output_write;
        end_attempt(x.attempt);
      }
    }
    channel_reschedule(dir);
  }

  // The attempt stops its transfer (its node went away).
  void stop_transfer(std::uint32_t dir, std::uint32_t a) {
    Channel& ch = channels_[dir];
    channel_advance(ch);
    --ch.active;
    att_[a].phase = Phase::evicted;
    channel_reschedule(dir);
  }

  // ---- nodes: pools, failures, autoscaling ---------------------------------------------------------
  void add_node(std::uint32_t pool, SimTime up, SimTime billed_from) {
    const NodePool& p = sc_.cluster.node_pools[pool];
    NodeRecord r;
    r.name = p.name + "-" + std::to_string(pool_[pool].made++);
    r.pool = p.name;
    r.cpu = p.cpu;
    r.memory = p.memory;
    r.gpu = p.gpu;
    r.price_per_hour = p.spot ? p.price_per_hour * (1 - p.spot_discount) : p.price_per_hour;
    r.up = up;
    r.down = kNever;
    r.billed_from = billed_from;
    const auto record = static_cast<std::uint32_t>(trace_.nodes.size());
    trace_.nodes.push_back(std::move(r));
    ++pool_[pool].nodes;
    record_pool_.push_back(pool);
    if (up == engine_.now()) {
      node_up(record, false);
    } else {
      ++pool_[pool].booting;
      engine_.schedule_at(up, kNodeUp, record);
    }
  }

  void node_up(std::uint32_t record, bool booted = true) {
    const std::uint32_t pool = record_pool_[record];
    if (booted) --pool_[pool].booting;
    std::uint32_t slot = 0;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(Slot{});
      score_cache_.push_back({});
      top_.push_back(0);
      image_ready_.resize(image_ready_.size() + images_);
      index_.resize(slot + 1);
      for (ScoreTree& t : trees_) t.resize(slot + 1);
    }
    Slot& s = slots_[slot];
    const std::uint32_t gen = s.gen;
    const std::uint32_t idle_gen = s.idle_gen;
    s = Slot{};
    s.gen = gen;
    s.idle_gen = idle_gen;
    s.pool = pool;
    s.record = record;
    s.alive = true;
    std::fill_n(image_ready_.begin() + static_cast<std::ptrdiff_t>(slot) * images_, images_, kNever);
    update_index(slot);
    ++alive_nodes_;
    const NodePool& p = sc_.cluster.node_pools[pool];
    if (p.mtbf > Duration::zero() || (p.spot && p.spot_mean_reclaim > Duration::zero())) {
      Rng rng = Rng::stream(opt_.seed, Stream::node, record);
      const double fail = p.mtbf > Duration::zero() ? rng.exponential(p.mtbf.seconds()) : HUGE_VAL;
      const double reclaim = p.spot && p.spot_mean_reclaim > Duration::zero()
                                 ? rng.exponential(p.spot_mean_reclaim.seconds())
                                 : HUGE_VAL;
      const double t = std::min(fail, reclaim);
      if (t < opt_.horizon.seconds()) engine_.schedule(delay_from_seconds(t), kNodeFail, slot, s.gen);
    }
    became_idle(slot);
    if (booted) on_cluster_change();
  }

  void became_idle(std::uint32_t slot) {
    Slot& s = slots_[slot];
    const NodePool& p = sc_.cluster.node_pools[s.pool];
    if (!p.autoscaling.enabled()) return;
    engine_.schedule(p.autoscaling.scale_down_idle, kScaleDown, slot, ++s.idle_gen);
  }

  void remove_node(std::uint32_t slot) {
    Slot& s = slots_[slot];
    trace_.nodes[s.record].down = engine_.now();
    s.alive = false;
    ++s.gen;
    ++s.idle_gen;
    if (!use_trees_) index_.clear(slot);
    for (std::uint32_t live = live_mask_; live != 0; live &= live - 1)
      trees_[static_cast<std::uint32_t>(__builtin_ctz(live))].set(slot, -1);
    free_slots_.push_back(slot);
    --alive_nodes_;
    --pool_[s.pool].nodes;
  }

  void on_node_fail(std::uint32_t slot, std::uint32_t gen) {
    Slot& s = slots_[slot];
    if (!s.alive || s.gen != gen) return;
    // Every pod on the node is evicted; its task runs again as a new attempt (not counted as a retry).
    evicted_.clear();
    for (std::uint32_t a = s.head; a != kNoSlot; a = att_[a].next) evicted_.push_back(a);
    for (std::uint32_t a : evicted_) {
      AttemptRecord& r = trace_.attempts[a];
      if (att_[a].phase == Phase::reading) stop_transfer(kRead, a);
      if (att_[a].phase == Phase::writing) {
        r.output_write = engine_.now() - r.output_write;
        stop_transfer(kWrite, a);
      }
      att_[a].phase = Phase::evicted;
      if (r.started > engine_.now()) r.started = kNever;  // its start was scheduled, not reached
      att_[a].slot = att_[a].next = att_[a].prev = kNoSlot;
      r.outcome = Outcome::evicted;
      r.finished = engine_.now();
    }
    s.head = kNoSlot;
    const std::uint32_t pool = s.pool;
    remove_node(slot);
    // The pool replaces the node; the replacement is billed from now and usable after the boot time.
    add_node(pool, engine_.now() + sc_.cluster.node_pools[pool].autoscaling.boot_time, engine_.now());
    ++stats_.nodes_added;
    for (std::uint32_t a : evicted_) create_attempt(trace_.attempts[a].task);
  }

  void arm_autoscaler(std::uint32_t c) {
    PodClass& pc = classes_[c];
    if (pc.scale_check_pending) return;
    const auto& pools = sc_.cluster.node_pools;
    for (std::size_t p = 0; p < pools.size(); ++p) {
      if (!(pc.pools >> p & 1) || !pools[p].autoscaling.enabled() || pods_per_node(pc, pools[p]) == 0)
        continue;
      pc.scale_check_pending = true;
      engine_.schedule(pools[p].autoscaling.scale_up_delay, kScaleUpCheck, c);
      return;
    }
  }

  // Cluster-autoscaler-like scale up: pods of the class unschedulable for at least the delay get enough
  // new nodes (from the first eligible pool with room) to hold the ones the booting nodes will not.
  void on_scale_up_check(std::uint32_t c) {
    PodClass& pc = classes_[c];
    pc.scale_check_pending = false;
    if (pc.queue.empty() || pc.blocked_since == kNever) return;
    const auto& pools = sc_.cluster.node_pools;
    for (std::uint32_t p = 0; p < pools.size(); ++p) {
      const NodePool& np = pools[p];
      const std::int64_t per_node = pods_per_node(pc, np);
      if (!(pc.pools >> p & 1) || !np.autoscaling.enabled() || per_node == 0) continue;
      if (engine_.now() - pc.blocked_since < np.autoscaling.scale_up_delay) {
        pc.scale_check_pending = true;
        engine_.schedule_at(pc.blocked_since + np.autoscaling.scale_up_delay, kScaleUpCheck, c);
        return;
      }
      const std::int64_t uncovered = static_cast<std::int64_t>(pc.queue.size()) - pool_[p].booting * per_node;
      const std::int64_t room = np.autoscaling.max - pool_[p].nodes;
      if (uncovered <= 0) break;
      if (room <= 0) continue;
      const std::int64_t add = std::min(room, (uncovered + per_node - 1) / per_node);
      for (std::int64_t i = 0; i < add; ++i) {
        add_node(p, engine_.now() + np.autoscaling.boot_time, engine_.now());
        ++stats_.nodes_added;
      }
      break;
    }
    // Look again later while the backlog lasts (the cluster autoscaler scans every 10 s).
    pc.scale_check_pending = true;
    engine_.schedule(Duration::from_s(10), kScaleUpCheck, c);
  }

  void on_scale_down(std::uint32_t slot, std::uint32_t idle_gen) {
    Slot& s = slots_[slot];
    if (!s.alive || s.idle_gen != idle_gen || s.pods != 0) return;
    const NodePool& p = sc_.cluster.node_pools[s.pool];
    if (pool_[s.pool].nodes <= p.autoscaling.min) return;
    remove_node(slot);
  }

  // ---- the end ----------------------------------------------------------------------------------------
  void finish() {
    const SimTime end = exec_.all_resolved() ? end_ : std::min(engine_.now(), opt_.horizon);
    // Whatever did not finish (the horizon was reached) is cancelled and its task reported failed.
    for (std::size_t a = 0; a < trace_.attempts.size(); ++a) {
      AttemptRecord& r = trace_.attempts[a];
      if (r.finished != kNever) continue;
      if (att_[a].phase == Phase::writing) r.output_write = end - r.output_write;
      r.finished = end;
      r.outcome = Outcome::cancelled;
      if (r.started > end) r.started = kNever;
    }
    trace_.tasks_failed = exec_.tasks_failed() + exec_.unfinished_tasks();
    for (NodeRecord& n : trace_.nodes) {
      if (n.down != kNever) continue;
      n.down = end;
      if (n.up > end) n.up = end;
    }
    trace_.pod_prefixes.reserve(trace_.steps.size());
    for (const std::string& step : trace_.steps) trace_.pod_prefixes.push_back(pod_name_prefix(step));
  }

  const Scenario& sc_;
  const Plan& plan_;
  const SimOptions& opt_;
  Engine engine_;
  Trace trace_;
  SimStats stats_;
  Rng sched_rng_;
  Duration decision_cost_;

  // Tasks.
  Execution<Model> exec_;
  std::vector<TaskId> ready_batch_, admitting_;
  bool admit_pending_ = false;
  std::uint64_t progress_every_ = 1;
  SimTime end_;

  // Pods and the scheduler.
  std::vector<Attempt> att_;
  std::vector<PodClass> classes_;
  std::uint32_t driver_class_ = 0;
  std::uint64_t pod_seq_ = 0;
  bool decide_pending_ = false;
  std::uint32_t unschedulable_classes_ = 0;  // classes in state unschedulable
  std::uint32_t next_start_ = 0;
  std::vector<std::uint32_t> evicted_;
  std::vector<std::uint32_t> top_;  // the top-scored nodes of the current decision (one per slot)

  // Nodes.
  NodeIndex index_;
  bool use_trees_ = false;
  std::vector<ScoreTree> trees_;  // per class, when use_trees_
  std::uint32_t live_mask_ = 0;   // bit c: class c's tree is up to date (at most kMaxTreeClasses classes)
  std::vector<std::uint64_t> class_left_;  // unresolved tasks that may still create pods of the class
  std::vector<Slot> slots_;
  std::vector<ScoreCache> score_cache_;  // per slot, reset when the node changes
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> record_pool_;
  std::vector<PoolState> pool_;
  struct CapacityDivisors {
    Divisor cpu, memory;
  };
  std::vector<CapacityDivisors> capacity_div_;  // per pool, for scoring without dividing
  std::uint32_t images_ = 0;
  std::vector<SimTime> image_ready_;  // per slot and image: when the image is (or will be) on the node
  std::int64_t alive_nodes_ = 0;

  // Storage.
  Channel channels_[2];  // kRead, kWrite
};

}  // namespace

Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options, SimStats& stats) {
  Model model(scenario, plan, options);
  model.run();
  stats = model.stats();
  return model.take_trace();
}

Trace simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options) {
  SimStats stats;
  return simulate(scenario, plan, options, stats);
}

}  // namespace shardflow::sim
