// The three collectors (counters/collector.h): adapters that hold a reference to the counters,
// sampler or GPU tracer the run opened, and outlive no call of theirs. Torch-free.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "counters/collector.h"

namespace layoutprof {

// Every event read at the start and end of each counted op (perf counting, --counters count).
class CountingCollector : public Collector {
 public:
  explicit CountingCollector(const PerfCounters& counters) : counters_(counters) {}
  bool active() const override;
  void start(size_t ops) override;
  void stop() override {}
  bool per_op() const override { return true; }
  void op_start(uint32_t op) override;
  void op_end() override;
  void collect(CallRecords& out) override;
  void notes(RunInfo& run) const override;

 private:
  int32_t snapshot();
  const PerfCounters& counters_;
  std::vector<uint64_t> snapshots_;  // PerfCounters::snapshot_size() each
  // Per counted op in start order, its snapshots' indices (start, end; -1: still running), and
  // those of the ops still running, innermost last.
  std::vector<std::pair<int32_t, int32_t>> ops_;
  std::vector<int32_t> open_;
};

// Samples taken by the kernel, drained after each call (perf sampling, the default).
class SamplingCollector : public Collector {
 public:
  explicit SamplingCollector(const PerfSampler& sampler) : sampler_(sampler) {}
  bool active() const override;
  // Enables the sampler, which stays on between calls: about 10 us an event and thread.
  void start(size_t ops) override;
  void stop() override {}
  void collect(CallRecords& out) override;
  void notes(RunInfo& run) const override;

 private:
  const PerfSampler& sampler_;
};

// Kernels, copies and sets on the GPU through CUPTI, each counted op's launches correlated by
// an external id it pushes while it runs.
class GpuCollector : public Collector {
 public:
  explicit GpuCollector(GpuTracer& tracer) : tracer_(tracer) {}
  bool active() const override { return true; }
  void start(size_t ops) override;
  void stop() override;
  bool per_op() const override { return true; }
  void op_start(uint32_t op) override;
  void op_end() override;
  bool any_thread() const override { return true; }
  bool thread_op_start(uint64_t external_id) override { return tracer_.push_on_thread(external_id); }
  void thread_op_end() override { tracer_.pop_on_thread(); }
  void collect(CallRecords& out) override;
  void notes(RunInfo& run) const override;
  // Another CUPTI client (PyTorch's profiler) is about to start: the tracer stops now, keeping
  // the call's records so far, and the calls from now on go untraced, saying `why`, until
  // resume(). From the thread that records, between ops.
  void pause(const std::string& why);
  void resume();

 private:
  GpuTracer& tracer_;
  std::vector<bool> pushed_;  // per running counted op, innermost last: whether it pushed
  GpuRecords records_;
  std::string paused_;  // why the tracer is off ("": running)
  bool running_ = false;  // the tracer runs for this call (not paused before it or during it)
};

}  // namespace layoutprof
