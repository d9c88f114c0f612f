// See fake_cupti.h. Built only into the tracer's test, in place of libcupti and libcudart.
#include "fake_cupti.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "counters/cupti_records.h"

using layoutprof::cupti::KernelRecord;
using layoutprof::cupti::MemcpyRecord;
using layoutprof::cupti::MemsetRecord;

namespace {

constexpr size_t kAlign = 8;  // ACTIVITY_RECORD_ALIGNMENT
constexpr size_t kBatch = 256;  // kernel records the "GPU" completes at a time

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return aligned(sizeof(KernelRecord));
    case CUPTI_ACTIVITY_KIND_MEMSET: return aligned(sizeof(MemsetRecord));
    case CUPTI_ACTIVITY_KIND_MEMCPY: return aligned(sizeof(MemcpyRecord));
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return aligned(sizeof(CUpti_ActivityAPI));
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return aligned(sizeof(CUpti_ActivityExternalCorrelation));
    default: return 0;
  }
}

struct State {
  std::mutex mutex;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::set<int> enabled;
  int register_calls = 0;
  int unbalanced_pops = 0;
  int devices = 1;
  uint32_t next_correlation = 0;
  uint8_t* buffer = nullptr;  // the one being filled
  size_t size = 0, used = 0;
  std::deque<std::vector<uint8_t>> pending;  // records the GPU has not completed yet
  std::set<std::string> names;               // kernel names live as long as CUPTI does
  uint64_t made = 0, dropped = 0, dropped_unread = 0;
  size_t held = 0;
  bool hold_back = false;
  struct Held {
    uint8_t* buffer;
    size_t size, used;
  };
  std::vector<Held> held_back;           // kept by a held-back flush: completed by the next
  std::set<const uint8_t*> holding;      // every buffer CUPTI holds
  size_t requested = 0;
  int violations = 0;
  CUptiResult enable_result = CUPTI_SUCCESS;
};

State& state() {
  static State s;
  return s;
}

thread_local std::map<int, std::vector<uint64_t>> t_external;  // per thread, per kind

// Completion callbacks run without the fake's lock, as the client may call back into CUPTI.
void complete_buffer(State& s, std::unique_lock<std::mutex>& lock, uint8_t* b, size_t size, size_t used) {
  s.held--;
  s.holding.erase(b);
  auto complete = s.complete;
  lock.unlock();
  complete(nullptr, 0, b, size, used);
  lock.lock();
}

void complete_current(State& s, std::unique_lock<std::mutex>& lock) {
  if (!s.buffer) return;
  uint8_t* b = s.buffer;
  size_t size = s.size, used = s.used;
  s.buffer = nullptr;
  s.size = s.used = 0;
  complete_buffer(s, lock, b, size, used);
}

void write(State& s, std::unique_lock<std::mutex>& lock, const void* record, size_t n) {
  s.made++;
  if (s.buffer && s.used + n > s.size) complete_current(s, lock);
  if (!s.buffer) {
    uint8_t* b = nullptr;
    size_t size = 0, max_records = 0;
    auto request = s.request;
    lock.unlock();
    request(&b, &size, &max_records);
    lock.lock();
    if (!b || size < n) {
      s.dropped++;
      s.dropped_unread++;
      return;
    }
    if (reinterpret_cast<uintptr_t>(b) % kAlign != 0) std::abort();  // CUPTI requires 8-byte alignment
    if (s.holding.count(b)) s.violations++;  // handed out again while CUPTI holds it
    s.holding.insert(b);
    s.requested++;
    s.buffer = b;
    s.size = size;
    s.used = 0;
    s.held++;
  }
  std::memcpy(s.buffer + s.used, record, n);
  s.used += n;
}

void drain_pending(State& s, std::unique_lock<std::mutex>& lock, size_t keep) {
  while (s.pending.size() > keep) {
    std::vector<uint8_t> r = std::move(s.pending.front());
    s.pending.pop_front();
    write(s, lock, r.data(), r.size());
  }
}

template <typename Record>
std::vector<uint8_t> bytes_of(const Record& r) {
  std::vector<uint8_t> out(aligned(sizeof(Record)), 0);
  std::memcpy(out.data(), &r, sizeof(Record));
  return out;
}

// The API call that launched something: its external correlation records first, then its own.
uint32_t api_call(State& s, std::unique_lock<std::mutex>& lock, fake_cupti::Api api, uint32_t cbid = 0) {
  uint32_t correlation = ++s.next_correlation;
  CUpti_ActivityKind kind = api == fake_cupti::Api::runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  if (!s.enabled.count(kind)) return correlation;
  if (s.enabled.count(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
    for (auto& [external_kind, stack] : t_external) {
      if (stack.empty()) continue;
      CUpti_ActivityExternalCorrelation ext{};
      ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      ext.externalKind = static_cast<CUpti_ExternalCorrelationKind>(external_kind);
      ext.externalId = stack.back();
      ext.correlationId = correlation;
      auto b = bytes_of(ext);
      write(s, lock, b.data(), b.size());
    }
  }
  CUpti_ActivityAPI rec{};
  rec.kind = kind;
  rec.cbid = cbid;
  rec.correlationId = correlation;
  auto b = bytes_of(rec);
  write(s, lock, b.data(), b.size());
  return correlation;
}

}  // namespace

