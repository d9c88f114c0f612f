// Builders for synthetic traces: the analysis and reporters are tested without a model.
#pragma once

#include "core/trace.h"

namespace layoutprof::testing {

inline TensorInfo tensor(std::vector<int64_t> sizes, std::vector<int64_t> strides,
                         uint64_t storage = 1, int arg = 0, std::string dtype = "f32") {
  TensorInfo t;
  t.arg = arg;
  const int elem_size = dtype == "f64" ? 8 : 4;
  t.set_shape(std::move(sizes), std::move(strides), dtype, "cpu", elem_size);
  t.storage = storage;
  t.storage_id = storage;  // one storage per data address, as in a recorded call
  return t;
}

// Appends an event to a call; returns its id.
inline int64_t add_op(Call& call, const std::string& name, int64_t parent,
                      std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs,
                      std::string module = "", int64_t duration_ns = 1000) {
  OpEvent e;
  e.id = static_cast<int64_t>(call.events.size());
  e.parent = parent;
  e.depth = parent < 0 ? 0 : call.events[parent].depth + 1;
  e.name = name;
  e.module = parent < 0 ? Str(module) : call.events[parent].module;
  e.source = parent < 0 ? Str("model.py:" + std::to_string(10 + e.id)) : call.events[parent].source;
  e.start_ns = e.id * 10;
  e.duration_ns = duration_ns;
  e.inputs = call.tensors->add(inputs);
  e.outputs = call.tensors->add(outputs);
  call.events.push_back(std::move(e));
  return call.events.back().id;
}

// x (storage 1, 2x4x3 contiguous) -> transpose -> reshape (clone + copy_ into storage 2).
inline Call transpose_reshape_call(int64_t reshape_ns = 1000) {
  Call call;
  TensorInfo x = tensor({2, 4, 3}, {12, 3, 1}, 1);
  TensorInfo xt = tensor({2, 3, 4}, {12, 1, 3}, 1);
  TensorInfo dense = tensor({2, 3, 4}, {12, 4, 1}, 2);
  TensorInfo flat = tensor({2, 12}, {12, 1}, 2);
  add_op(call, "aten::transpose", -1, {x}, {xt}, "block");
  int64_t r = add_op(call, "aten::reshape", -1, {xt}, {flat}, "block", reshape_ns);
  int64_t c = add_op(call, "aten::clone", r, {xt}, {dense});
  TensorInfo dst = dense, src = xt;
  src.arg = 1;
  add_op(call, "aten::copy_", c, {dst, src}, {dense});
  add_op(call, "aten::_unsafe_view", r, {dense}, {flat});
  call.wall_ns = 5000;
  return call;
}

// A parameter or buffer of the model, as the eager session notes it.
inline ModelTensor model_tensor(std::string name, bool buffer, TensorInfo tensor) {
  ModelTensor m;
  m.name = std::move(name);
  m.buffer = buffer;
  m.tensor = std::move(tensor);
  return m;
}

inline Trace trace_of(std::vector<Call> calls, std::vector<ModelInput> inputs = {}) {
  Trace trace;
  trace.run.model = "model.pt";
  trace.run.torch_version = "1.13.0";
  trace.run.layoutprof_version = "test";
  trace.run.inputs = std::move(inputs);
  trace.calls = std::move(calls);
  return trace;
}

// A run's page faults sampled one in 16, 10 samples of which 9 fell in top-level ops.
inline void sample_page_faults(Trace& t) {
  CounterStatus st;
  st.event = "page-faults";
  st.measured = true;
  st.mode = CounterMode::sampled;
  st.period = 16;
  st.data_address = "the faulting address (page-faults)";
  st.samples = 10;
  st.attributed = 9;
  t.run.counters = {st};
  t.run.counter_mode = CounterMode::sampled;
}

}  // namespace layoutprof::testing
