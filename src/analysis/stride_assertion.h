// Inductor's stride assertion: the code torch.compile generates checks, after an op it calls,
// that the op's real sizes and strides are those its fake (meta) kernel promised at compile time
// (assert_size_stride). Where they differ, the run raises "AssertionError: expected size 16==16,
// stride 64==1 at dim=1 ... Error in op: torch.ops.aten.X.default": the real stride first. The
// op's real strides follow a layout its fake kernel ignores, most often its input's: a layout
// failure, explained as a failed view is, with the input's layout and its birthplace.
#pragma once

#include <cstdint>
#include <optional>

#include "report_model/report.h"

namespace layoutprof {

// The recorded op whose strides the assertion refused (the op the message names, else the last
// op with outputs in the last compiled region), or -1 when the run did not fail so.
int64_t stride_assertion_op(const Report& r);

// Its hazard, once the causes are derived (the birthplace of its input's layout).
std::optional<Hazard> stride_assertion_hazard(const Report& r);

}  // namespace layoutprof
