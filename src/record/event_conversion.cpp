// Recorder::stop: a stopped call's raw events made the call's op events (ids, parents, times,
// tensors, sites, counters), their pages given back as they go. Torch-free.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "record/call_samples.h"
#include "record/collected.h"
#include "record/site_texts.h"

namespace layoutprof {

namespace {

// Hands the pages wholly inside [begin, end) back to the kernel (MADV_DONTNEED; they read as
// zeros if touched again). stop() releases the raw events it has converted, every
// kReleaseEvery of them (about 1 MB), so that a call's raw events and the op events made from
// them are not both whole in memory at the run's peak.
constexpr size_t kReleaseEvery = 1 << 14;
void release_pages(const void* begin, const void* end) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

// Each backward function's forward op: the last forward op that ran with the same autograd
// sequence number (a composite op and the op inside it that made the node share the number;
// the inner one is the node's maker).
void link_backward(const Collected& c, Call& call) {
  if (call.backward_from < 0) return;
  std::unordered_map<int64_t, int32_t> forward_of;  // sequence number -> forward op id
  std::vector<std::pair<int64_t, int64_t>> backward;  // (event id, sequence number)
  for (uint32_t bi = 0; bi < c.buffers.size(); ++bi)
    for (const auto& [local, seq] : c.buffers[bi]->seqs) {
      const int64_t id = c.id(bi, local);
      if (id < call.backward_from) {
        auto [it, added] = forward_of.emplace(seq, static_cast<int32_t>(id));
        if (!added) it->second = std::max(it->second, static_cast<int32_t>(id));
      } else {
        backward.emplace_back(id, seq);
      }
    }
  for (const auto& [id, seq] : backward) {
    auto it = forward_of.find(seq);
    if (it != forward_of.end()) call.events[id].forward_op = it->second;
  }
}

// The main thread's tensors become the call's as they are (nothing appends to them any
// more); other threads' buffers may still be appended to by a late op, so theirs are copied
// (EventConverter). Per buffer: its adopted tensors, or null.
std::vector<const TensorInfo*> adopt_main_tensors(Collected& c, TensorStore& store) {
  std::vector<const TensorInfo*> base(c.buffers.size(), nullptr);
  for (size_t bi = 0; bi < c.buffers.size(); ++bi)
    if (c.buffers[bi]->main) base[bi] = store.adopt(std::move(c.buffers[bi]->tensors));
  return base;
}

// A stopped call's raw events made op events, one at a time in execution order
// (Recorder::stop): per buffer, what the call adopted and the next counted event and site.
class EventConverter {
 public:
  EventConverter(Collected& c, Call& call, const RecordingState& rec, const TickScale& scale, int64_t stop_tick)
      : c_(c), call_(call), records_(c.records), scale_(scale), start_tick_(rec.start_tick), stop_tick_(stop_tick),
        base_(adopt_main_tensors(c, *call.tensors)), next_counted_(c.buffers.size()),
        next_site_(c.buffers.size()), texts_(rec.site_source) {}

  // Event `i`, at `at`: `raw` in buffer `b`. Appended to the call's events.
  OpEvent& add(size_t i, Collected::Ref at, const ThreadBuffer& b, const RawEvent& raw) {
    OpEvent& e = call_.events.emplace_back();
    set_figures(e, i, at, b, raw);
    if (static_cast<size_t>(at.local) < b.ranges.size())  // Mode::timed
      set_tensors(e, b, b.ranges[at.local], base_[at.buffer]);
    if (raw.sited && next_site_[at.buffer] < b.sites.size()) set_site(e, b.sites[next_site_[at.buffer]++].second);
    place(e, i, raw.forked, raw.sited);
    return e;
  }

 private:
  // Ids, name, counters, times, thread and GPU time.
  void set_figures(OpEvent& e, size_t i, Collected::Ref at, const ThreadBuffer& b, const RawEvent& raw) {
    e.id = static_cast<int64_t>(i);
    e.parent = raw.parent >= 0 ? c_.id(at.buffer, raw.parent) : -1;
    e.name = raw.name->str;
    e.counters = event_counters(records_, raw, next_counted_[at.buffer]);
    // Both ends through the one map, so that nesting survives the scaling.
    e.start_ns = scale_.ns(raw.start) - scale_.ns(start_tick_);
    // An op still open at stop() (the model raised past it) ends when recording stopped.
    e.duration_ns = scale_.ns(raw.end ? raw.end : stop_tick_) - scale_.ns(raw.start);
    e.thread = at.buffer;
    e.failed = raw.failed;
    if (c_.gpu_traced) {
      e.gpu_ns = 0;
      if (GpuOpTime* launched = c_.launched(b, at.local)) {
        e.gpu_ns = launched->gpu_ns;
        e.gpu_launches = launched->activities;
        e.kernels.assign(launched->kernels.begin(), launched->kernels.end());
      }
    }
  }

