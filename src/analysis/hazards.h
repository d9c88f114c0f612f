// Hazards: the layouts that change results (report_model/hazard.h). Read from the shown call's
// recorded tensors after the calls, as the causes are: each tensor's storage (its StorageImpl),
// extent (offset, sizes, strides) and version counter.
//
// - A write is a top-level op (the user's code's, not autograd's inside a backward function)
//   that writes in place: a name ending in `_` (its self, or every tensor of a foreach op's
//   first list), or an `out=` tensor (an output that is exactly a later argument).
// - Aliased: the written tensor overlaps itself (a stride 0 on a dim of size > 1), or it is a
//   view of one that does (followed back through the ops that made it, to an expand or a
//   parameter or buffer), or it partly overlaps another operand of the same op. Overlaps are
//   answered as ATen's MemoryOverlap.h answers them: yes, no, or too hard ("could not tell").
// - Lost: the written storage was made by an op that returns a view when it can and a copy
//   otherwise (reshape, flatten, contiguous, ...) and made a copy, and nothing reads that
//   storage after the write (no later op at this version or after, not the call's output).
// - Refused: a write that raised for its overlap. Failed view: a view that raised, with the
//   birthplace of its input's layout (analysis/birthplace.h).
// - Model tensors: parameters and buffers not dense, or sharing storage with another in a
//   different extent (tied weights, one tensor under two names, are not listed).
#pragma once

#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// The hazards of a report whose copies and causes are derived (analyze() calls it). `outputs`:
// what the shown call returned, when known.
std::vector<Hazard> find_hazards(const Report& r, const std::vector<TensorInfo>& outputs);

// The first top-level op after op `after` that writes elements of `storage_id` in place (a
// write, as above); -1 where none does. A `.contiguous()` on a view of that storage would take
// the write away from it (the what-if refuses to apply such a fix).
int64_t written_after(const Report& r, uint64_t storage_id, int64_t after);

// One line: "aliased write at model.py:24 (`buf[0] = v`): ..." (the kind, the line, the code,
// the tensor and what happens).
std::string hazard_text(const Hazard& h);

// "aliased write", "lost write", ...
std::string hazard_kind_words(HazardKind k);

// "4x3 strides 0,1"
std::string extent_text(const TensorInfo& t);

}  // namespace layoutprof
