// TorchScriptSites: the interpreter's call stack and module hierarchy, interned per op.
#include "runner/torchscript_sites.h"

#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>

#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "support/format.h"

namespace layoutprof {

// The interpreter's call stack and module hierarchy of the op starting now, on its thread,
// interned: the module path as text (the hierarchy comes as text), the source range by where
// it points. Text is made of a range only when the call is over (source_line).
struct TorchScriptSites::Impl {
  explicit Impl(std::map<std::string, std::string> types) : types_(std::move(types)) {
    modules_.emplace_back();  // id 0: the model itself
    module_ids_.emplace("", 0);
  }

  bool running(SiteId& id) {
    auto callstack = torch::jit::currentCallstack();
    if (callstack.empty()) return false;
    std::string path = module_path(torch::jit::currentModuleHierarchy());
    std::lock_guard<std::mutex> lock(mutex_);  // a forked task's ops run on other threads
    auto module = module_ids_.find(path);
    if (module == module_ids_.end()) {
      module = module_ids_.emplace(path, static_cast<uint32_t>(modules_.size())).first;
      modules_.push_back(std::move(path));
    }
    id.module = module->second;
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
    return true;
  }

  std::string module_path(uint32_t module) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return module < modules_.size() ? modules_[module] : "";
  }

  // file:line and the line's text of the user's frame (the user's own Python file when the
  // archive has debug info), and the innermost frame's place where it differs.
  SourceLine source_line(uint32_t source) const {
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
    std::string line = trimmed(text->get_line(lineno).str());
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

TorchScriptSites::TorchScriptSites(std::map<std::string, std::string> types)
    : impl_(std::make_unique<Impl>(std::move(types))) {}

TorchScriptSites::~TorchScriptSites() = default;

bool TorchScriptSites::running(SiteId& id) { return impl_->running(id); }

SiteId TorchScriptSites::current() {
  SiteId id;
  if (!impl_->running(id)) id.module = 0;  // no TorchScript frame: the model itself
  return id;
}

std::string TorchScriptSites::module_path(uint32_t module) const { return impl_->module_path(module); }

SourceLine TorchScriptSites::source_line(uint32_t source) const { return impl_->source_line(source); }

}  // namespace layoutprof
