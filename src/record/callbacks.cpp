// The RecordFunction callbacks: the recorder's hot path, on every thread that runs an op.
#include "record/callbacks.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>

#include "counters/collector.h"
#include "counters/gpu.h"
#include "record/op_clock.h"
#include "record/recording_state.h"
#include "record/tensor_capture.h"

namespace layoutprof {

namespace {

thread_local ThreadBuffer* t_buffer = nullptr;
thread_local uint64_t t_session = 0;
thread_local bool t_paused = false;  // pause_thread()

// The calling thread's buffer of the active session, or null when nothing records (and in a
// process forked from a recording one, which records nothing: g_forked_child; and while the
// thread is paused).
inline ThreadBuffer* thread_buffer() {
  if (C10_UNLIKELY(t_paused)) return nullptr;
  const uint64_t session = g_session.load(std::memory_order_acquire);
  if (C10_UNLIKELY(t_buffer == nullptr || t_session != session))
    t_buffer = g_forked_child.load(std::memory_order_relaxed) ? nullptr : join_session(t_session);
  return t_buffer;
}

// An op that starts a task's own work on a thread other than forward()'s caller: a forked
// branch, or the rest of forward() after a wait. Intra-op parallel regions run chunks of the
// op that started them, nested under it.
bool task_top_level(const ThreadBuffer& b) { return !b.main && b.stack.empty() && !at::in_parallel_region(); }

// A main-thread op directly inside a compiled region: its own site (the compiled code's line,
// which the front end maps to the user's), not the region's call.
inline bool in_region(const ThreadBuffer& b) {
  return b.main && b.stack.size() == 1 && b.stack.back() >= 0 && b.events[b.stack.back()].name->is_region;
}

// The op starting now runs directly inside a Python autograd node (a custom Function's
// backward), on whatever thread the engine runs it (the one that called backward() on the CPU,
// a device's own thread on a GPU; the node holds the GIL, so the Python frames are the
// backward's): it takes a site of its own, the line of the user's backward code, not the
// `.backward()` line its engine record has.
inline bool in_python_node(const ThreadBuffer& b) {
  return b.stack.size() == 2 && b.stack.back() >= 0 && b.events[b.stack.back()].name->is_python_node;
}

// Where the op starting now comes from, as ids of the model's front end (resolved at stop).
void take_site(ThreadBuffer& b, const Name* name) {
  OpSiteSource* source = b.rec->site_source;
  b.sites.emplace_back(name, source ? source->current() : SiteId{});
}

// A nested op that raised, innermost first: where the code that called it is, taken as the
// exception passes (the Python frames that called it are still there). A Python backward
// function's or hook's failing op runs nested in autograd's records, whose site is the
// `.backward()` line (unless it runs directly in a Python node: in_python_node). Only on
// failure: other nested ops take no site. The ops around it,
// which fail with it, started earlier and keep theirs; so the sites stay in event order.
void site_failure(ThreadBuffer& b, RawEvent& e, int32_t index) {
  const bool inner_sited = b.failure_sited > index;  // events after `index` are nested in it
  if (e.sited || !b.rec->capture_sites || inner_sited || b.sites.size() >= b.rec->max_events) return;
  take_site(b, e.name);
  e.sited = true;
  b.failure_sited = index;
}

// A counted op starts: the collectors that work per op hook it (counters read, a GPU
// correlation id pushed).
inline void open_counted(const ThreadBuffer& b, RawEvent& e, int32_t index) {
  const std::vector<Collector*>& hooks = b.rec->per_op;
  if (hooks.empty()) return;
  e.counted = true;
  for (Collector* c : hooks) c->op_start(static_cast<uint32_t>(index));
}

// Another thread's top-level op or copy starts: the any-thread collector (GPU ids) hooks it.
inline void open_thread_hooked(const ThreadBuffer& b, RawEvent& e, int32_t index) {
  const uint64_t id = gpu_external_id(false, b.ordinal, static_cast<uint32_t>(index));
  e.thread_hooked = id != 0 && b.rec->any_thread->thread_op_start(id);
}

// It ends: the same, in reverse order.
inline void close_counted(const ThreadBuffer& b) {
  const std::vector<Collector*>& hooks = b.rec->per_op;
  for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)->op_end();
}

template <bool kTensors>
std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ThreadBuffer* buffer = thread_buffer();
  if (!buffer) return nullptr;
  ThreadBuffer& b = *buffer;
  InFlight in_flight(b);
  if (!in_flight) return nullptr;
  const RecordingState& rec = *b.rec;
  if (C10_UNLIKELY(b.events.size() >= rec.max_events)) {
    if (rec.window && b.stack.empty()) {
      keep_recent(b);  // a ring of the recent ops: the older half goes, this op is recorded
    } else {
      ++b.not_recorded;
      b.stack.push_back(-1);  // popped by on_op_end; ops nested in it are past the limit too
      return nullptr;
    }
  }
  RawEvent e;
  e.name = b.intern(fn.name());
  const bool top = b.stack.empty();
  e.parent = top ? -1 : b.stack.back();
  e.uncaught = static_cast<uint16_t>(std::min(b.uncaught.now(), 65535u));
  if (kTensors) {
    const auto first = static_cast<uint32_t>(b.tensors.size());
    auto inputs = own_values(fn.inputs(), fn.num_inputs());
    for (size_t i = 0; i < inputs.size(); ++i) append_value(b, inputs[i], static_cast<int>(i));
    b.ranges.push_back({first, static_cast<uint32_t>(b.tensors.size()) - first, 0, 0});
  }
  e.end = 0;
  e.failed = false;
  e.counted = false;
  e.forked = top && task_top_level(b);
  e.sited = false;
  e.thread_hooked = false;
  if (C10_UNLIKELY(rec.capture_sites) && ((top && (b.main || e.forked)) || in_region(b) || in_python_node(b))) {
    take_site(b, e.name);  // before the op's time starts
    e.sited = true;
  }
  const auto index = static_cast<int32_t>(b.events.size());
  if (counted_op(b.main, top, e.name))
    open_counted(b, e, index);
  else if (C10_UNLIKELY(rec.any_thread != nullptr) && !b.main && (top || e.name->is_copy))
    open_thread_hooked(b, e, index);
  if (rec.training && fn.seqNr() >= 0) b.seqs.emplace_back(index, fn.seqNr());
  e.start = ticks();  // last, so that recording the inputs stays outside the op's time
  b.events.push_back(e);
  b.stack.push_back(index);  // only once the event exists: on_op_end pops what is there
  return nullptr;
}

