#include "analysis/analysis.h"

#include "analysis/backend_conversions.h"
#include "analysis/grads.h"

#include "analysis/birthplace.h"
#include "analysis/hazards.h"
#include "analysis/dtlb_model.h"
#include "analysis/mixed_formats.h"
#include "analysis/view_key.h"
#include "support/flat_index.h"
#include "support/format.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <map>
#include <unordered_map>
#include <sstream>
#include <tuple>

namespace layoutprof {

const TensorInfo* main_input(const OpEvent& op) {
  return op.inputs.empty() ? nullptr : &op.inputs.front();
}

bool reads_only_contiguous(const OpEvent& op) {
  bool any = false;
  for (const TensorInfo& in : op.inputs) {
    if (in.numel() <= 1) continue;
    if (in.layout().cls != LayoutClass::contiguous) return false;
    any = true;
  }
  return any;
}

const TensorInfo* main_output(const OpList& ops, int64_t id) {
  const OpEvent& op = ops[id];
  if (!op.outputs.empty()) return &op.outputs.front();
  // Some TorchScript-level ops (chunk) report no outputs; their first child that does, on the
  // same input, made them.
  const TensorInfo* in = main_input(op);
  for (size_t i = id + 1; i < ops.size() && ops[i].depth > op.depth; ++i) {
    const OpEvent& child = ops[i];
    if (child.parent != id || child.outputs.empty()) continue;
    const TensorInfo* child_in = main_input(child);
    if (in && child_in && child_in->storage == in->storage && child_in->sizes() == in->sizes())
      return &child.outputs.front();
  }
  return nullptr;
}

int64_t tensor_bytes(const OpEvent& op) {
  int64_t bytes = 0;
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const TensorInfo& t : *list) bytes += t.bytes();
  return bytes;
}

void add_counters(std::vector<CounterValue>& total, const CompactVector<CounterValue>& add) {
  if (total.size() < add.size()) total.resize(add.size());
  for (size_t k = 0; k < add.size(); ++k) {
    total[k].raw += add[k].raw;
    total[k].scaled += add[k].scaled;
    total[k].multiplexed = total[k].multiplexed || add[k].multiplexed;
  }
}

int64_t noncontiguous_inputs(const OpEvent& op) {
  int64_t n = 0;
  for (const TensorInfo& in : op.inputs)
    n += in.layout().cls != LayoutClass::contiguous && in.layout().cls != LayoutClass::unknown;
  return n;
}

void append_flow(std::vector<std::string>& lane, const OpList& ops, int64_t id) {
  for (const TensorInfo* t : {main_input(ops[id]), main_output(ops, id)}) {
    if (!t || t->layout().cls == LayoutClass::unknown) continue;
    const std::string& label = t->label();
    if (lane.empty() || lane.back() != label) lane.push_back(label);
  }
}

std::vector<int64_t> top_level_ancestors(const OpList& ops) {
  std::vector<int64_t> top(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    int64_t p = ops[i].parent;
    top[i] = (p < 0 || p >= static_cast<int64_t>(i)) ? static_cast<int64_t>(i) : top[p];
  }
  return top;
}

