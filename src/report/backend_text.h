// The backend's conversions in words (analysis/backend_conversions.h), for the text report: the
// verdict's lines (what oneDNN converted inside the ops, beside PyTorch's own copies) and the
// section that lists each conversion and the ops that paid for it, at their lines.
#pragma once

#include <ostream>
#include <string>

#include "report_model/report.h"

namespace layoutprof {

// The verdict's words for a call with no implicit copy of PyTorch's: "no implicit layout copies
// in a call" only where the backend converted no activation either (or was not seen, which it
// says).
std::string no_implicit_copies_text(const Report& r);
// The verdict's lines on the backend's reorders ("  and 39 activation reorders inside ..."),
// each ending in a newline; "" when the pass saw none. `activation_said`: the verdict's first
// line named the activation reorders already (no_implicit_copies_text).
std::string backend_verdict_lines(const Report& r, bool activation_said);
// What oneDNN did in the call's mixed-format convolutions, for the verdict's mixed-format line:
// "; oneDNN read the data of 20 of them directly (no activation reorder) and reordered it in 0,
// seen in the backend pass"; "" when the pass saw none of them.
std::string mixed_seen_text(const Report& r);
// A variant's oneDNN reorders in a few words, for compare-formats and the what-if: "59 (39
// activation, 20 weight)", or "not seen (why)".
std::string backend_reorders_text(const Report& r);
// Weights re-laid out on every call at inference: what prepacks them on this run's torch, as
// measured for resnet18 when this layoutprof was made (the effect depends on the build); "" when
// the pass saw no weight reorder, or the run was a training step (the weights change each step).
std::string weight_prepack_fix(const Report& r);
// The section: each conversion (role, from -> to) with its count, bytes and oneDNN's time, then
// the `top` ops that ran the most reorders, with their module and line.
void write_backend(std::ostream& out, const Report& r, int top);

}  // namespace layoutprof
