// A deterministic model of the data TLB over the addresses a copy touches: two levels,
// set-associative, LRU. Counters are noisy and often absent; a CI gate needs figures that are
// the same on every run and machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutprof/layout.h"

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

struct DtlbEstimate {
  int64_t accesses = 0;   // element reads and writes the copy makes
  int64_t l1_misses = 0;  // modelled
  int64_t walks = 0;      // modelled second-level misses: page walks
  bool sampled = false;   // rows were sampled and the counts scaled
  double fraction = 1.0;  // share of rows simulated
};

// One two-level TLB. access() returns 0 for an L1 hit, 1 for an L2 hit, 2 for a walk.
class TlbSim {
 public:
  explicit TlbSim(const TlbConfig& config);
  int access(uint64_t page_tag);

 private:
  struct Level {
    int sets = 1;
    int ways = 1;
    std::vector<uint64_t> tags;   // sets x ways; 0 = empty (tags are stored + 1)
    std::vector<uint64_t> stamp;  // last use, for LRU
    bool lookup(uint64_t tag, uint64_t now);
  };
  Level l1_, l2_;
  uint64_t clock_ = 0;
};

// Models a copy from `src` to `dst`: source reads in destination order, each followed by its
// destination write. Addresses are taken relative to each buffer's start (storage offset
// included), so the figure does not depend on where the allocator put the buffers. Copies
// needing more than `budget` simulated accesses are sampled by windows of rows.
DtlbEstimate model_copy_dtlb(const TensorInfo& src, const TensorInfo& dst, const TlbConfig& config,
                             int64_t budget = 1 << 19);

}  // namespace layoutprof
