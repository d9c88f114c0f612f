// The op and line that made a tensor's view, found among a live recording's ops: what names the
// line where an argument a compiled function recompiled on was made. Torch-free.
#pragma once

#include <optional>
#include <string>

#include "core/layout.h"

namespace layoutprof {

struct ThreadBuffer;
class OpSiteSource;

struct ViewMaker {
  std::string op;     // "aten::permute": the outermost op of its line (the user's call)
  std::string where;  // "file:line"
  std::string code;   // that line's text
};

// One storage, offset, sizes and strides: the same view of the same data.
bool same_view(const TensorInfo& a, const TensorInfo& b);

// The latest op of `b` (a timed recording's buffer, tensors kept) with an output that is exactly
// `view`, with the line its outermost sited op came from; none where no recorded op made it, the
// buffer keeps no tensors, or the op's line is not known.
std::optional<ViewMaker> find_view_maker(const ThreadBuffer& b, const OpSiteSource* sites, const TensorInfo& view);

}  // namespace layoutprof
