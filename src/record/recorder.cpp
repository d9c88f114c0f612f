#include "record/recorder.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "counters/counters.h"
#include "counters/gpu.h"
#include "counters/sampling.h"
#include "record/tensor_info.h"
#include "record/uncaught.h"

namespace layoutprof {

namespace {

const char* dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "f32";
    case c10::ScalarType::Double: return "f64";
    case c10::ScalarType::Half: return "f16";
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Long: return "i64";
    case c10::ScalarType::Int: return "i32";
    case c10::ScalarType::Short: return "i16";
    case c10::ScalarType::Char: return "i8";
    case c10::ScalarType::Byte: return "u8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "c64";
    case c10::ScalarType::ComplexDouble: return "c128";
    default: return c10::toString(t);
  }
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The op events' clock. Where the kernel keeps time with the CPU's time-stamp counter itself
// (clocksource "tsc": invariant and synchronised across CPUs, or the kernel would not use it),
// the counter read directly (rdtsc, about 10 ns here, against 25 for the steady clock's vDSO
// call: two reads per op event); else the steady clock. Ticks are scaled to the steady clock's
// nanoseconds at stop() (TickScale), from pairs of readings of both clocks.
bool tsc_is_the_clock() {
#if defined(__x86_64__)
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return in >> source && source == "tsc";
#else
  return false;
#endif
}
const bool g_tsc = tsc_is_the_clock();

inline int64_t ticks() {
#if defined(__x86_64__)
  if (C10_LIKELY(g_tsc)) return static_cast<int64_t>(__rdtsc());
#endif
  return now_ns();
}

// Ticks to steady-clock nanoseconds: a linear map through the first pair of readings the
// process took and the latest (the longer apart, the finer the rate).
class TickScale {
 public:
  static TickScale now() {
    static const std::pair<int64_t, int64_t> first{ticks(), now_ns()};
    TickScale s;
    s.tick0_ = first.first;
    s.ns0_ = first.second;
    if (g_tsc) {
      const int64_t t = ticks(), n = now_ns();
      if (t > s.tick0_ && n > s.ns0_) s.rate_ = static_cast<double>(n - s.ns0_) / static_cast<double>(t - s.tick0_);
    }
    return s;
  }
  // Steady-clock nanoseconds of a tick reading.
  int64_t ns(int64_t tick) const {
    if (!g_tsc) return tick;
    return ns0_ + static_cast<int64_t>(std::llround(static_cast<double>(tick - tick0_) * rate_));
  }

 private:
  int64_t tick0_ = 0, ns0_ = 0;
  double rate_ = 1.0;
};

}  // namespace

TensorInfo describe_tensor(const at::Tensor& t, int arg) {
  TensorInfo info;
  info.arg = arg;
  std::vector<int64_t> strides;
  if (t.layout() == c10::kStrided) {
    strides = t.strides().vec();
    info.storage_offset = t.storage_offset();
    if (t.has_storage()) info.storage = reinterpret_cast<uint64_t>(t.storage().data());
  }
  info.set_shape(t.sizes().vec(), std::move(strides), dtype_name(t.scalar_type()), t.device().str(),
                 static_cast<int>(t.element_size()));
  return info;
}

namespace {

// What the hot path stores: plain structs in per-thread arrays, no allocation per op once
// the arrays have grown. Tensors are stored as the TensorInfo the report keeps (their shapes
// interned through a per-thread cache, see ShapeCache); events become OpEvents in stop().

// Tensor shapes seen by one thread, found by what the hot path reads from the TensorImpl
// without building anything: dtype, device, element size and the dims. A hit costs a hash
// and a compare of the dims; a miss (once per distinct shape and thread) interns the shape.
class ShapeCache {
 public:
  ShapeCache() : slots_(1024) {}

