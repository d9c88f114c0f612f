// The CI gate: compares two reports on their deterministic figures (copies and bytes per
// class, split points, modelled DTLB walks; per module and in total). Timings and counters
// are shown, and gate only when asked. Plain C++ over Report: no LibTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report_model/report.h"
#include "analysis/verdict.h"

namespace layoutprof {

struct GateOptions {
  int64_t max_new_implicit_copies = 0;  // per module and in total, summed over ops: a copy that
                                        // moves to another op counts as new
  double max_copy_bytes_increase = 0.05;  // fraction, per module and per copy class
  int64_t max_new_copy_bytes = 0;         // bytes a module or class may gain from zero (or beyond the fraction)
  int64_t max_new_split_points = 0;
  // --backward reports: parameters whose gradient became size1_only or layout_mismatch (by
  // name, against the baseline's verdict for the same parameter).
  int64_t max_new_grad_mismatches = 0;
  // Causes: birthplaces (analysis/birthplace.h) the baseline did not have, not accepted ones.
  int64_t max_new_birthplaces = 0;
  // Hazards (analysis/hazards.h) the baseline did not have: aliased and lost writes, failed
  // views, refused writes, parameters or buffers not dense; "could not tell" and accepted ones aside.
  int64_t max_new_hazards = 0;
  // torch.compile recompiles an input's layout caused (report_model/compiled.h) that the
  // baseline did not have, by function, tensor and guard kind (in-process reports).
  int64_t max_new_recompiles = 0;
  // A fix the new report's what-if measured (report_model/what_if.h) for a cause not accepted,
  // whose interval's bound nearest 0 saves at least this fraction of a call; off by default.
  std::optional<double> max_measured_saving;
  // The backend pass's reorders a call (activation and weight, analysis/backend_conversions.h):
  // how many the new report may have beyond the baseline's, and how much their bytes may grow
  // (a fraction); off by default. A report whose pass did not run fails them, saying why.
  std::optional<int64_t> max_new_backend_reorders;
  std::optional<double> max_backend_bytes_increase;
  double max_dtlb_increase = 0.05;        // fraction of modelled walks
  std::optional<double> gate_time;        // fraction of forward() wall time; off by default
  std::optional<double> gate_counters;    // fraction of each measured counter; off by default
};

// "5%" or "0.05" -> 0.05. Throws UsageError naming the option.
double parse_fraction(const std::string& option, const std::string& text);

// One rule evaluated on one scope: a JUnit test case, a line of the verdict.
struct GateCheck {
  std::string scope;  // module path, "(top)", or "total"
  std::string rule;   // implicit_layout copies, copy bytes, split points, DTLB walks, ...
  bool passed = true;
  std::string before, after;
  std::string detail;  // what changed where: op, source line, new split point
};

// One row of the diff table.
struct ModuleDiff {
  std::string module;
  bool in_base = false, in_new = false;
  int64_t implicit[2] = {0, 0};
  int64_t explicit_copies[2] = {0, 0};
  int64_t copy_bytes[2] = {0, 0};
  int64_t split_points[2] = {0, 0};
  int64_t dtlb_walks[2] = {0, 0};
  int64_t time_ns[2] = {0, 0};
};

struct Comparison {
  std::string base_name, new_name;
  std::vector<GateCheck> checks;
  std::vector<ModuleDiff> modules;  // execution order of the new report, then removed ones
  std::vector<std::string> notes;   // improvements and what was shown but not gated
  // Each report's layout copies grouped by cause (verdict.h): what the comparison's text leads
  // with after its verdict, baseline → new.
  std::vector<CopyCause> base_causes, new_causes;
  // The new report's causes and hazards at a place the baseline's were not (what the
  // birthplaces and hazards checks count), for the outputs that point at lines (SARIF, GitHub
  // annotations); accepted and could-not-tell ones aside.
  std::vector<LayoutCause> fresh_causes;
  std::vector<Hazard> fresh_hazards;
  std::string model;  // the new report's model file
  bool regressed() const;
  bool failed(const std::string& rule) const;  // a check of that rule failed
  int regressions() const;
};

// Throws UsageError when the reports cannot be compared: other inputs (shapes, dtypes,
// formats) or devices. The model file may differ: that is what a CI run checks.
void check_comparable(const Report& base, const Report& now);

// What makes a cause's birthplace, or a hazard, the same in two reports: kept apart from its
// line number (an edit above it moves it). A birthplace: its kind, layout, file, op and code,
// or the model input; a hazard: its kind, file, op and code, and the tensor of a parameter or
// buffer.
std::string birthplace_key(const LayoutCause& k);
std::string hazard_gate_key(const Hazard& h);

Comparison compare_reports(const Report& base, const Report& now, const GateOptions& options);

// Pairs the top-level ops of two reports: by module path, then by op sequence within each
// module (longest common subsequence), so that an inserted op does not shift the rest.
// Returns, per op of now.ops (by position), the position of its match in base.ops, or -1
// (positions are ids in a report read whole).
std::vector<int64_t> align_top_level_ops(const Report& base, const Report& now);

// Its reporters: comparison_text.h, reporter.h.

}  // namespace layoutprof
