// Where a TorchScript op comes from: the interpreter's call stack and module hierarchy on the
// op's thread as it starts, interned (the module path "layer1.0", the user's source line when
// the archive has debug info). The op sites of a loaded TorchScript model (the command's), and of
// the TorchScript modules a C++ program runs under a session (include/layoutprof).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "record/op_sites.h"

namespace torch {
namespace jit {
struct Module;
}  // namespace jit
}  // namespace torch

namespace layoutprof {

class TorchScriptSites final : public OpSiteSource {
 public:
  // `types`: the model's submodules by class name, for the classes one submodule alone has
  // (unique_module_types): a forked task's frames name its module by class only.
  explicit TorchScriptSites(std::map<std::string, std::string> types = {});
  ~TorchScriptSites() override;
  // Whether TorchScript code runs on the calling thread; when it does, `id` is the site of the
  // op starting there.
  bool running(SiteId& id);
  SiteId current() override;  // {0, 0} outside TorchScript code: the model itself
  std::string module_path(uint32_t module) const override;
  SourceLine source_line(uint32_t source) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The module's submodules by class name, for the classes one submodule alone has.
std::map<std::string, std::string> unique_module_types(const torch::jit::Module& module);

}  // namespace layoutprof
