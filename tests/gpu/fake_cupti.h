// A stand-in for libcupti and the few libcudart calls the tracer makes, for testing
// src/counters/cupti_tracer.cpp where there is no GPU. It follows the documented contract of
// the CUPTI Activity API (cupti_activity.h), not any GPU's behaviour:
//  - records go into buffers that the client hands out through its request callback and gets
//    back through its completion callback; with no buffer, records are dropped and counted
//    (cuptiActivityGetNumDroppedRecords, reset on read);
//  - an external correlation record precedes each runtime or driver API record made while an
//    id is pushed, so it exists only where CUPTI_ACTIVITY_KIND_RUNTIME (or _DRIVER) and
//    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION are enabled;
//  - kernel records arrive later than their launch, in batches, as a GPU completes them;
//  - cuptiActivityFlushAll(FORCED) delivers everything, partly filled buffers too.
// Nothing here times anything: the kernel times are the ones a test passes in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fake_cupti {

enum class Api { runtime, driver };

void reset();  // records, counts and enabled kinds; not the registered callbacks
void set_device_count(int n);  // what cudaGetDeviceCount says (default 1)
// A kernel launch through the runtime (cudaLaunchKernel) or the driver (cuLaunchKernel) on
// the calling thread; returns its correlation id.
uint32_t launch_kernel(const std::string& name, uint64_t start_ns, uint64_t end_ns, Api api = Api::runtime);
uint32_t launch_memset(uint64_t start_ns, uint64_t end_ns);
// A CUDA graph launch (cudaGraphLaunch) of graph `graph`, whose `kernels` kernels (nodes 1..n,
// 1 µs each from start_ns) carry the launch's correlation id; correlated false: an id one below
// it, as CUPTI 13.0 gave graph kernels after a process's first session. Returns the launch's id.
uint32_t launch_graph(uint32_t graph, int kernels, uint64_t start_ns, bool correlated = true);

// The next forced flush keeps the buffer being filled (as if CUPTI's worker thread still held
// it) and CUPTI goes on with a new one; the forced flush after that delivers it.
void hold_back_next_flush();
// cuptiActivityEnable fails with this result from now on (CUPTI_SUCCESS: works again).
void fail_enable(int cupti_result);
size_t pushed(int external_kind);  // ids on the calling thread's stack for that kind

uint64_t records_made();    // every record CUPTI would have written, dropped ones included
uint64_t records_dropped();
int register_calls();       // cuptiActivityRegisterCallbacks calls
int unbalanced_pops();      // pops with nothing pushed
bool enabled(int kind);     // a CUpti_ActivityKind
size_t buffers_held();      // buffers CUPTI holds (requested, not yet completed)
size_t buffers_requested(); // buffers the client handed out
// Contract breaches by the client: a buffer handed out again, or read, while CUPTI holds it.
int violations();

}  // namespace fake_cupti