namespace {

template <typename T>
T median(std::vector<T>& v) {  // reorders v
  if (v.empty()) return 0;
  if (v.size() == 1) return v[0];
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool same_op_sequence(const Call& a, const Call& b) {
  if (a.events.size() != b.events.size()) return false;
  for (size_t i = 0; i < a.events.size(); ++i)
    if (a.events[i].name != b.events[i].name || a.events[i].parent != b.events[i].parent)
      return false;
  return true;
}

// Where the non-dense tensors of a call came from.
class Provenance {
 public:
  Provenance(const OpList& ops, const std::vector<ModelInput>& inputs)
      : ops_(ops), inputs_(inputs) {
    for (const OpEvent& op : ops) {
      for (const TensorInfo& out : op.outputs) {
        if (is_contiguous_class(out.layout().cls)) continue;
        ViewKey key = view_key(out);
        bool passed_through = std::any_of(op.inputs.begin(), op.inputs.end(),
                                          [&](const TensorInfo& in) { return view_key(in) == key; });
        if (!passed_through) {
          uint32_t id = views_.id(key);
          if (id == producers_.size()) producers_.emplace_back();
          producers_[id].push_back(op.id);
        }
      }
    }
  }

  // The op that first made the non-dense tensor `t` read at op `reader`: follows the chain
  // of view ops back while each one's input was itself non-dense. Sets *input to the model
  // input the chain starts from, if any.
  int64_t origin(const TensorInfo& t, int64_t reader, int* input) const {
    *input = -1;
    int64_t found = -1;
    const TensorInfo* current = &t;
    int64_t before = reader;
    for (int hops = 0; hops < 64; ++hops) {
      int64_t producer = latest_producer(*current, before, reader);
      if (producer < 0) {
        *input = model_input(*current);
        break;
      }
      found = producer;
      const TensorInfo* in = main_input(ops_[producer]);
      // Only a view passes the layout on: an op that wrote a fresh non-dense tensor (a
      // convolution's channels_last output) is the origin itself.
      if (!in || is_contiguous_class(in->layout().cls) || in->storage != current->storage) break;
      current = in;
      before = producer;
    }
    return found;
  }

 private:
  bool is_ancestor(int64_t candidate, int64_t op) const {
    for (int64_t p = ops_[op].parent; p >= 0; p = ops_[p].parent)
      if (p == candidate) return true;
    return false;
  }

  int64_t latest_producer(const TensorInfo& t, int64_t before, int64_t reader) const {
    int64_t view = views_.find(view_key(t));
    if (view < 0) return -1;
    const auto& ids = producers_[view];
    for (auto p = ids.rbegin(); p != ids.rend(); ++p)
      if (*p < before && !is_ancestor(*p, reader)) return outermost_producer(*p, view_key(t));
    return -1;
  }

  // transpose makes its view through a nested as_strided: name the op the model called.
  int64_t outermost_producer(int64_t op, const ViewKey& key) const {
    for (int64_t p = ops_[op].parent; p >= 0; p = ops_[p].parent) {
      const auto& outs = ops_[p].outputs;
      if (std::none_of(outs.begin(), outs.end(), [&](const TensorInfo& o) { return view_key(o) == key; }))
        break;
      op = p;
    }
    return op;
  }

  int model_input(const TensorInfo& t) const {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (view_key(inputs_[i].tensor) == view_key(t)) return static_cast<int>(i);
    return -1;
  }

  const OpList& ops_;
  const std::vector<ModelInput>& inputs_;
  FlatIndex<ViewKey, ViewKeyHash> views_;           // non-dense views some op made
  std::vector<std::vector<int64_t>> producers_;  // per view: the ops that made it, in order
};

std::vector<CopyRecord> find_copies(const OpList& ops,
                                    const std::vector<int64_t>& top,
                                    const Provenance& provenance, const TlbConfig& tlb) {
  std::vector<CopyRecord> copies;
  // The model's estimate depends only on the two tensors' shapes and offsets: a copy a loop
  // repeats is modelled once (each model builds TLB arrays of a few thousand entries).
  using DtlbKey = std::tuple<const TensorShape*, const TensorShape*, int64_t, int64_t>;
  // Each distinct copy geometry is modelled once: its job, and each copy's job.
  struct DtlbJob {
    size_t example;  // the first copy of that geometry
    DtlbEstimate estimate;
  };
  std::map<DtlbKey, size_t> job_of;
  std::vector<DtlbJob> jobs;
  std::vector<size_t> copy_job;
  const Str copy_name("aten::copy_");
  for (const OpEvent& op : ops) {
    if (op.name != copy_name) continue;
    const TensorInfo* dst = nullptr;
    const TensorInfo* src = nullptr;
    for (const TensorInfo& in : op.inputs) {
      if (in.arg == 0 && !dst) dst = &in;
      if (in.arg == 1 && !src) src = &in;
    }
    if (!dst || !src) continue;  // not a tensor-to-tensor copy we can read
    CopyRecord c;
    c.op = op.id;
    c.culprit = top[op.id];
    c.cls = classify_copy(*src, *dst, ops[c.culprit].name);
    c.bytes = dst->bytes();
    c.src = *src;
    c.dst = *dst;
    if (is_layout_copy(c.cls)) c.origin = provenance.origin(*src, op.id, &c.origin_input);
    const auto job = job_of.emplace(DtlbKey{src->shape, dst->shape, src->storage_offset, dst->storage_offset},
                                    jobs.size());
    if (job.second) jobs.push_back({copies.size(), {}});
    copy_job.push_back(job.first->second);
    c.counters = op.counters;
    c.gpu_ns = op.gpu_ns;
    copies.push_back(std::move(c));
  }
  // The jobs run on as many threads as the machine has (up to 4): the calls are over, and the
  // model of a large copy is most of the analysis's time.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++)
      jobs[i].estimate = model_copy_dtlb(copies[jobs[i].example].src, copies[jobs[i].example].dst, tlb);
  };
  const size_t threads = std::min<size_t>({4, std::max(1u, std::thread::hardware_concurrency()), jobs.size()});
  std::vector<std::thread> helpers;
  try {
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones there are, this one included, do it all.
  }
  work();
  for (std::thread& t : helpers) t.join();
  for (size_t i = 0; i < copies.size(); ++i) copies[i].dtlb = jobs[copy_job[i]].estimate;
  return copies;
}

bool mixes_memory_formats(const OpEvent& op) {
  bool nchw = false, nhwc = false;
  for (const TensorInfo& in : op.inputs) {
    size_t rank = in.sizes().size();
    if ((rank != 4 && rank != 5) || in.numel() <= 1 || in.strides().size() != rank ||
        in.layout().cls == LayoutClass::unknown)
      continue;  // not a strided tensor (mkldnn, sparse): no memory format to mix
    std::vector<int> cl = rank == 4 ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 2, 3, 4, 1};
    std::vector<int> rowmajor(rank);
    for (size_t d = 0; d < rank; ++d) rowmajor[d] = static_cast<int>(d);
    bool as_nchw = is_dense_in_order(in.sizes(), in.strides(), rowmajor);
    bool as_nhwc = is_dense_in_order(in.sizes(), in.strides(), cl);
    // A tensor dense in both orders (1x1 kernels, C == 1) suits either format.
    if (as_nchw && !as_nhwc) nchw = true;
    if (as_nhwc && !as_nchw) nhwc = true;
  }
  return nchw && nhwc;
}

