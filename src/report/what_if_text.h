// The what-if's figures in words (report_model/what_if.h), for the text report and the HTML
// page: the run in one line, each variant in one line under the cause whose fix it applies, the
// causes ranked by what their fixes measured, and the verdict's line naming the best one.
#pragma once

#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// "what-if: 6 rounds (at most 20, 60 s budget) on cpu, 4 threads; control within noise (...)".
std::string what_if_run_text(const WhatIfRun& w);
// A variant in one line: its name, the time it measured, its recorded call against the
// baseline's (copies, bytes, mixed-format ops), its outputs; or why it was not applied.
std::string what_if_variant_text(const WhatIfRun& w, const WhatIfVariant& v);
// What the reader must know beside it: a line fix layoutprof applied for the measurement only,
// a cause that survived the fix (a defect of layoutprof's). One string each.
std::vector<std::string> what_if_variant_notes(const WhatIfVariant& v);
// The variants that apply cause `cause`'s fixes alone, in the run's order.
std::vector<const WhatIfVariant*> cause_variants(const WhatIfRun& w, int64_t cause);
// The variant that measured the largest saving (its interval below 0), or null.
const WhatIfVariant* best_measured(const WhatIfRun& w);
// The causes (indices into r.causes) in the order to show them: those whose fixes measured a
// saving first, the largest first, then the others as the analysis ranked them.
std::vector<size_t> causes_by_measured_saving(const Report& r);
// The verdict's first line with a what-if: the best measured fix and what it saves, or that
// none measured a saving ("" when no what-if ran).
std::string what_if_verdict_text(const Report& r);

}  // namespace layoutprof
