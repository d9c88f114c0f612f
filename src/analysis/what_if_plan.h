// The variants a what-if measures (report_model/what_if.h), chosen from a report's causes: each
// of the top causes' first fix alone, its operand swaps (and the swaps refused, by name), its
// model-wide alternative, and all the first fixes together. Savings are never added up: fixes
// interact, and can move a copy elsewhere. One rule for every front end: the command's
// (runner/what_if.h) and the Python package's (layoutprof._native's Report.what_if_plans).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

struct VariantPlan {
  std::string name;                // "input 0 as contiguous", "model as channels_last + ..."
  std::vector<FixAction> actions;  // applied together
  std::vector<int64_t> causes;     // the report's causes whose fixes they are (indices)
};

// The plans for the first `top` causes not accepted that have actions, in the causes' order.
std::vector<VariantPlan> what_if_plans(const Report& r, int top);
// A fix's name in the reports ("contiguous_at aten::permute at model.py:24", "input 0 as
// contiguous", "model as channels_last", "conv.weight as contiguous").
std::string fix_name(const FixAction& a);

}  // namespace layoutprof
