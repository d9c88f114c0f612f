#include "analysis/mixed_formats.h"

#include <string>

namespace layoutprof {

const char* memory_format_label(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::nchw: return "contiguous";
    case MemoryFormat::nhwc: return "channels_last";
    case MemoryFormat::either: return "either";
    case MemoryFormat::none: return "none";
  }
  return "none";
}

namespace {

std::vector<int> channels_last_order(size_t rank) {
  return rank == 4 ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 2, 3, 4, 1};
}

// The strides of a dense tensor of these sizes laid out in `order` (outermost first).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, const std::vector<int>& order) {
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = step;
    step *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return strides;
}

std::string short_name(const OpEvent& op) {
  const std::string& name = op.name;
  const size_t colons = name.rfind("::");
  return colons == std::string::npos ? name : name.substr(colons + 2);
}

const TensorInfo* input_at(const OpEvent& op, int arg, int* position) {
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i].arg == arg) {
      *position = static_cast<int>(i);
      return &op.inputs[i];
    }
  return nullptr;
}

}  // namespace

MemoryFormat memory_format_of(const TensorInfo& t) {
  const size_t rank = t.sizes().size();
  if ((rank != 4 && rank != 5) || t.numel() <= 1 || t.strides().size() != rank ||
      t.layout().cls == LayoutClass::unknown)
    return MemoryFormat::none;
  std::vector<int> rowmajor(rank);
  for (size_t d = 0; d < rank; ++d) rowmajor[d] = static_cast<int>(d);
  const std::vector<int> cl = channels_last_order(rank);
  const bool as_nchw = is_dense_in_order(t.sizes(), t.strides(), rowmajor);
  const bool as_nhwc = is_dense_in_order(t.sizes(), t.strides(), cl);
  if (as_nchw && !as_nhwc) return MemoryFormat::nchw;
  if (as_nhwc && !as_nchw) return MemoryFormat::nhwc;
  if (!as_nchw) return MemoryFormat::none;
  if (t.strides() == dense_strides(t.sizes(), rowmajor)) return MemoryFormat::nchw;
  if (t.strides() == dense_strides(t.sizes(), cl)) return MemoryFormat::nhwc;
  return MemoryFormat::either;
}

bool is_convolution(const OpEvent& op) {
  const std::string name = short_name(op);
  const bool conv = name.rfind("conv", 0) == 0 || name.find("_conv") != std::string::npos;
  return conv && name.find("convert") == std::string::npos && name.find("backward") == std::string::npos &&
         name.find("weight") == std::string::npos;
}

bool is_normalization(const OpEvent& op) {
  const std::string name = short_name(op);
  if (name.find("backward") != std::string::npos) return false;
  for (const char* norm : {"batch_norm", "group_norm", "layer_norm", "instance_norm"})
    if (name.find(norm) != std::string::npos) return true;
  return false;
}

MemoryFormat model_weight_format(const OpList& ops, int64_t forward_end) {
  int64_t nchw = 0, nhwc = 0;
  for (const OpEvent& op : ops) {
    if (op.id >= forward_end) break;
    int position = -1;
    const TensorInfo* weight = op.parent < 0 && is_convolution(op) ? input_at(op, 1, &position) : nullptr;
    if (!weight) continue;
    const MemoryFormat f = memory_format_of(*weight);
    nchw += f == MemoryFormat::nchw;
    nhwc += f == MemoryFormat::nhwc;
  }
  if (nchw + nhwc == 0) return MemoryFormat::none;
  return nhwc > nchw ? MemoryFormat::nhwc : MemoryFormat::nchw;
}

MixedFormat mixed_format(const OpEvent& op, MemoryFormat model_format) {
  MixedFormat m;
  int data_at = -1, weight_at = -1;
  const TensorInfo* data = input_at(op, 0, &data_at);
  if (!data) return m;
  m.data = memory_format_of(*data);
  const bool data_decided = m.data == MemoryFormat::nchw || m.data == MemoryFormat::nhwc;
  if (!data_decided) return m;
  if (is_convolution(op)) {
    const TensorInfo* weight = input_at(op, 1, &weight_at);
    const MemoryFormat w = weight ? memory_format_of(*weight) : MemoryFormat::none;
    const bool weight_decided = w == MemoryFormat::nchw || w == MemoryFormat::nhwc;
    m.mixed = weight_decided && w != m.data;
    m.foreign = m.mixed ? weight_at : -1;
    return m;
  }
  if (is_normalization(op) && model_format != MemoryFormat::none) m.mixed = m.data != model_format;
  return m;
}

}  // namespace layoutprof
