#include <algorithm>
#include <unordered_map>

#include "counters/gpu.h"

namespace layoutprof {

namespace {

// A graph's node is named with its graph and node ids: the replay op lists each node it ran.
std::string graph_node_name(const GpuActivity& act) {
  if (act.graph == 0) return act.name;
  return act.name + " [graph " + std::to_string(act.graph) + " node " + std::to_string(act.graph_node) + "]";
}

}  // namespace

GpuAttribution attribute_gpu_activity(const GpuRecords& records) {
  GpuAttribution a;
  a.dropped = records.dropped;
  a.graph_uncorrelated = records.graph_uncorrelated;
  std::unordered_map<uint32_t, uint64_t> external_of;
  for (const GpuCorrelation& c : records.correlations) external_of[c.correlation] = c.external;
  // Launch order within an op: by start time, whatever order the buffers came in.
  std::vector<const GpuActivity*> sorted;
  for (const GpuActivity& act : records.activities) sorted.push_back(&act);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const GpuActivity* x, const GpuActivity* y) { return x->start_ns < y->start_ns; });
  for (const GpuActivity* act : sorted) {
    int64_t ns = act->end_ns > act->start_ns ? act->end_ns - act->start_ns : 0;
    auto it = external_of.find(act->correlation);
    if (it == external_of.end()) {
      a.unattributed++;
      a.unattributed_ns += ns;
      continue;
    }
    GpuOpTime& op = a.by_external[it->second];
    op.gpu_ns += ns;
    op.activities++;
    const std::string name = graph_node_name(*act);
    if (std::find(op.kernels.begin(), op.kernels.end(), name) == op.kernels.end()) op.kernels.push_back(name);
  }
  return a;
}

}  // namespace layoutprof