  const TensorShape* find(c10::ScalarType dtype, c10::Device device, int elem_size, bool known,
                          c10::IntArrayRef sizes, c10::IntArrayRef strides, bool strided) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(static_cast<uint64_t>(dtype) | static_cast<uint64_t>(device.type()) << 8 |
        static_cast<uint64_t>(static_cast<uint8_t>(device.index())) << 16 |
        static_cast<uint64_t>(elem_size) << 24 | static_cast<uint64_t>(known) << 40 |
        static_cast<uint64_t>(strided) << 41 | static_cast<uint64_t>(sizes.size()) << 42);
    for (int64_t v : sizes) mix(static_cast<uint64_t>(v));
    if (strided)
      for (int64_t v : strides) mix(static_cast<uint64_t>(v));
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (!slot.shape) break;
      if (slot.hash == h && slot.dtype == dtype && slot.device == device && slot.known == known &&
          slot.strided == strided && slot.shape->elem_size == elem_size &&
          std::equal(sizes.begin(), sizes.end(), slot.shape->sizes.begin(), slot.shape->sizes.end()) &&
          (!strided || std::equal(strides.begin(), strides.end(), slot.shape->strides.begin(),
                                  slot.shape->strides.end())))
        return slot.shape;
    }
    TensorShape shape;
    shape.sizes = sizes.vec();
    if (strided) shape.strides = strides.vec();
    shape.dtype = known ? dtype_name(dtype) : "unknown";
    shape.device = device.str();
    shape.elem_size = elem_size;
    if (!known) shape.layout.cls = LayoutClass::unknown;
    const TensorShape* interned = intern_shape(std::move(shape), !known);
    insert({h, interned, dtype, device, known, strided});
    return interned;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    const TensorShape* shape = nullptr;
    c10::ScalarType dtype = c10::ScalarType::Undefined;
    c10::Device device = c10::Device(c10::DeviceType::CPU);
    bool known = false;
    bool strided = false;
  };
  void insert(const Slot& slot) {
    if (++used_ * 2 > slots_.size()) {
      std::vector<Slot> old(slots_.size() * 2);
      old.swap(slots_);
      used_ = 1;
      for (const Slot& s : old)
        if (s.shape) place(s), ++used_;
    }
    place(slot);
  }
  void place(const Slot& slot) {
    const size_t mask = slots_.size() - 1;
    size_t i = slot.hash & mask;
    while (slots_[i].shape) i = (i + 1) & mask;
    slots_[i] = slot;
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

struct Name {
  std::string text;
  bool is_copy;  // aten::copy_: counted like a top-level op
  Str str;       // the text, interned for the OpEvents
};

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
  uint8_t gpu_pushed : 1;  // pushed a CUPTI external correlation id (its index + 1)
  uint8_t counted : 1;     // read the counters: its snapshots are the buffer's next `counted` pair
  // A task's own top-level op on another thread (torch.jit.fork's branch, or forward() going
  // on after a wait), not a chunk of an intra-op parallel region: it has no parent.
  uint8_t forked : 1;
  uint8_t sited : 1;  // its module and source line were taken: the buffer's next site
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
// timed op.
struct NameTable {
  std::deque<Name> names;
  std::unordered_map<const char*, const Name*> index;

  // The last names seen, by address: most ops hit here without hashing.
  std::array<std::pair<const char*, const Name*>, 64> recent{};

  const Name* intern(const char* name) {
    auto& slot = recent[(reinterpret_cast<uintptr_t>(name) >> 3) & 63];
    if (C10_LIKELY(slot.first == name && std::strcmp(slot.second->text.c_str(), name) == 0))
      return slot.second;
    const Name* found = lookup(name);
    slot = {name, found};
    return found;
  }

  const Name* lookup(const char* name) {
    auto it = index.find(name);
    if (C10_LIKELY(it != index.end() && std::strcmp(it->second->text.c_str(), name) == 0))
      return it->second;
    names.push_back({name, std::strcmp(name, "aten::copy_") == 0, Str(name)});
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
  const Name* intern(const char* name) { return names->intern(name); }
  std::vector<uint64_t> snapshots;  // counter snapshots, PerfCounters::snapshot_size() each
  // The counted events' snapshot indices (start, end), in their start order, and those of the
  // counted ops still running, innermost last (ops on a thread end in reverse order).
  std::vector<std::pair<int32_t, int32_t>> counted;
  std::vector<int32_t> counted_open;
  // The top-level ops whose sites were taken (`sites` mode, or Recorder::set_capture_sites),
  // with where the model's front end said they came from.
  std::vector<std::pair<const Name*, SiteId>> sites;
  size_t site_events = 0;   // every op of the sites call, nested included
  size_t site_tensors = 0;  // and their tensors, inputs and outputs
  bool main = false;
  int tid = 0;  // the kernel's thread id: which buffer a perf sample's thread recorded into
  UncaughtCount uncaught;  // the thread's std::uncaught_exceptions(), as one load
  // Another thread's callbacks against stop() reading this buffer (InFlight): the callbacks
  // in it now, and whether it has been taken, after which none may touch it.
  std::atomic<int> active{0};
  std::atomic<bool> closed{false};
  // Training steps: (event index, autograd sequence number) of the events that have one
  // (forward ops run with grad mode on, backward functions), to link the two.
  std::vector<std::pair<int32_t, int64_t>> seqs;
};

// Per-thread buffers of the active session. A thread registers once per session, under the
// lock; after that it appends to its own buffer without locking.
std::mutex g_mutex;
std::vector<std::unique_ptr<ThreadBuffer>> g_buffers;
// Buffers of finished sessions. A RecordFunction keeps the callbacks it started with, so an
// op still running on another thread when recording stops may end later: its callback may
// hold its old buffer, which says it is closed (InFlight). The objects are kept for the life
// of the process, their arrays freed (retire()).
std::vector<std::unique_ptr<ThreadBuffer>> g_retired;
// Every thread's name table; events of retired buffers point into them, so they are never freed.
std::vector<std::unique_ptr<NameTable>> g_name_tables;
std::vector<std::unique_ptr<ShapeCache>> g_shape_caches;
thread_local NameTable* t_names = nullptr;
thread_local ShapeCache* t_shapes = nullptr;
std::atomic<uint64_t> g_session{0};
std::thread::id g_main_thread;
size_t g_reserve_events = 1024;  // grown to the size of the last call
size_t g_reserve_tensors = 0;    // the sites call's tensors (0: not known, 3 per event)
size_t g_max_events = std::numeric_limits<size_t>::max();  // per thread and call (--max-ops)
bool g_tensors = true;  // Mode::timed records tensors; Mode::figures does not
bool g_training = false;  // Recorder::set_training: backward functions and sequence numbers too
// Recorder::set_capture_sites: a timed call takes each top-level op's module and source line
// itself, on whatever thread (models that fork: their op order varies between calls).
bool g_capture_sites = false;
std::atomic<bool> g_forks_seen{false};  // the sites call saw a task's op on another thread
// Recorder::set_site_source: asked by the callbacks, set before recording starts.
OpSiteSource* g_site_source = nullptr;
const PerfCounters* g_counters = nullptr;  // read by the main thread only
GpuTracer* g_gpu = nullptr;                // pushed to by the main thread only
// The main thread's event array of the last call, cleared and still resident: the next call
// appends to it instead of allocating and faulting in a new one.
MappedVector<RawEvent> g_spare_events;
thread_local ThreadBuffer* t_buffer = nullptr;
thread_local uint64_t t_session = 0;

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

// Reserves room for n elements and touches it: memory reserved but first written inside an op
// would page-fault there, and the counters would charge the recorder's own page faults (and
// their time) to the op.
template <typename Vector>
void reserve_resident(Vector& v, size_t n) {
  v.resize(n);
  v.clear();
}

ThreadBuffer& thread_buffer() {
  uint64_t session = g_session.load(std::memory_order_acquire);
  if (C10_UNLIKELY(t_buffer == nullptr || t_session != session)) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_buffers.push_back(std::make_unique<ThreadBuffer>());
    t_buffer = g_buffers.back().get();
    if (!t_names) {
      g_name_tables.push_back(std::make_unique<NameTable>());
      t_names = g_name_tables.back().get();
    }
    if (!t_shapes) {
      g_shape_caches.push_back(std::make_unique<ShapeCache>());
      t_shapes = g_shape_caches.back().get();
    }
    t_buffer->names = t_names;
    t_buffer->shapes = t_shapes;
    t_buffer->main = std::this_thread::get_id() == g_main_thread;
    t_buffer->tid = static_cast<int>(::syscall(SYS_gettid));
    size_t n = std::min(t_buffer->main ? g_reserve_events : 64, g_max_events);
    if (t_buffer->main && g_spare_events.capacity() >= n) t_buffer->events.swap(g_spare_events);
    else reserve_resident(t_buffer->events, n);
    if (g_tensors) reserve_resident(t_buffer->ranges, n);
    if (g_tensors)
      reserve_resident(t_buffer->tensors, t_buffer->main && g_reserve_tensors && n == g_reserve_events
                                              ? g_reserve_tensors
                                              : n * 3);
    if (g_counters && t_buffer->main) {
      reserve_resident(t_buffer->snapshots, n * g_counters->snapshot_size());
      reserve_resident(t_buffer->counted, n);
      reserve_resident(t_buffer->counted_open, 64);
    }
    t_session = session;
  }
  return *t_buffer;
}

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

// Reads every thread's counter group into the buffer; returns the snapshot's index.
int32_t snapshot(ThreadBuffer& b) {
  size_t size = g_counters->snapshot_size();
  size_t at = b.snapshots.size();
  b.snapshots.resize(at + size);
  g_counters->read(b.snapshots.data() + at);
  return static_cast<int32_t>(at / size);
}

void append_tensor(ThreadBuffer& b, const at::Tensor& t, int arg) {
  if (!t.defined()) return;
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  TensorInfo r;
  r.arg = std::min(arg, 127);
  try {
    const c10::ScalarType dtype = c10::typeMetaToScalarType(impl->dtype());
    const int elem_size = static_cast<int>(impl->dtype().itemsize());
    // Nested and other tensors without plain sizes throw here: they are kept as "unknown".
    c10::IntArrayRef sizes = impl->sizes();
    if (sizes.size() > 64) sizes = sizes.slice(0, 64);
    c10::IntArrayRef strides;
    const bool strided = impl->layout() == c10::kStrided;
    if (strided) {
      strides = impl->strides().slice(0, sizes.size());
      r.storage_offset = impl->storage_offset();
      if (impl->has_storage()) r.storage = reinterpret_cast<uint64_t>(impl->storage().data());
    }
    r.shape = b.shapes->find(dtype, impl->device(), elem_size, true, sizes, strides, strided);
  } catch (const std::exception&) {
    r.storage_offset = 0;
    r.storage = 0;
    r.shape = b.shapes->find(c10::ScalarType::Undefined, c10::Device(c10::DeviceType::CPU), 0, false,
                             {}, {}, false);
  }
  b.tensors.push_back(r);
}

// Calls f on each tensor a value holds: itself, or the tensors of a list (tensor lists
// included, without copying them).
template <typename F>
void for_each_tensor(const c10::IValue& value, F&& f) {
  if (value.isTensor()) {
    f(value.toTensor());
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef())
      if (item.isTensor()) f(item.toTensor());
  }
}

