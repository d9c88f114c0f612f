#include "runner/pt2_values.h"

#include <ATen/ScalarOps.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/complex.h>

#include <type_traits>

#include "support/errors.h"

namespace layoutprof {

using pt2::ArgKind;

namespace {

ArgPlan constant(c10::IValue value) {
  ArgPlan p;
  p.constant = std::move(value);
  return p;
}

ArgPlan slots(ArgPlan::Kind kind, const std::vector<std::string>& names,
              const std::function<int(const std::string&)>& slot_of) {
  ArgPlan p;
  p.kind = kind;
  for (const std::string& n : names) p.slots.push_back(n.empty() ? -1 : slot_of(n));
  return p;
}

// A SymInt[] (SymFloat[], SymBool[]): names where symbolic, constants elsewhere.
template <typename T>
ArgPlan mixed(ArgPlan::Kind kind, const pt2::Argument& arg, const std::vector<T>& values,
              const std::function<int(const std::string&)>& slot_of) {
  ArgPlan p;
  p.kind = kind;
  for (size_t i = 0; i < arg.names.size(); ++i) {
    p.slots.push_back(arg.names[i].empty() ? -1 : slot_of(arg.names[i]));
    p.constants.emplace_back(i < values.size() ? c10::IValue(values[i]) : c10::IValue());
  }
  return p;
}

ArgPlan symbolic(const pt2::Argument& arg, c10::IValue constant_value,
                 const std::function<int(const std::string&)>& slot_of) {
  if (!arg.names.empty() && !arg.names[0].empty()) return slots(ArgPlan::Kind::Value, {arg.names[0]}, slot_of);
  return constant(std::move(constant_value));
}

c10::List<bool> bool_list(const std::vector<int64_t>& ints) {
  c10::List<bool> list;
  for (int64_t v : ints) list.push_back(v != 0);
  return list;
}

c10::Device device_of(const pt2::Argument& arg, const std::string& at) {
  const std::string type = arg.strings.empty() ? "cpu" : arg.strings[0];
  try {
    c10::Device device(type);
    if (!arg.ints.empty() && arg.ints[0] >= 0) device.set_index(static_cast<c10::DeviceIndex>(arg.ints[0]));
    return device;
  } catch (const c10::Error&) {
    throw ModelLoadError(at + ": unknown device '" + bounded(type) + "'");
  }
}

}  // namespace

ArgPlan constant_plan(c10::IValue value) { return constant(std::move(value)); }

ArgPlan plan_argument(const pt2::Argument& arg, const std::function<int(const std::string&)>& slot_of,
                      const std::string& at) {
  const auto& ints = arg.ints;
  const auto& floats = arg.floats;
  switch (arg.kind) {
    case ArgKind::None: return constant(c10::IValue());
    case ArgKind::Tensor: return slots(ArgPlan::Kind::Value, arg.names, slot_of);
    case ArgKind::OptionalTensor:
      return arg.names.empty() || arg.names[0].empty() ? constant(c10::IValue())
                                                       : slots(ArgPlan::Kind::Value, arg.names, slot_of);
    case ArgKind::Tensors: return slots(ArgPlan::Kind::TensorList, arg.names, slot_of);
    case ArgKind::OptionalTensors: return slots(ArgPlan::Kind::OptTensorList, arg.names, slot_of);
    case ArgKind::Int: return constant(ints.at(0));
    case ArgKind::Ints: return constant(c10::IValue(ints));
    case ArgKind::Float: return constant(floats.at(0));
    case ArgKind::Floats: return constant(c10::IValue(floats));
    case ArgKind::Bool: return constant(ints.at(0) != 0);
    case ArgKind::Bools: return constant(c10::IValue(bool_list(ints)));
    case ArgKind::String: return constant(arg.strings.at(0));
    case ArgKind::Strings: return constant(c10::IValue(c10::List<std::string>(arg.strings)));
    case ArgKind::SymInt: return symbolic(arg, ints.empty() ? c10::IValue() : c10::IValue(ints[0]), slot_of);
    case ArgKind::SymFloat: return symbolic(arg, floats.empty() ? c10::IValue() : c10::IValue(floats[0]), slot_of);
    case ArgKind::SymBool: return symbolic(arg, ints.empty() ? c10::IValue() : c10::IValue(ints[0] != 0), slot_of);
    case ArgKind::SymInts: return mixed(ArgPlan::Kind::IntList, arg, ints, slot_of);
    case ArgKind::SymFloats: return mixed(ArgPlan::Kind::DoubleList, arg, floats, slot_of);
    case ArgKind::SymBools: return mixed(ArgPlan::Kind::BoolList, arg, std::vector<int64_t>(ints), slot_of);
    case ArgKind::ScalarType: return constant(static_cast<int64_t>(scalar_type_of(static_cast<int>(ints.at(0)))));
    case ArgKind::MemoryFormat: return constant(static_cast<int64_t>(memory_format_of(static_cast<int>(ints.at(0)))));
    case ArgKind::Layout: return constant(static_cast<int64_t>(layout_of(static_cast<int>(ints.at(0)))));
    case ArgKind::Device: {
      ArgPlan p = constant(device_of(arg, at));
      p.kind = ArgPlan::Kind::Device;
      return p;
    }
    case ArgKind::Complex: return constant(c10::complex<double>(floats.at(0), floats.at(1)));
    default:
      throw ModelLoadError(at + ": an argument of kind " + pt2::arg_kind_field(arg.kind) +
                           " is not supported by layoutprof's executor");
  }
}

namespace {

template <typename T>
c10::List<T> gather(const ArgPlan& plan, const std::vector<c10::IValue>& env) {
  c10::List<T> list;
  list.reserve(plan.slots.size());
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const c10::IValue& v = plan.slots[i] >= 0 ? env[plan.slots[i]] : plan.constants[i];
    if constexpr (std::is_same_v<T, bool>) list.push_back(v.isInt() ? v.toInt() != 0 : v.toBool());
    else if constexpr (std::is_same_v<T, double>) list.push_back(v.isInt() ? static_cast<double>(v.toInt()) : v.toDouble());
    else list.push_back(v.to<T>());
  }
  return list;
}

}  // namespace

