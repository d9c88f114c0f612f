// Model inputs built from --input specs (torch side; used by the runner and the benchmark).
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <vector>

#include "core/input_spec.h"
#include "core/trace.h"

namespace layoutprof {

// A random tensor of the spec's shape and dtype whose memory is laid out as its format asks.
// Seed the generator first for identical inputs.
at::Tensor make_input(const InputSpec& spec);

// A run's inputs, seeded (identical on every run), on `device` in the specs' layouts, each
// described in `described`. Refused with UsageError when the machine cannot hold them, or
// when a spec asks for a gradient (:grad) and the run has no backward pass.
std::vector<c10::IValue> make_inputs(const std::vector<InputSpec>& specs, const at::Device& device, bool backward,
                                     std::vector<ModelInput>& described);

// The inputs a model file stores (a .pt2's example inputs), used where no --input is given:
// moved to `device`, each described by the spec that would make its like ("8x3x224x224:
// channels_last"), so that reports and baselines read as with --input. Refused with
// UsageError for a stored input that is no dense tensor of a dtype --input names.
std::vector<InputSpec> stored_input_specs(const std::vector<c10::IValue>& stored);
std::vector<c10::IValue> stored_inputs(const std::vector<c10::IValue>& stored, const at::Device& device,
                                       std::vector<ModelInput>& described);

}  // namespace layoutprof