  // Views of the adopted tensors (the main thread's), else copies of the buffer's.
  void set_tensors(OpEvent& e, const ThreadBuffer& b, const RawTensors& r, const TensorInfo* adopted) {
    if (adopted) {
      e.inputs = TensorList(adopted + r.first_input, r.inputs);
      e.outputs = TensorList(adopted + r.first_output, r.outputs);
    } else {
      e.inputs = call_.tensors->add(b.tensors.data() + r.first_input, r.inputs);
      e.outputs = call_.tensors->add(b.tensors.data() + r.first_output, r.outputs);
    }
  }

  void set_site(OpEvent& e, SiteId id) {
    e.module = texts_.module(id);
    e.source = texts_.source(id).first;
    e.source_text = texts_.source(id).second;
  }

  // Event `i`'s parent where a pool thread recorded none, its depth, and its parent's site
  // (unless it has one of its own: an op directly inside a compiled region).
  void place(OpEvent& e, size_t i, bool forked, bool sited) {
    if (e.thread != 0 && e.parent < 0 && !forked) {
      // An op on an intra-op pool thread: its parent is the innermost main-thread op that
      // was running around it.
      for (size_t j = i; j-- > 0;) {
        const OpEvent& p = call_.events[j];
        if (p.thread == 0 && p.start_ns + p.duration_ns >= e.start_ns + e.duration_ns) {
          e.parent = p.id;
          break;
        }
      }
    }
    if (e.parent >= 0) {
      const OpEvent& p = call_.events[e.parent];
      e.depth = p.depth + 1;
      if (call_.sites_recorded && !sited) {  // nested ops belong where their top-level op does
        e.module = p.module;
        e.source = p.source;
        e.source_text = p.source_text;
      }
    }
  }

  Collected& c_;
  Call& call_;
  const CallRecords& records_;
  const TickScale& scale_;
  const int64_t start_tick_, stop_tick_;
  const std::vector<const TensorInfo*> base_;
  std::vector<size_t> next_counted_, next_site_;
  SiteTexts texts_;
};

// A converted event as the attribution of sampled counters sees it.
inline SampleSpan sample_span(const OpEvent& e, const ThreadBuffer& b, const RawEvent& raw) {
  return {e.start_ns, e.start_ns + e.duration_ns, e.parent, e.thread, counted_op(b.main, raw.parent < 0, raw.name)};
}

// Gives the pages of `b`'s raw events (and their tensor ranges) from `released` up to
// `converted` back to the kernel.
void release_converted(const ThreadBuffer& b, size_t converted, size_t& released) {
  release_pages(b.events.data() + released, b.events.data() + converted);
  if (b.ranges.size() >= converted) release_pages(b.ranges.data() + released, b.ranges.data() + converted);
  released = converted;
}

// The first op of the backward pass: the first to start after mark_backward(), or with
// set_backward_at_engine, the engine's first backward function.
bool begins_backward(const RecordingState& rec, const RawEvent& raw) {
  if (rec.backward_tick >= 0) return raw.start >= rec.backward_tick;
  static constexpr std::string_view kEngine = "autograd::engine::evaluate_function";
  return rec.backward_at_engine && std::string_view(raw.name->text).substr(0, kEngine.size()) == kEngine;
}

}  // namespace

Call converted_call(const RecordingState& rec, StoppedCall& s) {
  Collected& c = s.c;
  Call& call = s.call;
  // Op event ids are 32-bit (OpEvent): 2^31 events would need hundreds of GB before this.
  if (c.events > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw std::length_error("more than 2^31 op events in one call: set --max-ops lower");
  call.tensors_recorded = rec.mode == Recorder::Mode::timed;
  // Grown as the raw events are converted (and released), not sized at once: the two arrays
  // are never both whole in memory.
  call.events.reserve(c.events);
  call.sites_recorded = rec.capture_sites && rec.mode == Recorder::Mode::timed;
  EventConverter convert(c, call, rec, s.scale, s.stop_tick);
  size_t released = 0;  // raw events of the one buffer whose pages were released
  std::vector<SampleSpan> spans;  // sampled counters: the events as attribution sees them
  if (c.records.sampling) spans.resize(c.events);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    const OpEvent& e = convert.add(i, at, b, raw);
    if (call.backward_from < 0 && begins_backward(rec, raw)) call.backward_from = static_cast<int64_t>(i);
    if (c.records.sampling) spans[i] = sample_span(e, b, raw);
    // One buffer, the main thread's (nothing appends to it any more), is converted in its own
    // order: what is behind us goes back to the kernel.
    if (c.order.empty() && b.main && (i + 1) % kReleaseEvery == 0) release_converted(b, i + 1, released);
  }
  // Released pages read as zeros: this array must not be the next call's spare.
  if (released > 0) {
    MappedVector<RawEvent>().swap(c.buffers[0]->events);
    MappedVector<RawTensors>().swap(c.buffers[0]->ranges);
  }
  link_backward(c, call);
  if (c.records.sampling)
    attribute_call_samples(call, c, spans, s.scale.ns(rec.start_tick), s.scale.ns(s.stop_tick));
  return std::move(call);
}

}  // namespace layoutprof
