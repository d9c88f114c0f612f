// A stopped call's buffers, taken from the threads and put in execution order, with the GPU
// records attributed to them: what stop() and stop_figures() convert. Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/trace.h"
#include "counters/collector.h"
#include "counters/gpu.h"
#include "record/op_clock.h"
#include "record/recording_state.h"

namespace layoutprof {

// The buffers with their events put in execution order (start time; the main thread first on
// ties).
struct Collected {
  struct Ref {
    int64_t start;
    uint32_t buffer;
    int32_t local;
  };
  RecordingState* rec = nullptr;  // whose buffers they are: retired to it at the end
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // the main thread's first: thread 0
  // Several buffers: their events merged by start time, and each event's index in that
  // order. One buffer (the common case) is in order already and needs neither: 24 bytes an
  // op event less at the run's peak.
  std::vector<Ref> order;
  std::vector<std::vector<int64_t>> global_id;  // per buffer, per local index
  size_t events = 0;

  Ref ref(size_t i) const { return order.empty() ? Ref{0, 0, static_cast<int32_t>(i)} : order[i]; }
  int64_t id(uint32_t buffer, int32_t local) const { return global_id.empty() ? local : global_id[buffer][local]; }
  CallRecords records;  // what the collectors took during the call
  GpuAttribution gpu;   // its GPU records joined to the counted ops' external ids
  std::string gpu_error;
  bool gpu_traced = false;  // a call CUPTI refused has no GPU figures, not zeros
  int64_t ops_not_recorded = 0;

  Collected() = default;
  Collected(Collected&&) = default;  // the moved-from one retires nothing
  Collected& operator=(Collected&&) = delete;
  ~Collected() {
    if (rec) retire(*rec, buffers);
  }

  void fill_call_figures(Call& call) const;
  // What the op at local index `local` of buffer `b` launched on the GPU, if anything.
  GpuOpTime* launched(const ThreadBuffer& b, int32_t local);
};

// Ends `rec`'s session (end_session) and collects its buffers; stops its collectors and takes
// what they collected (the caller has synchronised the device).
Collected collect(RecordingState& rec);

// A timed call just stopped: when, its buffers, and the call with what Collected fills in.
struct StoppedCall {
  int64_t stop_tick;
  TickScale scale;
  Collected c;
  Call call;
};

// The counters a counted event read: the next of the counting collector's (the events are
// walked in start order); none when nothing counted, or it was still running at stop().
std::vector<CounterValue> event_counters(const CallRecords& records, const RawEvent& raw, size_t& next);

// Recorder::stop: the events converted (event_conversion.cpp).
Call converted_call(const RecordingState& rec, StoppedCall& s);
// Recorder::stop_figures: the figures, in `first`'s op order (figures_call.cpp).
Call figures_call(const RecordingState& rec, StoppedCall& s, const Call& first);

}  // namespace layoutprof
