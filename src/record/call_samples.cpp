#include "record/call_samples.h"

#include <cmath>
#include <unordered_map>
#include <utility>

namespace layoutprof {

namespace {

// The samples of `c`'s records, taken from them. `origin_ns`: the steady-clock time the op
// events' times count from. The sampler stays enabled between calls (SamplingCollector): what
// it took outside [from_ns, to_ns] is dropped.
CallSamples drain_samples(Collected& c, int64_t origin_ns, int64_t from_ns, int64_t to_ns) {
  CallSamples out;
  out.drain = std::move(c.records.drain);
  std::unordered_map<int, int32_t> thread_of;  // tid -> the call's thread index (its buffer)
  for (size_t bi = 0; bi < c.buffers.size(); ++bi) thread_of.emplace(c.buffers[bi]->tid, static_cast<int32_t>(bi));
  out.samples.reserve(out.drain.samples.size());
  for (const RawSample& r : out.drain.samples) {
    if (r.time_ns < from_ns || r.time_ns > to_ns) continue;
    auto it = thread_of.find(r.tid);
    out.samples.push_back({r.counter, it == thread_of.end() ? -1 : it->second, r.time_ns - origin_ns, r.addr});
  }
  out.periods = c.records.periods;
  out.interval_events = c.records.interval_events;
  for (IntervalReading& r : out.drain.intervals) {
    r.time_ns -= origin_ns;
    out.intervals_multiplexed = out.intervals_multiplexed || r.multiplexed;
  }
  out.scale.assign(out.periods.size(), 1.0);
  for (size_t k = 0; k < out.periods.size(); ++k)
    if (out.drain.running_ns[k] > 0 && out.drain.running_ns[k] < out.drain.enabled_ns[k])
      out.scale[k] = static_cast<double>(out.drain.enabled_ns[k]) / static_cast<double>(out.drain.running_ns[k]);
  return out;
}

// Per span, its share of the interval-read events (none where none were read).
std::vector<std::vector<double>> interval_shares(const std::vector<SampleSpan>& spans, const CallSamples& s) {
  if (s.interval_events == 0) return {};
  return attribute_intervals(spans, s.drain.intervals, s.interval_events);
}

}  // namespace

SampledCall sample_call(Call& call, Collected& c, const std::vector<SampleSpan>& spans, int64_t origin_ns,
                        int64_t from_ns, int64_t to_ns) {
  SampledCall out;
  out.samples = drain_samples(c, origin_ns, from_ns, to_ns);
  const CallSamples& s = out.samples;
  out.attribution = attribute_samples(spans, s.samples, s.periods.size());
  const SampleAttribution& a = out.attribution;
  out.shares = interval_shares(spans, s);
  call.sample_totals.assign(s.periods.size(), {});
  for (const Sample& x : s.samples)
    if (x.counter < call.sample_totals.size()) ++call.sample_totals[x.counter].samples;
  for (size_t k = 0; k < call.sample_totals.size(); ++k) {
    call.sample_totals[k].attributed = call.sample_totals[k].samples - static_cast<int64_t>(a.unattributed[k]);
    call.sample_totals[k].lost = static_cast<int64_t>(s.drain.lost[k]);
  }
  return out;
}

void SampledCall::counters(size_t span, std::vector<CounterValue>& values) const {
  const CallSamples& s = samples;
  const uint64_t* counted = attribution.counted(span);
  const size_t sampled = counted ? attribution.counters : 0;
  values.assign(sampled + s.interval_events, CounterValue{});
  for (size_t k = 0; k < sampled; ++k) {
    values[k].raw = counted[k];
    values[k].scaled = sampled_estimate(counted[k], s.periods[k]) * s.scale[k];
    values[k].multiplexed = s.scale[k] != 1.0;
  }
  if (s.interval_events == 0 || span >= shares.size()) return;
  const std::vector<double>& share = shares[span];
  for (size_t e = 0; e < s.interval_events && e < share.size(); ++e) {
    CounterValue& v = values[sampled + e];
    v.scaled = share[e];
    v.raw = static_cast<uint64_t>(std::llround(share[e]));
    v.multiplexed = s.intervals_multiplexed;
  }
}

void attribute_call_samples(Call& call, Collected& c, const std::vector<SampleSpan>& spans, int64_t origin_ns,
                            int64_t stop_ns) {
  const SampledCall sampled = sample_call(call, c, spans, origin_ns, origin_ns, stop_ns);
  std::vector<CounterValue> values;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].counted) {
      sampled.counters(i, values);
      call.events[i].counters.assign(values.begin(), values.end());
    }
  if (call.tensors_recorded)
    call.tensor_samples = attribute_addresses(spans, sampled.samples.samples, sampled.attribution, [&](int32_t op, uint64_t addr) {
      const OpEvent& e = call.events[op];
      for (size_t k = 0; k < e.outputs.size(); ++k)
        if (tensor_holds(e.outputs[k], addr)) return static_cast<int>(e.inputs.size() + k);
      for (size_t k = 0; k < e.inputs.size(); ++k)
        if (tensor_holds(e.inputs[k], addr)) return static_cast<int>(k);
      return -1;
    });
}

}  // namespace layoutprof
