// What the hot path stores: plain structs in per-thread arrays, no allocation per op once the
// arrays have grown. Tensors are stored as the TensorInfo the report keeps (their shapes
// interned through a per-thread cache, ShapeCache in tensor_capture.h); events become OpEvents
// in stop(). Torch-free.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/layout.h"
#include "core/mapped_allocator.h"
#include "core/pools.h"
#include "core/str.h"
#include "record/op_sites.h"
#include "record/uncaught.h"

namespace layoutprof {

class ShapeCache;
struct RecordingState;

// The calling thread's shape cache, made on its first call and kept for the life of the
// process (tensor_capture.cpp); its shapes forgotten if the pools' epoch they were interned in
// has ended (ShapeCache::forget_if_stale). Called as the thread joins a recording.
ShapeCache* thread_shape_cache();

struct Name {
  std::string text;
  bool is_copy;  // aten::copy_: counted like a top-level op
  // "Torch-Compiled Region: 0/0" (dynamo's scope around a compiled function's call): the ops
  // directly inside it (extern kernels, inductor's kernels) take sites of their own.
  bool is_region;
  // A Python autograd node's own record ("BiasGeluBackward": a custom Function's backward, named
  // by its class; PyTorch's generated nodes end in a digit, "TransposeBackward0"; AOT autograd's
  // compiled backward excepted): the ops directly inside it run the user's backward code and
  // take sites of their own.
  bool is_python_node;
  Str str;  // the text, interned for the OpEvents
};

// Whether `name` is such a node's record.
inline bool python_node_name(const char* name) {
  static constexpr char kSuffix[] = "Backward";
  const size_t n = std::strlen(name), k = sizeof kSuffix - 1;
  return n > k && std::strcmp(name + n - k, kSuffix) == 0 && std::strstr(name, "::") == nullptr &&
         std::strstr(name, "CompiledFunction") == nullptr;
}

// The ops that get counters: forward()'s thread's top-level ops and its copies.
inline bool counted_op(bool main, bool top, const Name* name) { return main && (top || name->is_copy); }

struct RawEvent {  // 32 bytes: a call's array of them is walked once per op
  const Name* name;  // into ThreadBuffer::names
  int64_t start;     // ticks() as the op started
  int64_t end;       // and as it ended; 0 while it runs
  int32_t parent;  // index in the same thread's buffer, -1 at the top
  // std::uncaught_exceptions() at the start (saturated): more at the end means it threw.
  uint16_t uncaught;
  bool failed;
  // Hooked by the per-op collectors (a counted op while one works per op): its figures are
  // the next counted op's of the call's CallRecords.
  uint8_t counted : 1;
  // A task's own top-level op on another thread (torch.jit.fork's branch, or forward() going
  // on after a wait), not a chunk of an intra-op parallel region: it has no parent.
  uint8_t forked : 1;
  uint8_t sited : 1;  // its module and source line were taken: the buffer's next site
  // Another thread's op that the any-thread collector hooked (a GPU id pushed): unhooked as it ends.
  uint8_t thread_hooked : 1;
};
static_assert(sizeof(RawEvent) == 32, "RawEvent is packed by hand");

// Where a raw event's tensors are in ThreadBuffer::tensors: kept beside the events (same
// index) by Mode::timed only, so that the calls that record none hold 40 bytes an op event.
struct RawTensors {
  uint32_t first_input;
  uint32_t inputs;
  uint32_t first_output;
  uint32_t outputs;
};

// Op names, interned: a RecordFunction's name may live only as long as it does (kernels'
// own RECORD_FUNCTIONs, JIT operators with temporary schemas), so the hot path keeps a copy
// per distinct name, found by address and confirmed by content. One table per thread for the
// life of the process: a name is copied once, during warm-up's sites call, never inside a
// timed op. Its names are forgotten as the thread joins a recording after the pools' epoch
// they were interned in ended (core/pools.h).
struct NameTable {
  EpochStamp epoch;
  std::deque<Name> names;
  std::unordered_map<const char*, const Name*> index;

  // The last names seen, by address: most ops hit here without hashing.
  std::array<std::pair<const char*, const Name*>, 64> recent{};

