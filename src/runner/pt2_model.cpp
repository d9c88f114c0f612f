// Model for torch.export programs: the graph's inputs are the signature's parameters, buffers
// and constants, then the user's inputs; its outputs are the user's outputs and the mutations
// a functional graph asks to write back (buffers, inputs), which forward() writes back as
// eager PyTorch would have mutated them.
#include "runner/pt2_model.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <map>
#include <optional>
#include <utility>

#include "pt2/archive.h"
#include "pt2/export_mode.h"
#include "pt2/input_sizes.h"
#include "pt2/program_reader.h"
#include "runner/model.h"
#include "runner/pt2_executor.h"
#include "runner/pt2_sites.h"
#include "runner/pt2_tensors.h"
#include "support/errors.h"

namespace layoutprof {

namespace {

using pt2::InputKind;
using pt2::OutputKind;

std::string spec_name(const pt2::InputSpec& spec) {
  return spec.arg.names.empty() ? "" : spec.arg.names[0];
}

class Pt2Model final : public Model {
 public:
  Pt2Model(const std::string& path, pt2::Program program, std::map<std::string, at::Tensor> tensors)
      : path_(path), program_(std::move(program)), tensors_(std::move(tensors)), executor_(program_.graph, sites_) {
    check_signature();
  }

  const char* format() const override { return "pt2"; }
  std::vector<std::string> input_names() const override {
    std::vector<std::string> names;
    for (const pt2::InputSpec& spec : program_.input_specs)
      if (spec.kind == InputKind::UserInput) names.push_back(spec_name(spec));
    return names;
  }
  // Read from the archive when first asked (a run without --input): a load with --input holds
  // the weights and nothing else.
  std::vector<c10::IValue> sample_inputs() const override {
    if (!samples_) {
      try {
        samples_ = load_sample_inputs(pt2::Archive(path_), program_.sample_inputs_entry, input_names());
      } catch (const c10::Error& e) {
        throw ModelLoadError("'" + path_ + "': its sample inputs could not be read: " +
                             first_line(e.what_without_backtrace()));
      }
    }
    return *samples_;
  }

  void to(const at::Device& device) override {
    try {
      for (auto& [name, t] : tensors_) t.set_data(t.to(device));
    } catch (const c10::Error& e) {
      throw ModelLoadError("model '" + path_ + "' could not be moved to " + device.str() + ": " +
                           first_line(e.what_without_backtrace()));
    }
    executor_.set_device(device);
  }
  // A program's mode (train or eval) was fixed when it was exported.
  void set_training(bool) override {}
  std::string fix_line(const FixAction& fix) override {
    const bool swap = fix.kind == FixKind::swap_operands;
    if (!swap && fix.kind != FixKind::contiguous_at) return "not a fix at a line";
    const c10::MemoryFormat format = fix.format == "channels_last"      ? c10::MemoryFormat::ChannelsLast
                                     : fix.format == "channels_last_3d" ? c10::MemoryFormat::ChannelsLast3d
                                                                        : c10::MemoryFormat::Contiguous;
    const int nodes = executor_.fix_line(swap ? Pt2Executor::LineFix::swap : Pt2Executor::LineFix::contiguous,
                                         fix.op, fix.where, format);
    if (nodes < 0) return "line " + fix.where + " runs " + fix.op + " more than once in one module: not one to change";
    return nodes > 0 ? "" : "no node of the program runs " + fix.op + " at " + fix.where;
  }
  ModelMode mode() const override {
    const pt2::ExportMode mode = pt2::export_mode(program_.graph);
    return {mode.value(), "export", mode.evidence()};
  }
  std::vector<NamedTensor> named_parameters() const override { return named(InputKind::Parameter); }
  std::vector<NamedTensor> named_buffers() const override { return named(InputKind::Buffer); }
  void check_inputs(const std::vector<c10::IValue>& inputs) const override {
    std::vector<std::vector<int64_t>> sizes;
    std::vector<bool> tensor;
    for (const c10::IValue& in : inputs) {
      tensor.push_back(in.isTensor());
      sizes.push_back(in.isTensor() ? in.toTensor().sizes().vec() : std::vector<int64_t>());
    }
    pt2::check_input_sizes(program_, sizes, tensor);
  }
  c10::IValue forward(std::vector<c10::IValue>& inputs) override;
  std::string error_reason(const std::exception& e) const override;
  OpSiteSource& op_sites() override { return sites_; }
  std::vector<std::string> not_run() const override;

 private:
  std::vector<NamedTensor> named(InputKind kind) const {
    std::vector<NamedTensor> out;
    for (const pt2::InputSpec& spec : program_.input_specs)
      if (spec.kind == kind) out.push_back({spec.target, tensors_.at(spec.target)});
    return out;
  }
  void check_signature() const;
  std::vector<c10::IValue> graph_inputs(const std::vector<c10::IValue>& user) const;
  void write_back(const pt2::OutputSpec& spec, const c10::IValue& value, std::vector<c10::IValue>& inputs);

