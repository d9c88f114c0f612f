#include <stdexcept>

#include "analysis/analysis.h"

namespace layoutprof {

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
