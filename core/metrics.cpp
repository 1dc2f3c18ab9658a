#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include <shardflow/core/metrics.hpp>

namespace shardflow {

std::size_t nearest_rank(double p, std::size_t n) {
  // ceil(p% of n), where a product that is a whole number but for the rounding of p / 100 counts as that
  // number: 0.999 x 1000 is 999.0000000000001 in doubles, and the rank was 1000, the maximum.
  const double k = p / 100.0 * static_cast<double>(n);
  const double whole = std::round(k);
  const double rank = std::abs(k - whole) <= 1e-9 * std::max(1.0, whole) ? whole : std::ceil(k);
  return std::clamp<std::size_t>(static_cast<std::size_t>(std::max(rank, 0.0)), 1, n);
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  const std::size_t rank = nearest_rank(p, values.size());
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

namespace {

// Nearest-rank percentiles as percentile() gives them, from one copy: each nth_element leaves the values
// above its rank after it, and the ranks only rise, so the next is searched among those alone.
Percentiles percentiles_of(const std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::vector<double> w = v;
  auto from = w.begin();
  for (auto [at, out] : {std::pair{50.0, &p.p50}, std::pair{95.0, &p.p95}, std::pair{99.0, &p.p99}}) {
    const auto nth = w.begin() + static_cast<std::ptrdiff_t>(nearest_rank(at, w.size()) - 1);
    std::nth_element(from, nth, w.end());
    from = nth;
    *out = *nth;
  }
  p.max = *std::max_element(from, w.end());
  long double sum = 0;
  for (double x : v) sum += x;
  p.mean = static_cast<double>(sum / static_cast<long double>(v.size()));
  return p;
}

// Sorts (time, value) pairs by time alone (the order of equal times is left as it falls): a radix sort
// on the time's offset from the earliest, 11 bits a pass, as many passes as the span needs. A trace has
// two such changes per attempt; std::sort's comparisons were a tenth of `shardflow simulate`.
void sort_by_time(std::vector<std::pair<std::int64_t, std::int64_t>>& v) {
  if (v.size() < 2) return;
  std::int64_t lo = v[0].first, hi = v[0].first;
  for (const auto& e : v) lo = std::min(lo, e.first), hi = std::max(hi, e.first);
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<std::pair<std::int64_t, std::int64_t>> tmp(v.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kBits) {
    const auto digit = [&](const std::pair<std::int64_t, std::int64_t>& e) {
      return static_cast<std::size_t>(
          ((static_cast<std::uint64_t>(e.first) - static_cast<std::uint64_t>(lo)) >> shift) & (kBuckets - 1));
    };
    std::fill(count.begin(), count.end(), 0);
    for (const auto& e : v) ++count[digit(e)];
    std::size_t sum = 0;
    for (std::size_t& c : count) sum += std::exchange(c, sum);
    for (const auto& e : v) tmp[count[digit(e)]++] = e;
    v.swap(tmp);
  }
}

__extension__ using Int128 = __int128;  // GCC's and Clang's, for exact sums of nanoseconds

std::int64_t run_ns(const AttemptRecord& a) {
  if (a.started == kNever || a.finished < a.started) return 0;
  return (a.finished - a.started).ns();
}

}  // namespace

double makespan_s(const Trace& trace) {
  std::int64_t ns = trace.last_finished.ns();
  for (const AttemptRecord& a : trace.attempts) ns = std::max(ns, a.finished.ns());
  return Duration::from_ns(ns).seconds();
}

double eta_from_prediction(const std::vector<double>& predicted_done_s, double predicted_makespan_s,
                           std::uint64_t done, double elapsed_s, std::optional<double> done_at_s) {
  if (predicted_makespan_s <= 0) return -1;
  if (done >= predicted_done_s.size() && !predicted_done_s.empty()) return 0;
  const double p = done == 0 || predicted_done_s.empty() ? 0 : predicted_done_s[done - 1];
  if (p <= 0) return std::max(0.0, predicted_makespan_s - elapsed_s);
  // The run's pace when its done-th task ended (real seconds a predicted second); since then it went on at
  // that pace, but not past the next task's predicted end, which has not come: the ETA falls between
  // ends, then holds (it grew with every second no task ended).
  const double at = std::clamp(done_at_s.value_or(elapsed_s), 0.0, elapsed_s);
  const double pace = at / p;
  if (pace <= 0) return std::max(0.0, predicted_makespan_s - p);
  const double next = done < predicted_done_s.size() ? predicted_done_s[done] : predicted_makespan_s;
  const double position = std::min(std::max(p, next), p + (elapsed_s - at) / pace);
  return std::max(0.0, predicted_makespan_s - position) * pace;
}

double cost(const Trace& trace) {
  CostSum c;
  for (const NodeRecord& n : trace.nodes) c.add(n.price_per_hour, n.down - n.billed_from);
  return c.total();
}

void CostSum::add(double price_per_hour, Duration billed) {
  Part* part = nullptr;
  for (Part& p : parts_)
    if (p.price_per_hour == price_per_hour) part = &p;
  if (part == nullptr) part = &parts_.emplace_back(Part{price_per_hour, 0, 0});
  std::int64_t sum = 0;
  if (__builtin_add_overflow(part->ns, billed.ns(), &sum))
    part->more_s += billed.seconds();
  else
    part->ns = sum;
}

double CostSum::total() const {
  double c = 0;
  for (const Part& p : parts_)
    c += p.price_per_hour * (Duration::from_ns(p.ns).seconds() + p.more_s) / 3600.0;
  return c;
}

Metrics compute_metrics(const Trace& trace, const Plan& plan) {
  if (!trace.records) throw std::logic_error("compute_metrics: the trace kept no attempt records");
  Metrics m;
  std::int64_t makespan_ns = trace.last_finished.ns();  // a run stopped with no pod alive ran until then
  std::vector<double> waits;
  waits.reserve(trace.attempts.size());
  std::vector<std::vector<double>> step_runs(trace.steps.size());
  m.per_step.resize(trace.steps.size());
  for (std::size_t i = 0; i < trace.steps.size(); ++i) {
    m.per_step[i].step = trace.steps[i];
    if (i < plan.steps().size()) m.per_step[i].requests = plan.steps()[i].component.resources;
  }
  // Successful run time per task, for the critical path.
  std::vector<std::int64_t> task_run(plan.size(), 0);
  // Sums in integer nanoseconds (and nanosecond-millicores), so that they are exact: 10.760329372 s, not
  // the 10.760329372000001 of adding seconds as doubles. 128 bits: 10 million attempts of a day each.
  Int128 total_work_ns = 0, cpu_work_ns_mcpu = 0;
  // CPU occupancy changes (time, +/- millicores) and capacity changes (time, +/- millicores).
  std::vector<std::pair<std::int64_t, std::int64_t>> load, capacity;

  for (const AttemptRecord& a : trace.attempts) {
    makespan_ns = std::max(makespan_ns, a.finished.ns());
    ++m.attempts;
    switch (a.kind) {
      case AttemptKind::first:
        break;
      case AttemptKind::retry:
        ++m.retries;
        break;
      case AttemptKind::backup:
        ++m.backups;
        if (a.outcome == Outcome::succeeded) ++m.backups_won;
        break;
      case AttemptKind::replacement:
        ++m.replacements;
        break;
    }
    if (a.outcome == Outcome::cancelled)
      ++m.cancelled_attempts;
    else if (a.outcome != Outcome::succeeded)
      ++m.failed_attempts;
    const std::int64_t run_time = run_ns(a);
    const double run = Duration::from_ns(run_time).seconds();
    total_work_ns += run_time;
    const MilliCpu cpu = a.step < plan.steps().size() ? plan.steps()[a.step].component.resources.cpu : 0;
    cpu_work_ns_mcpu += static_cast<Int128>(run_time) * cpu;
    if (a.scheduled != kNever) {
      waits.push_back((a.scheduled - a.submitted).seconds());
      load.emplace_back(a.scheduled.ns(), cpu);
      load.emplace_back(a.finished.ns(), -cpu);
    }
    if (a.step < m.per_step.size()) {
      StepMetrics& sm = m.per_step[a.step];
      ++sm.attempts;
      if (a.outcome == Outcome::succeeded)
        step_runs[a.step].push_back(run);
      else if (a.outcome != Outcome::cancelled)
        ++sm.failures;
    }
    if (a.outcome == Outcome::succeeded && a.task < task_run.size()) task_run[a.task] = run_time;
  }
  m.total_work_s = static_cast<double>(total_work_ns) / 1e9;
  m.cpu_work_core_s = static_cast<double>(cpu_work_ns_mcpu) / 1e12;
  m.makespan_s = Duration::from_ns(makespan_ns).seconds();
  m.queue_wait_s = percentiles_of(waits);
  for (std::size_t i = 0; i < step_runs.size(); ++i) {
    m.per_step[i].succeeded = step_runs[i].size();
    m.per_step[i].run_seconds = percentiles_of(step_runs[i]);
  }
  m.tasks_failed = trace.tasks_failed;

  // Critical path of what actually ran: longest chain of successful run times along plan edges.
  // Each node remembers the predecessor its chain came through, so that one longest chain can be named.
  std::vector<std::int64_t> finish(plan.size(), 0);
  std::vector<TaskId> via(plan.size(), kNone);
  TaskId last = kNone;
  std::int64_t path_ns = 0;
  for (TaskId t = 0; t < plan.size(); ++t) {
    std::int64_t start = 0;
    for (TaskId p : plan.preds(t)) {
      if (via[t] == kNone || finish[p] > start) via[t] = p;
      start = std::max(start, finish[p]);
    }
    finish[t] = start + task_run[t];
    if (finish[t] > path_ns || last == kNone) last = t;
    path_ns = std::max(path_ns, finish[t]);
  }
  m.critical_path_s = Duration::from_ns(path_ns).seconds();
  for (TaskId t = last; t != kNone && path_ns > 0; t = via[t])
    if (!plan.is_join(t)) m.critical_path.push_back(t);
  std::reverse(m.critical_path.begin(), m.critical_path.end());

  // Utilization against the CPU of the nodes that were up, and cost of the billed node time.
  double capacity_core_s = 0;
  for (const NodeRecord& n : trace.nodes) {
    const std::int64_t down = std::min(n.down.ns(), makespan_ns);
    if (down > n.up.ns()) {
      capacity_core_s += static_cast<double>(n.cpu) / 1000.0 * Duration::from_ns(down - n.up.ns()).seconds();
      capacity.emplace_back(n.up.ns(), n.cpu);
      capacity.emplace_back(down, -n.cpu);
    }
  }
  m.cost = cost(trace);
  m.mean_cpu_utilization = capacity_core_s > 0 ? m.cpu_work_core_s / capacity_core_s : 0;
  // Every core busy the whole time is 1, not 1.0000000000000002 (the two sums round apart).
  if (m.mean_cpu_utilization > 1 && m.mean_cpu_utilization < 1 + 1e-9) m.mean_cpu_utilization = 1;

  // Peak instantaneous requested/available CPU: sweep both change lists in time order, dividing at every
  // time either changes (a node going away while pods run elsewhere raises the ratio too). The sweep
  // takes every change at a time before it divides, so the order within a time does not matter and
  // back-to-back tasks do not count as overlapping.
  sort_by_time(load);
  sort_by_time(capacity);
  std::int64_t used = 0, avail = 0;
  std::size_t ci = 0, li = 0;
  while (li < load.size() || ci < capacity.size()) {
    const std::int64_t now = std::min(li < load.size() ? load[li].first : INT64_MAX,
                                      ci < capacity.size() ? capacity[ci].first : INT64_MAX);
    while (ci < capacity.size() && capacity[ci].first == now) avail += capacity[ci++].second;
    while (li < load.size() && load[li].first == now) used += load[li++].second;
    if (avail > 0)
      m.peak_cpu_utilization =
          std::max(m.peak_cpu_utilization, static_cast<double>(used) / static_cast<double>(avail));
  }
  return m;
}

namespace {
nlohmann::ordered_json percentiles_json(const Percentiles& p) {
  return {{"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}, {"max", p.max}, {"mean", p.mean}};
}
}  // namespace

void write_metrics_json(std::ostream& out, const Metrics& m) {
  nlohmann::ordered_json j;
  j["makespan_s"] = m.makespan_s;
  j["critical_path_s"] = m.critical_path_s;
  j["total_work_s"] = m.total_work_s;
  j["cpu_work_core_s"] = m.cpu_work_core_s;
  j["mean_cpu_utilization"] = m.mean_cpu_utilization;
  j["peak_cpu_utilization"] = m.peak_cpu_utilization;
  j["queue_wait_s"] = percentiles_json(m.queue_wait_s);
  j["cost"] = m.cost;
  j["attempts"] = m.attempts;
  j["retries"] = m.retries;
  j["backups"] = m.backups;
  j["backups_won"] = m.backups_won;
  j["replacements"] = m.replacements;
  j["failed_attempts"] = m.failed_attempts;
  j["cancelled_attempts"] = m.cancelled_attempts;
  j["tasks_failed"] = m.tasks_failed;
  auto& steps = j["steps"] = nlohmann::ordered_json::array();
  for (const StepMetrics& s : m.per_step) {
    nlohmann::ordered_json step = {
        {"step", s.step}, {"attempts", s.attempts}, {"failures", s.failures}, {"succeeded", s.succeeded}};
    // A step with no successful attempt has no run times (0 s would read as a step that takes none).
    if (s.succeeded > 0) step["run_s"] = percentiles_json(s.run_seconds);
    step["requests"] = {
        {"cpu_milli", s.requests.cpu}, {"memory_bytes", s.requests.memory}, {"gpu", s.requests.gpu}};
    steps.push_back(std::move(step));
  }
  j["critical_path"] = m.critical_path;
  out << j.dump(2) << "\n";
}

void write_metrics_csv(std::ostream& out, const Metrics& m) {
  auto row = [&out](const std::string& name, double v) {
    // The shortest text that reads back to the same double (0.5002018331, not 0.50020183310000004).
    char buf[64];
    out << name << ',' << std::string_view(buf, std::to_chars(buf, buf + sizeof buf, v).ptr) << '\n';
  };
  // Counts as integers (1000000, not the shortest double text 1e+06).
  auto count = [&out](const std::string& name, std::uint64_t v) { out << name << ',' << v << '\n'; };
  out << "metric,value\n";
  row("makespan_s", m.makespan_s);
  row("critical_path_s", m.critical_path_s);
  row("total_work_s", m.total_work_s);
  row("cpu_work_core_s", m.cpu_work_core_s);
  row("mean_cpu_utilization", m.mean_cpu_utilization);
  row("peak_cpu_utilization", m.peak_cpu_utilization);
  row("queue_wait_p50_s", m.queue_wait_s.p50);
  row("queue_wait_p95_s", m.queue_wait_s.p95);
  row("queue_wait_p99_s", m.queue_wait_s.p99);
  row("queue_wait_max_s", m.queue_wait_s.max);
  row("queue_wait_mean_s", m.queue_wait_s.mean);
  row("cost", m.cost);
  count("attempts", m.attempts);
  count("retries", m.retries);
  count("backups", m.backups);
  count("backups_won", m.backups_won);
  count("replacements", m.replacements);
  count("failed_attempts", m.failed_attempts);
  count("cancelled_attempts", m.cancelled_attempts);
  count("tasks_failed", m.tasks_failed);
  for (const StepMetrics& s : m.per_step) {
    const std::string p = "step." + s.step + ".";
    count(p + "attempts", s.attempts);
    count(p + "failures", s.failures);
    count(p + "succeeded", s.succeeded);
    if (s.succeeded == 0) continue;  // no run times (see write_metrics_json)
    row(p + "run_p50_s", s.run_seconds.p50);
    row(p + "run_p95_s", s.run_seconds.p95);
    row(p + "run_p99_s", s.run_seconds.p99);
  }
}

}  // namespace shardflow
