#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "counters/counters.h"
#include "record/callbacks.h"
#include "record/recording_state.h"

namespace layoutprof {

std::atomic<uint64_t> g_session{0};
std::atomic<bool> g_forked_child{false};

namespace {

// What outlives the recorders (see recording_state.h), under threads_mutex().
struct Threads {
  RecordingState* active = nullptr;  // the recording the callbacks reach
  // Other threads' buffers of finished sessions. A RecordFunction keeps the callbacks it
  // started with, so an op still running on another thread when recording stops may end
  // later: its callback may hold its old buffer, which says it is closed (InFlight). The
  // objects are kept for the life of the process, their arrays freed (retire()).
  std::vector<std::unique_ptr<ThreadBuffer>> retired;
  // Every thread's name table; events of retired buffers point into them, so they are never freed.
  std::vector<std::unique_ptr<NameTable>> name_tables;
};

Threads& threads() {
  static Threads* const t = new Threads;  // never destroyed: threads may call back at exit
  return *t;
}

thread_local NameTable* t_names = nullptr;

NameTable* thread_names() {
  if (!t_names) {
    threads().name_tables.push_back(std::make_unique<NameTable>());
    t_names = threads().name_tables.back().get();
  }
  return t_names;
}

// Reserves room for n elements and touches it: memory reserved but first written inside an op
// would page-fault there, and the counters would charge the recorder's own page faults (and
// their time) to the op.
template <typename Vector>
void reserve_resident(Vector& v, size_t n) {
  v.reserve(n);
  v.resize(n);
  v.clear();
}

// A new buffer's arrays, sized for the call: the main thread's to the last call's ops.
void reserve(ThreadBuffer& b, RecordingState& rec) {
  const size_t n = std::min(b.main ? rec.reserve_events : 64, rec.max_events);
  if (b.main && rec.spare_events.capacity() >= n) b.events.swap(rec.spare_events);
  else reserve_resident(b.events, n);
  if (rec.tensors) {
    reserve_resident(b.ranges, n);
    reserve_resident(b.tensors, b.main && rec.reserve_tensors && n == rec.reserve_events ? rec.reserve_tensors : n * 3);
  }
}

}  // namespace

std::mutex& threads_mutex() {
  static std::mutex* const m = new std::mutex;
  return *m;
}

void begin_session(RecordingState& rec) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  rec.main_thread = std::this_thread::get_id();
  threads().active = &rec;
  g_session.fetch_add(1, std::memory_order_acq_rel);
}

ThreadBuffer* join_session(uint64_t& session) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  session = g_session.load(std::memory_order_acquire);
  RecordingState* rec = threads().active;
  if (!rec) return nullptr;
  rec->buffers.push_back(std::make_unique<ThreadBuffer>());
  ThreadBuffer& b = *rec->buffers.back();
  b.names = thread_names();
  b.names->forget_if_stale();
  b.shapes = thread_shape_cache();
  b.rec = rec;
  b.main = std::this_thread::get_id() == rec->main_thread;
  b.ordinal = static_cast<uint32_t>(rec->buffers.size() - 1);
  b.tid = static_cast<int>(::syscall(SYS_gettid));
  reserve(b, *rec);
  return &b;
}

std::vector<std::unique_ptr<ThreadBuffer>> end_session(RecordingState& rec) {
  remove_callbacks(rec.handle);
  rec.handle = 0;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(threads_mutex());
    buffers.swap(rec.buffers);
    threads().active = nullptr;
    g_session.fetch_add(1, std::memory_order_acq_rel);  // stale thread_local pointers re-register
  }
  // Callbacks still in another thread's buffer finish before anything reads it (InFlight);
  // outside the lock, which a callback may take.
  for (auto& b : buffers)
    if (!b->main) b->closed.store(true);
  for (auto& b : buffers)
    while (!b->main && b->active.load() != 0) std::this_thread::yield();
  return buffers;
}

// The calling thread's buffers are freed: the recorder starts and stops on that thread, so
// nothing can append to them any more. Other threads' buffers are kept (Threads::retired).
void retire(RecordingState& rec, std::vector<std::unique_ptr<ThreadBuffer>>& buffers) {
  std::lock_guard<std::mutex> lock(threads_mutex());
  for (auto& b : buffers) {
    if (!b->main) {
      // Closed, and no callback is in it (end_session): none will touch its arrays again, so
      // they go; the object stays, for a callback that fetched it and has yet to see it closed.
      MappedVector<RawEvent>().swap(b->events);
      MappedVector<RawTensors>().swap(b->ranges);
      MappedVector<TensorInfo>().swap(b->tensors);
      std::vector<std::pair<int32_t, int64_t>>().swap(b->seqs);
      std::vector<std::pair<const Name*, SiteId>>().swap(b->sites);
      threads().retired.push_back(std::move(b));
    } else if (b->events.capacity() > rec.spare_events.capacity()) {
      b->events.clear();
      rec.spare_events.swap(b->events);
    }
  }
  buffers.clear();
}

namespace {

// Atomics only: the child of a fork may not take a lock another thread held.
void forked_child() {
  g_forked_child.store(true, std::memory_order_relaxed);
  g_session.fetch_add(1, std::memory_order_acq_rel);
}

[[maybe_unused]] const int kAtFork = pthread_atfork(nullptr, nullptr, forked_child);

}  // namespace

void keep_recent(ThreadBuffer& b) {
  const size_t n = b.events.size();
  size_t k = n / 2;
  while (k < n && b.events[k].parent >= 0) ++k;
  size_t sited = 0;
  for (size_t i = 0; i < k; ++i) sited += b.events[i].sited;
  b.sites.erase(b.sites.begin(), b.sites.begin() + static_cast<std::ptrdiff_t>(std::min(sited, b.sites.size())));
  if (!b.ranges.empty()) {
    const uint32_t first = k < n ? b.ranges[k].first_input : static_cast<uint32_t>(b.tensors.size());
    b.tensors.erase(b.tensors.begin(), b.tensors.begin() + first);
    b.ranges.erase(b.ranges.begin(), b.ranges.begin() + static_cast<std::ptrdiff_t>(k));
    for (RawTensors& r : b.ranges) {
      r.first_input -= first;
      r.first_output -= first;
    }
  }
  b.events.erase(b.events.begin(), b.events.begin() + static_cast<std::ptrdiff_t>(k));
  for (RawEvent& e : b.events)
    if (e.parent >= 0) e.parent -= static_cast<int32_t>(k);  // a top-level event begins the rest
  auto seq = std::remove_if(b.seqs.begin(), b.seqs.end(), [k](const auto& s) { return s.first < static_cast<int32_t>(k); });
  b.seqs.erase(seq, b.seqs.end());
  for (auto& s : b.seqs) s.first -= static_cast<int32_t>(k);
  b.dropped += static_cast<int64_t>(k);
  b.failure_sited = -1;  // taken between top-level ops: no failure is passing
}

}  // namespace layoutprof
