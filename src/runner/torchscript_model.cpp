// Model for TorchScript archives: torch::jit::Module, with op sites from the interpreter's call
// stack as the ops run.
#include "runner/torchscript_model.h"

#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>
#include <torch/version.h>

#include <map>
#include <tuple>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "support/errors.h"
#include "runner/model.h"

namespace layoutprof {

namespace {

std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// The interpreter's call stack and module hierarchy of the op starting now, on its thread,
// interned: the module path as text (the hierarchy comes as text), the source range by where
// it points. Text is made of a range only when the call is over (source_line).
class TorchScriptSites final : public OpSiteSource {
 public:
  // `types`: the model's submodules by class name, for the classes one submodule alone has.
  explicit TorchScriptSites(std::map<std::string, std::string> types) : types_(std::move(types)) {
    modules_.emplace_back();  // id 0: the model itself
    module_ids_.emplace("", 0);
  }

  SiteId current() override {
    auto callstack = torch::jit::currentCallstack();
    std::string path = module_path(torch::jit::currentModuleHierarchy());
    std::lock_guard<std::mutex> lock(mutex_);  // a forked task's ops run on other threads
    SiteId id;
    auto module = module_ids_.find(path);
    if (module == module_ids_.end()) {
      module = module_ids_.emplace(path, static_cast<uint32_t>(modules_.size())).first;
      modules_.push_back(std::move(path));
    }
    id.module = module->second;
    if (!callstack.empty()) {
      // The innermost frame, and the innermost one of the user's code (not torch's own modules).
      const torch::jit::SourceRange& inner = callstack.front().range;
      const torch::jit::SourceRange* user = &inner;
      for (const auto& frame : callstack)
        if (!in_torch(frame.range)) {
          user = &frame.range;
          break;
        }
      const RangeKey key{user->source().get(), user->start(), inner.source().get(), inner.start()};
      auto source = range_ids_.find(key);
      if (source == range_ids_.end()) {
        ranges_.push_back({*user, inner});  // keeps their Sources alive
        source = range_ids_.emplace(key, static_cast<uint32_t>(ranges_.size())).first;
      }
      id.source = source->second;
    }
    return id;
  }

  std::string module_path(uint32_t module) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return module < modules_.size() ? modules_[module] : "";
  }

  // file:line and the line's text of the user's frame (the user's own Python file when the
  // archive has debug info), and the innermost frame's place where it differs.
  SourceLine source_line(uint32_t source) const override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (source == 0 || source > ranges_.size()) return {};
    const Frames frames = ranges_[source - 1];
    lock.unlock();
    SourceLine line = line_of(frames.user);
    const SourceLine inner = line_of(frames.inner);
    if (inner.location != line.location && !inner.location.empty())
      line.text += "  (innermost: " + inner.location + ")";
    return line;
  }

 private:
  // The user's frame and the innermost one, by where they point.
  using RangeKey = std::tuple<const void*, size_t, const void*, size_t>;
  struct RangeHash {
    size_t operator()(const RangeKey& k) const {
      return (std::hash<const void*>()(std::get<0>(k)) * 31 + std::get<1>(k)) * 31 +
             std::hash<const void*>()(std::get<2>(k)) * 7 + std::get<3>(k);
    }
  };
  struct Frames {
    torch::jit::SourceRange user, inner;
  };

  static SourceLine line_of(const torch::jit::SourceRange& range) {
    auto original = range.findSourceRangeThatGenerated();
    const torch::jit::SourceRange& r = original ? *original : range;
    auto text = r.source();
    if (!text) return {};
    size_t lineno = text->lineno_for_offset(r.start());
    std::string line = trim(text->get_line(lineno).str());
    auto flc = r.file_line_col();
    if (!flc) return {"<code>:" + std::to_string(lineno + 1), line};
    return {std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)), line};
  }

  // Whether a frame is in torch's own Python (its nn modules, functional): decided once per
  // source, by the file the archive's debug info says the code came from.
  bool in_torch(const torch::jit::SourceRange& range) {
    const void* key = range.source().get();
    auto it = in_torch_.find(key);
    if (it != in_torch_.end()) return it->second;
    auto original = range.findSourceRangeThatGenerated();
    auto flc = (original ? *original : range).file_line_col();
    const std::string file = flc ? std::get<0>(*flc) : "";
    const bool torch_file = file.find("/torch/") != std::string::npos || file.rfind("torch/", 0) == 0;
    return in_torch_.emplace(key, torch_file).first->second;
  }

  // currentModuleHierarchy() has one entry per TorchScript frame: "TOP(ResNet)::forward",
  // "SELF(ResNet)::_forward_impl" (a method of the same module), "layer1(Sequential)::forward",
  // "::batch_norm" (a free function). Only the named submodule entries make the path: "layer1.0".
  std::string module_path(const std::vector<std::string>& hierarchy) const {
    std::string path;
    for (size_t i = 0; i < hierarchy.size(); ++i) {
      const std::string& entry = hierarchy[i];
      auto paren = entry.find('(');
      if (paren == std::string::npos || paren == 0) continue;
      std::string name = entry.substr(0, paren);
      if (i == 0 && name == "TOP" && entry.find("::<forked function>") != std::string::npos) {
        // A forked task's frames start at the module it forked, named by its type alone
        // ("TOP(ForkBranch)::<forked function>"): its path in the model, where the type is one
        // submodule's, else the type in angle brackets.
        const std::string type = entry.substr(paren + 1, entry.find(')', paren) - paren - 1);
        auto it = types_.find(type);
        path = it != types_.end() ? it->second : "<" + type + ">";
        continue;
      }
      if (name == "TOP" || name == "SELF") continue;
      path += (path.empty() ? "" : ".") + name;
    }
    return path;
  }

  const std::map<std::string, std::string> types_;  // written before any op runs
  mutable std::mutex mutex_;
  std::vector<std::string> modules_;
  std::unordered_map<std::string, uint32_t> module_ids_;
  std::vector<Frames> ranges_;  // id - 1
  std::unordered_map<RangeKey, uint32_t, RangeHash> range_ids_;
  std::unordered_map<const void*, bool> in_torch_;
};

// The model's submodules by class name, for the classes that one submodule alone has: the
// interpreter names a forked task's module by its class only.
std::map<std::string, std::string> unique_module_types(const torch::jit::Module& module) {
  std::map<std::string, std::string> types;  // class name -> path, "" once two share it
  std::map<std::string, int> seen;
  for (const auto& m : module.named_modules()) {
    if (m.name.empty()) continue;  // the model itself
    const std::string type = m.value.type()->name() ? m.value.type()->name()->name() : "";
    if (++seen[type] == 1) types[type] = m.name;
    else types.erase(type);
  }
  return types;
}

// A named_parameters() or named_buffers() list, as handles.
template <typename List>
std::vector<NamedTensor> named(const List& list) {
  std::vector<NamedTensor> out;
  for (const auto& t : list) out.push_back({t.name, t.value});
  return out;
}

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
  std::vector<NamedTensor> named_parameters() const override { return named(module_.named_parameters(true)); }
  std::vector<NamedTensor> named_buffers() const override { return named(module_.named_buffers(true)); }
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
