// The fidelity suite's driver (tests/fidelity/run, CTest label k8s): the simulator's code checked
// against the real control plane of tools/k8s-testenv.
//
//   fidelity_driver place --kubeconfig K --scenario S --pods 30 --seed 1 --image IMG
//     Creates pods one by one with unbalanced cpu and memory requests, each after the one before is
//     bound. Before each, it reads the cluster (nodes: allocatable, labels, taints, images; bound pods
//     and their requests), filters the nodes as kube-scheduler does (resources, pods, NoSchedule and
//     NoExecute taints) and scores the feasible ones with the simulator's scorer
//     (sim/scoring_plugins.hpp) configured by the scenario's cluster.scheduler. Prints one JSON line per
//     decision and exits 1 unless the real scheduler's node is among the best-scored ones every time.
//
//   fidelity_driver job --kubeconfig K --manifest JOB.json
//     Creates the Job and watches it until its Complete or Failed condition; prints the seconds from
//     the creation's answer to the watch event that carried the condition (the Job's own timestamps have
//     one-second resolution), its status counts, and the wall clock's microseconds past its second at
//     the creation's answer (t0_wall_fraction_us: the simulator's clock_phase for the run).
//
//   fidelity_driver predict --scenario S [--set PATH=VALUE ...]
//     Simulates the scenario; prints {"steps": {name: seconds when its last task was resolved}, ...},
//     with, per step, the items whose first attempt failed and those whose first attempt failed but a
//     later one succeeded (a KWOK pod given shardflow.io/fail-indexes fails on every attempt).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/plan.hpp>
#include <shardflow/core/random.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/k8s/client.hpp>
#include <shardflow/k8s/kubeconfig.hpp>
#include <shardflow/sim/simulator.hpp>

#include "sim/scoring_plugins.hpp"

using namespace shardflow;
using nlohmann::json;
namespace plugins = shardflow::sim::plugins;

namespace {

struct Args {
  std::string command, kubeconfig, scenario, image, manifest, ns = "default", prefix = "fid";
  int pods = 30;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2)
    throw std::invalid_argument("usage: fidelity_driver place|predict [options] (see the source)");
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(k + " wants a value");
    const std::string v = argv[++i];
    const std::map<std::string, std::string*> text = {
        {"--kubeconfig", &a.kubeconfig}, {"--scenario", &a.scenario}, {"--image", &a.image},
        {"--manifest", &a.manifest},     {"--namespace", &a.ns},      {"--prefix", &a.prefix}};
    if (const auto it = text.find(k); it != text.end())
      *it->second = v;
    else if (k == "--pods")
      a.pods = std::stoi(v);
    else if (k == "--seed")
      a.seed = std::stoull(v);
    else if (k == "--set")
      a.sets.push_back(v);
    else
      throw std::invalid_argument("unknown option " + k);
  }
  return a;
}

// ---- the cluster as the API server reports it -------------------------------------------------------

struct NodeState {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  std::vector<std::pair<std::string, std::int64_t>> images;  // each name of an image, its size
  plugins::NodeUsage usage;
  std::int64_t max_pods = 0, pods = 0;
  bool unschedulable = false;
};

std::int64_t quantity_cpu(const json& v) {
  return v.is_null() ? 0 : parse_cpu(v.get<std::string>());
}
std::int64_t quantity_bytes(const json& v) {
  return v.is_null() ? 0 : parse_bytes(v.get<std::string>());
}
std::int64_t quantity_int(const json& v) {
  return v.is_null() ? 0 : std::stoll(v.get<std::string>());
}

// kube-scheduler's normalizedImageName: an image without a tag or digest means ":latest".
std::string normalized_image(std::string name) {
  const auto slash = name.rfind('/');
  const auto colon = name.rfind(':');
  if (name.find('@') == std::string::npos &&
      (colon == std::string::npos || (slash != std::string::npos && colon < slash)))
    name += ":latest";
  return name;
}

