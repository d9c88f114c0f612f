// CUPTI Activity API: kernel, memcpy and memset records attributed to ops through external
// correlation ids. The only file that includes CUDA and CUPTI headers.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "counters/cupti_records.h"
#include "counters/gpu.h"

namespace layoutprof {

namespace {

using cupti::KernelRecord;
using cupti::MemcpyRecord;
using cupti::MemsetRecord;

std::string result_text(CUptiResult status) {
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  return text ? text : "unknown error " + std::to_string(status);
}

void check(CUptiResult status, const char* what) {
  if (status != CUPTI_SUCCESS) throw std::runtime_error(std::string("CUPTI ") + what + ": " + result_text(status));
}

// Kernel names come mangled ("_ZN2at6native..."): readable ones for the report.
std::string demangle(const char* name) {
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && readable ? readable : name;
  std::free(readable);
  return out;
}

// layoutprof's own external correlation kind: PyTorch's profiler (Kineto) pushes CUSTOM0 for its
// ops and CUSTOM1 for user annotations, so that each tool reads only its own ids.
constexpr CUpti_ExternalCorrelationKind kOwnKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;

// A CUDA graph launch, through the runtime or the driver: the API calls whose correlation ids a
// graph's kernels carry.
bool is_graph_launch(CUpti_ActivityKind kind, uint32_t cbid) {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME)
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

const char* copy_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

class CuptiTracer : public GpuTracer {
 public:
  static constexpr size_t kBufferBytes = 8 << 20;
  static constexpr size_t kBuffers = 16;  // shared by every thread that makes CUDA calls

  explicit CuptiTracer(int device) : device_(device) {
    for (size_t i = 0; i < kBuffers; ++i) {
      void* p = std::aligned_alloc(8, kBufferBytes);  // CUPTI wants 8-byte aligned buffers
      if (!p) throw std::bad_alloc();
      pool_.push_back(static_cast<uint8_t*>(p));
    }
    with_cupti_.assign(kBuffers, false);
    free_ = pool_;
    completed_.reserve(kBuffers);
  }

  ~CuptiTracer() override {
    if (active_) stop();
    CuptiTracer* self = this;
    current_.compare_exchange_strong(self, nullptr);
    std::lock_guard<std::mutex> lock(mutex_);
    // A buffer CUPTI still holds (it never came back) is left to it rather than freed.
    for (size_t i = 0; i < pool_.size(); ++i)
      if (!with_cupti_[i]) std::free(pool_[i]);
  }

  void start() noexcept override {
    error_.clear();
    generation_ = ++s_generation_;
    depth_ = 0;
    current_.store(this);
    // CUPTI keeps one pair of buffer callbacks per process, and another client (PyTorch's
    // profiler registers its own at each start) may hold buffers: they go back to it, through
    // its callbacks, before ours take their place. Late buffers of our own come back here too.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Buffers that came back after the last stop() hold an earlier call's records: not
      // this call's, and back in the pool. Those CUPTI still holds stay out of it.
      completed_.clear();
      free_.clear();
      for (size_t i = 0; i < pool_.size(); ++i)
        if (!with_cupti_[i]) free_.push_back(pool_[i]);
      dropped_ = 0;
    }
    size_t stale = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &stale);  // drops before this call: not ours
    try {
      check(cuptiActivityRegisterCallbacks(&CuptiTracer::request, &CuptiTracer::complete), "register callbacks");
      for (CUpti_ActivityKind kind : kinds()) check(cuptiActivityEnable(kind), "enable activity kind");
      active_ = true;
    } catch (const std::exception& e) {
      error_ = e.what();
      for (CUpti_ActivityKind kind : kinds()) cuptiActivityDisable(kind);
    }
  }

  // External ids carry the call's number (process-wide) in their high 32 bits, so that a
  // record of an earlier call, however late, is never charged to an op of this one.
  bool push(uint64_t id) override {
    if (!active_) return false;
    if (cuptiActivityPushExternalCorrelationId(kOwnKind, tag(id)) != CUPTI_SUCCESS)
      return false;
    ++depth_;
    return true;
  }

