// Built where the CUDA toolkit (CUPTI) was not found or LAYOUTPROF_CUPTI=OFF.
#include "counters/gpu.h"

namespace layoutprof {

std::unique_ptr<GpuTracer> create_gpu_tracer(int, std::string* why_not) {
  if (why_not) *why_not = "this layoutprof was built without CUPTI (no CUDA toolkit found at build time)";
  return nullptr;
}

bool gpu_tracing_built() { return false; }

}  // namespace layoutprof
