#include "record/recorder.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "record/tensor_info.h"

namespace layoutprof {

namespace {

const char* dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "f32";
    case c10::ScalarType::Double: return "f64";
    case c10::ScalarType::Half: return "f16";
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Long: return "i64";
    case c10::ScalarType::Int: return "i32";
    case c10::ScalarType::Short: return "i16";
    case c10::ScalarType::Char: return "i8";
    case c10::ScalarType::Byte: return "u8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "c64";
    case c10::ScalarType::ComplexDouble: return "c128";
    default: return c10::toString(t);
  }
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TensorInfo describe_tensor(const at::Tensor& t, int arg) {
  TensorInfo info;
  info.arg = arg;
  info.sizes = t.sizes().vec();
  info.dtype = dtype_name(t.scalar_type());
  info.device = t.device().str();
  info.elem_size = static_cast<int>(t.element_size());
  if (t.layout() == c10::kStrided) {
    info.strides = t.strides().vec();
    info.storage_offset = t.storage_offset();
    if (t.has_storage()) info.storage = reinterpret_cast<uint64_t>(t.storage().data());
  }
  classify(info);
  return info;
}

namespace {

struct RawEvent {
  std::string name;
  int32_t parent = -1;  // local index in the same thread's buffer
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool failed = false;
  bool top = false;
  std::string module;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

struct Frame {
  int32_t event;
  int uncaught;  // std::uncaught_exceptions() when the op began: more at its end means it threw
};

struct ThreadBuffer {
  std::vector<RawEvent> events;
  std::vector<Frame> stack;
  std::vector<std::pair<int32_t, torch::jit::SourceRange>> sources;  // resolved in stop()
  bool main = false;
};

// Per-thread buffers of the active session. A thread registers once per session, under the
// lock; after that it appends to its own buffer without locking.
std::mutex g_mutex;
std::vector<std::unique_ptr<ThreadBuffer>> g_buffers;
std::atomic<uint64_t> g_session{0};
std::thread::id g_main_thread;
thread_local ThreadBuffer* t_buffer = nullptr;
thread_local uint64_t t_session = 0;

ThreadBuffer& thread_buffer() {
  uint64_t session = g_session.load(std::memory_order_acquire);
  if (t_buffer == nullptr || t_session != session) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_buffers.push_back(std::make_unique<ThreadBuffer>());
    t_buffer = g_buffers.back().get();
    t_buffer->main = std::this_thread::get_id() == g_main_thread;
    t_buffer->events.reserve(4096);
    t_session = session;
  }
  return *t_buffer;
}

void append_tensors(const c10::IValue& value, int arg, std::vector<TensorInfo>& out) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (t.defined()) out.push_back(describe_tensor(t, arg));
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorList().vec())
      if (t.defined()) out.push_back(describe_tensor(t, arg));
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef())
      if (item.isTensor() && item.toTensor().defined())
        out.push_back(describe_tensor(item.toTensor(), arg));
  }
}

// "TOP(ResNet)::forward", "layer1(Sequential)::forward", "0(BasicBlock)::forward" ->
// "layer1.0". A method calling another method of the same module repeats its instance name.
std::string module_path(const std::vector<std::string>& hierarchy) {
  std::string path;
  for (size_t i = 1; i < hierarchy.size(); ++i) {
    const std::string& entry = hierarchy[i];
    std::string name = entry.substr(0, entry.find('('));
    if (name.empty() || name == "TOP") continue;
    path += (path.empty() ? "" : ".") + name;
  }
  return path;
}

// Ops called by the TorchScript interpreter see the interpreter's whole stack as their inputs
// (and outputs): their own arguments are the last `declared` values.
template <typename Values>
Values own_values(Values values, size_t declared) {
  return values.size() > declared ? values.slice(values.size() - declared) : values;
}

size_t declared_inputs(const at::RecordFunction& fn, size_t fallback) {
  try {
    return fn.num_inputs();
  } catch (const c10::Error&) {  // not an operator: no schema to go by
    return fallback;
  }
}

size_t declared_outputs(const at::RecordFunction& fn, size_t fallback) {
  try {
    return fn.num_outputs();
  } catch (const c10::Error&) {
    return fallback;
  }
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ThreadBuffer& b = thread_buffer();
  RawEvent e;
  e.name = fn.name();
  e.parent = b.stack.empty() ? -1 : b.stack.back().event;
  auto all_inputs = fn.inputs();
  auto inputs = own_values(all_inputs, declared_inputs(fn, all_inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) append_tensors(inputs[i], static_cast<int>(i), e.inputs);
  int32_t index = static_cast<int32_t>(b.events.size());
  if (b.stack.empty() && b.main) {
    e.top = true;
    e.module = module_path(torch::jit::currentModuleHierarchy());
    auto callstack = torch::jit::currentCallstack();
    if (!callstack.empty()) b.sources.emplace_back(index, callstack.front().range);
  }
  b.stack.push_back({index, std::uncaught_exceptions()});
  e.start_ns = now_ns();  // last, so that recording the inputs stays outside the op's time
  b.events.push_back(std::move(e));
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  int64_t end = now_ns();
  ThreadBuffer& b = thread_buffer();
  if (b.stack.empty()) return;  // the op began before this session
  Frame frame = b.stack.back();
  b.stack.pop_back();
  RawEvent& e = b.events[frame.event];
  e.end_ns = end;
  if (std::uncaught_exceptions() > frame.uncaught) e.failed = true;
  c10::ArrayRef<c10::IValue> all_outputs(fn.outputs());
  auto outputs = own_values(all_outputs, declared_outputs(fn, all_outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) append_tensors(outputs[i], static_cast<int>(i), e.outputs);
}

std::string trim(std::string s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// file:line and the line's text; the user's own Python file when the archive has debug info.
std::pair<std::string, std::string> resolve_source(const torch::jit::SourceRange& range) {
  auto original = range.findSourceRangeThatGenerated();
  const torch::jit::SourceRange& r = original ? *original : range;
  auto source = r.source();
  if (!source) return {"", ""};
  size_t lineno = source->lineno_for_offset(r.start());
  std::string text = trim(source->get_line(lineno).str());
  auto flc = r.file_line_col();
  if (!flc) return {"<code>:" + std::to_string(lineno + 1), text};
  return {std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)), text};
}

}  // namespace

