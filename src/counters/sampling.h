// Sampled counters: which op, and which of its tensors, each perf sample falls in. Plain C++
// over plain structs (no kernel, libpfm4 or torch headers): the recorder hands it the op
// events of a call and the samples its ring buffers held, and tests hand it synthetic ones.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/sampled_figure.h"
#include "core/trace.h"

namespace layoutprof {

// One sample of one sampled event, as the kernel wrote it (PERF_RECORD_SAMPLE).
struct Sample {
  uint32_t counter = 0;  // index among the measured sampled events (RunInfo::counters order)
  int32_t thread = -1;   // the recorder's thread index (0: forward()'s caller); -1: a thread
                         // that recorded no op (an intra-op pool thread running a kernel's chunk)
  int64_t time_ns = 0;   // steady clock, on the op events' time line
  uint64_t addr = 0;     // data address (PERF_SAMPLE_ADDR); 0 where the event gives none
};

// One op event as attribution sees it: when and on which thread it ran.
struct SampleSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t parent = -1;   // index in the same list; -1 at the top
  uint32_t thread = 0;   // 0: forward()'s caller
  bool counted = false;  // gets the counters: a top-level op or an aten::copy_ of thread 0
};

struct SampleAttribution {
  // Per sample: the innermost op running on its own thread at its time, else (a thread that
  // ran no recorded op then) the innermost op of thread 0; -1 when none ran.
  std::vector<int32_t> innermost;
  // Per counted span, per counter: samples charged to it. A counted span gets the samples of
  // every thread taken while it ran on thread 0, as a counting read at its start and end would
  // (nested counted spans, a copy inside its top-level op, count in both). One flat table, a
  // row per counted span: a call of many ops allocates nothing per op.
  size_t counters = 0;
  std::vector<int32_t> row;      // per span: its row in `counts`; -1 for a span not counted
  std::vector<uint64_t> counts;  // `counters` values a row
  std::vector<uint64_t> unattributed;  // per counter: samples outside every counted span

  // A counted span's `counters` values; null for a span not counted.
  const uint64_t* counted(size_t span) const {
    return row[span] < 0 ? nullptr : counts.data() + static_cast<size_t>(row[span]) * counters;
  }
};

// Attributes `samples` to `spans`. Spans of one thread nest (a child starts and ends within
// its parent); they need not be sorted. `counters` is the number of sampled events.
SampleAttribution attribute_samples(const std::vector<SampleSpan>& spans, const std::vector<Sample>& samples,
                                    size_t counters);

// One reading of system-wide counters taken at an interval (uncore memory-controller events):
// what each counted since the reading before, scaled by time_enabled / time_running.
struct IntervalReading {
  int64_t time_ns = 0;  // steady clock, on the op events' time line
  std::vector<double> delta;
  bool multiplexed = false;
};

// Spreads each interval's counts over the counted spans of thread 0 by how much of the
// interval each ran (a span nested in another gets its share in both, as a counting read at its
// start and end would). Per span, per event; empty vectors for spans not counted. The time
// before the first reading is not covered.
std::vector<std::vector<double>> attribute_intervals(const std::vector<SampleSpan>& spans,
                                                     const std::vector<IntervalReading>& readings, size_t events);

// Where a sample's data address fell: in which tensor of which op. `tensor_at(op, addr)` gives
// the tensor's slot (TensorSamples::slot) in that op whose bytes hold the address, or -1; the
// sample's innermost op is asked first, then its enclosing ops outward (a kernel's writes fall
// in its parent's output when it writes through a view). Returns the summed samples, ordered by
// (op, slot, counter).
std::vector<TensorSamples> attribute_addresses(const std::vector<SampleSpan>& spans,
                                               const std::vector<Sample>& samples,
                                               const SampleAttribution& attribution,
                                               const std::function<int(int32_t op, uint64_t addr)>& tensor_at);

// Whether `addr` lies in the bytes `t` spans: from its first element's address to its last's
// (storage + offset, strides of either sign); false for a tensor without storage.
bool tensor_holds(const TensorInfo& t, uint64_t addr);

}  // namespace layoutprof
