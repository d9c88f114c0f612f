// The string and shape pools, and their epochs (pools.h).
#include "core/pools.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "core/layout.h"

namespace layoutprof {

namespace {

// The leases, and the lock that makes "the last lease goes and its epoch is freed" one step
// against a new lease.
struct Epochs {
  std::mutex mutex;
  std::atomic<int> leases{0};
  std::atomic<uint64_t> generation{0};
  std::vector<void (*)()> hooks;
};

Epochs& epochs() {
  static Epochs* e = new Epochs;  // never destroyed: leases may go during static teardown
  return *e;
}

size_t text_bytes(const std::string& s) {
  // The characters beyond the string's own object where they do not fit inside it.
  return sizeof(std::string) + (s.capacity() > 15 ? s.capacity() + 1 : 0);
}

struct TextPool {
  std::mutex mutex;
  std::unordered_set<std::string> texts;  // node-based: element addresses are stable
  std::vector<const std::string*> epoch;  // the open epoch's, to free as it ends
  size_t bytes = 0;

  const std::string* intern(std::string_view text, bool in_epoch) {
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, added] = texts.emplace(text);
    if (added) {
      bytes += text_bytes(*it);
      if (in_epoch) epoch.push_back(&*it);
    }
    return &*it;
  }

  void free_epoch() {
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string* s : epoch) {
      bytes -= text_bytes(*s);
      texts.erase(texts.find(*s));
    }
    epoch.clear();
    epoch.shrink_to_fit();
  }
};

TextPool& text_pool() {
  static TextPool* pool = new TextPool;  // never destroyed: texts outlive static teardown
  return *pool;
}

bool epoch_open() { return epochs().leases.load(std::memory_order_acquire) > 0; }

struct ShapeHash {
  size_t operator()(const TensorShape* s) const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (int64_t v : s->sizes) mix(static_cast<uint64_t>(v));
    mix(0x9e3779b97f4a7c15ull);
    for (int64_t v : s->strides) mix(static_cast<uint64_t>(v));
    mix(reinterpret_cast<uintptr_t>(s->dtype.id()));
    mix(reinterpret_cast<uintptr_t>(s->device.id()));
    mix(static_cast<uint64_t>(s->elem_size));
    mix(static_cast<uint64_t>(s->layout.cls));
    for (int v : s->layout.order) mix(static_cast<uint64_t>(v));
    return static_cast<size_t>(h);
  }
};

struct ShapeEq {
  bool operator()(const TensorShape* a, const TensorShape* b) const {
    return a->sizes == b->sizes && a->strides == b->strides && a->dtype == b->dtype &&
           a->device == b->device && a->elem_size == b->elem_size &&
           a->layout.cls == b->layout.cls && a->layout.order == b->layout.order;
  }
};

size_t shape_bytes(const TensorShape& s) {
  return sizeof(TensorShape) + (s.sizes.capacity() + s.strides.capacity()) * sizeof(int64_t) +
         s.layout.order.capacity() * sizeof(int);
}

struct ShapePool {
  std::mutex mutex;
  std::deque<TensorShape> kept;   // interned with no lease held: for good
  std::deque<TensorShape> epoch;  // the open epoch's
  std::unordered_set<const TensorShape*, ShapeHash, ShapeEq> index;
  size_t bytes = 0;

  void free_epoch() {
    std::lock_guard<std::mutex> lock(mutex);
    for (const TensorShape& s : epoch) {
      index.erase(&s);
      bytes -= shape_bytes(s);
    }
    std::deque<TensorShape>().swap(epoch);
  }
};

ShapePool& shape_pool() {
  static ShapePool* pool = new ShapePool;  // never destroyed: shapes outlive static teardown
  return *pool;
}

}  // namespace

PoolLease::PoolLease() {
  Epochs& e = epochs();
  std::lock_guard<std::mutex> lock(e.mutex);
  e.leases.fetch_add(1, std::memory_order_acq_rel);
}

PoolLease::PoolLease(const PoolLease&) : PoolLease() {}

PoolLease::~PoolLease() {
  Epochs& e = epochs();
  std::lock_guard<std::mutex> lock(e.mutex);
  if (e.leases.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Shapes first: a shape of the epoch points to its texts.
  shape_pool().free_epoch();
  text_pool().free_epoch();
  e.generation.fetch_add(1, std::memory_order_acq_rel);
  for (void (*hook)() : e.hooks) hook();
}

PoolCounts pool_counts() {
  PoolCounts c;
  {
    TextPool& t = text_pool();
    std::lock_guard<std::mutex> lock(t.mutex);
    c.strings = t.texts.size();
    c.string_bytes = t.bytes;
  }
  ShapePool& s = shape_pool();
  std::lock_guard<std::mutex> lock(s.mutex);
  c.shapes = s.index.size();
  c.shape_bytes = s.bytes;
  return c;
}

uint64_t pools_generation() { return epochs().generation.load(std::memory_order_acquire); }

int pool_leases() { return epochs().leases.load(std::memory_order_acquire); }

void on_pools_released(void (*hook)()) {
  Epochs& e = epochs();
  std::lock_guard<std::mutex> lock(e.mutex);
  for (void (*h)() : e.hooks)
    if (h == hook) return;
  e.hooks.push_back(hook);
}

// Set while pooled_shape() makes a kept shape's label: the label is kept with it.
thread_local bool t_keep = false;

const std::string* Str::intern(std::string_view text) { return text_pool().intern(text, !t_keep && epoch_open()); }

const std::string* Str::empty_text() {
  static const std::string* empty = text_pool().intern("", false);  // for good, whenever first asked
  return empty;
}

const TensorShape* pooled_shape(TensorShape&& shape, bool for_good) {
  ShapePool& pool = shape_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  auto it = pool.index.find(&shape);
  if (it != pool.index.end()) return *it;
  // Decided once: a kept shape keeps its label (an epoch's may point to a kept one).
  const bool in_epoch = !for_good && epoch_open();
  struct Keep {
    explicit Keep(bool keep) { t_keep = keep; }
    ~Keep() { t_keep = false; }
  } keep(!in_epoch);
  shape.label = Str(layout_label(shape.layout));
  std::deque<TensorShape>& home = in_epoch ? pool.epoch : pool.kept;
  home.push_back(std::move(shape));
  pool.index.insert(&home.back());
  pool.bytes += shape_bytes(home.back());
  return &home.back();
}

}  // namespace layoutprof
