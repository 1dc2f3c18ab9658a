// The simulator's event record and the priority queues that order events by (time, sequence).
//
// An Event is a small plain record (24 bytes): when it fires, a key that packs the insertion sequence
// number with the event kind, the id of what it targets (a pod, a node, a pool...) and a generation
// number the model uses as a tombstone (an event whose generation no longer matches its target's is
// ignored, so cancelling costs nothing in the queue).
//
// Every queue here has the same interface and gives the same order: earliest time first, and among
// equal times the event pushed first (FIFO ties). Sequence numbers are assigned by the caller
// (normally the Simulator), so two queues fed the same pushes pop the same events.
//
//   QuaternaryHeap q;
//   q.push(Event::make(SimTime::from_s(5), /*seq=*/0, /*kind=*/1, /*target=*/7));
//   Event e = q.pop();
#pragma once

#include <cassert>
#include <climits>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include <shardflow/core/ring.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::sim {

struct Event {
  std::int64_t time = 0;  // ns since the start of the run
  std::uint64_t key = 0;  // (sequence << 8) | kind: orders ties by sequence
  std::uint32_t target = 0;
  std::uint32_t gen = 0;

  static constexpr Event make(SimTime t, std::uint64_t seq, std::uint8_t kind, std::uint32_t target,
                              std::uint32_t gen = 0) {
    return Event{t.ns(), (seq << 8) | kind, target, gen};
  }
  [[nodiscard]] constexpr SimTime at() const { return SimTime::from_ns(time); }
  [[nodiscard]] constexpr std::uint8_t kind() const { return static_cast<std::uint8_t>(key & 0xFFu); }
  [[nodiscard]] constexpr std::uint64_t seq() const { return key >> 8; }
};
static_assert(sizeof(Event) == 24);

/// a fires before b.
constexpr bool fires_before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.key < b.key);
}

/// std::priority_queue over a std::vector: the baseline.
class BinaryHeap {
 public:
  void reserve(std::size_t n) {
    std::vector<Event> v;
    v.reserve(n);
    q_ = Queue(Later{}, std::move(v));
  }
  void push(const Event& e) { q_.push(e); }
  [[nodiscard]] const Event& top() const { return q_.top(); }
  Event pop() {
    Event e = q_.top();
    q_.pop();
    return e;
  }
  [[nodiscard]] bool empty() const { return q_.empty(); }
  [[nodiscard]] std::size_t size() const { return q_.size(); }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return fires_before(b, a); }
  };
  using Queue = std::priority_queue<Event, std::vector<Event>, Later>;
  Queue q_;
};

