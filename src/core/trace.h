// What the recorder saw: plain structs, no torch types. Everything downstream reads these.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend_log.h"
#include "core/compact_vector.h"
#include "core/input_spec.h"
#include "core/layout.h"
#include "core/mapped_allocator.h"
#include "core/packed_ints.h"
#include "core/run_enums.h"
#include "core/sampled_figure.h"

namespace layoutprof {

// One counter over one op (or the whole run): measured by perf_event_open.
struct CounterValue {
  uint64_t raw = 0;       // summed over the threads' groups
  double scaled = 0;      // raw x time_enabled / time_running, per thread
  bool multiplexed = false;  // some group ran less than it was enabled
};

// Whether a requested counter was measured, and if not, why.
struct CounterStatus {
  std::string event;     // as requested (--events)
  std::string encoding;  // libpfm4's full name, when it knows the event
  CounterScope scope = CounterScope::thread;  // thread: the process's threads; system: uncore, per socket
  bool measured = false;
  std::string reason;    // why not: errno text, pfm_strerror, paranoid level
  std::string note;      // how, when it is not the whole story: "user space only (...)"
  // counted: read at the start and end of every top-level op and copy (exact per op);
  // sampled: one sample every `period` events, taken from the ring buffers after each call
  // and attributed to the ops running then (CounterValue::raw = samples, scaled = the
  // estimate, samples x period).
  CounterMode mode = CounterMode::counted;
  uint64_t period = 0;         // sampled: events per sample
  std::string data_address;    // sampled: what the samples' addresses are ("" none)
  // sampled, summed over the recorded calls: samples read, those inside a counted op, and
  // those the kernel dropped because a ring buffer was full.
  int64_t samples = 0;
  int64_t attributed = 0;
  int64_t lost = 0;
  // sampled: the recorded calls the ops' figures are taken over, their samples summed (raw)
  // and their estimates averaged (scaled): a median of a few samples a call would be biased
  // (0 where an op takes under one sample a call), a mean is not.
  int64_t calls = 1;
  bool sampled() const { return mode == CounterMode::sampled; }
  // A figure's one-sigma error: sampled_error() over `calls`; 0 for a counted one.
  double error(const CounterValue& v) const { return sampled() ? sampled_error(v.raw, period, calls) : 0.0; }
};

// Sampled events with data addresses: the samples whose address fell in one tensor of one op
// (the shown call's). slot: the op's inputs first, then its outputs (inputs.size() + k).
struct TensorSamples {
  int32_t op = 0;
  int32_t slot = 0;
  uint32_t counter = 0;  // index among the measured counters
  uint64_t samples = 0;
};

// The tensors of one op: a view into the TensorStore of its call (or report).
// 12 bytes, 4-aligned (packed: an op event holds two side by side).
class __attribute__((packed, aligned(4))) TensorList {
 public:
  TensorList() = default;
  TensorList(const TensorInfo* data, size_t size) : data_(data), size_(static_cast<uint32_t>(size)) {}
  const TensorInfo* begin() const { return data_; }
  const TensorInfo* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TensorInfo& operator[](size_t i) const { return data_[i]; }
  const TensorInfo& front() const { return data_[0]; }

 private:
  const TensorInfo* data_ = nullptr;
  uint32_t size_ = 0;
};

// A large array's pages parked in the spill file (SpillFile::park) while nothing reads them.
struct ParkedPages {
  void* at = nullptr;
  size_t bytes = 0;
  int64_t offset = -1;
};

// Owns the tensors that the TensorLists of a call's op events point to: append-only blocks
// that never move, shared (std::shared_ptr) by every Call and Report holding those events.
// An op event costs its TensorInfos (40 bytes each) and a 16-byte view per list, with no
// allocation of its own; the recorder hands its whole tensor array over as one block.
class TensorStore {
 public:
  TensorList add(const TensorInfo* first, size_t n);
  TensorList add(const std::vector<TensorInfo>& tensors) { return add(tensors.data(), tensors.size()); }
  // Takes `block` whole, without copying; returns where its first tensor now lives.
  const TensorInfo* adopt(MappedVector<TensorInfo> block);
  // Parks the blocks' pages in `file` (Call::park); nothing may read them until unparked.
  void park(SpillFile& file, std::vector<ParkedPages>& parked);

