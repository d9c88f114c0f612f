#include "analysis/backend_conversions.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "analysis/kernel_names.h"
#include "analysis/mixed_formats.h"
#include "analysis/saturating.h"

namespace layoutprof {

namespace {

// "8x64x56x56" -> {8, 64, 56, 56}; empty when any part is not a number.
std::vector<int64_t> numbers_by_x(const std::string& s) {
  std::vector<int64_t> dims;
  size_t i = 0;
  while (i < s.size()) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return {};
    int64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (v > (INT64_MAX - 9) / 10) return {};
      v = v * 10 + (s[i++] - '0');
    }
    dims.push_back(v);
    if (i < s.size() && s[i++] != 'x') return {};
  }
  return dims;
}

// The problem's keys and values: "mb8_g2ic64oc64_ih56..." -> {mb: 8, g: 2, ic: 64, ...}.
std::map<std::string, int64_t> problem_keys(const std::string& problem) {
  std::map<std::string, int64_t> keys;
  size_t i = 0;
  while (i < problem.size()) {
    std::string key;
    while (i < problem.size() && std::isalpha(static_cast<unsigned char>(problem[i]))) key += problem[i++];
    int64_t v = 0;
    bool digits = false;
    while (i < problem.size() && std::isdigit(static_cast<unsigned char>(problem[i]))) {
      digits = true;
      if (v < INT64_MAX / 10) v = v * 10 + (problem[i] - '0');
      ++i;
    }
    if (!key.empty() && digits) keys[key] = v;
    if (!digits && i < problem.size()) ++i;  // '_' and anything unexpected
  }
  return keys;
}

int element_bytes(const std::string& dtype) {
  if (dtype == "f64") return 8;
  if (dtype == "f32" || dtype == "s32") return 4;
  if (dtype == "f16" || dtype == "bf16") return 2;
  if (dtype == "s8" || dtype == "u8" || dtype == "f8_e5m2" || dtype == "f8_e4m3" || dtype == "boolean") return 1;
  return 0;  // unknown: no bytes claimed
}

const BackendArg* arg_named(const BackendPrimitive& p, const char* name) {
  for (const BackendArg& a : p.args)
    if (a.arg == name) return &a;
  return nullptr;
}

bool is_convolution(const BackendPrimitive& p) { return p.kind == "convolution" || p.kind == "deconvolution"; }

// A reorder's role among the convolutions of its op: by which of their dims it has; `other`
// when none has them, or when they fit two roles (never a guess).
ReorderRole role_of(const std::vector<int64_t>& dims, const std::vector<ConvDims>& convs) {
  bool activation = false, weight = false;
  for (const ConvDims& c : convs) {
    activation = activation || dims == c.src || dims == c.dst;
    weight = weight || dims == c.weights || (!c.weights_swapped.empty() && dims == c.weights_swapped);
  }
  if (activation == weight) return ReorderRole::other;
  return activation ? ReorderRole::activation : ReorderRole::weight;
}

// The shown call's top-level ops on forward()'s thread, in order: what the pass's top_op indexes.
std::vector<const OpEvent*> main_top_ops(const OpList& ops) {
  std::vector<const OpEvent*> top;
  for (const OpEvent& e : ops)
    if (e.parent < 0 && e.thread == 0) top.push_back(&e);
  return top;
}

void add(ReorderTotals& t, const BackendCall& c) {
  ++t.count;
  t.bytes = saturating_add(t.bytes, c.bytes);
  if (c.p.ms > 0) t.ms += c.p.ms;
}

}  // namespace

std::vector<int64_t> reorder_dims(const std::string& problem) { return numbers_by_x(problem); }

ConvDims conv_dims(const std::string& problem) {
  std::map<std::string, int64_t> k = problem_keys(problem);
  ConvDims d;
  if (!k.count("mb") || !k.count("ic") || !k.count("oc") || !k.count("iw") || !k.count("ow") || !k.count("kw"))
    return d;
  const int64_t g = k.count("g") ? std::max<int64_t>(k["g"], 1) : 1;
  std::vector<int64_t> in, out, kernel;
  for (const char* axis : {"d", "h", "w"}) {
    const std::string a(axis);
    if (!k.count("i" + a) || !k.count("o" + a) || !k.count("k" + a)) continue;
    in.push_back(k["i" + a]);
    out.push_back(k["o" + a]);
    kernel.push_back(k["k" + a]);
  }
  d.src = {k["mb"], k["ic"]};
  d.src.insert(d.src.end(), in.begin(), in.end());
  d.dst = {k["mb"], k["oc"]};
  d.dst.insert(d.dst.end(), out.begin(), out.end());
  d.weights = g > 1 ? std::vector<int64_t>{g, k["oc"] / g, k["ic"] / g} : std::vector<int64_t>{k["oc"], k["ic"]};
  d.weights.insert(d.weights.end(), kernel.begin(), kernel.end());
  d.weights_swapped = g > 1 ? std::vector<int64_t>{g, k["ic"] / g, k["oc"] / g} : std::vector<int64_t>{k["ic"], k["oc"]};
  d.weights_swapped.insert(d.weights_swapped.end(), kernel.begin(), kernel.end());
  return d;
}

