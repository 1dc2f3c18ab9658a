#include <sched.h>
#include <thread>
#include <unistd.h>

#include <shardflow/core/machine.hpp>

namespace shardflow {

int machine_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const unsigned h = std::thread::hardware_concurrency();
  return h > 0 ? static_cast<int>(h) : 1;
}

ByteCount machine_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<ByteCount>(pages) * size : 0;
}

}  // namespace shardflow
