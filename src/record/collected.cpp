#include "record/collected.h"

#include <algorithm>
#include <tuple>

#include "counters/counters.h"

namespace layoutprof {

void Collected::fill_call_figures(Call& call) const {
  call.gpu_error = gpu_error;
  call.gpu_unattributed = gpu.unattributed;
  call.gpu_unattributed_ns = gpu.unattributed_ns;
  call.gpu_dropped = gpu.dropped;
  call.gpu_graph_uncorrelated = gpu.graph_uncorrelated;
  call.ops_not_recorded = ops_not_recorded;
}

GpuOpTime* Collected::launched(const ThreadBuffer& b, int32_t local) {
  if (!gpu_traced) return nullptr;
  auto it = gpu.by_external.find(gpu_external_id(b.main, b.ordinal, static_cast<uint32_t>(local)));
  return it == gpu.by_external.end() ? nullptr : &it->second;
}

namespace {

// Each buffer is in start order already (an event is appended as its op starts): one buffer
// needs no sort, several are merged by start time.
void merge_by_start(Collected& c) {
  const auto& buffers = c.buffers;
  if (buffers.size() <= 1) return;
  c.order.reserve(c.events);
  for (uint32_t bi = 0; bi < buffers.size(); ++bi)
    for (int32_t li = 0; li < static_cast<int32_t>(buffers[bi]->events.size()); ++li)
      c.order.push_back({buffers[bi]->events[li].start, bi, li});
  std::sort(c.order.begin(), c.order.end(), [](const Collected::Ref& a, const Collected::Ref& b) {
    return std::tie(a.start, a.buffer, a.local) < std::tie(b.start, b.buffer, b.local);
  });
  c.global_id.resize(buffers.size());
  for (uint32_t bi = 0; bi < buffers.size(); ++bi) c.global_id[bi].resize(buffers[bi]->events.size());
  for (size_t i = 0; i < c.order.size(); ++i) c.global_id[c.order[i].buffer][c.order[i].local] = i;
}

}  // namespace

Collected collect(RecordingState& rec) {
  Collected c;
  c.rec = &rec;
  c.buffers = end_session(rec);
  auto& buffers = c.buffers;
  std::stable_partition(buffers.begin(), buffers.end(), [](const auto& b) { return b->main; });
  for (const auto& b : buffers) c.events += b->events.size();
  merge_by_start(c);
  if (!buffers.empty() && buffers[0]->main) {
    std::lock_guard<std::mutex> lock(threads_mutex());
    rec.reserve_events = std::max(rec.reserve_events, buffers[0]->events.size() + 64);
  }
  for (const auto& b : buffers) c.ops_not_recorded += b->not_recorded;
  // The collectors stopped, now that the caller has synchronised the device, and what they took
  // kept; the GPU's records joined by external id (gpu_external_id) to what each op launched.
  for (Collector* collector : rec.collectors) {
    collector->stop();
    collector->collect(c.records);
  }
  if (c.records.gpu) {
    const GpuRecords& records = c.records.gpu_records;
    c.gpu_error = records.error;
    c.gpu_traced = records.traced;
    c.gpu = attribute_gpu_activity(records);
    c.records.gpu_records = GpuRecords{};
  }
  return c;
}

std::vector<CounterValue> event_counters(const CallRecords& records, const RawEvent& raw, size_t& next) {
  if (!raw.counted || !records.counting || next >= records.counted.size()) return {};
  return records.counted[next++];
}

}  // namespace layoutprof
