// What a process ended at once by a signal must not leave behind: the temporary files it is writing
// (a half-written `.trace.json.tmp-PID` of hundreds of MB, invisible to `ls`) and the process groups of
// the commands it runs (which would go on as orphans). They are registered while they exist; a signal
// handler that ends the process calls clean_up_at_once() first. Everything here is async-signal-safe
// except where said (no allocation, no locks: fixed tables of atomics).
//
//   const int slot = leftovers::add_file("/out/.trace.json.tmp-42");   // before the file is made
//   ...                                                                 // write it, rename it
//   leftovers::remove_file(slot);                                       // renamed or removed: forget it
#pragma once

#include <sys/types.h>

namespace shardflow::leftovers {

/// Registers a temporary file by its path (copied; up to 4095 bytes). Returns its slot, or -1 when the
/// table is full or the path too long (then it is not cleaned up: best effort).
int add_file(const char* path);
/// Registers a directory this process made, which clean_up_at_once removes if it is then empty (after the
/// files, the last registered first: register a directory before the ones made inside it). Returns its
/// slot, or -1.
int add_directory(const char* path);
/// Registers a scratch directory of files (no subdirectories) that clean_up_at_once removes with the files
/// in it. Returns its slot, or -1.
int add_scratch_directory(const char* path);
/// Forgets the file or directory of `slot` (-1: nothing).
void remove_file(int slot);
/// Registers a child's process group (its leader's pid). Returns its slot, or -1 when the table is full.
int add_group(pid_t group);
/// Forgets the process group of `slot` (-1: nothing).
void remove_group(int slot);
/// Sends SIGKILL to every registered process group, removes every registered file, then every registered
/// directory that is empty. Async-signal-safe.
void clean_up_at_once();

}  // namespace shardflow::leftovers