std::vector<NodeState> read_cluster(k8s::Client& api) {
  std::vector<NodeState> nodes;
  std::map<std::string, std::size_t> at;
  const json node_list = api.get("/api/v1/nodes");
  for (const json& n : node_list["items"]) {
    NodeState s;
    s.name = n["metadata"]["name"];
    if (n["metadata"].contains("labels"))
      s.labels = n["metadata"]["labels"].get<std::map<std::string, std::string>>();
    const json& spec = n["spec"];
    s.unschedulable = spec.value("unschedulable", false);
    if (spec.contains("taints") && !spec["taints"].is_null())
      for (const json& t : spec["taints"])
        s.taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
    const json& alloc = n["status"]["allocatable"];
    s.usage.cpu_allocatable = quantity_cpu(alloc.value("cpu", json()));
    s.usage.memory_allocatable = quantity_bytes(alloc.value("memory", json()));
    s.usage.gpu_allocatable = quantity_int(alloc.value("nvidia.com/gpu", json()));
    s.max_pods = quantity_int(alloc.value("pods", json()));
    if (n["status"].contains("images"))
      for (const json& im : n["status"]["images"])
        for (const json& name : im["names"])
          s.images.emplace_back(normalized_image(name), im.value("sizeBytes", std::int64_t{0}));
    at[s.name] = nodes.size();
    nodes.push_back(std::move(s));
  }
  // Pods bound to a node and not finished hold their requests there (NodeInfo.Requested and
  // NonZeroRequested: a container without a cpu or memory request counts 100m or 200 MiB there).
  const json pod_list = api.get("/api/v1/pods");
  for (const json& p : pod_list["items"]) {
    const std::string node = p["spec"].value("nodeName", "");
    const std::string phase = p["status"].value("phase", "");
    if (node.empty() || phase == "Succeeded" || phase == "Failed" || !at.contains(node)) continue;
    NodeState& s = nodes[at[node]];
    ++s.pods;
    for (const json& c : p["spec"]["containers"]) {
      const json req =
          c.contains("resources") ? c["resources"].value("requests", json::object()) : json::object();
      const std::int64_t cpu = quantity_cpu(req.value("cpu", json()));
      const std::int64_t mem = quantity_bytes(req.value("memory", json()));
      s.usage.cpu_requested += cpu;
      s.usage.memory_requested += mem;
      s.usage.gpu_requested += quantity_int(req.value("nvidia.com/gpu", json()));
      s.usage.cpu_nonzero_requested += plugins::nonzero_cpu(cpu);
      s.usage.memory_nonzero_requested += plugins::nonzero_memory(mem);
    }
  }
  return nodes;
}

// ---- one decision -----------------------------------------------------------------------------------

struct Scored {
  std::string node;
  plugins::NodeScores scores;
  std::int64_t total = 0;
};

// kube-scheduler's filters for our pods: NodeUnschedulable, NodeResourcesFit (cpu, memory, gpu,
// pods), TaintToleration (NoSchedule and NoExecute taints; the pods tolerate none).
bool feasible(const NodeState& n, const plugins::PodRequests& pod) {
  if (n.unschedulable || n.pods + 1 > n.max_pods) return false;
  if (n.usage.cpu_requested + pod.cpu > n.usage.cpu_allocatable) return false;
  if (n.usage.memory_requested + pod.memory > n.usage.memory_allocatable) return false;
  if (pod.gpu > 0 && n.usage.gpu_requested + pod.gpu > n.usage.gpu_allocatable) return false;
  return std::none_of(n.taints.begin(), n.taints.end(),
                      [](const Taint& t) { return t.effect == "NoSchedule" || t.effect == "NoExecute"; });
}

