#include "runner/training.h"

#include <ATen/Functions.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/utils.h>

#include "support/errors.h"
#include "support/setting_error.h"
#include "record/recorder.h"
#include "runner/model.h"

namespace layoutprof {

namespace {

// The .grad a parameter already holds as its gradient arrives: AccumulateGrad adds into it.
void note_prior_grad(const c10::TensorImpl& param, ParamGrad& slot) {
  const c10::AutogradMetaInterface* meta = param.autograd_meta();
  const at::Tensor* prior = meta ? &meta->grad() : nullptr;
  slot.had_grad = prior && prior->defined();
  slot.prior_grad_strides = slot.had_grad && prior->layout() == at::kStrided ? prior->strides().vec() : std::vector<int64_t>{};
}

// The floating-point tensors a forward() returned that autograd can differentiate: the
// output itself, or those in its tuples, lists and dicts.
void differentiable_outputs(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined() && t.is_floating_point() && t.requires_grad()) out.push_back(t);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) differentiable_outputs(e, out);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) differentiable_outputs(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) differentiable_outputs(kv.value(), out);
  }
}

}  // namespace

void backward_from(const c10::IValue& output, const std::string& loss, const std::function<void()>& begins) {
  std::vector<at::Tensor> outputs;
  differentiable_outputs(output, outputs);
  if (outputs.empty())
    throw SettingError(Setting::backward, ": forward() returned no floating-point tensor that requires grad "
                                          "(no parameter requires grad, or the outputs do not depend on one)");
  if (loss == "sum") {
    at::Tensor total = outputs.front().sum();
    for (size_t i = 1; i < outputs.size(); ++i) total = total + outputs[i].sum();
    begins();
    torch::autograd::backward({total});
    return;
  }
  torch::manual_seed(1);  // the same upstream gradients in every step
  std::vector<at::Tensor> grads;
  for (const at::Tensor& t : outputs)
    grads.push_back(at::randn(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous)));
  begins();
  torch::autograd::backward(outputs, grads);
}

ModelStep::ModelStep(Model& model, bool backward, std::string loss)
    : model_(model), backward_(backward), loss_(std::move(loss)) {
  if (!backward_) return;
  for (NamedTensor& p : model.named_parameters()) parameters_.push_back(std::move(p.tensor));
}

c10::IValue ModelStep::operator()(std::vector<c10::IValue>& inputs, const std::function<void()>& backward_begins) const {
  c10::IValue out = model_.forward(inputs);
  if (!backward_) return out;
  backward_from(out, loss_, backward_begins);
  for (at::Tensor p : parameters_)
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
  return out;
}

GradWatch::GradWatch(const std::vector<NamedTensor>& parameters, const Recorder& recorder) {
  for (const NamedTensor& named : parameters) {
    at::Tensor p = named.tensor;
    auto grad = std::make_shared<ParamGrad>();
    grad->name = named.name;
    grad->sizes = p.sizes().vec();
    grad->strides = p.strides().vec();
    grad->requires_grad = p.requires_grad();
    grad->elem_size = static_cast<int>(p.element_size());
    if (p.requires_grad()) {
      const Recorder* rec = &recorder;
      ParamGrad* slot = grad.get();
      // hooks_ holds the parameter for as long as the hook is registered.
      const c10::TensorImpl* param = p.unsafeGetTensorImpl();
      unsigned hook = p.register_hook([slot, rec, param](const at::Tensor& g) {
        if (!g.defined()) return;
        slot->has_grad = true;
        note_prior_grad(*param, *slot);
        slot->grad_sizes = g.sizes().vec();
        slot->grad_strides = g.layout() == at::kStrided ? g.strides().vec() : std::vector<int64_t>{};
        slot->grad_dense = g.layout() == at::kStrided && g.is_non_overlapping_and_dense();
        slot->grad_storage = g.layout() == at::kStrided && g.has_storage()
                                 ? reinterpret_cast<uint64_t>(g.storage().data())
                                 : 0;
        slot->grad_ns = rec->elapsed_ns();
      });
      hooks_.emplace_back(p, hook);
    }
    grads_.push_back(std::move(grad));
  }
}

GradWatch::~GradWatch() {
  for (auto& [p, hook] : hooks_) p.remove_hook(hook);
}

std::vector<ParamGrad> GradWatch::take() const {
  std::vector<ParamGrad> out;
  for (const auto& g : grads_) out.push_back(*g);
  return out;
}

}  // namespace layoutprof
