// What a fix saves, measured by applying it (the what-if work): the recorded call run again as
// it is (the baseline) and with fixes applied (the variants), in interleaved rounds of plain
// calls. The statistics that judge the rounds are the analysis's (analysis/paired_rounds.h);
// the figures they give, and what each variant's own recorded call showed, live here so that
// every output reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/fix_action.h"

namespace layoutprof {

enum class Saving {
  not_judged,    // too few rounds for an interval at the corrected level
  withheld,      // the control (the baseline against itself) was not within noise
  within_noise,  // the interval holds 0
  faster,        // the interval lies below 0: a measured saving
  slower,        // the interval lies above 0: the variant costs more
};
const char* saving_name(Saving s);
Saving saving_from_name(const std::string& name);  // throws std::invalid_argument

// A variant's rounds against the baseline's (measured): medians, the median of the paired
// per-round difference and its order-statistic interval.
struct PairedRounds {
  int64_t rounds = 0;
  double level = 0;  // the confidence the interval was built at (corrected)
  double baseline_median_ns = 0, variant_median_ns = 0;
  double difference_ns = 0;              // median of variant - baseline, per round
  double low_ns = 0, high_ns = 0;        // its interval (not set when not judged)
  double coverage = 0;                   // the interval's exact coverage
  Saving saving = Saving::not_judged;
  // Relative to the baseline's median: -0.181 is 18.1% faster.
  double relative() const { return baseline_median_ns > 0 ? difference_ns / baseline_median_ns : 0; }
  double relative_low() const { return baseline_median_ns > 0 ? low_ns / baseline_median_ns : 0; }
  double relative_high() const { return baseline_median_ns > 0 ? high_ns / baseline_median_ns : 0; }
  std::string text() const;  // "measured: 12.31 -> 10.08 ms a call (-18.1%, interval -19.0..-17.2%)"
};

// What one recorded call of a variant (or of the baseline) showed: derived from its trace, exact.
struct WhatIfCounts {
  int64_t implicit_copies = 0, explicit_copies = 0;
  int64_t copy_bytes = 0;  // of both
  int64_t mixed_ops = 0;   // mixed-format ops its causes reach
  // oneDNN's activation and weight reorders in its backend pass (measured); -1 not seen (no pass,
  // or a front end that runs none)
  int64_t backend_reorders = -1;
};

enum class OutputMatch {
  not_compared,  // `why` says why (the call draws random numbers, ...)
  equal,         // bitwise
  close,         // within the dtype's tolerances (torch.testing.assert_close's)
  differs,
};
const char* output_match_name(OutputMatch m);
OutputMatch output_match_from_name(const std::string& name);  // throws std::invalid_argument

struct OutputComparison {
  OutputMatch match = OutputMatch::not_compared;
  double max_abs = 0, max_rel = 0;  // close, differs: the largest differences
  std::string why;                  // not_compared: why
  std::string text() const;         // "close (max abs 2.4e-06, max rel 1.1e-05)"
};

struct WhatIfVariant {
  std::string name;                 // "input 0 as contiguous", "model as channels_last", ...
  std::vector<FixAction> actions;   // applied together
  std::vector<int64_t> causes;      // the report's causes whose fixes these are (indices)
  std::string refused;              // not run: why ("" it ran)
  PairedRounds time;
  WhatIfCounts counts;              // its recorded call
  OutputComparison outputs;
  // The cause it fixes is still found in its recorded call (at the same birthplace, in the same
  // layout): a layoutprof defect, shown as such.
  bool cause_survives = false;
};

// One plain call of the interleaved rounds (runner/rounds.h), the timeline a trace shows: who
// made it, in which round, when it began (ns since the first round began, steady clock) and how
// long it took (measured).
struct RoundCall {
  std::string who;  // "baseline", "baseline again", or a variant's name
  int64_t round = 0;
  int64_t start_ns = 0, ns = 0;
};

struct WhatIfRun {
  bool ran = false;            // --what-if asked for it and it ran (or said why not: `why_not`)
  std::string why_not;         // asked for, nothing measured: why ("no cause with a fix to measure")
  int64_t rounds = 0;          // interleaved rounds that ran
  int64_t rounds_asked = 0;    // at most
  double budget_s = 0;         // the time budget that bounds them
  int64_t threads = 0;
  std::string device;          // "cpu", "cuda:0"
  std::vector<std::string> notes;  // what the variants' calls are not ("run eagerly", ...)
  PairedRounds control;        // the baseline against itself
  WhatIfCounts baseline;       // the baseline's recorded call
  std::vector<WhatIfVariant> variants;  // each cause's first fix, its model-wide one, all together
  std::vector<RoundCall> calls;         // the rounds' calls, in the order made
};

}  // namespace layoutprof
