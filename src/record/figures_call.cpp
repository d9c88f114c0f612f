// Recorder::stop_figures: a later call kept as only the figures the analysis takes medians of,
// in the first call's op order, matched op by op (in order, thread by thread, or by site).
// Torch-free.
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "record/call_samples.h"
#include "record/collected.h"
#include "record/site_texts.h"

namespace layoutprof {

namespace {

// Whether this call's event `i` is the first call's op `id`: the same name, and the same parent
// where the recorder knows it (an intra-op thread's outermost op gets its parent from timing,
// in stop()). `parent` is the parent's op id in the first call, or -1.
bool same_op(const OpKey& e, const RawEvent& raw, bool main, int64_t parent) {
  return e.name == raw.name->str && (parent == e.parent || (parent < 0 && !main && !raw.forked));
}

// Each event's op id in the first call, matched thread by thread: a forked task's ops
// interleave with the main thread's differently on every call, and may run on another pool
// thread, but each thread runs its ops in the same order. Empty when a thread ran other ops.
std::vector<int32_t> match_by_thread(const Collected& c, const Call& first) {
  std::map<uint32_t, std::vector<int32_t>> first_threads;  // the first call's op ids per thread
  for (size_t i = 0; i < first.events.size(); ++i) first_threads[first.key(i).thread].push_back(static_cast<int32_t>(i));
  std::vector<std::vector<int32_t>> mine(c.buffers.size());  // this call's indexes per buffer
  for (size_t i = 0; i < c.events; ++i) mine[c.ref(i).buffer].push_back(static_cast<int32_t>(i));
  std::vector<int32_t> to_first(c.events, -1);
  std::set<uint32_t> used;
  for (size_t bi = 0; bi < c.buffers.size(); ++bi) {
    const ThreadBuffer& b = *c.buffers[bi];
    const std::vector<int32_t>& list = mine[bi];  // in the buffer's own (local) order
    bool matched = false;
    for (const auto& [thread, ids] : first_threads) {
      if ((thread == 0) != b.main || used.count(thread) || ids.size() != list.size()) continue;
      bool same = true;
      for (size_t k = 0; k < ids.size() && same; ++k) {
        const RawEvent& raw = b.events[k];
        same = same_op(first.key(ids[k]), raw, b.main, raw.parent >= 0 ? ids[raw.parent] : -1);
      }
      if (!same) continue;
      for (size_t k = 0; k < ids.size(); ++k) to_first[list[k]] = ids[k];
      used.insert(thread);
      matched = true;
      break;
    }
    if (!matched) return {};
  }
  if (used.size() != first_threads.size()) return {};
  return to_first;
}

// Each event's op id in the first call, for a model that forks (the first call took its sites,
// Call::sites_recorded, and so did this one): a forked branch, and the rest of forward() after
// a wait, run on whichever thread is free, and the split of the ops over threads changes from
// call to call. A top-level op is the first call's k-th op of the same name, module and source
// line where it is this call's k-th; a nested op, the k-th child of that name of its parent;
// an intra-op thread's chunk, as stop() does, is nested in the main-thread op around it. Empty
// when any op has no counterpart.
std::vector<int32_t> match_by_site(const Collected& c, const Call& first, const OpSiteSource* site_source) {
  if (first.events_parked()) throw std::logic_error("match_by_site: the first call's events are parked");
  using Key = std::tuple<const void*, const void*, const void*, int32_t>;  // name, module, source, parent
  struct KeyHash {
    size_t operator()(const Key& k) const {
      size_t h = std::hash<const void*>()(std::get<0>(k));
      h = h * 31 + std::hash<const void*>()(std::get<1>(k));
      h = h * 31 + std::hash<const void*>()(std::get<2>(k));
      return h * 31 + std::hash<int32_t>()(std::get<3>(k));
    }
  };
  std::unordered_map<Key, std::pair<std::vector<int32_t>, size_t>, KeyHash> ids;  // ids, next
  const Str none;
  for (const OpEvent& e : first.events) {
    const Key key = e.parent < 0 ? Key{e.name.id(), e.module.id(), e.source.id(), -1}
                                 : Key{e.name.id(), none.id(), none.id(), e.parent};
    ids[key].first.push_back(e.id);
  }
  std::vector<int32_t> to_first(c.events, -1);
  std::vector<size_t> next_site(c.buffers.size(), 0);
  SiteTexts texts(site_source);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    Key key{Str(raw.name->str).id(), none.id(), none.id(), -1};
    const bool sited = raw.sited && next_site[at.buffer] < b.sites.size();
    const SiteId id = sited ? b.sites[next_site[at.buffer]++].second : SiteId{};  // nested ones' too
    if (raw.parent >= 0) {
      std::get<3>(key) = to_first[c.id(at.buffer, raw.parent)];
    } else if (sited) {
      std::get<1>(key) = texts.module(id).id();
      std::get<2>(key) = texts.source(id).first.id();
    } else if (!b.main && !raw.forked) {
      const int64_t end = raw.end ? raw.end : std::numeric_limits<int64_t>::max();
      for (size_t j = i; j-- > 0;) {
        const Collected::Ref p = c.ref(j);
        const RawEvent& outer = c.buffers[p.buffer]->events[p.local];
        if (c.buffers[p.buffer]->main && (outer.end == 0 || outer.end >= end)) {
          std::get<3>(key) = to_first[j];
          break;
        }
      }
    }
    auto it = ids.find(key);
    if (it == ids.end() || it->second.second == it->second.first.size()) return {};
    to_first[i] = it->second.first[it->second.second++];
  }
  return to_first;  // as many events as the first call's, each matched once: a permutation
}

// Each of this call's events' op id in the first call; empty where the call ran the first
// call's ops in the same order (or ran others: `same` says which).
std::vector<int32_t> first_call_order(const RecordingState& rec, const Collected& c, const Call& first, bool& same) {
  bool in_order = c.events == first.events.size();
  for (size_t i = 0; i < c.events && in_order; ++i) {
    const Collected::Ref at = c.ref(i);
    const RawEvent& raw = c.buffers[at.buffer]->events[at.local];
    in_order = same_op(first.key(i), raw, c.buffers[at.buffer]->main,
                       raw.parent >= 0 ? c.id(at.buffer, raw.parent) : -1);
  }
  std::vector<int32_t> to_first;
  if (!in_order && c.events == first.events.size())
    to_first = first.sites_recorded ? match_by_site(c, first, rec.site_source) : match_by_thread(c, first);
  same = in_order || !to_first.empty();
  return to_first;
}

// The span of the op event at `at`, for the attribution of samples.
SampleSpan sample_span(const Collected& c, const Collected::Ref& at, int64_t start_ns, int64_t end_ns) {
  const ThreadBuffer& b = *c.buffers[at.buffer];
  const RawEvent& raw = b.events[at.local];
  return {start_ns, end_ns, raw.parent >= 0 ? static_cast<int32_t>(c.id(at.buffer, raw.parent)) : -1, at.buffer,
          counted_op(b.main, raw.parent < 0, raw.name)};
}

// Whether a sampled call's drain holds anything for its ops: at in process's 20 ms clock most
// calls of a few ms took no sample, and then need no spans (one per op event) attributed. The
// sampler stays enabled between calls: a sample outside [from_ns, to_ns] (the page faults of the
// step before, say) is not the call's.
bool drained_anything(const CallRecords& r, int64_t from_ns, int64_t to_ns) {
  if (r.interval_events > 0) return true;
  for (uint64_t lost : r.drain.lost)
    if (lost > 0) return true;
  for (const RawSample& x : r.drain.samples)
    if (x.time_ns >= from_ns && x.time_ns <= to_ns) return true;
  return false;
}

// The counted ops' sampled counters, in the order the counted ops start (as read counters come).
void push_sampled_counters(const RecordingState& rec, StoppedCall& s, const std::vector<SampleSpan>& spans) {
  const SampledCall sampled =
      sample_call(s.call, s.c, spans, 0, s.scale.ns(rec.start_tick), s.scale.ns(s.stop_tick));
  if (sampled.samples.samples.empty() && sampled.samples.interval_events == 0) {
    s.call.took_no_sample = true;  // a short call at in process's rate, mostly: nothing to keep
    return;
  }
  std::vector<CounterValue> values;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!spans[i].counted) continue;
    sampled.counters(i, values);
    for (const CounterValue& v : values) s.call.counters.push_counter(v);
  }
}

}  // namespace

