// Ops that run torch.compile's generated code: the layouts they make and the copies they make
// are inductor's choices, not a line of the model's code, and their fix is a compile setting.
#pragma once

#include <string>

namespace layoutprof {

// Dynamo's scope around a compiled function's call ("Torch-Compiled Region: 0/0"), and AOT
// autograd's compiled forward and backward ("CompiledFunction", and its backward as the autograd
// engine runs it: "autograd::engine::evaluate_function: CompiledFunctionBackward").
inline bool is_compiled_code(const std::string& op_name) {
  return op_name.rfind("Torch-Compiled Region", 0) == 0 || op_name.find("CompiledFunction") != std::string::npos;
}

// The fix for a layout inductor chose in a compiled graph (`where`: the op and its place), which
// eager code then converts (AccumulateGrad to a parameter's layout, a copy back at the graph's
// edge): its layout optimization turns convolutions' activations and weights channels_last.
inline std::string compiled_layout_fix(const std::string& where) {
  return "the layout is inductor's choice inside the compiled graph (" + where +
         "), not a line of the model: make the model's layout the one inductor picks before torch.compile "
         "(model.to(memory_format=torch.channels_last): parameters, gradients and activations then agree), or "
         "turn inductor's layout optimization off (torch._inductor.config.layout_optimization = False, before "
         "compiling); measure both";
}

}  // namespace layoutprof
