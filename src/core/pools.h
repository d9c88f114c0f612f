// The pools of interned strings (Str) and tensor shapes (intern_shape), and the epochs that
// bound them in a long-running process.
//
// What is interned while no lease is held stays for the life of the process (the command's
// whole run, the names a process makes before it records). What is interned while a lease is
// held belongs to the open epoch, and is freed as the last lease goes: a process that records
// a thousand times (a notebook, a server) keeps no name of a finished recording. A recording
// session and every report it hands out hold a lease, so nothing of theirs is freed under
// them; whatever keeps interned values of its own (a cache of names or shapes, ids of the
// module sites) clears them when pools_generation() has moved on (or in a hook).
#pragma once

#include <cstddef>
#include <cstdint>

namespace layoutprof {

struct TensorShape;

// Holds the pools' epoch open. Copies hold it too; the epoch ends as the last one is destroyed.
class PoolLease {
 public:
  PoolLease();
  PoolLease(const PoolLease&);
  PoolLease& operator=(const PoolLease&) { return *this; }  // each holds one lease already
  ~PoolLease();
};

// What the pools hold now: entries, and the bytes of the entries themselves (their texts,
// sizes and strides; not the index around them).
struct PoolCounts {
  size_t strings = 0;
  size_t string_bytes = 0;
  size_t shapes = 0;
  size_t shape_bytes = 0;
  bool operator==(const PoolCounts& o) const {
    return strings == o.strings && string_bytes == o.string_bytes && shapes == o.shapes &&
           shape_bytes == o.shape_bytes;
  }
  bool operator!=(const PoolCounts& o) const { return !(*this == o); }
};
PoolCounts pool_counts();

// Advances each time an epoch's entries are freed (never while a lease is held).
uint64_t pools_generation();
// Leases held now.
int pool_leases();

// What a keeper of interned values (a cache of names, shapes or ids) holds beside them: which
// epoch they were interned in. ended() says, once, that it has ended since: the values are gone.
class EpochStamp {
 public:
  bool ended() {
    const uint64_t now = pools_generation();
    if (now == seen_) return false;
    seen_ = now;
    return true;
  }

 private:
  uint64_t seen_ = pools_generation();
};

// `hook` runs as each epoch's entries are freed (under the pools' epoch lock: it must not take
// a lease). Registered once per hook; for keepers of ids that must drop the epoch's at once.
void on_pools_released(void (*hook)());

// The pooled copy of `shape` as it is (its layout and numel set by the caller; its label made
// here): found, or added to the open epoch, or for good where no lease is held or `for_good`.
// Thread-safe.
const TensorShape* pooled_shape(TensorShape&& shape, bool for_good = false);

}  // namespace layoutprof
