// sim_cold TASKS NODES [--summary]: one run of the SimPy workload (bench/sim_workloads.hpp) in a fresh
// process, for bench/simpy_compare.sh's cold comparison; prints the makespan and the decision and event
// counts (JSON).
//
// What a cold run measures is the whole process: exec, start-up, building the scenario, unrolling the
// plan, simulating, printing. This program links the simulator and the C++ runtime statically (see
// bench/CMakeLists.txt) and nothing else, so that start-up is not dynamic relocation of libraries the run
// never calls (Google Benchmark, TBB, yaml-cpp, which sim_bench --simpy-cold loads).
#include <cstdlib>
#include <cstring>

#include "sim_workloads.hpp"

int main(int argc, char** argv) {
  const bool summary = argc == 4 && std::strcmp(argv[3], "--summary") == 0;
  if (argc != 3 && !summary) {
    std::fputs("usage: sim_cold TASKS NODES [--summary]\n  --summary: no attempt records (as a sweep runs)\n",
               stderr);
    return 2;
  }
  return shardflow::bench::simpy_cold_run(static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10)),
                                          std::atoi(argv[2]), !summary);
}
