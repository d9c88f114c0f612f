// Trace -> Report: op tree, copy classes, provenance, split points, module aggregates.
#pragma once

#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

// Bytes of an op's tensors, inputs and outputs: what it could have read and written.
int64_t tensor_bytes(const OpEvent& op);
// Sums counters element-wise into `total` (sized on first use).
void add_counters(std::vector<CounterValue>& total, const CompactVector<CounterValue>& add);

// Names of ops whose copies are the code's own request (explicit_layout).
bool is_explicit_copy_op(const std::string& op_name);

// Classifies one aten::copy_ by the rules in order: dtype_device, broadcast, same_layout,
// then explicit_layout or implicit_layout by the culprit's name.
CopyClass classify_copy(const TensorInfo& src, const TensorInfo& dst,
                        const std::string& culprit_name);

// Builds the whole report. The op list is the first recorded call; durations are medians over
// the calls when they ran the same op sequence.
// Takes the trace by value: a run's trace is moved in, and its shown call's events become the
// report's op list without a copy.
Report analyze(Trace trace);
// A recorded call reduced to the figures analyze() takes medians of (durations, counters, GPU
// times), checked against the first call's op sequence: what the runner keeps of every call
// after the first, so that memory stays flat over --iters.
Call keep_figures_only(const Call& call, const Call& first);

}  // namespace layoutprof

namespace layoutprof {

// The tensor an op mainly works on: its first tensor argument (nullptr when it has none).
const TensorInfo* main_input(const OpEvent& op);
// Every tensor the op reads (of more than one element) is contiguous: a layout copy it makes is
// of a view it made itself, inside a library op (nn.GRU's, the fused attention's head merge).
bool reads_only_contiguous(const OpEvent& op);
// DistributedDataParallel's reducer (its records "torch.distributed.ddp.reducer::..."): its copies
// between a gradient bucket and .grad follow from the gradient layouts (analysis/grads.h).
inline bool is_ddp_reducer(const std::string& op_name) {
  return op_name.rfind("torch.distributed.ddp.reducer::", 0) == 0;
}
const TensorInfo* main_output(const OpList& ops, int64_t id);

// Per event: its top-level ancestor (itself for top-level ops).
std::vector<int64_t> top_level_ancestors(const OpList& ops);

// Tensor inputs of an op that are not in the contiguous class.
int64_t noncontiguous_inputs(const OpEvent& op);

// Appends the layouts of the data flowing through a top-level op (main input, then main
// output) to a lane, skipping repeats: the layout lane of the heatmap.
void append_flow(std::vector<std::string>& lane, const OpList& ops, int64_t id);

}  // namespace layoutprof
