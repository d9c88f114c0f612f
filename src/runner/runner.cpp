#include "layoutprof/runner.h"

#include <ATen/Parallel.h>
#include <unistd.h>
#include <torch/cuda.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <chrono>
#include <map>
#include <optional>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "layoutprof/counters.h"
#include "layoutprof/dtlb_model.h"
#include "layoutprof/errors.h"
#include "layoutprof/gpu.h"
#include "layoutprof/interrupt.h"
#include "record/recorder.h"
#include "record/tensor_info.h"
#include "runner/inputs.h"
#include "runner/training.h"

namespace layoutprof {

std::string torch_version() { return TORCH_VERSION; }

std::string plain_calls_note(int64_t calls, bool backward) {
  return "plain calls: wall time of each of " + std::to_string(calls) + " " +
         (backward ? "training steps" : "forward() calls") +
         " after the recorded ones, without the observer, counters or GPU tracer: steady clock";
}

namespace {

c10::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "f32") return at::kFloat;
  if (dtype == "f64") return at::kDouble;
  if (dtype == "f16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "i64") return at::kLong;
  if (dtype == "i32") return at::kInt;
  if (dtype == "i8") return at::kChar;
  if (dtype == "u8") return at::kByte;
  if (dtype == "bool") return at::kBool;
  throw UsageError("unknown dtype '" + dtype + "'");
}

at::Tensor random_tensor(const std::vector<int64_t>& sizes, const std::string& dtype) {
  auto options = at::TensorOptions().dtype(scalar_type(dtype));
  if (is_floating_dtype(dtype)) return at::randn(sizes, options);
  if (dtype == "bool") return at::randint(0, 2, sizes, options);
  return at::randint(0, 10, sizes, options);
}

}  // namespace

at::Tensor make_input(const InputSpec& spec) {
  if (spec.format == "channels_last")
    return random_tensor(spec.sizes, spec.dtype).contiguous(at::MemoryFormat::ChannelsLast);
  if (spec.format == "channels_last_3d")
    return random_tensor(spec.sizes, spec.dtype).contiguous(at::MemoryFormat::ChannelsLast3d);
  if (spec.format == "perm") {
    // Allocate in the physical order, then view back to the logical shape.
    std::vector<int64_t> physical;
    for (int d : spec.perm) physical.push_back(spec.sizes[d]);
    std::vector<int64_t> back(spec.perm.size());
    for (size_t p = 0; p < spec.perm.size(); ++p) back[spec.perm[p]] = static_cast<int64_t>(p);
    return random_tensor(physical, spec.dtype).permute(back);
  }
  return random_tensor(spec.sizes, spec.dtype);
}

