// A fix as an action (the what-if work applies it and measures what it saves): what a cause's
// fix sentence says, in fields a front end can carry out. Each cause lists its actions in the
// order of its fixes: the one at the birthplace first, then the operand swaps, then the
// model-wide alternative; a fix no front end can apply is listed as kind `none`, with why.
#pragma once

#include <string>

namespace layoutprof {

enum class FixKind {
  none,             // not applied: `not_applied` says why (a compile setting, a library's line, ...)
  contiguous_at,    // A: `.contiguous(memory_format=format)` on the result of `op` at `where`
  swap_operands,    // B: swap the operands of the commutative elementwise `op` at `where`
  feed_input,       // C: model input `input` fed in `format`
  convert_model,    // D: the model's parameters and buffers converted to `format`
  dense_parameter,  // E: the parameter or buffer `tensor` made dense in `format`
};
const char* fix_kind_name(FixKind k);
FixKind fix_kind_from_name(const std::string& name);  // throws std::invalid_argument

struct FixAction {
  FixKind kind = FixKind::none;
  std::string op;      // contiguous_at, swap_operands: the op ("aten::permute")
  std::string where;   // contiguous_at, swap_operands: its line ("model.py:24"); dense_parameter: where it was set
  // contiguous_at, feed_input, convert_model, dense_parameter: "contiguous", "channels_last" or
  // "channels_last_3d" (torch.contiguous_format and the memory formats)
  std::string format;
  int input = -1;      // feed_input: which model input
  std::string tensor;  // dense_parameter: the parameter's or buffer's name ("conv1.weight")
  std::string not_applied;  // none: why no front end applies it
};

}  // namespace layoutprof
