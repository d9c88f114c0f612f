#include "runner/conversion.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>

#include <optional>

#include "runner/model.h"

namespace layoutprof {

namespace {

// The memory format a compare-formats variant gives a tensor, as Python's
// model.to(memory_format=...) chooses it: channels_last converts 4-D tensors (5-D ones to
// channels_last_3d) and leaves the others; contiguous converts every tensor.
std::optional<at::MemoryFormat> format_for(const at::Tensor& t, const std::string& to) {
  if (!t.defined() || t.layout() != at::kStrided) return std::nullopt;  // sparse, mkldnn: no strides
  if (to == "contiguous") return at::MemoryFormat::Contiguous;
  if (to == "channels_last" && t.dim() == 4) return at::MemoryFormat::ChannelsLast;
  if (to == "channels_last" && t.dim() == 5) return at::MemoryFormat::ChannelsLast3d;
  return std::nullopt;
}

// Lays out a tensor held by the model in the variant's format, in place: set_data() gives
// the model's own tensor (its slot, and any other module's slot sharing it) the new memory,
// as Module.to() does in Python; torch::jit::Module has no to(memory_format). A tensor in
// that format already, with the format's own strides, is kept, as Tensor.to(memory_format=...)
// keeps it: is_contiguous(format) alone ignores dims of size 1, but a 1x1 convolution's NCHW
// weight is not what Python's conversion leaves (its strides on those dims differ), so the
// format LibTorch suggests for the tensor must be that one too. Returns whether it changed.
bool convert_in_place(at::Tensor t, const std::string& to) {
  std::optional<at::MemoryFormat> format = format_for(t, to);
  if (!format || (t.is_contiguous(*format) && t.suggest_memory_format() == *format)) return false;
  t.set_data(t.clone(*format));
  return true;
}

}  // namespace

void convert_model(Model& model, const std::string& to, Conversion& done) {
  at::NoGradGuard no_grad;  // the new memory is data, not a step autograd records
  for (const NamedTensor& p : model.named_parameters()) {
    ++done.parameters_total;
    done.parameters += convert_in_place(p.tensor, to);
  }
  for (const NamedTensor& b : model.named_buffers()) {
    ++done.buffers_total;
    done.buffers += convert_in_place(b.tensor, to);
  }
}

}  // namespace layoutprof