std::vector<Scored> score(const SchedulerConfig& cfg, const std::vector<NodeState>& nodes,
                          const plugins::PodRequests& pod, const std::string& image) {
  const std::string img = normalized_image(image);
  std::int64_t with_image = 0;
  for (const NodeState& n : nodes)
    with_image +=
        std::any_of(n.images.begin(), n.images.end(), [&](const auto& i) { return i.first == img; });
  std::vector<Scored> out;
  std::vector<plugins::NodeScores> raw;
  for (const NodeState& n : nodes) {
    if (!feasible(n, pod)) continue;
    plugins::NodeScores s;
    const auto fit = plugins::fit_resources(cfg.fit_resource_weights, n.usage, pod);
    s.fit = plugins::fit_score(cfg.fit_strategy, fit, cfg.requested_to_capacity_ratio_shape);
    if (!plugins::balanced_allocation_skips(pod))
      s.balanced = plugins::balanced_allocation_score_v136(plugins::balance_resources(n.usage, pod));
    s.taint_raw = plugins::taint_toleration_raw(n.taints, {});
    std::vector<plugins::ImageOnNode> present;
    for (const auto& [name, size] : n.images)
      if (name == img) present.push_back({size, with_image});
    s.image = plugins::image_locality_score(present, static_cast<std::int64_t>(nodes.size()), 1);
    out.push_back({n.name, s, 0});
    raw.push_back(s);
  }
  const std::vector<std::int64_t> totals = plugins::weighted_totals(cfg.score_weights, raw);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].total = totals[i];
  return out;
}

std::string wait_for_binding(k8s::Client& api, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const json p = api.get(path);
    const std::string node = p["spec"].value("nodeName", "");
    if (!node.empty()) return node;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error(path + ": not bound within 60 s");
}

int place(const Args& a) {
  const Scenario sc = load_scenario_file(a.scenario, a.sets);
  const SchedulerConfig& cfg = sc.cluster.scheduler;
  k8s::Client api(k8s::load_kubeconfig(a.kubeconfig, ""));
  Rng rng = Rng::stream(a.seed, Stream::scheduler);
  int matched = 0;
  for (int i = 0; i < a.pods; ++i) {
    // Unbalanced requests: every other pod wants much cpu and little memory, or the reverse.
    plugins::PodRequests pod;
    if (i % 2 == 0) {
      pod.cpu = 500 + 250 * static_cast<std::int64_t>(rng.below(11));             // 0.5 to 3 cores
      pod.memory = (256 + 128 * static_cast<std::int64_t>(rng.below(7))) * kMiB;  // 256 Mi to 1 Gi
    } else {
      pod.cpu = 100 + 50 * static_cast<std::int64_t>(rng.below(5));       // 100m to 300m
      pod.memory = (1 + static_cast<std::int64_t>(rng.below(8))) * kGiB;  // 1 to 8 Gi
    }
    const std::vector<NodeState> nodes = read_cluster(api);
    const std::vector<Scored> scored = score(cfg, nodes, pod, a.image);
    std::int64_t best = -1;
    for (const Scored& s : scored) best = std::max(best, s.total);
    std::set<std::string> top;
    for (const Scored& s : scored)
      if (s.total == best) top.insert(s.node);

    const std::string name = a.prefix + "-" + std::to_string(i);
    const json manifest = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", name},
          {"labels", {{"shardflow.io/fidelity", a.prefix}}},
          {"annotations", {{"shardflow.io/duration-ms", "36000000"}}}}},
        {"spec",
         {{"restartPolicy", "Never"},
          {"terminationGracePeriodSeconds", 0},
          {"containers", json::array({{{"name", "main"},
                                       {"image", a.image},
                                       {"resources",
                                        {{"requests",
                                          {{"cpu", std::to_string(pod.cpu) + "m"},
                                           {"memory", std::to_string(pod.memory / kMiB) + "Mi"}}}}}}})}}}};
    const std::string base = "/api/v1/namespaces/" + a.ns + "/pods";
    api.create(base, manifest);
    const std::string chosen = wait_for_binding(api, base + "/" + name);
    const bool ok = top.contains(chosen);
    matched += ok;
    json line = {{"pod", name},      {"cpu_m", pod.cpu}, {"memory_mi", pod.memory / kMiB},
                 {"chosen", chosen}, {"best", top},      {"best_total", best},
                 {"match", ok}};
    json per_node = json::object();
    for (const Scored& s : scored)
      per_node[s.node] = {{"total", s.total},
                          {"fit", s.scores.fit},
                          {"balanced", s.scores.balanced},
                          {"taint_raw", s.scores.taint_raw},
                          {"image", s.scores.image}};
    line["nodes"] = per_node;
    std::cout << line.dump() << std::endl;
  }
  std::cout << json{{"decisions", a.pods}, {"matched", matched}}.dump() << std::endl;
  return matched == a.pods ? 0 : 1;
}