/// An implicit d-ary heap (children of i are d*i+1 .. d*i+d) that moves a hole instead of swapping.
/// With d = 4 a sift-down touches one 96-byte run of children per level and the tree is half as deep
/// as a binary heap's, which is what makes it faster on large queues.
template <unsigned D>
class DaryHeap {
 public:
  static_assert(D >= 2);
  void reserve(std::size_t n) { v_.reserve(n); }
  void push(const Event& e) {
    std::size_t i = v_.size();
    v_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / D;
      if (!fires_before(e, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = e;
  }
  [[nodiscard]] const Event& top() const { return v_.front(); }
  Event pop() {
    assert(!v_.empty());
    const Event out = v_.front();
    const Event last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return out;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = D * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + D < n ? first + D : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (fires_before(v_[c], v_[best])) best = c;
      if (!fires_before(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
    return out;
  }
  [[nodiscard]] bool empty() const { return v_.empty(); }
  [[nodiscard]] std::size_t size() const { return v_.size(); }

 private:
  std::vector<Event> v_;
};

using QuaternaryHeap = DaryHeap<4>;

/// A pairing heap over a node pool (free list, no allocation once warm): O(1) push, amortized
/// O(log n) pop. Kept as a comparison point; its pointer chasing loses to the implicit heaps.
class PairingHeap {
 public:
  void reserve(std::size_t n) {
    nodes_.reserve(n);
    stack_.reserve(64);
  }
  void push(const Event& e) {
    std::uint32_t id = 0;
    if (free_ != kNil) {
      id = free_;
      free_ = nodes_[id].next;
    } else {
      id = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back({});
    }
    nodes_[id] = Node{e, kNil, kNil};
    root_ = meld(root_, id);
    ++size_;
  }
  [[nodiscard]] const Event& top() const { return nodes_[root_].e; }
  Event pop();
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kNil = 0xFFFFFFFFu;
  struct Node {
    Event e;
    std::uint32_t child = kNil;
    std::uint32_t next = kNil;  // next sibling, or next free node
  };
  std::uint32_t meld(std::uint32_t a, std::uint32_t b) {
    if (a == kNil) return b;
    if (b == kNil) return a;
    if (fires_before(nodes_[b].e, nodes_[a].e)) std::swap(a, b);
    nodes_[b].next = nodes_[a].child;
    nodes_[a].child = b;
    return a;
  }
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> stack_;
  std::uint32_t root_ = kNil;
  std::uint32_t free_ = kNil;
  std::size_t size_ = 0;
};

inline Event PairingHeap::pop() {
  assert(size_ > 0);
  const std::uint32_t old = root_;
  const Event out = nodes_[old].e;
  // Two-pass pairing: meld siblings left to right in pairs, then meld the pairs right to left.
  stack_.clear();
  std::uint32_t c = nodes_[old].child;
  while (c != kNil) {
    const std::uint32_t a = c;
    const std::uint32_t b = nodes_[a].next;
    nodes_[a].next = kNil;
    if (b == kNil) {
      stack_.push_back(a);
      break;
    }
    c = nodes_[b].next;
    nodes_[b].next = kNil;
    stack_.push_back(meld(a, b));
  }
  std::uint32_t r = kNil;
  while (!stack_.empty()) {
    r = meld(stack_.back(), r);
    stack_.pop_back();
  }
  root_ = r;
  nodes_[old].next = free_;
  free_ = old;
  --size_;
  return out;
}

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) for monotone queues, which a discrete-event
/// simulation is: no event is pushed earlier than the last one popped. Bucket b holds the events whose
/// time first differs from the last popped time in bit b-1 (bucket 0: the same time). A pop takes
/// from bucket 0, or empties the lowest non-empty bucket into lower ones around its minimum; each event
/// moves down at most 64 times, and usually once or twice. Ties stay FIFO: events of equal time always
/// share a bucket, pushes append, and redistribution is stable.
class RadixHeap {
 public:
  void reserve(std::size_t n) { buckets_[0].reserve(n); }
  void push(const Event& e) {
    assert(e.time >= last_ && "radix heap: pushed before the last popped time");
    const std::size_t b = bucket_of(e.time);
    buckets_[b].push_back(e);
    nonempty_ |= std::uint64_t{1} << (b & 63);
    ++size_;
    if (b != 0 && min_ != kUnknown && e.time < min_) min_ = e.time;
  }
  [[nodiscard]] const Event& top() const {
    refill();
    return buckets_[0][head_];
  }
  /// The earliest time in the queue (not empty), without committing to it as top() and pop() do: after
  /// this, events may still be pushed at any time not before the last one popped.
  [[nodiscard]] std::int64_t min_time() const {
    if (head_ < buckets_[0].size()) return last_;
    if (min_ == kUnknown) {
      const std::vector<Event>& bi = buckets_[lowest_above_0()];
      std::int64_t m = bi.front().time;
      for (const Event& e : bi) m = e.time < m ? e.time : m;
      min_ = m;
    }
    return min_;
  }
  Event pop() {
    assert(size_ > 0);
    refill();
    const Event e = buckets_[0][head_++];
    --size_;
    return e;
  }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  [[nodiscard]] std::size_t bucket_of(std::int64_t t) const {
    const auto x = static_cast<std::uint64_t>(t ^ last_);
    return x == 0 ? 0 : 64 - static_cast<std::size_t>(__builtin_clzll(x));
  }
  void refill() const {
    std::vector<Event>& b0 = buckets_[0];
    if (head_ < b0.size()) return;
    b0.clear();
    head_ = 0;
    const std::size_t i = lowest_above_0();
    std::vector<Event>& bi = buckets_[i];
    const std::int64_t known = min_;
    min_ = kUnknown;       // the next refill's minimum
    if (bi.size() == 1) {  // a lone event: it is the minimum, and goes to bucket 0
      last_ = bi.front().time;
      b0.push_back(bi.front());
      nonempty_ &= ~(std::uint64_t{1} << (i & 63));
      bi.clear();
      return;
    }
    std::int64_t m = known;
    if (m == kUnknown) {
      m = bi.front().time;
      for (const Event& e : bi) m = e.time < m ? e.time : m;
    }
    last_ = m;
    nonempty_ &= ~(std::uint64_t{1} << (i & 63));
    for (const Event& e : bi) {
      const std::size_t b = bucket_of(e.time);
      buckets_[b].push_back(e);
      nonempty_ |= std::uint64_t{1} << (b & 63);
    }
    bi.clear();
  }
  // With bucket 0 used up: the lowest non-empty bucket from the bit set, not by looking at each bucket
  // in turn. Bucket 64 (times of different sign) shares bit 0 with bucket 0, which is masked out here.
  [[nodiscard]] std::size_t lowest_above_0() const {
    const std::uint64_t above = nonempty_ & ~std::uint64_t{1};
    return above != 0 ? static_cast<std::size_t>(__builtin_ctzll(above)) : 64;
  }
  static constexpr std::int64_t kUnknown = INT64_MAX;
  mutable std::vector<Event> buckets_[65];
  // The minimum of the events outside bucket 0, once min_time() has looked for it (pushes keep it up
  // to date); kUnknown when not known. Refill then needs no scan.
  mutable std::int64_t min_ = kUnknown;
  mutable std::uint64_t nonempty_ = 0;  // bit b: bucket b may hold events (bit 0 also stands for bucket 64)
  mutable std::size_t head_ = 0;        // next event of bucket 0
  mutable std::int64_t last_ = 0;
  std::size_t size_ = 0;
};

/// FIFO lanes in front of a priority queue. In a simulation most events of one kind are scheduled in
/// the order they fire: a pod's scheduling decision comes a fixed cost after the previous one, and runs
/// of one length end in the order they started. So each event kind (below kLanes) has a lane, a ring
/// that an event joins when it fires no earlier than the lane's last one; any other event goes to the
/// `Inner` queue. A pop takes the earliest of the lanes' heads and the inner queue's top. The order is
/// exactly the inner queue's alone, (time, sequence), since every comparison is on the whole key; what
/// changes is the cost: appending to a ring and comparing a few heads instead of sifting through a heap
/// (or, for a radix heap, moving an event down its buckets, usually several times).
template <class Inner>
class LaneQueue {
 public:
  static constexpr unsigned kLanes = 16;

  void reserve(std::size_t n) { inner_.reserve(n); }
  // Always inlined: called out of line, the event is built on the caller's stack with 8-byte stores
  // and copied with a 16-byte load, which cannot be forwarded from them (a stall of some ten cycles).
  [[gnu::always_inline]] void push(const Event& e) {
    const unsigned k = e.kind();
    if (k < kLanes) {
      Lane& l = lanes_[k];
      if (l.empty() || !fires_before(e, l.back())) {
        l.push_back(e);
        nonempty_ |= 1u << k;
        ++size_;
        return;
      }
    }
    inner_.push(e);
    ++size_;
  }
  [[nodiscard]] const Event& top() const {
    const int k = earliest_lane();
    return k < 0 ? inner_.top() : lanes_[k].front();
  }
  Event pop() {
    assert(size_ > 0);
    --size_;
    const int k = earliest_lane();
    if (k < 0) return inner_.pop();
    Lane& l = lanes_[k];
    const Event e = l.pop_front();
    if (l.empty()) nonempty_ &= ~(1u << k);
    return e;
  }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  // A ring of events (shared with the simulator's id queues), its capacity a power of two, 64 to start.
  using Lane = BasicRing<Event, 64>;
  // The lane whose head fires first, if it fires before the inner queue's top; else -1. The inner
  // queue is asked for its earliest time only, not its top: a radix heap commits to its top's time as
  // the lowest it will take from then on, which is wrong while a lane holds an earlier event (an event
  // pushed after that one is popped could come before the committed time). Its top is looked at only
  // on a tie in time, when committing to that time is right.
  [[nodiscard]] int earliest_lane() const {
    if (nonempty_ == 0) return -1;
    int best = -1;
    for (std::uint32_t m = nonempty_; m != 0; m &= m - 1) {
      const int k = __builtin_ctz(m);
      if (best < 0 || fires_before(lanes_[k].front(), lanes_[best].front())) best = k;
    }
    if (inner_.empty()) return best;
    const Event& h = lanes_[best].front();
    const std::int64_t t = inner_min_time();
    if (h.time != t) return h.time < t ? best : -1;
    return fires_before(h, inner_.top()) ? best : -1;
  }
  [[nodiscard]] std::int64_t inner_min_time() const {
    if constexpr (requires(const Inner& q) { q.min_time(); })
      return inner_.min_time();
    else
      return inner_.top().time;
  }
  Inner inner_;
  Lane lanes_[kLanes];
  std::uint32_t nonempty_ = 0;  // bit k: lane k holds events
  std::size_t size_ = 0;
};

/// The queue the Simulator uses (the fastest in bench/sim_bench.cpp; see reports/sim-benchmarks.md).
using EventQueue = LaneQueue<RadixHeap>;

}  // namespace shardflow::sim
