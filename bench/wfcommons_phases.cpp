// Where the time of `shardflow simulate instance.json --no-files` goes, phase by phase, in one process
// (reports/wfcommons-speed.md, scripts/wfcommons-speed-report): read the file, parse the JSON (core's own
// positioned reader, core/json_document.cpp), the whole import (parse + scenario document + the
// loader's checks), unroll the Plan, simulate, compute the metrics. Each phase is timed over --repeat
// runs of it; the median of the thread's CPU time is printed, in microseconds (CPU time: on a shared
// machine, wall time in a process mostly measures waiting for a CPU).
//
//   wfcommons_phases [--repeat N] tests/data/wfcommons/*.json
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <shardflow/core/metrics.hpp>
#include <shardflow/core/plan.hpp>
#include <shardflow/core/scenario.hpp>
#include <shardflow/sim/simulator.hpp>

#include "json_document.hpp"  // core's private JSON reader

using namespace shardflow;

namespace {
double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

template <class F>
double median_us(int repeat, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = cpu_us();
    f();
    t.push_back(cpu_us() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  int repeat = 21;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else
      files.push_back(a);
  }
  std::printf(
      "| instance | read file us | JSON parse us | import (parse + document + loader) us | unroll us | "
      "simulate us | metrics us | total us |\n|---|---|---|---|---|---|---|---|\n");
  for (const std::string& f : files) {
    std::string text;
    const double read = median_us(repeat, [&] { text = read_scenario_file(f); });
    const double parse = median_us(repeat, [&] { (void)parse_json_document(text, f).size(); });
    Scenario s;
    const double import = median_us(repeat, [&] { s = load_scenario_text(text, f); });
    Plan plan = Plan::unroll(s.pipeline);
    const double unroll = median_us(repeat, [&] { plan = Plan::unroll(s.pipeline); });
    Trace trace;
    const double simulate =
        median_us(repeat, [&] { trace = sim::simulate(s, plan, sim::SimOptions::with_seed(s.seed)); });
    const double metrics = median_us(repeat, [&] { (void)compute_metrics(trace, plan).makespan_s; });
    std::string name = f.substr(f.find_last_of('/') + 1);
    std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", name.c_str(), read, parse,
                import, unroll, simulate, metrics, read + import + unroll + simulate + metrics);
  }
  return 0;
}