void append_value(ThreadBuffer& b, const c10::IValue& value, int arg) {
  for_each_tensor(value, [&](const at::Tensor& t) { append_tensor(b, t, arg); });
}

// Ops called by the TorchScript interpreter see the interpreter's whole stack as their inputs
// (and outputs): their own arguments are the last `declared` values, num_inputs() and
// num_outputs() by their schema (a string-named RecordFunction declares all it holds).
template <typename Values>
Values own_values(Values values, size_t declared) {
  return values.size() > declared ? values.slice(values.size() - declared) : values;
}

// An op that starts a task's own work on a thread other than forward()'s caller: a forked
// branch, or the rest of forward() after a wait. Intra-op parallel regions run chunks of the
// op that started them, nested under it.
bool task_top_level(const ThreadBuffer& b) { return !b.main && b.stack.empty() && !at::in_parallel_region(); }

// Where the op starting now comes from, as ids of the model's front end (resolved at stop).
void take_site(ThreadBuffer& b, const Name* name) {
  b.sites.emplace_back(name, g_site_source ? g_site_source->current() : SiteId{});
}

template <bool kTensors>
std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ThreadBuffer& b = thread_buffer();
  InFlight in_flight(b);
  if (!in_flight) return nullptr;
  if (C10_UNLIKELY(b.events.size() >= g_max_events)) {
    ++b.not_recorded;
    b.stack.push_back(-1);  // popped by on_op_end; ops nested in it are past the limit too
    return nullptr;
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
  e.gpu_pushed = false;
  e.forked = top && task_top_level(b);
  e.sited = false;
  if (C10_UNLIKELY(g_capture_sites) && top && (b.main || e.forked)) {
    take_site(b, e.name);  // before the op's time starts
    e.sited = true;
  }
  const auto index = static_cast<int32_t>(b.events.size());
  if (counted_op(b.main, top, e.name)) {
    if (g_counters) {
      e.counted = true;
      b.counted_open.push_back(static_cast<int32_t>(b.counted.size()));
      b.counted.emplace_back(snapshot(b), -1);
    }
    if (g_gpu) e.gpu_pushed = g_gpu->push(static_cast<uint64_t>(index) + 1);
  }
  if (g_training && fn.seqNr() >= 0) b.seqs.emplace_back(index, fn.seqNr());
  e.start = ticks();  // last, so that recording the inputs stays outside the op's time
  b.events.push_back(e);
  b.stack.push_back(index);  // only once the event exists: on_op_end pops what is there
  return nullptr;
}

