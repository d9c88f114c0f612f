// The one model every output reads: derived from a Trace by analysis, serialised as JSON.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "report_model/backend.h"
#include "report_model/compiled.h"
#include "report_model/dtlb_estimate.h"
#include "report_model/hazard.h"
#include "report_model/layout_cause.h"
#include "report_model/what_if.h"
#include "core/trace.h"

namespace layoutprof {

enum class CopyClass { implicit_layout, explicit_layout, broadcast, dtype_device, same_layout };
constexpr int kCopyClassCount = 5;
const char* copy_class_name(CopyClass c);
CopyClass copy_class_from_name(const std::string& name);  // throws std::invalid_argument
inline bool is_layout_copy(CopyClass c) {
  return c == CopyClass::implicit_layout || c == CopyClass::explicit_layout;
}

// Counts or bytes per copy class, indexed by CopyClass.
using PerCopyClass = std::array<int64_t, kCopyClassCount>;

struct CopyRecord {
  int64_t op = 0;        // the aten::copy_ event
  int64_t culprit = 0;   // outermost op on the stack when the copy happened
  int64_t origin = -1;   // op that produced the non-dense source (layout copies), -1 if none
  int origin_input = -1;  // the source is this model input (layout copies), -1 if not
  CopyClass cls = CopyClass::same_layout;
  int64_t bytes = 0;  // destination numel x element size
  TensorInfo src;
  TensorInfo dst;
  DtlbEstimate dtlb;                  // modelled
  CompactVector<CounterValue> counters;  // over the aten::copy_: counted, or sampled (RunInfo)
  // Sampled events with data addresses (run.counters' data_address): per measured counter,
  // the copy's samples whose address fell in its source and in its destination; empty when
  // no counter carried addresses.
  std::vector<uint64_t> src_samples, dst_samples;
  int64_t gpu_ns = -1;                 // measured: the copy's kernels (-1: no GPU traced)
};

struct SplitPoint {
  int64_t op = 0;  // a top-level op
  // Interned and compact: a loop makes the same split point thousands of times.
  CompactVector<Str> kinds;  // layout_change | layout_copy | mixed_formats
  Str before;  // layout label of the data flowing in
  Str after;   // layout label of the data flowing out
  int64_t copies = 0;  // layout copies this split point leads to (its own and downstream)
  int64_t copy_bytes = 0;
  CompactVector<int64_t> copy_ops;  // the aten::copy_ events counted above
  Str suggestion;
};

struct ModuleStats {
  std::string module;
  int64_t ops = 0;  // all op events, nested included
  int64_t top_level_ops = 0;
  int64_t noncontiguous_inputs = 0;  // tensor inputs of top-level ops not in the contiguous class
  PerCopyClass copies{};
  PerCopyClass copy_bytes{};
  int64_t time_ns = 0;  // sum of top-level op durations (measured, median over calls)
  int64_t split_points = 0;
  std::vector<std::string> transitions;  // layout labels of the data as it flows, deduplicated
  int64_t dtlb_walks = 0;  // modelled, over the module's copies
  int64_t tensor_bytes = 0;  // bytes of the top-level ops' tensors: derived bandwidth's numerator
  std::vector<CounterValue> counters;  // measured, summed over the top-level ops
  int64_t gpu_ns = 0;       // measured: kernels launched by the module's ops (GPU runs)
  int64_t copy_gpu_ns = 0;  // of which layout-copy kernels
  // Derived: the module's mixed-format ops (analysis/mixed_formats.h), and those under which no
  // conversion copy was recorded (weights dense in both formats, or a backend's own reorder).
  int64_t mixed_ops = 0, mixed_without_copy = 0;
};

// What the GPU did in one call (measured through CUPTI).
struct GpuSummary {
  bool traced = false;
  int64_t gpu_ns = 0;
  int64_t copy_gpu_ns = 0;  // layout copies' kernels
  int64_t kernels = 0;      // attributed activity records
  int64_t unattributed = 0;
  int64_t unattributed_ns = 0;
  uint64_t dropped = 0;
};

struct Summary {
  int64_t ops = 0;
  int64_t top_level_ops = 0;
  PerCopyClass copies{};
  PerCopyClass copy_bytes{};
  int64_t split_points = 0;
  int64_t wall_ns = 0;  // median forward() time over the recorded calls (measured)
  DtlbEstimate dtlb;     // modelled, summed over every copy (sampled: any copy was)
  int64_t tensor_bytes = 0;
  std::vector<CounterValue> counters;  // measured, summed over the top-level ops
  GpuSummary gpu;
  // --backward: parameters per gradient verdict (match, size1_only, layout_mismatch, no_grad).
  std::array<int64_t, 4> grad_layout{};
};

struct Report {
  RunInfo run;
  Summary summary;
  OpList ops;  // one recorded call
  // Read for the gate (OpDetail::top_level): `ops` holds the top-level op events only, at
  // positions that are not their ids, without tensors; nothing renders such a report.
  bool top_level_only = false;
  std::shared_ptr<TensorStore> tensors = std::make_shared<TensorStore>();  // the ops' tensors
  std::vector<CopyRecord> copies;
  std::vector<SplitPoint> split_points;  // ranked: most bytes first
  std::vector<ModuleStats> modules;      // execution order of first appearance
  // --backward: the first op event of the backward pass (-1: none), and every parameter's
  // gradient layout, mismatches first.
  int64_t backward_from = -1;
  std::vector<ParamGrad> parameters;
  // Sampled events with data addresses: where the shown call's samples fell, per op tensor.
  std::vector<TensorSamples> tensor_samples;
  // Birthplaces of the layouts that copies, mixed-format ops and gradients paid for, most
  // copied bytes first (analysis/birthplace.h). causes_in_file is false for a report read from
  // a JSON written before layoutprof traced them: read whole, its causes are derived on reading;
  // read for the gate (top-level ops only), it has none, and the gate says so.
  std::vector<LayoutCause> causes;
  bool causes_in_file = true;
  // Layouts that change results (analysis/hazards.h), in the order the shown call met them;
  // hazards_in_file is false for a report written before layoutprof looked for them (the gate
  // compares it as none, and says so).
  std::vector<Hazard> hazards;
  bool hazards_in_file = true;
  // torch.compile's layout decisions and recompiles over the run (in process; compiled.h).
  CompiledRun compiled;
  // --what-if: each cause's fixes applied and measured (what_if.h); `ran` false when not asked.
  WhatIfRun what_if;
  // The backend pass: what oneDNN ran inside each op, its reorders among them (backend.h).
  BackendRun backend;
};

// The writers' guard: a report read for the gate only (top_level_only) cannot be rendered.
inline void require_whole_report(const Report& r) {
  if (r.top_level_only) throw std::logic_error("a report read for the gate (top-level ops only) was rendered");
}

}  // namespace layoutprof
