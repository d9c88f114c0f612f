// compare-formats: one model profiled in three memory-format variants, and the verdict over
// them: the model-wide case of the what-if. The variants' plain calls are timed in the
// what-if's interleaved rounds (runner/rounds.h: as_given, each variant, as_given again) and
// judged by its statistics (analysis/paired_rounds.h): each pair by the interval of its
// per-round difference, as_given against itself as the control. Plain C++ over Reports (no
// LibTorch): the runner makes the reports, this compares them, and the writers
// (format_comparison_report.h: text, JSON, HTML) print what it found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/report.h"
#include "report_model/what_if.h"

namespace layoutprof {

// The variants, in the order they run and are shown. as_given: the model and inputs as they
// are; channels_last and contiguous: ProfileConfig::convert_to.
inline const std::vector<std::string>& format_variant_names() {
  static const std::vector<std::string> names = {"as_given", "channels_last", "contiguous"};
  return names;
}

// The spread of a variant's plain calls (RunInfo::plain_call_ns, measured), shown beside the
// verdict. Quartiles are interpolated linearly between the sorted calls (numpy's default):
// q = x[h] with h = (n - 1) * p, between its two neighbours.
struct TimeSpread {
  int64_t calls = 0;  // 0: no plain calls (the other fields are 0)
  int64_t min_ns = 0, q1_ns = 0, median_ns = 0, q3_ns = 0, max_ns = 0;
  int64_t iqr_ns() const { return q3_ns - q1_ns; }
};
TimeSpread time_spread(std::vector<int64_t> ns);

// One variant's run: its whole profile (warm-up and recorded calls, analysed) and the spread
// of its plain calls.
struct FormatVariant {
  std::string name;      // as_given | channels_last | contiguous
  bool ran = false;      // false: not run; `skipped` says why (an interrupt, a refused input)
  std::string skipped;
  Report report;         // report.run.status: ok, failed (the model raised), interrupted
  TimeSpread time;       // of report.run.plain_call_ns (compare_formats() fills it)
  bool ok() const { return ran && report.run.status == RunStatus::ok; }
  // It converted nothing (no parameter, buffer or input was laid out anew): it ran the very
  // tensors as_given ran (as_given itself too).
  bool same_as_given() const;
};

// A variant's copies by where they happen: identical copies (same class, culprit op, module,
// source line and layouts) in one group, with their count and bytes.
struct CopyGroup {
  CopyClass cls = CopyClass::same_layout;
  std::string op;      // the culprit: the top-level op the model's code called
  std::string module;  // the culprit's module path ("" for the top module)
  std::string source;  // file:line of the culprit
  std::string source_text;
  std::string src_layout, dst_layout;  // layout labels of the copy's source and destination
  int64_t count = 0;
  int64_t bytes = 0;
  // What makes two copies identical (everything but count and bytes).
  std::string key() const;
};
// In order of each group's first copy in the report.
std::vector<CopyGroup> copy_groups(const Report& report);

// A group whose count or bytes differ between as_given and a variant.
struct CopyChange {
  CopyGroup group;  // the variant's (for a group it avoids: as_given's)
  int64_t count_before = 0, count_after = 0;
  int64_t bytes_before = 0, bytes_after = 0;
};

// A variant's copies against as_given's.
struct CopyDelta {
  std::string variant;
  std::vector<CopyChange> added;    // more such copies than as_given (new groups included)
  std::vector<CopyChange> avoided;  // fewer (groups gone included)
  std::vector<CopyChange> resized;  // as many, of other bytes (other shapes)
  int64_t added_bytes() const;      // bytes_after - bytes_before over `added`
  int64_t avoided_bytes() const;    // bytes_before - bytes_after over `avoided`
};
CopyDelta copy_delta(const Report& as_given, const Report& variant, const std::string& variant_name);

// A variant's plain-call time against the fastest variant's, paired round by round.
struct TimeAgainstFastest {
  std::string variant;
  double ratio = 0;            // its median over the fastest's
  int64_t difference_ns = 0;   // its median minus the fastest's
  PairedRounds rounds;         // the fastest as the baseline, this variant as the variant
  bool beyond_noise = false;   // rounds.saving is slower: the interval lies above 0
  std::string why;             // the rounds' reading, in words
};

struct FormatVerdict {
  // The timed variant with the lowest median plain call (the first in variant order on a
  // tie); empty when no variant was timed.
  std::string fastest;
  // The fastest is beyond noise against every other timed variant that did not run the same
  // tensors as it, and the control held. False with an empty `against` (one timed variant:
  // nothing to be faster than).
  bool clear = false;
  std::vector<TimeAgainstFastest> against;  // every other timed variant, fastest first
  // Variants left out of the timing verdict, each with why: "channels_last: could not run:
  // RuntimeError: ...", "contiguous: no plain calls".
  std::vector<std::string> not_timed;
  // The control: as_given's first call of each round against its second. Where its interval
  // excludes 0 the rounds are noisier than the intervals say: control_failed, and no variant
  // is called fastest. `control` says how it came out ("" when as_given was not timed).
  PairedRounds control_rounds;
  std::string control;
  bool control_failed = false;
  // channels_last's and contiguous's copies against as_given's (when as_given and that
  // variant both ran ok).
  std::vector<CopyDelta> copies;
  std::string summary;  // the verdict in one line
};

// A variant's copies, bytes and split points in one row of modules (the heatmap's rows).
struct FormatRow {
  std::string label;          // module at the comparison's depth, "(top)", or "(total)"
  int64_t implicit_copies = 0;
  int64_t copy_bytes = 0;     // every copy class
  int64_t layout_copy_bytes = 0;  // implicit_layout and explicit_layout
  int64_t split_points = 0;
};

struct FormatComparison {
  std::string model;
  std::vector<FormatVariant> variants;  // format_variant_names() order
  // as_given's second call of each round (its first are its report's plain_call_ns): the control.
  std::vector<int64_t> given_again_ns;
  int depth = 1;  // module depth of the rows: auto_depth() of as_given's report (the heatmap's)
  std::vector<std::string> labels;  // the row labels: every variant's modules, in order of first appearance
  std::vector<std::vector<FormatRow>> rows;  // per variant, one per label, then its total
  FormatVerdict verdict;
};

// A variant's rows at `depth`, one per label (rows a variant has no op in are zero), then the
// total row (the summary's figures).
std::vector<FormatRow> format_rows(const Report& report, int depth, const std::vector<std::string>& labels);

// Each variant's plain_call_ns hold one call per round, round i of each timed in the same round
// as round i of the others and of `given_again_ns`.
FormatVerdict format_verdict(const std::vector<FormatVariant>& variants, const std::vector<int64_t>& given_again_ns);

// Fills each variant's time spread, the rows and the verdict. `depth` 0: the heatmap's
// automatic depth for as_given's report (about 40 rows).
FormatComparison compare_formats(std::vector<FormatVariant> variants, std::vector<int64_t> given_again_ns,
                                 int depth = 0);

}  // namespace layoutprof
