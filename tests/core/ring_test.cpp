#include <cstdint>
#include <deque>

#include <catch2/catch.hpp>

#include <shardflow/core/random.hpp>
#include <shardflow/core/ring.hpp>

using namespace shardflow;

TEST_CASE("Ring: the header example", "[core]") {
  Ring r;
  r.push_back(7);
  r.push_front(3);
  CHECK(r.size() == 2);
  CHECK(r.front() == 3);
  CHECK(r.back() == 7);
  CHECK(r.pop_front() == 3);
  CHECK(r.pop_front() == 7);
  CHECK(r.empty());
}

TEST_CASE("BasicRing: behaves as a deque through growth and wrap-around", "[core]") {
  struct Big {  // 24 bytes, as the simulator's events
    std::uint64_t a = 0, b = 0, c = 0;
    bool operator==(const Big&) const = default;
  };
  BasicRing<Big, 4> r;
  std::deque<Big> ref;
  Rng rng(7);
  std::uint64_t next = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t op = rng.below(10);
    if (op < 4 || ref.empty()) {
      const Big v{next, next * 3, next * 7};
      ++next;
      r.push_back(v);
      ref.push_back(v);
    } else if (op < 6) {
      const Big v{next, 0, 1};
      ++next;
      r.push_front(v);
      ref.push_front(v);
    } else {
      REQUIRE(r.pop_front() == ref.front());
      ref.pop_front();
    }
    REQUIRE(r.size() == ref.size());
    if (!ref.empty()) {
      REQUIRE(r.front() == ref.front());
      REQUIRE(r.back() == ref.back());
    }
  }
}

TEST_CASE("Ring: reserve while empty makes room without changing contents", "[core]") {
  Ring r;
  r.reserve(100);
  for (std::uint32_t i = 0; i < 100; ++i) r.push_back(i);
  for (std::uint32_t i = 0; i < 100; ++i) REQUIRE(r.pop_front() == i);
  CHECK(r.empty());
}