namespace {

c10::IValue wrapped_number(const c10::IValue& v) {
  if (!v.isScalar()) return v;
  at::Tensor t = c10::scalar_to_tensor(v.toScalar());
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

c10::IValue value_of(const ArgPlan& plan, std::vector<c10::IValue>& env, const c10::Device& device);

}  // namespace

void prepare_constant(ArgPlan& plan) {
  if (plan.kind != ArgPlan::Kind::Constant || !plan.number_as_tensor) return;
  plan.constant = wrapped_number(plan.constant);
  plan.number_as_tensor = false;
}

c10::IValue materialize_other(const ArgPlan& plan, std::vector<c10::IValue>& env, const c10::Device& device) {
  if (plan.number_as_tensor) return wrapped_number(value_of(plan, env, device));
  return value_of(plan, env, device);
}

namespace {

c10::IValue value_of(const ArgPlan& plan, std::vector<c10::IValue>& env, const c10::Device& device) {
  switch (plan.kind) {
    case ArgPlan::Kind::Constant: return plan.constant;
    case ArgPlan::Kind::Value: return plan.take ? std::move(env[plan.slots[0]]) : env[plan.slots[0]];
    case ArgPlan::Kind::TensorList: {
      c10::List<at::Tensor> list;
      list.reserve(plan.slots.size());
      for (int s : plan.slots) list.push_back(env[s].toTensor());
      return list;
    }
    case ArgPlan::Kind::OptTensorList: {
      c10::List<std::optional<at::Tensor>> list;
      list.reserve(plan.slots.size());
      for (int s : plan.slots) list.push_back(s < 0 ? std::optional<at::Tensor>() : env[s].toTensor());
      return list;
    }
    case ArgPlan::Kind::IntList: return gather<int64_t>(plan, env);
    case ArgPlan::Kind::DoubleList: return gather<double>(plan, env);
    case ArgPlan::Kind::BoolList: return gather<bool>(plan, env);
    case ArgPlan::Kind::Device:
      return plan.constant.toDevice().is_cpu() && !device.is_cpu() ? c10::IValue(device) : plan.constant;
  }
  return plan.constant;
}

}  // namespace

c10::ScalarType scalar_type_of(int code) {
  using S = c10::ScalarType;
  switch (code) {
    case 1: return S::Byte;      case 2: return S::Char;          case 3: return S::Short;
    case 4: return S::Int;       case 5: return S::Long;          case 6: return S::Half;
    case 7: return S::Float;     case 8: return S::Double;        case 9: return S::ComplexHalf;
    case 10: return S::ComplexFloat; case 11: return S::ComplexDouble; case 12: return S::Bool;
    case 13: return S::BFloat16; case 28: return S::UInt16;       case 29: return S::Float8_e4m3fn;
    case 30: return S::Float8_e5m2; case 31: return S::Float8_e4m3fnuz; case 32: return S::Float8_e5m2fnuz;
    case 33: return S::Float8_e8m0fnu; case 34: return S::UInt32; case 35: return S::UInt64;
  }
  throw ModelLoadError("dtype code " + std::to_string(code) + " of the program is not one layoutprof knows");
}

c10::MemoryFormat memory_format_of(int code) {
  switch (code) {
    case 1: return c10::MemoryFormat::Contiguous;
    case 2: return c10::MemoryFormat::ChannelsLast;
    case 3: return c10::MemoryFormat::ChannelsLast3d;
    case 4: return c10::MemoryFormat::Preserve;
  }
  throw ModelLoadError("memory format code " + std::to_string(code) + " of the program is not one layoutprof knows");
}

c10::Layout layout_of(int code) {
  switch (code) {
    case 1: return c10::kSparse;    case 2: return c10::kSparseCsr; case 3: return c10::kSparseCsc;
    case 4: return c10::kSparseBsr; case 5: return c10::kSparseBsc; case 6: return c10::kMkldnn;
    case 7: return c10::kStrided;
  }
  throw ModelLoadError("layout code " + std::to_string(code) + " of the program is not one layoutprof knows");
}

}  // namespace layoutprof
