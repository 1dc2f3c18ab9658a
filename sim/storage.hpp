// Shared storage (private to sim/): two channels, reads and writes, each sharing its bandwidth fairly
// among the transfers in progress (processor sharing through a virtual clock). `v` is the bytes each
// transfer has received since the start; one that starts at v0 with b bytes ends when v reaches v0 + b,
// and v grows at bandwidth / active. A channel has one pending event (kStorage, target = the channel),
// for its first transfer to end; a change of the transfers in progress reschedules it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine.hpp"
#include "pods.hpp"

namespace shardflow::sim {
namespace {

enum StorageDir : std::uint32_t { kRead = 0, kWrite = 1 };

class SharedStorage {
 public:
  SharedStorage(double read_bytes_per_second, double write_bytes_per_second) {
    ch_[kRead].bandwidth = read_bytes_per_second;
    ch_[kRead].phase = Phase::reading;
    ch_[kWrite].bandwidth = write_bytes_per_second;
    ch_[kWrite].phase = Phase::writing;
  }

  /// Bytes per second; 0: transfers take no time (and none is started).
  [[nodiscard]] double bandwidth(StorageDir dir) const { return ch_[dir].bandwidth; }

  /// Attempt a starts moving `bytes` on the channel: its phase becomes the channel's.
  void start(StorageDir dir, std::uint32_t a, double bytes, Attempts& att, Engine& engine) {
    Channel& ch = ch_[dir];
    att[a].phase = ch.phase;
    advance(ch, engine.now());
    att[a].transfer_target = ch.v + bytes;
    ch.heap.push_back({att[a].transfer_target, a});
    std::push_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
    ++ch.active;
    reschedule(dir, att, engine);
  }

  /// The attempt stops its transfer (its node went away): it is evicted.
  void stop(StorageDir dir, std::uint32_t a, Attempts& att, Engine& engine) {
    Channel& ch = ch_[dir];
    advance(ch, engine.now());
    --ch.active;
    att[a].phase = Phase::evicted;
    reschedule(dir, att, engine);
  }

  /// The channel's kStorage event: calls `done(a)` for each transfer that ended, in target order.
  template <class Done>
  void on_event(StorageDir dir, std::uint32_t gen, Attempts& att, Engine& engine, Done&& done) {
    Channel& ch = ch_[dir];
    if (gen != ch.gen) return;
    advance(ch, engine.now());
    // The event was timed for the first transfer to end; land exactly on its target to avoid drift.
    ch.v = std::max(ch.v, ch.heap.front().target);
    while (!ch.heap.empty()) {
      const Transfer x = ch.heap.front();
      if (valid(ch, x, att) && x.target > ch.v) break;
      std::pop_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
      ch.heap.pop_back();
      if (!valid(ch, x, att)) continue;
      --ch.active;
      done(x.attempt);
    }
    reschedule(dir, att, engine);
  }

 private:
  // A read or a write in progress.
  struct Transfer {
    double target;
    std::uint32_t attempt;
    bool operator>(const Transfer& o) const {
      return target > o.target || (target == o.target && attempt > o.attempt);
    }
  };
  struct Channel {
    double bandwidth = 0;          // bytes per second; 0: transfers take no time
    Phase phase = Phase::reading;  // the phase of an attempt whose transfer is on this channel
    std::vector<Transfer> heap;    // min-heap by target; stale entries are dropped lazily
    std::uint32_t active = 0;
    double v = 0;
    SimTime last;
    std::uint32_t gen = 0;
  };

  static void advance(Channel& ch, SimTime now) {
    if (ch.active > 0) ch.v += (now - ch.last).seconds() * ch.bandwidth / static_cast<double>(ch.active);
    ch.last = now;
  }

  [[nodiscard]] static bool valid(const Channel& ch, const Transfer& x, const Attempts& att) {
    return att[x.attempt].phase == ch.phase && att[x.attempt].transfer_target == x.target;
  }

  void reschedule(StorageDir dir, const Attempts& att, Engine& engine) {
    Channel& ch = ch_[dir];
    while (!ch.heap.empty() && !valid(ch, ch.heap.front(), att)) {
      std::pop_heap(ch.heap.begin(), ch.heap.end(), std::greater<>{});
      ch.heap.pop_back();
    }
    ++ch.gen;
    if (ch.active == 0) return;
    const double left = std::max(0.0, ch.heap.front().target - ch.v);
    const double secs = left * static_cast<double>(ch.active) / ch.bandwidth;
    engine.schedule(delay_from_ns(std::ceil(secs * 1e9 - 1e-6)), kStorage, dir, ch.gen);
  }

  Channel ch_[2];  // kRead, kWrite
};

}  // namespace
}  // namespace shardflow::sim
