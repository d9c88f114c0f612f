#include "report/backend_text.h"

#include <algorithm>
#include <map>

#include "analysis/backend_conversions.h"
#include "analysis/mixed_formats.h"
#include "analysis/verdict.h"
#include "support/format.h"

namespace layoutprof {

namespace {

std::string count_text(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string ms_text(double v) { return fixed(v, 3); }

// "19 abcd (NCHW) -> aBcd16b (blocked), 20 aBcd16b (blocked) -> abcd (NCHW)": a role's conversions.
std::string conversions_text(const BackendSummary& s, ReorderRole role, size_t shown) {
  std::vector<std::string> items;
  for (const ConversionRow& row : s.conversions)
    if (row.role == role)
      items.push_back(std::to_string(row.totals.count) + " " + onednn_format_text(row.from) + " -> " +
                      onednn_format_text(row.to));
  return list_text(items, shown);
}

std::string forward_share(const Report& r, double ms) {
  const std::string share = share_text(static_cast<int64_t>(ms * 1e6), r.summary.wall_ns);
  return share.empty() ? "" : ", " + share + " of the " + std::string(r.run.backward ? "training step" : "forward");
}

// "39 activation reorders inside oneDNN's ops a call (...), 144.5 MB, 12.3 ms by oneDNN's clock (3.8% of the forward)"
std::string role_text(const Report& r, const BackendSummary& s, ReorderRole role) {
  const ReorderTotals& t = role == ReorderRole::activation ? s.activation : s.weight;
  const std::string what = role == ReorderRole::activation ? "activation reorder" : "weight reorder";
  return count_text(t.count, what, what + "s") + " inside oneDNN's ops a call (" + conversions_text(s, role, 3) +
         "), " + mb(t.bytes) + " MB, " + ms_text(t.ms) + " ms by oneDNN's clock" + forward_share(r, t.ms) +
         " (measured in the backend pass)";
}

struct OpReorders {
  int64_t activation = 0, weight = 0, other = 0, compute = 0;
  double ms = 0;
  std::vector<std::string> conversions;  // "weight abcd -> Acdb16a"
};

std::map<int64_t, OpReorders> reorders_by_op(const BackendRun& b) {
  std::map<int64_t, OpReorders> by_op;
  for (const BackendCall& c : b.calls) {
    if (c.op < 0) continue;
    OpReorders& o = by_op[c.op];
    if (c.p.ms > 0 && c.role != ReorderRole::none) o.ms += c.p.ms;
    if (c.role == ReorderRole::none) {
      ++o.compute;
      continue;
    }
    (c.role == ReorderRole::activation ? o.activation : c.role == ReorderRole::weight ? o.weight : o.other) += 1;
    const std::string item = std::string(reorder_role_name(c.role)) + " " + c.from() + " -> " + c.to();
    if (std::find(o.conversions.begin(), o.conversions.end(), item) == o.conversions.end()) o.conversions.push_back(item);
  }
  return by_op;
}

void write_op_line(std::ostream& out, const Report& r, size_t rank, int64_t id, const OpReorders& o) {
  const OpEvent& op = r.ops[id];
  out << "  " << rank << ". " << (op.module.empty() ? "(top)" : op.module.str()) << " " << op.name.str();
  if (!op.source.empty()) out << " at " << op.source.str();
  std::string code = op.source_text.str();
  code = code.substr(0, code.find("  (innermost"));  // the user's line, not where torch's own code ran it
  if (!code.empty()) out << " (`" << code << "`)";
  out << ": ";
  std::vector<std::string> parts;
  if (o.activation) parts.push_back(count_text(o.activation, "activation reorder", "activation reorders"));
  if (o.weight) parts.push_back(count_text(o.weight, "weight reorder", "weight reorders"));
  if (o.other) parts.push_back(count_text(o.other, "other reorder", "other reorders"));
  out << list_text(parts, 3) << " (" << list_text(o.conversions, 3) << "), " << ms_text(o.ms) << " ms\n";
}

// The convolutions the model called, by what oneDNN did in them: reordered their data, read it
// directly, or ran no oneDNN primitive at all (PyTorch's own kernel).
void write_convolution_line(std::ostream& out, const Report& r, const std::map<int64_t, OpReorders>& by_op) {
  int64_t reordered = 0, direct = 0, none = 0;
  for (const OpEvent& op : r.ops) {
    if (op.parent >= 0 || op.thread != 0 || !is_convolution(op)) continue;
    auto it = by_op.find(op.id);
    if (it == by_op.end() || it->second.compute == 0) ++none;
    else if (it->second.activation > 0) ++reordered;
    else ++direct;
  }
  if (reordered + direct + none == 0) return;
  out << "  convolutions: " << reordered << " with their data reordered, " << direct
      << " read directly (oneDNN ran them on the data's own format), " << none << " with no oneDNN primitive\n";
}

}  // namespace

std::string no_implicit_copies_text(const Report& r) {
  const BackendRun& b = r.backend;
  if (b.state.empty()) return "no implicit layout copies in a call";
  if (b.state == "off") return "no implicit layout copies by PyTorch in a call (--no-backend: the backend's own were not looked for)";
  if (!b.ran()) return "no implicit layout copies by PyTorch in a call (the backend's own were not seen: " + b.reason + ")";
  const BackendSummary s = backend_summary(b);
  if (s.activation.count == 0) return "no implicit layout copies in a call, by PyTorch or as oneDNN's activation reorders";
  return "no implicit layout copies by PyTorch in a call, but " + role_text(r, s, ReorderRole::activation);
}

std::string mixed_seen_text(const Report& r) {
  if (!r.backend.ran()) return "";
  const int64_t forward_end = r.backward_from >= 0 ? r.backward_from : static_cast<int64_t>(r.ops.size());
  const MemoryFormat model = model_weight_format(r.ops, forward_end);
  std::vector<int64_t> mixed;
  for (const OpEvent& op : r.ops)
    if (op.parent < 0 && op.thread == 0 && op.id < forward_end && is_convolution(op) && mixed_format(op, model).mixed)
      mixed.push_back(op.id);
  const SeenConvolutions seen = seen_in_ops(r.backend, mixed);
  if (!seen.seen()) return "";
  return "; oneDNN read the data of " + std::to_string(seen.direct) + " of them directly (no activation reorder) and "
         "reordered it in " + std::to_string(seen.reordered) + ", seen in the backend pass";
}

std::string backend_reorders_text(const Report& r) {
  if (!r.backend.ran()) return "not seen (" + (r.backend.state.empty() ? std::string("no backend pass") : r.backend.reason) + ")";
  const BackendSummary s = backend_summary(r.backend);
  return std::to_string(s.activation.count + s.weight.count) + " (" + std::to_string(s.activation.count) +
         " activation, " + std::to_string(s.weight.count) + " weight)";
}

std::string weight_prepack_fix(const Report& r) {
  if (!r.backend.ran() || r.run.backward) return "";
  const BackendSummary s = backend_summary(r.backend);
  if (s.weight.count == 0) return "";
  const bool v1 = r.run.torch_version.rfind("1.", 0) == 0;
  return "prepack the weights once for inference, which changes what runs (measure it: the effect depends on the "
         "build; resnet18 at batch 8, measured when this layoutprof was made): " +
         std::string(v1 ? "torch.jit.optimize_for_inference(torch.jit.script(model)) left 3 reorders a call of 59 on "
                          "LibTorch 1.13, torch.utils.mkldnn.to_mkldnn(model) 4; torch.jit.freeze alone still made 59"
                        : "torch.compile(model) with torch._inductor.config.freezing = True made 0 reorders a call of "
                          "59 on torch 2.14.1 (prepacked at compile time); torch.jit.optimize_for_inference and "
                          "torch.utils.mkldnn.to_mkldnn still made 23, torch.jit.freeze alone 59");
}

std::string backend_verdict_lines(const Report& r, bool activation_said) {
  std::string lines;
  if (r.summary.gpu.traced) {
    const GpuLayoutKernels g = gpu_layout_kernels(r.ops);
    if (!g.ops.empty())
      lines += "  and on the GPU, " + count_text(static_cast<int64_t>(g.ops.size()), "op", "ops") +
               " launched cuDNN's layout conversion kernels (measured, CUPTI's kernel names): see GPU layout kernels\n";
  }
  if (!r.backend.ran()) return lines;
  const BackendSummary s = backend_summary(r.backend);
  if (!activation_said && s.activation.count > 0) lines += "  and " + role_text(r, s, ReorderRole::activation) + "\n";
  if (s.weight.count > 0)
    lines += "  and " + role_text(r, s, ReorderRole::weight) + ": each weight into oneDNN's blocked format, every call\n";
  return lines;
}

namespace {

// On the GPU: the ops that launched cuDNN's conversion kernels, and what the convolution
// kernels' names say of their layout (every name that says nothing listed, for the fixture).
void write_gpu_kernels(std::ostream& out, const Report& r, int top) {
  const GpuLayoutKernels g = gpu_layout_kernels(r.ops);
  int64_t ns = 0;
  for (const GpuLayoutOp& o : g.ops) ns += std::max<int64_t>(o.gpu_ns, 0);
  out << "\nGPU layout kernels (CUPTI's kernel names, measured): " << count_text(static_cast<int64_t>(g.ops.size()), "op", "ops")
      << " launched cuDNN's layout conversion kernels, " << ms(ns) << " ms of their ops' GPU time (conversions and the "
      << "rest of each op together: CUPTI's records are charged per op); convolution kernels that say their layout: "
      << g.nhwc << " NHWC, " << g.nchw << " NCHW, " << g.unknown.size() << (g.unknown.size() >= 20 ? "+" : "")
      << " names that say none\n";
  for (size_t i = 0; i < g.ops.size() && static_cast<int>(i) < std::clamp(top, 0, 5); ++i) {
    const OpEvent& op = r.ops[g.ops[i].op];
    out << "  " << (i + 1) << ". " << (op.module.empty() ? "(top)" : op.module.str()) << " " << op.name.str()
        << (op.source.empty() ? "" : " at " + op.source.str()) << ": " << list_text(g.ops[i].conversions, 3) << ", "
        << ms(std::max<int64_t>(g.ops[i].gpu_ns, 0)) << " ms\n";
  }
  for (const std::string& name : g.unknown) out << "  unknown layout: " << name << "\n";
}

}  // namespace

void write_backend(std::ostream& out, const Report& r, int top) {
  if (r.summary.gpu.traced) write_gpu_kernels(out, r, top);
  const BackendRun& b = r.backend;
  if (b.state.empty()) return;
  out << "\nBackend conversions (oneDNN's log, one more call after the others, untimed"
      << (b.call_ns >= 0 ? ": " + ms(b.call_ns) + " ms, measured, against the forward's " + ms(r.summary.wall_ns) + " ms" : "")
      << "): ";
  if (!b.ran()) {
    out << "not seen: " << b.state << ", " << b.reason << "\n";
    return;
  }
  const BackendSummary s = backend_summary(b);
  const int64_t reorders = s.activation.count + s.weight.count + s.other.count;
  out << count_text(reorders, "reorder", "reorders") << " of " << count_text(s.primitives, "primitive", "primitives")
      << ", " << mb(s.activation.bytes + s.weight.bytes + s.other.bytes) << " MB (derived), "
      << ms_text(s.activation.ms + s.weight.ms + s.other.ms) << " of " << ms_text(s.primitives_ms)
      << " ms in oneDNN's primitives (measured, its clock)" << (b.library.empty() ? "" : "; " + b.library) << "\n";
  for (const ConversionRow& row : s.conversions)
    out << "  " << reorder_role_name(row.role) << "  " << row.totals.count << "  " << onednn_format_text(row.from)
        << " -> " << onednn_format_text(row.to) << "  " << mb(row.totals.bytes) << " MB  " << ms_text(row.totals.ms)
        << " ms\n";
  const std::map<int64_t, OpReorders> by_op = reorders_by_op(b);
  write_convolution_line(out, r, by_op);
  std::vector<std::pair<int64_t, const OpReorders*>> ranked;
  for (const auto& [id, o] : by_op)
    if (o.activation + o.weight + o.other > 0) ranked.emplace_back(id, &o);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& c) { return a.second->ms > c.second->ms; });
  if (!ranked.empty()) out << "  ops that reordered, most reorder time first:\n";
  const size_t shown = std::min(ranked.size(), static_cast<size_t>(std::clamp(top, 0, 5)));
  for (size_t i = 0; i < shown; ++i) write_op_line(out, r, i + 1, ranked[i].first, *ranked[i].second);
  if (ranked.size() > shown) out << "  and " << ranked.size() - shown << " more ops\n";
  if (s.unattributed > 0)
    out << "  " << count_text(s.unattributed, "primitive", "primitives") << " charged to no op ("
        << (b.matched ? "another thread had an op open, or none was" : b.reason) << ")\n";
  if (b.lines_unparsed > 0) out << "  " << b.lines_unparsed << " lines of oneDNN's log not understood\n";
  const std::string prepack = weight_prepack_fix(r);
  if (!prepack.empty())
    out << "  weights re-laid out on every call at inference (" << count_text(s.weight.count, "weight reorder", "weight reorders")
        << ", " << mb(s.weight.bytes) << " MB a call)\n  → fix: " << prepack << "\n";
  if (s.activation.count > 0)
    out << "  NCHW activations converted around oneDNN's convolutions (" << count_text(s.activation.count, "reorder", "reorders")
        << ", " << mb(s.activation.bytes) << " MB a call)\n  → fix: run the model and its inputs in channels_last, "
        << "which oneDNN can read without converting it: model.to(memory_format=torch.channels_last) and "
        << "x.contiguous(memory_format=torch.channels_last); whether it does on this CPU, and what it saves, "
        << "layoutprof compare-formats measures (each variant's reorders beside its time)\n";
}

}  // namespace layoutprof
