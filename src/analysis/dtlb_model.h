// A deterministic model of the data TLB over the addresses a copy touches: two levels,
// set-associative, LRU. Counters are noisy and often absent; a CI gate needs figures that are
// the same on every run and machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/layout.h"
#include "report_model/dtlb_estimate.h"

namespace layoutprof {

struct TlbConfig {
  int l1_entries = 64;
  int l1_ways = 4;
  int l2_entries = 1536;
  int l2_ways = 12;
  int64_t page_bytes = 4096;
};

// "l1=64:4,l2=1536:12,page=4k" (any subset; page 4k, 2m, 1g or bytes). Throws UsageError.
TlbConfig parse_tlb_config(const std::string& text);
std::string tlb_config_string(const TlbConfig& config);

// One two-level TLB. access() returns 0 for an L1 hit, 1 for an L2 hit, 2 for a walk.
class TlbSim {
 public:
  explicit TlbSim(const TlbConfig& config);
  int access(uint64_t page_tag);

 private:
  struct Level {
    // sets x ways entries, a set's ways side by side; tag 0 = empty (tags are stored + 1).
    struct Entry {
      uint64_t tag = 0;
      uint64_t stamp = 0;  // last use, for LRU
    };
    int sets = 1;
    int ways = 1;
    uint64_t set_mask = 0;  // sets - 1 where sets is a power of two, else 0 (tag % sets)
    std::vector<Entry> entries;
    // Looks `tag` up; a hit refreshes its stamp, a miss replaces the set's least recently
    // used entry. Returns the entry's index and whether it hit.
    size_t lookup(uint64_t tag, uint64_t now, bool* hit);
  };
  // The first-level entries of the last two pages looked up (a copy's source and
  // destination streams): a page touched again while still in its entry is a first-level hit
  // without searching its set, with the same stamps as the search.
  struct Recent {
    uint64_t tag = 0;  // stored + 1; 0 = none
    size_t entry = 0;
  };
  Level l1_, l2_;
  Recent recent_[2];
  int next_recent_ = 0;
  uint64_t clock_ = 0;
};

// Models a copy from `src` to `dst`: source reads in destination order, each followed by its
// destination write. Addresses are taken relative to each buffer's start (storage offset
// included), so the figure does not depend on where the allocator put the buffers. Copies
// needing more than `budget` simulated accesses are sampled by windows of rows.
DtlbEstimate model_copy_dtlb(const TensorInfo& src, const TensorInfo& dst, const TlbConfig& config,
                             int64_t budget = 1 << 19);

}  // namespace layoutprof
