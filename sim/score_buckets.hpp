// The score tree's answers (score_tree.hpp: the search window, its best score and ties, the j-th tie)
// from buckets of nodes by score, for clusters small enough that a bitmap of every node is a few words.
//
// Each score that some feasible node has owns a bucket: a bitmap over node slots. A node's change moves
// its bit from one bucket to another (a few instructions, where the tree walks log n levels to its
// root); the best score is the highest bucket in use, kept in a bitmap over score values; the j-th
// node with a score is the j-th set bit of its bucket. Searches count bits word by word, so their cost
// grows with slots / 64: ScoreSearch uses the buckets up to kMaxSlots slots and the tree beyond.
// Every answer is the tree's, which tests/sim/score_tree_test.cpp checks against a node-by-node scan.
//
//   ScoreBuckets b(4);
//   b.set(0, 70); b.set(1, -1); b.set(2, 90); b.set(3, 90);
//   ScoreTree::Window w = b.window(/*from=*/1, /*want=*/2);  // nodes 2, 3: best 90, ties 2, passed 3
//   std::uint32_t second = b.nth_best(w, 1);                  // 3
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "score_tree.hpp"

namespace shardflow::sim {

namespace bits {

using Word = std::uint64_t;
constexpr Word kOnes = ~Word{0};
constexpr Word kBytes01 = 0x0101010101010101ull;
constexpr Word kBytes80 = 0x8080808080808080ull;

// Each byte of x replaced by its number of set bits, without the POPCNT instruction (not in the x86-64
// baseline; CMakeLists.txt turns it on where the build machine has it).
[[gnu::always_inline]] inline Word byte_counts(Word x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  return (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
}

#ifdef __POPCNT__
constexpr bool kHasPopcount = true;
#else
constexpr bool kHasPopcount = false;
#endif

// Set bits of a word: the POPCNT instruction, or the byte counts summed into the top byte by one
// multiplication.
[[gnu::always_inline]] inline std::uint32_t count(Word x) {
#ifdef __POPCNT__
  return static_cast<std::uint32_t>(__builtin_popcountll(x));
#else
  return static_cast<std::uint32_t>((byte_counts(x) * kBytes01) >> 56);
#endif
}

// kSelectInByte[k][v]: the position of the k-th (0-based) set bit of the byte v (8 if none).
constexpr std::array<std::array<std::uint8_t, 256>, 8> make_select_in_byte() {
  std::array<std::array<std::uint8_t, 256>, 8> t{};
  for (unsigned v = 0; v < 256; ++v) {
    unsigned k = 0;
    for (unsigned k2 = 0; k2 < 8; ++k2) t[k2][v] = 8;
    for (unsigned b = 0; b < 8; ++b)
      if (v >> b & 1u) t[k++][v] = static_cast<std::uint8_t>(b);
  }
  return t;
}
inline constexpr auto kSelectInByte = make_select_in_byte();

// The position of the k-th (0-based) set bit of x; x has more than k set bits. Byte counts, their
// running sums by one multiplication, the byte that holds the bit by a compare of all eight at once.
[[gnu::always_inline]] inline std::uint32_t select(Word x, std::uint32_t k) {
  const Word sums = byte_counts(x) * kBytes01;  // byte i: set bits in bytes 0..i (at most 64)
  // Bytes whose running sum is at most k lie wholly before the bit: their number is its byte.
  const Word at_most_k = ((Word{k} * kBytes01 | kBytes80) - sums) & kBytes80;
  const auto byte = static_cast<std::uint32_t>(((at_most_k >> 7) * kBytes01) >> 56);
  const std::uint32_t before = byte == 0 ? 0 : static_cast<std::uint32_t>(sums >> (8 * (byte - 1)) & 0xFF);
  return 8 * byte + kSelectInByte[k - before][(x >> (8 * byte)) & 0xFF];
}

// The bits of word w that lie in [lo, hi), as a mask.
[[gnu::always_inline]] inline Word range_mask(std::uint32_t w, std::uint32_t lo, std::uint32_t hi) {
  const std::uint32_t base = 64 * w;
  const Word low = lo <= base ? kOnes : (lo >= base + 64 ? 0 : kOnes << (lo - base));
  const Word high = hi >= base + 64 ? kOnes : (hi <= base ? 0 : kOnes >> (64 - (hi - base)));
  return low & high;
}

// Set bits of bitmap m in [lo, hi).
[[gnu::always_inline]] inline std::uint32_t count_range(const Word* m, std::uint32_t lo, std::uint32_t hi) {
  if (lo >= hi) return 0;
  const std::uint32_t first = lo / 64, last = (hi - 1) / 64;
  if (first == last) return count(m[first] & range_mask(first, lo, hi));
  std::uint32_t n = count(m[first] & (kOnes << (lo % 64)));
  for (std::uint32_t w = first + 1; w < last; ++w) n += count(m[w]);
  return n + count(m[last] & range_mask(last, lo, hi));
}

// Whether bitmap m has a set bit in [lo, hi).
[[gnu::always_inline]] inline bool any_range(const Word* m, std::uint32_t lo, std::uint32_t hi) {
  if (lo >= hi) return false;
  const std::uint32_t first = lo / 64, last = (hi - 1) / 64;
  if (first == last) return (m[first] & range_mask(first, lo, hi)) != 0;
  if ((m[first] & (kOnes << (lo % 64))) != 0) return true;
  for (std::uint32_t w = first + 1; w < last; ++w)
    if (m[w] != 0) return true;
  return (m[last] & range_mask(last, lo, hi)) != 0;
}

// The j-th (0-based) set bit of bitmap m in [lo, hi), which has more than j.
[[gnu::always_inline]] inline std::uint32_t select_range(const Word* m, std::uint32_t lo, std::uint32_t hi,
                                                         std::uint32_t j) {
  for (std::uint32_t w = lo / 64;; ++w) {
    const Word x = m[w] & range_mask(w, lo, hi);
    const std::uint32_t n = count(x);
    if (j < n) return 64 * w + select(x, j);
    j -= n;
  }
}

}  // namespace bits

class ScoreBuckets {
 public:
  using Window = ScoreTree::Window;
  /// Above this many slots a search's word-by-word counts cost more than the tree's descents. Measured,
  /// instructions of `sim_cold 20000 N`, buckets against the tree: without POPCNT 100 nodes -12.5%, 300
  /// -11%, 500 -3.5%, 1,000 +10%; with POPCNT (`sim_cold 40000 N`) 500 -2%, 1,000 -15%, 2,000 -13%,
  /// 4,000 -6%.
  static constexpr std::uint32_t kMaxSlots = bits::kHasPopcount ? 4096 : 512;
  /// Scores above this are the tree's (a bucket map of every score up to it: 256 KiB); kube-scheduler's
  /// default weights score at most 1,000, but score_weights may be up to 1,000,000 a plugin.
  static constexpr std::int32_t kMaxScore = 65535;

