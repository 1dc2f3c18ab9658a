// The large-block allocator (core/alloc/large_blocks.hpp): this program links it, so every operator new
// here goes through it.
#include "core/alloc/large_blocks.hpp"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <new>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

using shardflow::alloc::is_large_block;
using shardflow::alloc::kMinLargeBlock;
using shardflow::alloc::large_block_stats;

namespace {

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

// Fills n bytes with a pattern of the seed, then checks them.
void fill(void* p, std::size_t n, std::uint8_t seed) {
  auto* b = static_cast<std::uint8_t*>(p);
  for (std::size_t i = 0; i < n; i += 509) b[i] = static_cast<std::uint8_t>(seed + i);
  b[n - 1] = seed;
}
bool holds(const void* p, std::size_t n, std::uint8_t seed) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  for (std::size_t i = 0; i < n; i += 509)
    if (i != n - 1 && b[i] != static_cast<std::uint8_t>(seed + i)) return false;
  return b[n - 1] == seed;
}

}  // namespace

TEST_CASE(
    "large blocks: a request of 16 KiB or more gets a block of the next power of two, aligned to it "
    "up to 2 MiB",
    "[alloc]") {
  void* small = ::operator new(kMinLargeBlock - 1);
  CHECK_FALSE(is_large_block(small));
  void* p = ::operator new(kMinLargeBlock);
  REQUIRE(large_block_stats().reserved);
  CHECK(is_large_block(p));
  CHECK(address(p) % kMinLargeBlock == 0);
  void* q = ::operator new(100 << 10);  // a 128 KiB block
  CHECK(is_large_block(q));
  CHECK(address(q) % (128 << 10) == 0);
  void* r = ::operator new (std::size_t{5} << 20);  // an 8 MiB block
  CHECK(address(r) % (std::size_t{2} << 20) == 0);  // a huge page's alignment at most
  fill(p, kMinLargeBlock, 1);
  fill(q, 100 << 10, 2);
  fill(r, std::size_t{5} << 20, 3);
  CHECK(holds(p, kMinLargeBlock, 1));
  CHECK(holds(q, 100 << 10, 2));
  CHECK(holds(r, std::size_t{5} << 20, 3));
  const auto live = large_block_stats().live_bytes;
  ::operator delete(q);
  CHECK(large_block_stats().live_bytes == live - (128 << 10));
  ::operator delete(p);
  ::operator delete(r);
  ::operator delete(small);
  CHECK(large_block_stats().live_bytes == live - (128 << 10) - kMinLargeBlock - (std::size_t{8} << 20));
}

TEST_CASE("large blocks: a freed block is handed out again for a request of its size", "[alloc]") {
  void* p = ::operator new(300 << 10);  // 512 KiB
  fill(p, 300 << 10, 7);
  ::operator delete(p);
  const auto before = large_block_stats();
  void* q = ::operator new(400 << 10);  // the same size, so the same block
  CHECK(q == p);
  CHECK(large_block_stats().reused == before.reused + 1);
  CHECK(large_block_stats().carved == before.carved);
  fill(q, 400 << 10, 8);
  CHECK(holds(q, 400 << 10, 8));
  ::operator delete(q, 400 << 10);  // the sized form frees it too
  CHECK(large_block_stats().live_bytes == before.live_bytes);
}

TEST_CASE("large blocks: containers grow through them and keep their contents", "[alloc]") {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < 3'000'000; ++i) v.push_back(i * 2654435761u);
  CHECK(is_large_block(v.data()));
  bool same = true;
  for (std::uint64_t i = 0; i < v.size(); ++i) same = same && v[i] == i * 2654435761u;
  CHECK(same);
  std::vector<std::uint64_t> w = v;
  CHECK(w == v);
}