// "aten::transpose" -> "transpose".
std::string short_name(const std::string& op_name) {
  auto colons = op_name.rfind("::");
  return colons == std::string::npos ? op_name : op_name.substr(colons + 2);
}

std::string where(const OpEvent& op) {
  std::string s = op.name;
  if (!op.module.empty()) s += " in " + op.module;
  if (!op.source.empty()) s += " (" + op.source + ")";
  return s;
}

// own_copy: the first layout copy this op makes, when it makes one ("layout_copy").
std::string suggest(const SplitPoint& sp, const OpEvent& op, const Report& r, const std::vector<int64_t>& top,
                    const CopyRecord* own_copy) {
  auto has = [&](const char* k) {
    return std::find(sp.kinds.begin(), sp.kinds.end(), k) != sp.kinds.end();
  };
  if (has("mixed_formats"))
    return "inputs mix channels_last and NCHW tensors: convert the model to channels_last as "
           "well (model.to(memory_format=torch.channels_last)) or feed it NCHW input";
  if (has("layout_copy")) {
    const CopyRecord& c = *own_copy;
    bool is_explicit = c.cls == CopyClass::explicit_layout;
    std::string born;
    if (c.origin >= 0) {
      const OpEvent& o = r.ops[c.origin];
      const OpEvent* shown = &r.ops[top[c.origin]];
      born = shown->id == op.id ? " (made inside this op by its " + o.name + ")"
                                : " (born at " + where(*shown) + ")";
    } else if (c.origin_input >= 0) {
      born = " (born as model input " + std::to_string(c.origin_input) + ")";
    }
    if (is_explicit)
      return "explicit copy of a " + c.src.label() + " tensor" + born +
             ": keep it only if the ops after it need dense data; better, avoid the layout "
             "change that makes it necessary";
    return "copies its " + c.src.label() + " input" + born +
           " on every call: make the tensor contiguous once at its origin, or keep the data "
           "dense so this op needs no copy";
  }
  if (sp.copies > 0)
    return "makes the " + sp.after + " tensor that " + std::to_string(sp.copies) +
           " later copies pay for (" + mb(sp.copy_bytes) + " MB" +
           "): make it contiguous once here (`.contiguous()` on the result of this " + short_name(op.name) + ")";
  return "layout changes here with no copy downstream: ops that read it may still run slower "
         "on non-dense data";
}

