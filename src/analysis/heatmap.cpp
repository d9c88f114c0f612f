#include "analysis/heatmap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/analysis.h"

namespace layoutprof {

std::string module_at_depth(const std::string& module, int depth) {
  if (module.empty()) return "(top)";
  size_t pos = 0;
  for (int d = 0; d < depth; ++d) {
    pos = module.find('.', pos);
    if (pos == std::string::npos) return module;
    if (d + 1 < depth) ++pos;
  }
  return module.substr(0, pos);
}

namespace {

int module_depth(const std::string& module) {
  if (module.empty()) return 0;
  int depth = 1;
  for (char c : module) depth += c == '.';
  return depth;
}

}  // namespace

int auto_depth(const Report& report, size_t max_rows) {
  int deepest = 1;
  for (const ModuleStats& m : report.modules) deepest = std::max(deepest, module_depth(m.module));
  int best = 1;
  for (int d = 1; d <= std::min(deepest, 64); ++d) {
    std::set<std::string> rows;
    for (const ModuleStats& m : report.modules) rows.insert(module_at_depth(m.module, d));
    if (rows.size() > max_rows) break;
    best = d;
  }
  return best;
}

int heatmap_depth(const Report& report, int requested) { return requested > 0 ? requested : auto_depth(report, 40); }

std::string heatmap_row_label(const Report& report, const OpEvent& t, GroupBy group_by, int depth) {
  std::string label = group_by == GroupBy::op ? t.name.str() : module_at_depth(t.module, depth);
  // Training steps: each module's backward pass is a row of its own, after the forward rows.
  if (report.backward_from >= 0 && t.id >= report.backward_from) label += " (backward)";
  return label;
}

std::vector<HeatmapRow> heatmap_rows(const Report& report, GroupBy group_by, int depth) {
  std::vector<HeatmapRow> rows;
  std::map<std::string, size_t> index;
  std::vector<int64_t> top = top_level_ancestors(report.ops);
  auto row_of_op = [&](int64_t id) -> HeatmapRow& {
    std::string label = heatmap_row_label(report, report.ops[top[id]], group_by, depth);
    auto it = index.find(label);
    if (it != index.end()) return rows[it->second];
    index[label] = rows.size();
    rows.emplace_back();
    rows.back().label = label;
    return rows.back();
  };
  for (const OpEvent& op : report.ops) {
    HeatmapRow& row = row_of_op(op.id);
    row.ops++;
    if (op.gpu_ns > 0) row.gpu_ns += op.gpu_ns;
    if (op.parent >= 0) continue;
    row.time_ns += op.duration_ns;
    row.noncontiguous_inputs += noncontiguous_inputs(op);
    row.tensor_bytes += tensor_bytes(op);
    if (op.copy_gpu_ns > 0) row.copy_gpu_ns += op.copy_gpu_ns;
    add_counters(row.counters, op.counters);
    append_flow(row.transitions, report.ops, op.id);
  }
  for (const LayoutCause& c : report.causes) {
    if (c.accepted || c.kind != BirthKind::op || c.birth_op < 0 || c.birth_op >= static_cast<int64_t>(report.ops.size()))
      continue;
    std::vector<std::string>& births = row_of_op(c.birth_op).births;
    if (std::find(births.begin(), births.end(), c.layout) == births.end()) births.push_back(c.layout);
  }
  for (const CopyRecord& c : report.copies) {
    HeatmapRow& row = row_of_op(c.op);
    row.implicit_copies += c.cls == CopyClass::implicit_layout;
    row.explicit_copies += c.cls == CopyClass::explicit_layout;
    row.copy_bytes += c.bytes;
    row.dtlb_walks += c.dtlb.walks;
  }
  return rows;
}

int64_t heatmap_bandwidth_bytes(const RunInfo& run, const HeatmapRow& row) {
  constexpr double kBytesPerCas = 64;  // one memory-controller CAS moves a cache line
  if (run.bandwidth != "measured") return row.tensor_bytes;
  const auto counters = run.measured_counters();
  double bytes = 0;
  for (size_t k = 0; k < counters.size() && k < row.counters.size(); ++k)
    if (counters[k]->scope == CounterScope::system) bytes += row.counters[k].scaled * kBytesPerCas;
  return std::isfinite(bytes) && bytes < 9e18 ? static_cast<int64_t>(bytes) : 0;
}

}  // namespace layoutprof
