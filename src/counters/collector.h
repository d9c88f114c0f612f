// One source of figures beside the recorder's own clock, as kineto's child activity profilers
// are: perf counting, perf sampling and CUPTI each implement it (counters/collectors.h). The
// recorder holds a list: it starts and stops each around every timed call, lets those that
// work per op hook the main thread's counted ops (top-level ops and copies), and after the
// call takes what each collected into one CallRecords, which it joins to the op events. The
// run asks each for its notes. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/trace.h"
#include "counters/counters.h"
#include "counters/gpu.h"

namespace layoutprof {

// What the collectors took during one recorded call, before it is joined to ops.
struct CallRecords {
  // Counting: per counted op, in the order the ops started, the counts over it (empty for an
  // op still running at stop).
  bool counting = false;
  std::vector<std::vector<CounterValue>> counted;
  // Sampling: the samples and interval readings drained, each sampled event's period, and the
  // interval-read events after the sampled ones.
  bool sampling = false;
  SamplerDrain drain;
  std::vector<uint64_t> periods;
  size_t interval_events = 0;
  // GPU: CUPTI's records; the external id of a counted op is its index in the main thread's
  // events + 1.
  bool gpu = false;
  GpuRecords gpu_records;
};

class Collector {
 public:
  virtual ~Collector() = default;
  // Whether it collects anything (an event opened, a device traced): the recorder leaves out
  // those that do not.
  virtual bool active() const = 0;
  // Before a timed call's first op, on the thread that runs it; `ops`: about how many ops the
  // main thread will run (to size what is written per op before the call, not inside it).
  virtual void start(size_t ops) = 0;
  // After the call's last op (and the device synchronised).
  virtual void stop() = 0;
  // Whether it wants op_start() and op_end().
  virtual bool per_op() const { return false; }
  // The main thread's counted op at index `op` of its events starts; ends (nested ones end
  // first). On the recorder's hot path.
  virtual void op_start(uint32_t /*op*/) {}
  virtual void op_end() {}
  // Whether it also hooks the top-level ops (and copies) of the call's other threads, from
  // those threads, several at once: thread_op_start() gets the op's external id
  // (gpu_external_id) and returns whether it hooked it; thread_op_end() is called for those it
  // did, on the same thread. At most one such collector per call.
  virtual bool any_thread() const { return false; }
  virtual bool thread_op_start(uint64_t /*external_id*/) { return false; }
  virtual void thread_op_end() {}
  // After stop(): what it took during the call, into its part of `out`.
  virtual void collect(CallRecords& out) = 0;
  // What the run's report says of it: its events' statuses, how they were read, the device.
  virtual void notes(RunInfo& run) const = 0;
};

}  // namespace layoutprof
