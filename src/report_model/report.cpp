// The copy classes' names, as the JSON report spells them.
#include <stdexcept>
#include <string>

#include "report_model/report.h"

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

}  // namespace layoutprof
