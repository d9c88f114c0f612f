// The copy classes', birthplace kinds' and fix kinds' names, as the JSON report spells them.
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

const char* birth_kind_name(BirthKind k) {
  switch (k) {
    case BirthKind::op: return "op";
    case BirthKind::model_input: return "model_input";
    case BirthKind::unrecorded: return "unrecorded";
  }
  return "unrecorded";
}

const char* hazard_kind_name(HazardKind k) {
  switch (k) {
    case HazardKind::aliased_write: return "aliased_write";
    case HazardKind::lost_write: return "lost_write";
    case HazardKind::failed_view: return "failed_view";
    case HazardKind::refused_write: return "refused_write";
    case HazardKind::model_tensor: return "model_tensor";
    case HazardKind::stride_assertion: return "stride_assertion";
  }
  return "aliased_write";
}

HazardKind hazard_kind_from_name(const std::string& name) {
  for (HazardKind k : {HazardKind::aliased_write, HazardKind::lost_write, HazardKind::failed_view,
                       HazardKind::refused_write, HazardKind::model_tensor, HazardKind::stride_assertion})
    if (name == hazard_kind_name(k)) return k;
  throw std::invalid_argument("unknown hazard kind '" + name + "'");
}

BirthKind birth_kind_from_name(const std::string& name) {
  for (BirthKind k : {BirthKind::op, BirthKind::model_input, BirthKind::unrecorded})
    if (name == birth_kind_name(k)) return k;
  throw std::invalid_argument("unknown birthplace kind '" + name + "'");
}

const char* fix_kind_name(FixKind k) {
  switch (k) {
    case FixKind::none: return "none";
    case FixKind::contiguous_at: return "contiguous_at";
    case FixKind::swap_operands: return "swap_operands";
    case FixKind::feed_input: return "feed_input";
    case FixKind::convert_model: return "convert_model";
    case FixKind::dense_parameter: return "dense_parameter";
  }
  return "none";
}

FixKind fix_kind_from_name(const std::string& name) {
  for (FixKind k : {FixKind::none, FixKind::contiguous_at, FixKind::swap_operands, FixKind::feed_input,
                    FixKind::convert_model, FixKind::dense_parameter})
    if (name == fix_kind_name(k)) return k;
  throw std::invalid_argument("unknown fix kind '" + name + "'");
}

}  // namespace layoutprof