// Receive times of a Job's pod events, and what they say about the control plane's latencies.
class PodTimes {
 public:
  using Clock = std::chrono::steady_clock;
  void seen(const json& ev) {
    if (!ev.contains("object") || !ev["object"].contains("metadata")) return;
    const json& p = ev["object"];
    const auto now = Clock::now();
    const auto wall = std::chrono::system_clock::now();
    const std::lock_guard lock(mu_);
    Pod& pod = pods_[p["metadata"].value("name", "")];
    if (!pod.created) {
      pod.created = now;
      if (p["metadata"].contains("annotations"))
        pod.index = p["metadata"]["annotations"].value("batch.kubernetes.io/job-completion-index", "");
    }
    if (!pod.bound && p.contains("spec") && !p["spec"].value("nodeName", "").empty()) pod.bound = now;
    const std::string phase = p.contains("status") ? p["status"].value("phase", "") : "";
    if (!pod.running && phase == "Running") pod.running = now;
    if (!pod.ended && (phase == "Succeeded" || phase == "Failed")) {
      pod.ended = now;
      pod.ended_wall = wall;
      pod.failed = phase == "Failed";
    }
  }
  /// For each failed pod whose index got another pod: the wall clock's milliseconds past its second
  /// when the failure was seen (its finishedAt is that second) and the milliseconds from the failure
  /// to the replacement's creation (receive times). The Job controller's backoff counts from the
  /// whole second, so the second falls by about the first.
  json retries() {
    const std::lock_guard lock(mu_);
    json out = json::array();
    for (const auto& [name, p] : pods_) {
      if (!p.failed || p.index.empty()) continue;
      for (const auto& [other, q] : pods_)
        if (q.index == p.index && q.created && *q.created > *p.ended) {
          const auto us =
              std::chrono::duration_cast<std::chrono::microseconds>(p.ended_wall.time_since_epoch()).count();
          out.push_back({{"index", p.index},
                         {"failed_wall_fraction_ms", static_cast<double>(us % 1'000'000) / 1000.0},
                         {"failed_to_replacement_ms", ms(*q.created - *p.ended)}});
        }
    }
    return out;
  }
  /// Medians in milliseconds: creation to bound, bound to Running, a pod's end to the creation of the
  /// next pod (pods created after some pod ended: the Job controller's refill), the last end to `end`.
  json summary(Clock::time_point end) {
    const std::lock_guard lock(mu_);
    std::vector<double> bind, run, refill, whole;
    // last_wave_start: the latest creation of a pod created after some pod ended (the last refill).
    std::optional<Clock::time_point> last_end, first_created, last_wave_start;
    for (const auto& [name, p] : pods_) {
      if (p.created && p.bound) bind.push_back(ms(*p.bound - *p.created));
      if (p.bound && p.running) run.push_back(ms(*p.running - *p.bound));
      if (p.created && p.ended) whole.push_back(ms(*p.ended - *p.created));
      if (p.ended && (!last_end || *p.ended > *last_end)) last_end = p.ended;
      if (!p.created) continue;
      if (!first_created || *p.created < *first_created) first_created = p.created;
      std::optional<Clock::time_point> before;
      for (const auto& [other, q] : pods_)
        if (q.ended && *q.ended < *p.created && (!before || *q.ended > *before)) before = q.ended;
      if (!before) continue;
      refill.push_back(ms(*p.created - *before));
      if (!last_wave_start || *p.created > *last_wave_start) last_wave_start = p.created;
    }
    // The first wave (pods created before any pod ended): how fast kube-scheduler binds a burst.
    std::optional<Clock::time_point> first_end, first_bound, last_bound, wave_first_created,
        wave_last_created;
    for (const auto& [name, p] : pods_)
      if (p.ended && (!first_end || *p.ended < *first_end)) first_end = p.ended;
    std::size_t wave = 0;
    double first_bind = -1;
    for (const auto& [name, p] : pods_) {
      if (!p.created || !p.bound || (first_end && *p.created > *first_end)) continue;
      ++wave;
      if (first_bind < 0 || ms(*p.bound - *p.created) < first_bind) first_bind = ms(*p.bound - *p.created);
      if (!first_bound || *p.bound < *first_bound) first_bound = p.bound;
      if (!last_bound || *p.bound > *last_bound) last_bound = p.bound;
      if (!wave_first_created || *p.created < *wave_first_created) wave_first_created = p.created;
      if (!wave_last_created || *p.created > *wave_last_created) wave_last_created = p.created;
    }
    // The Job controller's lag: the first pod created after the first end, from that end (the sync the
    // end asked for, sync_period later, and its write), and the Job's condition from the first end of
    // the last wave: the pods created within 1 s before its latest creation (one sync's slow-start
    // batches).
    std::optional<Clock::time_point> refill_first, last_wave_first_end;
    for (const auto& [name, p] : pods_) {
      if (!p.created) continue;
      if (first_end && *p.created > *first_end && (!refill_first || *p.created < *refill_first))
        refill_first = p.created;
      if (p.ended && last_wave_start && *p.created + std::chrono::seconds(1) >= *last_wave_start &&
          (!last_wave_first_end || *p.ended < *last_wave_first_end))
        last_wave_first_end = p.ended;
    }
    const auto least = [](const std::vector<double>& v) {
      return v.empty() ? -1.0 : *std::min_element(v.begin(), v.end());
    };
    return {
        {"first_wave_pods", wave},
        {"min_created_to_bound", least(bind)},
        {"min_bound_to_running", least(run)},
        {"min_created_to_end", least(whole)},
        {"first_wave_min_bind", first_bind},
        {"first_wave_bind_per_pod",
         wave > 1 ? ms(*last_bound - *first_bound) / static_cast<double>(wave - 1) : -1.0},
        // The Job controller's slow-start batches (1, 2, 4, ... pods, each after the last one's creations).
        {"first_wave_created_span", wave > 1 ? ms(*wave_last_created - *wave_first_created) : -1.0},
        {"created_to_bound", median(bind)},
        {"bound_to_running", median(run)},
        {"end_to_next_created", median(refill)},
        {"last_end_to_condition", last_end ? ms(end - *last_end) : -1.0},
        {"first_end_to_refill", refill_first ? ms(*refill_first - *first_end) : -1.0},
        {"first_created_to_first_end", first_created && first_end ? ms(*first_end - *first_created) : -1.0},
        {"last_wave_first_end_to_condition", last_wave_first_end ? ms(end - *last_wave_first_end) : -1.0},
        {"pods_seen", pods_.size()}};
  }