template <bool kTensors>
void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const int64_t end = ticks();
  ThreadBuffer* buffer = thread_buffer();
  if (!buffer) return;
  ThreadBuffer& b = *buffer;
  InFlight in_flight(b);
  if (!in_flight || b.stack.empty()) return;  // stopped, or the op began before this session
  const int32_t index = b.stack.back();
  b.stack.pop_back();
  if (index < 0) return;  // not recorded: past --max-ops
  RawEvent& e = b.events[index];
  e.end = end;
  if (e.counted) close_counted(b);
  if (e.thread_hooked) b.rec->any_thread->thread_op_end();
  e.failed = b.uncaught.now() > e.uncaught;
  if (C10_UNLIKELY(e.failed)) site_failure(b, e, index);
  if (kTensors) {
    RawTensors& r = b.ranges[index];
    r.first_output = static_cast<uint32_t>(b.tensors.size());
    c10::ArrayRef<c10::IValue> all(fn.outputs());
    auto outputs = own_values(all, fn.num_outputs());
    for (size_t i = 0; i < outputs.size(); ++i) append_value(b, outputs[i], static_cast<int>(i));
    r.outputs = static_cast<uint32_t>(b.tensors.size()) - r.first_output;
  }
}

std::unique_ptr<at::ObserverContext> on_site_start(const at::RecordFunction& fn) {
  ThreadBuffer* buffer = thread_buffer();
  if (!buffer) return nullptr;
  ThreadBuffer& b = *buffer;
  InFlight in_flight(b);
  if (!in_flight) return nullptr;
  const Name* name = b.intern(fn.name());
  ++b.site_events;
  b.site_tensors += count_tensors(own_values(fn.inputs(), fn.num_inputs()));
  if (b.stack.empty() && b.main && b.sites.size() < b.rec->max_events) take_site(b, name);
  if (task_top_level(b)) b.rec->forks_seen.store(true, std::memory_order_relaxed);
  b.stack.push_back(0);
  return nullptr;
}

void on_site_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadBuffer* buffer = thread_buffer();
  if (!buffer) return;
  ThreadBuffer& b = *buffer;
  InFlight in_flight(b);
  if (!in_flight) return;
  c10::ArrayRef<c10::IValue> all(fn.outputs());
  b.site_tensors += count_tensors(own_values(all, fn.num_outputs()));
  if (!b.stack.empty()) b.stack.pop_back();
}

}  // namespace

void pause_thread(bool paused) { t_paused = paused; }

uint64_t add_callbacks(const RecordingState& rec) {
  // Mode::figures leaves the inputs and outputs unboxed: RecordFunction packs them into
  // IValues only for a callback that needs them, and that is most of what it costs.
  auto callback = rec.mode == Recorder::Mode::timed
                      ? at::RecordFunctionCallback(on_op_start<true>, on_op_end<true>)
                            .needsInputs(true)
                            .needsOutputs(true)
                  : rec.mode == Recorder::Mode::figures
                      ? at::RecordFunctionCallback(on_op_start<false>, on_op_end<false>)
                      : at::RecordFunctionCallback(on_site_start, on_site_end).needsInputs(true).needsOutputs(true);
  // Training steps: the autograd engine's backward functions too (the ops they run are
  // FUNCTION ops nested in them).
  if (rec.training)
    return at::addGlobalCallback(callback.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  return at::addGlobalCallback(callback.scopes({at::RecordScope::FUNCTION}));
}

void remove_callbacks(uint64_t handle) { at::removeCallback(handle); }

}  // namespace layoutprof
