#include "analysis/verdict.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/analysis.h"
#include "analysis/cause_text.h"
#include "analysis/compiled_code.h"
#include "analysis/mixed_formats.h"
#include "support/format.h"

namespace layoutprof {

const char* cause_kind_name(CauseKind k) {
  switch (k) {
    case CauseKind::explicit_request: return "explicit_request";
    case CauseKind::format_mismatch: return "format_mismatch";
    case CauseKind::view_copy: return "view_copy";
    case CauseKind::input_copy: return "input_copy";
    case CauseKind::unknown_origin: return "unknown_origin";
  }
  return "unknown_origin";
}

std::string share_text(int64_t part, int64_t total) {
  if (total <= 0 || part < 0) return "";
  return fixed(100.0 * static_cast<double>(part) / static_cast<double>(total), 1) + "%";
}

std::string list_text(const std::vector<std::string>& items, size_t shown) {
  std::string s;
  const size_t n = std::min(items.size(), shown);
  for (size_t i = 0; i < n; ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  if (items.size() > n) s += " and " + std::to_string(items.size() - n) + " more";
  return s;
}

namespace {

// The op event with this id: by index in a report read whole, by search in one read for the
// gate (top-level ops only, in id order); nullptr when the report does not hold it.
const OpEvent* find_op(const Report& r, int64_t id) {
  if (id < 0) return nullptr;
  if (!r.top_level_only) return id < static_cast<int64_t>(r.ops.size()) ? &r.ops[id] : nullptr;
  auto it = std::lower_bound(r.ops.begin(), r.ops.end(), id, [](const OpEvent& op, int64_t v) { return op.id < v; });
  return it != r.ops.end() && it->id == id ? &*it : nullptr;
}

bool is_memory_format(const TensorInfo& t) {
  const LayoutClass c = t.layout().cls;
  const size_t rank = t.sizes().size();
  return (rank == 4 || rank == 5) &&
         (c == LayoutClass::contiguous || c == LayoutClass::channels_last || c == LayoutClass::channels_last_3d);
}

// "aten::transpose" -> "transpose".
std::string short_name(const std::string& op_name) {
  const size_t colons = op_name.rfind("::");
  return colons == std::string::npos ? op_name : op_name.substr(colons + 2);
}

// contiguous 4-D data is what PyTorch calls NCHW.
std::string format_text(const std::string& label, size_t rank) {
  if (label != "contiguous") return label;
  return rank == 5 ? "NCDHW (contiguous)" : "NCHW (contiguous)";
}

std::string torch_format(const std::string& label) {
  return label == "contiguous" ? "torch.contiguous_format" : "torch." + label;
}

void add_distinct(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// The split point at each culprit: its `before` is the layout of the data flowing in, and
// `mixed_formats` says its inputs mixed NCHW and channels_last.
std::map<int64_t, const SplitPoint*> split_by_op(const Report& r) {
  std::map<int64_t, const SplitPoint*> by_op;
  for (const SplitPoint& sp : r.split_points) by_op.emplace(sp.op, &sp);
  return by_op;
}

// Per copy op: the top-level ops whose split points count it. Besides its culprit's, that is
// the top-level op around its origin (analysis's find_split_points): read so from the split
// points, a report read for the gate (without nested ops) names the same origin as one read whole.
std::map<int64_t, std::vector<int64_t>> split_points_by_copy(const Report& r) {
  std::map<int64_t, std::vector<int64_t>> by_copy;
  for (const SplitPoint& sp : r.split_points)
    for (int64_t op : sp.copy_ops) by_copy[op].push_back(sp.op);
  return by_copy;
}

// The top-level op the model called that made a layout copy's source, when that is not the
// culprit itself; nullptr otherwise.
const OpEvent* origin_of(const Report& r, const std::map<int64_t, std::vector<int64_t>>& by_copy, const CopyRecord& c) {
  if (c.origin < 0) return nullptr;
  auto it = by_copy.find(c.op);
  if (it == by_copy.end()) return nullptr;
  for (int64_t op : it->second)
    if (op != c.culprit) return find_op(r, op);
  return nullptr;
}

bool has_kind(const SplitPoint* sp, const char* kind) {
  return sp && std::find(sp->kinds.begin(), sp->kinds.end(), kind) != sp->kinds.end();
}

// The cause of one layout copy, by the first rule that fits; `key` is what groups copies.
using CauseKey = std::tuple<int, bool, std::string, std::string, int, std::string, std::string>;

CopyCause classify(const Report& r, const CopyRecord& c, const SplitPoint* sp, const OpEvent* culprit,
                   const OpEvent* origin, CauseKey* key) {
  CopyCause k;
  k.cls = c.cls;
  k.from = c.src.label();
  k.to = c.dst.label();
  k.origin_input = c.origin_input;
  if (origin) k.origin = origin->name;
  const std::string reader = culprit ? culprit->name.str() : std::string("?");
  if (c.cls == CopyClass::explicit_layout) {
    k.kind = CauseKind::explicit_request;
  } else if (is_memory_format(c.src) && is_memory_format(c.dst) && has_kind(sp, "mixed_formats")) {
    k.kind = CauseKind::format_mismatch;
    k.data_converted = sp->before == c.src.label();
    *key = {static_cast<int>(k.kind), k.data_converted, "", "", -1, k.from, k.to};
    return k;
  } else if (c.origin >= 0) {  // named, or made inside the culprit itself
    k.kind = CauseKind::view_copy;
    k.library = culprit && (is_ddp_reducer(culprit->name.str()) ||
                            (!origin && (reads_only_contiguous(*culprit) ||
                                         (is_compiled_code(culprit->name) && made_inside_callee(r, c)))));
  } else if (c.origin_input >= 0) {
    k.kind = CauseKind::input_copy;
  } else {
    k.kind = CauseKind::unknown_origin;
  }
  const std::string from_class = layout_class_name(c.src.layout().cls);
  *key = {static_cast<int>(k.kind), k.library, reader, k.origin, k.origin_input,
          k.kind == CauseKind::unknown_origin ? from_class : "", ""};
  return k;
}

std::string readers_text(const CopyCause& k) { return list_text(k.readers, 2); }  // "aten::reshape and aten::flatten"

// The sentence and the fix of a group, from its rule (the split points' suggestions say the
// same of one place).
void describe(CopyCause& k, size_t rank) {
  const std::string readers = readers_text(k);
  const bool many = k.readers.size() > 1;
  const std::string needs = many ? " need" : " needs", copies = many ? " copy" : " copies";
  const std::string origin = short_name(k.origin);
  switch (k.kind) {
    case CauseKind::format_mismatch:
      if (!k.data_converted) {
        k.what = readers + ": " + k.to + " data meets " + format_text(k.from, rank) + " weights, copied to " + k.to +
                 " on every call";
        k.fix = k.to == "contiguous"
                    ? "feed the model " + k.from + " input (x.contiguous(memory_format=" + torch_format(k.from) +
                          ")), or convert the model back: model.to(memory_format=torch.contiguous_format)"
                    : "convert the model once: model.to(memory_format=" + torch_format(k.to) + ")";
      } else {
        k.what = readers + ": " + format_text(k.from, rank) + " data meets " + k.to + " weights, copied to " + k.to +
                 " on every call";
        k.fix = "hand the model " + k.to + " input (x.contiguous(memory_format=" + torch_format(k.to) +
                ")), or keep the model in the data's format";
      }
      return;
    case CauseKind::view_copy:
      if (k.library && !k.readers.empty() && is_ddp_reducer(k.readers.front())) {
        k.what = "DDP's reducer copies between a gradient bucket and a .grad laid out otherwise (" + k.from +
                 ") on every step";
        k.fix = "none here: see Gradient warnings (the parameter's strides changed since DDP built its buckets, or "
                "a .grad of its old layout is kept)";
        return;
      }
      if (k.library) {  // a view of its own dense inputs: the library's own copy
        k.what = readers + (many ? " copy" : " copies") + " a " + k.from + " view " + (many ? "they make" : "it makes") +
                 " of " + (many ? "their" : "its") + " own dense inputs on every call: the library's own copy";
        k.fix = "none in the calling code: " + std::string(many ? "their" : "its") +
                " inputs are already dense (no cause by birthplace is charged)";
        return;
      }
      if (k.origin.empty()) {  // the culprit's own view of its input
        k.what = readers + needs + " dense data: the " + k.from + " view made inside " + (many ? "them" : "it") +
                 " is copied on every call";
        k.fix = "keep the data these ops read dense, so that their own views need no copy";
        return;
      }
      k.what = readers + needs + " dense data: the " + k.from + " tensor that " + k.origin + " makes is copied on every call";
      if (!is_compiled_code(k.origin) && !backward_function(k.origin).empty()) {  // a gradient: no place to change
        k.fix = "where the gradient is read (a custom Function's backward, or a hook on the forward's result): "
                "gradients have no layout guarantee; see the causes by birthplace and Gradient layouts";
        return;
      }
      k.fix = is_compiled_code(k.origin) ? compiled_layout_fix(origin, k.from)
              : "make it contiguous once where " + k.origin + " makes it (`.contiguous()` on the result of the " + origin +
                    "), so that the ops after it read dense data";
      return;
    case CauseKind::input_copy:
      k.what = readers + needs + " dense data: model input " + std::to_string(k.origin_input) + ", which arrives " +
               k.from + ", is copied on every call";
      // The copy's own destination is the format the reader wants: a channels_last model's
      // convolution copies an NCHW input to channels_last, not to contiguous.
      k.fix = k.to == "channels_last" || k.to == "channels_last_3d"
                  ? "hand the model a " + k.to + " input (x.contiguous(memory_format=torch." + k.to + ") where it is made)"
                  : "hand the model a contiguous input (x.contiguous() where it is made)";
      return;
    case CauseKind::explicit_request:
      k.what = readers + ", called by the model," + copies + " " +
               (!k.origin.empty() ? "the " + k.from + " tensor that " + k.origin + " makes"
                : k.origin_input >= 0 ? "model input " + std::to_string(k.origin_input) + " (" + k.from + ")"
                                      : "a " + k.from + " tensor");
      k.fix = "keep it only if the ops after it need dense data; better, avoid the layout change" +
              (origin.empty() ? std::string() : " (the " + origin + ")") + " that makes it necessary";
      return;
    case CauseKind::unknown_origin:
      k.what = readers + copies + " a " + k.from + " tensor that no recorded op made";
      k.fix = std::any_of(k.readers.begin(), k.readers.end(), is_compiled_code)
                  ? compiled_layout_fix(readers, k.from)
                  : "keep the data these ops read dense, so that they need no copy";
      return;
  }
}

// One voice: a group that can only say "a tensor that no recorded op made", all of whose copies
// one cause by birthplace pays for at a place or tensor it names, says what that cause says; a
// group of format conversions all paid by one cause born at an op or tensor takes its fix (a
// concatenation's NCHW result inside the model is not the model's input to hand over in
// channels_last); one born at the model's input keeps its own, which agrees. A group copying a
// gradient a backward function made (AccumulateGrad's copy into the parameter's layout) says
// what the cause paying for it says: the engine's record is no place to make anything dense.
void tell_groups_as_their_causes(std::vector<CopyCause>& groups, const Report& r) {
  std::map<int64_t, int64_t> culprit;  // copy op -> culprit
  for (const CopyRecord& c : r.copies) culprit[c.op] = c.culprit;
  for (CopyCause& k : groups) {
    const bool unknown = k.kind == CauseKind::unknown_origin;
    // A gradient a backward function made: "its result" is no place to change.
    const std::string gradient_of =
        k.kind == CauseKind::view_copy && !k.library && !is_compiled_code(k.origin) ? backward_function(k.origin) : "";
    const bool conversion = k.kind == CauseKind::format_mismatch;
    if ((!unknown && !conversion && gradient_of.empty()) || k.copy_ops.empty()) continue;
    for (const LayoutCause& c : r.causes) {
      if (c.accepted || c.fixes.empty() || (c.kind == BirthKind::unrecorded && c.input_text.empty())) continue;
      const bool pays_all = std::all_of(k.copy_ops.begin(), k.copy_ops.end(), [&](int64_t op) {
        auto it = culprit.find(op);
        return it != culprit.end() && std::find(c.payers.begin(), c.payers.end(), it->second) != c.payers.end();
      });
      if (!pays_all) continue;
      if (conversion && c.kind == BirthKind::model_input) break;  // the group's own fix agrees: the input
      k.fix = c.fixes.front();
      if (conversion) break;
      const bool many = k.readers.size() > 1;
      k.what = readers_text(k) + (many ? " copy " : " copies ") +
               (c.kind == BirthKind::unrecorded ? "the model's " + c.input_text.substr(0, c.input_text.find(" (sizes"))
                : !gradient_of.empty()          ? "the gradient " + gradient_of + " makes"
                                                : "a tensor") +
               ", " + k.from + " (cause by birthplace: " + birthplace_text(c) + ")";
      break;
    }
  }
}

}  // namespace

std::vector<CopyCause> group_copy_causes(const Report& r) {
  const auto splits = split_by_op(r);
  const auto by_copy = split_points_by_copy(r);
  std::map<CauseKey, size_t> index;
  std::vector<CopyCause> causes;
  std::vector<size_t> rank;  // per cause: the rank of its first copy's source
  for (const CopyRecord& c : r.copies) {
    if (!is_layout_copy(c.cls)) continue;
    const OpEvent* culprit = find_op(r, c.culprit);
    auto sp = splits.find(c.culprit);
    CauseKey key;
    const OpEvent* origin = origin_of(r, by_copy, c);
    CopyCause one = classify(r, c, sp == splits.end() ? nullptr : sp->second, culprit, origin, &key);
    auto [it, added] = index.emplace(key, causes.size());
    if (added) {
      causes.push_back(std::move(one));
      rank.push_back(c.src.sizes().size());
    }
    CopyCause& k = causes[it->second];
    k.copies++;
    k.bytes += c.bytes;
    k.copy_ops.push_back(c.op);
    if (const OpEvent* copy = find_op(r, c.op)) k.time_ns += std::max<int64_t>(copy->duration_ns, 0);
    if (culprit) {
      add_distinct(k.readers, culprit->name);
      add_distinct(k.modules, culprit->module);
      if (!culprit->source.empty()) add_distinct(k.sources, culprit->source);
    }
    if (origin && !origin->source.empty()) add_distinct(k.origin_sources, origin->source);
  }
  for (size_t i = 0; i < causes.size(); ++i) describe(causes[i], rank[i]);
  std::stable_sort(causes.begin(), causes.end(), [](const CopyCause& a, const CopyCause& b) {
    return std::tie(b.bytes, b.copies) < std::tie(a.bytes, a.copies);
  });
  return causes;
}

Verdict verdict_of(const Report& r) {
  Verdict v;
  v.copies = r.summary.copies;
  v.bytes = r.summary.copy_bytes;
  v.wall_ns = r.summary.wall_ns;
  v.medians = r.run.calls_identical && r.run.calls_recorded > 1;
  for (const CopyRecord& c : r.copies)
    if (c.cls == CopyClass::implicit_layout)
      if (const OpEvent* copy = find_op(r, c.op)) v.implicit_ns += std::max<int64_t>(copy->duration_ns, 0);
  if (r.summary.gpu.traced) {
    v.copy_gpu_ns = r.summary.gpu.copy_gpu_ns;
    v.gpu_ns = r.summary.gpu.gpu_ns;
  }
  v.causes = group_copy_causes(r);
  tell_groups_as_their_causes(v.causes, r);
  for (const LayoutCause& c : r.causes) {
    if (c.accepted) continue;
    v.mixed_ops += c.mixed_ops;
    v.mixed_without_copy += c.mixed_without_copy;
  }
  const int64_t forward_end = r.backward_from >= 0 ? r.backward_from : static_cast<int64_t>(r.ops.size());
  const MemoryFormat model_format = r.top_level_only ? MemoryFormat::none : model_weight_format(r.ops, forward_end);
  for (const OpEvent& op : r.ops) {
    if (op.parent >= 0 || op.id >= forward_end || !is_convolution(op)) continue;
    v.convolutions++;
    v.mixed_convolutions += !r.top_level_only && mixed_format(op, model_format).mixed;
  }
  return v;
}

std::vector<SplitGroup> group_split_points(const Report& r) {
  using Key = std::tuple<std::vector<std::string>, std::string, std::string, std::string>;
  std::map<Key, size_t> index;
  std::vector<SplitGroup> groups;
  for (size_t i = 0; i < r.split_points.size(); ++i) {
    const SplitPoint& sp = r.split_points[i];
    Key key{{sp.kinds.begin(), sp.kinds.end()}, sp.before, sp.after, sp.suggestion};
    auto [it, added] = index.emplace(std::move(key), groups.size());
    if (added) groups.emplace_back();
    SplitGroup& g = groups[it->second];
    g.points.push_back(i);
    g.copies += sp.copies;
    g.copy_bytes += sp.copy_bytes;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const SplitGroup& a, const SplitGroup& b) {
    return std::tie(b.copy_bytes, b.copies) < std::tie(a.copy_bytes, a.copies);
  });
  return groups;
}

}  // namespace layoutprof
