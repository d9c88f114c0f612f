#include "analysis/birthplace.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "analysis/analysis.h"
#include "analysis/cause_text.h"
#include "analysis/compiled_code.h"
#include "analysis/elementwise_order.h"
#include "analysis/mixed_formats.h"
#include "analysis/stride_assertion.h"
#include "analysis/view_key.h"

namespace layoutprof {

const LayoutCause* cause_paid_by(const Report& r, int64_t op) {
  for (const LayoutCause& c : r.causes)
    if (std::find(c.payers.begin(), c.payers.end(), op) != c.payers.end()) return &c;
  return nullptr;
}

bool accept_matches(const std::string& accepted, const std::string& where) {
  if (accepted.empty() || where.empty()) return false;
  if (where == accepted) return true;
  return where.size() > accepted.size() && where.compare(where.size() - accepted.size(), accepted.size(), accepted) == 0 &&
         where[where.size() - accepted.size() - 1] == '/';
}

namespace {

// "3,224,224": sizes or strides, as a spec writes them.
std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : ",") + std::to_string(d);
  return out;
}

// copy_cause()'s answer for a copy that no birthplace explains (a library op's own copy of a view
// of its dense inputs, contiguous data of a rank no memory format concerns): no cause.
constexpr size_t kNoCause = static_cast<size_t>(-1);

// A chain is followed at most this many ops back (a loop of a million ops stays bounded).
constexpr int kMaxHops = 1 << 20;

// Ops whose operands can swap places without changing the result (out of place only: an
// in-place op keeps its first operand's strides whatever the order). An add with `alpha`
// (a + alpha * b) is not: the recorded op has no scalars, so its line's code decides (`alpha=`
// on it, or a third positional argument of `torch.add`, is taken for one).
bool is_commutative(const OpEvent& op) {
  const std::string_view name = op_short_name(op);
  if (name == "add" && op.source_text.str().find("alpha") != std::string::npos) return false;
  return name == "add" || name == "mul" || name == "maximum" || name == "minimum";
}

// A birth at an elementwise op: when TensorIterator's rule gives its recorded output strides,
// which operand decided them, and (a commutative op of two operands) what a swap would give.
void explain_elementwise(const OpEvent& op, LayoutCause& c) {
  if (op.outputs.empty()) return;
  const TensorInfo& out = op.outputs.front();
  if (out.strides().size() != out.sizes().size()) return;
  std::vector<const TensorInfo*> operands;
  for (const TensorInfo& in : op.inputs)
    if (in.layout().cls != LayoutClass::unknown && !in.sizes().empty() && in.strides().size() == in.sizes().size())
      operands.push_back(&in);
  if (operands.size() < 2 || !std::all_of(operands.begin(), operands.end(), [&](const TensorInfo* t) { return broadcasts_to(*t, out.sizes()); }))
    return;
  const ElementwiseOrder o = elementwise_output_order(operands, out.sizes());
  TensorInfo predicted;
  predicted.set_shape(out.sizes(), o.strides, out.dtype());
  if (o.fast_path || predicted.label() != out.label()) return;
  c.decided_by = o.decided_by;
  if (operands.size() != 2 || !is_commutative(op)) return;
  TensorInfo swapped;
  swapped.set_shape(out.sizes(), elementwise_output_order({operands[1], operands[0]}, out.sizes()).strides, out.dtype());
  if (swapped.label() != out.label()) c.swapped_layout = swapped.label();
}

void add_module(LayoutCause& c, const std::string& module) {
  if (std::find(c.modules.begin(), c.modules.end(), module) == c.modules.end()) c.modules.push_back(module);
}

// The op whose tensors a top-level op shows: itself, or, for the autograd engine's wrapper
// around a backward function (it records none), the function's own record inside it.
const OpEvent& shown_op(const OpList& ops, int64_t id) {
  const OpEvent& op = ops[id];
  if (op.inputs.empty() && op.outputs.empty() && id + 1 < static_cast<int64_t>(ops.size()) && ops[id + 1].parent == id)
    return ops[id + 1];
  return op;
}

