// CUPTI as a collector: each counted op pushes its external id while it runs; the records
// flushed after the call (the device synchronised).
#include "counters/collectors.h"

namespace layoutprof {

void GpuCollector::start(size_t /*ops*/) {
  pushed_.clear();
  pushed_.reserve(64);
  records_ = GpuRecords{};
  tracer_.start();
}

void GpuCollector::stop() { records_ = tracer_.stop(); }

void GpuCollector::op_start(uint32_t op) {
  const uint64_t id = gpu_external_id(true, 0, op);
  pushed_.push_back(id != 0 && tracer_.push(id));
}

void GpuCollector::op_end() {
  if (pushed_.empty()) return;
  if (pushed_.back()) tracer_.pop();
  pushed_.pop_back();
}

void GpuCollector::collect(CallRecords& out) {
  out.gpu = true;
  out.gpu_records = std::move(records_);
}

void GpuCollector::notes(RunInfo& run) const { run.gpu = tracer_.describe(); }

}  // namespace layoutprof