template <bool kTensors>
void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const int64_t end = ticks();
  ThreadBuffer& b = thread_buffer();
  InFlight in_flight(b);
  if (!in_flight || b.stack.empty()) return;  // stopped, or the op began before this session
  const int32_t index = b.stack.back();
  b.stack.pop_back();
  if (index < 0) return;  // not recorded: past --max-ops
  RawEvent& e = b.events[index];
  e.end = end;
  if (e.counted) {
    b.counted[b.counted_open.back()].second = snapshot(b);
    b.counted_open.pop_back();
  }
  if (e.gpu_pushed) g_gpu->pop();
  e.failed = b.uncaught.now() > e.uncaught;
  if (kTensors) {
    RawTensors& r = b.ranges[index];
    r.first_output = static_cast<uint32_t>(b.tensors.size());
    c10::ArrayRef<c10::IValue> all(fn.outputs());
    auto outputs = own_values(all, fn.num_outputs());
    for (size_t i = 0; i < outputs.size(); ++i) append_value(b, outputs[i], static_cast<int>(i));
    r.outputs = static_cast<uint32_t>(b.tensors.size()) - r.first_output;
  }
}

template <typename Values>
size_t count_tensors(Values values) {
  size_t n = 0;
  for (const c10::IValue& v : values) for_each_tensor(v, [&n](const at::Tensor&) { ++n; });
  return n;
}

std::unique_ptr<at::ObserverContext> on_site_start(const at::RecordFunction& fn) {
  ThreadBuffer& b = thread_buffer();
  InFlight in_flight(b);
  if (!in_flight) return nullptr;
  const Name* name = b.intern(fn.name());
  ++b.site_events;
  b.site_tensors += count_tensors(own_values(fn.inputs(), fn.num_inputs()));
  if (b.stack.empty() && b.main && b.sites.size() < g_max_events) take_site(b, name);
  if (task_top_level(b)) g_forks_seen.store(true, std::memory_order_relaxed);
  b.stack.push_back(0);
  return nullptr;
}

void on_site_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadBuffer& b = thread_buffer();
  InFlight in_flight(b);
  if (!in_flight) return;
  c10::ArrayRef<c10::IValue> all(fn.outputs());
  b.site_tensors += count_tensors(own_values(all, fn.num_outputs()));
  if (!b.stack.empty()) b.stack.pop_back();
}

// The text of the sites a call took, each id resolved once: Str ids that compare as the first
// call's do (match_by_site), and the strings the events keep.
class SiteTexts {
 public:
  explicit SiteTexts(const OpSiteSource* source) : source_(source) {}
  Str module(SiteId id) {
    auto it = modules_.find(id.module);
    if (it == modules_.end()) it = modules_.emplace(id.module, Str(source_ ? source_->module_path(id.module) : "")).first;
    return it->second;
  }
  // file:line and the line's text.
  const std::pair<Str, Str>& source(SiteId id) {
    auto it = sources_.find(id.source);
    if (it == sources_.end()) {
      SourceLine line = source_ ? source_->source_line(id.source) : SourceLine{};
      it = sources_.emplace(id.source, std::make_pair(Str(line.location), Str(line.text))).first;
    }
    return it->second;
  }

 private:
  const OpSiteSource* source_;
  std::unordered_map<uint32_t, Str> modules_;
  std::unordered_map<uint32_t, std::pair<Str, Str>> sources_;
};

}  // namespace

struct Recorder::State {
  at::CallbackHandle handle = 0;
  const PerfCounters* counters = nullptr;
  const PerfSampler* sampler = nullptr;
  GpuTracer* gpu = nullptr;
  Mode mode = Mode::timed;
  int64_t start_ns = 0;
  int64_t start_tick = 0;     // ticks() at start_ns
  int64_t backward_tick = -1;  // mark_backward(); -1: forward only
};

Recorder::Recorder() : state_(std::make_unique<State>()) {}

void Recorder::set_max_ops(int64_t max_ops) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_max_events = max_ops > 0 ? static_cast<size_t>(max_ops) : std::numeric_limits<size_t>::max();
}

Recorder::~Recorder() {
  if (state_->handle) at::removeCallback(state_->handle);
  release_spare();  // for this recorder's next call; there is none after it
  set_site_source(nullptr);  // the source may go with the model before the next recorder starts
}

void Recorder::release_spare() {
  std::lock_guard<std::mutex> lock(g_mutex);
  MappedVector<RawEvent>().swap(g_spare_events);
}

