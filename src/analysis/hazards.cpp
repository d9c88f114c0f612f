#include "analysis/hazards.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/birthplace.h"
#include "analysis/cause_text.h"
#include "analysis/mixed_formats.h"
#include "analysis/stride_assertion.h"
#include "analysis/view_key.h"

namespace layoutprof {

std::string extent_text(const TensorInfo& t) {
  std::string s;
  for (size_t i = 0; i < t.sizes().size(); ++i) s += (i ? "x" : "") + std::to_string(t.sizes()[i]);
  s += " strides ";
  for (size_t i = 0; i < t.strides().size(); ++i) s += (i ? "," : "") + std::to_string(t.strides()[i]);
  return s;
}

namespace {

// A view of one storage: the storage itself (not its data's address), offset and shape.
ViewKey storage_view(const TensorInfo& t) { return {t.storage_id, t.storage_offset, t.shape}; }
bool same_view(const TensorInfo& a, const TensorInfo& b) { return a.storage_id != 0 && storage_view(a) == storage_view(b); }

bool outermost(const OpList& ops, const OpEvent& op) {
  return op.parent < 0 || ops[op.parent].name.str().rfind("aten::", 0) != 0;
}

bool is_dense(const TensorInfo& t) { return is_dense_class(t.layout().cls); }

enum class Overlap { no, full, partial, too_hard };

// A tensor's elements that overlap each other: MemoryOverlap.h's has_internal_overlap.
Overlap internal_overlap(const TensorInfo& t) {
  if (t.layout().cls == LayoutClass::broadcast) return Overlap::full;
  return t.layout().cls == LayoutClass::overlapping ? Overlap::too_hard : Overlap::no;
}

// Bytes [begin, end) a tensor's elements span in its storage.
std::pair<int64_t, int64_t> byte_range(const TensorInfo& t) {
  int64_t lo = t.storage_offset, hi = t.storage_offset;
  for (size_t d = 0; d < t.sizes().size() && d < t.strides().size(); ++d) {
    const int64_t span = t.strides()[d] * (t.sizes()[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  return {lo * t.elem_size(), (hi + 1) * t.elem_size()};
}

// Two tensors' overlap: MemoryOverlap.h's get_overlap_status, with storages told apart by the
// storage itself.
Overlap overlap(const TensorInfo& a, const TensorInfo& b) {
  if (a.storage_id == 0 || a.storage_id != b.storage_id || a.numel() == 0 || b.numel() == 0) return Overlap::no;
  if (same_view(a, b)) return Overlap::full;
  const auto ra = byte_range(a), rb = byte_range(b);
  if (ra.second <= rb.first || rb.second <= ra.first) return Overlap::no;
  if (!is_dense(a) || !is_dense(b)) return Overlap::too_hard;
  if (ra == rb) return a.strides() == b.strides() ? Overlap::full : Overlap::partial;
  return Overlap::partial;
}

// Positions that see each element of a tensor with zero strides: the product of those dims.
int64_t sharing_of(const TensorInfo& t) {
  int64_t n = 1;
  for (size_t d = 0; d < t.sizes().size() && d < t.strides().size(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) n *= t.sizes()[d];
  return n;
}

// In-place ops that change a tensor's metadata (its sizes, strides, storage or autograd
// flags), not its elements.
bool writes_no_elements(std::string_view name) {
  static const char* const kMetadata[] = {"requires_grad_", "detach_", "resize_", "resize_as_", "set_",
                                          "as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_",
                                          "swapdims_", "swapaxes_", "share_memory_"};
  for (const char* m : kMetadata)
    if (name == m) return true;
  return false;
}

// The op's inputs it writes: self of an in-place op (every tensor of a foreach op's first
// list), or an out= tensor (an output that is exactly a later argument, not self's storage).
std::vector<size_t> written_inputs(const OpEvent& op) {
  std::vector<size_t> out;
  const std::string_view name = op_short_name(op);
  if (name.size() > 1 && name.back() == '_') {
    if (writes_no_elements(name)) return out;
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (op.inputs[i].arg == 0) out.push_back(i);
    return out;
  }
  for (const TensorInfo& o : op.outputs) {
    if (o.storage_id == 0) continue;
    bool self_storage = false;
    for (const TensorInfo& in : op.inputs) self_storage |= in.arg == 0 && in.storage_id == o.storage_id;
    for (size_t i = 0; i < op.inputs.size() && !self_storage; ++i)
      if (op.inputs[i].arg > 0 && same_view(op.inputs[i], o)) out.push_back(i);
  }
  return out;
}

// Ops that return a view (or their input) when they can, and a copy otherwise.
bool may_copy(const OpEvent& op) {
  const std::string_view n = op_short_name(op);
  return n == "reshape" || n == "reshape_as" || n == "flatten" || n == "ravel" || n == "contiguous" || n == "to" ||
         n == "type_as";
}

std::string op_at(const OpEvent& op) {
  std::string s = op.name.str();
  if (!op.source.empty()) s += " at " + op.source.str();
  if (!op.source_text.empty()) s += " (`" + op.source_text.str() + "`)";
  return s;
}

// The recorded ops before the one being read, by the views of storage their outputs are.
class Producers {
 public:
  explicit Producers(const Report& r) : r_(r) {}
  // An output that is exactly one of the op's inputs (a full slice, alias, detach) keeps the
  // producer it had: the walk back goes on from there.
  void add(const OpEvent& op) {
    for (const TensorInfo& t : op.outputs) {
      if (t.storage_id == 0) continue;
      bool identity = false;
      for (const TensorInfo& in : op.inputs) identity |= same_view(in, t);
      if (!identity) made_[storage_view(t)] = op.id;
    }
  }
  const OpEvent* of(const TensorInfo& t) const {
    auto it = made_.find(storage_view(t));
    return it == made_.end() ? nullptr : &r_.ops[it->second];
  }
  // The parameter or buffer with exactly this view ("" none), or else one in this storage.
  std::string model_name(const TensorInfo& t) const {
    const ModelTensor* in_storage = nullptr;
    for (const ModelTensor& m : r_.run.model_tensors) {
      if (same_view(m.tensor, t)) return describe(m);
      if (t.storage_id != 0 && m.tensor.storage_id == t.storage_id && !in_storage) in_storage = &m;
    }
    return in_storage ? "a view of " + describe(*in_storage) : std::string();
  }
  // What a tensor is, for the user: a parameter, buffer or model input, an op's output, or
  // a tensor made before the call.
  std::string origin(const TensorInfo& t) const {
    const std::string named = model_name(t);
    if (!named.empty()) return named;
    for (size_t i = 0; i < r_.run.inputs.size(); ++i)
      if (r_.run.inputs[i].tensor.storage == t.storage && t.storage != 0)
        return "model input " + std::to_string(i);
    if (const OpEvent* p = of(t)) return "the output of " + op_at(*p);
    return "a tensor made before the call";
  }
  static std::string describe(const ModelTensor& m) {
    return std::string(m.buffer ? "buffer" : "parameter") + " `" + m.name + "`";
  }

 private:
  const Report& r_;
  std::unordered_map<ViewKey, int32_t, ViewKeyHash> made_;
};

constexpr int kMaxViewHops = 32;

// A written tensor's ancestry through view ops (ops whose output shares their first input's
// storage), back to the op that made the storage, or to a tensor no recorded op made.
struct Ancestry {
  const TensorInfo* broadcast = nullptr;  // the view farthest back with zero strides
  const OpEvent* broadcast_maker = nullptr;
  const OpEvent* storage_maker = nullptr;  // the op whose output has the storage, its input not
  const TensorInfo* root = nullptr;        // the first view of the storage the walk reached
};

Ancestry ancestry(const TensorInfo& written, const Producers& producers) {
  Ancestry a;
  const TensorInfo* t = &written;
  for (int hop = 0; hop < kMaxViewHops; ++hop) {
    const OpEvent* p = producers.of(*t);
    // The view farthest back that still has zero strides: the expand (or the tensor) that
    // made them.
    if (internal_overlap(*t) == Overlap::full && (!a.broadcast || a.broadcast_maker)) {
      a.broadcast = t;
      a.broadcast_maker = p;
    }
    a.root = t;
    if (!p || p->inputs.empty()) return a;
    const TensorInfo& in = p->inputs.front();
    if (in.storage_id != t->storage_id) {
      a.storage_maker = p;
      return a;
    }
    t = &in;
  }
  return a;
}

struct Sink {
  std::map<std::string, size_t> index;  // key() -> position
  std::vector<Hazard> list;
  void add(Hazard h) {
    auto it = index.find(h.key());
    if (it != index.end()) {
      list[it->second].count++;
      return;
    }
    index.emplace(h.key(), list.size());
    list.push_back(std::move(h));
  }
};

Hazard at_op(HazardKind kind, const OpEvent& op, const TensorInfo& t) {
  Hazard h;
  h.kind = kind;
  h.op = op.id;
  h.op_name = op.name.str();
  h.module = op.module.str();
  h.where = op.source.str();
  h.code = op.source_text.str();
  h.layout = extent_text(t);
  return h;
}

// The maker of an expanded tensor a write reaches: its op, or the parameter or buffer it is.
void name_alias_maker(Hazard& h, const Ancestry& a, const Producers& producers) {
  if (a.broadcast_maker) {
    h.maker = op_at(*a.broadcast_maker);
    h.maker_where = a.broadcast_maker->source.str();
  } else {
    h.maker = producers.origin(*a.broadcast);
  }
  h.sharing = sharing_of(*a.broadcast);
  h.tensor = a.broadcast_maker ? "the output of " + a.broadcast_maker->name.str() : h.maker;
  h.detail = "each element written is shared by " + std::to_string(h.sharing) + " positions of " + h.maker +
             " (" + extent_text(*a.broadcast) + "): the write changes all of them";
  h.fixes = {"`.clone()` the expanded tensor where it is made (" + h.maker +
             "), so that each position has its own element to write"};
}

// An aliased or refused write through `written` (op's input `w`), if there is one.
bool check_alias(const OpEvent& op, size_t w, const Producers& producers, Sink& sink) {
  const TensorInfo& written = op.inputs[w];
  const Overlap self = internal_overlap(written);
  const Ancestry a = ancestry(written, producers);
  const HazardKind kind = op.failed ? HazardKind::refused_write : HazardKind::aliased_write;
  if (self == Overlap::too_hard) {
    Hazard h = at_op(kind, op, written);
    h.certainty = "could not tell";
    h.tensor = producers.origin(written);
    h.detail = "the written tensor may overlap itself (" + extent_text(written) + "): its strides do not tell";
    sink.add(std::move(h));
    return true;
  }
  if (a.broadcast) {
    Hazard h = at_op(kind, op, written);
    name_alias_maker(h, a, producers);
    if (op.failed) h.detail = "PyTorch refused the write: " + h.detail;
    sink.add(std::move(h));
    return true;
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (i == w) continue;
    const Overlap o = overlap(written, op.inputs[i]);
    if (o != Overlap::partial && o != Overlap::too_hard) continue;
    Hazard h = at_op(kind, op, written);
    if (o == Overlap::too_hard) h.certainty = "could not tell";
    h.tensor = producers.origin(written);
    h.maker = producers.origin(op.inputs[i]);
    h.detail = "the written tensor and operand " + std::to_string(i) + " (" + extent_text(op.inputs[i]) +
               ") are two views of one storage that " + (o == Overlap::partial ? "partly overlap" : "may overlap") +
               ": elements are read after they were written";
    h.fixes = {"`.clone()` the operand before the write, so that it reads the old values"};
    sink.add(std::move(h));
    return true;
  }
  return false;
}

// A write into a copy made by an op that returns views when it can: a candidate lost write,
// confirmed once the rest of the call has been read.
struct LostCandidate {
  Hazard hazard;
  uint64_t storage = 0;
  uint32_t version = TensorInfo::kNoVersion;  // the storage's version after the write
  int64_t after = 0;                           // the first op event after the write's own
};

int64_t end_of(const OpList& ops, int64_t id) {
  int64_t end = id + 1;
  while (end < static_cast<int64_t>(ops.size())) {
    int64_t p = ops[end].parent;
    while (p > id) p = ops[p].parent;
    if (p != id) break;
    ++end;
  }
  return end;
}

void check_lost(const Report& r, const OpEvent& op, size_t w, const Producers& producers,
                std::vector<LostCandidate>& candidates) {
  const TensorInfo& written = op.inputs[w];
  const Ancestry a = ancestry(written, producers);
  const OpEvent* maker = a.storage_maker;
  if (!maker || !may_copy(*maker) || maker->inputs.empty()) return;
  const TensorInfo& source = maker->inputs.front();
  LostCandidate c;
  c.hazard = at_op(HazardKind::lost_write, op, written);
  c.hazard.tensor = producers.origin(source);
  c.hazard.maker = op_at(*maker);
  c.hazard.maker_where = maker->source.str();
  c.hazard.detail = maker->name.str() + " copied " + c.hazard.tensor + " (" + source.label().str() + ", " +
                    extent_text(source) + ": no view of it has the shape asked for); the write went into that copy, " +
                    "which nothing read after it, so " + c.hazard.tensor + " keeps its old values";
  c.hazard.fixes = {"`.contiguous()` on " + c.hazard.tensor + " where it is made, so that " + maker->name.str() +
                        " returns a view and the write reaches it",
                    "or `view` instead of `" + std::string(op_short_name(*maker)) + "` at " +
                        (c.hazard.maker_where.empty() ? "its line" : c.hazard.maker_where) +
                        ": it raises where a copy would be written instead"};
  c.storage = written.storage_id;
  for (const TensorInfo& o : op.outputs)
    if (o.storage_id == c.storage) c.version = o.version;
  if (c.version == TensorInfo::kNoVersion && written.version != TensorInfo::kNoVersion) c.version = written.version + 1;
  c.after = end_of(r.ops, op.id);
  candidates.push_back(std::move(c));
}

// A candidate's storage read by a later op (at its version or after), or returned: not lost.
void confirm_lost(const Report& r, const std::vector<TensorInfo>& outputs, std::vector<LostCandidate>& candidates,
                  Sink& sink) {
  if (candidates.empty()) return;
  std::unordered_map<uint64_t, std::vector<size_t>> by_storage;
  for (size_t i = 0; i < candidates.size(); ++i) by_storage[candidates[i].storage].push_back(i);
  std::vector<bool> read(candidates.size(), false);
  auto reads = [&](const TensorInfo& t, int64_t at) {
    auto it = by_storage.find(t.storage_id);
    if (it == by_storage.end()) return;
    for (size_t i : it->second) {
      const LostCandidate& c = candidates[i];
      const bool versions = c.version != TensorInfo::kNoVersion && t.version != TensorInfo::kNoVersion;
      if (at >= c.after && (!versions || t.version >= c.version)) read[i] = true;
    }
  };
  for (int64_t id = candidates.front().after; id < static_cast<int64_t>(r.ops.size()); ++id) {
    const OpEvent& op = r.ops[id];
    if (!outermost(r.ops, op)) continue;
    const std::vector<size_t> written = written_inputs(op);
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (std::find(written.begin(), written.end(), i) == written.end()) reads(op.inputs[i], id);
  }
  for (const TensorInfo& t : outputs) reads(t, INT64_MAX);
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!read[i]) sink.add(std::move(candidates[i].hazard));
}

void check_failed_view(const Report& r, const OpEvent& op, const Producers& producers, Sink& sink) {
  const TensorInfo& in = op.inputs.front();
  Hazard h = at_op(HazardKind::failed_view, op, in);
  h.tensor = producers.origin(in);
  h.detail = op.name.str() + " raised on a " + in.label().str() + " input (" + extent_text(in) +
             "): no view of its elements has the shape asked for";
  h.fixes = {"`.reshape(...)` instead of `." + std::string(op_short_name(op)) + "(...)` at " +
             (h.where.empty() ? "its line" : h.where)};
  if (const LayoutCause* c = cause_paid_by(r, op.id)) {
    h.maker = birthplace_text(*c);
    h.maker_where = c->where;
    h.detail += "; its layout: " + h.maker;
    if (c->kind == BirthKind::op && !backward_function(c->op_name).empty())
      h.fixes.push_back("or `.contiguous()` on the gradient before the view: gradients have no layout guarantee");
    else if (c->kind == BirthKind::op)
      h.fixes.push_back("or `.contiguous()` on the result of " + c->op_name + (c->where.empty() ? "" : " at " + c->where));
  }
  sink.add(std::move(h));
}

// Parameters and buffers not dense, or sharing storage with another in another extent.
void check_model_tensors(const Report& r, Sink& sink) {
  const std::vector<ModelTensor>& all = r.run.model_tensors;
  std::unordered_map<uint64_t, std::vector<size_t>> by_storage;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].tensor.storage_id != 0) by_storage[all[i].tensor.storage_id].push_back(i);
  for (size_t i = 0; i < all.size(); ++i) {
    const ModelTensor& m = all[i];
    const LayoutClass cls = m.tensor.layout().cls;
    const bool dense = is_dense(m.tensor) || cls == LayoutClass::unknown || m.tensor.numel() <= 1;
    std::string alias;
    if (m.tensor.storage_id != 0)
      for (size_t j : by_storage[m.tensor.storage_id])
        if (j != i && !same_view(all[j].tensor, m.tensor)) {
          alias = Producers::describe(all[j]);
          break;
        }
    if (dense && alias.empty()) continue;
    Hazard h;
    h.kind = HazardKind::model_tensor;
    h.tensor = Producers::describe(m);
    h.layout = extent_text(m.tensor) + " (" + m.tensor.label().str() + ")";
    h.maker = alias;
    h.detail = !dense ? h.tensor + " is " + m.tensor.label().str() + ", not dense" +
                            (cls == LayoutClass::broadcast ? ": " + std::to_string(sharing_of(m.tensor)) +
                                                                 " positions share each element"
                                                           : std::string())
                      : h.tensor + " shares its storage with " + alias + " in another extent";
    if (!dense && !alias.empty()) h.detail += ", and shares its storage with " + alias;
    h.fixes = {"register it as a tensor of its own: `.clone()` (or `.contiguous()`) where it is made"};
    sink.add(std::move(h));
  }
}

}  // namespace

int64_t written_after(const Report& r, uint64_t storage_id, int64_t after) {
  if (storage_id == 0) return -1;
  for (int64_t id = std::max<int64_t>(after + 1, 0); id < static_cast<int64_t>(r.ops.size()); ++id) {
    const OpEvent& op = r.ops[id];
    if (!outermost(r.ops, op)) continue;
    for (size_t w : written_inputs(op))
      if (op.inputs[w].storage_id == storage_id) return id;
  }
  return -1;
}

std::vector<Hazard> find_hazards(const Report& r, const std::vector<TensorInfo>& outputs) {
  Sink sink;
  check_model_tensors(r, sink);
  Producers producers(r);
  std::vector<LostCandidate> lost;
  for (const OpEvent& op : r.ops) {
    if (!outermost(r.ops, op)) continue;
    if (op.failed && !op.inputs.empty() && op_short_name(op).rfind("view", 0) == 0)
      check_failed_view(r, op, producers, sink);
    // The writes of the user's code: top-level ops (autograd's own, inside a backward
    // function, accumulate gradients and are not checked).
    if (op.parent < 0)
      for (size_t w : written_inputs(op))
        if (!check_alias(op, w, producers, sink) && !op.failed) check_lost(r, op, w, producers, lost);
    producers.add(op);
  }
  confirm_lost(r, outputs, lost, sink);
  if (std::optional<Hazard> h = stride_assertion_hazard(r)) sink.add(std::move(*h));
  for (Hazard& h : sink.list)
    for (const std::string& a : r.run.accepted) h.accepted |= accept_matches(a, h.where) || accept_matches(a, h.maker_where);
  return std::move(sink.list);
}

}  // namespace layoutprof

namespace layoutprof {

std::string hazard_kind_words(HazardKind k) {
  switch (k) {
    case HazardKind::aliased_write: return "aliased write";
    case HazardKind::lost_write: return "lost write";
    case HazardKind::failed_view: return "failed view";
    case HazardKind::refused_write: return "write refused by PyTorch";
    case HazardKind::model_tensor: return "parameter or buffer";
    case HazardKind::stride_assertion: return "compiled code's stride check failed";
  }
  return "hazard";
}

std::string hazard_text(const Hazard& h) {
  std::string s = hazard_kind_words(h.kind);
  if (h.certainty != "yes") s += " (" + h.certainty + ")";
  if (h.kind == HazardKind::model_tensor) return s + ": " + h.detail;
  s += " at " + (h.where.empty() ? "an unknown line" : h.where);
  if (!h.code.empty()) s += " (`" + h.code + "`)";
  s += ", " + h.op_name;
  if (h.count > 1) s += " x" + std::to_string(h.count);
  return s + ": " + h.detail;
}

}  // namespace layoutprof
