// A call's perf samples, drained once recording stopped, attributed to its op events: each
// counted op's counters, the call's sample totals, and where data addresses fell in the ops'
// tensors. Torch-free.
#pragma once

#include <cstdint>
#include <vector>

#include "core/trace.h"
#include "counters/counters.h"
#include "counters/sampling.h"
#include "record/collected.h"

namespace layoutprof {

// A call's perf samples on the op events' time line.
struct CallSamples {
  SamplerDrain drain;
  std::vector<Sample> samples;
  std::vector<uint64_t> periods;  // per sampled counter
  std::vector<double> scale;      // per sampled counter: time enabled / running where multiplexed, else 1
  size_t interval_events = 0;     // the uncore events after them, read at intervals
  bool intervals_multiplexed = false;  // any of their readings was
};

// A call's samples attributed to its spans (op events), and the call's sample totals filled in.
struct SampledCall {
  CallSamples samples;
  SampleAttribution attribution;
  std::vector<std::vector<double>> shares;  // per span, its share of the interval-read events; empty without

  // A counted span's counters, into `values` (reused from span to span: nothing allocated per
  // op): from its samples (raw = samples, scaled = samples x period, x the multiplexing scale),
  // then its share of the interval-read events' counts.
  void counters(size_t span, std::vector<CounterValue>& values) const;
};

// The samples of `c`'s records (taken from them) attributed to `spans`. `origin_ns`: the
// steady-clock time the op events' times count from. The sampler stays enabled between calls
// (SamplingCollector): what it took outside [from_ns, to_ns] is dropped.
SampledCall sample_call(Call& call, Collected& c, const std::vector<SampleSpan>& spans, int64_t origin_ns,
                        int64_t from_ns, int64_t to_ns);

// The shown call's samples: each counted op's counters, and where data addresses fell in the
// ops' tensors.
void attribute_call_samples(Call& call, Collected& c, const std::vector<SampleSpan>& spans, int64_t origin_ns,
                            int64_t stop_ns);

}  // namespace layoutprof
