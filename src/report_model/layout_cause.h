// A cause (design.md's vocabulary): the birthplace of a layout, the ops that carried it on
// unchanged, and the ops that paid for it (layout copies, mixed-format ops, gradients that come
// back in it). Derived by the analysis (analysis/birthplace.h) and written in the JSON report,
// so that the gate compares reports by birthplace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/fix_action.h"

namespace layoutprof {

// Where a layout was born.
enum class BirthKind {
  op,           // a top-level op whose output has it while its inputs had another
  model_input,  // it arrived with a model input
  unrecorded,   // no recorded op made it and it is no model input: a parameter, a buffer, or a
                // tensor made before the recorded call
};
const char* birth_kind_name(BirthKind k);
BirthKind birth_kind_from_name(const std::string& name);  // throws std::invalid_argument

// An elementwise op on the chain whose output took one operand's layout over another's
// (TensorIterator follows the first operand whose strides decide): where swapping the
// operands changes the layout that flows on.
struct LayoutChoice {
  int64_t op = -1;         // a carrier
  int followed = 0;        // the position (among its tensor inputs) of the operand it followed
  std::string other;       // the layout of the full-size operand it did not follow
  bool swappable = false;  // a commutative op (add, mul, ...): swapping keeps the result
};

struct LayoutCause {
  std::string layout;  // the layout born: a layout label ("channels_last", "permuted(0,2,1)")
  BirthKind kind = BirthKind::unrecorded;
  int64_t birth_op = -1;    // kind op: the top-level op
  std::string op_name;      // kind op: its name ("aten::reshape") and module ("" the top module)
  std::string module;
  std::vector<std::string> modules;  // kind op: every module the line ran in, first seen first
  std::string from_layout;  // kind op: the layout of its main input (the data it changed)
  // kind op, an elementwise op whose output TensorIterator laid out (analysis/elementwise_order.h
  // predicts the recorded strides): the operand whose strides decided it (-1: not such an op),
  // and the layout the output would have with its two operands swapped ("" not commutative).
  int decided_by = -1;
  std::string swapped_layout;
  int birth_input = -1;     // kind model_input: which one
  std::string input_text;   // kind model_input: its spec, or name, sizes and strides
  std::string where;        // the place the fix goes: "file.py:24" (the op's or the input's line)
  std::string code;         // the code on that line, trimmed ("" unknown)
  // The chain: birth op -> carriers -> payers, top-level op ids in execution order. The
  // carriers are the ops every traced path passed through (the first kMaxChain kept).
  std::vector<int64_t> carriers;
  int64_t carriers_total = 0;
  std::vector<LayoutChoice> choices;
  std::vector<int64_t> payers;  // ops that copied or ran mixed because of it (first kMaxChain)
  int64_t payers_total = 0;
  std::vector<std::string> payer_modules;  // distinct, first seen first ("" the top module)
  // What it costs downstream (derived from the recorded copies and ops; times measured).
  int64_t copies = 0;           // implicit layout copies
  int64_t explicit_copies = 0;  // explicit ones (the model's own contiguous() of it)
  int64_t copy_bytes = 0;       // of both
  int64_t copy_ns = 0;          // measured: those copies' own aten::copy_ time
  int64_t mixed_ops = 0;        // mixed-format ops reached
  int64_t mixed_without_copy = 0;  // of which no conversion copy was recorded under the op
  int64_t mixed_bytes = 0;  // derived: the foreign-format operands of those, read without a recorded copy
  std::vector<std::string> gradients;  // parameters whose gradient comes back in another layout
  std::vector<std::string> fixes;      // at the birthplace first, then model-wide
  std::vector<FixAction> actions;      // the fixes as actions, in the same order (fix_action.h)
  bool accepted = false;  // --accept FILE:LINE named its birthplace: not a cause, not gated
};

constexpr size_t kMaxChain = 64;

}  // namespace layoutprof
