// What a torch.export graph computes outside the dispatcher on sizes: the Python functions
// export writes for SymInt, SymFloat and SymBool arithmetic (`_operator.mul`, `torch.sym_max`,
// `math.ceil`, ...), with Python's semantics, and the size queries (`aten.sym_size.int`, ...)
// that are attribute reads in eager PyTorch. Eager PyTorch never dispatches either, so the
// executor evaluates them itself, unrecorded.
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace layoutprof {

using SymFn = std::function<c10::IValue(const std::vector<c10::IValue>&)>;

// By the node's target ("_operator.add", "torch.ops.aten.sym_size.int").
const std::map<std::string, SymFn>& sym_functions();

}  // namespace layoutprof
