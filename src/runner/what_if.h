// --what-if on the command: the run's top causes' fixes (analysis/what_if_plan.h) applied to
// fresh loads of the model, each variant recorded once (its copies, bytes and mixed-format ops:
// derived, exact), then timed against the baseline in interleaved rounds of plain calls (the
// baseline, each variant, the baseline again) and judged (analysis/paired_rounds.h); each
// variant's output compared with the baseline's.
#pragma once

#include "report_model/report.h"
#include "runner/runner.h"

namespace layoutprof {

struct WhatIfOptions {
  int top = 3;            // causes whose fixes are measured
  double budget_s = 60;   // the rounds stop when they have taken this long
  int rounds = 30;        // at most
};

// `config`: the run's own (its model, inputs, threads, device, training step); `report`: its
// analysis, whose causes name the fixes. Refused fixes (a TorchScript archive's lines, a
// tensor the model has not) are listed with why; a signal stops the rounds where they are.
WhatIfRun measure_fixes(const ProfileConfig& config, const Report& report, const WhatIfOptions& options,
                        const ProgressFn& progress);

}  // namespace layoutprof
