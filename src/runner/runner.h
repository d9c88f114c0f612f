// Loads a model (through src/runner/model.h, whatever its format), builds its inputs, warms up
// and records calls. The interface is torch-free; src/runner holds the LibTorch code.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/input_spec.h"
#include "core/trace.h"
#include "report_model/fix_action.h"

namespace layoutprof {

struct ProfileConfig {
  std::string model;
  std::vector<std::string> libraries;  // custom op libraries loaded before the model (--load-library)
  std::vector<InputSpec> inputs;
  int warmup = 3;  // the profiling graph executor specialises after its first calls
  int iters = 3;
  int threads = 0;  // 0: LibTorch's default
  std::string device = "cpu";
  bool counters = true;             // --counters off (--no-counters) turns them off
  // --counters sample (the default): the events sampled, their samples attributed after each
  // call; --counters count: read at every top-level op and copy (exact per op, costs per op).
  bool sample_counters = true;
  std::vector<std::string> events;  // libpfm4 event names; empty: PerfCounters::default_events()
  // task-clock's and cpu-clock's sampling period where the event names none (the command's:
  // 500 samples a second; a recording in process asks for fewer, EagerOptions)
  uint64_t clock_period_ns = 2000000;
  // System-wide events for memory traffic (64 bytes a count); empty: the memory controllers'
  // CAS counts libpfm4 finds (PerfCounters::bandwidth_events).
  std::vector<std::string> bandwidth_events;
  std::string tlb;                  // DTLB model configuration (--tlb); empty: the default
  int64_t max_ops = 0;              // op events recorded per call and thread; 0: default_max_ops()
  bool backward = false;            // each call a training step: forward, then backward
  std::string loss = "randn";       // backward from: randn (seeded upstream gradients) | sum
  std::vector<std::string> accepted;  // --accept FILE:LINE: birthplaces made on purpose
  // compare-formats' variants: after load, the module's parameters and buffers (all
  // submodules') are laid out in this memory format, as Python's model.to(memory_format=...)
  // does, and so are the inputs (convert_input_spec). "channels_last": 4-D tensors to
  // channels_last, 5-D to channels_last_3d, the rest as they are; "contiguous": every tensor;
  // "": the model and inputs as given. RunInfo::conversion says what changed.
  std::string convert_to;
  // Plain calls after the recorded ones: no observer, no counters, no GPU tracer, the same
  // inputs; each one's wall time is kept (RunInfo::plain_call_ns). None after a call raised.
  int timed_calls = 0;
  // --what-if's variants (runner/what_if.h): a cause's fixes (report_model/fix_action.h) applied
  // after load. Inputs fed in a format (their values kept), the parameters and buffers converted
  // (the inputs as given), one made dense, a line's op changed (.pt2). run_profile() throws
  // FixRefused, with why, for one it cannot apply.
  std::vector<FixAction> fixes;
  // The backend pass (record/backend_pass.h): one more call after the others, untimed, with
  // oneDNN's log read and each primitive charged to its op (--no-backend turns it off).
  bool backend = true;
};

struct FixRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The --max-ops default: what this machine's available memory holds at 1 KB per op event
// (what a recorded op event costs in memory, analysis and reports included, measured by
// scripts/bench-scale.sh, with room to spare).
int64_t default_max_ops();
// Bytes a new allocation can have (MemAvailable, else free pages); -1 when unknown.
int64_t available_memory();

using ProgressFn = std::function<void(const std::string&)>;

// A run's model, converted and warmed up, with its inputs, kept for plain calls after
// run_profile() returns: compare-formats times its variants' calls interleaved, round by
// round, so that what else the machine does meanwhile falls on every variant alike.
class PlainCaller {
 public:
  virtual ~PlainCaller() = default;
  // One plain call as ProfileConfig::timed_calls makes them: forward() (a training step with
  // --backward), no observer, the device synchronised. Returns its wall time (steady clock,
  // ns); throws std::runtime_error with the model's error when it raises.
  virtual int64_t call_ns() = 0;
};

// Throws UsageError (bad inputs for this model) or ModelLoadError. A model that raises while
// running does not throw: the trace says status "failed" and holds what was recorded.
// `keep`, if given, receives the model for later plain calls when the run's status is ok
// (left empty otherwise).
Trace run_profile(const ProfileConfig& config, const ProgressFn& progress, std::unique_ptr<PlainCaller>* keep = nullptr);

// The run's `measured` line for `calls` plain calls (RunInfo::plain_call_ns).
std::string plain_calls_note(int64_t calls, bool backward);

std::string torch_version();

}  // namespace layoutprof
