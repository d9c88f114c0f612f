// Chrome trace / Perfetto JSON of a report: ops as slices on their threads (shapes, strides
// and layout classes as args), copies named by class, counters as counter tracks.
#pragma once

#include <nlohmann/json.hpp>

#include "layoutprof/report.h"

namespace layoutprof {

nlohmann::json chrome_trace(const Report& report);

}  // namespace layoutprof
