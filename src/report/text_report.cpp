#include "report/text_report.h"

#include "core/sampled_figure.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "analysis/analysis.h"
#include "analysis/cause_text.h"
#include "analysis/hazards.h"
#include "analysis/grads.h"
#include "report/backend_text.h"
#include "report/comparison_text.h"
#include "report/compiled_text.h"
#include "report/ddp_seen.h"
#include "report/format_comparison_report.h"
#include "report/reporter.h"
#include "report/what_if_text.h"
#include "analysis/verdict.h"
#include "support/format.h"

namespace layoutprof {

namespace {

const char* const kShades[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
// 256-colour ramp from cool to hot, one per shade level.
const int kColours[] = {238, 22, 28, 64, 100, 136, 172, 166, 160};

// 1234567 -> "1.23M": counters span many orders of magnitude.
std::string si(double v) {
  const char* suffix[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (v >= 1000 && i < 4) {
    v /= 1000;
    ++i;
  }
  return i == 0 ? fixed(v, 0) : fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0) + suffix[i];
}

// Column titles for counters: "perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS" -> "dtlb:read:miss".
std::string counter_label(const std::string& event) {
  std::string label = event;
  for (const char* prefix : {"perf::PERF_COUNT_HW_CACHE_", "perf::PERF_COUNT_HW_",
                             "perf::PERF_COUNT_SW_", "PERF_COUNT_HW_", "PERF_COUNT_SW_"})
    if (label.rfind(prefix, 0) == 0) {
      label = label.substr(std::string(prefix).size());
      for (char& c : label) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
      break;
    }
  if (label == "task-clock" || label == "cpu-clock") label += " ns";
  return clip(label, 16);
}

std::string shade_cell(const HeatmapColumn& col, size_t row, bool color) {
  double max = *std::max_element(col.values.begin(), col.values.end());
  double v = col.values[row];
  double share = v / max;
  int level = (!(max > 0) || !(v > 0) || !std::isfinite(share))
                  ? 0
                  : std::clamp(1 + static_cast<int>(std::min(share, 1.0) * 7.999), 1, 8);
  std::string block = kShades[level];
  if (color && level > 0)
    block = "\x1b[38;5;" + std::to_string(kColours[level]) + "m" + block + "\x1b[0m";
  return block + " " + pad_left(col.text[row], col.width - 2);
}

// What the figures below are, in one line: measured, derived, modelled, and how many were
// not measured (the verbose header lists each, with how and why).
std::string figures_line(const RunInfo& run) {
  const size_t counters = run.measured_counters().size();
  std::string measured = std::string("op times and the ") + (run.backward ? "training step" : "forward") + " (steady clock)";
  if (counters > 0)
    measured += ", " + std::to_string(counters) + " counter" + (counters == 1 ? "" : "s") +
                (run.counter_mode ? " (" + to_string(*run.counter_mode) + ")" : "");
  if (run.bandwidth == "measured") measured += ", memory bandwidth";
  if (!run.gpu.empty()) measured += ", GPU kernels (CUPTI)";
  size_t not_measured = run.not_measured.size();
  for (const CounterStatus& c : run.counters) not_measured += !c.measured;
  return "measured: " + measured + "; derived: copies, bytes, split points, layouts" +
         (run.bandwidth == "measured" ? "" : ", bandwidth") + "; modelled: DTLB walks" +
         (not_measured > 0 ? "; " + std::to_string(not_measured) + " not measured (-v lists them)" : "");
}

void write_header(std::ostream& out, const Report& r) {
  const RunInfo& run = r.run;
  out << "layoutprof " << run.layoutprof_version << " — " << run.model
      << (run.model_format == "pt2" ? "  (torch.export program)"
          : run.model_format == "eager" ? "  (eager, recorded in process)" : "") << "\n";
  for (size_t i = 0; i < run.inputs.size(); ++i) {
    const ModelInput& in = run.inputs[i];
    out << "  input " << i << "   " << in.spec.text << "  (" << in.tensor.dtype() << ", "
        << in.tensor.label() << ")\n";
  }
  if (!run.conversion.to.empty()) {  // a compare-formats variant's report
    const Conversion& c = run.conversion;
    out << "  converted " << c.parameters << " of " << c.parameters_total << " parameters, " << c.buffers << " of "
        << c.buffers_total << " buffers and " << c.inputs << " inputs to " << c.to << " (compare-formats)\n";
  }
  out << "  run       " << run.device << ", " << run.threads << " threads, LibTorch "
      << run.torch_version << ", warm-up " << run.warmup << ", recorded calls "
      << run.calls_recorded
      << (run.calls_identical ? " (same op sequence)" : " (calls DIFFER: op list is one call)")
      << "\n";
  out << "  mode      " << mode_line(run.model_mode) << "\n";
  out << "  status    " << to_string(run.status);
  if (!run.error.empty()) out << ": " << run.error;
  out << "\n";
  out << "  figures   " << figures_line(run) << "\n";
}

// -v: every figure measured and not, with how and why (the JSON and HTML always hold them).
void write_measured_list(std::ostream& out, const Report& r) {
  const RunInfo& run = r.run;
  for (const std::string& m : run.measured) out << "  measured  " << m << "\n";
  std::string counted;
  for (const CounterStatus* c : run.measured_counters()) {
    std::string how = c->note;
    if (c->sampled()) {
      how = "sampled, one every " + std::to_string(c->period) + ": " + std::to_string(c->samples) + " samples, " +
            std::to_string(c->attributed) + " in top-level ops, " + std::to_string(c->lost) + " lost" +
            (c->data_address.empty() ? "" : "; addresses: " + c->data_address) + (how.empty() ? "" : "; " + how);
    }
    counted += (counted.empty() ? "" : ", ") + c->event + (how.empty() ? "" : " (" + how + ")");
  }
  if (!counted.empty()) out << "  counters  " << counted << "\n";
  for (const CounterStatus& c : run.counters)
    if (!c.measured) out << "  not measured  " << c.event << ": " << c.reason << "\n";
  for (const std::string& m : run.not_measured) out << "  not measured  " << m << "\n";
  out << "  derived   copies, bytes, split points and layout classes, from the recorded "
         "tensor metadata\n";
  out << "  bandwidth " << run.bandwidth
      << (run.bandwidth == "measured" ? ": memory-controller traffic over each row's time"
                                      : ": bytes of each op's tensors over its time")
      << (run.bandwidth_note.empty() ? "" : " (" + run.bandwidth_note + ")") << "\n";
  out << "  modelled  DTLB walks of every copy's addresses, two-level LRU TLB " << run.tlb << "\n";
  if (!run.gpu.empty()) out << "  gpu       " << run.gpu << ": kernel, memcpy and memset times through CUPTI\n";
}

// The op a failed top-level op raised in, where its line is one of its own (an op in a Python
// backward function, which runs nested in autograd's record): the innermost failed op below
// it; else the top-level op itself.
const OpEvent& raising_op(const Report& r, const OpEvent& top) {
  const OpEvent* raising = &top;
  for (size_t i = static_cast<size_t>(top.id) + 1; i < r.ops.size() && r.ops[i].depth > top.depth; ++i)
    if (r.ops[i].failed && !r.ops[i].source.empty() && r.ops[i].source != top.source) raising = &r.ops[i];
  return *raising;
}

void write_failure(std::ostream& out, const Report& r) {
  for (const OpEvent& top : r.ops) {
    if (!top.failed || top.parent >= 0) continue;
    const OpEvent& op = raising_op(r, top);
    out << "\nThe model raised in " << op.name;
    if (!op.module.empty()) out << " in " << op.module;
    if (!op.source.empty()) out << " at " << op.source;
    if (&op != &top) out << ", inside " << top.name << (top.source.empty() ? "" : " (" + top.source.str() + ")");
    out << "\n";
    if (!op.source_text.empty()) out << "    " << op.source_text << "\n";
    for (const TensorInfo& in : op.inputs) {
      out << "    input " << in.arg << ": ";
      for (size_t d = 0; d < in.sizes().size(); ++d) out << (d ? "x" : "") << in.sizes()[d];
      out << " strides (";
      for (size_t d = 0; d < in.strides().size(); ++d) out << (d ? "," : "") << in.strides()[d];
      out << ") " << in.label() << "\n";
    }
    out << "  " << r.ops.size() << " ops were recorded up to it.\n";
  }
}

std::string plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string module_name(const std::string& module) { return module.empty() ? "(top)" : module; }

// A failed run's hazard that raised (a failed view, a refused write) at a known line: what
// the run's failure is, said before any count.
const Hazard* failing_hazard(const Report& r) {
  if (r.run.status != RunStatus::failed) return nullptr;
  for (const Hazard& h : r.hazards)
    if (h.counted() && !h.where.empty() && (h.kind == HazardKind::failed_view || h.kind == HazardKind::refused_write ||
                                                 h.kind == HazardKind::stride_assertion))
      return &h;
  return nullptr;
}

// The first lines a user acts on: the implicit copies of a call, their bytes and their share
// of its time, then the other copies in one line each.
void write_verdict(std::ostream& out, const Report& r, const Verdict& v) {
  const auto at = [](const PerCopyClass& a, CopyClass c) { return a[static_cast<int>(c)]; };
  const int64_t implicit = at(v.copies, CopyClass::implicit_layout);
  out << "\nVerdict: ";
  const std::string measured_fix = what_if_verdict_text(r);  // what applying the fixes measured, first
  if (!measured_fix.empty()) out << measured_fix << "\n  and in the recorded call: ";
  if (const Hazard* h = failing_hazard(r)) {  // one voice: the failure first, where it is explained
    out << "the script fails at " << h->where << ": " << h->detail << " (hazard above)\n";
    if (r.run.calls_recorded == 0) return;
    out << "  and before it: ";
  }
  if (r.run.calls_recorded == 0) {  // no copies seen is no evidence of none
    out << "nothing to judge: no call was recorded (" << plural(r.run.warmup, "warm-up call", "warm-up calls")
        << " before it)\n";
    return;
  }
  if (implicit == 0) {
    out << no_implicit_copies_text(r);
    // Layouts that drift without a copy still decide which kernels run: never "nothing to fix".
    if (v.mixed_ops > 0)
      out << ", but " << plural(v.mixed_ops, "mixed-format op runs", "mixed-format ops run")
          << " in a layout the model's weights are not in (see Causes, by birthplace)";
  } else {
    out << plural(implicit, "implicit layout copy", "implicit layout copies") << " a call, "
        << mb(at(v.bytes, CopyClass::implicit_layout)) << " MB";
    const std::string share = share_text(v.implicit_ns, v.wall_ns);
    if (!share.empty())
      out << ", " << share << " of the " << (r.run.backward ? "training step" : "forward")
          << "'s time (measured: the copies' own time, " << ms(v.implicit_ns) << " of " << ms(v.wall_ns) << " ms, "
          << (v.medians ? "medians over " + std::to_string(r.run.calls_recorded) + " calls" : "one call") << ")";
  }
  if (r.run.status != RunStatus::ok) out << ", up to where the call stopped";
  out << "\n" << backend_verdict_lines(r, implicit == 0);
  const int64_t explicit_copies = at(v.copies, CopyClass::explicit_layout);
  if (explicit_copies > 0)
    out << "  and " << plural(explicit_copies, "explicit layout copy", "explicit layout copies")
        << " the model asks for, " << mb(at(v.bytes, CopyClass::explicit_layout)) << " MB\n";
  int64_t others = 0, other_bytes = 0;
  std::string classes;
  for (CopyClass c : {CopyClass::broadcast, CopyClass::dtype_device, CopyClass::same_layout}) {
    if (at(v.copies, c) == 0) continue;
    others += at(v.copies, c);
    other_bytes += at(v.bytes, c);
    classes += (classes.empty() ? "" : ", ") + std::to_string(at(v.copies, c)) + " " + copy_class_name(c);
  }
  if (others > 0)
    out << "  and " << plural(others, "copy", "copies") << (others == 1 ? " that changes" : " that change") << " no layout (" << classes << "), "
        << mb(other_bytes) << " MB: see Totals\n";
  if (v.mixed_ops > 0) {
    out << "  and " << plural(v.mixed_ops, "mixed-format op", "mixed-format ops") << " (activations in one memory "
        << "format, weights in another): " << (v.mixed_ops - v.mixed_without_copy) << " with a recorded conversion copy, "
        << v.mixed_without_copy << " without one";
    if (v.mixed_convolutions > 0)
      out << "; " << v.mixed_convolutions << " of " << plural(v.convolutions, "convolution", "convolutions")
          << " run in a format the model's weights are not in" << mixed_seen_text(r);
    const LayoutCause* most = nullptr;  // the birthplace most of them come from
    for (const LayoutCause& c : r.causes)
      if (!c.accepted && c.mixed_ops > 0 && (!most || c.mixed_ops > most->mixed_ops)) most = &c;
    if (most) out << "; " << (most->mixed_ops == v.mixed_ops ? "all" : std::to_string(most->mixed_ops)) << " from " << birthplace_text(*most);
    out << "\n";
  }
  out << compiled_verdict(r.compiled);
  if (v.copy_gpu_ns >= 0 && v.gpu_ns > 0)
    out << "  on the GPU, layout-copy kernels took " << share_text(v.copy_gpu_ns, v.gpu_ns) << " of the kernels' time ("
        << "measured, CUPTI: " << ms(v.copy_gpu_ns) << " of " << ms(v.gpu_ns) << " ms)\n";
}

// Before the verdict: the layouts that change results. Each hazard's kind, line and code,
// what it reaches and what happens, and the fixes; those the strides could not decide, and
// those accepted, one line each.
void write_hazards(std::ostream& out, const Report& r) {
  std::vector<const Hazard*> counted, other;
  for (const Hazard& h : r.hazards) (h.counted() ? counted : other).push_back(&h);
  if (r.hazards.empty()) return;
  out << "\nHazards: " << counted.size() << " (layouts that change what the model computes; derived from the "
      << "storages, strides and version counters recorded)\n";
  for (size_t i = 0; i < counted.size(); ++i) {
    const Hazard& h = *counted[i];
    out << "  " << (i + 1) << ". " << hazard_kind_words(h.kind);
    if (h.kind != HazardKind::model_tensor) {
      out << " at " << (h.where.empty() ? "an unknown line" : h.where) << ", " << h.op_name
          << (h.module.empty() ? "" : " in " + h.module) << (h.count > 1 ? " (x" + std::to_string(h.count) + ")" : "");
      if (h.outside_calls) out << ", outside the recorded calls";
    } else {
      out << ": " << h.tensor << ", " << h.layout;
    }
    out << "\n";
    if (!h.code.empty()) out << "       " << h.code << "\n";
    out << "     " << h.detail << "\n";
    for (size_t f = 0; f < h.fixes.size(); ++f) out << "     → " << (f == 0 ? "fix: " : "") << h.fixes[f] << "\n";
  }
  for (const Hazard* h : other)
    out << "  " << (h->accepted ? "accepted (--accept " + h->where + "): " : std::string()) << hazard_text(*h) << "\n";
}

// The ops of a cause's chain, in words: its carriers, and the choices among them.
std::string chain_text(const Report& r, const LayoutCause& c) {
  std::string text = plural(c.carriers_total, "op carries", "ops carry") + " it on";
  for (const LayoutChoice& k : c.choices) {
    if (k.op < 0 || k.op >= static_cast<int64_t>(r.ops.size())) continue;
    const OpEvent& op = r.ops[k.op];
    text += "; " + op.name.str() + (op.source.empty() ? "" : " at " + op.source.str()) + " takes it from operand " +
            std::to_string(k.followed) + " over a " + k.other + " one";
  }
  return text + "; " + plural(c.payers_total, "op pays", "ops pay");
}

// Under a cause: what applying each of its fixes measured.
void write_cause_what_if(std::ostream& out, const Report& r, int64_t cause) {
  for (const WhatIfVariant* v : cause_variants(r.what_if, cause)) {
    out << "     " << what_if_variant_text(r.what_if, *v) << "\n";
    for (const std::string& note : what_if_variant_notes(*v)) out << "       " << note << "\n";
  }
}

// After the causes: the variants that applied several causes' fixes together.
void write_together_what_if(std::ostream& out, const Report& r) {
  for (const WhatIfVariant& v : r.what_if.variants) {
    if (v.causes.size() == 1) continue;
    out << "  together, " << what_if_variant_text(r.what_if, v) << "\n";
    for (const std::string& note : what_if_variant_notes(v)) out << "       " << note << "\n";
  }
}

// What the reader changes, first: each birthplace, the code on its line, what it costs
// downstream, the chain, and the fixes there.
void write_birthplaces(std::ostream& out, const Report& r, int top) {
  std::vector<const LayoutCause*> causes, accepted;
  for (size_t i : causes_by_measured_saving(r)) (r.causes[i].accepted ? accepted : causes).push_back(&r.causes[i]);
  if (causes.empty() && accepted.empty()) return;
  const size_t shown = std::min(causes.size(), static_cast<size_t>(std::max(top, 0)));
  out << "\nCauses, by birthplace (where the layout was born; derived from the strides recorded on " << r.run.device
      << "): " << causes.size() << (shown < causes.size() ? ", top " + std::to_string(shown) : std::string())
      << (r.what_if.ran ? ", those whose fix measured a saving first" : "") << "\n";
  if (r.what_if.ran) out << "  " << what_if_run_text(r.what_if) << "\n";
  for (size_t i = 0; i < shown; ++i) {
    const LayoutCause& c = *causes[i];
    out << "  " << (i + 1) << ". " << birthplace_text(c) << "\n";
    if (!c.code.empty()) out << "       " << c.code << "\n";
    out << "     " << cause_cost_text(c) << "\n";
    out << "     chain: " << chain_text(r, c) << "\n";
    for (size_t f = 0; f < c.fixes.size(); ++f) out << "     → " << (f == 0 ? "fix: " : "") << c.fixes[f] << "\n";
    write_cause_what_if(out, r, &c - r.causes.data());
  }
  write_together_what_if(out, r);
  for (const LayoutCause* c : accepted)
    out << "  accepted (--accept " << c->where << "): " << birthplace_text(*c) << "; " << cause_cost_text(*c) << "\n";
}

// One line per cause (count, bytes, time, what, the modules and source lines it covers), then
// its fix.
void write_causes(std::ostream& out, const std::vector<CopyCause>& causes, int top) {
  if (causes.empty()) return;
  const size_t shown = std::min(causes.size(), static_cast<size_t>(std::max(top, 0)));
  out << "\nCauses of the layout copies, grouped: " << causes.size() << (causes.size() == 1 ? " cause" : " causes")
      << (shown < causes.size() ? ", top " + std::to_string(shown) : std::string()) << ", most bytes first\n";
  for (size_t i = 0; i < shown; ++i) {
    const CopyCause& k = causes[i];
    std::vector<std::string> modules;
    for (const std::string& m : k.modules) modules.push_back(module_name(m));
    out << "  " << (i + 1) << ". " << k.copies << " "
        << (k.cls == CopyClass::explicit_layout ? "explicit" : "implicit") << ", " << mb(k.bytes) << " MB";
    if (k.time_ns > 0) out << ", " << ms(k.time_ns) << " ms";
    out << ": " << k.what << "; in " << list_text(modules, 3);
    if (!k.sources.empty()) out << " at " << list_text(k.sources, 2);
    if (!k.origin_sources.empty()) out << " (made at " << list_text(k.origin_sources, 2) << ")";
    out << "\n     → " << k.fix << "\n";
  }
}

}  // namespace

std::string mode_line(const ModelMode& mode) {
  if (mode.chosen_by == "export") return mode.value + ", fixed at export: " + mode.evidence;
  if (mode.chosen_by == "user") return mode.value + ", as the user's code set it";
  return mode.value + ", set by layoutprof (train for --backward, eval otherwise)";
}

std::string flow_text(const std::vector<std::string>& transitions) {
  std::string lane;
  for (const std::string& t : transitions) lane += (lane.empty() ? "" : "→") + t;
  return lane;
}

std::string lane_text(const HeatmapRow& row) {
  std::string born;
  for (const std::string& b : row.births) born += (born.empty() ? "[born " : ", ") + b;
  return (born.empty() ? "" : born + "] ") + flow_text(row.transitions);
}

HeatmapTable heatmap_table(const Report& r, GroupBy group_by, int requested_depth) {
  HeatmapTable t;
  t.depth = heatmap_depth(r, requested_depth);
  t.rows = heatmap_rows(r, group_by, t.depth);
  std::vector<HeatmapColumn>& cols = t.columns;
  cols = {{"ops", 8, "derived", {}, {}},        {"non-contig in", 15, "derived", {}, {}},
          {"implicit", 10, "derived", {}, {}},   {"explicit", 10, "derived", {}, {}},
          {"MB copied", 11, "derived", {}, {}},  {"time ms", 11, "measured", {}, {}},
          {"DTLB walks", 12, "modelled", {}, {}}, {"GB/s", 9, r.run.bandwidth, {}, {}}};
  const bool gpu = r.summary.gpu.traced;
  if (gpu) {
    cols.push_back({"GPU ms", 11, "measured", {}, {}});
    cols.push_back({"copy-kernel ms", 15, "measured", {}, {}});
  }
  const size_t first_counter = cols.size();
  const auto counters = r.run.measured_counters();
  std::vector<size_t> thread_counters;  // per-thread events get a column each
  for (size_t k = 0; k < counters.size(); ++k)
    if (counters[k]->scope == CounterScope::thread) {
      thread_counters.push_back(k);
      const std::string title = counter_label(counters[k]->event);
      cols.push_back({title, std::max<size_t>(10, width(title) + 1), counters[k]->sampled() ? "sampled" : "measured", {}, {}});
    }
  for (const HeatmapRow& row : t.rows) {
    double gbps = row.time_ns > 0 ? static_cast<double>(heatmap_bandwidth_bytes(r.run, row)) /
                                        static_cast<double>(row.time_ns)
                                  : 0.0;
    const double v[] = {static_cast<double>(row.ops), static_cast<double>(row.noncontiguous_inputs),
                        static_cast<double>(row.implicit_copies), static_cast<double>(row.explicit_copies),
                        static_cast<double>(row.copy_bytes), static_cast<double>(row.time_ns),
                        static_cast<double>(row.dtlb_walks), gbps};
    for (size_t c = 0; c < 8; ++c) {
      cols[c].values.push_back(v[c]);
      cols[c].text.push_back(c == 4   ? mb(static_cast<int64_t>(v[c]))
                             : c == 5 ? ms(static_cast<int64_t>(v[c]))
                             : c == 7 ? fixed(v[c], 2)
                             : c == 6 ? si(v[c])
                                      : std::to_string(static_cast<int64_t>(v[c])));
    }
    if (gpu) {
      cols[8].values.push_back(static_cast<double>(row.gpu_ns));
      cols[8].text.push_back(ms(row.gpu_ns));
      cols[9].values.push_back(static_cast<double>(row.copy_gpu_ns));
      cols[9].text.push_back(ms(row.copy_gpu_ns));
    }
    for (size_t i = 0; i < thread_counters.size(); ++i) {
      size_t k = thread_counters[i];
      double value = k < row.counters.size() ? row.counters[k].scaled : 0.0;
      bool mux = k < row.counters.size() && row.counters[k].multiplexed;
      cols[first_counter + i].values.push_back(value);
      cols[first_counter + i].text.push_back(si(value) + (mux ? "*" : ""));
    }
  }
  t.legend = "ops, non-contig in, copies, MB: derived; GB/s: " + r.run.bandwidth +
             (r.run.counter_mode == CounterMode::sampled
                  ? "; time: measured over the top-level ops, median over calls; counters: sampled "
                    "estimates (samples x period) over the top-level ops, mean over calls, * = "
                    "multiplexed and scaled"
                  : "; time and counters: measured over the top-level ops, median over calls, * = "
                    "multiplexed and scaled") +
             "; DTLB walks: modelled";
  return t;
}

namespace {

void write_heatmap(std::ostream& out, const Report& r, const TextOptions& o) {
  const HeatmapTable t = heatmap_table(r, o.group_by, o.depth);
  const std::vector<HeatmapRow>& rows = t.rows;
  out << "\nHeatmap: rows are "
      << (o.group_by == GroupBy::op ? std::string("top-level ops")
                                    : "modules at depth " + std::to_string(t.depth))
      << " in execution order; each cell is shaded by its value relative to its column\n";
  if (rows.empty()) {
    out << "  (no ops recorded)\n";
    return;
  }
  size_t label_w = 6;
  for (const HeatmapRow& row : rows) label_w = std::max(label_w, std::min<size_t>(width(row.label), 36));
  out << "  " << pad_right(o.group_by == GroupBy::op ? "op" : "module", label_w);
  for (const HeatmapColumn& c : t.columns) out << " " << pad_left(c.title, c.width);
  out << "  layout lane\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << "  " << pad_right(clip(rows[i].label, label_w), label_w);
    for (const HeatmapColumn& c : t.columns) out << " " << shade_cell(c, i, o.color);
    out << "  " << clip(lane_text(rows[i]), 60) << "\n";
  }
  out << "  (" << t.legend << ")\n";
}

// A split point alone, or the first of a group with the places of the others.
void write_split_group(std::ostream& out, const Report& r, const SplitGroup& g, size_t rank) {
  const SplitPoint& sp = r.split_points[g.points.front()];
  const OpEvent& op = r.ops[sp.op];
  out << "  " << rank << ". " << op.name;
  if (g.points.size() == 1) {
    out << " in " << module_name(op.module);
    if (!op.source.empty()) out << " at " << op.source;
    if (op.thread != 0) out << " (thread " << op.thread << ")";  // a forked task's, or a pool thread's
  } else {
    std::vector<std::string> modules, sources;
    for (size_t p : g.points) {
      const OpEvent& o = r.ops[r.split_points[p].op];
      modules.push_back(module_name(o.module));
      if (!o.source.empty() && std::find(sources.begin(), sources.end(), o.source.str()) == sources.end())
        sources.push_back(o.source);
    }
    out << " at " << g.points.size() << " places, same cause and suggestion: in " << list_text(modules, 4);
    if (!sources.empty()) out << " at " << list_text(sources, 2);
  }
  out << "\n";
  if (!op.source_text.empty()) out << "       " << op.source_text << "\n";
  out << "       " << sp.before << " → " << sp.after << "  [";
  for (size_t k = 0; k < sp.kinds.size(); ++k) out << (k ? ", " : "") << sp.kinds[k];
  out << "]  leads to " << g.copies << " layout cop" << (g.copies == 1 ? "y" : "ies") << ", "
      << mb(g.copy_bytes) << " MB" << (g.points.size() > 1 ? " together" : "") << "\n";
  out << "       → " << sp.suggestion << "\n";
}

void write_split_points(std::ostream& out, const Report& r, int top) {
  const std::vector<SplitGroup> groups = group_split_points(r);
  const size_t shown = std::min(groups.size(), static_cast<size_t>(std::max(top, 0)));
  out << "\nSplit points (where the layout of the data changes): " << r.split_points.size();
  if (groups.size() < r.split_points.size())
    out << " in " << groups.size() << " group" << (groups.size() == 1 ? "" : "s") << " of the same cause and suggestion";
  if (!r.split_points.empty()) out << ", top " << shown << " by bytes copied";
  out << "\n";
  for (size_t i = 0; i < shown; ++i) write_split_group(out, r, groups[i], i + 1);
}

void write_totals(std::ostream& out, const Report& r) {
  const Summary& s = r.summary;
  out << "\nTotals: " << s.ops << " op events (" << s.top_level_ops
      << " top-level) in one call; " << (r.run.backward ? "training step " : "forward ") << ms(s.wall_ns)
      << " ms (measured, median of " << r.run.calls_recorded << ")\n";
  if (r.run.ops_not_recorded > 0) {
    const OpEvent* last = nullptr;
    for (const OpEvent& op : r.ops)
      if (op.parent < 0) last = &op;
    out << "  Recording stopped at --max-ops " << r.run.max_ops << ": " << r.run.ops_not_recorded
        << " more op events of the call were not recorded; these figures cover the call up to";
    if (last) {
      out << " " << last->name;
      if (!last->module.empty()) out << " in " << last->module;
      if (!last->source.empty()) out << " at " << last->source;
    }
    out << "\n";
  }
  out << "  " << pad_right("copies", 8);
  for (int c = 0; c < kCopyClassCount; ++c)
    out << " " << pad_left(copy_class_name(static_cast<CopyClass>(c)), 16);
  out << "\n  " << pad_right("count", 8);
  for (int c = 0; c < kCopyClassCount; ++c) out << " " << pad_left(std::to_string(s.copies[c]), 16);
  out << "\n  " << pad_right("MB", 8);
  for (int c = 0; c < kCopyClassCount; ++c) out << " " << pad_left(mb(s.copy_bytes[c]), 16);
  out << "\n  split points: " << s.split_points << "\n";
  out << "  DTLB (modelled, " << r.run.tlb << "): " << s.dtlb.walks << " walks, " << s.dtlb.l1_misses
      << " first-level misses over " << s.dtlb.accesses << " accesses of "
      << r.copies.size() << " copies" << (s.dtlb.sampled ? " (long copies sampled, scaled)" : "")
      << "\n";
  if (s.gpu.traced)
    out << "  GPU (measured, CUPTI): " << ms(s.gpu.gpu_ns) << " ms in " << s.gpu.kernels
        << " kernels and transfers, of which layout copies " << ms(s.gpu.copy_gpu_ns) << " ms; "
        << s.gpu.unattributed << " records matched no op, " << s.gpu.dropped << " dropped\n";
  const auto counters = r.run.measured_counters();
  for (size_t k = 0; k < counters.size() && k < s.counters.size(); ++k) {
    if (counters[k]->sampled()) {
      out << "  " << counters[k]->event << " (sampled, one every " << counters[k]->period
          << (s.counters[k].multiplexed ? ", multiplexed" : "") << "): " << si(s.counters[k].scaled) << " +- "
          << si(counters[k]->error(s.counters[k])) << " (" << s.counters[k].raw << " samples"
          << (counters[k]->calls > 1 ? " over " + std::to_string(counters[k]->calls) + " calls, their mean" : "")
          << ") over the top-level ops\n";
      continue;
    }
    out << "  " << counters[k]->event << " (measured" << (s.counters[k].multiplexed ? ", multiplexed" : "")
        << "): " << si(s.counters[k].scaled) << " over the top-level ops\n";
  }
}

std::string dims(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// How many gradients DDP's bucket check and AccumulateGrad's contract check will warn about,
// with where DDP's buckets were built.
void write_grad_warnings(std::ostream& out, const Report& r) {
  int ddp = 0, accumulate = 0;
  std::string built;
  for (const ParamGrad& p : r.parameters) {
    ddp += ddp_warns(p);
    accumulate += accumulate_grad_warns(p);
    if (built.empty()) built = p.buckets_built;
  }
  out << "  DDP: " << ddp << (ddp == 1 ? " gradient differs from its bucket view" : " gradients differ from their bucket views")
      << (ddp ? " (it warns once)" : "")
      << (built.empty() ? " (predicted for DDP built around the model as it is)" : " (buckets built " + built + ")");
  if (accumulate) out << "; AccumulateGrad: " << accumulate << " kept .grad against the layout contract (it warns once)";
  out << "\n";
}

// The model's parameter `name` where the code laid it out between the calls at a line the
// recent ops saw (ModelTensor::made_at); nullptr otherwise.
const ModelTensor* laid_out_between_calls(const Report& r, const std::string& name) {
  for (const ModelTensor& m : r.run.model_tensors)
    if (m.name == name && !m.buffer && !m.made_at.empty()) return &m;
  return nullptr;
}

std::string made_place(const ModelTensor& m) {
  return m.made_at + (m.made_code.empty() ? "" : " (`" + m.made_code + "`)");
}

// On the first screen: the gradients DDP and AccumulateGrad will warn about in a training step,
// with the first one's fix and the line that laid its parameter out (the full list is below).
void write_grad_warnings_first(std::ostream& out, const Report& r) {
  if (!r.run.backward) return;
  std::vector<std::string> ddp, accumulate;
  const ParamGrad* first = nullptr;
  for (const ParamGrad& p : r.parameters) {
    const bool by_ddp = ddp_warns(p), by_accumulate = accumulate_grad_warns(p);
    if (by_ddp) ddp.push_back("`" + p.name + "`");
    if (by_accumulate) accumulate.push_back("`" + p.name + "`");
    if (!first && (by_ddp || by_accumulate)) first = &p;
  }
  if (!first) return;
  out << "\nGradient warnings (predicted for the shown step; all in Gradient layouts below):";
  if (!ddp.empty()) out << " DDP will warn about " << list_text(ddp, 3);
  if (!accumulate.empty()) out << (ddp.empty() ? "" : ";") << " AccumulateGrad about " << list_text(accumulate, 3);
  out << "\n";
  if (const ModelTensor* m = laid_out_between_calls(r, first->name))
    out << "  " << first->name << " laid out so before the call at " << made_place(*m) << "\n";
  out << "  → " << grad_suggestion(*first) << "\n";
}

// The backward op that made a parameter's gradient, and the forward op (module, line) whose
// backward it runs in.
void write_grad_producer(std::ostream& out, const Report& r, const ParamGrad& p) {
  if (p.producer < 0 || p.producer >= static_cast<int64_t>(r.ops.size())) return;
  const OpEvent* op = &r.ops[p.producer];
  const OpEvent* top = op;
  while (top->parent >= 0) top = &r.ops[top->parent];
  out << "       made by " << op->name;
  if (top != op) out << " in " << top->name;
  const OpEvent* forward = nullptr;
  for (const OpEvent* o = op; o && !forward; o = o->parent >= 0 ? &r.ops[o->parent] : nullptr)
    if (o->forward_op >= 0) forward = &r.ops[o->forward_op];
  if (forward) {
    out << ", the backward of " << forward->name;
    if (!forward->module.empty()) out << " in " << forward->module;
    if (!forward->source.empty()) out << " at " << forward->source;
  }
  out << "\n";
  if (forward && !forward->source_text.empty()) out << "       " << forward->source_text << "\n";
}

// --backward: each parameter whose gradient is not laid out like it, worst first (the
// report keeps them in that order), with the op and source line it comes from and, where
// DDP would warn, the two lines it would print.
void write_grad_layouts(std::ostream& out, const Report& r) {
  if (!r.run.backward) return;
  const auto& g = r.summary.grad_layout;
  out << "\nGradient layouts (what DDP will see): " << r.parameters.size() << " parameters; "
      << g[static_cast<int>(GradVerdict::match)] << " match, " << g[static_cast<int>(GradVerdict::size1_only)]
      << " size1_only (kept as is), " << g[static_cast<int>(GradVerdict::layout_mismatch)]
      << " layout_mismatch (copied every step), " << g[static_cast<int>(GradVerdict::no_grad)]
      << " no_grad (unused)\n";
  write_grad_warnings(out, r);
  int n = 0;
  for (const ParamGrad& p : r.parameters) {
    const std::string why = p.verdict == GradVerdict::frozen ? "" : grad_suggestion(p);
    if (p.verdict == GradVerdict::frozen || (p.verdict == GradVerdict::match && why.empty())) continue;
    out << "  " << ++n << ". " << p.name << "  " << grad_verdict_name(p.verdict) << "  sizes " << dims(p.sizes)
        << ", strides " << dims(p.strides);
    if (p.has_grad) out << ", gradient strides " << dims(p.grad_strides);
    out << "\n";
    write_grad_producer(out, r, p);
    if (const ModelTensor* m = laid_out_between_calls(r, p.name))
      out << "       laid out so before the call by " << m->made_by << " at " << made_place(*m) << "\n";
    for (const std::string& line : ddp_warning_lines(p)) out << "       DDP: " << line << "\n";
    if (!why.empty()) out << "       → " << why << "\n";
  }
  for (const std::string& seen : r.run.measured)
    if (is_ddp_seen(seen)) out << "  measured, beside them: " << seen << "\n";
  for (const std::string& c : ddp_contradictions(r))
    out << "  ! the verdicts contradict DDP's own warning: " << c << " (DDP's word stands: a defect of layoutprof's "
        << "rules, please report it)\n";
}

}  // namespace

// Sampled data addresses: the tensors most samples fell in, with the op that touched them.
void write_tensor_samples(std::ostream& out, const Report& r, int top) {
  if (r.tensor_samples.empty()) return;
  const auto counters = r.run.measured_counters();
  std::vector<const TensorSamples*> rows;
  for (const TensorSamples& t : r.tensor_samples) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const TensorSamples* a, const TensorSamples* b) { return a->samples > b->samples; });
  out << "\nSampled data addresses: the op tensors the samples fell in (" << rows.size() << ", top "
      << std::min<size_t>(rows.size(), static_cast<size_t>(std::max(top, 0))) << "; sampled estimate = samples x period)\n";
  for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(std::max(top, 0)); ++i) {
    const TensorSamples& t = *rows[i];
    const OpEvent& op = r.ops[t.op];
    const bool output = static_cast<size_t>(t.slot) >= op.inputs.size();
    const TensorInfo& tensor = output ? op.outputs[t.slot - op.inputs.size()] : op.inputs[t.slot];
    const CounterStatus& c = *counters.at(t.counter);
    out << "  " << (i + 1) << ". " << c.event << ": " << t.samples << " samples (" << si(sampled_estimate(t.samples, c.period))
        << ") in " << op.name << "'s " << (output ? "output " : "input ") << tensor.arg << " " << dims(tensor.sizes())
        << " " << tensor.dtype() << " " << tensor.label().str() << (op.module.empty() ? "" : " in " + op.module.str())
        << (op.source.empty() ? "" : " at " + op.source.str()) << "\n";
  }
}

