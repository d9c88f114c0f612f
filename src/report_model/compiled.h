// torch.compile in a profiled run (in process): what dynamo and inductor decided about layouts,
// read from their own records (the structured trace) by the Python front end over the whole
// run, warm-up steps included. The graphs with the layout copies inductor's generated code makes
// every call, the recompiles and the guards that caused them, automatic dynamic promotions,
// recompile_limit hits, graph breaks and the caches' hits and misses. Layouts are written as
// torch's graphs print them: "f32[2, 3, 16, 16][768, 1, 48, 3]" (a dynamic dim as its symbol).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layoutprof {

// A copy inside a compiled graph that changes a tensor's layout.
struct CompiledCopy {
  // "input", "weight" (a parameter or buffer), "intermediate", "output" (keep_output_stride):
  // inductor's conversions in its generated code; "code": a copy the graph keeps from the
  // user's code (a reshape of a transposed view), which eager makes too.
  std::string kind;
  std::string tensor;      // "x", "parameter `c1.weight`", "the output of `clone`"
  std::string from, to;    // the layouts
  int64_t bytes = 0;       // what the copy writes (derived: elements x item size)
  bool every_call = true;  // runs in each call (false: once, frozen or constant-folded)
  std::string kernel;      // the generated kernel that writes it
  std::string before;      // "the extern convolution": the kernel it feeds
  std::string module;      // the module path of the op it feeds (or of the parameter)
  std::string where;       // the user's line of that op ("model.py:24")
  std::string code;        // the code on it
};

struct CompiledInput {
  std::string name;    // "x", "parameter `c1.weight`"
  std::string layout;  // what the graph was specialised for
};

struct CompiledGraph {
  std::string compile_id;  // dynamo's "frame/compile": "0/1"
  std::string graph;       // "forward", "backward", or "" (one graph: inference)
  std::string function;    // the compiled function's name
  std::string where;       // its file:line
  int64_t step = 0;        // the step (or model call), 0-based, whose call compiled it
  double compile_s = 0;    // dynamo's whole compile of the frame (measured by torch)
  std::string called_at;   // the user's line that called it
  std::vector<CompiledInput> inputs;
  std::string layout_opt;         // "on", "off" or "" (no sign either way)
  std::string layout_opt_reason;  // inductor's reason, or how "on" was read
  std::vector<CompiledCopy> copies;
};

// A recompile: one guard of an earlier compile failed on a new call.
struct Recompile {
  std::string compile_id, function, where;
  int64_t step = 0;
  std::string reason;  // dynamo's words: "0/0: tensor 'x' stride mismatch at index 1. expected 256, actual 1"
  std::string tensor;  // parsed from it; kind: stride, size, dtype, device, requires_grad, other
  std::string kind;
  int64_t dim = -1;
  std::string expected, actual;
  double compile_s = 0;        // what the new compile cost
  std::string before, after;   // the earlier and the new compile's layouts of the tensor
  bool layout = false;         // a stride guard: the input's layout caused it
  std::string called_at;       // the line that called the function
  std::string fix;
  // The gate's key: function, tensor and kind (line numbers left out).
  std::string key() const;
};

struct DynamicDim {
  std::string compile_id, source, value;  // "L['x'].stride()[0]", its value when made dynamic
};

struct RecompileLimitHit {
  int64_t step = 0;
  std::string limit, function, reason;
};

struct GraphBreak {
  std::string compile_id;
  int64_t step = 0;
  std::string where, reason;
  std::vector<std::string> crossing;  // the tensors the graph after the break takes, with layouts
};

struct CompiledRun {
  bool seen = false;       // the run compiled something (or hit a limit) while recorded
  std::string records;     // what it was read from, and the torch
  std::string torch;
  std::vector<CompiledGraph> graphs;
  std::vector<Recompile> recompiles;
  std::vector<DynamicDim> dynamic;
  std::vector<RecompileLimitHit> limit_hits;
  std::vector<GraphBreak> breaks;
  int64_t fx_cache_hits = 0, fx_cache_misses = 0, aot_cache_hits = 0, aot_cache_misses = 0;
  std::vector<std::string> not_measured;
  // What layoutprof itself changed in what was compiled (a setting it switched on), with its cost:
  // the observer effect it could not avoid.
  std::vector<std::string> observer;

  int64_t layout_recompiles() const;
  int64_t copies_per_call() const;  // inductor's conversions and the graphs' copies, every call
  int64_t copy_bytes_per_call() const;
};

}  // namespace layoutprof
