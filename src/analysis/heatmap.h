// Rows of the text heatmap: modules (at a depth) or top-level op names, in execution order.
#pragma once

#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

enum class GroupBy { module, op };

struct HeatmapRow {
  std::string label;
  int64_t ops = 0;  // op events, nested included
  int64_t noncontiguous_inputs = 0;
  int64_t implicit_copies = 0;
  int64_t explicit_copies = 0;
  int64_t copy_bytes = 0;  // all copy classes
  int64_t time_ns = 0;
  std::vector<std::string> transitions;
  std::vector<std::string> births;  // layouts born at the row's ops (causes not accepted), distinct
  int64_t dtlb_walks = 0;              // modelled, over the row's copies
  int64_t tensor_bytes = 0;            // of the row's top-level ops (derived bandwidth)
  std::vector<CounterValue> counters;  // measured, summed over the row's top-level ops
  int64_t gpu_ns = 0;       // measured: kernels the row's ops launched (GPU runs)
  int64_t copy_gpu_ns = 0;  // of which layout copies
};

// Module path cut to `depth` components; "(top)" for ops of the top module.
std::string module_at_depth(const std::string& module, int depth);

// The deepest module depth whose row count stays within max_rows (at least 1).
int auto_depth(const Report& report, size_t max_rows);

// The depth the heatmap uses when `requested` (--depth) is 0: about 40 rows.
int heatmap_depth(const Report& report, int requested);

// The row of a top-level op (every op event counts to its top-level ancestor's row).
std::string heatmap_row_label(const Report& report, const OpEvent& top_level_op, GroupBy group_by, int depth);

std::vector<HeatmapRow> heatmap_rows(const Report& report, GroupBy group_by, int depth);

// Bytes a row moved: memory-controller CAS counts x 64 where bandwidth was measured, else the
// bytes of its ops' tensors (derived).
int64_t heatmap_bandwidth_bytes(const RunInfo& run, const HeatmapRow& row);

}  // namespace layoutprof