std::vector<SplitPoint> find_split_points(const Report& r, const std::vector<int64_t>& top) {
  std::unordered_map<int64_t, std::vector<const CopyRecord*>> by_culprit, by_origin;
  for (const CopyRecord& c : r.copies) {
    if (!is_layout_copy(c.cls)) continue;
    by_culprit[c.culprit].push_back(&c);
    if (c.origin >= 0 && top[c.origin] != c.culprit) by_origin[top[c.origin]].push_back(&c);
  }
  std::vector<SplitPoint> points;
  for (const OpEvent& op : r.ops) {
    if (op.parent >= 0) continue;
    // The engine's wrapper around a backward function records no tensors: the function's
    // own record inside it does (its inputs the incoming gradients, its outputs the ones it
    // makes).
    const OpEvent* shown = &op;
    if (r.backward_from >= 0 && op.id >= r.backward_from && op.inputs.empty() && op.outputs.empty() &&
        op.id + 1 < static_cast<int64_t>(r.ops.size()) && r.ops[op.id + 1].parent == op.id)
      shown = &r.ops[op.id + 1];
    const TensorInfo* in = main_input(*shown);
    const TensorInfo* out = main_output(r.ops, shown->id);
    SplitPoint sp;
    sp.op = op.id;
    if (in && out && in->layout().cls != LayoutClass::unknown &&
        out->layout().cls != LayoutClass::unknown &&
        in->label() != out->label())
      sp.kinds.push_back("layout_change");
    auto own = by_culprit.find(op.id);
    if (own != by_culprit.end()) sp.kinds.push_back("layout_copy");
    if (mixes_memory_formats(op)) sp.kinds.push_back("mixed_formats");
    if (sp.kinds.empty()) continue;

    sp.before = in ? in->label() : Str();
    sp.after = out ? out->label() : sp.before;
    std::vector<const CopyRecord*> paid;
    if (own != by_culprit.end()) paid = own->second;
    auto downstream = by_origin.find(op.id);
    if (downstream != by_origin.end())
      paid.insert(paid.end(), downstream->second.begin(), downstream->second.end());
    for (const CopyRecord* c : paid) {
      sp.copies++;
      sp.copy_bytes += c->bytes;
      sp.copy_ops.push_back(c->op);
    }
    sp.suggestion = suggest(sp, op, r, top, own != by_culprit.end() ? own->second.front() : nullptr);
    points.push_back(std::move(sp));
  }
  std::stable_sort(points.begin(), points.end(), [](const SplitPoint& a, const SplitPoint& b) {
    return std::tie(b.copy_bytes, b.copies) < std::tie(a.copy_bytes, a.copies);
  });
  return points;
}

// Each module's mixed-format ops of the forward pass, with and without a layout copy under them.
template <typename StatsFor>
void count_mixed_formats(const Report& r, StatsFor&& stats_for) {
  const int64_t end = r.backward_from >= 0 ? r.backward_from : static_cast<int64_t>(r.ops.size());
  std::vector<int32_t> top_level;
  for (const OpEvent& op : r.ops)
    if (op.id < end && op.parent < 0) top_level.push_back(op.id);
  const MemoryFormat model_format = model_weight_format(r.ops, top_level);
  std::vector<int64_t> copied;
  for (const CopyRecord& c : r.copies)
    if (is_layout_copy(c.cls)) copied.push_back(c.culprit);
  std::sort(copied.begin(), copied.end());
  for (int32_t id : top_level) {
    const OpEvent& op = r.ops[id];
    if (!mixed_format(op, model_format).mixed) continue;
    ModuleStats& m = stats_for(op.module);
    m.mixed_ops++;
    m.mixed_without_copy += !std::binary_search(copied.begin(), copied.end(), static_cast<int64_t>(id));
  }
}

std::vector<ModuleStats> aggregate_modules(const Report& r, const std::vector<int64_t>& top) {
  std::vector<ModuleStats> modules;
  struct StrHash {
    size_t operator()(Str s) const { return mix_hash(reinterpret_cast<uintptr_t>(s.id())); }
  };
  FlatIndex<Str, StrHash> index;
  auto stats_for = [&](Str module) -> ModuleStats& {
    uint32_t id = index.id(module);
    if (id == modules.size()) {
      modules.emplace_back();
      modules.back().module = module;
    }
    return modules[id];
  };
  for (const OpEvent& op : r.ops) {
    ModuleStats& m = stats_for(r.ops[top[op.id]].module);
    m.ops++;
    if (op.gpu_ns > 0) m.gpu_ns += op.gpu_ns;  // each op's own launches: no double counting
    if (op.parent >= 0) continue;
    m.top_level_ops++;
    m.time_ns += op.duration_ns;
    m.noncontiguous_inputs += noncontiguous_inputs(op);
    m.tensor_bytes += tensor_bytes(op);
    if (op.copy_gpu_ns > 0) m.copy_gpu_ns += op.copy_gpu_ns;  // its copies' kernels, nested ones too
    add_counters(m.counters, op.counters);
    append_flow(m.transitions, r.ops, op.id);
  }
  for (const CopyRecord& c : r.copies) {
    ModuleStats& m = stats_for(r.ops[c.culprit].module);
    m.copies[static_cast<int>(c.cls)]++;
    m.copy_bytes[static_cast<int>(c.cls)] += c.bytes;
    m.dtlb_walks += c.dtlb.walks;
  }
  for (const SplitPoint& sp : r.split_points) stats_for(r.ops[sp.op].module).split_points++;
  count_mixed_formats(r, stats_for);
  return modules;
}

