#include "runner/inputs.h"

#include <ATen/Functions.h>
#include <torch/utils.h>

#include "support/errors.h"
#include "support/setting_error.h"
#include "record/tensor_capture.h"  // dtype_name
#include "record/tensor_info.h"
#include "runner/memory.h"

namespace layoutprof {

namespace {

c10::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "f32") return at::kFloat;
  if (dtype == "f64") return at::kDouble;
  if (dtype == "f16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "i64") return at::kLong;
  if (dtype == "i32") return at::kInt;
  if (dtype == "i8") return at::kChar;
  if (dtype == "u8") return at::kByte;
  if (dtype == "bool") return at::kBool;
  throw UsageError("unknown dtype '" + dtype + "'");
}

at::Tensor random_tensor(const std::vector<int64_t>& sizes, const std::string& dtype) {
  auto options = at::TensorOptions().dtype(scalar_type(dtype));
  if (is_floating_dtype(dtype)) return at::randn(sizes, options);
  if (dtype == "bool") return at::randint(0, 2, sizes, options);
  return at::randint(0, 10, sizes, options);
}

// The --input spec whose tensor is laid out as `t`: its sizes, dtype, and its dims' order in
// memory (outermost first).
InputSpec spec_like(const at::Tensor& t, size_t index) {
  const std::string dtype = dtype_name(t.scalar_type());
  if (dtype_size(dtype) == 0 || t.layout() != at::kStrided)  // not a dtype --input names
    throw SettingError(Setting::input, ": the model's stored input " + std::to_string(index) + " is a " +
                                           std::string(c10::toString(t.scalar_type())) +
                                           " tensor, which --input cannot describe; give --input");
  InputSpec spec;
  spec.sizes = t.sizes().vec();
  spec.dtype = dtype;
  std::vector<int> order(t.dim());
  for (int d = 0; d < t.dim(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return t.stride(a) > t.stride(b); });
  const bool in_order = std::is_sorted(order.begin(), order.end());
  if (t.is_contiguous() || in_order) spec.format = "contiguous";
  else if (t.dim() == 4 && t.is_contiguous(at::MemoryFormat::ChannelsLast)) spec.format = "channels_last";
  else if (t.dim() == 5 && t.is_contiguous(at::MemoryFormat::ChannelsLast3d)) spec.format = "channels_last_3d";
  else {
    spec.format = "perm";
    spec.perm = order;
  }
  spec.text = input_spec_text(spec);
  return spec;
}

}  // namespace

std::vector<InputSpec> stored_input_specs(const std::vector<c10::IValue>& stored) {
  std::vector<InputSpec> specs;
  for (size_t i = 0; i < stored.size(); ++i) {
    if (!stored[i].isTensor())
      throw SettingError(Setting::input, ": the model's stored input " + std::to_string(i) +
                                             " is not a tensor; give --input");
    specs.push_back(spec_like(stored[i].toTensor(), i));
  }
  return specs;
}

std::vector<c10::IValue> stored_inputs(const std::vector<c10::IValue>& stored, const at::Device& device,
                                       std::vector<ModelInput>& described) {
  const std::vector<InputSpec> specs = stored_input_specs(stored);
  std::vector<c10::IValue> inputs;
  for (size_t i = 0; i < stored.size(); ++i) {
    at::Tensor t = stored[i].toTensor();
    const InputSpec& spec = specs[i];
    if (device.is_cuda()) t = t.to(device);
    described.push_back({spec, describe_tensor(t, static_cast<int>(described.size())), ""});
    inputs.emplace_back(std::move(t));
  }
  return inputs;
}

at::Tensor make_input(const InputSpec& spec) {
  if (spec.format == "channels_last")
    return random_tensor(spec.sizes, spec.dtype).contiguous(at::MemoryFormat::ChannelsLast);
  if (spec.format == "channels_last_3d")
    return random_tensor(spec.sizes, spec.dtype).contiguous(at::MemoryFormat::ChannelsLast3d);
  if (spec.format == "perm") {
    // Allocate in the physical order, then view back to the logical shape.
    std::vector<int64_t> physical;
    for (int d : spec.perm) physical.push_back(spec.sizes[d]);
    std::vector<int64_t> back(spec.perm.size());
    for (size_t p = 0; p < spec.perm.size(); ++p) back[spec.perm[p]] = static_cast<int64_t>(p);
    return random_tensor(physical, spec.dtype).permute(back);
  }
  return random_tensor(spec.sizes, spec.dtype);
}

std::vector<c10::IValue> make_inputs(const std::vector<InputSpec>& specs, const at::Device& device, bool backward,
                                     std::vector<ModelInput>& described) {
  torch::manual_seed(0);  // identical inputs on every run
  check_inputs_fit(specs);
  std::vector<c10::IValue> inputs;
  for (const InputSpec& spec : specs) {
    // Built on the CPU from the seed, then moved: .to() keeps the layout (preserve format).
    at::Tensor t;
    try {
      t = make_input(spec);
      if (device.is_cuda()) t = t.to(device);
    } catch (const c10::Error& e) {  // out of memory after all (the device's, or overcommitted)
      throw SettingError(Setting::input, " '" + bounded(spec.text) + "': its tensor could not be made: " +
                                             first_line(e.what_without_backtrace()));
    }
    if (spec.requires_grad) {
      if (!backward) throw SettingError(Setting::input, " '" + bounded(spec.text) + "': :grad needs a training step");
      t.requires_grad_(true);  // a leaf: its gradient is computed, not recorded as a parameter's
    }
    described.push_back({spec, describe_tensor(t, static_cast<int>(described.size())), ""});
    inputs.emplace_back(std::move(t));
  }
  return inputs;
}

}  // namespace layoutprof
