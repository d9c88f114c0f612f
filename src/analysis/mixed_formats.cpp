#include "analysis/saturating.h"
#include "analysis/mixed_formats.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/pools.h"

namespace layoutprof {

std::string_view op_short_name(const OpEvent& op) {
  const std::string_view name = op.name.str();
  const size_t colons = name.rfind("::");
  return colons == std::string_view::npos ? name : name.substr(colons + 2);
}

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

// The dim orders of the two formats, made once (the analysis asks for every op's tensors).
const std::vector<int>& channels_last_order(size_t rank) {
  static const std::vector<int> cl4{0, 2, 3, 1}, cl5{0, 2, 3, 4, 1};
  return rank == 4 ? cl4 : cl5;
}
const std::vector<int>& row_major_order(size_t rank) {
  static const std::vector<int> rm4{0, 1, 2, 3}, rm5{0, 1, 2, 3, 4};
  return rank == 4 ? rm4 : rm5;
}

// The strides of a dense tensor of these sizes laid out in `order` (outermost first).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, const std::vector<int>& order) {
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = step;
    step = saturating_mul(step, std::max<int64_t>(sizes[order[i]], 1));
  }
  return strides;
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
  const std::vector<int>& rowmajor = row_major_order(rank);
  const std::vector<int>& cl = channels_last_order(rank);
  const bool as_nchw = is_dense_in_order(t.sizes(), t.strides(), rowmajor);
  const bool as_nhwc = is_dense_in_order(t.sizes(), t.strides(), cl);
  if (as_nchw && !as_nhwc) return MemoryFormat::nchw;
  if (as_nhwc && !as_nchw) return MemoryFormat::nhwc;
  if (!as_nchw) return MemoryFormat::none;
  if (t.strides() == dense_strides(t.sizes(), rowmajor)) return MemoryFormat::nchw;
  if (t.strides() == dense_strides(t.sizes(), cl)) return MemoryFormat::nhwc;
  return MemoryFormat::either;
}

namespace {

struct NameKind {
  bool convolution = false, normalization = false;
};

NameKind kind_of(std::string_view name) {
  NameKind k;
  const bool conv = name.substr(0, 4) == "conv" || name.find("_conv") != std::string_view::npos;
  const bool backward = name.find("backward") != std::string_view::npos;
  k.convolution = conv && !backward && name.find("convert") == std::string_view::npos &&
                  name.find("weight") == std::string_view::npos;
  for (const char* norm : {"batch_norm", "group_norm", "layer_norm", "instance_norm"})
    k.normalization = k.normalization || (!backward && name.find(norm) != std::string_view::npos);
  return k;
}

// An op name's kind, worked out once per name: names are interned (one pointer each), and the
// analysis asks of every top-level op of a call. Forgotten with the pools' epoch: a freed
// name's address may be another name's next.
NameKind name_kind(const OpEvent& op) {
  struct Slot {
    const void* name = nullptr;
    NameKind kind;
  };
  thread_local Slot recent[256];  // direct-mapped: a call's few names stay here
  thread_local std::unordered_map<const void*, NameKind> known;
  thread_local EpochStamp epoch;
  if (epoch.ended()) {
    std::fill(std::begin(recent), std::end(recent), Slot{});
    known.clear();
  }
  Slot& slot = recent[(reinterpret_cast<uintptr_t>(op.name.id()) >> 4) & 255];
  if (slot.name == op.name.id()) return slot.kind;
  auto it = known.find(op.name.id());
  if (it == known.end()) it = known.emplace(op.name.id(), kind_of(op_short_name(op))).first;
  slot = {op.name.id(), it->second};
  return it->second;
}

}  // namespace

bool is_convolution(const OpEvent& op) { return name_kind(op).convolution; }

bool is_normalization(const OpEvent& op) { return name_kind(op).normalization; }

MemoryFormat model_weight_format(const OpList& ops, int64_t forward_end) {
  std::vector<int32_t> top_level;
  for (const OpEvent& op : ops)
    if (op.id < forward_end && op.parent < 0) top_level.push_back(op.id);
  return model_weight_format(ops, top_level);
}

MemoryFormat model_weight_format(const OpList& ops, const std::vector<int32_t>& top_level) {
  int64_t nchw = 0, nhwc = 0;
  for (int32_t id : top_level) {
    const OpEvent& op = ops[id];
    int position = -1;
    const TensorInfo* weight = is_convolution(op) ? input_at(op, 1, &position) : nullptr;
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
  const bool convolution = is_convolution(op);
  if (!convolution && !(model_format != MemoryFormat::none && is_normalization(op))) return m;
  int data_at = -1, weight_at = -1;
  const TensorInfo* data = input_at(op, 0, &data_at);
  if (!data) return m;
  m.data = memory_format_of(*data);
  const bool data_decided = m.data == MemoryFormat::nchw || m.data == MemoryFormat::nhwc;
  if (!data_decided) return m;
  if (convolution) {
    const TensorInfo* weight = input_at(op, 1, &weight_at);
    const MemoryFormat w = weight ? memory_format_of(*weight) : MemoryFormat::none;
    const bool weight_decided = w == MemoryFormat::nchw || w == MemoryFormat::nhwc;
    m.mixed = weight_decided && w != m.data;
    m.foreign = m.mixed ? weight_at : -1;
    return m;
  }
  m.mixed = m.data != model_format;  // a normalization, in a model whose format is known
  return m;
}

}  // namespace layoutprof
