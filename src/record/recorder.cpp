// The Recorder: its state, the calls' start and stop, and the sites. Torch-free: the callbacks
// (callbacks.cpp) and tensor capture (tensor_capture.cpp) hold the LibTorch code.
#include "record/recorder.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "counters/collector.h"
#include "record/callbacks.h"
#include "record/collected.h"
#include "record/op_clock.h"
#include "record/recording_state.h"
#include "record/site_texts.h"

namespace layoutprof {

// All the recorder's state: the callbacks reach it while it records (recording_state.h).
struct Recorder::State : RecordingState {};

Recorder::Recorder() : state_(std::make_unique<State>()) {}

Recorder::~Recorder() {
  // Started and never stopped: the callbacks go, and the buffers, before the state does.
  if (state_->handle) {
    auto buffers = end_session(*state_);
    retire(*state_, buffers);
  }
}

void Recorder::set_max_ops(int64_t max_ops) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->max_events = max_ops > 0 ? static_cast<size_t>(max_ops) : std::numeric_limits<size_t>::max();
}

void Recorder::release_spare() {
  std::lock_guard<std::mutex> lock(threads_mutex());
  MappedVector<RawEvent>().swap(state_->spare_events);
}

void Recorder::start(Mode mode, const std::vector<Collector*>& collectors) {
  State& s = *state_;
  if (s.handle) throw std::logic_error("recorder already started");
  {
    std::lock_guard<std::mutex> lock(threads_mutex());
    s.collectors.clear();
    s.per_op.clear();
    s.any_thread = nullptr;
    for (Collector* c : collectors) {
      if (mode == Mode::sites || !c || !c->active()) continue;
      s.collectors.push_back(c);
      if (c->per_op()) s.per_op.push_back(c);
      if (c->any_thread()) s.any_thread = c;
    }
    s.mode = mode;
    s.tensors = mode == Mode::timed;
  }
  for (Collector* c : s.collectors) c->start(std::min(s.reserve_events, s.max_events));
  begin_session(s);
  if (mode == Mode::sites) s.forks_seen.store(false);
  TickScale::now();  // the process's first pair of readings, the earlier the better
  s.start_tick = ticks();
  s.start_ns = now_ns();
  s.backward_tick = -1;
  s.handle = add_callbacks(s);
}

void Recorder::set_capture_sites(bool capture) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->capture_sites = capture;
}

bool Recorder::saw_forks() const { return state_->forks_seen.load(); }

void Recorder::set_site_source(OpSiteSource* source) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->site_source = source;
}

void Recorder::set_training(bool training) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->training = training;
}

std::string Recorder::op_clock() { return op_clock_text(); }

void Recorder::mark_backward() { state_->backward_tick = ticks(); }

void Recorder::set_backward_at_engine(bool at_engine) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->backward_at_engine = at_engine;
}

int64_t Recorder::elapsed_ns() const { return now_ns() - state_->start_ns; }

std::optional<ViewMaker> Recorder::maker_of(const TensorInfo& view) const {
  const State& s = *state_;
  std::lock_guard<std::mutex> lock(threads_mutex());
  if (!s.handle || !s.tensors || std::this_thread::get_id() != s.main_thread) return std::nullopt;
  for (const auto& b : s.buffers)
    if (b->main) return find_view_maker(*b, s.site_source, view);
  return std::nullopt;
}

std::vector<OpSite> Recorder::stop_sites() {
  State& s = *state_;
  if (!s.handle || s.mode != Mode::sites) throw std::logic_error("no sites call");
  auto buffers = end_session(s);
  std::vector<OpSite> sites;
  SiteTexts texts(s.site_source);
  for (auto& b : buffers) {
    if (!b->main) continue;
    {
      // The timed calls' buffers are sized to this call's ops before they start.
      std::lock_guard<std::mutex> lock(threads_mutex());
      s.reserve_events = std::max(s.reserve_events, b->site_events + 64);
      s.reserve_tensors = std::max(s.reserve_tensors, b->site_tensors + 256);
    }
    for (const auto& [name, id] : b->sites) {
      const auto& [source, text] = texts.source(id);
      sites.push_back({name->str, texts.module(id), source, text});
    }
  }
  retire(s, buffers);
  return sites;
}

namespace {

// What stop() and stop_figures() both begin with: the time, the buffers, the call's GPU
// figures.
StoppedCall stop_timed(RecordingState& rec) {
  if (!rec.handle || rec.mode == Recorder::Mode::sites) throw std::logic_error("no timed call");
  StoppedCall s{ticks(), TickScale::now(), collect(rec), Call()};  // in this order: the time first
  s.c.fill_call_figures(s.call);
  return s;
}

}  // namespace

Call Recorder::stop() {
  StoppedCall s = stop_timed(*state_);
  return converted_call(*state_, s);
}

void Recorder::discard() {
  State& s = *state_;
  if (!s.handle || s.mode == Mode::sites) throw std::logic_error("no timed call");
  auto buffers = end_session(s);
  for (Collector* c : s.collectors) c->stop();
  retire(s, buffers);
}

void Recorder::set_window(size_t events) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  state_->window = events > 0;
  if (events > 0) state_->max_events = 2 * events;
}

Call Recorder::stop_figures(const Call& first) {
  StoppedCall s = stop_timed(*state_);
  return figures_call(*state_, s, first);
}

bool apply_sites(Call& call, const std::vector<OpSite>& sites) {
  // Sites are the caller's top-level ops; an op of a pool thread that ran outside any of
  // them has none.
  size_t n = 0;
  for (const OpEvent& e : call.events)
    if (e.parent < 0 && e.thread == 0) {
      if (n >= sites.size() || sites[n].name != e.name) return false;
      ++n;
    }
  // A call stopped by --max-ops has the first of them.
  if (n != sites.size() && call.ops_not_recorded == 0) return false;
  n = 0;
  for (OpEvent& e : call.events) {
    if (e.parent < 0 && e.thread != 0) continue;
    if (e.parent < 0) {
      const OpSite& s = sites[n++];
      e.module = s.module;
      e.source = s.source;
      e.source_text = s.source_text;
    } else {
      const OpEvent& p = call.events[e.parent];
      e.module = p.module;
      e.source = p.source;
      e.source_text = p.source_text;
    }
  }
  return true;
}

}  // namespace layoutprof