void Recorder::start(Mode mode, const PerfCounters* counters, GpuTracer* gpu, const PerfSampler* sampler) {
  if (state_->handle) throw std::logic_error("recorder already started");
  const bool timed = mode != Mode::sites;
  state_->counters = counters && counters->events() > 0 && timed ? counters : nullptr;
  state_->sampler = sampler && sampler->events() > 0 && timed ? sampler : nullptr;
  state_->gpu = timed ? gpu : nullptr;
  if (state_->gpu) state_->gpu->start();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& b : g_buffers) g_retired.push_back(std::move(b));
    g_buffers.clear();
    g_counters = state_->counters;
    g_gpu = state_->gpu;
    g_tensors = mode == Mode::timed;
    g_main_thread = std::this_thread::get_id();
    g_session.fetch_add(1, std::memory_order_acq_rel);
  }
  state_->mode = mode;
  if (mode == Mode::sites) g_forks_seen.store(false);
  // Mode::figures leaves the inputs and outputs unboxed: RecordFunction packs them into
  // IValues only for a callback that needs them, and that is most of what it costs.
  auto callback = mode == Mode::timed
                      ? at::RecordFunctionCallback(on_op_start<true>, on_op_end<true>)
                            .needsInputs(true)
                            .needsOutputs(true)
                  : mode == Mode::figures ? at::RecordFunctionCallback(on_op_start<false>, on_op_end<false>)
                                          : at::RecordFunctionCallback(on_site_start, on_site_end)
                                                .needsInputs(true)
                                                .needsOutputs(true);
  TickScale::now();  // the process's first pair of readings, the earlier the better
  if (state_->sampler) state_->sampler->enable();
  state_->start_tick = ticks();
  state_->start_ns = now_ns();
  state_->backward_tick = -1;
  // Training steps: the autograd engine's backward functions too (the ops they run are
  // FUNCTION ops nested in them).
  if (g_training)
    state_->handle = at::addGlobalCallback(
        callback.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  else
    state_->handle = at::addGlobalCallback(callback.scopes({at::RecordScope::FUNCTION}));
}

void Recorder::set_capture_sites(bool capture) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_capture_sites = capture;
}

bool Recorder::saw_forks() const { return g_forks_seen.load(); }

void Recorder::set_site_source(OpSiteSource* source) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_site_source = source;
}

void Recorder::set_training(bool training) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_training = training;
}

std::string Recorder::op_clock() {
  return g_tsc ? "the CPU's time-stamp counter (rdtsc; the kernel's clocksource is tsc), scaled to the steady clock"
               : "steady clock";
}

void Recorder::mark_backward() { state_->backward_tick = ticks(); }

int64_t Recorder::elapsed_ns() const { return now_ns() - state_->start_ns; }

namespace {

// The calling thread's buffers are freed: the recorder starts and stops on that thread, so
// nothing can append to them any more. Other threads' buffers are kept (see g_retired).
void retire(std::vector<std::unique_ptr<ThreadBuffer>>& buffers) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& b : buffers) {
    if (!b->main) {
      // Closed, and no callback is in it (take_buffers): none will touch its arrays again, so
      // they go; the object stays, for a callback that fetched it and has yet to see it closed.
      MappedVector<RawEvent>().swap(b->events);
      MappedVector<RawTensors>().swap(b->ranges);
      MappedVector<TensorInfo>().swap(b->tensors);
      std::vector<uint64_t>().swap(b->snapshots);
      std::vector<std::pair<int32_t, int32_t>>().swap(b->counted);
      std::vector<std::pair<int32_t, int64_t>>().swap(b->seqs);
      std::vector<std::pair<const Name*, SiteId>>().swap(b->sites);
      g_retired.push_back(std::move(b));
    } else if (b->events.capacity() > g_spare_events.capacity()) {
      b->events.clear();
      g_spare_events.swap(b->events);
    }
  }
  buffers.clear();
}

std::vector<std::unique_ptr<ThreadBuffer>> take_buffers(at::CallbackHandle handle) {
  at::removeCallback(handle);
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    buffers.swap(g_buffers);
    g_counters = nullptr;
    g_gpu = nullptr;
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

}  // namespace

std::vector<OpSite> Recorder::stop_sites() {
  if (!state_->handle || state_->mode != Mode::sites) throw std::logic_error("no sites call");
  auto buffers = take_buffers(state_->handle);
  state_->handle = 0;
  std::vector<OpSite> sites;
  SiteTexts texts(g_site_source);
  for (auto& b : buffers) {
    if (!b->main) continue;
    {
      // The timed calls' buffers are sized to this call's ops before they start.
      std::lock_guard<std::mutex> lock(g_mutex);
      g_reserve_events = std::max(g_reserve_events, b->site_events + 64);
      g_reserve_tensors = std::max(g_reserve_tensors, b->site_tensors + 256);
    }
    for (const auto& [name, id] : b->sites) {
      const auto& [source, text] = texts.source(id);
      sites.push_back({name->str, texts.module(id), source, text});
    }
  }
  retire(buffers);
  return sites;
}

namespace {

// A stopped call's buffers with its events put in execution order (start time; the main
// thread first on ties) and the GPU records attributed to them.
struct Collected {
  struct Ref {
    int64_t start;
    uint32_t buffer;
    int32_t local;
  };
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // the main thread's first: thread 0
  // Several buffers: their events merged by start time, and each event's index in that
  // order. One buffer (the common case) is in order already and needs neither: 24 bytes an
  // op event less at the run's peak.
  std::vector<Ref> order;
  std::vector<std::vector<int64_t>> global_id;  // per buffer, per local index
  size_t events = 0;

