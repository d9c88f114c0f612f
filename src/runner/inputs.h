// Model inputs built from --input specs (torch side; used by the runner and the benchmark).
#pragma once

#include <ATen/core/Tensor.h>

#include "layoutprof/input_spec.h"

namespace layoutprof {

// A random tensor of the spec's shape and dtype whose memory is laid out as its format asks.
// Seed the generator first for identical inputs.
at::Tensor make_input(const InputSpec& spec);

}  // namespace layoutprof
