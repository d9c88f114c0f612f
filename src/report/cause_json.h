// A cause (report_model/layout_cause.h) as the JSON report's "causes" entries hold it, and
// back. The words (what it is, what it costs, the fixes) are written beside the figures, so
// that a dashboard needs no layoutprof to show them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

nlohmann::json cause_json(const LayoutCause& c);
// Throws std::out_of_range or a json error on an entry that is not one; op ids must be below
// `ops` (the report's op events).
LayoutCause cause_from(const nlohmann::json& j, int64_t ops);
// A fix's action (the causes' "actions" entries, and the what-if variants'), and back.
nlohmann::json fix_action_json(const FixAction& a);
FixAction fix_action_from(const nlohmann::json& j);

}  // namespace layoutprof
