// Chrome trace / Perfetto JSON of a report: ops as slices on their threads (shapes, strides
// and layout classes as args), copies named by class, counters as counter tracks.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

// Written event by event: memory does not grow with the op count.
void write_chrome_trace(std::ostream& out, const Report& report);
// The same document as a tree (tests, small reports).
nlohmann::json chrome_trace(const Report& report);

}  // namespace layoutprof
