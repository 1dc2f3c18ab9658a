#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/execution.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/k8s/controller.hpp>
#include <shardflow/k8s/manifests.hpp>

namespace shardflow::k8s {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string url_encode(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", u);
      out += buf;
    }
  }
  return out;
}

// "2026-11-30T14:05:01Z" (or with fractional seconds) as nanoseconds since the epoch; nullopt if absent.
std::optional<std::int64_t> parse_time(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  std::tm tm{};
  int frac_digits = 0;
  std::int64_t frac = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return std::nullopt;
  if (s.size() > 19 && s[19] == '.')
    for (std::size_t i = 20; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i)
      if (frac_digits < 9) frac = frac * 10 + (s[i] - '0'), ++frac_digits;
  while (frac_digits < 9) frac *= 10, ++frac_digits;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm)) * 1'000'000'000 + frac;
}

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A Kubernetes quantity ("4", "500m", "16Gi", "64G", "1e3") as a double in base units.
double quantity(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return 0;
  const std::string s = v.get<std::string>();
  std::size_t end = 0;
  double x = 0;
  try {
    x = std::stod(s, &end);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string suffix = s.substr(end);
  static const std::pair<const char*, double> kSuffixes[] = {
      {"m", 1e-3},       {"k", 1e3},           {"M", 1e6},
      {"G", 1e9},        {"T", 1e12},          {"Ki", 1024.0},
      {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
  for (const auto& [name, factor] : kSuffixes)
    if (suffix == name) return x * factor;
  return x;
}

const json* condition(const json& obj, std::string_view type) {
  const auto st = obj.find("status");
  if (st == obj.end() || !st->is_object()) return nullptr;
  const auto cs = st->find("conditions");
  if (cs == st->end() || !cs->is_array()) return nullptr;
  for (const json& c : *cs)
    if (c.value("type", "") == type) return &c;
  return nullptr;
}

// obj[key] when obj is an object that has it, else null: operator[] of a const json on a missing key is
// an assertion (undefined behaviour without asserts), and an API answer may lack any key.
const json& member(const json& obj, const char* key) {
  static const json null;
  if (!obj.is_object()) return null;
  const auto it = obj.find(key);
  return it == obj.end() ? null : *it;
}

std::string str_at(const json& obj, std::initializer_list<const char*> path) {
  const json* p = &obj;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return "";
    p = &(*p)[k];
  }
  return p->is_string() ? p->get<std::string>() : "";
}

// One event from a watcher thread: a pod's or a Job's new state, and when it arrived.
struct Event {
  enum class Kind : std::uint8_t { pod, job } kind = Kind::pod;
  std::string type;  // ADDED, MODIFIED, DELETED, or SYNC (from a list)
  json object;
  std::int64_t at = 0;  // receive time, ns since the run started
};

// What the controller knows of one pod (one attempt).
struct PodState {
  std::uint32_t attempt = 0;  // index into the trace's attempts
  bool scheduled = false, started = false, ended = false;
};

struct JobState {
  RunJob spec;
  bool created = false;
  std::int64_t failed_at = -1;  // the Job's Failed condition was seen then
  std::string failed_message;
  bool warned = false;  // that a pod of it cannot be scheduled
};

// Follows one kind of object of the run (list + watch), pushing events to the controller's queue.
class Watcher {
 public:
  using Push = std::function<void(Event::Kind, std::string type, json obj)>;
  Watcher(Client& client, std::string collection, std::string selector, Event::Kind kind, Push push,
          const std::atomic<bool>& stop)
      : client_(client),
        collection_(std::move(collection)),
        selector_(std::move(selector)),
        kind_(kind),
        push_(std::move(push)),
        stop_(stop) {}

  // Lists once (throws what the list throws), then watches on a thread until stop.
  void start() {
    list();
    thread_ = std::thread([this] { loop(); });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // The error that ended the watch for good (a refused request), if any.
  [[nodiscard]] std::exception_ptr error() const {
    const std::lock_guard lock(mu_);
    return error_;
  }
  [[nodiscard]] std::uint64_t relists() const { return relists_; }
  // Since when (Clock, ns since its epoch) the watch has not reached the server, 0 while it does; and
  // why the last try failed.
  [[nodiscard]] std::int64_t away_since() const { return away_since_.load(); }
  [[nodiscard]] std::string away_reason() const {
    const std::lock_guard lock(mu_);
    return away_reason_;
  }

 private:
  void away(const std::string& why) {
    std::int64_t expected = 0;
    away_since_.compare_exchange_strong(expected, Clock::now().time_since_epoch().count());
    const std::lock_guard lock(mu_);
    away_reason_ = why;
  }
  void list() {
    const json l = client_.get(collection_ + "?labelSelector=" + url_encode(selector_));
    rv_ = str_at(l, {"metadata", "resourceVersion"});
    // In the order they were made (a list is sorted by name): a task's pods then number its attempts.
    const json all = list_items(l);
    std::vector<const json*> items;
    for (const json& item : all) items.push_back(&item);
    auto key = [](const json* o) {
      return std::make_pair(str_at(*o, {"metadata", "creationTimestamp"}), str_at(*o, {"metadata", "name"}));
    };
    std::stable_sort(items.begin(), items.end(),
                     [&](const json* a, const json* b) { return key(a) < key(b); });
    for (const json* item : items) push_(kind_, "SYNC", *item);
  }

  void loop() {
    Duration backoff = Duration::from_ms(200);
    while (!stop_.load()) {
      const auto begun = Clock::now();
      bool got = false;
      try {
        client_.watch(
            collection_ + "?labelSelector=" + url_encode(selector_) + "&resourceVersion=" + rv_ +
                "&timeoutSeconds=240",
            [&](const json& ev) {
              got = true;
              away_since_.store(0);
              const std::string type = ev.value("type", "");
              const json& obj = ev.contains("object") ? ev["object"] : json::object();
              if (const std::string rv = str_at(obj, {"metadata", "resourceVersion"}); !rv.empty()) rv_ = rv;
              if (type != "BOOKMARK") push_(kind_, type, obj);
              return true;
            },
            &stop_);
        away_since_.store(0);  // the stream ended as the server ends it (timeoutSeconds)
      } catch (const GoneError&) {
        // The resourceVersion is too old: list again (the list's items bring the state up to date).
        try {
          ++relists_;
          list();
          away_since_.store(0);
          continue;
        } catch (const std::exception&) {
          got = false;
        }
      } catch (const TransportError& e) {
        got = false;  // the server is away: try again after a backoff
        away(e.what());
      } catch (const ApiError& e) {
        if (e.status == 401 || e.status == 403 || e.status == 404) {
          const std::lock_guard lock(mu_);
          error_ = std::current_exception();
          return;
        }
        away(e.what());
      } catch (const std::exception& e) {
        got = false;
        away(e.what());
      }
      // A stream that ended at once without an event (a cut connection, a server going away) waits
      // before the next one, longer each time; one that delivered events reconnects at once.
      if (got || Clock::now() - begun > std::chrono::seconds(30)) {
        backoff = Duration::from_ms(200);
        continue;
      }
      const auto until = Clock::now() + std::chrono::nanoseconds(backoff.ns());
      while (!stop_.load() && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      backoff = std::min(backoff * 2, Duration::from_s(10));
    }
  }

  Client& client_;
  std::string collection_, selector_;
  Event::Kind kind_;
  Push push_;
  const std::atomic<bool>& stop_;
  std::string rv_;
  std::atomic<std::int64_t> away_since_{0};
  std::string away_reason_;  // guarded by mu_
  std::thread thread_;
  mutable std::mutex mu_;
  std::exception_ptr error_;
  std::atomic<std::uint64_t> relists_{0};
};

// Another run has this run's id in its namespace.
InputError duplicate_run(const ManifestOptions& mo, const ControllerOptions& co) {
  return InputError({"--run-id " + mo.run_id, 0, 0}, "",
                    "a run with this id exists already in namespace " + mo.namespace_name + " (" +
                        cleanup_command(mo.run_id, co.kubeconfig, co.context, mo.namespace_name) +
                        " deletes it; one stopped before it finished continues with run --resume and its "
                        "output directory; a finished run kept with --keep has nothing to continue)");
}

class K8sRun {
 public:
  K8sRun(const Scenario& scenario, const Plan& plan, const RunOptions& options, const ControllerOptions& co,
         const ManifestOptions& mo, Client& client, RunObserver* observer)
      : sc_(scenario),
        plan_(plan),
        opt_(options),
        co_(co),
        mo_(mo),
        api_(client),
        obs_(observer),
        exec_(plan, *this) {
    // The Job controller retries up to backoffLimit(PerIndex) with no deadline: Execution counts the same.
    exec_.ignore_retry_deadlines();
    if (co_.warn)
      for (const PlanStep& s : plan_.steps())
        if (s.component.retries.max > 0 && s.component.retries.max_duration)
          co_.warn(
              "step " + s.path + ": retries.max_duration (" +
              format_duration(*s.component.retries.max_duration) +
              ") is not kept on Kubernetes: a Job's retries have no deadline (the Job controller retries "
              "up to backoffLimitPerIndex); the simulator keeps it, so it may predict fewer retries");
    job_of_.assign(plan_.size(), kNone);
    for (RunJob& j : run_jobs(scenario, plan, mo_)) {
      for (TaskId t : j.tasks) job_of_[t] = static_cast<std::uint32_t>(jobs_.size());
      job_index_.emplace(j.manifest["metadata"]["name"].get<std::string>(), jobs_.size());
      jobs_.push_back({std::move(j), false, -1, {}, false});
    }
    deferred_.resize(plan_.size());
    pods_of_.resize(plan_.size());
    base_ = "/api/v1/namespaces/" + mo_.namespace_name;
    batch_ = "/apis/batch/v1/namespaces/" + mo_.namespace_name;
  }

  // ---- Execution's hooks ------------------------------------------------------------------------------
  void on_ready(TaskId t) { ready_.push_back(t); }
  void on_start(TaskId t) {
    const std::uint32_t j = job_of_[t];
    if (!jobs_[j].created) {
      jobs_[j].created = true;
      to_create_.push_back(j);
    }
    if (!deferred_[t].empty()) flush_.push_back(t);
    if (obs_) obs_->on_event({TaskEvent::Kind::admitted, t, 0, false, SimTime::from_ns(now())});
  }
  void on_resolved(TaskId /*t*/) {}
  void on_all_resolved() { all_done_ = true; }

  Trace run() {
    trace_.backend = "k8s";
    trace_.scenario = sc_.name;
    trace_.seed = opt_.seed;
    for (const PlanStep& s : plan_.steps()) trace_.steps.push_back(s.path);
    t0_ = Clock::now();
    t0_wall_ = wall_ns();
    if (co_.resume_started_unix_ns > 0) {
      // A resumed run keeps the clock of the run it continues: its earlier pods keep their times.
      t0_ -= std::chrono::nanoseconds(std::max<std::int64_t>(0, t0_wall_ - co_.resume_started_unix_ns));
      t0_wall_ = co_.resume_started_unix_ns;
    }
    load_nodes();

    Watcher pods(
        api_, base_ + "/pods", run_selector(mo_.run_id), Event::Kind::pod,
        [this](Event::Kind k, std::string type, json obj) { push(k, std::move(type), std::move(obj)); },
        stop_watch_);
    Watcher jobs(
        api_, batch_ + "/jobs", run_selector(mo_.run_id), Event::Kind::job,
        [this](Event::Kind k, std::string type, json obj) { push(k, std::move(type), std::move(obj)); },
        stop_watch_);
    struct Joiner {
      std::atomic<bool>& stop;
      Watcher &a, &b;
      ~Joiner() {
        stop.store(true);
        a.join();
        b.join();
      }
    } joiner{stop_watch_, pods, jobs};
    pods.start();
    jobs.start();

    make_owner();
    open_journal();  // (not before: a run refused for another run's id writes nothing)
    // What the lists found (a resumed run's Jobs and pods) is known before Execution starts: an existing
    // Job is not made again, and its pods' outcomes wait for their tasks to be admitted.
    process_events();
    exec_.start();
    pump();
    auto last_check = Clock::now();
    while (!all_done_) {
      if (opt_.stop != nullptr && opt_.stop->load()) {
        interrupted_ = true;
        break;
      }
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return !events_.empty(); });
      }
      process_events();
      pump();
      if (Clock::now() - last_check > std::chrono::seconds(1)) {
        last_check = Clock::now();
        for (Watcher* w : {&pods, &jobs})
          if (const auto err = w->error()) std::rethrow_exception(err);
        say_if_away(pods, jobs);  // first: a retried creation may wait for the client's retries
        retry_creations();
        check_failed_jobs();
        pump();
      }
    }
    const std::int64_t end = now();
    for (AttemptRecord& a : trace_.attempts)
      if (a.finished == kNever) {
        a.finished = SimTime::from_ns(end);
        a.outcome = Outcome::cancelled;
      }
    for (NodeRecord& n : trace_.nodes) n.down = SimTime::from_ns(end);
    // Each attempt's kind, known now that every pod's end is: a pod made after an evicted one (preempted,
    // evicted, its node drained or deleted: the Job controller does not count it against backoffLimit)
    // replaces it, after a failed one it is a retry. (The backend refuses speculation: no backups.)
    set_kinds_from_order(trace_);
    // As the other backends count them (Trace::tasks_failed): the tasks an interrupted run left unfinished
    // too, which the summary tells apart.
    trace_.tasks_unfinished = exec_.unfinished_tasks();
    trace_.tasks_waiting = exec_.waiting_tasks();
    trace_.tasks_failed = exec_.tasks_failed() + trace_.tasks_unfinished + trace_.tasks_waiting;
    trace_.tasks_not_run = exec_.dead_tasks();
    relists_ = pods.relists() + jobs.relists();
    close_journal(all_done_ && !interrupted_);
    return std::move(trace_);
  }
  ~K8sRun() { close_journal(false); }
  K8sRun(const K8sRun&) = delete;
  K8sRun& operator=(const K8sRun&) = delete;

  [[nodiscard]] bool interrupted() const { return interrupted_; }
  /// The run's owner ConfigMap exists (made or adopted): what the run made is on the cluster.
  [[nodiscard]] bool has_owner() const { return !owner_.is_null(); }
  /// Lists made again after a 410 Gone, by both watchers.
  [[nodiscard]] std::uint64_t relists() const { return relists_; }

 private:
  [[nodiscard]] std::int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0_).count();
  }
  // An API timestamp on the run's clock.
  [[nodiscard]] std::optional<std::int64_t> api_time(const json& v) const {
    const auto t = parse_time(v);
    if (!t) return std::nullopt;
    return *t - t0_wall_;
  }

  // The run's owner: adopted when resuming, else created (InputError when another run has the id).
  void make_owner() {
    if (co_.resume_started_unix_ns > 0) {
      try {
        owner_ = api_.get(base_ + "/configmaps/sf-" + mo_.run_id);
      } catch (const ApiError& e) {
        if (e.status != 404) throw;
        throw InputError(
            {"--resume", 0, 0}, "",
            "run " + mo_.run_id + " has no owner ConfigMap sf-" + mo_.run_id + " in namespace " +
                mo_.namespace_name +
                " (its objects were deleted, or the run stopped before it made them): nothing to "
                "resume");
      }
    } else {
      // A nonce tells our own POST (retried after an answer that was lost, and so refused as a
      // conflict) from another run with the same id.
      json owner = run_owner_manifest(mo_, sc_.name);
      const std::string nonce = std::to_string(std::random_device{}()) + "-" + std::to_string(t0_wall_);
      owner["data"]["controller"] = nonce;
      try {
        owner_ = api_.create(base_ + "/configmaps", owner);
      } catch (const ApiError& e) {
        if (e.status != 409) throw;
        json there = api_.get(base_ + "/configmaps/sf-" + mo_.run_id);
        if (str_at(there, {"data", "controller"}) == nonce) {
          owner_ = std::move(there);
          return;
        }
        // Another run's: this one made nothing, and its run file (written just before) must not lead a
        // `run --resume` of it to that run's objects.
        if (!co_.out_dir.empty()) {
          std::error_code ec;
          std::filesystem::remove(std::filesystem::path(co_.out_dir) / "run.json", ec);
        }
        throw duplicate_run(mo_, co_);
      }
    }
  }

  // ---- the pod journal (for run --resume) ----------------------------------------------------------
  // A pod's times are this process's clock when it sees the transition happen (nanoseconds), else the
  // API's timestamps, which count whole seconds. So that a run --resume after the controller was killed
  // keeps the first's times, each time taken from the clock is appended to <out>/pods.jsonl as it is
  // stamped, one JSON line {"uid", "field", "ns"} written through at once (a kill loses at most the line
  // being written, which the reader skips). A resumed run reads the file and appends to it; a run that
  // ends with every task resolved removes it.
  enum JournalField : std::uint8_t { kSubmitted, kScheduled, kStarted, kFinished, kJournalFields };
  static constexpr std::array<const char*, kJournalFields> kJournalNames = {"submitted", "scheduled",
                                                                            "started", "finished"};
  [[nodiscard]] std::filesystem::path journal_path() const {
    return std::filesystem::path(co_.out_dir) / "pods.jsonl";
  }
  void open_journal() {
    if (co_.out_dir.empty()) return;
    const bool resumed = co_.resume_started_unix_ns > 0;
    if (resumed) {
      std::ifstream in(journal_path());
      for (std::string line; std::getline(in, line);) {
        const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("uid") || !j["uid"].is_string() || !j.contains("ns") ||
            !j["ns"].is_number_integer() || !j.contains("field") || !j["field"].is_string())
          continue;  // a line cut by the kill, or not ours
        const auto f = std::find(kJournalNames.begin(), kJournalNames.end(), j["field"].get<std::string>());
        if (f == kJournalNames.end()) continue;
        auto [it, added] = journaled_.try_emplace(j["uid"].get<std::string>());
        if (added) it->second.fill(-1);
        it->second[static_cast<std::size_t>(f - kJournalNames.begin())] = j["ns"].get<std::int64_t>();
      }
    }
    std::error_code ec;
    std::filesystem::create_directories(co_.out_dir, ec);
    journal_ = std::fopen(journal_path().c_str(), resumed ? "a" : "w");  // none: times as before
  }
  void journal(const std::string& uid, JournalField field, std::int64_t ns) {
    if (journal_ == nullptr) return;
    const std::string line = json{{"uid", uid}, {"field", kJournalNames[field]}, {"ns", ns}}.dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), journal_) != line.size() || std::fflush(journal_) != 0) {
      std::fclose(journal_);  // a full disk: the run goes on, its times as without the journal
      journal_ = nullptr;
    }
  }
  // A time the journal holds for the pod (-1: none).
  [[nodiscard]] std::int64_t journaled(const std::string& uid, JournalField field) const {
    const auto it = journaled_.find(uid);
    return it == journaled_.end() ? -1 : it->second[field];
  }
  void close_journal(bool remove) {
    if (journal_ != nullptr) std::fclose(journal_);
    journal_ = nullptr;
    if (remove && !co_.out_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove(journal_path(), ec);
    }
  }

  void process_events() {
    std::deque<Event> batch;
    {
      const std::lock_guard lock(mu_);
      batch.swap(events_);
    }
    for (Event& e : batch) {
      if (e.kind == Event::Kind::pod)
        on_pod(e);
      else
        on_job(e);
    }
  }

  void push(Event::Kind kind, std::string type, json obj) {
    const std::lock_guard lock(mu_);
    events_.push_back({kind, std::move(type), std::move(obj), now()});
    cv_.notify_one();
  }

  void load_nodes() {
    json nodes;
    try {
      nodes = api_.get("/api/v1/nodes");
    } catch (const ApiError&) {
      return;  // not allowed to list nodes: nodes are added by name as pods land on them
    }
    for (const json& n : list_items(nodes)) {
      NodeRecord r;
      r.name = str_at(n, {"metadata", "name"});
      r.pool = node_pool_label(n);
      const json alloc = n.value("status", json::object()).value("allocatable", json::object());
      r.cpu = static_cast<MilliCpu>(quantity(alloc.value("cpu", json("0"))) * 1000 + 0.5);
      r.memory = static_cast<ByteCount>(quantity(alloc.value("memory", json("0"))));
      r.gpu = static_cast<int>(quantity(alloc.value("nvidia.com/gpu", json("0"))));
      node_index_.emplace(r.name, trace_.nodes.size());
      trace_.nodes.push_back(std::move(r));
    }
  }

  std::int32_t node(const std::string& name) {
    if (const auto it = node_index_.find(name); it != node_index_.end())
      return static_cast<std::int32_t>(it->second);
    NodeRecord r;
    r.name = name;
    node_index_.emplace(name, trace_.nodes.size());
    trace_.nodes.push_back(std::move(r));
    return static_cast<std::int32_t>(trace_.nodes.size() - 1);
  }

  // Admits what became ready (in id order), creates the Jobs of admitted tasks, applies the outcomes of
  // pods that ended before Execution admitted their task; until nothing moves.
  void pump() {
    for (;;) {
      bool moved = false;
      if (!ready_.empty()) {
        std::vector<TaskId> r;
        r.swap(ready_);
        std::sort(r.begin(), r.end());
        for (TaskId t : r) exec_.admit(t);
        moved = true;
      }
      if (!to_create_.empty()) {
        std::vector<std::uint32_t> c;
        c.swap(to_create_);
        create_jobs(c);
        moved = true;
      }
      if (!flush_.empty()) {
        std::vector<TaskId> f;
        f.swap(flush_);
        for (TaskId t : f) {
          std::vector<std::uint32_t> d;
          d.swap(deferred_[t]);
          for (std::uint32_t a : d) apply(a);
        }
        moved = true;
      }
      if (!moved) return;
    }
  }

  void create_job(std::uint32_t j) {
    JobState& js = jobs_[j];
    json manifest = js.spec.manifest;
    set_owner(manifest, owner_);
    try {
      api_.create(batch_ + "/jobs", manifest);
      away_since_ = 0;
    } catch (const Interrupted&) {
      throw;
    } catch (const TransportError& e) {
      // The server is away (the client retried): the Job is made once it is back (retry_creations).
      if (away_since_ == 0) away_since_ = Clock::now().time_since_epoch().count();
      away_reason_ = e.what();
      create_later_.push_back(j);
    } catch (const ApiError& e) {
      away_since_ = 0;
      if (e.status == 409) return;  // a retried POST that had gone through
      if (e.status == 401 || e.status == 403 || e.status == 404) throw;
      // The API refused this Job (invalid, over a quota...): its tasks fail, the rest of the run goes on.
      const std::string why = std::string("the API server refused the Job: ") + e.what();
      for (TaskId t : js.spec.tasks) fail_without_pod(t, why);
    }
  }

  // Task t never got a pod and never will: an attempt record says why, and it fails for good.
  void fail_without_pod(TaskId t, const std::string& why) {
    if (exec_.state(t) != TaskState::admitted) return;
    const std::int64_t at = now();
    AttemptRecord r = new_record(t, at);
    r.finished = SimTime::from_ns(at);
    r.outcome = Outcome::failed;
    r.error = static_cast<std::uint32_t>(trace_.errors.size());
    trace_.errors.push_back(why);
    trace_.attempts.push_back(r);
    exec_.fail(t);
    if (obs_) obs_->on_event({TaskEvent::Kind::failed, t, r.attempt, true, SimTime::from_ns(at)});
  }

  AttemptRecord new_record(TaskId t, std::int64_t submitted) {
    AttemptRecord r;
    r.task = t;
    r.step = plan_.step_of(t);
    r.item = plan_.item(t);
    r.attempt = static_cast<std::uint32_t>(pods_of_[t]++);
    r.submitted = SimTime::from_ns(submitted);
    r.finished = kNever;
    r.image_pull = r.input_read = r.output_write = Duration::zero();
    return r;
  }

  // The task a pod runs, or kNone for a pod this run does not know.
  TaskId task_of(const json& pod) const {
    std::string job = str_at(pod, {"metadata", "labels", "batch.kubernetes.io/job-name"});
    if (job.empty()) job = str_at(pod, {"metadata", "labels", "job-name"});
    const auto it = job_index_.find(job);
    if (it == job_index_.end()) return kNone;
    const JobState& js = jobs_[it->second];
    if (!js.spec.indexed) return js.spec.tasks[0];
    const std::string idx =
        str_at(pod, {"metadata", "annotations", "batch.kubernetes.io/job-completion-index"});
    if (idx.empty()) return kNone;
    const unsigned long i = std::stoul(idx);
    return i < js.spec.tasks.size() ? js.spec.tasks[i] : kNone;
  }

  void on_pod(const Event& e) {
    const json& pod = e.object;
    const std::string uid = str_at(pod, {"metadata", "uid"});
    const TaskId t = task_of(pod);
    if (uid.empty() || t == kNone) return;
    auto it = pods_.find(uid);
    const bool live = it != pods_.end();  // seen before: its transitions now are seen as they happen
    if (it == pods_.end()) {
      if (e.type == "DELETED") return;
      const json& meta = member(pod, "metadata");
      const auto created = api_time(meta.is_object() ? meta.value("creationTimestamp", json()) : json());
      const bool fresh = str_at(pod, {"spec", "nodeName"}).empty();
      std::int64_t submitted =
          fresh ? e.at : std::min(e.at, std::max<std::int64_t>(0, created.value_or(e.at)));
      if (const std::int64_t j = journaled(uid, kSubmitted); j >= 0)
        submitted = std::min(e.at, j);  // the killed run saw it created
      else if (fresh)
        journal(uid, kSubmitted, submitted);
      AttemptRecord r = new_record(t, submitted);
      r.pod = static_cast<std::uint32_t>(trace_.pod_names.size());
      trace_.pod_names.push_back(str_at(pod, {"metadata", "name"}));
      it = pods_.emplace(uid, PodState{static_cast<std::uint32_t>(trace_.attempts.size())}).first;
      trace_.attempts.push_back(r);
    }
    PodState& ps = it->second;
    if (ps.ended) return;
    AttemptRecord& a = trace_.attempts[ps.attempt];
    const json status = pod.value("status", json::object());
    const std::string phase = status.value("phase", "");
    const json* cs = nullptr;
    if (status.contains("containerStatuses") && status["containerStatuses"].is_array() &&
        !status["containerStatuses"].empty())
      cs = &status["containerStatuses"][0];
    const json state = cs ? cs->value("state", json::object()) : json::object();
    const bool terminal = phase == "Succeeded" || phase == "Failed";

    // The transitions this event shows for the first time; the last one happened at receive time if the
    // pod was followed live, earlier ones (and all of a pod first seen late) at the API's timestamps.
    const std::string node_name = str_at(pod, {"spec", "nodeName"});
    // Not before what was stamped already (an event seen late, after a live one: the API's times count
    // whole seconds, and an end stamped before its start would be refused when the trace is read back).
    std::int64_t floor = a.submitted.ns();
    if (ps.scheduled) floor = std::max(floor, a.scheduled.ns());
    if (ps.started) floor = std::max(floor, a.started.ns());
    // (A time the journal holds, from a killed run's clock, is taken before the API's.)
    auto stamp = [&](SimTime& field, JournalField which, std::optional<std::int64_t> api, bool last) {
      std::int64_t v = 0;
      if (live && last) {
        v = e.at;
        journal(uid, which, v);
      } else {
        const std::int64_t j = journaled(uid, which);
        v = std::clamp(j >= 0 ? j : api.value_or(e.at), floor, e.at);
      }
      field = SimTime::from_ns(v);
      floor = v;
    };
    const bool now_scheduled = !ps.scheduled && !node_name.empty();
    if (!ps.scheduled && node_name.empty() && co_.warn) {
      // The scheduler's answer for a request the cluster cannot hold now (once per Job: a loop's pods
      // would all say the same).
      const json* c = condition(pod, "PodScheduled");
      const std::uint32_t j = job_of_[t];
      if (c && c->value("reason", "") == "Unschedulable" && !jobs_[j].warned) {
        jobs_[j].warned = true;
        co_.warn("pod " + str_at(pod, {"metadata", "name"}) + " (" + plan_.task_name(t) +
                 ") cannot be scheduled yet: " + c->value("message", ""));
      }
    }
    const bool now_started =
        !ps.started && (state.contains("running") || state.contains("terminated") || phase == "Running");
    const bool now_ended = terminal || e.type == "DELETED";
    if (now_scheduled) {
      ps.scheduled = true;
      a.node = node(node_name);
      const json* c = condition(pod, "PodScheduled");
      stamp(a.scheduled, kScheduled, c ? api_time(c->value("lastTransitionTime", json())) : std::nullopt,
            !now_started && !now_ended);
    }
    if (now_started) {
      ps.started = true;
      std::optional<std::int64_t> api;
      if (state.contains("running")) api = api_time(state["running"].value("startedAt", json()));
      if (state.contains("terminated")) api = api_time(state["terminated"].value("startedAt", json()));
      stamp(a.started, kStarted, api, !now_ended);
      if (obs_) obs_->on_event({TaskEvent::Kind::started, t, a.attempt, false, a.started});
    }
    if (!now_ended) return;
    ps.ended = true;
    std::optional<std::int64_t> api;
    if (state.contains("terminated")) api = api_time(state["terminated"].value("finishedAt", json()));
    stamp(a.finished, kFinished, api, true);
    if (phase == "Succeeded") {
      a.outcome = Outcome::succeeded;
    } else if (phase == "Failed" && condition(pod, "DisruptionTarget") == nullptr) {
      a.outcome = Outcome::failed;
      std::string why;
      if (state.contains("terminated")) {
        const json& term = state["terminated"];
        why = "exit code " + std::to_string(term.value("exitCode", 0));
        if (const std::string r = term.value("reason", ""); !r.empty()) why += " (" + r + ")";
        if (const std::string m = term.value("message", ""); !m.empty()) why += ": " + m;
      } else {
        why = "pod failed";
        if (const std::string r = status.value("reason", ""); !r.empty()) why += " (" + r + ")";
        if (const std::string m = status.value("message", ""); !m.empty()) why += ": " + m;
      }
      a.error = static_cast<std::uint32_t>(trace_.errors.size());
      trace_.errors.push_back(why);
    } else {
      // Disrupted (preempted, evicted, its node drained) or deleted before it ended: the Job controller
      // makes another pod, and the attempt does not count against the retries.
      a.outcome = Outcome::evicted;
    }
    if (exec_.state(t) == TaskState::admitted)
      apply(ps.attempt);
    else if (exec_.state(t) == TaskState::waiting || exec_.state(t) == TaskState::ready ||
             exec_.state(t) == TaskState::blocked)
      deferred_[t].push_back(ps.attempt);  // the Job ran ahead of Execution's mirror of its limit, or the
                                           // run is resumed and Execution has not got there yet
  }

  // An ended attempt's consequence for Execution.
  void apply(std::uint32_t attempt) {
    const AttemptRecord& a = trace_.attempts[attempt];
    const TaskId t = a.task;
    if (exec_.state(t) != TaskState::admitted) return;
    if (a.outcome == Outcome::succeeded) {
      exec_.succeeded(t);
      if (obs_) obs_->on_event({TaskEvent::Kind::finished, t, a.attempt, false, a.finished});
    } else if (a.outcome == Outcome::failed) {
      const bool retried = exec_.attempt_failed(t, a.finished, a.finished).has_value();
      if (obs_) obs_->on_event({TaskEvent::Kind::failed, t, a.attempt, !retried, a.finished});
    } else if (obs_ && a.started != kNever) {
      obs_->on_event({TaskEvent::Kind::failed, t, a.attempt, false, a.finished});
    }
  }

  void on_job(const Event& e) {
    const auto it = job_index_.find(str_at(e.object, {"metadata", "name"}));
    if (it == job_index_.end()) return;
    JobState& js = jobs_[it->second];
    if (e.type != "DELETED") js.created = true;  // (a resumed run's Jobs are there already)
    const json* c = condition(e.object, "Failed");
    if (c && c->value("status", "") == "True" && js.failed_at < 0) {
      js.failed_at = e.at;
      js.failed_message = c->value("reason", "") + ": " + c->value("message", "");
    }
  }

  // Makes Jobs `c` in order. Once one finds the server away (create_job keeps it in create_later_), the
  // others wait behind it, rather than each take the client's ~13-25 s of retries.
  void create_jobs(const std::vector<std::uint32_t>& c) {
    for (std::uint32_t j : c) {
      if (create_later_.empty())
        create_job(j);
      else
        create_later_.push_back(j);
    }
  }

  // The Jobs not made while the server was away: tried again (once a second, from the main loop), the
  // first of them first.
  void retry_creations() {
    std::vector<std::uint32_t> c;
    c.swap(create_later_);
    create_jobs(c);
  }

  // A server that stopped answering the watches is said at once (the client has retried by then), then
  // every minute, and its return: the run waits for it, and without these lines it would look hung.
  void say_if_away(const Watcher& a, const Watcher& b) {
    const std::int64_t since_a = a.away_since(), since_b = b.away_since();
    std::int64_t since = 0;
    for (const std::int64_t x : {since_a, since_b, away_since_})
      if (x != 0 && (since == 0 || x < since)) since = x;
    const std::int64_t t = Clock::now().time_since_epoch().count();
    const auto seconds = [](std::int64_t ns) { return std::to_string((ns + 500'000'000) / 1'000'000'000); };
    if (since == 0) {
      if (away_said_ != 0 && co_.warn)
        co_.warn("the API server at " + api_.server() + " answers again, after " + seconds(t - away_from_) +
                 " s without; the run carries on");
      away_said_ = 0;
      return;
    }
    if (away_said_ != 0 && t - away_said_ < 60'000'000'000) return;
    if (co_.warn) {
      const std::string reason = since_a != 0   ? a.away_reason()
                                 : since_b != 0 ? b.away_reason()
                                                : away_reason_;
      if (away_said_ == 0)
        co_.warn("the API server at " + api_.server() + " does not answer (" + reason +
                 "); the run waits for it and carries on when it is back (Ctrl-C stops waiting; the run's "
                 "objects stay on the cluster: " +
                 cleanup_command(mo_.run_id, co_.kubeconfig, co_.context, mo_.namespace_name) + ")");
      else
        co_.warn("still no answer from the API server at " + api_.server() + " after " + seconds(t - since) +
                 " s (" + reason + ")");
    }
    if (away_said_ == 0) away_from_ = since;
    away_said_ = t;
  }

  // A Job that failed leaves its unfinished tasks without pods: they fail too, a few seconds after the
  // Job's condition (the pods' last events come on another stream and may arrive later).
  void check_failed_jobs() {
    const std::int64_t t = now();
    for (JobState& js : jobs_) {
      if (js.failed_at < 0 || t - js.failed_at < 3'000'000'000) continue;
      for (TaskId task : js.spec.tasks) {
        if (exec_.state(task) != TaskState::admitted) continue;
        bool active = false;
        for (const auto& [uid, ps] : pods_)
          if (!ps.ended && trace_.attempts[ps.attempt].task == task) active = true;
        if (!active) fail_without_pod(task, "the Job failed: " + js.failed_message);
      }
      js.failed_at = std::numeric_limits<std::int64_t>::max() / 2;  // handled
    }
  }

  const Scenario& sc_;
  const Plan& plan_;
  const RunOptions& opt_;
  const ControllerOptions& co_;
  const ManifestOptions& mo_;
  Client& api_;
  RunObserver* obs_;
  Execution<K8sRun> exec_;
  std::string base_, batch_;

  std::vector<JobState> jobs_;
  std::unordered_map<std::string, std::size_t> job_index_;
  std::vector<std::uint32_t> job_of_;
  std::vector<std::vector<std::uint32_t>> deferred_;  // ended attempts of tasks not admitted yet
  std::vector<std::uint32_t> pods_of_;                // pods seen per task
  std::unordered_map<std::string, PodState> pods_;    // by uid
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<TaskId> ready_, flush_;
  std::vector<std::uint32_t> to_create_;
  json owner_;
  bool all_done_ = false;
  bool interrupted_ = false;
  std::vector<std::uint32_t> create_later_;  // Jobs not made while the server was away
  std::int64_t away_since_ = 0;  // since when creating a Job found the server away (Clock ns), 0: not
  std::string away_reason_;      // and why
  std::int64_t away_said_ = 0;   // when the server's absence was last said (Clock ns), 0: it answers
  std::int64_t away_from_ = 0;   // since when it was away, as first said

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::atomic<bool> stop_watch_{false};

  Clock::time_point t0_;
  std::int64_t t0_wall_ = 0;
  std::FILE* journal_ = nullptr;  // <out>/pods.jsonl, appended to (see open_journal)
  std::unordered_map<std::string, std::array<std::int64_t, kJournalFields>> journaled_;  // a killed run's
  Trace trace_;
  std::uint64_t relists_ = 0;
};

// This machine's host name ("" if it has none), for run.json: a `run --resume` on the same machine while
// this process lives is refused (two controllers would drive one run).
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string random_run_id() {
  char id[9];
  std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(std::random_device{}()));
  return id;
}

// A node as a pool of one, for core's pool_admits (its labels and taints against a step's node selector
// and tolerations).
NodePool as_pool(const json& node) {
  NodePool p;
  const json& meta = member(node, "metadata");
  const json labels = meta.is_object() ? meta.value("labels", json::object()) : json::object();
  for (const auto& [k, v] : labels.items())
    if (v.is_string()) p.labels[k] = v.get<std::string>();
  const json taints = node.value("spec", json::object()).value("taints", json::array());
  for (const json& t : taints)
    p.taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
  return p;
}

class K8sBackend final : public Backend {
 public:
  explicit K8sBackend(ControllerOptions o) : co_(std::move(o)) {
    if (co_.run_id.empty()) co_.run_id = random_run_id();
  }
  [[nodiscard]] std::string name() const override { return "k8s"; }

  void check(const Scenario& scenario, const Plan& plan) const override {
    // The scenario's problems first (they need no cluster), then the kubeconfig's.
    Credentials c;
    c.namespace_name = "default";
    (void)run_jobs(scenario, plan, manifest_options(c, 1));
    c = credentials_for(co_.kubeconfig, co_.context);
    (void)run_jobs(scenario, plan, manifest_options(c, 1));  // the context's namespace may be a bad name
  }

  Trace run(const Scenario& scenario, const Plan& plan, const RunOptions& options,
            RunObserver* observer) const override {
    try {
      return run_on_cluster(scenario, plan, options, observer);
    } catch (const json::exception& e) {
      throw std::runtime_error(answer_error(e));
    }
  }

 private:
  // An error as the run reports it: an answer of the API server that lacks what Kubernetes sends (the
  // JSON library's "[json.exception.type_error.306] cannot use value() with string") is said to be one.
  static std::string answer_error(const std::exception& e) {
    return dynamic_cast<const json::exception*>(&e) != nullptr ? UnexpectedAnswer(e.what()).what()
                                                               : std::string(e.what());
  }

  Trace run_on_cluster(const Scenario& scenario, const Plan& plan, const RunOptions& options,
                       RunObserver* observer) const {
    const Credentials creds = credentials_for(co_.kubeconfig, co_.context);
    const ManifestOptions mo = manifest_options(creds, options.seed);
    // What a later command needs to find this cluster again, whatever $KUBECONFIG and the kubeconfig's
    // current-context are then: the files read and the context used, in every cleanup command printed.
    ControllerOptions co = co_;
    if (!creds.files.empty()) co.kubeconfig = creds.files;
    co.context = creds.context;
    ClientOptions clo;
    clo.qps = co_.qps;
    clo.burst = co_.burst;
    clo.seed = options.seed;
    // Ctrl-C during the checks (a server that accepts and never answers holds each for 30 s, six times)
    // ends them at once: nothing of the run exists yet. The run itself stops cleanly on its own.
    clo.stop = options.stop;
    Client api(creds, clo);
    check_cluster(api, creds, scenario, mo, !co_.namespace_name.empty(), co_.warn);
    // A new run whose id another run has is refused before its run file is written (a `run --resume` of
    // that file would take the other run over, and delete its objects at the end).
    if (co_.resume_started_unix_ns == 0) {
      try {
        (void)api.get("/api/v1/namespaces/" + mo.namespace_name + "/configmaps/sf-" + mo.run_id);
        throw duplicate_run(mo, co);
      } catch (const ApiError& e) {
        if (e.status != 404) throw;
      }
    }
    api.set_stop(nullptr);
    // A resume that finds nothing to take over (no owner: the run was cleaned up) leaves run.json as it was.
    const std::optional<std::string> before = co_.resume_started_unix_ns > 0 ? read_run_file() : std::nullopt;
    write_run_file(creds, scenario, mo, options.seed);
    const std::string cleanup = cleanup_command(mo.run_id, co.kubeconfig, co.context, mo.namespace_name);
    if (co_.cleanup) co_.cleanup(cleanup);
    std::optional<K8sRun> r;
    try {
      r.emplace(scenario, plan, options, co, mo, api, observer);
      Trace trace = r->run();
      bool deleted = false;
      if (!co_.keep && !r->interrupted()) {
        // The run is done: credentials that may not delete (RBAC without `delete`) lose it nothing, its
        // trace and summary included; what is left on the cluster is said.
        try {
          delete_run(api, mo.namespace_name, mo.run_id, "Background", false, {});
          deleted = true;
        } catch (const std::exception& e) {
          if (co_.warn)
            co_.warn("the run's objects could not be deleted (" + answer_error(e) +
                     "); they stay on the cluster: " + cleanup);
        }
      }
      finish_run_file(r->interrupted(), api.requests(), r->relists(), deleted);
      return trace;
    } catch (const std::exception& e) {
      // A run that stopped on an error (a 403 of RBAC, a 404 of a namespace deleted meanwhile) says so in
      // run.json: it stayed "running", which `k8s status` reads as a run still going or killed. What it
      // made stays on the cluster (a run fixed, e.g. its RBAC, may be resumed): said, with how to delete it.
      if (before && !(r && r->has_owner()))
        restore_run_file(*before);
      else
        fail_run_file(answer_error(e), api.requests());
      if (r && r->has_owner() && co_.warn)
        co_.warn("the run stopped on an error; its objects stay on the cluster (" + cleanup +
                 " deletes them, run --resume continues the run)");
      throw;
    }
  }

  [[nodiscard]] ManifestOptions manifest_options(const Credentials& c, std::uint64_t seed) const {
    ManifestOptions mo;
    mo.run_id = co_.run_id;
    mo.namespace_name = co_.namespace_name.empty() ? c.namespace_name : co_.namespace_name;
    mo.emulate = co_.emulate;
    mo.seed = seed;
    return mo;
  }

  // The namespace exists and the credentials are accepted; every step fits on a node its selector allows.
  // `flag`: the namespace was given with --namespace (else it is the kubeconfig context's).
  static void check_cluster(Client& api, const Credentials& creds, const Scenario& scenario,
                            const ManifestOptions& mo, bool flag,
                            const std::function<void(const std::string&)>& warn) {
    const std::string where = "the cluster at " + creds.server + " (context " +
                              (creds.context.empty() ? std::string("in-cluster") : creds.context) + ")";
    try {
      api.get("/api/v1/namespaces/" + mo.namespace_name);
    } catch (const ApiError& e) {
      if (e.status == 404)
        throw InputError(flag ? SourceLocation{"--namespace " + mo.namespace_name, 0, 0}
                              : SourceLocation{creds.source, 0, 0},
                         "",
                         "namespace " + mo.namespace_name + (flag ? "" : " (the context's)") +
                             " does not exist in " + where + " (kubectl create namespace " +
                             mo.namespace_name + ")");
      if (e.status == 401)
        throw InputError(
            {creds.source, 0, 0}, "",
            where +
                " refused the credentials (401 Unauthorized: a wrong or expired token, or a client "
                "certificate it does not trust)");
      if (e.status != 403) throw;
    } catch (const Interrupted&) {
      throw;
    } catch (const TransportError& e) {
      throw TransportError("cannot reach " + where + ": " + e.what());
    }
    json nodes;
    try {
      nodes = api.get("/api/v1/nodes");
    } catch (const ApiError& e) {
      // May not list nodes (RBAC): the pods' scheduling will tell whether they fit; but the run's nodes
      // will have no capacity, so its utilization cannot be known. Said now, not left to read as 0%.
      if (warn)
        warn("the credentials may not list the cluster's nodes (" + std::to_string(e.status) +
             " on GET /api/v1/nodes): whether each step fits a node is not checked before the run, and the "
             "trace's nodes have no capacity or pool, so the run's CPU utilization is not known (grant "
             "list on nodes, a ClusterRole, to have them)");
      return;
    }
    check_fits(scenario.pipeline.steps, "pipeline.steps", list_items(nodes));
  }

  static void check_fits(const std::vector<Step>& steps, const std::string& field, const json& nodes) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const std::string here = field + "[" + std::to_string(i) + "]";
      if (s.is_group()) {
        check_fits(s.steps, here + ".steps", nodes);
        continue;
      }
      const Resources& r = s.component.resources;
      bool fits = false;
      std::size_t admitted = 0;  // nodes whose labels and taints the step's pods accept
      double most_cpu = 0, most_mem = 0, most_gpu = 0;
      std::vector<std::pair<std::string, std::size_t>> refusals;  // why the others refuse, in node order
      for (const json& n : nodes) {
        if (const std::string why = pool_refusal(as_pool(n), s.component); !why.empty()) {
          const auto it = std::find_if(refusals.begin(), refusals.end(),
                                       [&](const auto& entry) { return entry.first == why; });
          if (it == refusals.end())
            refusals.emplace_back(why, 1);
          else
            ++it->second;
          continue;
        }
        ++admitted;
        const json alloc = n.value("status", json::object()).value("allocatable", json::object());
        const double cpu = quantity(alloc.value("cpu", json("0"))) * 1000;
        const double mem = quantity(alloc.value("memory", json("0")));
        const double gpu = quantity(alloc.value("nvidia.com/gpu", json("0")));
        most_cpu = std::max(most_cpu, cpu);
        most_mem = std::max(most_mem, mem);
        most_gpu = std::max(most_gpu, gpu);
        if (static_cast<double>(r.cpu) <= cpu && static_cast<double>(r.memory) <= mem && r.gpu <= gpu)
          fits = true;
      }
      if (fits) continue;
      std::string sel;
      for (const auto& [k, v] : s.component.node_selector) sel += (sel.empty() ? "" : ",") + k + "=" + v;
      char buf[200];
      std::snprintf(buf, sizeof buf, "the largest has %s CPUs, %s of memory and %.0f GPUs",
                    format_cpu(static_cast<MilliCpu>(most_cpu)).c_str(),
                    format_bytes(static_cast<ByteCount>(most_mem)).c_str(), most_gpu);
      throw InputError(s.where, here + ".resources",
                       "step " + s.name + " asks for " + format_cpu(r.cpu) + " CPUs, " +
                           format_bytes(r.memory) + " of memory and " + std::to_string(r.gpu) +
                           " GPUs; no node of the cluster" + (sel.empty() ? "" : " with labels " + sel) +
                           " can hold it (" +
                           (nodes.empty()   ? std::string("it has no nodes")
                            : admitted == 0 ? "none of its " + std::to_string(nodes.size()) + " node" +
                                                  (nodes.size() == 1 ? "" : "s") +
                                                  " matches the step's node_selector and tolerations: " +
                                                  listed(refusals.size(),
                                                         [&](std::size_t k) {
                                                           return std::to_string(refusals[k].second) +
                                                                  " with " + refusals[k].first;
                                                         })
                                            : std::string(buf)) +
                           ")");
    }
  }

  void write_run_file(const Credentials& c, const Scenario& scenario, const ManifestOptions& mo,
                      std::uint64_t seed) const {
    if (co_.out_dir.empty()) return;
    // The kubeconfig as an absolute path, as the scenario and overlays are: `k8s status` and `run
    // --resume` read it from any directory.
    std::error_code ec;
    const std::filesystem::path kubeconfig =
        co_.kubeconfig.empty() ? std::filesystem::path() : std::filesystem::absolute(co_.kubeconfig, ec);
    // The files read (from $KUBECONFIG or ~/.kube/config too), absolute; a given one as given, absolute.
    const std::string files = !co_.kubeconfig.empty() ? (ec ? co_.kubeconfig : kubeconfig.string()) : c.files;
    run_info_ = json{{"run_id", mo.run_id},
                     {"namespace", mo.namespace_name},
                     {"server", c.server},
                     {"context", c.context},
                     {"kubeconfig", files},
                     {"scenario", scenario.name},
                     {"seed", seed},
                     {"emulate", mo.emulate},
                     {"kept", co_.keep},
                     {"state", "running"},
                     {"started_unix_ns", wall_ns()},
                     {"controller",
                      {{"host", host_name()},
                       {"pid", static_cast<std::int64_t>(::getpid())},
                       {"start", process_start_ticks(::getpid())}}}};
    if (!co_.invocation.is_null()) run_info_["invocation"] = co_.invocation;
    if (co_.resume_started_unix_ns > 0) {
      run_info_["started_unix_ns"] = co_.resume_started_unix_ns;
      run_info_["resumed_unix_ns"] = wall_ns();
    }
    save_run_file();
  }
  void finish_run_file(bool interrupted, std::uint64_t requests, std::uint64_t relists, bool deleted) const {
    if (co_.out_dir.empty()) return;
    run_info_["state"] = interrupted ? "interrupted" : "finished";
    run_info_["finished_unix_ns"] = wall_ns();
    run_info_["api_requests"] = requests;
    run_info_["relists"] = relists;
    run_info_["objects_deleted"] = deleted;
    save_run_file();
  }
  void fail_run_file(const std::string& error, std::uint64_t requests) const {
    if (co_.out_dir.empty() || run_info_.is_null()) return;
    run_info_["state"] = "failed";
    run_info_["error"] = error;
    run_info_["finished_unix_ns"] = wall_ns();
    run_info_["api_requests"] = requests;
    run_info_["objects_deleted"] = false;
    try {
      save_run_file();
    } catch (const std::exception&) {  // the run's own error is the one to report
    }
  }
  [[nodiscard]] std::optional<std::string> read_run_file() const {
    if (co_.out_dir.empty()) return std::nullopt;
    std::ifstream in(std::filesystem::path(co_.out_dir) / "run.json", std::ios::binary);
    if (!in) return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void restore_run_file(const std::string& text) const {
    try {
      std::ofstream(std::filesystem::path(co_.out_dir) / "run.json", std::ios::binary) << text;
    } catch (const std::exception&) {  // the run's own error is the one to report
    }
  }
  void save_run_file() const {
    std::filesystem::create_directories(co_.out_dir);
    std::ofstream out(std::filesystem::path(co_.out_dir) / "run.json");
    out << run_info_.dump(2) << "\n";
  }

  ControllerOptions co_;
  mutable json run_info_;
};

}  // namespace

