// Compiled as a file of the analysis layer: the report model and the core types are below it,
// so these includes are found.
#include "core/trace.h"
#include "report_model/report.h"

namespace layoutprof {

int layer_check_allowed() { return kCopyClassCount; }

}  // namespace layoutprof
