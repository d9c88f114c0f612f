// Ops that run torch.compile's generated code: the layouts they make and the copies they make
// are inductor's choices, not a line of the model's code, and their fix is a compile setting.
#pragma once

#include <cstddef>
#include <string>

#include "report_model/report.h"

namespace layoutprof {

// Dynamo's scope around a compiled function's call ("Torch-Compiled Region: 0/0"), and AOT
// autograd's compiled forward and backward ("CompiledFunction", and its backward as the autograd
// engine runs it: "autograd::engine::evaluate_function: CompiledFunctionBackward").
inline bool is_compiled_code(const std::string& op_name) {
  return op_name.rfind("Torch-Compiled Region", 0) == 0 || op_name.find("CompiledFunction") != std::string::npos;
}

// The rank a layout label tells: 4 or 5 for the channels_last formats, the dims of a
// permutation; 0 where the label does not say (contiguous, strided, ...).
inline size_t layout_rank(const std::string& label) {
  if (label == "channels_last") return 4;
  if (label == "channels_last_3d") return 5;
  if (label.rfind("permuted(", 0) != 0) return 0;
  size_t dims = 1;
  for (char c : label) dims += c == ',';
  return dims;
}

// The fix for a layout inductor chose in a compiled graph (`where`: the op and its place), which
// eager code then converts (AccumulateGrad to a parameter's layout, a copy back at the graph's
// edge): its layout optimization turns convolutions' activations and weights channels_last, and
// nothing else, so its settings mean something for the memory formats of 4-D and 5-D data only.
// Another layout (`layout`: a token tensor's permutation, a slice, a head split's
// permuted(0,2,1,3)) came with the data the compiled function was handed.
inline std::string compiled_layout_fix(const std::string& where, const std::string& layout = "") {
  const size_t rank = layout_rank(layout);
  const bool a_format = layout.empty() || layout == "contiguous" || layout == "channels_last" || layout == "channels_last_3d";
  if (!a_format || (rank != 0 && rank != 4 && rank != 5))
    return "a " + layout + " tensor crosses the compiled graph's edge (" + where +
           "): inductor's layout optimization changes only the memory format of 4-D and 5-D convolution data, "
           "so no compile setting changes it; make the tensor handed to the compiled function contiguous where the "
           "code makes it (`.contiguous()` there)";
  return "the layout is inductor's choice inside the compiled graph (" + where +
         "), not a line of the model: make the model's layout the one inductor picks before torch.compile "
         "(model.to(memory_format=torch.channels_last): parameters, gradients and activations then agree), or "
         "turn inductor's layout optimization off (torch._inductor.config.layout_optimization = False, before "
         "compiling); measure both";
}

// A copy inside an op that compiled code calls (an extern kernel: a fused transformer layer's
// head split; a convolution_backward in a compiled backward) of a tensor that op made itself,
// none of its inputs: that op's own copy, as a library op's of its own views is in eager code,
// whatever the layout of the data it was given.
inline bool made_inside_callee(const Report& r, const CopyRecord& c) {
  int64_t callee = c.op;
  while (callee >= 0 && r.ops[callee].parent != c.culprit) callee = r.ops[callee].parent;
  if (callee < 0 || callee == c.op) return false;
  for (const TensorInfo& in : r.ops[callee].inputs)
    if (in.storage == c.src.storage) return false;
  return true;
}

}  // namespace layoutprof
