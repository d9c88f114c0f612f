// Runs a torch.export graph (pt2/program.h) node by node through c10's dispatcher, so that the
// recorder's RecordFunction observer sees every aten op the graph calls, with the layouts eager
// PyTorch would give them. Built once per graph: every op is resolved and every argument
// planned at construction (an op this LibTorch lacks is refused there, not mid-run); a run
// only fills a value table and calls.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <c10/core/MemoryFormat.h>

#include <memory>
#include <string>
#include <vector>

#include "pt2/program.h"

namespace layoutprof {

class Pt2Sites;
struct Pt2Step;
struct SiteContext;

class Pt2Executor {
 public:
  // Throws ModelLoadError, one line naming the node, for what it cannot run: an op this
  // LibTorch does not have, an argument kind or node kind layoutprof does not run, a value used
  // before it is defined. `sites` names each node's op site (lives as long as the executor).
  Pt2Executor(const pt2::Graph& graph, Pt2Sites& sites);
  ~Pt2Executor();
  Pt2Executor(Pt2Executor&&) noexcept;

  // The graph's outputs for its inputs (as many as graph.inputs, in order).
  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) const;
  // Device arguments of factory ops (device=cpu) go to `device` instead, once the model moved.
  void set_device(const c10::Device& device) { *device_ = device; }
  // The what-if's line fixes (report_model/fix_action.h) on every node of this graph (not its
  // subgraphs') that runs `op` (aten::permute) at the source line `where` (file:line): its
  // result made dense in `format` (.contiguous(memory_format=...) through the dispatcher, an
  // explicit copy the recorder sees), or its first two operands swapped. Returns how many
  // nodes it changed; -1, changing none, where the line runs that op twice in one module (the
  // fix names no one of them).
  enum class LineFix { contiguous, swap };
  int fix_line(LineFix fix, const std::string& op, const std::string& where, c10::MemoryFormat format);

 private:
  struct Planner;  // what each node becomes (pt2_executor.cpp)
  friend struct Planner;
  // A nested graph's executor shares its parent's sites and device; its ops' sites say which
  // higher-order op's graph they are in.
  Pt2Executor(const pt2::Graph& graph, Pt2Sites& sites, std::shared_ptr<c10::Device> device,
              const SiteContext& context);
  void plan_frees();

  std::vector<int> input_slots_;   // -1: an input with no name (a constant)
  std::vector<int> output_slots_;  // -1: a constant output (kept in output_constants_)
  std::vector<c10::IValue> output_constants_;
  std::vector<std::unique_ptr<Pt2Step>> steps_;
  size_t slots_ = 0;
  std::shared_ptr<c10::Device> device_;
};

}  // namespace layoutprof
