// Mixed-format ops (design.md): an op that reads activations in one memory format and weights
// in another. The backend converts one of them, with an aten::copy_ that the trace shows, or
// inside its kernel (oneDNN, cuDNN), which it does not. Convolutions are judged by their data
// and weight; batch, group, layer and instance norms by their data against the model's format
// (its convolution weights'). Linear and matmul on permuted data show as their copies.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/trace.h"

namespace layoutprof {

enum class MemoryFormat {
  none,    // not a 4-D or 5-D dense tensor in either order (or not strided at all)
  nchw,    // contiguous (NCHW, NCDHW)
  nhwc,    // channels_last (channels_last_3d)
  either,  // dense in both orders with strides of neither (a C == 1 or 1x1 view)
};
const char* memory_format_label(MemoryFormat f);  // "contiguous", "channels_last", ...

// The memory format of a tensor. One dense in both orders (a 1x1 or depthwise weight, C == 1)
// has the format whose exact strides it has: what the code that made it asked for.
MemoryFormat memory_format_of(const TensorInfo& t);

// Non-overlapping and dense, in some dim order (contiguous, channels_last(_3d), permuted).
inline bool is_dense_class(LayoutClass c) {
  return c == LayoutClass::contiguous || c == LayoutClass::channels_last || c == LayoutClass::channels_last_3d ||
         c == LayoutClass::permuted;
}

// "aten::conv2d" -> "conv2d", without a copy.
std::string_view op_short_name(const OpEvent& op);

bool is_convolution(const OpEvent& op);  // a forward convolution of any backend
bool is_normalization(const OpEvent& op);

// The format the model's convolution weights are in, by majority; none without convolutions.
MemoryFormat model_weight_format(const OpList& ops, int64_t forward_end);
// The same over the forward pass's top-level ops, given (ids ascending).
MemoryFormat model_weight_format(const OpList& ops, const std::vector<int32_t>& top_level);

struct MixedFormat {
  bool mixed = false;
  MemoryFormat data = MemoryFormat::none;  // the activations' format
  int foreign = -1;  // the input (position in op.inputs) in the other format: a convolution's weight
};
// Whether a top-level forward op is a mixed-format op.
MixedFormat mixed_format(const OpEvent& op, MemoryFormat model_format);

}  // namespace layoutprof