// The top-level op an op's outputs are made by: itself at the top; a nested op's, when no op
// between records outputs of its own (the engine's wrapper and the autograd function inside
// it record none, TorchScript's chunk neither); -1 otherwise.
int32_t made_for(const OpList& ops, const OpEvent& op) {
  int64_t id = op.id;
  while (ops[id].parent >= 0) {
    id = ops[id].parent;
    if (!ops[id].outputs.empty()) return -1;
  }
  return static_cast<int32_t>(id);
}

// Per view of memory, the top-level ops that made it, ascending: the outputs of top-level ops,
// and of the nested ops made_for() gives them. Dense ids (FlatIndex) and one array of ops in key order, built
// in two passes: no allocation per key, as a million-op call needs. One index holds the
// contiguous outputs, another the rest: most calls trace only non-contiguous layouts, and the
// contiguous outputs, most of a call's, are then never indexed.
class ProducerIndex {
 public:
  ProducerIndex(const OpList& ops, bool contiguous) {
    std::vector<std::pair<uint32_t, int32_t>> entries;  // (key id, top-level op), op order
    for (const OpEvent& op : ops) {
      const int32_t producer = made_for(ops, op);
      if (producer < 0) continue;
      for (const TensorInfo& t : op.outputs) {
        if (t.storage == 0 || t.layout().cls == LayoutClass::unknown ||
            (t.layout().cls == LayoutClass::contiguous) != contiguous)
          continue;
        const uint32_t key = keys_.id(view_key(t));
        if (entries.empty() || entries.back() != std::make_pair(key, producer)) entries.emplace_back(key, producer);
      }
    }
    offsets_.assign(keys_.size() + 1, 0);
    for (const auto& e : entries) offsets_[e.first + 1]++;
    for (size_t k = 1; k < offsets_.size(); ++k) offsets_[k] += offsets_[k - 1];
    producers_.resize(entries.size());
    std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
    for (const auto& e : entries) producers_[next[e.first]++] = e.second;  // stable: ascending per key
  }

  // The latest top-level op before `before` whose output is `t`; -1 when none.
  int64_t latest(const TensorInfo& t, int64_t before) const {
    const int64_t key = keys_.find(view_key(t));
    if (key < 0) return -1;
    const auto first = producers_.begin() + offsets_[key], last = producers_.begin() + offsets_[key + 1];
    const auto at = std::lower_bound(first, last, before);
    return at == first ? -1 : *(at - 1);
  }

 private:
  FlatIndex<ViewKey, ViewKeyHash> keys_;
  std::vector<uint32_t> offsets_;   // per key id, where its producers begin in producers_
  std::vector<int32_t> producers_;
};

// Follows tensors back through the ops that made them, from reader to producer, while each
// producer passed the layout on; memoised per (producer, layout), so that the payers of one
// birthplace share the walk.
class Tracer {
 public:
  explicit Tracer(const Report& r) : r_(r) {}

  // The cause of the layout `t` has where the top-level op `reader` reads it.
  size_t trace(const TensorInfo& t, int64_t reader) {
    const Str label = t.label();
    const TensorInfo* current = &t;
    int64_t before = reader;
    std::vector<int64_t> path;  // the carriers, newest first
    std::vector<LayoutChoice> choices;
    size_t cause = 0;
    for (int hops = 0;; ++hops) {
      const int64_t p = producer(*current, before);
      if (p < 0) {
        const int input = model_input(*current);
        cause = input >= 0 ? birth(BirthKind::model_input, input, label, Str())
                           : birth(BirthKind::unrecorded, model_tensor(*current), label, Str());
        break;
      }
      const auto memo = memo_.find({p, label.id()});
      if (memo != memo_.end()) {
        cause = memo->second;
        break;
      }
      int position = -1;
      const OpEvent& op = shown_op(r_.ops, p);
      const TensorInfo* in = hops < kMaxHops ? followed(op, *current, label, &position) : nullptr;
      if (!in) {
        cause = born_at(p, label);
        break;
      }
      note_choice(op, *current, label, position, choices);
      path.push_back(p);
      current = in;
      before = p;
    }
    for (int64_t p : path) {
      memo_[{p, label.id()}] = cause;
      carriers_[cause].push_back(p);
    }
    for (const LayoutChoice& c : choices) {
      auto& list = causes_[cause].choices;
      if (std::none_of(list.begin(), list.end(), [&](const LayoutChoice& o) { return o.op == c.op; })) list.push_back(c);
    }
    return cause;
  }