// One counter's value in each call (`values`, an entry per call, ops' counters in order) as
// the figure over the calls: for a sampled one (`sampled`) the samples summed and the estimates
// averaged, for a counted one the medians. Multiplexed if it was in any call.
CounterValue over_calls(const std::vector<std::vector<CounterValue>>& values, size_t k, bool sampled,
                        std::vector<int64_t>& raw, std::vector<double>& scaled) {
  CounterValue out;
  raw.clear();
  scaled.clear();
  for (const std::vector<CounterValue>& call : values) {
    if (k >= call.size()) continue;
    raw.push_back(static_cast<int64_t>(call[k].raw));
    scaled.push_back(call[k].scaled);
    out.raw += call[k].raw;
    out.scaled += call[k].scaled;
    out.multiplexed = out.multiplexed || call[k].multiplexed;
  }
  if (raw.empty()) return out;
  if (sampled) {
    out.scaled /= static_cast<double>(raw.size());
    return out;
  }
  out.raw = static_cast<uint64_t>(median(raw));
  out.scaled = median(scaled);
  return out;
}

// Which of the measured counters are sampled; theirs are now figures over `calls` calls.
std::vector<bool> sampled_counters(RunInfo& run, size_t calls) {
  std::vector<bool> sampled;
  for (CounterStatus& c : run.counters) {
    if (!c.measured) continue;
    sampled.push_back(c.sampled());
    if (c.sampled()) c.calls = static_cast<int64_t>(calls);
  }
  return sampled;
}

// Durations and GPU times of `ops` become the medians over `calls` (which ran the same op
// sequence), and their counters the figures over them (over_calls: `sampled` says which
// counters are sampled).
void take_figures_over_calls(OpList& ops, const std::vector<const Call*>& calls, const std::vector<bool>& sampled) {
  // figures_only calls' figures, read in order
  std::vector<PackedInts::Reader> durations, gpu_times, counters;
  std::vector<size_t> counters_left;  // values each call's counters still hold
  for (const Call* c : calls) {
    durations.push_back(c->duration_ns.reader());
    gpu_times.push_back(c->gpu_ns.reader());
    counters.push_back(c->counters.reader());
    counters_left.push_back(c->counters.counters());
  }
  std::vector<int64_t> d, g, raw;
  std::vector<double> scaled;
  std::vector<std::vector<CounterValue>> values;
  for (size_t i = 0; i < ops.size(); ++i) {
    OpEvent& op = ops[i];
    d.clear();
    g.clear();
    for (size_t ci = 0; ci < calls.size(); ++ci) {
      const Call& c = *calls[ci];
      if (!c.figures_only) {
        d.push_back(c.events[i].duration_ns);
        g.push_back(c.events[i].gpu_ns);
        continue;
      }
      d.push_back(durations[ci].next());
      g.push_back(c.gpu_ns.empty() ? -1 : gpu_times[ci].next());
    }
    op.duration_ns = median(d);
    if (op.gpu_ns >= 0) op.gpu_ns = median(g);
    const size_t n = op.counters.size();
    if (n == 0) continue;
    // This op's counter values in each call (figures_only calls: the next n of their list).
    values.assign(calls.size(), {});
    for (size_t ci = 0; ci < calls.size(); ++ci) {
      const Call& c = *calls[ci];
      if (!c.figures_only) {
        values[ci].assign(c.events[i].counters.begin(), c.events[i].counters.end());
        continue;
      }
      if (c.took_no_sample) values[ci].assign(n, CounterValue{});
      for (size_t k = 0; k < n && counters_left[ci] > 0; ++k, --counters_left[ci])
        values[ci].push_back(counters[ci].next_counter());
    }
    for (size_t k = 0; k < n; ++k)
      op.counters[k] = over_calls(values, k, k < sampled.size() && sampled[k], raw, scaled);
  }
}

}  // namespace

