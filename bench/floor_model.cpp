// floor_model TASKS NODES: the SimPy comparison's model (../shared/peers/simpy_strong.py,
// bench/simpy_compare.sh) written in C++ with nothing else: no scenario, no plan, no trace, no pod classes,
// no control plane, no sampling, one hard-coded pipeline. It is not the simulator; it is the floor any C++
// program of this model stands on, so that the simulator's ratio against SimPy can be read against the best
// ratio C++ can give on this machine (bench/simpy_compare.sh prints both). Same rules as simpy_strong.py:
// FIFO queue, one decision per 1 ms, integer LeastAllocated over every feasible node (nodes bucketed by what
// they have in use, each bucket scored once), uniform choice among the top-scored nodes, 10 ms bind, a
// per-node serialized 5 s image pull on first use, 1 s sandbox, fixed run times; one event per pod. Prints
// one JSON line: makespan_s, decisions.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <vector>

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kCpu = 16000, kMem = std::int64_t{64} << 30;
constexpr std::int64_t kDecision = 1 * kMs, kBind = 10 * kMs, kPull = 5000 * kMs, kSandbox = 1000 * kMs;

struct Pod {
  std::int64_t cpu, mem, run;
  int image, step;
};

struct Event {
  std::int64_t time;
  std::uint64_t seq;  // FIFO among equal times
  std::int32_t node;  // -1: the scheduler's decision
  std::int32_t pod;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

std::uint64_t rng_state = 0x9E3779B97F4A7C15ull;
std::uint64_t next_random() {  // splitmix64
  std::uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: floor_model TASKS NODES\n", stderr);
    return 2;
  }
  const int tasks = std::atoi(argv[1]), nodes = std::atoi(argv[2]);
  // Nodes in buckets keyed by (cpu, memory) in use, in the units every request here is a multiple of
  // (1 CPU, 2 GiB): a direct index; swap-remove lists; the non-empty buckets listed for the scan.
  constexpr int kCpuUnits = 17, kMemUnits = 33;
  struct Bucket {
    std::int64_t cpu, mem;
    std::vector<int> nodes;
    int listed = -1;  // its index in `live`, or -1
  };
  std::vector<Bucket> buckets(kCpuUnits * kMemUnits);
  for (int c = 0; c < kCpuUnits; ++c)
    for (int m = 0; m < kMemUnits; ++m)
      buckets[c * kMemUnits + m] = {c * 1000, (std::int64_t{m} * 2) << 30, {}};
  std::vector<int> live;
  auto list = [&](int b) {
    if (buckets[b].listed < 0) buckets[b].listed = static_cast<int>(live.size()), live.push_back(b);
  };
  auto unlist = [&](int b) {
    const int i = buckets[b].listed, last = live.back();
    live[i] = last;
    buckets[last].listed = i;
    live.pop_back();
    buckets[b].listed = -1;
  };
  for (int n = 0; n < nodes; ++n) buckets[0].nodes.push_back(n);
  list(0);
  std::vector<int> bucket_of(nodes, 0), pos(nodes);
  for (int n = 0; n < nodes; ++n) pos[n] = n;
  auto move = [&](int n, std::int64_t dc, std::int64_t dm) {
    const int fb = bucket_of[n];
    Bucket& from = buckets[fb];
    const int last = from.nodes.back();
    from.nodes[pos[n]] = last;
    pos[last] = pos[n];
    from.nodes.pop_back();
    if (from.nodes.empty()) unlist(fb);
    const int b = fb + static_cast<int>(dc / 1000) * kMemUnits + static_cast<int>(dm >> 31);
    bucket_of[n] = b;
    pos[n] = static_cast<int>(buckets[b].nodes.size());
    buckets[b].nodes.push_back(n);
    list(b);
  };
  std::vector<const Bucket*> top;
  auto choose = [&](const Pod& p) -> int {
    std::int64_t best = -1;
    std::size_t total = 0;
    top.clear();
    for (const int i : live) {
      const Bucket& b = buckets[i];
      const std::int64_t c = b.cpu + p.cpu, m = b.mem + p.mem;
      if (c > kCpu || m > kMem) continue;
      const std::int64_t s = ((kCpu - c) * 100 / kCpu + (kMem - m) * 100 / kMem) / 2;
      if (s > best) best = s, total = 0, top.clear();
      if (s == best) total += b.nodes.size(), top.push_back(&b);
    }
    if (top.empty()) return -1;
    std::size_t r = total > 1 ? next_random() % total : 0;
    for (const Bucket* b : top) {
      if (r < b->nodes.size()) return b->nodes[r];
      r -= b->nodes.size();
    }
    return -1;
  };

  const Pod steps[3] = {{1000, std::int64_t{2} << 30, 60'000 * kMs, 0, 0},
                        {4000, std::int64_t{16} << 30, 60'000 * kMs, 1, 1},
                        {8000, std::int64_t{32} << 30, 600'000 * kMs, 2, 2}};
  const int counts[3] = {tasks, 1, 3};
  int left[3] = {tasks, 1, 3};
  std::vector<Pod> pending(steps[0].step == 0 ? tasks : 0, steps[0]);
  std::size_t head = 0;
  std::vector<std::int64_t> image_ready(static_cast<std::size_t>(nodes) * 3, -1), pull_free(nodes, 0);
  std::vector<Pod> running;  // a pod's node and request, by event
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0, decisions = 0;
  std::int64_t now = 0, end = 0;
  bool decide_pending = false, blocked = false;
  auto kick = [&] {
    if (!decide_pending && !blocked && head < pending.size()) {
      decide_pending = true;
      events.push({now + kDecision, seq++, -1, -1});
    }
  };
  kick();
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    now = e.time;
    if (e.node < 0) {  // a decision
      decide_pending = false;
      ++decisions;
      const Pod& p = pending[head];
      const int n = choose(p);
      if (n < 0) {
        blocked = true;
        continue;
      }
      ++head;
      move(n, p.cpu, p.mem);
      const std::int64_t bound = now + kBind;
      std::int64_t& ready = image_ready[static_cast<std::size_t>(n) * 3 + p.image];
      if (ready < 0) ready = pull_free[n] = std::max(bound, pull_free[n]) + kPull;
      const std::int64_t done = std::max(ready, bound) + kSandbox + p.run;
      running.push_back(p);
      events.push({done, seq++, n, static_cast<std::int32_t>(running.size() - 1)});
      kick();
      continue;
    }
    const Pod& p = running[e.pod];  // a pod ends
    move(e.node, -p.cpu, -p.mem);
    blocked = false;
    end = now;
    if (--left[p.step] == 0 && p.step < 2)
      pending.insert(pending.end(), counts[p.step + 1], steps[p.step + 1]);
    kick();
  }
  std::printf("{\"makespan_s\": %.3f, \"decisions\": %llu}\n", static_cast<double>(end) / 1e9,
              static_cast<unsigned long long>(decisions));
  return 0;
}
