#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <shardflow/core/leftovers.hpp>

namespace shardflow::leftovers {

namespace {

constexpr int kFiles = 32;
constexpr int kGroups = 256;
constexpr std::size_t kPathBytes = 4096;

// A slot: free (0), being filled (1), or holding the path of what clean_up_at_once removes: a file (2), a
// directory if empty (3), or a scratch directory with the files in it (4).
std::array<std::atomic<int>, kFiles> g_file_state{};
std::array<std::array<char, kPathBytes>, kFiles> g_file_path{};
std::array<std::atomic<pid_t>, kGroups> g_group{};  // 0: free

int add_path(const char* path, int kind) {
  const std::size_t n = std::strlen(path);
  if (n >= kPathBytes) return -1;
  for (int i = 0; i < kFiles; ++i) {
    int free = 0;
    if (!g_file_state[i].compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_file_path[i].data(), path, n + 1);
    g_file_state[i].store(kind);
    return i;
  }
  return -1;
}

}  // namespace

int add_file(const char* path) {
  return add_path(path, 2);
}

int add_directory(const char* path) {
  return add_path(path, 3);
}

int add_scratch_directory(const char* path) {
  return add_path(path, 4);
}

void remove_file(int slot) {
  if (slot >= 0 && slot < kFiles) g_file_state[slot].store(0);
}

int add_group(pid_t group) {
  if (group <= 0) return -1;
  for (int i = 0; i < kGroups; ++i) {
    pid_t free = 0;
    if (g_group[i].compare_exchange_strong(free, group)) return i;
  }
  return -1;
}

void remove_group(int slot) {
  if (slot >= 0 && slot < kGroups) g_group[slot].store(0);
}

namespace {

// Removes the files directly in `dir`, then `dir` (a scratch directory of files: no recursion), with
// system calls alone (readdir allocates; getdents64 reads into this buffer).
void remove_flat_directory(const char* dir) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + at + 16, sizeof reclen);
      const char* name = buf + at + 19;
      if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
      at += reclen;
    }
  }
  ::close(fd);
  ::rmdir(dir);
}

}  // namespace

void clean_up_at_once() {
  for (int i = 0; i < kGroups; ++i)
    if (const pid_t g = g_group[i].load(); g > 0) ::kill(-g, SIGKILL);
  for (int i = 0; i < kFiles; ++i)
    if (g_file_state[i].load() == 2) ::unlink(g_file_path[i].data());
  // Directories after the files, the last registered first (a directory inside one made before it); one
  // that holds anything else stays (rmdir fails).
  for (int i = 0; i < kFiles; ++i)
    if (g_file_state[i].load() == 4) remove_flat_directory(g_file_path[i].data());
  for (int i = kFiles; i-- > 0;)
    if (g_file_state[i].load() == 3) ::rmdir(g_file_path[i].data());
}

}  // namespace shardflow::leftovers
