// Op sites of a torch.export graph: each node carries its module path (nn_module_stack) and
// the Python stack that made it (stack_trace), so sites are interned once, as the executor is
// built, and current() answers with the node running now. Torch-free.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "pt2/program.h"
#include "record/op_sites.h"

namespace layoutprof {

// Where a subgraph's nodes sit: inside a higher-order op, whose module they inherit where
// export gave them none, in one of its graphs.
struct SiteContext {
  std::string module;  // the higher-order op's module path
  std::string within;  // "torch.cond's true branch"; nested ones joined by " > "
};

class Pt2Sites final : public OpSiteSource {
 public:
  Pt2Sites();
  // The ids of a node's module path and user source line (with the subgraph it is in).
  SiteId intern(const pt2::Node& node, const SiteContext& context = {});
  std::string module_of(const pt2::Node& node, const SiteContext& context) const;
  // Set by the executor before each op it calls.
  void set_current(SiteId id) { current_.store(pack(id), std::memory_order_relaxed); }

  SiteId current() override;
  std::string module_path(uint32_t module) const override;
  SourceLine source_line(uint32_t source) const override;

 private:
  static uint64_t pack(SiteId id) { return (uint64_t(id.module) << 32) | id.source; }
  uint32_t intern_in(std::vector<std::string>& names, std::map<std::string, uint32_t>& ids, const std::string& key);

  std::atomic<uint64_t> current_{0};
  std::vector<std::string> modules_;  // by id; 0: the model itself
  std::map<std::string, uint32_t> module_ids_;
  struct Source {
    std::string stack_trace;
    std::string within;
  };
  std::vector<Source> sources_;  // by id, id 0 unknown
  std::map<std::string, uint32_t> source_ids_;  // by stack trace and context
};

// The innermost module's dotted path of an nn_module_stack ("L__self__,,pkg.ResNet;
// L__self__layer1.0,layer1.0,pkg.BasicBlock" -> "layer1.0"); "" for the model itself.
std::string innermost_module_path(const std::string& nn_module_stack);
// The user's line of a stack_trace (outermost frame first, as export writes it): the innermost
// frame outside torch's own package, and the innermost frame of a source file (not code fx
// generated) where it differs.
SourceLine user_source_line(const std::string& stack_trace);

}  // namespace layoutprof
