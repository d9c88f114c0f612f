// A loaded model, behind one interface whatever its file format: the runner and the benchmark
// load, lay out, step and locate ops through it, never through a format's own API. TorchScript
// (torchscript_model.cpp) is the first implementation; a torch.export .pt2 graph run through the
// dispatcher, or an eager model run in process, would be others, chosen by load_model().
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/trace.h"
#include "report_model/fix_action.h"
#include "record/op_sites.h"

namespace layoutprof {

// A handle sharing one of the model's tensors, under its dotted path ("layer1.0.conv1.weight").
struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};

// A named_parameters() or named_buffers() list (each entry's name and value) as NamedTensors.
template <typename List>
std::vector<NamedTensor> named_tensors(const List& list) {
  std::vector<NamedTensor> out;
  for (const auto& t : list) out.push_back({t.name, t.value});
  return out;
}

class Model {
 public:
  virtual ~Model() = default;

  // The file's kind, as reports name it: "torchscript" or "pt2".
  virtual const char* format() const = 0;
  // The names of forward()'s inputs, in order: as many as it takes.
  virtual std::vector<std::string> input_names() const = 0;
  // Inputs the file carries with the model (a .pt2's example inputs); none where the format
  // has none, as TorchScript.
  virtual std::vector<c10::IValue> sample_inputs() const { return {}; }
  // Moves the parameters and buffers to `device` in place (the handles stay valid). Throws
  // ModelLoadError when they cannot go there.
  virtual void to(const at::Device& device) = 0;
  // Training mode (dropout, batch statistics) for training steps, eval mode otherwise; a
  // format that has no such modes ignores it.
  virtual void set_training(bool training) = 0;
  // The mode the model runs in now, and who chose it.
  virtual ModelMode mode() const = 0;
  // Every parameter and buffer of the model and its submodules, in the model's order.
  virtual std::vector<NamedTensor> named_parameters() const = 0;
  virtual std::vector<NamedTensor> named_buffers() const = 0;
  // Refuses (SettingError, exit 2) inputs the model cannot take, before any call: a .pt2's
  // static and dynamic dimensions. Formats that know nothing of their inputs accept them.
  virtual void check_inputs(const std::vector<c10::IValue>& /*inputs*/) const {}
  // One forward() on `inputs`; throws what the model raised.
  virtual c10::IValue forward(std::vector<c10::IValue>& inputs) = 0;
  // The reason of an exception forward() threw, in one line.
  virtual std::string error_reason(const std::exception& e) const = 0;
  // Where each op comes from (module path, source line), for the recorder: lives as long as
  // the model.
  virtual OpSiteSource& op_sites() = 0;
  // The what-if's fix at a line (report_model/fix_action.h: contiguous_at, swap_operands) in the
  // model's own code: "" once applied to every node of that op at that line, else why not.
  virtual std::string fix_line(const FixAction& /*fix*/) {
    return "a line's fix is applied to .pt2 programs and in process, not inside a TorchScript archive: run the "
           "model's Python under python -m layoutprof --what-if to measure it";
  }
  // What the file holds that the run does not execute, each a note of the run's not_measured
  // (a .pt2's AOTInductor code beside its program); none by default.
  virtual std::vector<std::string> not_run() const { return {}; }
};

// The model's parameters and buffers as a run lists them (core/trace.h's ModelTensor): the
// hazards name what a write reaches by them, and list those not dense or aliasing another.
std::vector<ModelTensor> describe_model_tensors(const std::vector<NamedTensor>& parameters,
                                                const std::vector<NamedTensor>& buffers);
// The tensors a call returned (in tuples, lists and dicts too), as the recorder describes them.
std::vector<TensorInfo> describe_returned(const c10::IValue& value);

// Loads a shared library that registers custom ops (TORCH_LIBRARY) for the models to come.
// Throws ModelLoadError with the loader's reason.
void load_op_library(const std::string& path);

// Loads the model file with the implementation its contents call for, on the CPU. Throws
// ModelLoadError when it cannot be opened or read.
std::unique_ptr<Model> load_model(const std::string& path);

}  // namespace layoutprof