  explicit ScoreBuckets(std::uint32_t slots = 0) { resize(slots); }

  [[nodiscard]] std::uint32_t slots() const { return slots_; }
  /// Grows to at least `slots` slots; new slots are not feasible.
  void resize(std::uint32_t slots);
  /// A node's score for the class, or -1 if the pod cannot be placed there.
  [[gnu::always_inline]] void set(std::uint32_t slot, std::int32_t score) {
    assert(slot < slots_ && score <= kMaxScore);
    const std::int32_t old = score_[slot];
    if (old == score) return;
    const std::uint32_t w = slot / 64;
    const bits::Word bit = bits::Word{1} << (slot % 64);
    if (old >= 0) {
      const std::uint32_t b = bucket_of_[static_cast<std::uint32_t>(old)];
      bits_[std::size_t{b} * stride_ + w] &= ~bit;
      if (--count_[b] == 0) drop_bucket(old, b);
    } else {
      feasible_bits_[w] |= bit;
      ++feasible_;
    }
    if (score >= 0) {
      const std::uint32_t b = bucket(score);
      bits_[std::size_t{b} * stride_ + w] |= bit;
      ++count_[b];
    } else {
      feasible_bits_[w] &= ~bit;
      --feasible_;
    }
    score_[slot] = score;
  }
  [[nodiscard]] std::int32_t score(std::uint32_t slot) const { return score_[slot]; }
  /// Number of feasible nodes.
  [[nodiscard]] std::uint32_t feasible() const { return feasible_; }

  /// As ScoreTree::window.
  [[nodiscard]] Window window(std::uint32_t from, std::uint32_t want) const;
  /// As ScoreTree::nth_best: the j-th (0-based) node with the window's best score, in the search's order.
  [[nodiscard]] std::uint32_t nth_best(const Window& w, std::uint32_t j) const {
    assert(j < w.ties);
    const bits::Word* const m = bucket_bits(w.best);
    if (w.found == feasible_) {
      // Every feasible node is in the window: its order is slot order rotated to start at `from`.
      const std::uint32_t before = w.from == 0 ? 0 : bits::count_range(m, 0, w.from);
      std::uint32_t k = before + j;
      if (k >= w.ties) k -= w.ties;
      return bits::select_range(m, 0, slots_, k);
    }
    if (!w.wraps) return bits::select_range(m, w.from, w.end, j);
    const std::uint32_t first = bits::count_range(m, w.from, slots_);
    return j < first ? bits::select_range(m, w.from, slots_, j) : bits::select_range(m, 0, w.end, j - first);
  }