std::string node_pool_label(const nlohmann::json& node) {
  const auto meta = node.find("metadata");
  if (meta == node.end() || !meta->is_object()) return "";
  const auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return "";
  for (const char* key : {"shardflow.io/pool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
                          "kubernetes.azure.com/agentpool", "agentpool", "karpenter.sh/nodepool",
                          "node.kubernetes.io/instance-type"})
    if (const auto v = labels->find(key);
        v != labels->end() && v->is_string() && !v->get_ref<const std::string&>().empty())
      return v->get<std::string>();
  return "";
}

std::string run_selector(const std::string& run_id) {
  return run_id.empty() ? "app.kubernetes.io/managed-by=shardflow" : "shardflow.io/run=" + run_id;
}

std::int64_t process_start_ticks(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return -1;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so fields count from the last ')';
  // starttime is field 22, the 20th after it.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 0; i < 20; ++i)
    if (!(fields >> field)) return -1;
  std::int64_t ticks = -1;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
  return ec == std::errc() && end == field.data() + field.size() ? ticks : -1;
}

bool controller_running(const std::string& host, std::int64_t pid, std::int64_t start) {
  if (host.empty() || pid <= 0 || pid > std::numeric_limits<pid_t>::max() || host != host_name())
    return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A zombie (killed, not yet reaped by its parent) is no controller.
  {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (std::getline(in, stat))
      if (const std::size_t close = stat.rfind(')'); close != std::string::npos && close + 2 < stat.size())
        if (stat[close + 2] == 'Z' || stat[close + 2] == 'X') return false;
  }
  // The process's start time tells it from a later process given the same id, whatever its name.
  if (start >= 0) return process_start_ticks(pid) == start;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.starts_with("shardflow");
}

