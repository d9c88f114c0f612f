// What DDP and AccumulateGrad themselves printed about gradient strides in the recorded process
// (in process only): kept among run.measured as lines that start with kDdpSeen or
// kAccumulateGradSeen, shown beside layoutprof's gradient verdicts.
#pragma once

#include <string_view>

#include "analysis/grads.h"  // kDdpSeen, kAccumulateGradSeen

namespace layoutprof {

inline bool is_ddp_seen(std::string_view measured) {
  return measured.substr(0, kDdpSeen.size()) == kDdpSeen ||
         measured.substr(0, kAccumulateGradSeen.size()) == kAccumulateGradSeen;
}

}  // namespace layoutprof
