// The RecordFunction observer. Torch-free interface; callbacks.cpp and tensor_capture.cpp hold
// the LibTorch code.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/trace.h"
#include "record/op_sites.h"
#include "record/view_maker.h"

namespace layoutprof {

class Collector;

// Where a top-level op was called from: its module path and source line.
struct OpSite {
  Str name;  // the op, to check that a timed call ran the same sequence
  Str module;
  Str source;
  Str source_text;
};

// Records every ATen op (FUNCTION scope, nested ones included) on every thread between
// start() and stop(). One recorder may be active at a time.
//
// Asking the model where an op comes from (OpSiteSource; the TorchScript interpreter's call
// stack costs about a microsecond per op, more than everything else together) is a separate
// mode: one untimed `sites` call learns where each top-level op comes from, and the timed calls
// record names, times and tensors only, into per-thread append-only buffers of plain structs.
class Recorder {
 public:
  // timed: names, times, counters and every op's tensors. figures: the same without the
  // tensors, for the calls whose tensors nobody reads (each costs less and holds less).
  enum class Mode { timed, figures, sites };

  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The active `collectors` (counters/collector.h) work for a timed or figures call: started
  // before its first op, those that work per op hooked at the start and end of every top-level
  // op and aten::copy_ of the calling thread, stopped at stop() (synchronise the device first),
  // and what they took joined to the same ops: counted counters, sampled counters (and, where
  // samples carry data addresses, the shown call's Call::tensor_samples), GPU time. They must
  // outlive the call.
  void start(Mode mode = Mode::timed, const std::vector<Collector*>& collectors = {});
  // Each thread records at most this many op events per timed call; the ops it runs past
  // that are counted (Call::ops_not_recorded), not recorded. 0: no limit.
  void set_max_ops(int64_t max_ops);
  // Removes the observer and returns the recorded events in execution order (ids assigned,
  // parents resolved, times relative to start()). wall_ns is left for the caller.
  Call stop();
  // The same, kept as only the figures analysis takes medians of (a figures_only Call, as
  // keep_figures_only() in analysis.h makes), checked against `first`'s op sequence: for
  // the calls after the first, without converting their events.
  Call stop_figures(const Call& first);
  // Ends a timed or figures call and forgets it, converting nothing.
  void discard();
  // From the next start(), each thread keeps only its latest ops: once it holds twice
  // `events`, the older half goes as its next top-level op starts (an op nested past that
  // limit is not recorded). What a recording between the calls keeps, to explain a failure
  // there. 0: off (set_max_ops() sets the limit again).
  void set_window(size_t events);
  // After a `sites` call: the top-level ops in execution order.
  std::vector<OpSite> stop_sites();
  // A stopped call's event array is kept for the next call (no new pages to fault in, 32
  // bytes an op event); after the last call, this gives it back before the analysis.
  void release_spare();

  // After a `sites` call: whether it saw a task's ops on another thread (torch.jit.fork, or
  // forward() going on after a wait), whose order across threads varies between calls.
  bool saw_forks() const;
  // Timed calls from the next start() take each top-level op's module path and source line
  // themselves, on every thread (Call::sites_recorded), instead of apply_sites(): about a
  // microsecond per top-level op, for models that fork. A figures call's sites match its ops
  // to the first call's (stop_figures) and are not kept.
  void set_capture_sites(bool capture);
  // Where the model's front end says each op comes from: asked for the top-level ops of a
  // `sites` call (and of timed calls with set_capture_sites), resolved at stop. Null: no sites.
  // Must outlive the recording; the recorder forgets it when destroyed.
  void set_site_source(OpSiteSource* source);
  // Training steps: record the autograd engine's backward functions and the sequence
  // numbers that link them to forward ops (from the next start()).
  void set_training(bool training);
  // The backward pass begins now: the ops that start from here are its (Call::backward_from).
  void mark_backward();
  // For code that does not say where its backward pass begins (a training step the user's
  // own code runs): it begins with the first backward function the autograd engine runs.
  void set_backward_at_engine(bool at_engine);
  // What op events are timed with: "steady clock", or the time-stamp counter scaled to it.
  static std::string op_clock();
  // Nanoseconds since start(), on the clock of the op events.
  int64_t elapsed_ns() const;
  // The op and line that made `view` (find_view_maker) among the ops the calling thread has
  // recorded so far in a timed recording under way (a timed call, or the recent ops between
  // calls); none otherwise. Between that thread's ops (a Python hook's time).
  std::optional<ViewMaker> maker_of(const TensorInfo& view) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Gives the top-level ops of `call` (and their nested ops) the module paths and source lines
// of `sites`. Returns false, changing nothing, when the call ran another op sequence.
bool apply_sites(Call& call, const std::vector<OpSite>& sites);

}  // namespace layoutprof
