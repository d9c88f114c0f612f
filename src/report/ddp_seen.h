// What DDP itself printed about gradient strides in the recorded process (in process only):
// kept among run.measured as one line that starts with kDdpSeen, shown beside layoutprof's
// gradient verdicts.
#pragma once

#include <string_view>

#include "analysis/grads.h"  // kDdpSeen

namespace layoutprof {

inline bool is_ddp_seen(std::string_view measured) { return measured.substr(0, kDdpSeen.size()) == kDdpSeen; }

}  // namespace layoutprof