void write_text_report(std::ostream& out, const Report& report, const TextOptions& options) {
  require_whole_report(report);
  write_header(out, report);
  if (options.verbose) write_measured_list(out, report);
  if (report.run.status == RunStatus::failed) write_failure(out, report);
  write_hazards(out, report);
  write_compiled(out, report.compiled);
  const Verdict verdict = verdict_of(report);
  write_verdict(out, report, verdict);
  write_birthplaces(out, report, options.top);
  write_causes(out, verdict.causes, options.top);
  write_grad_warnings_first(out, report);
  write_heatmap(out, report, options);
  write_split_points(out, report, options.top);
  write_backend(out, report, options.top);  // after the heatmap: the verdict has its counts on the first screen
  write_grad_layouts(out, report);
  write_tensor_samples(out, report, options.top);
  write_totals(out, report);
}

namespace {

// The terminal's format: the heatmap of a run, the verdict (and table) of a comparison.
class TextReporter : public Reporter {
 public:
  std::string name() const override { return "text"; }
  bool writes_reports() const override { return true; }
  bool writes_comparisons() const override { return true; }
  void write(std::ostream& out, const Report& r, const ReporterOptions& o) const override {
    TextOptions text;
    text.group_by = o.group_by;
    text.depth = o.depth;
    text.top = o.top;
    text.color = o.color;
    text.verbose = o.verbose;
    write_text_report(out, r, text);
  }
  void write(std::ostream& out, const Comparison& c, const ReporterOptions& o) const override {
    out << format_comparison(c, DiffFormat::text, o.diff_table);
  }
  bool writes_format_comparisons() const override { return true; }
  void write(std::ostream& out, const FormatComparison& c, const ReporterOptions&) const override {
    write_format_comparison_text(out, c);
  }
};

}  // namespace

std::unique_ptr<Reporter> make_text_reporter() { return std::make_unique<TextReporter>(); }

}  // namespace layoutprof
