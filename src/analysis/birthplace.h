// Causes, not only copies: every layout copy, mixed-format op, failed view and gradient that
// comes back in another layout is followed back through the recorded data flow to the op where
// its layout was born (or the model input it arrived with), and grouped by that birthplace.
//
// Which ops carry a layout is read from each op's recorded input and output strides, not from a
// list of op names: an op carries layout L when its output has L and one of its inputs of the
// same rank had L (for a convolution the weight counts, as PyTorch lets either suggest the
// format); its output is born with L when none of them had it. Backward ops are charged to the
// birthplace of their forward op's data. Runs over the recorded trace after the calls: the
// recorder does no work for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// The causes of a report whose copies, parameters and backward attribution are derived
// (analyze() calls it), most bytes copied first. `top`: each op's top-level ancestor.
std::vector<LayoutCause> find_causes(const Report& r, const std::vector<int64_t>& top);

// The cause whose payers include op `op` (a failed view, an op compiled code's stride check
// refused), or nullptr.
const LayoutCause* cause_paid_by(const Report& r, int64_t op);

// True when `accepted` ("file.py:24", as --accept takes it) names the place `where` (a full
// path's tail counts: "model.py:24" names "/home/u/model.py:24").
bool accept_matches(const std::string& accepted, const std::string& where);

}  // namespace layoutprof