std::string cleanup_command(const std::string& run_id, const std::string& kubeconfig,
                            const std::string& context, const std::string& namespace_name) {
  std::string cmd = "shardflow k8s cleanup " + run_id;
  if (!kubeconfig.empty()) cmd += " --kubeconfig " + shell_word(kubeconfig);
  if (!context.empty()) cmd += " --context " + shell_word(context);
  if (!namespace_name.empty()) cmd += " --namespace " + shell_word(namespace_name);
  return cmd;
}

Credentials credentials_for(const std::string& kubeconfig, const std::string& context) {
  if (kubeconfig.empty() && context.empty() && std::getenv("KUBECONFIG") == nullptr &&
      std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
    const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
    if (home.empty() || !std::filesystem::exists(home + "/.kube/config")) return in_cluster_credentials();
  }
  return load_kubeconfig(kubeconfig, context);
}

CleanupResult delete_run(Client& client, const std::string& ns, const std::string& run_id,
                         const std::string& propagation, bool wait, Duration timeout) {
  const std::string sel = "?labelSelector=" + url_encode(run_selector(run_id));
  const std::string base = "/api/v1/namespaces/" + ns, batch = "/apis/batch/v1/namespaces/" + ns;
  CleanupResult r;
  auto remove = [&](const std::string& collection, const json& item) {
    // An item without a name would make the path the collection's, and a DELETE of a collection deletes
    // every object in it: such an answer is refused.
    const std::string name = str_at(item, {"metadata", "name"});
    if (name.empty())
      throw UnexpectedAnswer("an item of " + collection + " without a name: " + item.dump().substr(0, 100));
    try {
      client.remove(collection + "/" + url_encode(name), propagation);
      ++r.deleted;
    } catch (const ApiError& e) {
      if (e.status != 404) throw;  // gone already
    }
  };
  for (const json& cm : list_items(client.get(base + "/configmaps" + sel))) remove(base + "/configmaps", cm);
  // Jobs whose owner was never made or is gone already (the garbage collector takes the others).
  for (const json& job : list_items(client.get(batch + "/jobs" + sel)))
    if (const json& meta = member(job, "metadata");
        meta.is_object() && !meta.contains("ownerReferences") && !meta.contains("deletionTimestamp"))
      remove(batch + "/jobs", job);
  auto left = [&] {
    std::size_t n = 0;
    for (const std::string& c : {base + "/configmaps", batch + "/jobs", base + "/pods"})
      n += list_items(client.get(c + sel)).size();
    return n;
  };
  if (!wait) return r;
  const auto until = Clock::now() + std::chrono::nanoseconds(timeout.ns());
  for (;;) {
    r.left = left();
    if (r.left == 0 || Clock::now() >= until) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

std::unique_ptr<Backend> make_backend(const ControllerOptions& options) {
  return std::make_unique<K8sBackend>(options);
}

}  // namespace shardflow::k8s