namespace {

// Each backward op takes the module and line of the forward op whose node it runs (nested ops
// their parent's), except an op the user's own Python ran inside the backward pass (a custom
// autograd.Function's backward, a tensor or module hook): its recorded line is not the line of
// the pass's top-level op (where `.backward()` was called, or none on an engine thread), and it
// keeps that line, the one to change.
void take_forward_places(Report& r) {
  std::vector<Str> recorded(r.ops.size() - static_cast<size_t>(r.backward_from));
  for (size_t i = static_cast<size_t>(r.backward_from); i < r.ops.size(); ++i)
    recorded[i - r.backward_from] = r.ops[i].source;
  int64_t top = -1;
  for (size_t i = static_cast<size_t>(r.backward_from); i < r.ops.size(); ++i) {
    OpEvent& op = r.ops[i];
    if (op.parent < 0) top = static_cast<int64_t>(i);
    const bool users_own = op.parent >= 0 && top >= 0 && !op.source.empty() &&
                           op.source != recorded[top - r.backward_from];
    const OpEvent* from = nullptr;
    if (op.forward_op >= 0 && op.forward_op < r.backward_from) from = &r.ops[op.forward_op];
    else if (op.parent >= 0) from = &r.ops[op.parent];
    if (!from) continue;
    op.module = from->module;
    if (users_own) continue;
    op.source = from->source;
    op.source_text = from->source_text;
  }
}

// A training step's backward ops belong to the forward op whose autograd node they run: its
// module and source line (nested ops take their parent's, as in the forward pass). Each
// parameter's gradient gets its verdict and the backward op that produced it: the last one
// before the gradient reached the parameter with the gradient's buffer among its outputs.
void attribute_backward(Report& r) {
  if (r.backward_from >= 0) {
    // The engine wraps each node's record in one of its own ("autograd::engine::
    // evaluate_function: ConvolutionBackward0"), which carries no sequence number: it
    // belongs to the forward op of the node it runs.
    for (size_t i = r.ops.size(); i-- > static_cast<size_t>(r.backward_from);) {
      const OpEvent& op = r.ops[i];
      if (op.forward_op >= 0 && op.parent >= r.backward_from && r.ops[op.parent].forward_op < 0)
        r.ops[op.parent].forward_op = op.forward_op;
    }
    // AccumulateGrad has no forward op (a parameter is a leaf): it belongs to the module of
    // the parameter whose gradient it receives.
    std::unordered_map<uint64_t, Str> module_of_grad;
    for (const ParamGrad& p : r.parameters)
      if (p.has_grad && p.grad_storage != 0) {
        auto dot = p.name.rfind('.');
        module_of_grad.emplace(p.grad_storage, Str(dot == std::string::npos ? "" : p.name.substr(0, dot)));
      }
    for (size_t i = static_cast<size_t>(r.backward_from); i < r.ops.size(); ++i) {
      OpEvent& op = r.ops[i];
      if (op.parent >= 0 || op.forward_op >= 0 || module_of_grad.empty()) continue;
      for (size_t j = i; j < r.ops.size() && (j == i || r.ops[j].depth > op.depth); ++j) {
        if (j != i && r.ops[j].parent != static_cast<int64_t>(i)) continue;
        for (const TensorInfo& t : r.ops[j].inputs) {
          auto it = module_of_grad.find(t.storage);
          if (it != module_of_grad.end()) op.module = it->second;
        }
      }
    }
    take_forward_places(r);
  }
  struct Out {
    uint64_t storage;
    int64_t op;
  };
  std::vector<Out> outputs;  // the backward ops' outputs, by buffer then op
  if (r.backward_from >= 0)
    for (size_t i = static_cast<size_t>(r.backward_from); i < r.ops.size(); ++i)
      for (const TensorInfo& t : r.ops[i].outputs)
        if (t.storage != 0) outputs.push_back({t.storage, static_cast<int64_t>(i)});
  std::sort(outputs.begin(), outputs.end(),
            [](const Out& a, const Out& b) { return std::tie(a.storage, a.op) < std::tie(b.storage, b.op); });
  for (ParamGrad& p : r.parameters) {
    p.verdict = grad_verdict(p);
    p.producer = -1;
    if (!p.has_grad || p.grad_storage == 0) continue;
    auto it = std::lower_bound(outputs.begin(), outputs.end(), Out{p.grad_storage, 0},
                               [](const Out& a, const Out& b) { return std::tie(a.storage, a.op) < std::tie(b.storage, b.op); });
    for (; it != outputs.end() && it->storage == p.grad_storage; ++it)
      if (r.ops[it->op].start_ns <= p.grad_ns) p.producer = it->op;
  }
  // Worst first: copies every step, then DDP's warning, then unused, then the rest.
  auto rank = [](GradVerdict v) {
    switch (v) {
      case GradVerdict::layout_mismatch: return 0;
      case GradVerdict::size1_only: return 1;
      case GradVerdict::no_grad: return 2;
      case GradVerdict::match: return 3;
      case GradVerdict::frozen: return 4;
    }
    return 5;
  };
  std::stable_sort(r.parameters.begin(), r.parameters.end(),
                   [&](const ParamGrad& a, const ParamGrad& b) { return rank(a.verdict) < rank(b.verdict); });
}

}  // namespace