 private:
  std::vector<MappedVector<TensorInfo>> blocks_;
  bool open_ = false;  // the last block takes appends (adopted blocks do not)
};

// 136 bytes, packed by hand (a million-op call holds a million of them): the 4-byte fields
// together, the two tensor lists (12 bytes each) side by side.
struct OpEvent {
  // Interned (str.h): the same few names, modules and lines repeat over the op events.
  Str name;    // aten::reshape
  Str module;  // layer1.0.conv1 ("" for the top module itself)
  Str source;  // file:line of the code that called the op (top-level ops)
  Str source_text;  // that line, trimmed
  int64_t start_ns = 0;     // steady clock, relative to the start of its call
  int64_t duration_ns = 0;  // measured; in a Report: median over the recorded calls
  // Per measured counter (RunInfo::counters order), for top-level ops and copies; empty for
  // other ops and when no counter was measured.
  CompactVector<CounterValue> counters;
  // GPU time of the kernels, copies and memsets this op launched itself (CUPTI, measured);
  // -1 when the run traced no GPU. Kernels launched inside a nested copy count to the copy.
  int64_t gpu_ns = -1;
  int64_t gpu_launches = 0;          // kernels, copies and memsets it launched itself (GPU runs)
  CompactVector<Str> kernels;  // their distinct names, in launch order
  // Derived by analyze(): GPU time of the layout-copy kernels launched by this op or any op
  // nested in it (its copies); -1 when the run traced no GPU.
  int64_t copy_gpu_ns = -1;
  int32_t id = 0;       // index in its call's event list (execution order by start time)
  int32_t parent = -1;  // enclosing op event, -1 for top-level ops
  int32_t depth = 0;
  // Training steps (--backward): for an autograd node's backward function, the forward op
  // that made the node (same autograd sequence number); -1 otherwise.
  int32_t forward_op = -1;
  uint32_t thread = 0;      // 0 = the thread that called forward()
  TensorList inputs;   // in the call's (or report's) TensorStore
  TensorList outputs;
  bool failed = false;      // the op raised (it is the last op of a failed call)
};
static_assert(sizeof(OpEvent) <= 136, "OpEvent is packed by hand");
// A call's (or report's) op events: the largest array a run holds (mapped_allocator.h).
using OpList = MappedVector<OpEvent>;

// A parameter's gradient after a training step's backward (--backward), as autograd produced
// it, before AccumulateGrad stored it: what autograd's layout contract and DDP's reducer
// compare with the parameter.
enum class GradVerdict {
  match,            // identical strides
  size1_only,       // strides differ only on dims of size 1: kept as is; DDP warns
  layout_mismatch,  // differ on a dim of size > 1, or not dense: AccumulateGrad copies it
  no_grad,          // requires grad, got none (unused in this forward)
  frozen,           // requires_grad is false: no verdict
};
const char* grad_verdict_name(GradVerdict v);
GradVerdict grad_verdict_from_name(const std::string& name);  // throws std::invalid_argument

struct ParamGrad {
  std::string name;  // as named_parameters() gives it: layer1.0.conv1.weight
  std::vector<int64_t> sizes, strides;
  bool requires_grad = true;
  bool has_grad = false;  // a gradient reached it in the step
  std::vector<int64_t> grad_sizes, grad_strides;
  bool grad_dense = true;  // non-overlapping and dense
  int elem_size = 4;
  uint64_t grad_storage = 0;  // the gradient's buffer: finds the op that produced it
  int64_t grad_ns = -1;       // when it reached the parameter, relative to the call's start
  // The .grad it already held as the gradient arrived (zero_grad(set_to_none=False), micro-batch
  // accumulation): AccumulateGrad adds into that one in place, in its layout.
  bool had_grad = false;
  std::vector<int64_t> prior_grad_strides;
  // In process, under DistributedDataParallel: the parameter's strides when DDP built the
  // buckets this step reduced into, and when (buckets_built); empty when no DDP was seen.
  std::vector<int64_t> bucket_param_strides;
  std::string buckets_built;
  // Derived by analyze():
  GradVerdict verdict = GradVerdict::frozen;
  int64_t producer = -1;  // the backward op whose output it is
};

// Parks `v`'s elements where its storage is mapped whole pages (MappedAllocator's large blocks).
template <typename T>
void park_pages(MappedVector<T>& v, SpillFile& file, std::vector<ParkedPages>& parked) {
  if (v.empty() || v.capacity() * sizeof(T) < MappedAllocator<T>::kMapFrom) return;
  ParkedPages p{v.data(), v.size() * sizeof(T), -1};
  p.offset = file.park(p.at, p.bytes);
  if (p.offset >= 0) parked.push_back(p);
}

// What Recorder::stop_figures compares a later call's ops with: the shown call's op names,
// parents and threads.
struct OpKey {
  Str name;
  int32_t parent = -1;
  uint32_t thread = 0;
};

struct Call {
  // Every op event of the call: the call shown (the first, or the one that failed). Other
  // calls keep only the figures the medians over calls need (figures_only, made by
  // keep_figures_only() in analysis.h), so that memory does not grow with --iters.
  OpList events;
  std::shared_ptr<TensorStore> tensors = std::make_shared<TensorStore>();  // the events' tensors
  bool figures_only = false;
  bool tensors_recorded = true;      // false: recorded in Recorder::Mode::figures
  bool sites_recorded = false;       // its ops' modules and source lines were taken as it ran
  bool same_ops_as_first = true;     // figures_only: ran the first call's op sequence
  PackedInts duration_ns;  // figures_only: per op event
  PackedInts gpu_ns;       // figures_only: per op event, when the call traced a GPU
  // figures_only: the counters of the ops that have them, in op order, concatenated
  // (push_counter / next_counter); none where the call sampled them and took no sample
  // (`took_no_sample`: each value is 0).
  PackedInts counters;
  bool took_no_sample = false;
  // figures_only: moves the figures above to the process's spill file (support/spill_file.h), so
  // that memory does not grow with the calls kept.
  void spill() {
    duration_ns.spill();
    gpu_ns.spill();
    counters.spill();
  }
  // The shown call while later calls run (--iters > 1): its tensors, and its events unless it
  // took its own sites (a forking model's later calls are matched to its modules and sources),
  // move to the spill file, so that they are not in memory beside the later calls' forward()
  // and recording; stop_figures() compares with key(). unpark() puts them back before anything
  // else reads them (throws OutputError, exit 5, where the file cannot give them back).
  void park();
  void unpark();
  bool events_parked() const { return !keys_.empty(); }
  OpKey key(size_t i) const {
    if (events_parked()) return keys_[i];
    const OpEvent& e = events[i];
    return {e.name, e.parent, e.thread};
  }
  int64_t wall_ns = 0;  // measured: the whole forward() call
  // GPU records that matched no op, and records CUPTI dropped (its buffer pool ran out).
  int64_t gpu_unattributed = 0;
  int64_t gpu_unattributed_ns = 0;
  uint64_t gpu_dropped = 0;
  int64_t gpu_graph_uncorrelated = 0;  // CUDA-graph records whose correlation id was not trusted
  std::string gpu_error;
  // Op events the call ran past the --max-ops limit, which were not recorded (all threads).
  int64_t ops_not_recorded = 0;  // why CUPTI could not trace this call; empty when it did
  // Training steps (--backward): the first op event of the backward pass (events are in
  // start order, so the backward ones are the rest), -1 for none; and the parameters'
  // gradients (the first recorded call only).
  int64_t backward_from = -1;
  std::vector<ParamGrad> parameters;
  // What the call returned to its caller (the tensors of the model's output), when the front
  // end knows: a copy written in place and returned is not a lost write.
  std::vector<TensorInfo> outputs;
  // Not a model call: the recent ops before the user's code failed outside the recorded calls
  // (in process, the window kept between them). Shown, never counted among the calls.
  bool outside_calls = false;
  // Sampled counters: per measured counter, the samples read from the ring buffers, those
  // inside a counted op, and those the kernel lost; and (the shown call) where the samples'
  // data addresses fell.
  struct SampleTotals {
    int64_t samples = 0, attributed = 0, lost = 0;
  };
  std::vector<SampleTotals> sample_totals;
  std::vector<TensorSamples> tensor_samples;

