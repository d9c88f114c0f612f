// at::Tensor -> TensorInfo. Included only by the torch-side translation units.
#pragma once

#include <ATen/core/Tensor.h>

#include "core/layout.h"

namespace layoutprof {

TensorInfo describe_tensor(const at::Tensor& t, int arg);

}  // namespace layoutprof
