// This machine, as the local backend and the `--cluster local` preset see it.
#pragma once

#include <shardflow/core/units.hpp>

namespace shardflow {

/// The CPUs this process may use (its affinity mask; else the hardware's), at least 1.
int machine_cores();
/// This machine's physical memory in bytes (0 if it cannot be read).
ByteCount machine_memory();

}  // namespace shardflow