namespace {

std::string describe_schema(const c10::FunctionSchema& schema) {
  std::string names;
  for (size_t i = 1; i < schema.arguments().size(); ++i)
    names += (i > 1 ? ", " : "") + schema.arguments()[i].name();
  return names;
}

// An archive saved by a newer PyTorch fails to load in an older LibTorch in one of two ways:
// its code calls an op this LibTorch does not have ("Unknown builtin op: aten::X", e.g.
// aten::scaled_dot_product_attention, new in 2.0), or its file format is newer than this
// LibTorch reads. Both get a message that says what is missing and how to fix it.
// The number after `key` in `text`, or "?".
std::string number_after(const std::string& text, const std::string& key) {
  auto at = text.find(key);
  if (at == std::string::npos) return "?";
  auto begin = at + key.size();
  auto end = text.find_first_not_of("0123456789", begin);
  return end == begin ? "?" : text.substr(begin, end - begin);
}

std::string too_new_hint(const std::string& path, const std::string& error) {
  const std::string fix = "build layoutprof against that PyTorch (TORCH_PYTHON=/path/to/python "
                          "scripts/setup.sh)";
  const std::string saved_by = std::string(TORCH_VERSION).rfind("1.", 0) == 0
                                   ? "PyTorch 2.x" : "a newer PyTorch";
  const std::string unknown_op = "Unknown builtin op: ";
  auto at = error.find(unknown_op);
  if (at != std::string::npos) {
    auto begin = at + unknown_op.size();
    auto end = error.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:", begin);
    std::string op = error.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    return "'" + path + "' needs an op this LibTorch " + TORCH_VERSION + " lacks (" + op +
           "): it was probably saved by " + saved_by + "; " + fix;
  }
  // "Attempted to read a PyTorch file with version 11, but the maximum supported version for
  // reading is 10." (caffe2's inline_container, 1.13 and 2.x alike)
  if (error.find("maximum supported version for reading") != std::string::npos)
    return "'" + path + "' has file format version " + number_after(error, "with version ") +
           ", newer than this LibTorch " + TORCH_VERSION + " reads (up to " +
           number_after(error, "for reading is ") + "): it was probably saved by a newer "
           "PyTorch; " + fix;
  return "";
}

torch::jit::Module load_model(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw ModelLoadError("cannot open model '" + path + "': " + std::strerror(errno));
  }
  std::string error;
  try {
    return torch::jit::load(path, at::Device(at::kCPU));
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::string hint = too_new_hint(path, error);
  if (!hint.empty()) throw ModelLoadError(hint);
  // The reason, not the source excerpt LibTorch appends.
  auto text = error.find_first_not_of(" \t\r\n");
  throw ModelLoadError("'" + path + "' is not a loadable TorchScript archive: " +
                       first_line(text == std::string::npos ? error : error.substr(text)));
}

int64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              since)
      .count();
}

// TorchScript errors start with the interpreter's traceback; the reason is the last line.
std::string model_error(const std::exception& e) {
  auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string msg = c10e ? c10e->what_without_backtrace() : e.what();
  std::string last;
  size_t pos = 0;
  while (pos < msg.size()) {
    size_t end = msg.find('\n', pos);
    std::string line = msg.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    auto text = line.find_first_not_of(" \t");
    if (text != std::string::npos) last = line.substr(text);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return last.empty() ? "unknown error" : last;
}

// "cpu", "cuda", "cuda:N"; refuses what this LibTorch cannot run.
at::Device target_device(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name.rfind("cuda", 0) != 0)
    throw UsageError("--device '" + name + "': expected cpu, cuda or cuda:N");
#ifndef LAYOUTPROF_TORCH_HAS_CUDA
  throw UsageError("--device " + name + ": this LibTorch " + std::string(TORCH_VERSION) +
                   " is built without CUDA (Debian's LibTorch is CPU-only); build layoutprof "
                   "against a CUDA-enabled PyTorch (TORCH_PYTHON=/path/to/python scripts/setup.sh)");
#else
  // A CUDA LibTorch: at::hasCUDA() is false on a machine without a GPU from 2.x on (it asks
  // the runtime), so whether LibTorch has CUDA is known from the build, and whether there is
  // a device from the runtime, with its reason where the CUPTI build can ask.
  if (torch::cuda::device_count() == 0) {
    std::string why;
    create_gpu_tracer(-1, &why);
    if (why.rfind("no CUDA device: ", 0) == 0) why = why.substr(16);
    else why = "the CUDA runtime finds none";
    throw UsageError("--device " + name + ": no CUDA device (" + why + "); this LibTorch " +
                     std::string(TORCH_VERSION) + " has CUDA, this machine no usable GPU");
  }
#endif
  try {
    at::Device device(name);
    if (device.has_index() && device.index() >= static_cast<int>(torch::cuda::device_count()))
      throw UsageError("--device " + name + ": only " + std::to_string(torch::cuda::device_count()) +
                       " CUDA device(s)");
    return device;
  } catch (const c10::Error& e) {
    throw UsageError("--device '" + name + "': " + first_line(e.what_without_backtrace()));
  }
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace

int64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : -1;
}