  // A layout born at top-level op `op` itself (inside it, or by its own output). Not memoised:
  // a birth is found again in a lookup, and a walk that meets this op later decides anew.
  size_t born_at(int64_t op, Str layout) {
    const TensorInfo* data = main_input(shown_op(r_.ops, op));
    return birth(BirthKind::op, op, layout, data ? data->label() : Str());
  }

  std::vector<LayoutCause>& causes() { return causes_; }
  // Its carriers, ascending and distinct.
  std::vector<int64_t> carriers(size_t cause) const {
    std::vector<int64_t> ids = carriers_[cause];
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }

  // The parameter or buffer whose storage `t` is (in memory: a report read from JSON has no
  // storages), or -1.
  int64_t model_tensor(const TensorInfo& t) const {
    const auto& tensors = r_.run.model_tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorInfo& m = tensors[i].tensor;
      if ((t.storage_id != 0 && m.storage_id == t.storage_id) || (t.storage != 0 && m.storage == t.storage))
        return static_cast<int64_t>(i);
    }
    return -1;
  }

 private:
  // The latest top-level op before `before` whose output (or a nested op's) is `t`.
  int64_t producer(const TensorInfo& t, int64_t before) {
    const bool contiguous = t.layout().cls == LayoutClass::contiguous;
    std::unique_ptr<ProducerIndex>& index = contiguous ? contiguous_producers_ : producers_;
    if (!index) index = std::make_unique<ProducerIndex>(r_.ops, contiguous);
    return index->latest(t, before);
  }

  // The input of `op` that passed `label` on to `out`: same layout and rank, the same sizes
  // preferred, then the same number of elements; nullptr when none had it (a birth).
  static const TensorInfo* followed(const OpEvent& op, const TensorInfo& out, Str label, int* position) {
    const TensorInfo* best = nullptr;
    int best_rank = 3;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const TensorInfo& in = op.inputs[i];
      if (in.label() != label || in.layout().cls == LayoutClass::unknown || in.sizes().size() != out.sizes().size())
        continue;
      const int rank = in.sizes() == out.sizes() ? 0 : in.numel() == out.numel() ? 1 : 2;
      if (rank < best_rank) {
        best = &in;
        best_rank = rank;
        *position = static_cast<int>(i);
      }
    }
    return best;
  }

  // A carrier that followed one full-size operand's layout over another's.
  static void note_choice(const OpEvent& op, const TensorInfo& out, Str label, int position,
                          std::vector<LayoutChoice>& choices) {
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const TensorInfo& other = op.inputs[j];
      if (static_cast<int>(j) == position || other.sizes() != out.sizes() || other.label() == label ||
          !is_dense_class(other.layout().cls))
        continue;
      choices.push_back({op.id, position, other.label(), position == 0 && is_commutative(op)});
      return;
    }
  }

  int model_input(const TensorInfo& t) const {
    const auto& inputs = r_.run.inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (view_key(inputs[i].tensor) == view_key(t)) return static_cast<int>(i);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (t.storage != 0 && inputs[i].tensor.storage == t.storage) return static_cast<int>(i);
    return -1;
  }

  size_t birth(BirthKind kind, int64_t where, Str layout, Str from) {
    // One place is one birthplace, however often it runs (a loop's line): an op is keyed by its
    // name, module and line; an input by its position.
    BirthKey key{static_cast<int>(kind), kind == BirthKind::op ? -1 : where, layout.id(), nullptr, nullptr, nullptr};
    if (kind == BirthKind::op) {
      const OpEvent& op = r_.ops[where];
      // A line names the place whatever module ran it (a helper's, a norm class's in every
      // stage); an op without a line is told apart by its module.
      key = {static_cast<int>(kind), -1, layout.id(), op.name.id(), op.source.empty() ? op.module.id() : nullptr,
             op.source.id()};
    }
    const auto found = births_.find(key);
    if (found != births_.end()) {
      LayoutCause& known = causes_[found->second];
      if (kind == BirthKind::op) add_module(known, r_.ops[where].module);
      return found->second;
    }
    LayoutCause c;
    c.layout = layout;
    c.kind = kind;
    if (kind == BirthKind::op) {
      const OpEvent& op = r_.ops[where];
      c.birth_op = where;
      c.op_name = op.name;
      c.module = op.module;
      c.modules = {op.module};
      c.from_layout = from;
      c.where = op.source;
      c.code = op.source_text;
      explain_elementwise(shown_op(r_.ops, where), c);
    } else if (kind == BirthKind::model_input) {
      c.birth_input = static_cast<int>(where);
      const ModelInput& in = r_.run.inputs[where];
      c.input_text = "input " + std::to_string(where) + ": " + in.spec.text + " (strides " + dims_text(in.tensor.strides()) + ")" +
                     (in.origin.empty() ? "" : ", " + in.origin);
    } else if (where >= 0) {  // unrecorded: the model's own parameter or buffer
      const ModelTensor& m = r_.run.model_tensors[where];
      c.input_text = std::string(m.buffer ? "buffer" : "parameter") + " `" + m.name + "` (sizes " +
                     dims_text(m.tensor.sizes()) + ", strides " + dims_text(m.tensor.strides()) + ")";
      c.where = m.made_at;  // the line between the calls that made this view, where seen
      c.code = m.made_code;
      c.op_name = m.made_by;
    }
    births_.emplace(key, causes_.size());
    causes_.push_back(std::move(c));
    carriers_.emplace_back();
    return causes_.size() - 1;
  }

  struct MemoHash {
    size_t operator()(const std::pair<int64_t, const void*>& k) const {
      return mix_hash(static_cast<uint64_t>(k.first) ^ mix_hash(reinterpret_cast<uintptr_t>(k.second)));
    }
  };

  const Report& r_;
  std::unique_ptr<ProducerIndex> producers_, contiguous_producers_;  // built when first asked
  std::unordered_map<std::pair<int64_t, const void*>, size_t, MemoHash> memo_;
  using BirthKey = std::tuple<int, int64_t, const void*, const void*, const void*, const void*>;
  std::map<BirthKey, size_t> births_;
  std::vector<LayoutCause> causes_;
  std::vector<std::vector<int64_t>> carriers_;  // per cause, as met
};

