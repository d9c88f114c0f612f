// The backend pass's primitives (report_model/backend.h) as the JSON report's "backend" object
// holds them, and back.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

nlohmann::json backend_json(const BackendRun& b);
// Throws std::out_of_range or a json error on an object that is not one; an op id must be
// below `ops` (the report's op events).
BackendRun backend_from(const nlohmann::json& j, int64_t ops);

}  // namespace layoutprof
