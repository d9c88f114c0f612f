// What the backend pass saw (one extra, untimed call with the backend's own log read): the
// primitives oneDNN ran inside each op, as its verbose log describes them. Plain structs, no
// torch types; record/backend_pass.h makes them, analysis/backend_conversions.h derives the
// report's figures from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layoutprof {

// One memory argument of a primitive, as oneDNN's log names it.
struct BackendArg {
  std::string arg;     // src, wei, bia, dst, diff_src, ...
  std::string dtype;   // f32, bf16, s8, ...
  std::string format;  // the memory format tag: abcd (NCHW), acdb (NHWC), aBcd16b (blocked), ...
};

// One primitive execution from oneDNN's log, and the op it ran inside.
struct BackendPrimitive {
  std::string kind;     // reorder, convolution, inner_product, matmul, batch_normalization, ...
  std::string impl;     // jit:uni, brg_conv_fwd:avx512_core, gemm:jit, ...
  std::string prop;     // forward_inference, forward_training, backward_data, undef, ...
  std::vector<BackendArg> args;
  std::string problem;  // the benchdnn problem: 8x64x56x56 (reorder), mb8_ic64oc64_ih56oh56kh3... (convolution)
  double ms = -1;       // measured by oneDNN's own clock (its log's last field); -1 when absent
  // Where it ran: the index of the top-level op of the pass's call on the thread that called
  // forward() (0 the first), with that op's name and the innermost op open around the
  // primitive; -1 when it cannot be told (another thread had an op open meanwhile, or none).
  int64_t top_op = -1;
  std::string top_name;
  std::string inner_name;
};

// The backend pass of a run: whether it ran, and what it saw.
struct BackendLog {
  // "ran"; "off" (--no-backend); "skipped" (the user's own ONEDNN_VERBOSE / DNNL_VERBOSE is set,
  // or the pass could not capture stdout); "unavailable" (this LibTorch has no oneDNN, or the
  // device is not the CPU); "failed" (the call raised). "" where no pass was asked for (a report
  // written before layoutprof had one).
  std::string state;
  std::string reason;   // why not "ran", in a sentence
  std::string library;  // oneDNN's version line ("oneDNN v3.12.0 (commit ...)"), when it printed one
  std::vector<BackendPrimitive> primitives;  // in execution order
  int64_t lines_unparsed = 0;  // oneDNN lines of an exec kind the parser did not understand
  int64_t top_ops = 0;         // top-level ops the pass's call ran on forward()'s thread
  int64_t call_ns = -1;        // measured: the pass's call, logging and reading included (steady clock)
};

}  // namespace layoutprof
