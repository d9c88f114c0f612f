// Gradient layouts of a training step's parameters: autograd's gradient layout contract and
// what DistributedDataParallel's reducer compares.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// The verdict from sizes and strides (autograd's gradient layout contract).
GradVerdict grad_verdict(const ParamGrad& p);

// DistributedDataParallel's reducer views each parameter's slot in its bucket with the
// parameter's strides when the buckets were built (contiguous where those were not dense), and
// warns once per process where the .grad AccumulateGrad left has other strides (all of them
// compared). bucket_view_strides: that view (no DDP seen: as DDP built now would make it);
// stored_grad_strides: that .grad (the prior .grad where there was one; the gradient itself
// where it obeys the contract; else the parameter's layout, or contiguous).
std::vector<int64_t> bucket_view_strides(const ParamGrad& p);
std::vector<int64_t> stored_grad_strides(const ParamGrad& p);
bool ddp_warns(const ParamGrad& p);
// AccumulateGrad warns once per process where it adds a gradient into a prior .grad that does
// not obey the layout contract with the parameter as it is now (dims of size 1 ignored).
bool accumulate_grad_warns(const ParamGrad& p);

// What a parameter's gradient layout means for the user, in one line, and where DDP warns
// (ddp_warns), the two lines its reducer prints; empty otherwise.
std::string grad_suggestion(const ParamGrad& p);
std::vector<std::string> ddp_warning_lines(const ParamGrad& p);

// What DDP and AccumulateGrad themselves printed about gradient strides in the recorded process
// (in process only): kept among run.measured as lines that start with these, beside the verdicts.
inline constexpr std::string_view kDdpSeen = "DDP's grad-strides warning";
inline constexpr std::string_view kAccumulateGradSeen = "AccumulateGrad's gradient-layout warning";

// Where those warnings contradict the predictions for the shown step: a gradient one warned
// about in that step that no prediction names, or a prediction where the warning never came (or
// came later). One line each; a defect of the rules that the report flags itself.
std::vector<std::string> ddp_contradictions(const Report& r);

}  // namespace layoutprof