namespace {

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000 && u < 6) v /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

// The inputs' tensors, built before anything is allocated: refused with the bytes they need
// when the machine cannot hold them (a permuted or channels_last input is built through a
// contiguous one: twice its bytes for a moment).
void check_inputs_fit(const std::vector<InputSpec>& specs) {
  const int64_t available = available_memory();
  int64_t total = 0;
  for (const InputSpec& spec : specs) {
    int64_t bytes = input_bytes(spec);
    int64_t peak = 0;
    if (bytes < 0 || __builtin_mul_overflow(bytes, spec.format == "contiguous" ? 1 : 2, &peak) ||
        __builtin_add_overflow(total, peak, &total))
      throw UsageError("--input '" + bounded(spec.text) + "': its tensor would take more than 2^63 bytes");
    if (available >= 0 && total > available)
      throw UsageError("--input '" + bounded(spec.text) + "': its tensor needs " + std::to_string(bytes) +
                       " bytes (" + human_bytes(bytes) + ")" + (peak > bytes ? ", twice that while it is built" : "") +
                       (total > peak ? ", on top of the inputs before it" : "") + "; this machine has " +
                       std::to_string(available) + " bytes (" + human_bytes(available) + ") available");
  }
}

}  // namespace

int64_t default_max_ops() {
  // A run holds about 260 bytes per op event and `check` about 390 (two reports, measured by
  // scripts/bench-scale.sh on a loop of small ops): 1 KB leaves room for both.
  constexpr int64_t kBytesPerOp = 1024;
  const int64_t available = available_memory();
  if (available <= 0) return 1'000'000;  // unknown: a million op events
  return std::max<int64_t>(available / kBytesPerOp, 100'000);
}

namespace {

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
    throw UsageError("--backward: forward() returned no floating-point tensor that requires grad "
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

void clear_grads(const torch::jit::Module& module) {
  for (at::Tensor p : module.parameters(/*recurse=*/true))
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
}

namespace {

// Watches each parameter's gradient as autograd hands it to AccumulateGrad (a tensor hook
// on a leaf runs just before): sizes, strides, density and buffer, never a reference to the
// tensor (holding one would make AccumulateGrad copy it instead of keeping it).
class GradWatch {
 public:
  GradWatch(const torch::jit::Module& module, const Recorder& recorder) {
    for (const auto& named : module.named_parameters(/*recurse=*/true)) {
      at::Tensor p = named.value;
      auto grad = std::make_shared<ParamGrad>();
      grad->name = named.name;
      grad->sizes = p.sizes().vec();
      grad->strides = p.strides().vec();
      grad->requires_grad = p.requires_grad();
      grad->elem_size = static_cast<int>(p.element_size());
      if (p.requires_grad()) {
        const Recorder* rec = &recorder;
        ParamGrad* slot = grad.get();
        unsigned hook = p.register_hook([slot, rec](const at::Tensor& g) {
          if (!g.defined()) return;
          slot->has_grad = true;
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
  ~GradWatch() {
    for (auto& [p, hook] : hooks_) p.remove_hook(hook);
  }
  std::vector<ParamGrad> take() {
    std::vector<ParamGrad> out;
    for (const auto& g : grads_) out.push_back(*g);
    return out;
  }

 private:
  std::vector<std::shared_ptr<ParamGrad>> grads_;
  std::vector<std::pair<at::Tensor, unsigned>> hooks_;
};

// The memory format a compare-formats variant gives a tensor, as Python's
// model.to(memory_format=...) chooses it: channels_last converts 4-D tensors (5-D ones to
// channels_last_3d) and leaves the others; contiguous converts every tensor.
std::optional<at::MemoryFormat> format_for(const at::Tensor& t, const std::string& to) {
  if (!t.defined() || t.layout() != at::kStrided) return std::nullopt;  // sparse, mkldnn: no strides
  if (to == "contiguous") return at::MemoryFormat::Contiguous;
  if (to == "channels_last" && t.dim() == 4) return at::MemoryFormat::ChannelsLast;
  if (to == "channels_last" && t.dim() == 5) return at::MemoryFormat::ChannelsLast3d;
  return std::nullopt;
}

// Lays out a tensor held by the module in the variant's format, in place: set_data() gives
// the module's own tensor (its slot, and any other module's slot sharing it) the new memory,
// as Module.to() does in Python; torch::jit::Module has no to(memory_format). A tensor in
// that format already, with the format's own strides, is kept, as Tensor.to(memory_format=...)
// keeps it: is_contiguous(format) alone ignores dims of size 1, but a 1x1 convolution's NCHW
// weight is not what Python's conversion leaves (its strides on those dims differ), so the
// format LibTorch suggests for the tensor must be that one too. Returns whether it changed.
bool convert_in_place(at::Tensor t, const std::string& to) {
  std::optional<at::MemoryFormat> format = format_for(t, to);
  if (!format || (t.is_contiguous(*format) && t.suggest_memory_format() == *format)) return false;
  t.set_data(t.clone(*format));
  return true;
}

// ProfileConfig::convert_to over every parameter and buffer of the module and its submodules
// (parameters(true) and buffers(true): the same lists in LibTorch 1.13 and 2.x).
void convert_module(torch::jit::Module& module, const std::string& to, Conversion& done) {
  torch::NoGradGuard no_grad;  // the new memory is data, not a step autograd records
  for (const at::Tensor& p : module.parameters(/*recurse=*/true)) {
    ++done.parameters_total;
    done.parameters += convert_in_place(p, to);
  }
  for (const at::Tensor& b : module.buffers(/*recurse=*/true)) {
    ++done.buffers_total;
    done.buffers += convert_in_place(b, to);
  }
}

// One call as the run makes them all: forward(), and for a training step (--backward) the
// backward pass (`backward_begins` is called as it begins) and the gradients set to none.
void model_step(torch::jit::Module& module, std::vector<c10::IValue>& inputs, const ProfileConfig& config,
                const std::function<void()>& backward_begins) {
  c10::IValue out = module.forward(inputs);
  if (!config.backward) return;
  backward_from(out, config.loss, backward_begins);
  clear_grads(module);
}

// The model and inputs of a run that went well, for plain calls: those run_profile() makes
// (ProfileConfig::timed_calls) and those a caller makes after it returns (PlainCaller). The
// module and inputs are handles: they share the run's objects.
class LoadedModel final : public PlainCaller {
 public:
  LoadedModel(torch::jit::Module module, std::vector<c10::IValue> inputs, at::Device device, ProfileConfig config)
      : module_(std::move(module)), inputs_(std::move(inputs)), device_(device), config_(std::move(config)) {}

  int64_t call_ns() override {
    // Forward only without autograd, as the recorded calls ran (the guard is per thread).
    std::optional<torch::NoGradGuard> no_grad;
    if (!config_.backward) no_grad.emplace();
    const auto t0 = std::chrono::steady_clock::now();
    try {
      model_step(module_, inputs_, config_, [] {});
      synchronize(device_);  // the call is over when its kernels are
    } catch (const std::exception& e) {
      throw std::runtime_error(model_error(e));
    }
    return elapsed_ns(t0);
  }

 private:
  torch::jit::Module module_;
  std::vector<c10::IValue> inputs_;
  at::Device device_;
  ProfileConfig config_;
};

}  // namespace

namespace {
// What counting costs each top-level op and copy: two reads of every group, timed here.
std::string counting_cost(const PerfCounters& counters) {
  if (counters.events() == 0) return "";
  std::vector<uint64_t> snapshot(counters.snapshot_size());
  constexpr int kReads = 200;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kReads; ++i) counters.read(snapshot.data());
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kReads;
  char text[160];
  std::snprintf(text, sizeof text,
                " (exact per op; a read of every group took %.2f us, measured over %d reads: twice that "
                "inside each top-level op and copy)",
                us, kReads);
  return text;
}
}  // namespace

Trace run_profile(const ProfileConfig& config, const ProgressFn& progress, std::unique_ptr<PlainCaller>* keep) {
  const at::Device device = target_device(config.device);
  Trace trace;
  RunInfo& run = trace.run;
  run.model = config.model;
  run.warmup = config.warmup;
  run.iters = config.iters;
  run.torch_version = torch_version();
  run.layoutprof_version = LAYOUTPROF_VERSION;
  run.device = config.device;
  run.tlb = tlb_config_string(parse_tlb_config(config.tlb));
  run.backward = config.backward;
  if (config.backward) run.loss = config.loss;

  if (config.threads > 0) at::set_num_threads(config.threads);
  run.threads = at::get_num_threads();

  progress("loading " + config.model);
  torch::jit::Module module = load_model(config.model);
  // A training step runs the module in training mode (dropout, batch statistics).
  if (config.backward) module.train();
  else module.eval();
  if (device.is_cuda()) {
    try {
      module.to(device);
    } catch (const c10::Error& e) {
      throw ModelLoadError("model '" + config.model + "' could not be moved to " + config.device + ": " +
                           first_line(e.what_without_backtrace()));
    }
  }
  if (!module.find_method("forward"))
    throw ModelLoadError("model '" + config.model + "' has no forward() method to run");
  const auto& schema = module.get_method("forward").function().getSchema();
  size_t expected = schema.arguments().size() - 1;  // minus self
  if (config.inputs.size() != expected)
    throw UsageError("model '" + config.model + "' forward() takes " + std::to_string(expected) +
                     " input" + (expected == 1 ? "" : "s") + " (" + describe_schema(schema) +
                     "), got " + std::to_string(config.inputs.size()) + " --input");
  if (!config.convert_to.empty() && config.convert_to != "channels_last" && config.convert_to != "contiguous")
    throw std::invalid_argument("ProfileConfig::convert_to '" + config.convert_to + "'");
  run.conversion.to = config.convert_to;
  if (!config.convert_to.empty()) {
    progress("converting the parameters and buffers to " + config.convert_to);
    try {
      convert_module(module, config.convert_to, run.conversion);
    } catch (const c10::Error& e) {
      // The variant cannot run (a tensor type without that format): a failed run with no
      // calls, which says why; the other variants go on.
      run.status = "failed";
      run.error = "converting the model's parameters and buffers to " + config.convert_to +
                  " raised: " + first_line(e.what_without_backtrace());
      return trace;
    }
  }
  // The inputs as the variant gives them (the same specs when nothing is converted).
  std::vector<InputSpec> specs;
  for (const InputSpec& spec : config.inputs) {
    specs.push_back(convert_input_spec(spec, config.convert_to));
    run.conversion.inputs += specs.back().format != spec.format;
  }

  torch::manual_seed(0);  // identical inputs on every run
  check_inputs_fit(specs);
  std::vector<c10::IValue> inputs;
  for (const InputSpec& spec : specs) {
    // Built on the CPU from the seed, then moved: .to() keeps the layout (preserve format).
    at::Tensor t;
    try {
      t = make_input(spec);
      if (device.is_cuda()) t = t.to(device);
    } catch (const c10::Error& e) {  // out of memory after all (the device's, or overcommitted)
      throw UsageError("--input '" + bounded(spec.text) + "': its tensor could not be made: " +
                       first_line(e.what_without_backtrace()));
    }
    if (spec.requires_grad) {
      if (!config.backward) throw UsageError("--input '" + spec.text + "': :grad needs --backward");
      t.requires_grad_(true);  // a leaf: its gradient is computed, not recorded as a parameter's
    }
    run.inputs.push_back({spec, describe_tensor(t, static_cast<int>(run.inputs.size()))});
    inputs.emplace_back(std::move(t));
  }

  // Forward only: no autograd. A training step: forward with autograd, then backward.
  std::optional<torch::NoGradGuard> no_grad;
  if (!config.backward) no_grad.emplace();
  Recorder recorder;
  recorder.set_training(config.backward);
  {
    std::map<std::string, std::string> types;  // class name -> path, "" once two share it
    std::map<std::string, int> seen;
    for (const auto& m : module.named_modules()) {
      if (m.name.empty()) continue;  // the model itself
      const std::string type = m.value.type()->name() ? m.value.type()->name()->name() : "";
      if (++seen[type] == 1) types[type] = m.name;
      else types.erase(type);
    }
    recorder.set_module_types(std::move(types));
  }
  auto step = [&](bool mark) {
    model_step(module, inputs, config, [&] {
      if (mark) recorder.mark_backward();
    });
  };
  bool warmup_failed = false;
  for (int i = 0; i < config.warmup && !warmup_failed && !interrupt_signal(); ++i) {
    progress("warm-up " + std::to_string(i + 1) + "/" + std::to_string(config.warmup));
    try {
      step(false);
    } catch (const UsageError&) {
      throw;  // --backward on a model with nothing to differentiate
    } catch (const std::exception&) {
      warmup_failed = true;  // the recorded call below fails the same way and shows where
    }
  }

  // One untimed call learns each top-level op's module path and source line; the timed
  // calls then record without asking the interpreter (see Recorder).
  run.max_ops = config.max_ops > 0 ? config.max_ops : default_max_ops();
  recorder.set_max_ops(run.max_ops);
  std::vector<OpSite> sites;
  if (!interrupt_signal()) {
    progress("locating ops in the model's code");
    recorder.start(Recorder::Mode::sites);
    try {
      step(false);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception&) {
      // The timed call below fails the same way; the sites up to the failing op are kept.
    }
    sites = recorder.stop_sites();
    // A model that forks runs its tasks' ops in an order, and on threads, that vary between
    // calls: each timed call takes each top-level op's module and source line itself.
    recorder.set_capture_sites(recorder.saw_forks());
  }

  // Counters open after warm-up, once LibTorch's intra-op threads exist: one group each.
  std::optional<PerfCounters> counters;
  std::optional<PerfSampler> sampler;
  const std::vector<std::string> events = config.events.empty() ? PerfCounters::default_events() : config.events;
  const BandwidthEvents bandwidth =
      config.counters ? PerfCounters::bandwidth_events(config.bandwidth_events) : BandwidthEvents{};
  if (config.counters && config.sample_counters) {
    // Sampled (the default): nothing is read per op; the samples are attributed after each call.
    sampler.emplace(PerfSampler::create(events, process_threads(), bandwidth));
    run.counters = sampler->status();
    run.counter_mode = "sampled";
    run.counter_read = sampler->describe();
  } else if (config.counters) {
    counters.emplace(PerfCounters::create(events, process_threads(), bandwidth));
    run.counters = counters->status();
    run.counter_mode = "counted";
    run.counter_read = counters->read_method() + " on " + std::to_string(counters->groups().size()) +
                       " group(s), at every top-level op and copy" + counting_cost(*counters);
  }
  if (config.counters) {
    // Memory traffic: the system-wide (uncore) events, per op when counting, at intervals when sampling.
    const bool measured = std::any_of(run.counters.begin(), run.counters.end(), [](const CounterStatus& c) {
      return c.scope == "system" && c.measured;
    });
    run.bandwidth = measured ? "measured" : "derived";
    run.bandwidth_note = bandwidth.note;
    if (measured && sampler)
      run.bandwidth_note += ", read every 1 ms by a thread of layoutprof's own and shared among the ops "
                            "running in each interval by time";
    for (const CounterStatus& c : run.counters)
      if (c.scope == "system" && !c.measured) run.bandwidth_note += "; " + c.event + ": " + c.reason;
  } else {
    run.bandwidth_note = "counters turned off (--no-counters)";
  }

  std::unique_ptr<GpuTracer> gpu;
  if (device.is_cuda()) {
    std::string why;
    gpu = create_gpu_tracer(device.has_index() ? device.index() : -1, &why);
    if (gpu) run.gpu = gpu->describe();
    else run.not_measured.push_back("GPU time: " + why);
  }

  int iters = warmup_failed ? 1 : std::max(1, config.iters);
  bool sites_applied = true;
  for (int i = 0; i < iters && !interrupt_signal(); ++i) {
    progress("recorded call " + std::to_string(i + 1) + "/" + std::to_string(iters));
    // The first call records every op's tensors; the others only what the medians need.
    recorder.start(trace.calls.empty() ? Recorder::Mode::timed : Recorder::Mode::figures,
                   counters ? &*counters : nullptr, gpu.get(), sampler ? &*sampler : nullptr);
    auto t0 = std::chrono::steady_clock::now();
    bool failed = false;
    // The first training step also watches each parameter's gradient arrive.
    std::optional<GradWatch> grads;
    if (config.backward && trace.calls.empty()) grads.emplace(module, recorder);
    try {
      step(true);
      synchronize(device);  // the call is over when its kernels are
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      failed = true;
      run.status = "failed";
      run.error = model_error(e);
      try {
        synchronize(device);  // what did launch finishes before its records are flushed
      } catch (const std::exception&) {
      }
    }
    int64_t wall = elapsed_ns(t0);
    // The first call (or a failing one) is shown whole; of the others, only the figures the
    // medians need are kept, and whether they ran the first call's op sequence.
    const bool whole = trace.calls.empty() || failed;
    Call call = whole ? recorder.stop() : recorder.stop_figures(trace.calls.front());
    call.spill();  // a later call's figures go to disk: memory stays flat over --iters
    call.wall_ns = wall;
    if (grads) {
      call.parameters = grads->take();
      grads.reset();
    }
    if (whole && !call.sites_recorded) sites_applied = apply_sites(call, sites) && sites_applied;
    // The calls after the first keep no sites, except where the model forks: there each
    // call's ops are matched to the first call's by their sites (Recorder::stop_figures).
    recorder.set_capture_sites(recorder.saw_forks());
    if (!call.tensors_recorded)
      run.not_measured.push_back("tensors of the failing call " + std::to_string(i + 1) +
                                 ": calls after the first record op names and times only, so "
                                 "its ops have no shapes and its copies no class");
    trace.calls.push_back(std::move(call));
    if (failed) break;
    // The shown call waits in the spill file while the later calls run (Call::park).
    if (trace.calls.size() == 1 && i + 1 < iters) trace.calls.front().park();
  }
  recorder.release_spare();
  if (!trace.calls.empty()) trace.calls.front().unpark();
  progress("recorded calls done");
  run.calls_recorded = static_cast<int>(trace.calls.size());
  if (const int sig = interrupt_signal(); sig && run.status == "ok") {
    // Stopped between calls: the calls recorded are whole; the report says how many of how many.
    run.status = "interrupted";
    run.error = std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + " after " +
                std::to_string(trace.calls.size()) + " of " + std::to_string(iters) + " recorded calls";
  }
  run.measured = {config.backward
                      ? "op times and training step wall time (forward and backward): steady clock, "
                        "median over recorded calls"
                      : "op times and forward() wall time: steady clock, median over recorded calls",
                  "shapes, strides and layout classes of every op's tensors (recorded in the first "
                  "recorded call; the others record op names, times and counters only)",
                  "op times read with " + Recorder::op_clock()};
  if (trace.calls.size() > 1) run.measured.push_back(SpillFile::note());
  if (counters && counters->events() > 0)
    run.measured.push_back("performance counters: " + run.counter_read);
  if (sampler && sampler->events() > 0) {
    // Each sampled event's samples over the recorded calls.
    size_t k = 0;
    for (CounterStatus& st : run.counters) {
      if (!st.measured) continue;
      for (const Call& c : trace.calls)
        if (k < c.sample_totals.size()) {
          st.samples += c.sample_totals[k].samples;
          st.attributed += c.sample_totals[k].attributed;
          st.lost += c.sample_totals[k].lost;
        }
      ++k;
    }
    for (const CounterStatus& st : run.counters)
      if (st.sampled() && st.lost > 0)
        run.not_measured.push_back(st.event + ": " + std::to_string(st.lost) +
                                   " samples lost (a ring buffer was full during a call): its estimates "
                                   "undercount; a longer period (" + st.event + ":period=N) takes fewer");
    run.measured.push_back("performance counters, sampled: " + run.counter_read +
                           "; each sample charged to the top-level op and copy running on forward()'s "
                           "thread at its time (estimate = samples x period)");
  }
  if (config.backward)
    run.measured.push_back(
        "parameter gradient layouts: sizes and strides of each gradient as autograd hands it to "
        "AccumulateGrad (tensor hook), first recorded step");
  if (!sites_applied)
    run.not_measured.push_back(
        "module paths and source lines of some calls: the op sequence changed between calls");
  if (!config.counters) run.not_measured.push_back("performance counters: turned off (--no-counters)");
  int64_t not_recorded = 0;
  for (const Call& c : trace.calls) not_recorded = std::max(not_recorded, c.ops_not_recorded);
  if (not_recorded > 0)
    run.not_measured.push_back("op events past the first " + std::to_string(run.max_ops) +
                               " of a call (--max-ops): " + std::to_string(not_recorded) +
                               " were not recorded");
  if (!device.is_cuda()) run.not_measured.push_back("GPU time: CPU run (--device cuda to trace it)");
  if (gpu) {
    std::string error;
    for (const Call& c : trace.calls)
      if (!c.gpu_error.empty()) error = c.gpu_error;
    if (error.empty())
      run.measured.push_back(
          "GPU time: CUPTI activity records of the kernels, copies and memsets each top-level op and "
          "copy launched (external correlation); CUDA runtime and driver API calls are traced for "
          "that, which adds to the host time of GPU runs' ops");
    else
      run.not_measured.push_back("GPU time: " + error);
  }

  // Plain calls (ProfileConfig::timed_calls, and the caller's through `keep`): what the model
  // costs without layoutprof. The counters and the GPU tracer are closed first: nothing but
  // the model runs, as in a plain forward().
  if (run.status != "ok") return trace;
  counters.reset();
  sampler.reset();
  gpu.reset();
  auto plain = std::make_unique<LoadedModel>(module, inputs, device, config);
  if (config.timed_calls > 0) {
    std::string stopped;
    for (int i = 0; i < config.timed_calls && !interrupt_signal(); ++i) {
      progress("plain call " + std::to_string(i + 1) + "/" + std::to_string(config.timed_calls));
      try {
        run.plain_call_ns.push_back(plain->call_ns());
      } catch (const std::exception& e) {
        stopped = "plain call " + std::to_string(i + 1) + " raised (" + e.what() + ")";
        break;
      }
    }
    const std::string calls = std::to_string(run.plain_call_ns.size()) + " of " + std::to_string(config.timed_calls);
    run.measured.push_back(plain_calls_note(config.timed_calls, config.backward));
    if (!stopped.empty()) run.not_measured.push_back("plain calls after " + calls + ": " + stopped);
    if (const int sig = interrupt_signal()) {
      run.status = "interrupted";
      run.error = std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + " after " +
                  std::to_string(trace.calls.size()) + " recorded calls and " + calls + " plain calls";
      return trace;
    }
  }
  if (keep) *keep = std::move(plain);
  return trace;
}

}  // namespace layoutprof
