// The planner at scale, two measurements for reports/planner-sweep.md (scripts/planner-sweep-report):
//   planner_scale_bench search   # a 10,000-configuration space: simulations of --search auto against the
//                                # grid's, and whether both recommend the same configuration; --shapes
//                                # varies the node's CPU instead of its price, so every configuration
//                                # is a distinct simulation
//   planner_scale_bench speed [--no-reuse]   # 1,000 configurations x 20 replications of a 10,000-task
//                                # scenario: wall and CPU time, with the price-only variants sharing their
//                                # simulations (the default) or each simulated (--no-reuse)
// Not a Google Benchmark: each is one long run whose counts and time are the result.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/resource.h>

#include <tbb/info.h>

#include <shardflow/planner/sweep.hpp>

namespace {

using namespace shardflow::planner;
using Clock = std::chrono::steady_clock;

std::string list(int first, int last, int step = 1) {
  std::string s;
  for (int v = first; v <= last; v += step) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// This process's CPU time so far, user + system, in seconds (every thread's).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

// 40 tasks of 4 cores (30 s, lognormal noise 0.2) on 16-core nodes, then a 20 s merge.
const char* kSmall =
    "name: search-space\n"
    "seed: 11\n"
    "overheads: none\n"
    "pipeline:\n"
    "  steps:\n"
    "    - name: w\n"
    "      parallel_for: {count: 40}\n"
    "      duration: {base: 30s, noise: {lognormal_sigma: 0.2}}\n"
    "      resources: {cpu: 4}\n"
    "    - name: merge\n"
    "      after: [w]\n"
    "      duration: {base: 20s}\n"
    "cluster:\n"
    "  node_pools:\n"
    "    - {name: n, cpu: 16, memory: 64Gi, count: 1, price_per_hour: 3.6}\n";

// shapes = false: 25 node counts x 20 parallelism limits x 20 prices = 10,000 configurations, of which
// 500 are distinct to the simulator (price-only variants share their simulations).
// shapes = true: the third field is the node's CPU (16..35 cores), which the simulator reads, so all
// 10,000 are distinct and the grid simulates every one.
int search(bool shapes) {
  SweepSpec spec;
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=" + list(1, 25)),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=" + list(2, 40, 2)),
                     parse_dimension(shapes ? "cluster.node_pools[n].cpu=" + list(16, 35)
                                            : "cluster.node_pools[n].price_per_hour=" + list(20, 39))};
  spec.replications = 10;
  spec.deadline_s = 150;
  auto t = Clock::now();
  const SweepResult grid = run_sweep_text(kSmall, "search-space.yaml", spec);
  const double grid_s = seconds_since(t);
  spec.search = Search::automatic;
  t = Clock::now();
  const SweepResult autos = run_sweep_text(kSmall, "search-space.yaml", spec);
  const double auto_s = seconds_since(t);
  const auto text = [](const SweepResult& r) {
    if (!r.recommended) return std::string("none");
    std::string s;
    for (const std::string& v : r.configs[*r.recommended].values) s += (s.empty() ? "" : ", ") + v;
    char buf[96];
    std::snprintf(buf, sizeof buf, " (mean cost %.4f, p95 %.1f s)", r.configs[*r.recommended].cost.mean,
                  r.configs[*r.recommended].quantile_makespan_s);
    return s + buf;
  };
  std::printf("space: %zu configurations x %d replications, deadline %.0f s\n", grid.configurations_in_space,
              spec.replications, *spec.deadline_s);
  std::printf("grid: %llu runs (%llu distinct simulations) in %.1f s; recommends %s\n",
              static_cast<unsigned long long>(grid.simulations),
              static_cast<unsigned long long>(grid.distinct_simulations), grid_s, text(grid).c_str());
  std::printf(
      "auto: %llu runs (%llu distinct simulations) in %.1f s (%.1f%% of the grid's runs, %.1f%% of its "
      "distinct "
      "simulations); recommends %s\n",
      static_cast<unsigned long long>(autos.simulations),
      static_cast<unsigned long long>(autos.distinct_simulations), auto_s,
      100.0 * static_cast<double>(autos.simulations) / static_cast<double>(grid.simulations),
      100.0 * static_cast<double>(autos.distinct_simulations) /
          static_cast<double>(grid.distinct_simulations),
      text(autos).c_str());
  const bool same = text(grid) == text(autos);
  std::printf("same recommendation: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}

int speed(bool reuse) {
  // 10,000 one-core tasks (20 s, lognormal noise 0.3) in one loop, then a 60 s merge.
  const std::string scenario =
      "name: ten-thousand\n"
      "seed: 5\n"
      "pipeline:\n"
      "  steps:\n"
      "    - name: w\n"
      "      parallel_for: {count: 10000, parallelism: 2000}\n"
      "      duration: {base: 20s, noise: {lognormal_sigma: 0.3}}\n"
      "    - name: merge\n"
      "      after: [w]\n"
      "      duration: {base: 60s}\n"
      "cluster:\n"
      "  node_pools:\n"
      "    - {name: n, cpu: 16, memory: 64Gi, count: 50, price_per_hour: 0.77}\n";
  SweepSpec spec;
  // 10 node counts x 10 parallelism limits x 10 prices = 1,000 configurations.
  spec.dimensions = {parse_dimension("cluster.node_pools[n].count=" + list(20, 200, 20)),
                     parse_dimension("pipeline.steps[w].parallel_for.parallelism=" + list(250, 2500, 250)),
                     parse_dimension("cluster.node_pools[n].price_per_hour=" + list(1, 10))};
  spec.replications = 20;
  spec.deadline_s = 1800;
  spec.reuse = reuse;
  const double cpu0 = cpu_seconds();
  const auto t = Clock::now();
  const SweepResult r = run_sweep_text(scenario, "ten-thousand.yaml", spec);
  const double s = seconds_since(t);
  const double cpu = cpu_seconds() - cpu0;
  std::printf(
      "%zu configurations x %d replications of a 10,000-task scenario (%s): %llu runs, %llu distinct "
      "simulations in %.1f s wall, %.1f s CPU (%.2f ms CPU per distinct simulation, %d threads)\n",
      r.configs.size(), r.replications, reuse ? "reuse" : "--no-reuse",
      static_cast<unsigned long long>(r.simulations), static_cast<unsigned long long>(r.distinct_simulations),
      s, cpu, 1000 * cpu / static_cast<double>(r.distinct_simulations), tbb::info::default_concurrency());
  if (r.recommended) {
    std::string v;
    for (const std::string& x : r.configs[*r.recommended].values) v += (v.empty() ? "" : ", ") + x;
    std::printf("recommends %s (mean cost %.6f, p95 %.3f s)\n", v.c_str(),
                r.configs[*r.recommended].cost.mean, r.configs[*r.recommended].quantile_makespan_s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "search") == 0) return search(false);
  if (argc == 3 && std::strcmp(argv[1], "search") == 0 && std::strcmp(argv[2], "--shapes") == 0)
    return search(true);
  if (argc == 2 && std::strcmp(argv[1], "speed") == 0) return speed(true);
  if (argc == 3 && std::strcmp(argv[1], "speed") == 0 && std::strcmp(argv[2], "--no-reuse") == 0)
    return speed(false);
  std::fprintf(stderr, "usage: planner_scale_bench search [--shapes] | speed [--no-reuse]\n");
  return 2;
}
