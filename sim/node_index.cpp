#include "node_index.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace shardflow::sim {

void NodeIndex::resize(std::uint32_t slots) {
  if (slots <= slots_ && !tree_.empty()) return;
  std::uint32_t size = 1;
  while (size < slots) size *= 2;
  if (size != size_ || tree_.empty()) {
    // Rebuild with the larger leaf count; growth doubles, so the cost is amortized.
    std::vector<Entry> old_leaves(tree_.empty() ? 0 : slots_);
    for (std::uint32_t s = 0; s < old_leaves.size(); ++s) old_leaves[s] = tree_[size_ + s];
    size_ = size;
    tree_.assign(2 * static_cast<std::size_t>(size_), Entry{});
    for (std::uint32_t s = 0; s < old_leaves.size(); ++s) tree_[size_ + s] = old_leaves[s];
    for (std::uint32_t i = size_ - 1; i >= 1; --i) pull(i);
  }
  slots_ = std::max(slots_, slots);
}

bool NodeIndex::pull(std::uint32_t i) {
  const Entry& a = tree_[2 * std::size_t{i}];
  const Entry& b = tree_[2 * std::size_t{i} + 1];
  Entry& e = tree_[i];
  const Entry before = e;
  e.free.cpu = std::max(a.free.cpu, b.free.cpu);
  e.free.memory = std::max(a.free.memory, b.free.memory);
  e.free.gpu = std::max(a.free.gpu, b.free.gpu);
  e.free.pods = std::max(a.free.pods, b.free.pods);
  e.least.cpu = std::min(a.least.cpu, b.least.cpu);
  e.least.memory = std::min(a.least.memory, b.least.memory);
  e.least.gpu = std::min(a.least.gpu, b.least.gpu);
  e.least.pods = std::min(a.least.pods, b.least.pods);
  e.pools = a.pools | b.pools;
  return std::memcmp(&before, &e, sizeof(Entry)) != 0;
}

void NodeIndex::set(std::uint32_t slot, NodeFree free, std::uint32_t pool) {
  assert(slot < slots_ && pool < 64);
  std::uint32_t i = size_ + slot;
  tree_[i] = Entry{free, free, std::uint64_t{1} << pool};
  // Stop as soon as a range's summary does not change: its ancestors would not either.
  for (i /= 2; i >= 1 && pull(i); i /= 2) {
  }
}

void NodeIndex::clear(std::uint32_t slot) {
  assert(slot < slots_);
  std::uint32_t i = size_ + slot;
  tree_[i] = Entry{};
  for (i /= 2; i >= 1 && pull(i); i /= 2) {
  }
}

}  // namespace shardflow::sim
