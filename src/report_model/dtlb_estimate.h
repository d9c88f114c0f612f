// The DTLB model's figures for a copy, as the report holds them (analysis/dtlb_model.h
// computes them).
#pragma once

#include <cstdint>

namespace layoutprof {

struct DtlbEstimate {
  int64_t accesses = 0;   // element reads and writes the copy makes
  int64_t l1_misses = 0;  // modelled
  int64_t walks = 0;      // modelled second-level misses: page walks
  bool sampled = false;   // rows were sampled and the counts scaled
  double fraction = 1.0;  // share of rows simulated
};

}  // namespace layoutprof
