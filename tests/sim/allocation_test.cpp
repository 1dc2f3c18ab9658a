// "Hot loops allocate nothing per event or per task": count heap allocations made by simulate() and
// check that they do not grow with the number of tasks (only a few vectors double as they fill).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <shardflow/sim/simulator.hpp>

#include "sim/engine.hpp"
#include "sim_builders.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

namespace {
void* counted_malloc(std::size_t n) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

// Every replaceable non-aligned form, so that new and delete stay paired under AddressSanitizer.
void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

using namespace shardflow;
using namespace shardflow::simtest;

namespace {
long allocations_for(std::uint32_t tasks) {
  // Short step names keep pod names ("w-123-0") inside std::string's small buffer.
  Step w = loop(task("w", 10), tasks);
  w.component.duration.lognormal_sigma = 0.3;
  w.component.failure.p = 0.05;
  w.component.retries.max = 5;
  w.component.input.dist = {Distribution::Kind::exponential, 0.1 * kGiB, 0};
  Scenario sc = scenario({w, task("sum", 5, {0})}, {pool("p", 50, 8000)});
  sc.cluster.storage.read_bytes_per_second = 10.0 * kGiB;
  sc.overheads.image_pull_bytes_per_second = static_cast<double>(kGiB);
  sc.overheads.default_image_size = kGiB;
  sc.cluster.scheduler.decisions_per_second = 2000;
  const Plan plan = Plan::unroll(sc.pipeline);
  allocations = 0;
  counting = true;
  const Trace t = sim::simulate(sc, plan, sim::SimOptions{});
  counting = false;
  REQUIRE(t.tasks_failed == 0);
  return allocations.load();
}
}  // namespace

TEST_CASE("Simulator: allocations do not grow with the number of tasks", "[sim]") {
  const long a2k = allocations_for(2'000);
  const long a8k = allocations_for(8'000);
  const long a32k = allocations_for(32'000);
  INFO("allocations: " << a2k << " for 2,000 tasks, " << a8k << " for 8,000, " << a32k << " for 32,000");
  // Each 4x more tasks (and events) adds only the two doublings of each vector sized by the task count
  // (queues, batches): a constant, where one allocation per task or per event would add thousands.
  CHECK(a8k - a2k < 64);
  CHECK(a32k - a8k < 64);
  CHECK(a2k < 400);
}

#ifndef NDEBUG
TEST_CASE("Engine: a negative delay is rejected by an assertion", "[sim]") {
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);
    if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(2);  // keep the assertion text quiet
    sim::Engine engine;
    engine.schedule(Duration::from_ns(-1), 0, 0);
    _exit(0);  // not reached when the assertion fires
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}
#endif
