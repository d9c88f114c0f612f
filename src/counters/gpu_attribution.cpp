#include <algorithm>
#include <unordered_map>

#include "counters/gpu.h"

namespace layoutprof {

GpuAttribution attribute_gpu_activity(const GpuRecords& records) {
  GpuAttribution a;
  a.dropped = records.dropped;
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
    if (std::find(op.kernels.begin(), op.kernels.end(), act->name) == op.kernels.end())
      op.kernels.push_back(act->name);
  }
  return a;
}

}  // namespace layoutprof
