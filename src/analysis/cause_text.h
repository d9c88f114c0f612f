// The words of a cause (report_model/layout_cause.h): where its layout was born, what it
// costs downstream, and the fixes, at the birthplace first. Every reporter reads these, so
// that the text, the HTML page and the JSON say the same thing.
#pragma once

#include <string>
#include <vector>

#include "analysis/mixed_formats.h"
#include "report_model/report.h"

namespace layoutprof {

// At the birthplace (.contiguous() there, an operand swap, the input where it is made), then
// the model-wide alternative where the cause is one of memory formats. Never "avoid an op".
std::vector<std::string> cause_fixes(const LayoutCause& c, const Report& r, MemoryFormat model_format);
// The same fixes as actions (report_model/fix_action.h): the birthplace's, the operand swaps,
// the model-wide conversion; what no front end can apply is kind none, with why.
std::vector<FixAction> cause_actions(const LayoutCause& c, const Report& r, MemoryFormat model_format);

// The autograd function a backward-pass record runs ("TransposeBackward0" for
// "autograd::engine::evaluate_function: TransposeBackward0"), "" for any other op.
std::string backward_function(const std::string& op_name);

// "channels_last born at aten::reshape in attn (model.py:24)".
std::string birthplace_text(const LayoutCause& c);
// "reaches conv1, conv2: 4 implicit copies, 0.02 MB, 0.1 ms; 2 mixed-format ops, 1 without a
// recorded copy; 1 gradient that DDP or AccumulateGrad must convert (conv1.weight)".
std::string cause_cost_text(const LayoutCause& c);

}  // namespace layoutprof