BackendRun attribute_backend(const BackendLog& log, const OpList& ops) {
  BackendRun b;
  b.state = log.state;
  b.reason = log.reason;
  b.library = log.library;
  b.lines_unparsed = log.lines_unparsed;
  b.call_ns = log.call_ns;
  if (!b.ran()) return b;
  const std::vector<const OpEvent*> top = main_top_ops(ops);
  b.matched = static_cast<int64_t>(top.size()) == log.top_ops;
  for (const BackendPrimitive& p : log.primitives)
    if (p.top_op >= 0 && b.matched && (p.top_op >= static_cast<int64_t>(top.size()) || top[p.top_op]->name.str() != p.top_name))
      b.matched = false;
  if (!b.matched)
    b.reason = "the pass's call ran other top-level ops than the shown call (" + std::to_string(log.top_ops) + " against " +
               std::to_string(top.size()) + "): its primitives are charged to no op";
  // The convolutions of each op, for the reorders' roles.
  std::map<int64_t, std::vector<ConvDims>> convs;
  for (const BackendPrimitive& p : log.primitives)
    if (p.top_op >= 0 && is_convolution(p)) convs[p.top_op].push_back(conv_dims(p.problem));
  for (const BackendPrimitive& p : log.primitives) {
    BackendCall c;
    c.p = p;
    if (b.matched && p.top_op >= 0) c.op = top[p.top_op]->id;
    if (p.kind == "reorder") {
      c.dims = reorder_dims(p.problem);
      const BackendArg* dst = arg_named(p, "dst");
      int64_t numel = c.dims.empty() ? 0 : 1;
      for (int64_t d : c.dims) numel = saturating_mul(numel, d);
      c.bytes = saturating_mul(numel, dst ? element_bytes(dst->dtype) : 0);
      auto it = convs.find(p.top_op);
      c.role = p.top_op < 0 || it == convs.end() ? ReorderRole::other : role_of(c.dims, it->second);
    }
    b.calls.push_back(std::move(c));
  }
  return b;
}

BackendSummary backend_summary(const BackendRun& b) {
  BackendSummary s;
  std::map<std::tuple<int, std::string, std::string>, ReorderTotals> rows;
  for (const BackendCall& c : b.calls) {
    ++s.primitives;
    if (c.p.ms > 0) s.primitives_ms += c.p.ms;
    if (c.op < 0) ++s.unattributed;
    if (c.role == ReorderRole::none) continue;
    add(c.role == ReorderRole::activation ? s.activation : c.role == ReorderRole::weight ? s.weight : s.other, c);
    add(rows[{static_cast<int>(c.role), c.from(), c.to()}], c);
  }
  for (const auto& [key, totals] : rows)
    s.conversions.push_back({static_cast<ReorderRole>(std::get<0>(key)), std::get<1>(key), std::get<2>(key), totals});
  std::stable_sort(s.conversions.begin(), s.conversions.end(), [](const ConversionRow& a, const ConversionRow& b) {
    return std::tie(a.role, b.totals.count) < std::tie(b.role, a.totals.count);
  });
  return s;
}

SeenConvolutions seen_in_ops(const BackendRun& b, const std::vector<int64_t>& ops) {
  SeenConvolutions seen;
  if (!b.ran()) return seen;
  std::map<int64_t, std::pair<int64_t, int64_t>> by_op;  // op -> (convolutions, activation reorders)
  for (const BackendCall& c : b.calls) {
    if (c.op < 0) continue;
    if (is_convolution(c.p)) ++by_op[c.op].first;
    if (c.role == ReorderRole::activation) ++by_op[c.op].second;
  }
  for (int64_t op : ops) {
    auto it = by_op.find(op);
    if (it == by_op.end() || it->second.first == 0) continue;
    ++(it->second.second > 0 ? seen.reordered : seen.direct);
    seen.activation_reorders += it->second.second;
  }
  return seen;
}

GpuLayoutKernels gpu_layout_kernels(const OpList& ops) {
  GpuLayoutKernels g;
  for (const OpEvent& op : ops) {
    GpuLayoutOp entry;
    entry.op = op.id;
    entry.gpu_ns = op.gpu_ns;
    for (const Str& name : op.kernels) {
      const KernelLayout k = classify_kernel_name(name.str());
      if (k.conversion) {
        const std::string base = unqualified_kernel_name(name.str());
        if (std::find(entry.conversions.begin(), entry.conversions.end(), base) == entry.conversions.end())
          entry.conversions.push_back(base);
        continue;
      }
      const OpEvent& top = op.parent < 0 ? op : ops[op.parent];
      if (!is_convolution(op) && !is_convolution(top)) continue;
      if (k.computes_in == "nhwc") ++g.nhwc;
      else if (k.computes_in == "nchw") ++g.nchw;
      else if (g.unknown.size() < 20 && std::find(g.unknown.begin(), g.unknown.end(), name.str()) == g.unknown.end())
        g.unknown.push_back(name.str());
    }
    if (!entry.conversions.empty()) g.ops.push_back(std::move(entry));
  }
  return g;
}

std::string onednn_format_text(const std::string& tag) {
  if (tag == "abcd") return "abcd (NCHW)";
  if (tag == "acdb") return "acdb (NHWC)";
  if (tag == "abcde") return "abcde (NCDHW)";
  if (tag == "acdeb") return "acdeb (NDHWC)";
  if (tag.empty()) return "?";
  for (char ch : tag)
    if (std::isdigit(static_cast<unsigned char>(ch))) return tag + " (blocked)";
  return tag;
}

}  // namespace layoutprof
