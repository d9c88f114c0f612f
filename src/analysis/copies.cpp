#include <stdexcept>

#include "analysis/analysis.h"

namespace layoutprof {

const char* copy_class_name(CopyClass c) {
  switch (c) {
    case CopyClass::implicit_layout: return "implicit_layout";
    case CopyClass::explicit_layout: return "explicit_layout";
    case CopyClass::broadcast: return "broadcast";
    case CopyClass::dtype_device: return "dtype_device";
    case CopyClass::same_layout: return "same_layout";
  }
  return "same_layout";
}

CopyClass copy_class_from_name(const std::string& name) {
  for (int i = 0; i < kCopyClassCount; ++i)
    if (name == copy_class_name(static_cast<CopyClass>(i))) return static_cast<CopyClass>(i);
  throw std::invalid_argument("unknown copy class '" + name + "'");
}

bool is_explicit_copy_op(const std::string& op_name) {
  static const char* const kExplicit[] = {"aten::contiguous", "aten::clone", "aten::copy_",
                                          "aten::to",         "aten::_to_copy", "aten::type_as"};
  for (const char* name : kExplicit)
    if (op_name == name) return true;
  return false;
}

CopyClass classify_copy(const TensorInfo& src, const TensorInfo& dst,
                        const std::string& culprit_name) {
  if (src.dtype() != dst.dtype() || src.device() != dst.device()) return CopyClass::dtype_device;
  if (src.numel() < dst.numel() || src.layout().cls == LayoutClass::broadcast)
    return CopyClass::broadcast;
  if (effective_dims(src.sizes(), src.strides()) == effective_dims(dst.sizes(), dst.strides()))
    return CopyClass::same_layout;
  return is_explicit_copy_op(culprit_name) ? CopyClass::explicit_layout
                                           : CopyClass::implicit_layout;
}

}  // namespace layoutprof