Call keep_figures_only(const Call& call, const Call& first) {
  if (call.figures_only) return call;
  Call kept;
  kept.wall_ns = call.wall_ns;
  kept.gpu_unattributed = call.gpu_unattributed;
  kept.gpu_unattributed_ns = call.gpu_unattributed_ns;
  kept.gpu_dropped = call.gpu_dropped;
  kept.gpu_graph_uncorrelated = call.gpu_graph_uncorrelated;
  kept.gpu_error = call.gpu_error;
  kept.ops_not_recorded = call.ops_not_recorded;
  kept.figures_only = true;
  kept.same_ops_as_first = same_op_sequence(call, first);
  const bool gpu = std::any_of(call.events.begin(), call.events.end(),
                               [](const OpEvent& e) { return e.gpu_ns >= 0; });
  for (const OpEvent& e : call.events) {
    kept.duration_ns.push_back(e.duration_ns);
    if (gpu) kept.gpu_ns.push_back(e.gpu_ns);
    for (const CounterValue& v : e.counters) kept.counters.push_counter(v);
  }
  kept.duration_ns.shrink_to_fit();
  kept.gpu_ns.shrink_to_fit();
  kept.counters.shrink_to_fit();
  return kept;
}

// Each copy's sampled data addresses on its source and its destination (the copy_'s input 1,
// and its input 0 or output 0), per measured counter.
static void add_copy_address_samples(Report& r) {
  if (r.tensor_samples.empty()) return;
  const size_t counters = r.run.measured_counters().size();
  std::unordered_map<int64_t, size_t> copy_at;
  for (size_t i = 0; i < r.copies.size(); ++i) copy_at.emplace(r.copies[i].op, i);
  for (const TensorSamples& t : r.tensor_samples) {
    auto it = copy_at.find(t.op);
    if (it == copy_at.end() || t.counter >= counters) continue;
    CopyRecord& c = r.copies[it->second];
    const OpEvent& op = r.ops[t.op];
    const size_t slot = static_cast<size_t>(t.slot);
    const bool is_output = slot >= op.inputs.size();
    const int arg = is_output ? op.outputs[slot - op.inputs.size()].arg : op.inputs[slot].arg;
    if (c.src_samples.empty()) {
      c.src_samples.assign(counters, 0);
      c.dst_samples.assign(counters, 0);
    }
    if (!is_output && arg == 1) c.src_samples[t.counter] += t.samples;
    else if (arg == 0) c.dst_samples[t.counter] += t.samples;
  }
}