struct Recorder::State {
  at::CallbackHandle handle = 0;
  int64_t start_ns = 0;
};

Recorder::Recorder() : state_(std::make_unique<State>()) {}

Recorder::~Recorder() {
  if (state_->handle) at::removeCallback(state_->handle);
}

void Recorder::start() {
  if (state_->handle) throw std::logic_error("recorder already started");
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_buffers.clear();
    g_main_thread = std::this_thread::get_id();
    g_session.fetch_add(1, std::memory_order_acq_rel);
  }
  state_->start_ns = now_ns();
  state_->handle = at::addGlobalCallback(at::RecordFunctionCallback(on_op_start, on_op_end)
                                             .needsInputs(true)
                                             .needsOutputs(true)
                                             .scopes({at::RecordScope::FUNCTION}));
}

Call Recorder::stop() {
  if (!state_->handle) throw std::logic_error("recorder not started");
  at::removeCallback(state_->handle);
  state_->handle = 0;
  int64_t stop_ns = now_ns();

  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    buffers.swap(g_buffers);
    g_session.fetch_add(1, std::memory_order_acq_rel);  // stale thread_local pointers re-register
  }
  // Main thread first so that it is thread 0.
  std::stable_partition(buffers.begin(), buffers.end(), [](const auto& b) { return b->main; });

  struct Ref {
    int64_t start;
    uint32_t buffer;
    int32_t local;
  };
  std::vector<Ref> order;
  for (uint32_t bi = 0; bi < buffers.size(); ++bi)
    for (int32_t li = 0; li < static_cast<int32_t>(buffers[bi]->events.size()); ++li)
      order.push_back({buffers[bi]->events[li].start_ns, bi, li});
  std::sort(order.begin(), order.end(), [](const Ref& a, const Ref& b) {
    return std::tie(a.start, a.buffer, a.local) < std::tie(b.start, b.buffer, b.local);
  });

  std::vector<std::vector<int64_t>> global_id(buffers.size());
  for (uint32_t bi = 0; bi < buffers.size(); ++bi) global_id[bi].resize(buffers[bi]->events.size());
  for (size_t i = 0; i < order.size(); ++i) global_id[order[i].buffer][order[i].local] = i;

  std::map<std::pair<const void*, size_t>, std::pair<std::string, std::string>> resolved;
  std::vector<std::vector<std::pair<std::string, std::string>*>> source_of(buffers.size());
  for (uint32_t bi = 0; bi < buffers.size(); ++bi) {
    source_of[bi].assign(buffers[bi]->events.size(), nullptr);
    for (auto& [local, range] : buffers[bi]->sources) {
      auto key = std::make_pair(static_cast<const void*>(range.source().get()), range.start());
      auto it = resolved.find(key);
      if (it == resolved.end()) it = resolved.emplace(key, resolve_source(range)).first;
      source_of[bi][local] = &it->second;
    }
  }

  Call call;
  call.events.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    RawEvent& raw = buffers[order[i].buffer]->events[order[i].local];
    OpEvent& e = call.events[i];
    e.id = static_cast<int64_t>(i);
    e.parent = raw.parent >= 0 ? global_id[order[i].buffer][raw.parent] : -1;
    e.name = std::move(raw.name);
    e.module = std::move(raw.module);
    if (auto* src = source_of[order[i].buffer][order[i].local]) {
      e.source = src->first;
      e.source_text = src->second;
    }
    e.start_ns = raw.start_ns - state_->start_ns;
    // An op still open at stop() (the model raised past it) ends when recording stopped.
    e.duration_ns = (raw.end_ns ? raw.end_ns : stop_ns) - raw.start_ns;
    e.thread = order[i].buffer;
    e.failed = raw.failed;
    e.inputs = std::move(raw.inputs);
    e.outputs = std::move(raw.outputs);
    if (e.thread != 0 && e.parent < 0) {
      // An op on an intra-op pool thread: its parent is the innermost main-thread op that
      // was running around it.
      for (size_t j = i; j-- > 0;) {
        const OpEvent& p = call.events[j];
        if (p.thread == 0 && p.start_ns + p.duration_ns >= e.start_ns + e.duration_ns) {
          e.parent = p.id;
          break;
        }
      }
    }
    if (e.parent >= 0) {
      const OpEvent& p = call.events[e.parent];
      e.depth = p.depth + 1;
      e.module = p.module;
      if (e.source.empty()) {
        e.source = p.source;
        e.source_text = p.source_text;
      }
    }
  }
  return call;
}

}  // namespace layoutprof
