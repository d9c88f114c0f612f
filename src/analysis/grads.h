// Gradient layouts of a training step's parameters: autograd's gradient layout contract and
// what DistributedDataParallel's reducer compares.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// What a parameter's gradient verdict means for the user, in one line, and (size1_only: the
// case DDP warns about) the two lines DDP's reducer prints for it; empty otherwise.
std::string grad_suggestion(const ParamGrad& p);
std::vector<std::string> ddp_warning_lines(const ParamGrad& p);
// The verdict from sizes and strides (autograd's gradient layout contract).
GradVerdict grad_verdict(const ParamGrad& p);
// What DDP itself printed about gradient strides in the recorded process (in process only):
// kept among run.measured as one line that starts with kDdpSeen, shown beside the verdicts.
inline constexpr std::string_view kDdpSeen = "DDP's grad-strides warning";

// Where DDP's own grad-strides warning, recorded beside the verdicts (run.measured, in
// process), contradicts them: a gradient it warned about that no size1_only verdict predicts,
// or a size1_only prediction where DDP listened and gave none. One line each; a defect of the
// verdicts' rules that the report flags itself.
std::vector<std::string> ddp_contradictions(const Report& r);

}  // namespace layoutprof
