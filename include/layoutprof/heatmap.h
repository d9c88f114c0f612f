// Rows of the text heatmap: modules (at a depth) or top-level op names, in execution order.
#pragma once

#include <string>
#include <vector>

#include "layoutprof/report.h"

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

// The row an op event belongs to: its top-level ancestor's module at `depth` (its name when
// grouped by op), " (backward)" added in the backward pass. `top`: top_level_ancestors(ops).
std::string heatmap_label(const Report& report, const std::vector<int64_t>& top, int64_t id, GroupBy group_by,
                          int depth);

std::vector<HeatmapRow> heatmap_rows(const Report& report, GroupBy group_by, int depth);

}  // namespace layoutprof
