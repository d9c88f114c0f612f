#include "report/compiled_text.h"

#include <algorithm>

#include "support/format.h"

namespace layoutprof {
namespace {

constexpr size_t kCopiesShown = 4;  // per graph, most bytes first; the weights in one line

std::string count(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string at(const std::string& where) { return where.empty() ? "" : " (" + where + ")"; }

void write_recompiles(std::ostream& out, const CompiledRun& c) {
  if (c.recompiles.empty()) return;
  out << "  recompiles: " << c.recompiles.size() << " in the run, " << c.layout_recompiles()
      << " caused by an input's layout\n";
  for (size_t i = 0; i < c.recompiles.size(); ++i) {
    const Recompile& r = c.recompiles[i];
    out << "    " << (i + 1) << ". " << r.function << at(r.where) << " recompiled in step " << (r.step + 1) << " (compile "
        << r.compile_id << ", " << fixed(r.compile_s, 2) << " s): ";
    if (r.kind == "other") out << r.reason << "\n";
    else
      out << "`" << r.tensor << "` " << r.kind << (r.dim >= 0 ? " at dim " + std::to_string(r.dim) : "")
          << (r.expected.empty() ? "" : ": expected " + r.expected + ", actual " + r.actual) << "\n";
    if (!r.before.empty() || !r.after.empty())
      out << "       layouts " << (r.before.empty() ? "?" : r.before) << " then " << (r.after.empty() ? "?" : r.after)
          << (r.called_at.empty() ? "" : "; called at " + r.called_at) << "\n";
    out << "       fix: " << r.fix << "\n";
  }
}

std::string copy_line(const CompiledCopy& c) {
  std::string s = c.tensor + " " + c.from + " -> " + c.to + ", " + mb(c.bytes) + " MB";
  if (c.kind == "code")
    return s + (c.where.empty() ? ": a copy in the graph with no user line (autograd's, in a backward graph)"
                                : ": the code's own copy at " + c.where + (c.code.empty() ? "" : " (`" + c.code + "`)"));
  if (!c.before.empty()) s += ", before " + c.before + (c.module.empty() ? "" : " in " + c.module);
  return s + at(c.where) + (c.kernel.empty() ? "" : " [" + c.kernel + "]");
}

void write_graph(std::ostream& out, const CompiledGraph& g) {
  int64_t bytes = 0, weights = 0, weight_bytes = 0;
  std::vector<const CompiledCopy*> shown;
  for (const CompiledCopy& c : g.copies) {
    bytes += c.bytes;
    if (c.kind == "weight") {
      ++weights;
      weight_bytes += c.bytes;
    } else {
      shown.push_back(&c);
    }
  }
  if (g.copies.empty()) return;
  out << "  inductor: " << count(static_cast<int64_t>(g.copies.size()), "layout copy", "layout copies") << " a call ("
      << mb(bytes) << " MB) in graph " << g.compile_id << (g.graph.empty() ? "" : " " + g.graph) << " of " << g.function
      << at(g.where) << "\n";
  std::stable_sort(shown.begin(), shown.end(), [](const CompiledCopy* a, const CompiledCopy* b) { return a->bytes > b->bytes; });
  for (size_t i = 0; i < shown.size() && i < kCopiesShown; ++i) out << "    " << copy_line(*shown[i]) << "\n";
  if (shown.size() > kCopiesShown) out << "    and " << (shown.size() - kCopiesShown) << " more (JSON: compiled.graphs)\n";
  if (weights > 0)
    out << "    " << count(weights, "weight", "weights") << " converted to another layout on every call (" << mb(weight_bytes)
        << " MB; freezing, torch._inductor.config.freezing = True for inference, would do it once)\n";
  if (g.layout_opt == "off") out << "    layout optimization off: " << g.layout_opt_reason << "\n";
}

void write_dynamic_and_limits(std::ostream& out, const CompiledRun& c) {
  if (!c.dynamic.empty()) {
    out << "  automatic dynamic: ";
    for (size_t i = 0; i < c.dynamic.size() && i < 6; ++i)
      out << (i ? ", " : "") << c.dynamic[i].source << " (was " << c.dynamic[i].value << ", compile " << c.dynamic[i].compile_id << ")";
    out << (c.dynamic.size() > 6 ? ", ..." : "") << "\n";
  }
  for (const RecompileLimitHit& h : c.limit_hits)
    out << "  hit " << h.limit << " in step " << (h.step + 1) << ": " << h.function
        << " runs eagerly from then on; last reason: " << h.reason << "\n";
  for (const GraphBreak& b : c.breaks) {
    out << "  graph break" << at(b.where) << " in step " << (b.step + 1) << ": " << b.reason << "\n";
    if (!b.crossing.empty()) {
      out << "    crossing it:";
      for (const std::string& t : b.crossing) out << " " << t << ";";
      out << "\n";
    }
  }
}

}  // namespace

void write_compiled(std::ostream& out, const CompiledRun& c) {
  if (!c.seen) return;
  out << "\ntorch.compile (in process, torch " << c.torch << "; " << count(static_cast<int64_t>(c.graphs.size()), "graph", "graphs")
      << " compiled in the run, warm-up included; read from torch's structured trace)\n";
  write_recompiles(out, c);
  for (const CompiledGraph& g : c.graphs) write_graph(out, g);
  write_dynamic_and_limits(out, c);
  if (c.fx_cache_hits + c.fx_cache_misses > 0)
    out << "  inductor's cache: " << c.fx_cache_hits << " hits, " << c.fx_cache_misses << " misses (fx graphs)\n";
  for (const std::string& n : c.not_measured) out << "  not measured: " << n << "\n";
  for (const std::string& o : c.observer) out << "  layoutprof's own effect: " << o << "\n";
}

std::string compiled_verdict(const CompiledRun& c) {
  if (!c.seen || (c.recompiles.empty() && c.copies_per_call() == 0 && c.limit_hits.empty())) return "";
  std::string s = "  and torch.compile: ";
  if (!c.recompiles.empty()) {
    s += count(static_cast<int64_t>(c.recompiles.size()), "recompile", "recompiles") + " (" +
         std::to_string(c.layout_recompiles()) + " caused by an input's layout";
    const Recompile* first = nullptr;
    for (const Recompile& r : c.recompiles)
      if (r.layout && !first) first = &r;
    s += first ? ": " + first->fix + ")" : ")";
    if (c.copies_per_call() > 0) s += "; ";
  }
  if (c.copies_per_call() > 0)
    s += count(c.copies_per_call(), "layout copy", "layout copies") + " a call inside compiled graphs (" +
         mb(c.copy_bytes_per_call()) + " MB, derived from inductor's code)";
  if (!c.limit_hits.empty()) s += "; recompile_limit hit: the function runs eagerly after it";
  return s + "\n";
}

}  // namespace layoutprof