 private:
  std::vector<ParkedPages> parked_;
  std::shared_ptr<SpillFile> parked_in_;
  MappedVector<OpKey> keys_;  // while the events are parked
};

// A model input as built from its --input spec, or (in process) as the user's code passed it
// to the model: then `origin` says which argument of which call, on which line.
struct ModelInput {
  InputSpec spec;
  TensorInfo tensor;
  std::string origin;  // in process: "argument 0 of the model call at train.py:31 (`out = net(batch)`)"
};

// What ProfileConfig::convert_to did (compare-formats' variants): the tensors laid out anew
// in that memory format, of those the module and the inputs have. The others were of another
// rank (channels_last converts 4-D and 5-D tensors only) or in that format already.
struct Conversion {
  std::string to;  // "" (nothing converted), "channels_last" or "contiguous"
  int64_t parameters = 0, parameters_total = 0;  // all submodules' (named_parameters())
  int64_t buffers = 0, buffers_total = 0;        // registered buffers, all submodules'
  int64_t inputs = 0;  // inputs whose format the variant changed (convert_input_spec)
};

// The mode (train or eval) the model ran in, and who chose it.
struct ModelMode {
  std::string value = "eval";  // "train", "eval", "mixed" (ops of both) or "none" (no op depends on it)
  // "layoutprof" (a TorchScript module: eval, train for --backward), "export" (a .pt2's, fixed
  // when it was exported and derived from its ops' training flags) or "user" (an eager model
  // recorded in process, in the mode its code set).
  std::string chosen_by = "layoutprof";
  std::string evidence;  // how an exported mode was derived ("20 ops in eval mode ..."); "" otherwise
};

// A parameter or buffer of the model as a run starts (named_parameters(), named_buffers()):
// what the hazards list when one is not dense or shares another's storage, and what names the
// tensor a write reaches. In memory only: the report keeps the hazards derived from them.
struct ModelTensor {
  std::string name;  // layer1.0.bn1.running_mean
  bool buffer = false;
  TensorInfo tensor;
  // In process, the op between the calls whose output this exact view is (the line that set
  // it: `w.permute(...)` before `.data = w`), as the recent ops saw it; empty when none did.
  std::string made_by, made_at, made_code;
};

struct RunInfo {
  std::string model;
  // The file's kind: "torchscript" or "pt2" (torch.export); "eager": recorded in the user's Python.
  std::string model_format = "torchscript";
  ModelMode model_mode;
  std::vector<ModelInput> inputs;
  int threads = 0;
  int warmup = 0;
  int iters = 0;
  std::string torch_version;
  std::string layoutprof_version;
  std::string device = "cpu";
  RunStatus status = RunStatus::ok;
  bool backward = false;      // each call is a training step (--backward)
  std::string loss;           // --backward: "randn" (seeded random upstream gradients) or "sum"
  std::string error;          // empty when ok
  bool calls_identical = true;  // every recorded call ran the same op sequence
  // --max-ops: op events recorded per call and thread at most; the shown call's events past
  // it were not recorded (0: it stayed within the limit).
  int64_t max_ops = 0;
  int64_t ops_not_recorded = 0;
  int calls_recorded = 0;
  // Requested counters, measured or not; `counter_read` says how they were read.
  std::vector<CounterStatus> counters;
  std::string counter_read;
  // How the counters were taken: sampled (the default), counted (--counters count), or none
  // (--counters off); never interval.
  std::optional<CounterMode> counter_mode;
  // Memory bandwidth: "measured" from uncore memory-controller events or "derived" from the
  // bytes of each op's tensors over its time; bandwidth_note says which events or why not.
  std::string bandwidth = "derived";
  std::string bandwidth_note;
  // The GPU traced (name, driver and CUDA versions), empty for CPU runs.
  std::string gpu;
  // The DTLB model's configuration (--tlb), as written.
  std::string tlb;
  // What this run measured and what it did not, with the reason.
  std::vector<std::string> measured;
  std::vector<std::string> not_measured;
  // compare-formats' variants: the model's parameters and buffers and the inputs converted
  // after load (ProfileConfig::convert_to); `to` is empty for a run as given.
  Conversion conversion;
  // Measured, steady clock: the wall time of each plain call after the recorded ones
  // (ProfileConfig::timed_calls: no observer, the same inputs), in call order.
  std::vector<int64_t> plain_call_ns;
  // --accept FILE:LINE (profile(accept=...)): birthplaces made on purpose, which count as no
  // cause and are not gated; the report lists them as accepted.
  std::vector<std::string> accepted;
  // The model's parameters and buffers as the run started (ModelTensor).
  std::vector<ModelTensor> model_tensors;

  // The measured counters, in the order of the values in OpEvent::counters and the sums.
  std::vector<const CounterStatus*> measured_counters() const {
    std::vector<const CounterStatus*> out;
    for (const CounterStatus& c : counters)
      if (c.measured) out.push_back(&c);
    return out;
  }
};

struct Trace {
  RunInfo run;
  std::vector<Call> calls;
  BackendLog backend;  // the backend pass (record/backend_pass.h), after the recorded calls
};

}  // namespace layoutprof
