// The text heatmap reporter.
#pragma once

#include <ostream>

#include "layoutprof/heatmap.h"
#include "layoutprof/report.h"

namespace layoutprof {

struct TextOptions {
  GroupBy group_by = GroupBy::module;
  int depth = 0;  // 0: automatic (about 40 rows)
  int top = 10;   // split points listed
  bool color = false;  // 256-colour shading
};

void write_text_report(std::ostream& out, const Report& report, const TextOptions& options);

}  // namespace layoutprof