  Ref ref(size_t i) const { return order.empty() ? Ref{0, 0, static_cast<int32_t>(i)} : order[i]; }
  int64_t id(uint32_t buffer, int32_t local) const { return global_id.empty() ? local : global_id[buffer][local]; }
  GpuAttribution gpu;
  std::string gpu_error;
  bool gpu_traced = false;  // a call CUPTI refused has no GPU figures, not zeros
  int64_t ops_not_recorded = 0;

  Collected() = default;
  Collected(Collected&&) = default;  // the moved-from one retires nothing
  Collected& operator=(Collected&&) = delete;
  ~Collected() { retire(buffers); }

  void fill_call_figures(Call& call) const {
    call.gpu_error = gpu_error;
    call.gpu_unattributed = gpu.unattributed;
    call.gpu_unattributed_ns = gpu.unattributed_ns;
    call.gpu_dropped = gpu.dropped;
    call.ops_not_recorded = ops_not_recorded;
  }
  // What the main-thread op at local index `local` launched on the GPU, if anything.
  GpuOpTime* launched(const ThreadBuffer& b, int32_t local) {
    if (!gpu_traced || !b.main) return nullptr;
    auto it = gpu.by_external.find(static_cast<uint64_t>(local) + 1);
    return it == gpu.by_external.end() ? nullptr : &it->second;
  }
};

Collected collect(at::CallbackHandle handle, GpuTracer* gpu_tracer) {
  Collected c;
  c.buffers = take_buffers(handle);
  auto& buffers = c.buffers;
  std::stable_partition(buffers.begin(), buffers.end(), [](const auto& b) { return b->main; });
  for (const auto& b : buffers) c.events += b->events.size();
  // Each buffer is in start order already (an event is appended as its op starts): one
  // buffer needs no sort, several are merged by start time.
  if (buffers.size() > 1) {
    c.order.reserve(c.events);
    for (uint32_t bi = 0; bi < buffers.size(); ++bi)
      for (int32_t li = 0; li < static_cast<int32_t>(buffers[bi]->events.size()); ++li)
        c.order.push_back({buffers[bi]->events[li].start, bi, li});
    std::sort(c.order.begin(), c.order.end(), [](const Collected::Ref& a, const Collected::Ref& b) {
      return std::tie(a.start, a.buffer, a.local) < std::tie(b.start, b.buffer, b.local);
    });
    c.global_id.resize(buffers.size());
    for (uint32_t bi = 0; bi < buffers.size(); ++bi) c.global_id[bi].resize(buffers[bi]->events.size());
    for (size_t i = 0; i < c.order.size(); ++i) c.global_id[c.order[i].buffer][c.order[i].local] = i;
  }
  if (!buffers.empty() && buffers[0]->main) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_reserve_events = std::max(g_reserve_events, buffers[0]->events.size() + 64);
  }
  for (const auto& b : buffers) c.ops_not_recorded += b->not_recorded;
  // GPU records, flushed now that the caller has synchronised the device: external id
  // (main-thread index + 1) -> what that op launched.
  if (gpu_tracer) {
    GpuRecords records = gpu_tracer->stop();
    c.gpu_error = records.error;
    c.gpu_traced = records.traced;
    c.gpu = attribute_gpu_activity(records);
  }
  return c;
}

}  // namespace

namespace {
// The counters a counted event read: its snapshots are its buffer's next `counted` pair (the
// events are walked in start order); none when it was still running at stop().
std::vector<CounterValue> event_counters(const ThreadBuffer& b, const RawEvent& raw, size_t& next,
                                         const PerfCounters* counters) {
  if (!raw.counted || !counters || next >= b.counted.size()) return {};
  const auto [begin, end] = b.counted[next++];
  if (end < 0) return {};
  const size_t size = counters->snapshot_size();
  return counter_delta(b.snapshots.data() + begin * size, b.snapshots.data() + end * size, counters->groups(),
                       counters->events());
}
}  // namespace

