// The recorder's state, and the thread buffers' comings and goings. Torch-free.
//
// Everything a recording needs lives in one RecordingState, which the Recorder owns
// (Recorder::State). The callbacks are plain functions that LibTorch calls on any thread: they
// reach the active recording through one pointer, set by start() (begin_session) and cleared
// by stop() (end_session), and each thread caches its buffer of the current session.
//
// What outlives a recorder stays process-wide, in thread_buffers.cpp: the session count the
// cached buffers are checked against, each thread's name table (events point into it), and
// the other threads' buffers of finished sessions (a late callback may still hold one: it
// finds it closed, see InFlight).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "counters/collector.h"
#include "record/recorder.h"
#include "record/thread_buffer.h"

namespace layoutprof {

struct RecordingState {
  // Set between calls (the Recorder's setters), read by the callbacks.
  size_t max_events = std::numeric_limits<size_t>::max();  // per thread and call (--max-ops)
  bool training = false;  // Recorder::set_training: backward functions and sequence numbers too
  bool backward_at_engine = false;  // Recorder::set_backward_at_engine
  // Recorder::set_capture_sites: a timed call takes each top-level op's module and source line
  // itself, on whatever thread (models that fork: their op order varies between calls).
  bool capture_sites = false;
  OpSiteSource* site_source = nullptr;  // Recorder::set_site_source
  // Recorder::set_window: a thread whose buffer holds max_events events drops the older half
  // as its next top-level op starts (a ring of the recent ops), instead of recording no more.
  bool window = false;

  // The call being recorded, from start() to stop().
  Recorder::Mode mode = Recorder::Mode::timed;
  bool tensors = true;  // Mode::timed records tensors; Mode::figures does not
  std::vector<Collector*> collectors;  // the active ones (Collector::active), started and stopped
  std::vector<Collector*> per_op;      // those of them hooking each counted op, on the main thread
  Collector* any_thread = nullptr;     // the one hooking the other threads' (Collector::any_thread)
  std::thread::id main_thread;  // the thread that starts and stops recording
  uint64_t handle = 0;  // the callbacks' registration (add_callbacks); 0: none
  int64_t start_ns = 0;
  int64_t start_tick = 0;      // ticks() at start_ns
  int64_t backward_tick = -1;  // mark_backward(); -1: forward only
  // The per-thread buffers of the call. A thread registers once per session, under the
  // threads' lock; after that it appends to its own buffer without locking.
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;

  // Learnt from the calls so far.
  size_t reserve_events = 1024;  // grown to the size of the last call
  size_t reserve_tensors = 0;    // the sites call's tensors (0: not known, 3 per event)
  // The sites call saw a task's op on another thread: the one thing a callback writes outside
  // its buffer.
  mutable std::atomic<bool> forks_seen{false};
  // The main thread's event array of the last call, cleared and still resident: the next call
  // appends to it instead of allocating and faulting in a new one.
  MappedVector<RawEvent> spare_events;
};

// Bumped by every begin_session and end_session: a thread's cached buffer belongs to the
// session it joined, and is stale once this moves on.
extern std::atomic<uint64_t> g_session;
// Set in a process forked from this one (pthread_atfork), with g_session moved on: its threads
// drop their cached buffers and never join a session (a DataLoader worker forked while the
// recent ops are recorded pays nothing for them, and takes no lock another thread held).
extern std::atomic<bool> g_forked_child;

// The lock over the active recording's buffers and settings, and the process-wide lists.
std::mutex& threads_mutex();

// `rec` becomes the recording the callbacks reach (after its callbacks are added).
void begin_session(RecordingState& rec);
// The calling thread joins the active session: its new buffer, or null when nothing records.
// `session` becomes the session it joined.
ThreadBuffer* join_session(uint64_t& session);
// Removes the callbacks, ends the session and returns its buffers, once no other thread's
// callback is inside one.
std::vector<std::unique_ptr<ThreadBuffer>> end_session(RecordingState& rec);
// Frees taken buffers: the main thread's event array becomes `rec`'s spare, other threads'
// buffers are emptied and kept for the life of the process.
void retire(RecordingState& rec, std::vector<std::unique_ptr<ThreadBuffer>>& buffers);

}  // namespace layoutprof
