// Model for TorchScript archives: torch::jit::Module, with op sites from the interpreter's call
// stack as the ops run (runner/torchscript_sites.h).
#include "runner/torchscript_model.h"

#include <torch/script.h>
#include <torch/version.h>

#include <utility>

#include "support/errors.h"
#include "runner/model.h"
#include "runner/torchscript_sites.h"

namespace layoutprof {

namespace {

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path)
      : module_(std::move(module)), path_(std::move(path)), sites_(unique_module_types(module_)) {}

  const char* format() const override { return "torchscript"; }
  std::vector<std::string> input_names() const override {
    const auto& schema = module_.get_method("forward").function().getSchema();
    std::vector<std::string> names;
    for (size_t i = 1; i < schema.arguments().size(); ++i) names.push_back(schema.arguments()[i].name());  // minus self
    return names;
  }

  void to(const at::Device& device) override {
    try {
      module_.to(device);
    } catch (const c10::Error& e) {
      throw ModelLoadError("model '" + path_ + "' could not be moved to " + device.str() + ": " +
                           first_line(e.what_without_backtrace()));
    }
  }

  void set_training(bool training) override { module_.train(training); }
  ModelMode mode() const override { return {module_.is_training() ? "train" : "eval", "layoutprof", ""}; }
  std::vector<NamedTensor> named_parameters() const override { return named_tensors(module_.named_parameters(true)); }
  std::vector<NamedTensor> named_buffers() const override { return named_tensors(module_.named_buffers(true)); }
  c10::IValue forward(std::vector<c10::IValue>& inputs) override { return module_.forward(inputs); }
  std::string error_reason(const std::exception& e) const override;
  OpSiteSource& op_sites() override { return sites_; }

 private:
  torch::jit::Module module_;
  std::string path_;
  TorchScriptSites sites_;
};

// TorchScript errors start with the interpreter's traceback; the reason is the last line.
std::string TorchScriptModel::error_reason(const std::exception& e) const {
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

torch::jit::Module load_module(const std::string& path) {
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

}  // namespace

std::unique_ptr<Model> load_torchscript(const std::string& path) {
  torch::jit::Module module = load_module(path);
  if (!module.find_method("forward"))
    throw ModelLoadError("model '" + path + "' has no forward() method to run");
  return std::make_unique<TorchScriptModel>(std::move(module), path);
}

}  // namespace layoutprof
