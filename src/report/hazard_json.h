// A hazard (report_model/hazard.h) as the JSON report's "hazards" entries hold it, and back.
// The words (the one-line text, the detail, the fixes) are written beside the figures, so that
// a dashboard needs no layoutprof to show them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

nlohmann::json hazard_json(const Hazard& h);
// Throws std::out_of_range or a json error on an entry that is not one; an op id must be below
// `ops` (the report's op events).
Hazard hazard_from(const nlohmann::json& j, int64_t ops);

}  // namespace layoutprof
