// The text heatmap reporter.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/heatmap.h"
#include "report_model/report.h"

namespace layoutprof {

struct TextOptions {
  GroupBy group_by = GroupBy::module;
  int depth = 0;  // 0: automatic (about 40 rows)
  int top = 10;   // split points listed
  bool color = false;  // 256-colour shading
  bool verbose = false;  // the header lists every figure measured and not measured, with how and why
};

// The heatmap as a table: rows (heatmap_rows) and one column per figure, each with its text
// and the values that shade it relative to the column; shared by the text and HTML reporters.
struct HeatmapColumn {
  std::string title;
  size_t width = 10;  // characters, in the text report
  std::string kind;   // measured | derived | modelled
  std::vector<double> values;
  std::vector<std::string> text;
};
struct HeatmapTable {
  int depth = 1;  // the module depth used
  std::vector<HeatmapRow> rows;
  std::vector<HeatmapColumn> columns;
  std::string legend;  // what each column is: measured, derived or modelled
};
HeatmapTable heatmap_table(const Report& report, GroupBy group_by, int depth);

// The mode the model ran in and who chose it, as the header shows it (text and HTML).
std::string mode_line(const ModelMode& mode);

// A row's layout lane: its transitions joined by arrows.
std::string flow_text(const std::vector<std::string>& transitions);
// A heatmap row's layout lane: "[born channels_last] " where a cause's layout was born in the
// row, then its flow.
std::string lane_text(const HeatmapRow& row);

void write_text_report(std::ostream& out, const Report& report, const TextOptions& options);

}  // namespace layoutprof