  std::string path_;
  pt2::Program program_;
  std::map<std::string, at::Tensor> tensors_;  // parameters, buffers, constants by name
  mutable std::optional<std::vector<c10::IValue>> samples_;
  Pt2Sites sites_;
  Pt2Executor executor_;
};

// The AOTInductor code packaged beside the program (compiled from it, as aoti_compile_and_package
// compiles): the run executes the program's graph, never that code.
std::vector<std::string> Pt2Model::not_run() const {
  if (program_.aotinductor_models.empty()) return {};
  std::string folders;
  for (const std::string& m : program_.aotinductor_models)
    folders += (folders.empty() ? "" : ", ") + std::string("data/aotinductor/") + bounded(m, 60) + "/";
  return {"AOTInductor code in the archive (" + folders + "): not run; layoutprof ran its exported program (models/" +
          bounded(program_.name, 60) + ".json) op by op through LibTorch's dispatcher"};
}

// What the signature asks that layoutprof does not run, refused as the program loads.
void Pt2Model::check_signature() const {
  for (const pt2::InputSpec& spec : program_.input_specs) {
    if (spec.kind == InputKind::CustomObj || spec.kind == InputKind::Token)
      throw ModelLoadError("'" + path_ + "' takes a " +
                           (spec.kind == InputKind::Token ? "side-effect token" : "custom object") +
                           " input, which layoutprof does not run");
    if ((spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
         spec.kind == InputKind::TensorConstant) && !tensors_.count(spec.target))
      throw ModelLoadError("'" + path_ + "' does not store '" + bounded(spec.target) + "', an input of its graph");
  }
  for (const pt2::OutputSpec& spec : program_.output_specs)
    if (spec.kind == OutputKind::GradientToParameter || spec.kind == OutputKind::GradientToUserInput ||
        spec.kind == OutputKind::Token)
      throw ModelLoadError("'" + path_ + "' is a joint or effectful graph (its outputs include gradients or "
                           "tokens), which layoutprof does not run");
  if (program_.output_specs.size() != program_.graph.outputs.size())
    throw ModelLoadError("'" + path_ + "': its signature names " + std::to_string(program_.output_specs.size()) +
                         " outputs, its graph has " + std::to_string(program_.graph.outputs.size()));
}

std::vector<c10::IValue> Pt2Model::graph_inputs(const std::vector<c10::IValue>& user) const {
  std::vector<c10::IValue> in;
  size_t next_user = 0;
  for (const pt2::InputSpec& spec : program_.input_specs) {
    switch (spec.kind) {
      case InputKind::UserInput: in.push_back(next_user < user.size() ? user[next_user++] : c10::IValue()); break;
      case InputKind::ConstantInput: in.emplace_back(); break;  // a None or number baked into the graph
      default: in.push_back(tensors_.at(spec.target)); break;
    }
  }
  return in;
}

// A functional graph returns the new value of what eager PyTorch mutated in place.
void Pt2Model::write_back(const pt2::OutputSpec& spec, const c10::IValue& value, std::vector<c10::IValue>& inputs) {
  at::Tensor target;
  if (spec.kind == OutputKind::BufferMutation || spec.kind == OutputKind::ParameterMutation) {
    target = tensors_.at(spec.target);
  } else {
    const std::vector<std::string> names = input_names();
    for (size_t i = 0; i < names.size() && i < inputs.size(); ++i)
      if (names[i] == spec.target) target = inputs[i].toTensor();
  }
  if (!target.defined()) return;
  c10::NoGradGuard no_grad;
  target.copy_(value.toTensor());
}

// A functional graph's write-back of a mutated buffer comes after the forward: a training step
// whose backward needs the buffer's old value (batch norm's running statistics) fails, under
// ep.module() as here. The reason says so.
std::string Pt2Model::error_reason(const std::exception& e) const {
  auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string reason = first_line(c10e ? c10e->what_without_backtrace() : e.what());
  bool writes_back = false;
  for (const pt2::OutputSpec& spec : program_.output_specs)
    writes_back = writes_back || spec.kind == OutputKind::BufferMutation || spec.kind == OutputKind::UserInputMutation;
  if (writes_back && reason.find("modified by an inplace operation") != std::string::npos)
    reason += " (the program writes its mutated buffers back after the forward, as a run_decompositions() graph "
              "does, and autograd saved their old values: ep.module() fails the same way; profile training steps "
              "on the program torch.export.export wrote, before run_decompositions())";
  return reason;
}

c10::IValue Pt2Model::forward(std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> outputs = executor_.run(graph_inputs(inputs));
  std::vector<c10::IValue> user;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const pt2::OutputSpec& spec = program_.output_specs[i];
    if (spec.kind == OutputKind::UserOutput || spec.kind == OutputKind::LossOutput) user.push_back(outputs[i]);
    else write_back(spec, outputs[i], inputs);
  }
  if (user.size() == 1) return user[0];
  return c10::ivalue::Tuple::create(std::move(user));
}

}  // namespace

std::unique_ptr<Model> load_pt2(const std::string& path) {
  pt2::Archive archive(path);
  pt2::Program program = pt2::read_program(archive);
  std::map<std::string, pt2::StoredTensor> stored = program.weights;
  stored.insert(program.constants.begin(), program.constants.end());
  try {
    std::map<std::string, at::Tensor> tensors = load_stored_tensors(archive, stored);
    return std::make_unique<Pt2Model>(path, std::move(program), std::move(tensors));
  } catch (const c10::Error& e) {
    throw ModelLoadError("'" + path + "' could not be loaded: " + first_line(e.what_without_backtrace()));
  }
}

}  // namespace layoutprof