Call figures_call(const RecordingState& rec, StoppedCall& s, const Call& first) {
  Collected& c = s.c;
  Call& call = s.call;
  call.figures_only = true;
  // The figures go in the first call's op order: this call's, where it ran the same sequence.
  const std::vector<int32_t> to_first = first_call_order(rec, c, first, call.same_ops_as_first);
  std::vector<int64_t> durations, gpu_times;  // reordered into the first call's op order
  if (!to_first.empty()) {
    durations.resize(c.events);
    if (c.gpu_traced) gpu_times.resize(c.events);
  }
  std::vector<size_t> next_counted(c.buffers.size(), 0);
  const bool sampled =
      c.records.sampling && drained_anything(c.records, s.scale.ns(rec.start_tick), s.scale.ns(s.stop_tick));
  if (c.records.sampling && !sampled) {
    call.took_no_sample = true;
    call.sample_totals.assign(c.records.periods.size(), {});
  }
  std::vector<SampleSpan> spans;  // for the samples' attribution, where sampled
  if (sampled) spans.resize(c.events);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    const int64_t start_ns = s.scale.ns(raw.start), end_ns = s.scale.ns(raw.end ? raw.end : s.stop_tick);
    const int64_t duration = end_ns - start_ns;
    if (sampled) spans[i] = sample_span(c, at, start_ns, end_ns);
    int64_t gpu_ns = 0;
    if (c.gpu_traced) {
      const GpuOpTime* launched = c.launched(b, at.local);
      gpu_ns = launched ? launched->gpu_ns : 0;
    }
    if (!to_first.empty()) {
      durations[to_first[i]] = duration;
      if (c.gpu_traced) gpu_times[to_first[i]] = gpu_ns;
    } else {
      call.duration_ns.push_back(duration);
      if (c.gpu_traced) call.gpu_ns.push_back(gpu_ns);
    }
    // Counters are the main thread's, whose ops keep their order either way.
    for (const CounterValue& v : event_counters(c.records, raw, next_counted[at.buffer]))
      call.counters.push_counter(v);
  }
  if (sampled) push_sampled_counters(rec, s, spans);
  for (int64_t d : durations) call.duration_ns.push_back(d);
  for (int64_t g : gpu_times) call.gpu_ns.push_back(g);
  call.duration_ns.shrink_to_fit();
  call.gpu_ns.shrink_to_fit();
  call.counters.shrink_to_fit();
  return std::move(call);
}

}  // namespace layoutprof