namespace {

// A call's perf samples, drained once recording stopped, on the op events' time line.
struct CallSamples {
  SamplerDrain drain;
  std::vector<Sample> samples;
  std::vector<uint64_t> periods;  // per sampled counter
  std::vector<double> scale;      // per sampled counter: time enabled / running where multiplexed, else 1
  size_t interval_events = 0;     // the uncore events after them, read at intervals
};

// `origin_ns`: the steady-clock time the op events' times count from. The sampler stays enabled
// between calls (Recorder::start): what it took outside [from_ns, to_ns] is dropped.
CallSamples drain_samples(const PerfSampler& sampler, const Collected& c, int64_t origin_ns, int64_t from_ns,
                          int64_t to_ns) {
  CallSamples out;
  sampler.drain(out.drain);
  std::unordered_map<int, int32_t> thread_of;  // tid -> the call's thread index (its buffer)
  for (size_t bi = 0; bi < c.buffers.size(); ++bi) thread_of.emplace(c.buffers[bi]->tid, static_cast<int32_t>(bi));
  out.samples.reserve(out.drain.samples.size());
  for (const RawSample& r : out.drain.samples) {
    if (r.time_ns < from_ns || r.time_ns > to_ns) continue;
    auto it = thread_of.find(r.tid);
    out.samples.push_back({r.counter, it == thread_of.end() ? -1 : it->second, r.time_ns - origin_ns, r.addr});
  }
  out.periods = sampler.periods();
  out.interval_events = sampler.interval_events();
  for (IntervalReading& r : out.drain.intervals) r.time_ns -= origin_ns;
  out.scale.assign(out.periods.size(), 1.0);
  for (size_t k = 0; k < out.periods.size(); ++k)
    if (out.drain.running_ns[k] > 0 && out.drain.running_ns[k] < out.drain.enabled_ns[k])
      out.scale[k] = static_cast<double>(out.drain.enabled_ns[k]) / static_cast<double>(out.drain.running_ns[k]);
  return out;
}

// A counted op's counters: from its samples (raw = samples, scaled = samples x period, x the
// multiplexing scale), then its share of the interval-read events' counts.
std::vector<CounterValue> sampled_counters(const std::vector<uint64_t>& samples, const std::vector<double>& shares,
                                           const CallSamples& s) {
  std::vector<CounterValue> values(samples.size() + s.interval_events);
  for (size_t k = 0; k < samples.size(); ++k) {
    values[k].raw = samples[k];
    values[k].scaled = sampled_estimate(samples[k], s.periods[k]) * s.scale[k];
    values[k].multiplexed = s.scale[k] != 1.0;
  }
  bool multiplexed = false;
  for (const IntervalReading& r : s.drain.intervals) multiplexed = multiplexed || r.multiplexed;
  for (size_t e = 0; e < s.interval_events && e < shares.size(); ++e) {
    CounterValue& v = values[samples.size() + e];
    v.scaled = shares[e];
    v.raw = static_cast<uint64_t>(std::llround(shares[e]));
    v.multiplexed = multiplexed;
  }
  return values;
}

// Per span, its share of the interval-read events (empty where none were read).
std::vector<std::vector<double>> interval_shares(const std::vector<SampleSpan>& spans, const CallSamples& s) {
  if (s.interval_events == 0) return std::vector<std::vector<double>>(spans.size());
  return attribute_intervals(spans, s.drain.intervals, s.interval_events);
}

// A call's samples attributed to its spans (op events): each counted span's counters (empty for
// the others), and the call's sample totals filled in.
struct SampledCall {
  CallSamples samples;
  SampleAttribution attribution;
  std::vector<std::vector<CounterValue>> counters;  // per span
};

SampledCall sample_call(Call& call, const PerfSampler& sampler, const Collected& c, const std::vector<SampleSpan>& spans,
                        int64_t origin_ns, int64_t from_ns, int64_t to_ns) {
  SampledCall out;
  out.samples = drain_samples(sampler, c, origin_ns, from_ns, to_ns);
  const CallSamples& s = out.samples;
  out.attribution = attribute_samples(spans, s.samples, s.periods.size());
  const SampleAttribution& a = out.attribution;
  const auto shares = interval_shares(spans, s);
  out.counters.resize(spans.size());
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].counted) out.counters[i] = sampled_counters(a.counted[i], shares[i], s);
  call.sample_totals.assign(s.periods.size(), {});
  for (const Sample& x : s.samples)
    if (x.counter < call.sample_totals.size()) ++call.sample_totals[x.counter].samples;
  for (size_t k = 0; k < call.sample_totals.size(); ++k) {
    call.sample_totals[k].attributed = call.sample_totals[k].samples - static_cast<int64_t>(a.unattributed[k]);
    call.sample_totals[k].lost = static_cast<int64_t>(s.drain.lost[k]);
  }
  return out;
}

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
std::vector<int32_t> match_by_site(const Collected& c, const Call& first) {
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
  SiteTexts texts(g_site_source);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    Key key{Str(raw.name->str).id(), none.id(), none.id(), -1};
    if (raw.parent >= 0) {
      std::get<3>(key) = to_first[c.id(at.buffer, raw.parent)];
    } else if (raw.sited && next_site[at.buffer] < b.sites.size()) {
      const SiteId id = b.sites[next_site[at.buffer]++].second;
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

}  // namespace

Call Recorder::stop_figures(const Call& first) {
  if (!state_->handle || state_->mode == Mode::sites) throw std::logic_error("no timed call");
  const int64_t stop_tick = ticks();
  const TickScale scale = TickScale::now();
  Collected c = collect(state_->handle, state_->gpu);
  state_->handle = 0;
  Call call;
  c.fill_call_figures(call);
  call.figures_only = true;
  // The figures go in the first call's op order: this call's, where it ran the same sequence.
  bool in_order = c.events == first.events.size();
  for (size_t i = 0; i < c.events && in_order; ++i) {
    const Collected::Ref at = c.ref(i);
    const RawEvent& raw = c.buffers[at.buffer]->events[at.local];
    in_order = same_op(first.key(i), raw, c.buffers[at.buffer]->main,
                       raw.parent >= 0 ? c.id(at.buffer, raw.parent) : -1);
  }
  std::vector<int32_t> to_first;
  if (!in_order && c.events == first.events.size())
    to_first = first.sites_recorded ? match_by_site(c, first) : match_by_thread(c, first);
  call.same_ops_as_first = in_order || !to_first.empty();
  std::vector<int64_t> durations, gpu_times;  // reordered into the first call's op order
  if (!to_first.empty()) {
    durations.resize(c.events);
    if (c.gpu_traced) gpu_times.resize(c.events);
  }
  std::vector<size_t> next_counted(c.buffers.size(), 0);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    const int64_t duration = scale.ns(raw.end ? raw.end : stop_tick) - scale.ns(raw.start);
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
    for (const CounterValue& v : event_counters(b, raw, next_counted[at.buffer], state_->counters))
      call.counters.push_counter(v);
  }
  if (state_->sampler) {
    // The counted ops' samples, in the order the counted ops start (as read counters come).
    std::vector<SampleSpan> spans(c.events);
    for (size_t i = 0; i < c.events; ++i) {
      const Collected::Ref at = c.ref(i);
      const ThreadBuffer& b = *c.buffers[at.buffer];
      const RawEvent& raw = b.events[at.local];
      spans[i] = {scale.ns(raw.start), scale.ns(raw.end ? raw.end : stop_tick),
                  raw.parent >= 0 ? static_cast<int32_t>(c.id(at.buffer, raw.parent)) : -1, at.buffer,
                  counted_op(b.main, raw.parent < 0, raw.name)};
    }
    const SampledCall sampled =
        sample_call(call, *state_->sampler, c, spans, 0, scale.ns(state_->start_tick), scale.ns(stop_tick));
    for (const std::vector<CounterValue>& values : sampled.counters)
      for (const CounterValue& v : values) call.counters.push_counter(v);
  }
  for (int64_t d : durations) call.duration_ns.push_back(d);
  for (int64_t g : gpu_times) call.gpu_ns.push_back(g);
  call.duration_ns.shrink_to_fit();
  call.gpu_ns.shrink_to_fit();
  call.counters.shrink_to_fit();
  return call;
}

