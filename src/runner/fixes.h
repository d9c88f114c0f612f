// A what-if variant's fixes (ProfileConfig::fixes, report_model/fix_action.h) applied to a
// loaded model and its inputs: what runner/what_if.h measures against the model as it is.
#pragma once

#include <ATen/core/ivalue.h>

#include <vector>

#include "core/trace.h"
#include "report_model/fix_action.h"

namespace layoutprof {

class Model;

// convert_model (the parameters and buffers, as model.to(memory_format=...) lays them out),
// dense_parameter (that tensor, in place), contiguous_at and swap_operands (Model::fix_line).
// Throws FixRefused (runner.h) with why for one it cannot apply: a tensor the model has not, a
// line it cannot change, an action of kind none.
void apply_model_fixes(Model& model, const std::vector<FixAction>& fixes, Conversion& done);
// feed_input: that input laid out in the format, its values kept.
void apply_input_fixes(std::vector<c10::IValue>& inputs, const std::vector<FixAction>& fixes);

}  // namespace layoutprof