// What each cause's payers cost: filled payer by payer, then copied into the causes.
class Charges {
 public:
  Charges(const Report& r, Tracer& tracer) : r_(r), tracer_(tracer) {}

  void pay(size_t cause, int64_t payer) {
    if (payers_.size() <= cause) payers_.resize(cause + 1);
    payers_[cause].push_back(payer);
  }
  LayoutCause& at(size_t cause) { return tracer_.causes()[cause]; }

  void finish() {
    std::vector<LayoutCause>& causes = tracer_.causes();
    payers_.resize(causes.size());
    for (size_t i = 0; i < causes.size(); ++i) {
      LayoutCause& c = causes[i];
      const std::vector<int64_t> carriers = tracer_.carriers(i);
      std::vector<int64_t>& payers = payers_[i];
      std::sort(payers.begin(), payers.end());
      payers.erase(std::unique(payers.begin(), payers.end()), payers.end());
      c.carriers_total = static_cast<int64_t>(carriers.size());
      for (int64_t id : carriers)
        if (c.carriers.size() < kMaxChain) c.carriers.push_back(id);
      c.payers_total = static_cast<int64_t>(payers_[i].size());
      for (int64_t id : payers_[i]) {
        if (c.payers.size() < kMaxChain) c.payers.push_back(id);
        const std::string& module = r_.ops[id].module;
        if (std::find(c.payer_modules.begin(), c.payer_modules.end(), module) == c.payer_modules.end())
          c.payer_modules.push_back(module);
      }
    }
  }