// Each backward function's forward op: the last forward op that ran with the same autograd
// sequence number (a composite op and the op inside it that made the node share the number;
// the inner one is the node's maker).
namespace {
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
}  // namespace

// The shown call's samples: each counted op's counters, and where data addresses fell in the
// ops' tensors.
namespace {
void attribute_call_samples(Call& call, const PerfSampler& sampler, const Collected& c,
                            const std::vector<SampleSpan>& spans, int64_t origin_ns, int64_t stop_ns) {
  const SampledCall sampled = sample_call(call, sampler, c, spans, origin_ns, origin_ns, stop_ns);
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].counted) call.events[i].counters.assign(sampled.counters[i].begin(), sampled.counters[i].end());
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
}  // namespace

namespace {

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
  EventConverter(Collected& c, Call& call, const PerfCounters* counters, const TickScale& scale,
                 int64_t start_tick, int64_t stop_tick)
      : c_(c), call_(call), counters_(counters), scale_(scale), start_tick_(start_tick), stop_tick_(stop_tick),
        base_(adopt_main_tensors(c, *call.tensors)), next_counted_(c.buffers.size()),
        next_site_(c.buffers.size()), texts_(g_site_source) {}

  // Event `i`, at `at`: `raw` in buffer `b`. Appended to the call's events.
  OpEvent& add(size_t i, Collected::Ref at, const ThreadBuffer& b, const RawEvent& raw) {
    OpEvent& e = call_.events.emplace_back();
    set_figures(e, i, at, b, raw);
    if (static_cast<size_t>(at.local) < b.ranges.size())  // Mode::timed
      set_tensors(e, b, b.ranges[at.local], base_[at.buffer]);
    if (raw.sited && next_site_[at.buffer] < b.sites.size()) set_site(e, b.sites[next_site_[at.buffer]++].second);
    place(e, i, raw.forked);
    return e;
  }

 private:
  // Ids, name, counters, times, thread and GPU time.
  void set_figures(OpEvent& e, size_t i, Collected::Ref at, const ThreadBuffer& b, const RawEvent& raw) {
    e.id = static_cast<int64_t>(i);
    e.parent = raw.parent >= 0 ? c_.id(at.buffer, raw.parent) : -1;
    e.name = raw.name->str;
    e.counters = event_counters(b, raw, next_counted_[at.buffer], counters_);
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

  // Event `i`'s parent where a pool thread recorded none, its depth, and its parent's site.
  void place(OpEvent& e, size_t i, bool forked) {
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
      if (call_.sites_recorded) {  // nested ops belong where their top-level op does
        e.module = p.module;
        e.source = p.source;
        e.source_text = p.source_text;
      }
    }
  }

  Collected& c_;
  Call& call_;
  const PerfCounters* counters_;
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

}  // namespace

Call Recorder::stop() {
  if (!state_->handle || state_->mode == Mode::sites) throw std::logic_error("no timed call");
  const int64_t stop_tick = ticks();
  const TickScale scale = TickScale::now();
  Collected c = collect(state_->handle, state_->gpu);
  state_->handle = 0;
  Call call;
  c.fill_call_figures(call);
  // Op event ids are 32-bit (OpEvent): 2^31 events would need hundreds of GB before this.
  if (c.events > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw std::length_error("more than 2^31 op events in one call: set --max-ops lower");
  call.tensors_recorded = state_->mode == Mode::timed;
  // Grown as the raw events are converted (and released), not sized at once: the two arrays
  // are never both whole in memory.
  call.events.reserve(c.events);
  call.sites_recorded = g_capture_sites && state_->mode == Mode::timed;
  EventConverter convert(c, call, state_->counters, scale, state_->start_tick, stop_tick);
  size_t released = 0;  // raw events of the one buffer whose pages were released
  std::vector<SampleSpan> spans;  // sampled counters: the events as attribution sees them
  if (state_->sampler) spans.resize(c.events);
  for (size_t i = 0; i < c.events; ++i) {
    const Collected::Ref at = c.ref(i);
    const ThreadBuffer& b = *c.buffers[at.buffer];
    const RawEvent& raw = b.events[at.local];
    const OpEvent& e = convert.add(i, at, b, raw);
    if (state_->backward_tick >= 0 && call.backward_from < 0 && raw.start >= state_->backward_tick)
      call.backward_from = static_cast<int64_t>(i);
    if (state_->sampler) spans[i] = sample_span(e, b, raw);
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
  if (state_->sampler) attribute_call_samples(call, *state_->sampler, c, spans, scale.ns(state_->start_tick), scale.ns(stop_tick));
  return call;
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