// The report's summary: copies and their modelled DTLB walks per class, GPU figures, the
// top-level ops' counters and bytes, gradient verdicts (the wall time is the caller's).
void summarize(Report& r, const Trace& trace, const Call& shown) {
  Summary& s = r.summary;
  s.ops = static_cast<int64_t>(r.ops.size());
  for (const CopyRecord& c : r.copies) {
    s.copies[static_cast<int>(c.cls)]++;
    s.copy_bytes[static_cast<int>(c.cls)] += c.bytes;
    s.dtlb.accesses += c.dtlb.accesses;
    s.dtlb.l1_misses += c.dtlb.l1_misses;
    s.dtlb.walks += c.dtlb.walks;
    s.dtlb.sampled = s.dtlb.sampled || c.dtlb.sampled;
  }
  for (const OpEvent& op : r.ops) {
    if (op.gpu_ns >= 0) s.gpu.traced = true;
    if (op.gpu_ns > 0) {
      s.gpu.gpu_ns += op.gpu_ns;
      s.gpu.kernels += op.gpu_launches;
    }
    if (op.parent >= 0) continue;
    s.top_level_ops++;
    s.tensor_bytes += tensor_bytes(op);
    if (op.copy_gpu_ns > 0) s.gpu.copy_gpu_ns += op.copy_gpu_ns;
    add_counters(s.counters, op.counters);
  }
  s.gpu.unattributed = shown.gpu_unattributed;
  s.gpu.unattributed_ns = shown.gpu_unattributed_ns;
  for (const Call& c : trace.calls) s.gpu.dropped += c.gpu_dropped;
  s.split_points = static_cast<int64_t>(r.split_points.size());
  for (const ParamGrad& p : r.parameters)
    if (p.verdict != GradVerdict::frozen) s.grad_layout[static_cast<int>(p.verdict)]++;
}

Report analyze(Trace trace) {
  Report r;
  r.run = std::move(trace.run);
  const bool outside = !trace.calls.empty() && trace.calls.back().outside_calls;
  r.run.calls_recorded = static_cast<int>(trace.calls.size()) - (outside ? 1 : 0);
  if (trace.calls.empty()) {
    r.hazards = find_hazards(r, {});  // the parameters and buffers, listed as the run started
    return r;
  }

  // The failing call is the one to show; otherwise (and where the run failed between calls, as
  // an in-process script can) the first recorded call.
  Call& first = trace.calls.front();
  Call& shown = r.run.status == RunStatus::failed && !trace.calls.back().figures_only ? trace.calls.back() : first;
  if (shown.figures_only) throw std::invalid_argument("the call to show has no op events");
  const bool shown_like_first = &shown == &first || same_op_sequence(first, shown);
  // The shown call's events move into the report (a copy would double the memory of the
  // largest thing a run holds); the medians read its figures instead.
  // (With one call, its figures are the medians.)
  // The ops before a failure outside the calls are shown with their own figures, and the
  // calls' walls make the forward's time.
  const bool one_call = trace.calls.size() == 1 || outside;
  const Call shown_figures = one_call ? Call() : keep_figures_only(shown, shown);
  std::vector<int64_t> walls;
  std::vector<const Call*> same;
  for (const Call& c : trace.calls) {
    if (outside) {
      if (&c != &shown || trace.calls.size() == 1) walls.push_back(c.wall_ns);
      continue;
    }
    bool like = &c == &shown ||
                (c.figures_only ? c.same_ops_as_first && shown_like_first : same_op_sequence(c, shown));
    if (like) same.push_back(&c == &shown ? &shown_figures : &c);
    else r.run.calls_identical = false;
    walls.push_back(c.wall_ns);
  }
  r.ops = std::move(shown.events);
  r.tensors = shown.tensors;
  r.run.ops_not_recorded = shown.ops_not_recorded;
  r.backward_from = shown.backward_from;
  r.parameters = first.parameters;
  if (!one_call) take_figures_over_calls(r.ops, same, sampled_counters(r.run, same.size()));
  attribute_backward(r);

  std::vector<int64_t> top = top_level_ancestors(r.ops);
  Provenance provenance(r.ops, r.run.inputs);
  const TlbConfig tlb = parse_tlb_config(r.run.tlb);
  r.run.tlb = tlb_config_string(tlb);
  r.copies = find_copies(r.ops, top, provenance, tlb);
  r.tensor_samples = std::move(shown.tensor_samples);
  add_copy_address_samples(r);
  for (OpEvent& op : r.ops) op.copy_gpu_ns = op.gpu_ns >= 0 ? 0 : -1;
  for (const CopyRecord& c : r.copies)
    if (is_layout_copy(c.cls) && c.gpu_ns > 0)
      for (int64_t id = c.op; id >= 0; id = r.ops[id].parent) r.ops[id].copy_gpu_ns += c.gpu_ns;
  r.split_points = find_split_points(r, top);
  r.backend = attribute_backend(trace.backend, r.ops);  // before the causes: their fixes' order reads it
  r.causes = find_causes(r, top);
  r.hazards = find_hazards(r, shown.outputs);
  for (Hazard& h : r.hazards) h.outside_calls = outside && h.op >= 0;
  r.modules = aggregate_modules(r, top);

  summarize(r, trace, shown);
  r.summary.wall_ns = median(walls);
  return r;
}

}  // namespace layoutprof
