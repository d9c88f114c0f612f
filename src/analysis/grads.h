// Gradient layouts of a training step's parameters: autograd's gradient layout contract and
// what DistributedDataParallel's reducer compares.
#pragma once

#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// What a parameter's gradient verdict means for the user, in one line, and (size1_only: the
// case DDP warns about) the two lines DDP's reducer prints for it; empty otherwise.
std::string grad_suggestion(const ParamGrad& p);
std::vector<std::string> ddp_warning_lines(const ParamGrad& p);
// The verdict from sizes and strides (autograd's gradient layout contract).
GradVerdict grad_verdict(const ParamGrad& p);

}  // namespace layoutprof
