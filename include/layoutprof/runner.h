// Loads a TorchScript model, builds its inputs, warms up and records calls. The interface is
// torch-free; the implementation is one of the few translation units that include LibTorch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "layoutprof/input_spec.h"
#include "layoutprof/trace.h"

namespace layoutprof {

struct ProfileConfig {
  std::string model;
  std::vector<InputSpec> inputs;
  int warmup = 3;  // the profiling graph executor specialises after its first calls
  int iters = 3;
  int threads = 0;  // 0: LibTorch's default
  std::string device = "cpu";
  bool counters = true;             // --no-counters turns counting off
  std::vector<std::string> events;  // libpfm4 event names; empty: PerfCounters::default_events()
  std::string tlb;                  // DTLB model configuration (--tlb); empty: the default
  int64_t max_ops = 0;              // op events recorded per call and thread; 0: default_max_ops()
  bool backward = false;            // each call a training step: forward, then backward
  std::string loss = "randn";       // backward from: randn (seeded upstream gradients) | sum
};

// The --max-ops default: what this machine's available memory holds at 1 KB per op event
// (what a recorded op event costs in memory, analysis and reports included, measured by
// scripts/bench-scale.sh, with room to spare).
int64_t default_max_ops();
// Bytes a new allocation can have (MemAvailable, else free pages); -1 when unknown.
int64_t available_memory();

using ProgressFn = std::function<void(const std::string&)>;

// Throws UsageError (bad inputs for this model) or ModelLoadError. A model that raises while
// running does not throw: the trace says status "failed" and holds what was recorded.
Trace run_profile(const ProfileConfig& config, const ProgressFn& progress);

std::string torch_version();

}  // namespace layoutprof
