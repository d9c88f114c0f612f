// The backend's conversions: the backend pass's primitives (core/backend_log.h) charged to the
// shown call's ops, each reorder given its role, and the totals every output states. A count of
// layout copies that leaves these out is not the count the user pays for: on the CPU, oneDNN
// converts an NCHW activation into its blocked format before a convolution and back after it,
// and a weight into its blocked format on every eager call, with no aten::copy_ to be seen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// The report's BackendRun from the pass's log: primitives matched to the shown call's top-level
// ops by their order on forward()'s thread (names checked), reorders' roles by dims.
BackendRun attribute_backend(const BackendLog& log, const OpList& ops);

// A convolution's problem (mb8_g2ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1) as the dims
// of its source, weights and destination; empty vectors when it is not one.
struct ConvDims {
  std::vector<int64_t> src, weights, dst;
  std::vector<int64_t> weights_swapped;  // a deconvolution's weights may be [ic, oc, ...]
};
ConvDims conv_dims(const std::string& problem);
std::vector<int64_t> reorder_dims(const std::string& problem);  // 8x64x56x56; empty otherwise

// Totals of one role: reorders, their bytes and oneDNN's time.
struct ReorderTotals {
  int64_t count = 0;
  int64_t bytes = 0;
  double ms = 0;
};
// One conversion (from -> to) of one role.
struct ConversionRow {
  ReorderRole role = ReorderRole::other;
  std::string from, to;
  ReorderTotals totals;
};
struct BackendSummary {
  ReorderTotals activation, weight, other;
  int64_t unattributed = 0;  // primitives charged to no op
  int64_t primitives = 0;
  double primitives_ms = 0;  // every primitive's time by oneDNN's clock
  std::vector<ConversionRow> conversions;  // most reorders first
};
BackendSummary backend_summary(const BackendRun& b);

// What oneDNN did in the convolutions among some top-level ops (a cause's payers): those it ran
// on their data's own format, with no activation reorder (read directly), and those whose data
// it reordered; seen in the backend pass (nothing when it did not run).
struct SeenConvolutions {
  int64_t direct = 0, reordered = 0;
  int64_t activation_reorders = 0;
  bool seen() const { return direct + reordered > 0; }
};
SeenConvolutions seen_in_ops(const BackendRun& b, const std::vector<int64_t>& ops);

// The GPU's side: each op whose kernels (OpEvent::kernels, CUPTI's names) include cuDNN's layout
// conversion kernels (analysis/kernel_names.h), and the layouts its convolution kernels' names say.
struct GpuLayoutOp {
  int64_t op = -1;
  std::vector<std::string> conversions;  // the conversion kernels' unqualified names, distinct
  int64_t gpu_ns = 0;                    // measured: all the op's kernels (CUPTI's records are per op)
};
struct GpuLayoutKernels {
  std::vector<GpuLayoutOp> ops;  // execution order
  int64_t nhwc = 0, nchw = 0;    // convolutions' kernels whose names say the layout they compute in
  std::vector<std::string> unknown;  // convolutions' kernels whose names say none (distinct, first 20)
};
GpuLayoutKernels gpu_layout_kernels(const OpList& ops);

// "abcd (NCHW)", "acdb (NHWC)", "aBcd16b (blocked)": a format tag with what PyTorch calls it.
std::string onednn_format_text(const std::string& tag);

}  // namespace layoutprof
