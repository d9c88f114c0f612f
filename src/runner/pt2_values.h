// A node's argument planned once, as the executor is built, and made into the IValue the op's
// schema takes at each call: a constant made at planning time, or values of the graph (by
// slot) gathered into a tensor, a list or a number.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <vector>

#include "pt2/program.h"

namespace layoutprof {

struct ArgPlan {
  enum class Kind {
    Constant,        // `constant`
    Value,           // env[slots[0]]
    TensorList,      // env[slots[i]]
    OptTensorList,   // env[slots[i]], None where slots[i] < 0
    IntList,         // env[slots[i]], constants[i] where slots[i] < 0 (SymInt[])
    DoubleList,      // the same for SymFloat[]
    BoolList,        // the same for SymBool[]
    Device,          // `constant`, a device remapped to the model's
  };
  Kind kind = Kind::Constant;
  c10::IValue constant;
  std::vector<int> slots;
  std::vector<c10::IValue> constants;
  // The op takes a Tensor where the graph gives a number (`x.add_(1)`): made a wrapped-number
  // tensor, as eager PyTorch and the TorchScript interpreter make it.
  bool number_as_tensor = false;
  // The step is the value's last reader and reads it once: it is moved out of the table, not
  // copied (Kind::Value only; the executor decides once the graph is planned).
  bool take = false;
};

// `slot_of(name)` resolves a value's name (throws when it is not defined yet). Throws
// ModelLoadError naming `at` for the kinds the executor does not run.
ArgPlan plan_argument(const pt2::Argument& arg, const std::function<int(const std::string&)>& slot_of,
                      const std::string& at);
ArgPlan constant_plan(c10::IValue value);
// A constant number an op takes as a tensor, made that tensor once (eager PyTorch makes it anew
// at each call, outside the dispatcher: nothing an observer sees differs).
void prepare_constant(ArgPlan& plan);
// The IValue for one call; a device argument of the CPU becomes `device` (the model's). A
// value the plan takes is moved out of `env`.
c10::IValue materialize_other(const ArgPlan& plan, std::vector<c10::IValue>& env, const c10::Device& device);
// Inline for the plans of most arguments (a value or a constant as it is): the executor's own
// cost per op is mostly this.
inline c10::IValue materialize(const ArgPlan& plan, std::vector<c10::IValue>& env, const c10::Device& device) {
  if (!plan.number_as_tensor) {
    if (plan.kind == ArgPlan::Kind::Value) return plan.take ? std::move(env[plan.slots[0]]) : env[plan.slots[0]];
    if (plan.kind == ArgPlan::Kind::Constant) return plan.constant;
  }
  return materialize_other(plan, env, device);
}

// The schema's enum codes (schema.py) as c10's; throws ModelLoadError for a code it has none for.
c10::ScalarType scalar_type_of(int schema_code);
c10::MemoryFormat memory_format_of(int schema_code);
c10::Layout layout_of(int schema_code);

}  // namespace layoutprof
