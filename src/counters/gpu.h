// GPU time per op through CUPTI's Activity API. This header is free of CUDA and CUPTI headers:
// the tracer lives in src/counters/cupti_tracer.cpp, built only where the toolkit is found.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace layoutprof {

// One activity record, as CUPTI delivered it (times in ns, GPU clock).
struct GpuActivity {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  std::string name;  // kernel name; "memcpy HtoD" etc. for the others
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t correlation = 0;  // CUDA API call that launched it
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t graph = 0;       // the CUDA graph it ran in (0: launched on its own)
  uint64_t graph_node = 0;  // its node in that graph
};

// CUPTI's link from a CUDA API call to the external id pushed when it was made.
struct GpuCorrelation {
  uint32_t correlation = 0;
  uint64_t external = 0;
};

struct GpuRecords {
  std::vector<GpuActivity> activities;
  std::vector<GpuCorrelation> correlations;
  uint64_t dropped = 0;  // records CUPTI could not store (pool exhausted)
  // Graph records whose correlation id named no graph launch of the call: left unattributed.
  int64_t graph_uncorrelated = 0;
  bool traced = false;   // CUPTI traced the call (it may still have lost records: error)
  std::string error;     // what went wrong, if anything
};

// What ran on the GPU for one op (external id).
struct GpuOpTime {
  int64_t gpu_ns = 0;
  int64_t activities = 0;
  std::vector<std::string> kernels;  // distinct names, in launch order
};

struct GpuAttribution {
  std::map<uint64_t, GpuOpTime> by_external;
  int64_t unattributed = 0;  // records whose launch matched no pushed id (lost correlation)
  int64_t unattributed_ns = 0;
  uint64_t dropped = 0;
  int64_t graph_uncorrelated = 0;  // of the unattributed: graph records with an untrusted id
};

// Joins activities to external ids through their correlation ids. Order does not matter:
// records may arrive late or out of order, from several buffers.
GpuAttribution attribute_gpu_activity(const GpuRecords& records);

// The external id of a recorded op's GPU work, unique within the call: the main thread's op
// index + 1; another thread's (autograd's device threads, a forked branch) has the top bit set,
// its buffer's ordinal (below 256) in bits 23..30 and its index + 1 (below 2^23). 0 where the op
// is past what an id holds: its kernels are then counted unattributed, never charged elsewhere.
inline uint64_t gpu_external_id(bool main, uint32_t ordinal, uint32_t local) {
  if (main) return local + 1u < (1u << 31) ? local + 1u : 0;
  if (ordinal >= 256 || local + 1u >= (1u << 23)) return 0;
  return (1u << 31) | (ordinal << 23) | (local + 1u);
}

// The CUPTI tracer. Each top-level op (and each copy) pushes an external correlation id of
// layoutprof's own kind while it runs, so that every kernel it launches is attributed to it.
// CUPTI's Activity API is process-wide: start() registers the buffer callbacks (after handing
// another client's buffers back to it) and enables the kinds, stop() disables them. Another
// client, PyTorch's profiler, must not run between the two: GpuCollector::pause() stops first.
class GpuTracer {
 public:
  virtual ~GpuTracer() = default;
  // Enables kernel, memcpy, memset, runtime/driver API and external-correlation records into
  // a preallocated pool of buffers; never allocates on the hot path. A CUPTI failure does not
  // throw: the call goes untraced and stop() says why in GpuRecords::error.
  virtual void start() noexcept = 0;
  // external_id: below 2^32, unique within the call. Returns whether it was pushed; pop()
  // only what was.
  virtual bool push(uint64_t external_id) = 0;
  virtual void pop() = 0;
  // The same from the call's other threads, several at once (CUPTI keeps each thread's ids
  // apart), between start() and stop(); what a thread pushed, it pops.
  virtual bool push_on_thread(uint64_t /*external_id*/) { return false; }
  virtual void pop_on_thread() {}
  // Synchronises the current device, then flushes and returns every record since start().
  virtual GpuRecords stop() noexcept = 0;
  // GPU name, driver and CUDA versions.
  virtual std::string describe() = 0;
};

// nullptr, with the reason in *why_not, where there is no CUPTI in this build or no GPU.
// device: the CUDA device index (-1: the current one).
std::unique_ptr<GpuTracer> create_gpu_tracer(int device, std::string* why_not);
bool gpu_tracing_built();

}  // namespace layoutprof