 private:
  const Report& r_;
  Tracer& tracer_;
  std::vector<std::vector<int64_t>> payers_;  // per cause, as met
};

int64_t forward_end(const Report& r) {
  return r.backward_from >= 0 ? r.backward_from : static_cast<int64_t>(r.ops.size());
}

// The forward top-level op whose autograd node a backward top-level op runs; -1 when none.
int64_t forward_top(const Report& r, const std::vector<int64_t>& top, int64_t op) {
  const int64_t end = static_cast<int64_t>(r.ops.size());
  for (int64_t id = op; id < end && (id == op || r.ops[id].depth > r.ops[op].depth); ++id) {
    const int64_t f = r.ops[id].forward_op;
    if (f >= 0 && f < forward_end(r)) return top[f];
  }
  return -1;
}

// The cause of one layout copy. A backward op's is its forward op's data's, when that data is
// mixed-format or laid out as the copy's source; an AccumulateGrad's, its parameter's gradient's.
// Otherwise the culprit's input the copy read is followed back (through the backward pass too),
// and a view made inside the culprit is born there.
size_t copy_cause(const Report& r, const std::vector<int64_t>& top, Tracer& tracer, const CopyRecord& c,
                  MemoryFormat model_format, const std::unordered_map<uint64_t, size_t>& grad_causes) {
  const bool backward = c.culprit >= forward_end(r);
  const int64_t forward = backward ? forward_top(r, top, c.culprit) : -1;
  if (forward >= 0) {
    const OpEvent& f = r.ops[forward];
    const TensorInfo* data = main_input(f);
    if (data && (mixed_format(f, model_format).mixed || data->label() == c.src.label())) return tracer.trace(*data, forward);
  }
  if (backward && forward < 0) {
    const auto grad = grad_causes.find(c.src.storage);
    if (grad != grad_causes.end()) return grad->second;
  }
  // Contiguous data of a rank no memory format concerns (a 2-D gradient, tokens) was born in no
  // layout of its own: what the copy writes is the reader's demand, not a birthplace's.
  const size_t rank = c.src.sizes().size();
  if (c.src.layout().cls == LayoutClass::contiguous && rank != 4 && rank != 5) return kNoCause;
  const OpEvent& op = shown_op(r.ops, c.culprit);
  const TensorInfo* data = main_input(op);
  if (!backward && data && mixed_format(op, model_format).mixed) return tracer.trace(*data, c.culprit);
  const TensorInfo* read = nullptr;
  for (const TensorInfo& in : op.inputs)
    if (in.storage == c.src.storage && (!read || in.label() == c.src.label())) read = &in;
  if (read && read->label() == c.src.label()) return tracer.trace(*read, c.culprit);
  // A copy of the model's own parameter or buffer (a backward op reading a weight laid out
  // otherwise, in no input of its own): the tensor's own layout is the cause, not the op.
  if (tracer.model_tensor(c.src) >= 0) return tracer.trace(c.src, c.culprit);
  // A view the op made of its own dense inputs and copied: the library's, no cause of the
  // calling code's (nothing there would change it).
  if (reads_only_contiguous(op) || is_ddp_reducer(op.name.str())) return kNoCause;
  if (is_compiled_code(r.ops[c.culprit].name) && made_inside_callee(r, c)) return kNoCause;
  return tracer.born_at(c.culprit, c.src.label());
}

