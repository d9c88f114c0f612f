// Perf sampling as a collector: nothing per op; the samples drained after each call.
#include "counters/collectors.h"

namespace layoutprof {

bool SamplingCollector::active() const { return sampler_.events() > 0; }

void SamplingCollector::start(size_t /*ops*/) { sampler_.enable(); }

void SamplingCollector::collect(CallRecords& out) {
  out.sampling = true;
  sampler_.drain(out.drain);
  out.periods = sampler_.periods();
  out.interval_events = sampler_.interval_events();
}

void SamplingCollector::notes(RunInfo& run) const {
  run.counters.insert(run.counters.end(), sampler_.status().begin(), sampler_.status().end());
  run.counter_mode = CounterMode::sampled;
  run.counter_read = sampler_.describe();
}

}  // namespace layoutprof
