// The backend's conversions as the report keeps them: each primitive of the backend pass
// (core/backend_log.h) charged to the shown call's op it ran inside, and each reorder's role
// (analysis/backend_conversions.h derives them; the JSON's "backend" object holds them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend_log.h"

namespace layoutprof {

// A reorder's role, by its dims against the convolutions that ran in the same op.
enum class ReorderRole {
  none,        // not a reorder
  activation,  // dims of a convolution's source or destination: data converted around it
  weight,      // dims of a convolution's weights (OIHW, or GOIHW for groups)
  other,       // no convolution in the op, or dims that fit none (or more than one role)
};
const char* reorder_role_name(ReorderRole r);
ReorderRole reorder_role_from_name(const std::string& name);  // throws std::invalid_argument

struct BackendCall {
  BackendPrimitive p;
  int64_t op = -1;  // the shown call's top-level op event it ran inside; -1 unattributed
  ReorderRole role = ReorderRole::none;
  std::vector<int64_t> dims;  // a reorder's (its problem: 8x64x56x56)
  int64_t bytes = 0;          // derived: dims x the destination's element size (logical, no padding)
  std::string from() const;   // a reorder's source and destination formats ("" otherwise)
  std::string to() const;
};

struct BackendRun {
  std::string state;  // as BackendLog's; "" for a report written before the pass existed
  std::string reason;
  std::string library;
  std::vector<BackendCall> calls;  // in execution order
  int64_t lines_unparsed = 0;
  int64_t call_ns = -1;  // measured: what the pass's call took, logging included
  // Whether the pass's call ran the shown call's top-level ops (same count and names); when not,
  // no primitive is charged to an op, and `reason` says so.
  bool matched = true;
  bool ran() const { return state == "ran"; }
};

}  // namespace layoutprof
