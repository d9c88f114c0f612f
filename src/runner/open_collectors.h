// The counters, sampler and GPU tracer a recording opens, and the collectors over them that the
// recorder takes: the command's run and an in-process session open them the same way.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <vector>

#include "counters/collectors.h"
#include "counters/counters.h"
#include "counters/gpu.h"
#include "runner/runner.h"

namespace layoutprof {

struct Collectors {
  std::optional<PerfCounters> counters;
  std::optional<PerfSampler> sampler;
  std::unique_ptr<GpuTracer> gpu;
  GpuCollector* gpu_collector = nullptr;  // in `list`, over `gpu`
  std::vector<std::unique_ptr<Collector>> list;
  std::vector<Collector*> all() const;
};

// Opens what `config` asks for (sampled or counted perf events on every thread of the process
// that exists now, one group each, and on a CUDA device the GPU tracer) and notes in `run` what
// each measures and what did not open, and why. Open them once the threads that run ops exist
// (after warm-up: LibTorch's intra-op pool).
void open_collectors(const ProfileConfig& config, const at::Device& device, Collectors& open, RunInfo& run);

// The GPU tracer on CUDA device `device` (-1: the current one) and its collector, noted in `run`.
// Returns why it did not open ("" when it did).
std::string open_gpu_tracer(int device, Collectors& open, RunInfo& run);

}  // namespace layoutprof
