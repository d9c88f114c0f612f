// A what-if variant's output against the baseline's (report_model/what_if.h): equal bitwise,
// close within the dtype's tolerances (torch.testing.assert_close's defaults), or differs, with
// the largest absolute and relative differences.
#pragma once

#include <ATen/core/ivalue.h>

#include "report_model/what_if.h"

namespace layoutprof {

OutputComparison compare_outputs(const c10::IValue& baseline, const c10::IValue& variant);

}  // namespace layoutprof