void charge_copies(const Report& r, const std::vector<int64_t>& top, Tracer& tracer, Charges& charges,
                   MemoryFormat model_format, const std::unordered_map<uint64_t, size_t>& grad_causes) {
  for (const CopyRecord& c : r.copies) {
    if (!is_layout_copy(c.cls)) continue;
    const size_t cause = copy_cause(r, top, tracer, c, model_format, grad_causes);
    if (cause == kNoCause) continue;
    LayoutCause& k = charges.at(cause);
    (c.cls == CopyClass::implicit_layout ? k.copies : k.explicit_copies)++;
    k.copy_bytes += c.bytes;
    k.copy_ns += std::max<int64_t>(r.ops[c.op].duration_ns, 0);
    charges.pay(cause, c.culprit);
  }
}

// Forward mixed-format ops, and views that failed on the layout they were given.
void charge_ops(const Report& r, const std::vector<int32_t>& top_level, Tracer& tracer, Charges& charges,
                MemoryFormat model_format) {
  std::vector<int64_t> copied;  // the culprits of layout copies, sorted
  for (const CopyRecord& c : r.copies)
    if (is_layout_copy(c.cls)) copied.push_back(c.culprit);
  std::sort(copied.begin(), copied.end());
  for (int32_t id : top_level) {
    const OpEvent& op = r.ops[id];
    if (op.inputs.empty()) continue;
    if (op.failed && op_short_name(op).rfind("view", 0) == 0) {
      charges.pay(tracer.trace(op.inputs.front(), op.id), op.id);
      continue;
    }
    const MixedFormat m = mixed_format(op, model_format);
    if (!m.mixed) continue;
    const size_t cause = tracer.trace(op.inputs.front(), op.id);
    LayoutCause& k = charges.at(cause);
    k.mixed_ops++;
    if (!std::binary_search(copied.begin(), copied.end(), static_cast<int64_t>(op.id))) {
      k.mixed_without_copy++;
      if (m.foreign >= 0) k.mixed_bytes += op.inputs[m.foreign].bytes();
    }
    charges.pay(cause, op.id);
  }
}

// Views that failed in the backward pass (in a custom autograd.Function's backward, a hook):
// the outermost, their input followed back like the forward's.
void charge_backward_views(const Report& r, Tracer& tracer, Charges& charges) {
  if (r.backward_from < 0) return;
  const auto failed_view = [&](int64_t id) {
    const OpEvent& op = r.ops[id];
    return op.failed && !op.inputs.empty() && op_short_name(op).rfind("view", 0) == 0;
  };
  for (int64_t id = r.backward_from; id < static_cast<int64_t>(r.ops.size()); ++id)
    if (failed_view(id) && (r.ops[id].parent < 0 || !failed_view(r.ops[id].parent)))
      charges.pay(tracer.trace(r.ops[id].inputs.front(), id), id);
}

// The model's parameter `name` where it is neither contiguous nor in a memory format (permuted,
// strided: set so by the user's code), or nullptr. A gradient that comes back dense then differs
// from it because of the parameter, whatever its data's layout.
const ModelTensor* odd_parameter(const Report& r, const std::string& name) {
  for (const ModelTensor& m : r.run.model_tensors) {
    if (m.buffer || m.name != name) continue;
    const LayoutClass c = m.tensor.layout().cls;
    const bool plain = c == LayoutClass::contiguous || c == LayoutClass::channels_last || c == LayoutClass::channels_last_3d;
    return plain ? nullptr : &m;
  }
  return nullptr;
}

