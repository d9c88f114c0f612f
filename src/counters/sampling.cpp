#include "counters/sampling.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace layoutprof {

namespace {

// For each query time (sorted), the innermost span of `order` (one thread's spans, sorted by
// start, nesting) running then: a sweep with a stack of the spans open at that time.
void innermost_at(const std::vector<SampleSpan>& spans, const std::vector<int32_t>& order,
                  const std::vector<std::pair<int64_t, size_t>>& times, std::vector<int32_t>& out) {
  std::vector<int32_t> open;
  size_t next = 0;
  for (const auto& [t, sample] : times) {
    while (next < order.size() && spans[order[next]].start_ns <= t) {
      const SampleSpan& s = spans[order[next]];
      while (!open.empty() && spans[open.back()].end_ns < s.start_ns) open.pop_back();
      open.push_back(order[next++]);
    }
    while (!open.empty() && spans[open.back()].end_ns < t) open.pop_back();
    out[sample] = open.empty() ? -1 : open.back();
  }
}

}  // namespace

SampleAttribution attribute_samples(const std::vector<SampleSpan>& spans, const std::vector<Sample>& samples,
                                    size_t counters) {
  SampleAttribution a;
  a.innermost.assign(samples.size(), -1);
  a.counters = counters;
  a.row.assign(spans.size(), -1);
  int32_t rows = 0;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].counted) a.row[i] = rows++;
  a.counts.assign(static_cast<size_t>(rows) * counters, 0);
  a.unattributed.assign(counters, 0);
  if (samples.empty()) return a;  // most calls of a short model: nothing to place

  std::map<uint32_t, std::vector<int32_t>> by_thread;  // spans of each thread, by start
  for (size_t i = 0; i < spans.size(); ++i) by_thread[spans[i].thread].push_back(static_cast<int32_t>(i));
  // By start, the longer first on a tie (a parent before its child); the recorder's spans come
  // in start order already, and then need no sort.
  auto before = [&](int32_t x, int32_t y) {
    return std::tie(spans[x].start_ns, spans[y].end_ns) < std::tie(spans[y].start_ns, spans[x].end_ns);
  };
  for (auto& [thread, order] : by_thread)
    if (!std::is_sorted(order.begin(), order.end(), before)) std::stable_sort(order.begin(), order.end(), before);

  // Thread 0's innermost op at every sample's time: what the sample is charged to.
  std::vector<std::pair<int64_t, size_t>> all;
  all.reserve(samples.size());
  for (size_t k = 0; k < samples.size(); ++k) all.emplace_back(samples[k].time_ns, k);
  std::sort(all.begin(), all.end());
  std::vector<int32_t> on_main(samples.size(), -1);
  innermost_at(spans, by_thread[0], all, on_main);

  // Each other thread's samples against its own ops.
  std::map<int32_t, std::vector<std::pair<int64_t, size_t>>> per_thread;
  for (const auto& [t, k] : all)
    if (samples[k].thread > 0 && by_thread.count(static_cast<uint32_t>(samples[k].thread)))
      per_thread[samples[k].thread].emplace_back(t, k);
  std::vector<int32_t> own(samples.size(), -1);
  for (const auto& [thread, times] : per_thread) innermost_at(spans, by_thread[static_cast<uint32_t>(thread)], times, own);

  for (size_t k = 0; k < samples.size(); ++k) {
    const Sample& s = samples[k];
    a.innermost[k] = own[k] >= 0 ? own[k] : on_main[k];
    if (s.counter >= counters) continue;
    bool charged = false;
    for (int32_t at = on_main[k]; at >= 0; at = spans[at].parent)
      if (spans[at].counted) {
        ++a.counts[static_cast<size_t>(a.row[at]) * counters + s.counter];
        charged = true;
      }
    if (!charged) ++a.unattributed[s.counter];
  }
  return a;
}

std::vector<TensorSamples> attribute_addresses(const std::vector<SampleSpan>& spans,
                                               const std::vector<Sample>& samples,
                                               const SampleAttribution& attribution,
                                               const std::function<int(int32_t, uint64_t)>& tensor_at) {
  std::map<std::tuple<int32_t, int32_t, uint32_t>, uint64_t> found;
  for (size_t k = 0; k < samples.size() && k < attribution.innermost.size(); ++k) {
    if (samples[k].addr == 0) continue;
    for (int32_t at = attribution.innermost[k]; at >= 0; at = spans[at].parent) {
      const int slot = tensor_at(at, samples[k].addr);
      if (slot >= 0) {
        ++found[{at, slot, samples[k].counter}];
        break;
      }
    }
  }
  std::vector<TensorSamples> out;
  out.reserve(found.size());
  for (const auto& [key, n] : found) out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  return out;
}

std::vector<std::vector<double>> attribute_intervals(const std::vector<SampleSpan>& spans,
                                                     const std::vector<IntervalReading>& readings, size_t events) {
  std::vector<std::vector<double>> out(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const SampleSpan& s = spans[i];
    if (!s.counted) continue;
    out[i].assign(events, 0.0);
    // Interval k runs from reading k - 1 to reading k: from the one holding the span's start.
    auto it = std::upper_bound(readings.begin(), readings.end(), s.start_ns,
                               [](int64_t t, const IntervalReading& r) { return t < r.time_ns; });
    for (size_t k = std::max<size_t>(1, static_cast<size_t>(it - readings.begin()));
         k < readings.size() && readings[k - 1].time_ns <= s.end_ns; ++k) {
      const int64_t from = readings[k - 1].time_ns, to = readings[k].time_ns;
      const int64_t overlap = std::min(to, s.end_ns) - std::max(from, s.start_ns);
      if (overlap <= 0 || to <= from) continue;
      const double share = static_cast<double>(overlap) / static_cast<double>(to - from);
      for (size_t e = 0; e < events && e < readings[k].delta.size(); ++e) out[i][e] += readings[k].delta[e] * share;
    }
  }
  return out;
}

bool tensor_holds(const TensorInfo& t, uint64_t addr) {
  if (t.storage == 0 || t.elem_size() <= 0) return false;
  const auto& sizes = t.sizes();
  const auto& strides = t.strides();
  if (strides.size() != sizes.size()) return false;
  // The lowest and highest element offsets the tensor reaches.
  __int128 lo = t.storage_offset, hi = t.storage_offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] <= 0) return false;  // no elements
    const __int128 reach = static_cast<__int128>(sizes[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const __int128 base = static_cast<__int128>(t.storage);
  const __int128 first = base + lo * t.elem_size();
  const __int128 last = base + (hi + 1) * t.elem_size();  // one past the last element's bytes
  return static_cast<__int128>(addr) >= first && static_cast<__int128>(addr) < last;
}

}  // namespace layoutprof
