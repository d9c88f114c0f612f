// The verdict, the grouped causes and the split-point groups (verdict.h) as JSON for the HTML
// page, derived when the page is written (the JSON report does not hold them).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

// split_groups: each group's split-point indexes below `max_split` (the points the page holds).
nlohmann::json verdict_json(const Report& r, size_t max_split);

}  // namespace layoutprof