 private:
  [[nodiscard]] const bits::Word* bucket_bits(std::int32_t score) const {
    return bits_.data() + std::size_t{bucket_of_[static_cast<std::uint32_t>(score)]} * stride_;
  }
  // The bucket of a score, made if no node has it yet.
  std::uint32_t bucket(std::int32_t score) {
    const auto s = static_cast<std::uint32_t>(score);
    if (s < bucket_of_.size() && bucket_of_[s] != kNone) return bucket_of_[s];
    return new_bucket(s);
  }
  std::uint32_t new_bucket(std::uint32_t score);
  void drop_bucket(std::int32_t score, std::uint32_t b);
  // The highest score below `below` that some node has, or -1.
  [[nodiscard]] std::int32_t highest_below(std::uint32_t below) const;
  // A window of every feasible node.
  void root(Window& w) const {
    w.found = feasible_;
    w.best = best_;
    w.ties = best_ >= 0 ? count_[bucket_of_[static_cast<std::uint32_t>(best_)]] : 0;
  }
  // In [lo1, hi1) and [lo2, hi2): the best score and how many nodes have it (ties), feasible nodes.
  void best_in(std::uint32_t lo1, std::uint32_t hi1, std::uint32_t lo2, std::uint32_t hi2, Window& w) const;
  // The same when the ranges are known to hold w.found > 0 feasible nodes: best and ties only.
  void best_of(std::uint32_t lo1, std::uint32_t hi1, std::uint32_t lo2, std::uint32_t hi2, Window& w) const;

  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::uint32_t slots_ = 0;
  std::uint32_t stride_ = 0;               // words per bitmap
  std::vector<std::int32_t> score_;        // per slot
  std::vector<bits::Word> feasible_bits_;  // slot -> feasible
  std::uint32_t feasible_ = 0;
  std::vector<std::uint32_t> bucket_of_;  // score -> bucket, or kNone
  std::vector<bits::Word> scores_used_;   // score -> some node has it
  std::int32_t best_ = -1;                // the highest score some node has
  std::vector<std::uint32_t> count_;      // bucket -> nodes
  std::vector<bits::Word> bits_;          // bucket b's bitmap at b * stride_
  std::vector<std::uint32_t> free_;       // buckets no score owns
};

// One class's score search for the scheduler: the buckets while the cluster has at most
// ScoreBuckets::kMaxSlots slots and scores of at most kMaxScore, the tree from the first growth or score
// beyond (an autoscaler adding nodes, large score_weights).
class ScoreSearch {
 public:
  using Window = ScoreTree::Window;
  explicit ScoreSearch(std::uint32_t slots = 0) : buckets_(slots <= ScoreBuckets::kMaxSlots) {
    if (buckets_)
      b_.resize(slots);
    else
      t_.resize(slots);
  }
  [[nodiscard]] bool buckets() const { return buckets_; }
  [[nodiscard]] std::uint32_t slots() const { return buckets_ ? b_.slots() : t_.slots(); }
  void resize(std::uint32_t slots) {
    if (!buckets_) return t_.resize(slots);
    if (slots <= ScoreBuckets::kMaxSlots) return b_.resize(slots);
    to_tree(slots);
  }
  [[gnu::always_inline]] void set(std::uint32_t slot, std::int32_t score) {
    if (buckets_ && score > ScoreBuckets::kMaxScore) to_tree(b_.slots());
    if (buckets_)
      b_.set(slot, score);
    else
      t_.set(slot, score);
  }
  [[nodiscard]] std::int32_t score(std::uint32_t slot) const {
    return buckets_ ? b_.score(slot) : t_.score(slot);
  }
  template <class ScoreOf>
  void rebuild(ScoreOf&& score_of) {
    if (!buckets_) return t_.rebuild(score_of);
    // Slot by slot through set(), which turns to the tree at the first score above kMaxScore (the
    // buckets have no rebuild of their own that could go round that).
    const std::uint32_t n = b_.slots();
    for (std::uint32_t slot = 0; slot < n; ++slot) set(slot, score_of(slot));
  }
  [[nodiscard]] std::uint32_t feasible() const { return buckets_ ? b_.feasible() : t_.feasible(); }
  [[nodiscard]] Window window(std::uint32_t from, std::uint32_t want) const {
    return buckets_ ? b_.window(from, want) : t_.window(from, want);
  }
  [[nodiscard]] std::uint32_t nth_best(const Window& w, std::uint32_t j) const {
    return buckets_ ? b_.nth_best(w, j) : t_.nth_best(w, j);
  }

 private:
  // From buckets to the tree, for good: the cluster grew past kMaxSlots or a score past kMaxScore.
  [[gnu::cold, gnu::noinline]] void to_tree(std::uint32_t slots) {
    t_.resize(slots);
    t_.rebuild([this](std::uint32_t s) { return s < b_.slots() ? b_.score(s) : -1; });
    b_ = ScoreBuckets();
    buckets_ = false;
  }

  bool buckets_ = true;
  ScoreBuckets b_;
  ScoreTree t_;
};

}  // namespace shardflow::sim
