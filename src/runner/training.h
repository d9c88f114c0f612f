// One step of a model as a run makes it, and what a training step adds: the backward pass and
// the parameters' gradients (torch side; used by the runner and the benchmark).
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/trace.h"

namespace layoutprof {

class Model;
class Recorder;
struct NamedTensor;

// Backward from what forward() returned: a seeded random-normal upstream gradient for each
// differentiable output (contiguous, as a loss would give), or from the outputs' sum
// (loss "sum"). `begins` is called as the backward pass starts. Throws UsageError when no
// output can be differentiated.
void backward_from(const c10::IValue& output, const std::string& loss, const std::function<void()>& begins);

// One call as a run makes them all: forward(), and for a training step the backward pass and
// the gradients set to none, as optimizer.zero_grad() does by default. Made once the model is
// where and how it runs (device, layout): it holds handles to its parameters.
class ModelStep {
 public:
  // `loss` as backward_from() takes it; unused when `backward` is false.
  ModelStep(Model& model, bool backward, std::string loss);
  // `backward_begins` is called as the backward pass begins. Returns what forward() returned.
  c10::IValue operator()(std::vector<c10::IValue>& inputs, const std::function<void()>& backward_begins) const;

 private:
  Model& model_;
  bool backward_;
  std::string loss_;
  std::vector<at::Tensor> parameters_;
};

// Watches each parameter's gradient as autograd hands it to AccumulateGrad (a tensor hook on a
// leaf runs just before): sizes, strides, density and buffer, never a reference to the tensor
// (holding one would make AccumulateGrad copy it instead of keeping it). Times are the
// recorder's. The hooks go with the object.
class GradWatch {
 public:
  // `parameters` as Model::named_parameters() (or a module's named_parameters()) gives them.
  GradWatch(const std::vector<NamedTensor>& parameters, const Recorder& recorder);
  ~GradWatch();
  GradWatch(const GradWatch&) = delete;
  GradWatch& operator=(const GradWatch&) = delete;
  std::vector<ParamGrad> take() const;

 private:
  std::vector<std::shared_ptr<ParamGrad>> grads_;
  std::vector<std::pair<at::Tensor, unsigned>> hooks_;
};

}  // namespace layoutprof