 private:
  struct Pod {
    std::optional<Clock::time_point> created, bound, running, ended;
    std::chrono::system_clock::time_point ended_wall;
    std::string index;  // an Indexed Job's completion index
    bool failed = false;
  };
  static double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
  static double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  std::mutex mu_;
  std::map<std::string, Pod> pods_;
};

int run_job(const Args& a) {
  std::ifstream in(a.manifest);
  if (!in) throw std::runtime_error("cannot read " + a.manifest);
  const json job = json::parse(in);
  k8s::Client api(k8s::load_kubeconfig(a.kubeconfig, ""));
  const std::string base = "/apis/batch/v1/namespaces/" + a.ns + "/jobs";
  // The Job's pods as seen by a watch: when each was created, bound, Running and ended (receive times).
  PodTimes pods;
  std::atomic<bool> stop{false};
  const std::string pod_path = "/api/v1/namespaces/" + a.ns + "/pods";
  const std::string selector = "labelSelector=job-name%3D" + job["metadata"]["name"].get<std::string>();
  const std::string pods_rv = api.get(pod_path + "?" + selector)["metadata"]["resourceVersion"];
  std::thread watcher([&] {
    try {
      api.watch(
          pod_path + "?" + selector + "&resourceVersion=" + pods_rv,
          [&](const json& ev) {
            pods.seen(ev);
            return true;
          },
          &stop);
    } catch (const std::exception& e) {
      std::cerr << "pod watch: " << e.what() << "\n";
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  const json created = api.create(base, job);
  const auto t1 = std::chrono::steady_clock::now();
  // The wall clock at t1 (measured time 0), past its whole second: the pods' finishedAt the Job
  // controller counts a failure's backoff from are stored in whole seconds of that clock (the
  // simulator's overheads.control_plane.clock_phase).
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const auto wall_us = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count();
  const std::int64_t t0_wall_fraction_us = wall_us % 1'000'000;
  const std::string name = created["metadata"]["name"];
  std::string rv = created["metadata"]["resourceVersion"];
  json result;
  const auto finished = [&](const json& obj) {
    if (!obj.contains("status") || !obj["status"].contains("conditions")) return false;
    for (const json& c : obj["status"]["conditions"]) {
      const std::string type = c.value("type", "");
      if ((type == "Complete" || type == "Failed") && c.value("status", "") == "True") {
        const auto t2 = std::chrono::steady_clock::now();
        result = {{"job", name},
                  {"condition", type},
                  {"reason", c.value("reason", "")},
                  {"elapsed_s", std::chrono::duration<double>(t2 - t1).count()},
                  {"create_call_s", std::chrono::duration<double>(t1 - t0).count()},
                  {"t0_wall_fraction_us", t0_wall_fraction_us},
                  {"succeeded", obj["status"].value("succeeded", 0)},
                  {"failed", obj["status"].value("failed", 0)},
                  {"failed_indexes", obj["status"].value("failedIndexes", "")},
                  {"start_time", obj["status"].value("startTime", "")},
                  {"completion_time", obj["status"].value("completionTime", "")}};
        return true;
      }
    }
    return false;
  };
  while (result.is_null()) {
    try {
      api.watch(base + "?fieldSelector=metadata.name%3D" + name + "&resourceVersion=" + rv,
                [&](const json& ev) {
                  const json& obj = ev["object"];
                  if (obj.contains("metadata") && obj["metadata"].contains("resourceVersion"))
                    rv = obj["metadata"]["resourceVersion"];
                  return !finished(obj);
                });
    } catch (const k8s::GoneError&) {
      const json now = api.get(base + "/" + name);
      rv = now["metadata"]["resourceVersion"];
      finished(now);
    }
  }
  const auto t_end = std::chrono::steady_clock::now();
  stop = true;
  watcher.join();
  result["latencies_ms"] = pods.summary(t_end);
  result["retries"] = pods.retries();
  std::cout << result.dump() << std::endl;
  return 0;
}

int predict(const Args& a) {
  const Scenario sc = load_scenario_file(a.scenario, a.sets);
  const Plan plan = Plan::unroll(sc.pipeline);
  sim::SimOptions opt;
  opt.seed = sc.seed;
  sim::SimStats stats;
  const Trace t = sim::simulate(sc, plan, opt, stats);
  json steps = json::object();
  for (std::size_t i = 0; i < plan.steps().size(); ++i)
    steps[plan.steps()[i].path] = stats.step_done[i] == kNever ? -1.0 : stats.step_done[i].seconds();
  SimTime last = SimTime::zero();
  std::map<std::string, std::set<std::uint32_t>> first_failed, later_succeeded;
  for (const AttemptRecord& r : t.attempts) {
    last = std::max(last, r.finished);
    const std::string& step = plan.steps()[r.step].path;
    if (r.attempt == 0 && r.outcome == Outcome::failed) first_failed[step].insert(r.item);
    if (r.attempt > 0 && r.outcome == Outcome::succeeded) later_succeeded[step].insert(r.item);
  }
  std::cout << json{{"steps", steps},
                    {"last_pod_end", last.seconds()},
                    {"attempts", t.attempts.size()},
                    {"first_attempt_failed", first_failed},
                    {"retry_succeeded", later_succeeded}}
                   .dump()
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (a.command == "place") return place(a);
    if (a.command == "predict") return predict(a);
    if (a.command == "job") return run_job(a);
    throw std::invalid_argument("unknown command " + a.command + " (place or predict)");
  } catch (const std::exception& e) {
    std::cerr << "fidelity_driver: " << e.what() << "\n";
    return 2;
  }
}
