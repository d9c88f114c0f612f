#include "runner/fixes.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "runner/conversion.h"
#include "runner/model.h"
#include "runner/runner.h"

namespace layoutprof {

namespace {

at::MemoryFormat memory_format(const std::string& name, int64_t dim) {
  if (name == "channels_last" && dim == 4) return at::MemoryFormat::ChannelsLast;
  if (name == "channels_last_3d" && dim == 5) return at::MemoryFormat::ChannelsLast3d;
  if (name == "contiguous") return at::MemoryFormat::Contiguous;
  throw FixRefused("a " + std::to_string(dim) + "-D tensor has no " + name + " format");
}

void make_dense(Model& model, const FixAction& fix) {
  for (const auto& list : {model.named_parameters(), model.named_buffers()})
    for (const NamedTensor& t : list)
      if (t.name == fix.tensor) {
        at::NoGradGuard no_grad;  // new memory for the model's own tensor, as Module.to() gives it
        at::Tensor tensor = t.tensor;
        tensor.set_data(tensor.contiguous(memory_format(fix.format, tensor.dim())));
        return;
      }
  throw FixRefused("the model has no parameter or buffer " + fix.tensor);
}

}  // namespace

void apply_model_fixes(Model& model, const std::vector<FixAction>& fixes, Conversion& done) {
  for (const FixAction& fix : fixes) {
    switch (fix.kind) {
      case FixKind::convert_model:
        try {
          convert_model(model, fix.format == "contiguous" ? "contiguous" : "channels_last", done);
        } catch (const c10::Error& e) {
          throw FixRefused("the model's tensors could not take " + fix.format + ": " + e.what_without_backtrace());
        }
        break;
      case FixKind::dense_parameter: make_dense(model, fix); break;
      case FixKind::contiguous_at:
      case FixKind::swap_operands: {
        const std::string why = model.fix_line(fix);
        if (!why.empty()) throw FixRefused(why);
        break;
      }
      case FixKind::feed_input: break;  // apply_input_fixes
      case FixKind::none: throw FixRefused(fix.not_applied.empty() ? "no front end applies it" : fix.not_applied);
    }
  }
}

void apply_input_fixes(std::vector<c10::IValue>& inputs, const std::vector<FixAction>& fixes) {
  for (const FixAction& fix : fixes) {
    if (fix.kind != FixKind::feed_input) continue;
    if (fix.input < 0 || static_cast<size_t>(fix.input) >= inputs.size() || !inputs[fix.input].isTensor())
      throw FixRefused("the model takes no tensor input " + std::to_string(fix.input));
    const at::Tensor given = inputs[fix.input].toTensor();
    at::Tensor fed;
    {
      at::NoGradGuard no_grad;  // a leaf as given: a training step's :grad input stays one
      fed = given.contiguous(memory_format(fix.format, given.dim()));
    }
    if (given.requires_grad()) fed = fed.detach().requires_grad_(true);
    inputs[fix.input] = fed;
  }
}

}  // namespace layoutprof