TEST_CASE("large blocks: threads allocating and freeing at once each keep their own bytes", "[alloc]") {
  struct Held {
    void* p;
    std::size_t n;
    std::uint8_t seed;
  };
  const auto live = large_block_stats().live_bytes;
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      std::uint64_t x = 88172645463325252ull + static_cast<std::uint64_t>(t);
      std::vector<Held> held;
      for (int i = 0; i < 3000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const std::size_t n = 1024 + x % (std::size_t{3} << 20);
        const auto seed = static_cast<std::uint8_t>(t * 64 + i);
        void* p = ::operator new(n);
        fill(p, n, seed);
        held.push_back({p, n, seed});
        if (held.size() > 6) {  // free one from anywhere, so blocks come and go in any order
          const auto k = static_cast<std::ptrdiff_t>(x % held.size());
          const Held h = held[static_cast<std::size_t>(k)];
          bad[static_cast<std::size_t>(t)] += holds(h.p, h.n, h.seed) ? 0 : 1;
          ::operator delete(h.p);
          held.erase(held.begin() + k);
        }
      }
      for (const Held& h : held) {
        bad[static_cast<std::size_t>(t)] += holds(h.p, h.n, h.seed) ? 0 : 1;
        ::operator delete(h.p);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(bad == std::vector<int>(4, 0));
  CHECK(large_block_stats().live_bytes == live);
}

TEST_CASE("large blocks: past 256 MiB of freed blocks, their memory goes back and they are still reused",
          "[alloc]") {
  std::vector<void*> blocks;
  blocks.reserve(40);
  for (int i = 0; i < 40; ++i) {
    blocks.push_back(::operator new (std::size_t{8} << 20));
    static_cast<char*>(blocks.back())[0] = 1;
  }
  for (void* p : blocks) ::operator delete(p);
  const auto s = large_block_stats();
  CHECK(s.kept_bytes <= std::size_t{256} << 20);
  CHECK(s.kept_bytes >= std::size_t{248} << 20);  // all the 8 MiB blocks that fit under the limit
  // All 40 are handed out again, the ones whose memory went back included, and can be written.
  std::vector<void*> again;
  again.reserve(40);
  for (int i = 0; i < 40; ++i) {
    again.push_back(::operator new (std::size_t{8} << 20));
    fill(again.back(), std::size_t{8} << 20, static_cast<std::uint8_t>(i));
  }
  CHECK(large_block_stats().carved == s.carved);
  bool all = true;
  for (int i = 0; i < 40; ++i)
    all =
        all && holds(again[static_cast<std::size_t>(i)], std::size_t{8} << 20, static_cast<std::uint8_t>(i));
  CHECK(all);
  for (void* p : again) ::operator delete(p);
}

TEST_CASE("large blocks: a child forked while another thread allocates can allocate", "[alloc]") {
  std::atomic<bool> stop{false};
  std::thread busy([&stop] {
    while (!stop.load()) {
      void* p = ::operator new (std::size_t{1} << 20);
      static_cast<char*>(p)[0] = 1;
      ::operator delete(p);
    }
  });
  int ok = 0;
  for (int i = 0; i < 50; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {  // the child: a large block, then out without running the parent's destructors
      void* p = ::operator new (std::size_t{3} << 20);
      static_cast<char*>(p)[100] = 7;
      const int code = static_cast<char*>(p)[100] == 7 ? 0 : 1;
      ::operator delete(p);
      _exit(code);
    }
    // A child stuck on a lock held at the fork is killed after 10 s and counts as a failure.
    int status = 0;
    pid_t done = 0;
    for (int waited_ms = 0; pid > 0 && done == 0 && waited_ms < 10000; waited_ms += 1) {
      done = waitpid(pid, &status, WNOHANG);
      if (done == 0) usleep(1000);
    }
    if (pid > 0 && done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    if (done == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++ok;
  }
  stop = true;
  busy.join();
  CHECK(ok == 50);
}

#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's malloc aborts on such a size instead of returning null
TEST_CASE("large blocks: a request larger than the range goes to malloc, and failing there throws",
          "[alloc]") {
  const auto before = large_block_stats().to_malloc;
  CHECK_THROWS_AS(::operator new (std::size_t{1} << 46), std::bad_alloc);
  CHECK(large_block_stats().to_malloc == before + 1);
}
#endif