namespace fake_cupti {

void reset() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  // The buffer callbacks stay registered, as they do for the life of a process.
  s.enabled.clear();
  s.unbalanced_pops = 0;
  s.devices = 1;
  s.buffer = nullptr;
  s.size = s.used = 0;
  s.pending.clear();
  s.made = s.dropped = s.dropped_unread = 0;
  s.held = 0;
  s.hold_back = false;
  s.held_back.clear();
  s.holding.clear();
  s.requested = 0;
  s.violations = 0;
  s.enable_result = CUPTI_SUCCESS;
  t_external.clear();
}

void set_device_count(int n) { state().devices = n; }

uint32_t launch_kernel(const std::string& name, uint64_t start_ns, uint64_t end_ns, Api api) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  uint32_t correlation = api_call(s, lock, api);
  if (s.enabled.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    KernelRecord k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = s.names.insert(name).first->c_str();
    k.start = start_ns;
    k.end = end_ns;
    k.correlationId = correlation;
    k.deviceId = 0;
    k.streamId = 7;
    s.pending.push_back(bytes_of(k));
    if (s.pending.size() >= 2 * kBatch) drain_pending(s, lock, kBatch);  // the GPU catches up
  }
  return correlation;
}

uint32_t launch_memset(uint64_t start_ns, uint64_t end_ns) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  uint32_t correlation = api_call(s, lock, Api::runtime);
  if (s.enabled.count(CUPTI_ACTIVITY_KIND_MEMSET)) {
    MemsetRecord m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.start = start_ns;
    m.end = end_ns;
    m.correlationId = correlation;
    s.pending.push_back(bytes_of(m));
  }
  return correlation;
}

uint32_t launch_graph(uint32_t graph, int kernels, uint64_t start_ns, bool correlated) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  uint32_t correlation = api_call(s, lock, Api::runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  if (!s.enabled.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return correlation;
  for (int n = 1; n <= kernels; ++n) {
    KernelRecord k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = s.names.insert("graph_kernel").first->c_str();
    k.start = start_ns + 1000 * (n - 1);
    k.end = k.start + 1000;
    k.correlationId = correlated ? correlation : correlation - 1;
    k.graphId = graph;
    k.graphNodeId = static_cast<uint64_t>(n);
    k.streamId = 7;
    s.pending.push_back(bytes_of(k));
  }
  return correlation;
}

void hold_back_next_flush() { state().hold_back = true; }
void fail_enable(int cupti_result) { state().enable_result = static_cast<CUptiResult>(cupti_result); }
size_t pushed(int external_kind) { return t_external[external_kind].size(); }
size_t buffers_requested() { return state().requested; }
int violations() { return state().violations; }

uint64_t records_made() { return state().made; }
uint64_t records_dropped() { return state().dropped; }
int register_calls() { return state().register_calls; }
int unbalanced_pops() { return state().unbalanced_pops; }
bool enabled(int kind) { return state().enabled.count(kind) > 0; }
size_t buffers_held() { return state().held; }

}  // namespace fake_cupti

extern "C" {

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI error (fake)";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  if (!request || !complete) return CUPTI_ERROR_INVALID_PARAMETER;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.request = request;
  s.complete = complete;
  s.register_calls++;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (record_size(kind) == 0) return CUPTI_ERROR_INVALID_KIND;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.enable_result != CUPTI_SUCCESS) return s.enable_result;
  s.enabled.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.enabled.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  t_external[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* id) {
  auto& stack = t_external[kind];
  if (stack.empty()) {
    state().unbalanced_pops++;
    return CUPTI_ERROR_QUEUE_EMPTY;
  }
  if (id) *id = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.complete) return CUPTI_ERROR_INVALID_OPERATION;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
    drain_pending(s, lock, 0);
    std::vector<State::Held> earlier;
    earlier.swap(s.held_back);
    for (const State::Held& h : earlier) complete_buffer(s, lock, h.buffer, h.size, h.used);
    if (s.hold_back) {
      s.hold_back = false;
      if (s.buffer) {
        s.held_back.push_back({s.buffer, s.size, s.used});
        s.buffer = nullptr;
        s.size = s.used = 0;
      }
    } else {
      complete_current(s, lock);
    }
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (!buffer) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!*record) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.holding.count(buffer)) s.violations++;  // read while CUPTI holds it
  }
  size_t offset = 0;
  if (*record) {
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + record_size((*record)->kind);
  }
  if (offset >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  size_t n = record_size(next->kind);
  if (n == 0 || offset + n > valid) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *dropped = s.dropped_unread;
  s.dropped_unread = 0;
  return CUPTI_SUCCESS;
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  *count = state().devices;
  return state().devices > 0 ? cudaSuccess : cudaErrorNoDevice;
}

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  return error == cudaErrorNoDevice ? "no CUDA-capable device is detected" : "CUDA error (fake)";
}

cudaError_t CUDARTAPI cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  std::strncpy(prop->name, "Fake GPU (tests)", sizeof(prop->name) - 1);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

}  // extern "C"
