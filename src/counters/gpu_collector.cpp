// CUPTI as a collector: each counted op pushes its external id while it runs; the records
// flushed after the call (the device synchronised).
#include "counters/collectors.h"

namespace layoutprof {

void GpuCollector::start(size_t /*ops*/) {
  pushed_.clear();
  pushed_.reserve(64);
  records_ = GpuRecords{};
  running_ = paused_.empty();
  if (running_) tracer_.start();
  else records_.error = paused_;  // untraced: no GPU figures, the reason instead
}

void GpuCollector::stop() {
  if (running_) records_ = tracer_.stop();
  running_ = false;
}

void GpuCollector::pause(const std::string& why) {
  if (!paused_.empty()) return;
  paused_ = why;
  if (!running_) return;  // between calls
  records_ = tracer_.stop();
  running_ = false;
  // The records up to now are this call's; the ops after them went untraced.
  if (records_.traced && records_.error.empty()) records_.error = "part of a call: " + why;
}

void GpuCollector::resume() { paused_.clear(); }

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