  // Called by the table's own thread as it joins a recording: no event of a recording that
  // may still be read points into it then (the epoch's leases are gone).
  void forget_if_stale() {
    if (!epoch.ended()) return;
    recent = {};
    index.clear();
    std::deque<Name>().swap(names);
  }

  const Name* intern(const char* name) {
    auto& slot = recent[(reinterpret_cast<uintptr_t>(name) >> 3) & 63];
    if (__builtin_expect(slot.first == name && std::strcmp(slot.second->text.c_str(), name) == 0, 1))
      return slot.second;
    const Name* found = lookup(name);
    slot = {name, found};
    return found;
  }

  const Name* lookup(const char* name) {
    auto it = index.find(name);
    if (__builtin_expect(it != index.end() && std::strcmp(it->second->text.c_str(), name) == 0, 1))
      return it->second;
    static constexpr char kRegion[] = "Torch-Compiled Region";
    names.push_back({name, std::strcmp(name, "aten::copy_") == 0, std::strncmp(name, kRegion, sizeof kRegion - 1) == 0,
                     python_node_name(name), Str(name)});
    index[name] = &names.back();
    return &names.back();
  }
};

struct ThreadBuffer {
  MappedVector<RawEvent> events;
  MappedVector<RawTensors> ranges;  // Mode::timed: one per event
  int64_t not_recorded = 0;  // ops past the limit
  MappedVector<TensorInfo> tensors;
  std::vector<int32_t> stack;
  NameTable* names = nullptr;  // this thread's, shared by its buffers of every session
  ShapeCache* shapes = nullptr;  // likewise
  // The recording this buffer belongs to: valid while the callbacks may use the buffer (the
  // main thread's until stop(), another thread's inside its InFlight).
  const RecordingState* rec = nullptr;
  const Name* intern(const char* name) { return names->intern(name); }
  // The top-level ops whose sites were taken (`sites` mode, or Recorder::set_capture_sites),
  // with where the model's front end said they came from.
  std::vector<std::pair<const Name*, SiteId>> sites;
  // The innermost op whose failure took a site of its own (on_op_end), -1 none: the ops around
  // it fail with it and keep their own.
  int32_t failure_sited = -1;
  size_t site_events = 0;   // every op of the sites call, nested included
  size_t site_tensors = 0;  // and their tensors, inputs and outputs
  bool main = false;
  uint32_t ordinal = 0;  // its place among the call's buffers as it joined (GPU external ids)
  int tid = 0;  // the kernel's thread id: which buffer a perf sample's thread recorded into
  UncaughtCount uncaught;  // the thread's std::uncaught_exceptions(), as one load
  // Another thread's callbacks against stop() reading this buffer (InFlight): the callbacks
  // in it now, and whether it has been taken, after which none may touch it.
  std::atomic<int> active{0};
  std::atomic<bool> closed{false};
  // Training steps: (event index, autograd sequence number) of the events that have one
  // (forward ops run with grad mode on, backward functions), to link the two.
  std::vector<std::pair<int32_t, int64_t>> seqs;
  int64_t dropped = 0;  // events keep_recent() dropped
};

// Recorder::set_window: drops the older half of a buffer's events (from its first top-level
// event past the half), with their tensors, sites and sequence numbers; called between
// top-level ops (nothing open). `dropped` counts them.
void keep_recent(ThreadBuffer& b);

// A callback on a thread other than the one that starts and stops recording may run while
// stop() takes the buffers: it counts itself in, and leaves without touching the buffer once
// stop() has closed it; stop() waits for those counted in (seq_cst on both sides: each sees
// the other's store). The main thread's callbacks cannot overlap stop(), which it runs itself.
class InFlight {
 public:
  explicit InFlight(ThreadBuffer& b) : b_(b.main ? nullptr : &b) {
    if (!b_) return;
    b_->active.fetch_add(1);
    if (b_->closed.load()) {
      b_->active.fetch_sub(1);
      b_ = nullptr;
      open_ = false;
    }
  }
  ~InFlight() {
    if (b_) b_->active.fetch_sub(1);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  explicit operator bool() const { return open_; }

 private:
  ThreadBuffer* b_;
  bool open_ = true;
};

}  // namespace layoutprof
