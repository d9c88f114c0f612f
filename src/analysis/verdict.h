// What a report's reader acts on first: how many layout copies a call makes and what they
// cost, the causes behind them grouped (one per rule and place kind, each with one fix), and
// the split points that share a cause and a suggestion folded into one entry. Derived from a
// Report when it is rendered (nothing here is written into the JSON), so that a report saved
// by an older layoutprof shows them too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// Why a layout copy happened, by the first rule that fits (group_copy_causes):
enum class CauseKind {
  explicit_request,  // the model's own contiguous()/clone()/to() of a non-dense tensor
  format_mismatch,   // a dense tensor converted to another memory format (NCHW <-> channels_last)
                     // to meet the op's other operands: convolution weights vs activations
  view_copy,         // an op that needs dense data copies a view another op made (reshape
                     // after transpose), or one it made inside itself
  input_copy,        // an op copies a non-dense model input
  unknown_origin,    // no recorded op or input made the source non-dense
};
const char* cause_kind_name(CauseKind k);

struct CopyCause {
  CauseKind kind = CauseKind::unknown_origin;
  CopyClass cls = CopyClass::implicit_layout;
  // format_mismatch: true when the data flowing through the op (its main input) was
  // converted, false when another operand (a convolution's weight) was.
  bool data_converted = false;
  // view_copy: the culprit copied a view it made of its own dense inputs (a library op's own copy)
  bool library = false;
  std::string origin;     // the top-level op that made the non-dense source ("" none, or the culprit)
  int origin_input = -1;  // input_copy: that model input
  std::string from, to;   // layout labels of the first copy's source and destination
  int64_t copies = 0;
  int64_t bytes = 0;
  int64_t time_ns = 0;  // measured: the copies' own aten::copy_ time (0 when not recorded)
  std::vector<std::string> readers;  // the culprits' op names, distinct, first seen first
  std::vector<std::string> modules;  // the culprits' modules ("" the top module), distinct
  std::vector<std::string> sources;  // the culprits' source lines (file:line), distinct
  std::vector<std::string> origin_sources;  // where the origins were called, distinct
  std::vector<int64_t> copy_ops;     // the aten::copy_ events
  std::string what;  // the cause, in one sentence
  std::string fix;   // the one fix
};

// The layout copies (implicit and explicit) of a report grouped by cause, most bytes first.
// Works on a report read whole and on one read for the gate (top-level ops only) alike, but
// for the copies' times (0 there): origins are named by the top-level op around them, found
// through the split points, which count each copy at its culprit and at its origin.
std::vector<CopyCause> group_copy_causes(const Report& r);

// Copies and bytes of one call, and the time the implicit ones took.
struct Verdict {
  PerCopyClass copies{};  // Summary's
  PerCopyClass bytes{};
  int64_t implicit_ns = 0;     // measured: the implicit copies' own aten::copy_ time
  int64_t wall_ns = 0;         // measured: the forward (or training step)
  bool medians = false;        // both are medians over run.calls_recorded calls
  int64_t copy_gpu_ns = -1;    // measured (CUPTI): layout-copy kernels; -1 when no GPU was traced
  int64_t gpu_ns = 0;
  std::vector<CopyCause> causes;
  // Mixed-format ops (mixed_formats.h) over the causes not accepted, and the forward
  // convolutions of the call with those among them whose data and weights differ in format.
  int64_t mixed_ops = 0, mixed_without_copy = 0;
  int64_t convolutions = 0, mixed_convolutions = 0;
};
Verdict verdict_of(const Report& r);
// "12.3%" of total, or "" when total is not positive.
std::string share_text(int64_t part, int64_t total);

// Split points that share their kinds, layouts and suggestion, most bytes first.
struct SplitGroup {
  std::vector<size_t> points;  // indexes in Report::split_points, rank order
  int64_t copies = 0;
  int64_t copy_bytes = 0;
};
std::vector<SplitGroup> group_split_points(const Report& r);

// "a, b, c and 4 more": the first `shown` items of a list.
std::string list_text(const std::vector<std::string>& items, size_t shown);

}  // namespace layoutprof
