// What the recorder saw: plain structs, no torch types. Everything downstream reads these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutprof/input_spec.h"
#include "layoutprof/layout.h"

namespace layoutprof {

struct OpEvent {
  int64_t id = 0;       // index in its call's event list (execution order by start time)
  int64_t parent = -1;  // enclosing op event, -1 for top-level ops
  int depth = 0;
  std::string name;    // aten::reshape
  std::string module;  // layer1.0.conv1 ("" for the top module itself)
  std::string source;  // file:line of the code that called the op (top-level ops)
  std::string source_text;  // that line, trimmed
  int64_t start_ns = 0;     // steady clock, relative to the start of its call
  int64_t duration_ns = 0;  // measured; in a Report: median over the recorded calls
  uint32_t thread = 0;      // 0 = the thread that called forward()
  bool failed = false;      // the op raised (it is the last op of a failed call)
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

struct Call {
  std::vector<OpEvent> events;
  int64_t wall_ns = 0;  // measured: the whole forward() call
};

// A model input as built from its --input spec.
struct ModelInput {
  InputSpec spec;
  TensorInfo tensor;
};

struct RunInfo {
  std::string model;
  std::vector<ModelInput> inputs;
  int threads = 0;
  int warmup = 0;
  int iters = 0;
  std::string torch_version;
  std::string layoutprof_version;
  std::string device = "cpu";
  std::string status = "ok";  // ok | failed
  std::string error;          // empty when ok
  bool calls_identical = true;  // every recorded call ran the same op sequence
  int calls_recorded = 0;
  // What this run measured and what it did not, with the reason.
  std::vector<std::string> measured;
  std::vector<std::string> not_measured;
};

struct Trace {
  RunInfo run;
  std::vector<Call> calls;
};

}  // namespace layoutprof
