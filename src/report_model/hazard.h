// A hazard (design.md's vocabulary): a layout that changes what the model computes, not only
// how fast: a write that reaches many positions through one stored element (aliased), a write
// into a copy that nothing reads after it (lost), a view that failed on its input's strides, a
// write PyTorch refused for its overlap, and a parameter or buffer that is not dense or shares
// another's storage. Derived by the analysis (analysis/hazards.h) from the strides, storages and
// version counters the recorder keeps per tensor, written in the JSON report and gated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layoutprof {

enum class HazardKind {
  aliased_write,   // an in-place write into elements that several positions share
  lost_write,      // an in-place write into a copy (reshape, flatten, contiguous) read by nothing after it
  failed_view,     // view/view_as raised on its input's strides
  refused_write,   // PyTorch raised on an in-place write for its overlap
  model_tensor,    // a parameter or buffer not dense, or sharing another's storage
  stride_assertion,  // compiled code's check of an op's real strides against its fake kernel's raised
};
const char* hazard_kind_name(HazardKind k);
HazardKind hazard_kind_from_name(const std::string& name);  // throws std::invalid_argument

struct Hazard {
  HazardKind kind = HazardKind::aliased_write;
  // "yes", or "could not tell" (an overlap MemoryOverlap.h's rules answer TooHard for): a
  // could-not-tell is listed, never counted or gated.
  std::string certainty = "yes";
  int64_t op = -1;          // the op that wrote or failed (-1: a parameter or buffer)
  std::string op_name;      // "aten::copy_"
  std::string module;       // its module path ("" the top module)
  std::string where;        // the user's line: "model.py:24" ("" unknown)
  std::string code;         // the code on that line, trimmed
  std::string tensor;       // what was written, viewed or listed: "buffer `slots`", "the output of aten::reshape at x.py:9"
  std::string layout;       // its sizes and strides: "4x3 strides 0,1"
  // aliased_write: positions that see each written element (derived from the strides).
  int64_t sharing = 0;
  // Where the alias or copy was made: the expand, buffer or parameter (aliased), the op that
  // copied (lost), the birthplace of the failing view's layout; and its line.
  std::string maker;
  std::string maker_where;
  std::string detail;               // one sentence: what happens to the result
  std::vector<std::string> fixes;   // at the user's line first
  int64_t count = 1;                // times the line did it in the shown call
  bool outside_calls = false;       // seen in the ops before a failure outside the recorded calls
  bool accepted = false;            // --accept FILE:LINE named its line: listed, not gated

  bool counted() const { return certainty == "yes" && !accepted; }
  // The gate's key: kind, line and op (and the tensor for a parameter or buffer).
  std::string key() const { return std::string(hazard_kind_name(kind)) + "|" + where + "|" + op_name + "|" +
                                   (kind == HazardKind::model_tensor ? tensor : std::string()); }
};

}  // namespace layoutprof
