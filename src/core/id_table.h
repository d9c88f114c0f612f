// Ids for keys (module paths, source lines) as ModuleSites interns them: those made while no
// recording holds the pools' epoch open are kept for the life of the process; those made
// inside one are forgotten as the epoch ends (core/pools.h), so that a process recording a
// thousand models keeps none of their names. The epoch's ids are never handed out again: one
// kept past its epoch (a module call open across the end of a recording) finds nothing, never
// another key's value.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace layoutprof {

template <typename Value>
class IdTable {
 public:
  static constexpr uint32_t kFirstEpochId = 1u << 31;
  static constexpr uint32_t kNone = ~0u;

  // The id of `key`, made with `value` (and kept for good unless `in_epoch`) the first time.
  uint32_t intern(const std::string& key, Value value, bool in_epoch) {
    auto [it, added] = ids_.emplace(key, kNone);
    if (!added) return it->second;
    it->second = in_epoch ? next_epoch_id_ + static_cast<uint32_t>(epoch_.size()) : static_cast<uint32_t>(kept_.size());
    (in_epoch ? epoch_ : kept_).push_back(std::move(value));
    return it->second;
  }

  // The value of `id`; null for an id of an ended epoch, or none.
  const Value* find(uint32_t id) const {
    if (id < kFirstEpochId) return id < kept_.size() ? &kept_[id] : nullptr;
    return id >= next_epoch_id_ && id - next_epoch_id_ < epoch_.size() ? &epoch_[id - next_epoch_id_] : nullptr;
  }

  static bool is_epochs(uint32_t id) { return id >= kFirstEpochId && id != kNone; }

  // The open epoch's ids and values go; the next epoch's ids start after them.
  void forget_epoch() {
    for (auto it = ids_.begin(); it != ids_.end();)
      it = is_epochs(it->second) ? ids_.erase(it) : std::next(it);
    next_epoch_id_ += static_cast<uint32_t>(epoch_.size());
    if (next_epoch_id_ > kNone - (1u << 24)) next_epoch_id_ = kFirstEpochId;  // after 2^31 ids
    std::vector<Value>().swap(epoch_);
  }

  size_t size() const { return kept_.size() + epoch_.size(); }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<Value> kept_;
  std::vector<Value> epoch_;
  uint32_t next_epoch_id_ = kFirstEpochId;
};

}  // namespace layoutprof