// A parameter's gradient that comes back in its forward op's data format, not the parameter's.
// Returns, per gradient buffer, its cause: AccumulateGrad's copy of it is charged there too.
std::unordered_map<uint64_t, size_t> charge_gradients(const Report& r, const std::vector<int64_t>& top, Tracer& tracer,
                                                      Charges& charges) {
  std::unordered_map<uint64_t, size_t> causes;
  for (const ParamGrad& p : r.parameters) {
    if (p.verdict != GradVerdict::size1_only && p.verdict != GradVerdict::layout_mismatch) continue;
    // Strides of its own that differ on dims of size 1 only: no layout to trace, no copy paid
    // (the gradient section says where DDP minds them).
    if (p.verdict == GradVerdict::size1_only && odd_size1_strides(p.sizes, p.strides)) continue;
    if (p.producer < 0 || p.producer >= static_cast<int64_t>(r.ops.size())) continue;
    const int64_t forward = forward_top(r, top, top[p.producer]);
    if (forward < 0 || r.ops[forward].inputs.empty()) continue;
    TensorInfo grad, param;
    grad.set_shape(p.grad_sizes, p.grad_strides, "f32");
    param.set_shape(p.sizes, p.strides, "f32");
    const TensorInfo& data = r.ops[forward].inputs.front();
    // A parameter laid out oddly by the user's code: its own layout, not its gradient's, is
    // what the copies pay for.
    const ModelTensor* own = odd_parameter(r, p.name);
    const MemoryFormat g = memory_format_of(grad);
    // A gradient in its data's memory format follows the data's layout back; another layout
    // (a transposed one from a matmul's backward) was born in the forward op's backward.
    const bool data_format = g != MemoryFormat::none && g == memory_format_of(data) && g != memory_format_of(param);
    const size_t cause = own           ? tracer.trace(own->tensor, top[p.producer])
                         : data_format ? tracer.trace(data, forward)
                                       : tracer.born_at(forward, grad.label());
    charges.at(cause).gradients.push_back(p.name);
    charges.pay(cause, top[p.producer]);
    if (p.grad_storage != 0) causes.emplace(p.grad_storage, cause);
  }
  return causes;
}

// The cause's place is the user's to change: not a backward function the autograd engine runs,
// not a line of an installed package (site-packages, dist-packages).
bool at_users_place(const LayoutCause& c) {
  if (c.kind != BirthKind::op) return true;
  if (!backward_function(c.op_name).empty()) return false;
  return c.where.find("/site-packages/") == std::string::npos && c.where.find("/dist-packages/") == std::string::npos;
}

}  // namespace

std::vector<LayoutCause> find_causes(const Report& r, const std::vector<int64_t>& top) {
  if (r.top_level_only) return {};
  Tracer tracer(r);
  Charges charges(r, tracer);
  std::vector<int32_t> top_level;  // the forward pass's top-level ops: the only ops read in full below
  for (int64_t i = 0; i < forward_end(r); ++i)
    if (top[i] == i) top_level.push_back(static_cast<int32_t>(i));
  const MemoryFormat model_format = model_weight_format(r.ops, top_level);
  const auto grad_causes = charge_gradients(r, top, tracer, charges);
  charge_copies(r, top, tracer, charges, model_format, grad_causes);
  charge_ops(r, top_level, tracer, charges, model_format);
  charge_backward_views(r, tracer, charges);
  const int64_t refused = stride_assertion_op(r);  // its input's layout, as a failed view's
  if (refused >= 0 && !r.ops[refused].inputs.empty()) charges.pay(tracer.trace(r.ops[refused].inputs.front(), refused), refused);
  charges.finish();
  std::vector<LayoutCause> causes = std::move(tracer.causes());
  for (LayoutCause& c : causes) {
    c.fixes = cause_fixes(c, r, model_format);
    c.actions = cause_actions(c, r, model_format);
    for (const std::string& a : r.run.accepted) c.accepted = c.accepted || accept_matches(a, c.where);
  }
  // The places a user changes first: a layout born in a backward function, or on a line of an
  // installed package, comes after those born in the user's own code, inputs and tensors.
  std::stable_sort(causes.begin(), causes.end(), [](const LayoutCause& a, const LayoutCause& b) {
    return std::make_tuple(at_users_place(b), b.copy_bytes, b.copies + b.explicit_copies, b.mixed_ops, b.gradients.size()) <
           std::make_tuple(at_users_place(a), a.copy_bytes, a.copies + a.explicit_copies, a.mixed_ops, a.gradients.size());
  });
  return causes;
}

}  // namespace layoutprof