  // Another thread's: no depth kept (stop() runs once every other thread's callbacks are done,
  // their pushes popped).
  bool push_on_thread(uint64_t id) override {
    return active_ &&
           cuptiActivityPushExternalCorrelationId(kOwnKind, tag(id)) == CUPTI_SUCCESS;
  }

  void pop_on_thread() override {
    uint64_t last = 0;
    if (active_) cuptiActivityPopExternalCorrelationId(kOwnKind, &last);
  }

  void pop() override {
    if (!active_ || depth_ == 0) return;
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(kOwnKind, &last);
    --depth_;
  }

  GpuRecords stop() noexcept override {
    GpuRecords out;
    out.error = error_;
    if (!active_) return out;
    active_ = false;
    out.traced = true;
    cudaDeviceSynchronize();  // the call's kernels done, so that their records exist
    // Ops left open (the model raised past them) leave their ids pushed: take them off.
    for (; depth_ > 0; --depth_) {
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(kOwnKind, &last);
    }
    // No new records, then every buffer back, partly filled ones too.
    for (CUpti_ActivityKind kind : kinds()) cuptiActivityDisable(kind);
    CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (flushed != CUPTI_SUCCESS) out.error = "CUPTI flush: " + result_text(flushed);
    // Records dropped after the last buffer came back (the pool ran dry) are counted here,
    // or they would surface in the next call's first buffer.
    size_t late_drops = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &late_drops);
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      Parsed parsed;
      for (auto [buffer, valid] : completed_) {
        CUpti_Activity* record = nullptr;
        while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) parse(record, out, parsed);
      }
      // Launches an earlier call made (their correlation record says so) are not this call's,
      // not even as unattributed work.
      if (!parsed.earlier.empty())
        out.activities.erase(std::remove_if(out.activities.begin(), out.activities.end(),
                                            [&](const GpuActivity& a) { return parsed.earlier.count(a.correlation); }),
                             out.activities.end());
      if (dropped_ + late_drops == 0) check_graph_correlation(out, parsed);
    } catch (const std::exception& e) {
      out = GpuRecords{};
      out.error = std::string("reading CUPTI records: ") + e.what();
    }
    for (auto [buffer, valid] : completed_) free_.push_back(buffer);
    completed_.clear();
    out.dropped = dropped_ + late_drops;
    return out;
  }

  std::string describe() override {
    int device = device_;
    if (device < 0) cudaGetDevice(&device);
    int driver = 0, runtime = 0;
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    uint32_t cupti = 0;
    cuptiGetVersion(&cupti);
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
    return std::string(prop.name) + " (cuda:" + std::to_string(device) + "), driver CUDA " + version(driver) +
           ", runtime CUDA " + version(runtime) + ", CUPTI API " + std::to_string(cupti);
  }

 private:
  // CUPTI writes an external correlation record only in front of a runtime or driver API
  // record (cupti_activity.h, cuptiActivityPushExternalCorrelationId), so both API kinds are
  // collected too, their records read only for graph launches: runtime for cudaLaunchKernel,
  // cudaMemcpyAsync and cudaGraphLaunch, driver for cuLaunchKernel (cuBLAS, cuDNN, Triton).
  static std::vector<CUpti_ActivityKind> kinds() {
    return {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};
  }

  uint64_t tag(uint64_t id) const { return (generation_ << 32) | (id & 0xffffffffu); }

  struct Parsed {
    std::unordered_map<const char*, std::string> names;  // demangled, by CUPTI's name pointer
    std::unordered_set<uint32_t> earlier;                 // correlation ids of earlier calls
    std::unordered_set<uint32_t> graph_launches;          // correlation ids of graph launches
  };

  // A graph's kernels carry the correlation id of the graph launch that ran them. Where one
  // carries an id of no graph launch of this call (CUPTI 13.0 after a process's first session,
  // fixed in 13.1 Update 1), its id is not trusted: the record is counted unattributed rather
  // than charged to whatever op that id names. Only with every record kept (a dropped API
  // record would look the same).
  static void check_graph_correlation(GpuRecords& out, const Parsed& parsed) {
    for (GpuActivity& a : out.activities)
      if (a.graph != 0 && !parsed.graph_launches.count(a.correlation)) {
        a.correlation = 0;  // CUPTI's ids start at 1: matches no launch
        ++out.graph_uncorrelated;
      }
  }

  void parse(CUpti_Activity* record, GpuRecords& out, Parsed& parsed) const {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<KernelRecord*>(record);
        std::string name = "kernel";
        if (const char* mangled = k->name) {  // a copy: the record is packed
          auto it = parsed.names.find(mangled);
          if (it == parsed.names.end()) it = parsed.names.emplace(mangled, demangle(mangled)).first;
          name = it->second;
        }
        out.activities.push_back({GpuActivity::Kind::kernel, std::move(name), static_cast<int64_t>(k->start),
                                  static_cast<int64_t>(k->end), k->correlationId, k->deviceId, k->streamId,
                                  k->graphId, k->graphNodeId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<MemcpyRecord*>(record);
        out.activities.push_back({GpuActivity::Kind::memcpy, copy_kind(m->copyKind),
                                  static_cast<int64_t>(m->start), static_cast<int64_t>(m->end),
                                  m->correlationId, m->deviceId, m->streamId, m->graphId, m->graphNodeId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<MemsetRecord*>(record);
        out.activities.push_back({GpuActivity::Kind::memset, "memset", static_cast<int64_t>(m->start),
                                  static_cast<int64_t>(m->end), m->correlationId, m->deviceId, m->streamId,
                                  m->graphId, m->graphNodeId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* api = reinterpret_cast<CUpti_ActivityAPI*>(record);
        if (is_graph_launch(record->kind, api->cbid)) parsed.graph_launches.insert(api->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        auto* c = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record);
        if (c->externalKind != kOwnKind) break;  // another tool's ids
        if ((c->externalId >> 32) == generation_)
          out.correlations.push_back({c->correlationId, c->externalId & 0xffffffffu});
        else
          parsed.earlier.insert(c->correlationId);
        break;
      }
      default:
        break;
    }
  }

  // CUPTI asks for a buffer: hand out one from the pool, or none (CUPTI then drops records
  // and counts them). Allocates nothing.
  static void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    CuptiTracer* t = current_.load();
    if (!t) return;
    std::lock_guard<std::mutex> lock(t->mutex_);
    if (t->free_.empty()) return;
    *buffer = t->free_.back();
    t->free_.pop_back();
    t->with_cupti_[t->slot(*buffer)] = true;
    *size = kBufferBytes;
  }

  // May run on CUPTI's own thread.
  static void CUPTIAPI complete(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
    CuptiTracer* t = current_.load();
    if (!t || !buffer) return;
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
    std::lock_guard<std::mutex> lock(t->mutex_);
    size_t i = t->slot(buffer);
    if (i == kBuffers) return;  // not from this tracer's pool
    t->with_cupti_[i] = false;
    t->completed_.emplace_back(buffer, valid);
    t->dropped_ += dropped;
  }

  size_t slot(const uint8_t* buffer) const {
    return static_cast<size_t>(std::find(pool_.begin(), pool_.end(), buffer) - pool_.begin());
  }

  static inline std::atomic<CuptiTracer*> current_{nullptr};
  static inline std::atomic<uint64_t> s_generation_{0};  // recorded calls in this process
  const int device_;
  std::mutex mutex_;
  std::vector<uint8_t*> pool_, free_;
  std::vector<bool> with_cupti_;  // per pool slot: handed out, not yet back
  std::vector<std::pair<uint8_t*, size_t>> completed_;
  uint64_t dropped_ = 0;
  uint64_t generation_ = 0;
  size_t depth_ = 0;  // ids pushed and not yet popped (main thread)
  std::atomic<bool> active_{false};  // read by the call's other threads' pushes
  std::string error_;
};

}  // namespace

std::unique_ptr<GpuTracer> create_gpu_tracer(int device, std::string* why_not) {
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    if (why_not)
      *why_not = std::string("no CUDA device: ") +
                 (status != cudaSuccess ? cudaGetErrorString(status) : "none found");
    return nullptr;
  }
  if (device >= devices) {
    if (why_not) *why_not = "no CUDA device " + std::to_string(device) + " (" + std::to_string(devices) + " found)";
    return nullptr;
  }
  return std::make_unique<CuptiTracer>(device);
}

bool gpu_tracing_built() { return true; }

}  // namespace layoutprof
