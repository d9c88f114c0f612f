// What the machine's memory holds: whether a run's inputs fit (torch-free).
#pragma once

#include <vector>

#include "core/input_spec.h"

namespace layoutprof {

// The inputs' tensors, checked before anything is allocated: throws UsageError with the bytes
// they need when the machine cannot hold them (a permuted or channels_last input is built
// through a contiguous one: twice its bytes for a moment).
void check_inputs_fit(const std::vector<InputSpec>& specs);

}  // namespace layoutprof
