// A view of memory: two tensors with the same key read the same elements the same way (shapes
// are interned: one pointer stands for sizes, strides, dtype and device).
#pragma once

#include <cstdint>
#include <tuple>

#include "core/layout.h"
#include "support/flat_index.h"

namespace layoutprof {

using ViewKey = std::tuple<uint64_t, int64_t, const TensorShape*>;
inline ViewKey view_key(const TensorInfo& t) { return {t.storage, t.storage_offset, t.shape}; }
struct ViewKeyHash {
  size_t operator()(const ViewKey& k) const {
    return mix_hash(std::get<0>(k) ^ mix_hash(static_cast<uint64_t>(std::get<1>(k)) ^
                                              mix_hash(reinterpret_cast<uintptr_t>(std::get<2>(k)))));
  }
};

}  // namespace layoutprof
