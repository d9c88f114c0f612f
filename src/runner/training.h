// A training step's backward half (torch side; used by the runner and the benchmark).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <functional>
#include <string>

namespace layoutprof {

// Backward from what forward() returned: a seeded random-normal upstream gradient for each
// differentiable output (contiguous, as a loss would give), or from the outputs' sum
// (loss "sum"). `begins` is called as the backward pass starts. Throws UsageError when no
// output can be differentiated.
void backward_from(const c10::IValue& output, const std::string& loss, const std::function<void()>& begins);

// Gradients set to none between steps, as optimizer.zero_grad() does by default.
void clear_grads(const torch::jit::Module& module);

}  // namespace layoutprof
