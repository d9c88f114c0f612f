// The CUPTI activity record versions layoutprof reads, for the CUPTI it is built against.
// Shared by the tracer and its stand-in CUPTI in tests, so that both agree on the layouts.
#pragma once

#include <cupti.h>

namespace layoutprof::cupti {

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using MemsetRecord = CUpti_ActivityMemset4;

}  // namespace layoutprof::cupti
