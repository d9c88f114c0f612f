// Dense ids for distinct keys, in order of first appearance: an open-addressing table of
// 32-bit slots over a vector of the keys. The analysis and the JSON writer look keys up
// several times per op event; std::unordered_map's node per key and pointer chase cost more
// than the rest of that work (internal to layoutprof).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace layoutprof {

// Spreads the bits of a pointer or an integer over the word (pointers are aligned, offsets
// are multiples of a row): Fibonacci hashing's multiplier, then the high half folded down.
inline uint64_t mix_hash(uint64_t x) {
  x *= 0x9e3779b97f4a7c15ull;
  return x ^ (x >> 32);
}

template <typename Key, typename Hash>
class FlatIndex {
 public:
  // The id of `key`: its position in keys(), added at the end when new.
  uint32_t id(const Key& key) {
    if ((keys_.size() + 1) * 2 > slots_.size()) grow();
    size_t at = Hash()(key) & mask_;
    while (uint32_t slot = slots_[at]) {
      if (keys_[slot - 1] == key) return slot - 1;
      at = (at + 1) & mask_;
    }
    keys_.push_back(key);
    slots_[at] = static_cast<uint32_t>(keys_.size());
    return static_cast<uint32_t>(keys_.size() - 1);
  }
  // The id of `key`, or -1 when it was never added.
  int64_t find(const Key& key) const {
    if (slots_.empty()) return -1;
    for (size_t at = Hash()(key) & mask_; uint32_t slot = slots_[at]; at = (at + 1) & mask_)
      if (keys_[slot - 1] == key) return slot - 1;
    return -1;
  }
  const std::vector<Key>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

 private:
  void grow() {
    slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, 0);
    mask_ = slots_.size() - 1;
    for (size_t i = 0; i < keys_.size(); ++i) {
      size_t at = Hash()(keys_[i]) & mask_;
      while (slots_[at]) at = (at + 1) & mask_;
      slots_[at] = static_cast<uint32_t>(i + 1);
    }
  }
  std::vector<Key> keys_;
  std::vector<uint32_t> slots_;  // 0: empty; else the key's id + 1
  size_t mask_ = 0;
};

}  // namespace layoutprof
