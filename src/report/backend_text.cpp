#include "report/backend_text.h"

#include <algorithm>
#include <map>

#include "analysis/backend_conversions.h"
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

bool is_conv_name(const std::string& name) { return name.find("conv") != std::string::npos; }

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
    if (op.parent >= 0 || op.thread != 0 || !is_conv_name(op.name.str())) continue;
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

std::string backend_verdict_lines(const Report& r, bool activation_said) {
  if (!r.backend.ran()) return "";
  const BackendSummary s = backend_summary(r.backend);
  std::string lines;
  if (!activation_said && s.activation.count > 0) lines += "  and " + role_text(r, s, ReorderRole::activation) + "\n";
  if (s.weight.count > 0)
    lines += "  and " + role_text(r, s, ReorderRole::weight) + ": each weight into oneDNN's blocked format, every call\n";
  return lines;
}

void write_backend(std::ostream& out, const Report& r, int top) {
  const BackendRun& b = r.backend;
  if (b.state.empty()) return;
  out << "\nBackend conversions (oneDNN's log, one more call after the others, untimed): ";
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
}

}  // namespace layoutprof
