// A what-if variant's output against the baseline's (report_model/what_if.h): equal bitwise,
// close within the dtype's tolerances (torch.testing.assert_close's defaults) widened by the
// baseline's own call-to-call spread (`spread`: the largest absolute difference between two of
// its calls' outputs), or differs, with the largest absolute and relative differences.
#pragma once

#include <ATen/core/ivalue.h>

#include "report_model/what_if.h"

namespace layoutprof {

OutputComparison compare_outputs(const c10::IValue& baseline, const c10::IValue& variant, double spread = 0);
// The largest absolute difference between two outputs of the same shapes (0 where equal).
double largest_difference(const c10::IValue& a, const c10::IValue& b);

}  // namespace layoutprof
