// HTML: one self-contained page (CSS and JavaScript inline, no network; opens from file://)
// of a run's report or of a comparison. The page embeds its data as one JSON document in a
// <script type="application/json"> element and draws everything from it in the browser:
//   - the verdict (layout copies a call, their bytes and share of its time) and their causes
//     grouped, each with its fix (verdict.h),
//   - the run header (what was measured, derived, modelled),
//   - the heatmap (modules x figures, each column shaded by its own scale), rows expandable
//     into their top-level ops and those into their nested ops,
//   - the layout lane: top-level ops in execution order coloured by the layout of the data
//     they produce, split points marked, copies in proportion to their bytes,
//   - split points, a copies table (sortable, filterable by class), gradient layouts.
// Large calls stay usable: op events are embedded as columns of small integers over tables of
// the strings and tensor shapes they share; past kMaxEmbeddedOps the nested ops (then the
// later top-level ops) are left to the JSON report, and the page says so.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/format.h"
#include "analysis/analysis.h"
#include "report/comparison_text.h"
#include "analysis/format_comparison.h"
#include "report/reporter.h"
#include "core/sampled_figure.h"
#include "report/text_report.h"
#include "report/comparison_json.h"
#include "report/json_out.h"
#include "report/markup.h"
#include "report/verdict_json.h"

namespace layoutprof {

namespace {

using nlohmann::json;

constexpr size_t kMaxEmbeddedOps = 250000;     // op events in the page
constexpr size_t kMaxEmbeddedCopies = 20000;   // copies in the table, most bytes first
constexpr size_t kMaxEmbeddedSplits = 5000;    // split points, most bytes first
constexpr size_t kMaxLaneText = 240;           // characters of a heatmap row's layout lane

// JSON text that can sit inside a <script> element: "<" never appears raw ("</script>").
std::string script_safe(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

void put_string(TextBuf& out, const std::string& s) { out += script_safe(dump_compact(json(s))); }

std::string dims_text(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s.empty() ? "scalar" : s;
}

std::string strides_text(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

// The tables the op columns index: strings (names, modules, source lines) and tensor shapes.
class Tables {
 public:
  int string_id(const std::string& s) {
    auto [it, added] = strings_.emplace(s, static_cast<int>(string_list_.size()));
    if (added) string_list_.push_back(s);
    return it->second;
  }
  int shape_id(const TensorInfo& t) {
    auto [it, added] = shapes_.emplace(t.shape, static_cast<int>(shape_list_.size()));
    if (added) shape_list_.push_back(t.shape);
    return it->second;
  }
  void write(TextBuf& out) const {
    out += "\"strings\":[";
    for (size_t i = 0; i < string_list_.size(); ++i) {
      if (i) out += ',';
      put_string(out, string_list_[i]);
    }
    // [sizes, strides, dtype, layout label, layout class, bytes]
    out += "],\n\"shapes\":[";
    for (size_t i = 0; i < shape_list_.size(); ++i) {
      const TensorShape& s = *shape_list_[i];
      TensorInfo t;
      t.shape = &s;
      out += i ? ",[" : "[";
      put_string(out, dims_text(s.sizes));
      out += ',';
      put_string(out, s.strides.empty() ? std::string("(no strides)") : strides_text(s.strides));
      out += ',';
      put_string(out, s.dtype);
      out += ',';
      put_string(out, s.label);
      out += ',';
      put_string(out, layout_class_name(s.layout.cls));
      out += ',';
      put_int(out, t.bytes());
      out += ']';
    }
    out += "]";
  }

 private:
  std::unordered_map<std::string, int> strings_;
  std::vector<std::string> string_list_;
  std::unordered_map<const TensorShape*, int> shapes_;
  std::vector<const TensorShape*> shape_list_;
};

json run_json(const RunInfo& run) {
  json inputs = json::array();
  for (const ModelInput& in : run.inputs)
    inputs.push_back({{"spec", in.spec.text}, {"dtype", in.tensor.dtype()}, {"layout", in.tensor.label().str()}});
  json counters = json::array();
  for (const CounterStatus& c : run.counters)
    counters.push_back({{"event", c.event}, {"measured", c.measured}, {"reason", c.reason}, {"note", c.note},
                        {"mode", c.mode}, {"period", c.period}, {"samples", c.samples}, {"lost", c.lost}});
  return {{"model", run.model},
          {"inputs", inputs},
          {"torch", run.torch_version},
          {"layoutprof", run.layoutprof_version},
          {"device", run.device},
          {"gpu", run.gpu},
          {"threads", run.threads},
          {"warmup", run.warmup},
          {"calls", run.calls_recorded},
          {"calls_identical", run.calls_identical},
          {"status", run.status},
          {"error", run.error},
          {"backward", run.backward},
          {"max_ops", run.max_ops},
          {"ops_not_recorded", run.ops_not_recorded},
          {"counters", counters},
          {"measured", run.measured},
          {"not_measured", run.not_measured},
          {"bandwidth", run.bandwidth},
          {"bandwidth_note", run.bandwidth_note},
          {"tlb", run.tlb}};
}

json summary_json(const Report& r) {
  const Summary& s = r.summary;
  json copies = json::object(), bytes = json::object();
  for (int c = 0; c < kCopyClassCount; ++c) {
    copies[copy_class_name(static_cast<CopyClass>(c))] = s.copies[c];
    bytes[copy_class_name(static_cast<CopyClass>(c))] = s.copy_bytes[c];
  }
  json counters = json::array();
  const auto measured = r.run.measured_counters();
  for (size_t k = 0; k < measured.size() && k < s.counters.size(); ++k)
    counters.push_back({{"event", measured[k]->event}, {"value", s.counters[k].scaled},
                        {"multiplexed", s.counters[k].multiplexed}, {"mode", measured[k]->mode},
                        {"error", measured[k]->sampled() ? sampled_error(s.counters[k].raw, measured[k]->period) : 0.0}});
  return {{"ops", s.ops},
          {"top_level_ops", s.top_level_ops},
          {"wall_ns", s.wall_ns},
          {"copies", copies},
          {"copy_bytes", bytes},
          {"split_points", s.split_points},
          {"dtlb", {{"walks", s.dtlb.walks}, {"l1_misses", s.dtlb.l1_misses}, {"accesses", s.dtlb.accesses},
                    {"sampled", s.dtlb.sampled}}},
          {"gpu", {{"traced", s.gpu.traced}, {"gpu_ns", s.gpu.gpu_ns}, {"copy_gpu_ns", s.gpu.copy_gpu_ns},
                   {"kernels", s.gpu.kernels}}},
          {"counters", counters},
          {"grad_layout", s.grad_layout}};
}

// At most kMaxLaneText characters (a loop's row alternates layouts thousands of times), cut at
// a character boundary.
std::string clipped(std::string text) {
  if (text.size() <= kMaxLaneText) return text;
  size_t cut = kMaxLaneText;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

json heatmap_json(const HeatmapTable& t, GroupBy group_by) {
  json columns = json::array(), rows = json::array();
  for (const HeatmapColumn& c : t.columns) columns.push_back({{"title", c.title}, {"kind", c.kind}});
  for (size_t i = 0; i < t.rows.size(); ++i) {
    json values = json::array(), text = json::array();
    for (const HeatmapColumn& c : t.columns) {
      values.push_back(c.values[i]);
      text.push_back(c.text[i]);
    }
    rows.push_back({{"label", t.rows[i].label}, {"values", values}, {"text", text},
                    {"lane", clipped(flow_text(t.rows[i].transitions))}});
  }
  return {{"depth", t.depth}, {"group_by", group_by == GroupBy::op ? "op" : "module"},
          {"columns", columns}, {"rows", rows}, {"legend", t.legend}};
}

// Which op events the page holds: every one when they fit, else the top-level ones (as many as fit).
std::vector<bool> embedded_ops(const Report& r, bool& nested_left_out) {
  std::vector<bool> keep(r.ops.size(), r.ops.size() <= kMaxEmbeddedOps);
  nested_left_out = r.ops.size() > kMaxEmbeddedOps;
  if (!nested_left_out) return keep;
  size_t kept = 0;
  for (const OpEvent& op : r.ops)
    if (op.parent < 0 && kept < kMaxEmbeddedOps) keep[op.id] = true, ++kept;
  return keep;
}

// The op events as columns; `row`: each top-level op's heatmap row (-1 for nested ones).
void write_ops(TextBuf& out, const Report& r, const HeatmapTable& t, GroupBy group_by, Tables& tables) {
  bool nested_left_out = false;
  const std::vector<bool> keep = embedded_ops(r, nested_left_out);
  std::unordered_map<std::string, int> row_of;
  for (size_t i = 0; i < t.rows.size(); ++i) row_of.emplace(t.rows[i].label, static_cast<int>(i));
  std::vector<const OpEvent*> ops;
  for (const OpEvent& op : r.ops)
    if (keep[op.id]) ops.push_back(&op);
  auto column = [&](const char* name, auto value) {
    out += '"';
    out += name;
    out += "\":[";
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i) out += ',';
      put_int(out, value(*ops[i]));
    }
    out += "],\n";
  };
  auto tensor_column = [&](const char* name, auto list) {
    out += '"';
    out += name;
    out += "\":[";
    for (size_t i = 0; i < ops.size(); ++i) {
      out += i ? ",[" : "[";
      bool first = true;
      for (const TensorInfo& tensor : list(*ops[i])) {
        if (!first) out += ',';
        first = false;
        put_int(out, tables.shape_id(tensor));
      }
      out += ']';
    }
    out += "],\n";
  };
  out += "\"ops\":{\"count\":";
  put_int(out, static_cast<int64_t>(r.ops.size()));
  out += ",\"embedded\":";
  put_int(out, static_cast<int64_t>(ops.size()));
  out += ",\"nested_left_out\":";
  out += nested_left_out ? "true" : "false";
  out += ",\n";
  column("id", [](const OpEvent& op) { return static_cast<int64_t>(op.id); });
  column("parent", [](const OpEvent& op) { return static_cast<int64_t>(op.parent); });
  column("name", [&](const OpEvent& op) { return tables.string_id(op.name); });
  column("module", [&](const OpEvent& op) { return tables.string_id(op.module); });
  column("source", [&](const OpEvent& op) { return tables.string_id(op.source); });
  column("text", [&](const OpEvent& op) { return tables.string_id(op.source_text); });
  column("dur", [](const OpEvent& op) { return op.duration_ns; });
  column("failed", [](const OpEvent& op) { return static_cast<int64_t>(op.failed); });
  column("row", [&](const OpEvent& op) -> int64_t {
    if (op.parent >= 0) return -1;
    auto it = row_of.find(heatmap_row_label(r, op, group_by, t.depth));
    return it == row_of.end() ? -1 : it->second;
  });
  tensor_column("in", [](const OpEvent& op) -> const TensorList& { return op.inputs; });
  tensor_column("out", [](const OpEvent& op) -> const TensorList& { return op.outputs; });
  out += "\"end\":0}";
}

void write_copies(TextBuf& out, const Report& r, Tables& tables) {
  std::vector<size_t> order(r.copies.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (order.size() > kMaxEmbeddedCopies) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return r.copies[a].bytes > r.copies[b].bytes; });
    order.resize(kMaxEmbeddedCopies);
    std::sort(order.begin(), order.end());
  }
  // [op, culprit, origin, class, bytes, src shape, dst shape, DTLB walks, GPU ns]
  out += "\"copies\":{\"count\":";
  put_int(out, static_cast<int64_t>(r.copies.size()));
  out += ",\"rows\":[";
  for (size_t k = 0; k < order.size(); ++k) {
    const CopyRecord& c = r.copies[order[k]];
    out += k ? ",\n[" : "\n[";
    put_int(out, c.op);
    out += ',';
    put_int(out, c.culprit);
    out += ',';
    put_int(out, c.origin);
    out += ',';
    put_string(out, copy_class_name(c.cls));
    out += ',';
    put_int(out, c.bytes);
    out += ',';
    put_int(out, tables.shape_id(c.src));
    out += ',';
    put_int(out, tables.shape_id(c.dst));
    out += ',';
    put_int(out, c.dtlb.walks);
    out += ',';
    put_int(out, c.gpu_ns);
    out += ']';
  }
  out += "]}";
}

// [op, [kind...], before, after, copies, copy bytes, suggestion], texts as string ids; the
// split points are ranked (most bytes first): the first kMaxEmbeddedSplits of them.
void write_splits(TextBuf& out, const Report& r, Tables& tables) {
  out += "\"splits\":{\"count\":";
  put_int(out, static_cast<int64_t>(r.split_points.size()));
  out += ",\"rows\":[";
  const size_t n = std::min(r.split_points.size(), kMaxEmbeddedSplits);
  for (size_t i = 0; i < n; ++i) {
    const SplitPoint& sp = r.split_points[i];
    out += i ? ",\n[" : "\n[";
    put_int(out, sp.op);
    out += ",[";
    for (size_t k = 0; k < sp.kinds.size(); ++k) {
      if (k) out += ',';
      put_int(out, tables.string_id(sp.kinds[k]));
    }
    out += "],";
    put_int(out, tables.string_id(sp.before));
    out += ',';
    put_int(out, tables.string_id(sp.after));
    out += ',';
    put_int(out, sp.copies);
    out += ',';
    put_int(out, sp.copy_bytes);
    out += ',';
    put_int(out, tables.string_id(sp.suggestion));
    out += ']';
  }
  out += "]}";
}

json grads_json(const Report& r) {
  json grads = json::array();
  for (const ParamGrad& p : r.parameters)
    grads.push_back({{"name", p.name}, {"verdict", grad_verdict_name(p.verdict)}, {"sizes", dims_text(p.sizes)},
                     {"strides", strides_text(p.strides)}, {"grad_strides", strides_text(p.grad_strides)},
                     {"producer", p.producer}, {"suggestion", grad_suggestion(p)}});
  return grads;
}

const char* const kStyle = R"CSS(
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#fff; --panel:#f8f9fb; --accent:#2f6fde;
  --contiguous:#9ec5a8; --channels_last:#5b8def; --channels_last_3d:#3d6bd1; --permuted:#f0a04b;
  --strided:#d9534f; --broadcast:#a36bd6; --overlapping:#7a1f1f; --unknown:#b0b6c0; --none:#e9ecf1; }
* { box-sizing: border-box; }
body { margin:0; font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
#app { padding:18px 24px 48px; max-width:1600px; }
h1 { font-size:19px; margin:0 0 4px; } h2 { font-size:15px; margin:26px 0 8px; border-bottom:1px solid var(--line); padding-bottom:4px; }
.muted { color:var(--muted); } code, .mono { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:12px; }
.header { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:8px 0; }
.header .k { color:var(--muted); }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin:12px 0; }
.card { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:8px 12px; min-width:130px; }
.card .v { font-size:18px; font-weight:600; } .card .l { color:var(--muted); font-size:11px; }
.status-failed, .bad { color:#b42318; font-weight:600; } .good { color:#067647; font-weight:600; }
table { border-collapse:collapse; width:100%; }
th, td { padding:3px 8px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th { position:sticky; top:0; background:var(--panel); font-weight:600; cursor:default; }
th.sortable { cursor:pointer; } th.sortable:after { content:" ↕"; color:var(--muted); }
td.l, th.l { text-align:left; } td.wrap { white-space:normal; text-align:left; }
tr.hm-row { cursor:pointer; } tr.hm-row:hover td { outline:1px solid #c7d2fe; }
tr.hm-row td.l:before { content:"▸ "; color:var(--muted); } tr.hm-row.open td.l:before { content:"▾ "; }
tr.op-row td { background:#fbfcfe; font-size:12px; } tr.nested-row td { background:#f4f6fa; font-size:12px; }
.expander { cursor:pointer; color:var(--accent); }
.kind { color:var(--muted); font-weight:400; font-size:10px; display:block; }
.lane-wrap { overflow-x:auto; border:1px solid var(--line); border-radius:6px; background:var(--panel); }
#lane { display:block; }
.legend { display:flex; flex-wrap:wrap; gap:12px; margin:6px 0; }
.legend span:before { content:""; display:inline-block; width:11px; height:11px; margin-right:4px; vertical-align:-1px; border-radius:2px; background:var(--c); }
#tip { position:fixed; pointer-events:none; background:#101828; color:#fff; padding:7px 9px; border-radius:5px; font-size:12px; max-width:560px; display:none; z-index:10; white-space:pre-wrap; }
.split { border-left:3px solid var(--strided); padding:4px 10px; margin:8px 0; background:var(--panel); }
.tools { margin:6px 0; display:flex; gap:12px; align-items:center; }
.scroll { max-height:520px; overflow:auto; border:1px solid var(--line); border-radius:6px; }
.verdict { font-size:15px; margin:8px 0 2px; } #causes td.fix { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:12px; }
.note { background:#fffaeb; border:1px solid #fedf89; padding:6px 10px; border-radius:6px; margin:8px 0; }
)CSS";

const char* const kScript = R"JS(
"use strict";
(function () {
const D = JSON.parse(document.getElementById("layoutprof-data").textContent);
const app = document.getElementById("app");
const CLASSES = ["contiguous", "channels_last", "channels_last_3d", "permuted", "strided", "broadcast", "overlapping", "unknown"];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}
const mb = b => (b / 1e6).toFixed(3);
const ms = ns => (ns / 1e6).toFixed(3);
function td(text, cls) { return el("td", { class: cls || "", text: String(text) }); }
function section(title, ...kids) { app.append(el("h2", { text: title }), ...kids); }

if (D.kind === "comparison") { comparison(); return; }
if (D.kind === "formats") { formats(); return; }

const S = D.strings, SH = D.shapes, O = D.ops;
const pos = new Map();  // op id -> column position
O.id.forEach((id, i) => pos.set(id, i));
const str = i => S[i];
function shapeText(s) { const x = SH[s]; return x[0] + " " + x[2] + " strides " + x[1] + " " + x[3]; }
function opWhere(i) {
  let w = str(O.module[i]) || "(top)";
  if (str(O.source[i])) w += " at " + str(O.source[i]);
  return w;
}
// The layout class of the data an op produces: its first output's, else its first input's.
function opClass(i) {
  const t = O.out[i].length ? O.out[i][0] : (O.in[i].length ? O.in[i][0] : -1);
  return t < 0 ? "none" : SH[t][4];
}
function opTip(i) {
  const lines = [str(O.name[i]) + "  (op " + O.id[i] + ")", "module " + (str(O.module[i]) || "(top)")];
  if (str(O.source[i])) lines.push("at " + str(O.source[i]) + (str(O.text[i]) ? "\n    " + str(O.text[i]) : ""));
  O.in[i].forEach((t, k) => lines.push("in " + k + ":  " + shapeText(t)));
  O.out[i].forEach((t, k) => lines.push("out " + k + ": " + shapeText(t)));
  lines.push("time " + ms(O.dur[i]) + " ms (measured, median over calls)");
  return lines.join("\n");
}
const children = new Map();  // op id -> positions of its direct children (built on first use)
function childrenOf(id) {
  if (!children.size) O.parent.forEach((p, i) => { if (p >= 0) { if (!children.has(p)) children.set(p, []); children.get(p).push(i); } });
  return children.get(id) || [];
}

// --- header -----------------------------------------------------------------------------
const R = D.run, T = D.summary;
app.append(el("h1", { text: "layoutprof " + R.layoutprof + " — " + R.model }));
// --- verdict and causes, first: what to act on ----------------------------------------------
const V = D.verdict, call = R.backward ? "training step" : "forward";
{
  const imp = T.copies.implicit_layout, cops = n => n + " cop" + (n === 1 ? "y" : "ies");
  let text = imp === 0 ? "No implicit layout copies in a call" : cops(imp).replace("cop", "implicit layout cop") + " a call, " + mb(T.copy_bytes.implicit_layout) + " MB";
  if (imp > 0 && V.share) text += ", " + V.share + " of the " + call + "'s time (measured: the copies' own time, " + ms(V.implicit_ns) + " of " + ms(V.wall_ns) + " ms, " + (V.medians ? "medians over " + R.calls + " calls" : "one call") + ")";
  if (R.status !== "ok") text += ", up to where the call stopped";
  app.append(el("div", { id: "verdict", class: "verdict " + (imp ? "bad" : "good"), text: "Verdict: " + text }));
  const more = [];
  if (T.copies.explicit_layout) more.push("and " + cops(T.copies.explicit_layout).replace("cop", "explicit layout cop") + " the model asks for, " + mb(T.copy_bytes.explicit_layout) + " MB");
  const others = ["broadcast", "dtype_device", "same_layout"].filter(c => T.copies[c] > 0);
  const n = others.reduce((a, c) => a + T.copies[c], 0);
  if (n) more.push("and " + cops(n) + " that change" + (n === 1 ? "s" : "") + " no layout (" + others.map(c => T.copies[c] + " " + c).join(", ") + "), " + mb(others.reduce((a, c) => a + T.copy_bytes[c], 0)) + " MB");
  if (V.copy_gpu_ns >= 0 && V.gpu_share) more.push("on the GPU, layout-copy kernels took " + V.gpu_share + " of the kernels' time (measured, CUPTI: " + ms(V.copy_gpu_ns) + " of " + ms(V.gpu_ns) + " ms)");
  more.forEach(m => app.append(el("div", { class: "muted", text: m })));
}
if (V.causes.length) {
  const list = (a, k) => a.length <= k ? a.join(", ") : a.slice(0, k).join(", ") + " and " + (a.length - k) + " more";
  const ct = el("table", { id: "causes" }, el("thead", {}, el("tr", {}, ...["", "copies", "MB", "ms (measured)", "cause", "where", "fix"].map(h => el("th", { class: h === "copies" || h === "MB" || h.startsWith("ms") ? "" : "l", text: h })))));
  const cb = el("tbody");
  V.causes.forEach((k, i) => {
    const where = "in " + list(k.modules.map(m => m || "(top)"), 4) + (k.sources.length ? " at " + list(k.sources, 2) : "") + (k.origin_sources.length ? " (made at " + list(k.origin_sources, 2) + ")" : "");
    cb.append(el("tr", { class: "cause-row" }, td(i + 1), td(k.copies + " " + k.class.replace("_layout", "")), td(mb(k.bytes)), td(k.time_ns > 0 ? ms(k.time_ns) : "-"), td(k.what, "wrap"), td(where, "wrap mono"), td("→ " + k.fix, "wrap fix")));
  });
  ct.append(cb);
  section("Causes of the layout copies, grouped: " + V.causes.length + (V.causes.length === 1 ? " cause" : " causes") + ", most bytes first", el("div", { class: "scroll" }, ct));
}
section("Run: what was measured, derived and modelled");
const hdr = el("div", { class: "header" });
const hline = (k, v, cls) => hdr.append(el("div", { class: "k", text: k }), el("div", { class: cls || "", text: v }));
R.inputs.forEach((x, i) => hline("input " + i, x.spec + "  (" + x.dtype + ", " + x.layout + ")"));
hline("run", R.device + ", " + R.threads + " threads, LibTorch " + R.torch + ", warm-up " + R.warmup + ", recorded calls " + R.calls +
  (R.calls_identical ? " (same op sequence)" : " (calls DIFFER: op list is one call)"));
hline("status", R.status + (R.error ? ": " + R.error : ""), "status-" + R.status);
R.measured.forEach(m => hline("measured", m));
R.counters.filter(c => c.measured).forEach(c => hline("counter", c.event + (c.note ? " (" + c.note + ")" : "") +
  (c.mode === "sampled" ? ": sampled, one every " + c.period + " (" + c.samples + " samples, " + c.lost + " lost)" : ": measured")));
R.counters.filter(c => !c.measured).forEach(c => hline("not measured", c.event + ": " + c.reason));
R.not_measured.forEach(m => hline("not measured", m));
hline("derived", "copies, bytes, split points and layout classes, from the recorded tensor metadata");
hline("bandwidth", R.bandwidth + (R.bandwidth_note ? " (" + R.bandwidth_note + ")" : ""));
hline("modelled", "DTLB walks of every copy's addresses, two-level LRU TLB " + R.tlb);
if (R.gpu) hline("gpu", R.gpu + ": kernel, memcpy and memset times through CUPTI (measured)");
app.append(hdr);
if (R.ops_not_recorded > 0) app.append(el("div", { class: "note", text: "Recording stopped at --max-ops " + R.max_ops + ": " + R.ops_not_recorded + " op events of the call were not recorded; the figures cover the call up to there." }));
if (O.embedded < O.count) app.append(el("div", { class: "note", text: "This page holds " + O.embedded + " of the call's " + O.count + " op events (" + (O.nested_left_out ? "top-level ops only" : "") + "); the JSON report has every one." }));

const implicit = T.copies.implicit_layout, allBytes = Object.values(T.copy_bytes).reduce((a, b) => a + b, 0);
const cards = el("div", { class: "cards" });
const card = (v, l) => cards.append(el("div", { class: "card" }, el("div", { class: "v", text: v }), el("div", { class: "l", text: l })));
card(T.ops, "op events in one call (" + T.top_level_ops + " top-level)");
card(ms(T.wall_ns) + " ms", (R.backward ? "training step" : "forward") + ", measured, median of " + R.calls);
card(implicit, "implicit layout copies (derived)");
card(T.copies.explicit_layout, "explicit layout copies (derived)");
card(mb(allBytes) + " MB", "copied, all classes (derived)");
card(T.split_points, "split points (derived)");
card(T.dtlb.walks, "DTLB walks (modelled)");
if (T.gpu.traced) card(ms(T.gpu.gpu_ns) + " ms", "GPU time (measured, CUPTI)");
T.counters.forEach(c => card(c.value.toPrecision(4) + (c.mode === "sampled" ? " ± " + c.error.toPrecision(2) : ""),
  c.event + (c.mode === "sampled" ? " (sampled estimate" : " (measured") + (c.multiplexed ? ", multiplexed" : "") + ")"));
app.append(cards);

// --- layout lane ---------------------------------------------------------------------------
const top = [];
O.parent.forEach((p, i) => { if (p < 0) top.push(i); });
// Split points: [op, [kind], before, after, copies, copy bytes, suggestion] over the string table.
const splits = D.splits.rows.map(x => ({ op: x[0], kinds: x[1].map(k => S[k]), before: S[x[2]], after: S[x[3]], copies: x[4], copy_bytes: x[5], suggestion: S[x[6]] }));
const splitAt = new Set(splits.map(s => s.op));
const copyBytesAt = new Map();  // top-level op id -> bytes its copies moved
{
  const topOf = id => { let i = pos.get(id); while (i !== undefined && O.parent[i] >= 0) i = pos.get(O.parent[i]); return i === undefined ? -1 : O.id[i]; };
  D.copies.rows.forEach(c => { const t = topOf(c[0]); copyBytesAt.set(t, (copyBytesAt.get(t) || 0) + c[4]); });
}
section("Layout lane: top-level ops in execution order",
  el("div", { class: "muted", text: "Each op is coloured by the layout of the data it produces; ▼ marks a split point; bars below show the bytes its copies moved, to scale. Hover for the op." }));
const legend = el("div", { class: "legend" });
CLASSES.forEach(c => legend.append(el("span", { style: "--c:var(--" + c + ")", text: c })));
app.append(legend);
const laneWrap = el("div", { class: "lane-wrap" });
const canvas = el("canvas", { id: "lane" });
laneWrap.append(canvas);
app.append(laneWrap);
const tip = el("div", { id: "tip" });
document.body.append(tip);
const css = getComputedStyle(document.documentElement);
const colour = c => css.getPropertyValue("--" + c).trim() || "#ccc";
const laneW = Math.max(600, Math.min(30000, Math.max(laneWrap.clientWidth, top.length * 3)));
const laneH = 96, bandY = 14, bandH = 40, barTop = 60, barH = 32;
function drawLane() {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = laneW * dpr; canvas.height = laneH * dpr;
  canvas.style.width = laneW + "px"; canvas.style.height = laneH + "px";
  const g = canvas.getContext("2d");
  g.scale(dpr, dpr);
  const n = Math.max(top.length, 1), w = laneW / n;
  let maxBytes = 1;
  copyBytesAt.forEach(b => { maxBytes = Math.max(maxBytes, b); });
  top.forEach((i, k) => {
    const x = k * w;
    g.fillStyle = colour(opClass(i)); g.fillRect(x, bandY, w >= 4 ? w - 1 : Math.max(w, 1), bandH);
    if (splitAt.has(O.id[i])) { g.fillStyle = colour("strided"); g.beginPath(); g.moveTo(x + w / 2 - 5, 2); g.lineTo(x + w / 2 + 5, 2); g.lineTo(x + w / 2, bandY - 1); g.fill(); }
    const b = copyBytesAt.get(O.id[i]);
    if (b) { g.fillStyle = "#344054"; const h = Math.max(2, barH * b / maxBytes); g.fillRect(x, barTop, Math.max(w, 1.5), h); }
  });
}
drawLane();
canvas.addEventListener("mousemove", ev => {
  const r = canvas.getBoundingClientRect();
  const k = Math.floor((ev.clientX - r.left) / laneW * top.length);
  if (k < 0 || k >= top.length) { tip.style.display = "none"; return; }
  const i = top[k], b = copyBytesAt.get(O.id[i]);
  tip.textContent = opTip(i) + (splitAt.has(O.id[i]) ? "\nsplit point" : "") + (b ? "\ncopies: " + mb(b) + " MB" : "");
  tip.style.display = "block";
  tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 570) + "px";
  tip.style.top = (ev.clientY + 14) + "px";
});
canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });

// --- heatmap -------------------------------------------------------------------------------
const H = D.heatmap;
section("Heatmap: " + (H.group_by === "op" ? "top-level ops" : "modules at depth " + H.depth) + " in execution order",
  el("div", { class: "muted", text: "Each cell is shaded by its value relative to its column. Click a row for its ops, an op for its nested ops. (" + H.legend + ")" }));
const colMax = H.columns.map((c, k) => H.rows.reduce((m, r) => Math.max(m, r.values[k]), 0));
const hm = el("table", { id: "heatmap" });
const hhead = el("tr", {}, el("th", { class: "l", text: H.group_by === "op" ? "op" : "module" }));
H.columns.forEach(c => hhead.append(el("th", {}, c.title, el("span", { class: "kind", text: c.kind }))));
hhead.append(el("th", { class: "l", text: "layout lane" }));
hm.append(el("thead", {}, hhead));
const hbody = el("tbody");
const rowOps = H.rows.map(() => []);
top.forEach(i => { if (O.row[i] >= 0) rowOps[O.row[i]].push(i); });
function opRow(i, nested, depth) {
  const tr = el("tr", { class: nested ? "nested-row" : "op-row" });
  const name = el("td", { class: "l mono" });
  name.style.paddingLeft = (18 + 14 * depth) + "px";
  const kids = childrenOf(O.id[i]);
  if (kids.length) name.append(el("span", { class: "expander", text: "▸ " }));
  name.append(str(O.name[i]));
  tr.append(name);
  const cell = el("td", { class: "wrap mono", colspan: String(H.columns.length + 1) });
  cell.textContent = opWhere(i) + "  |  in " + (O.in[i].map(shapeText).join("; ") || "-") + "  →  out " + (O.out[i].map(shapeText).join("; ") || "-") + "  |  " + ms(O.dur[i]) + " ms";
  tr.append(cell);
  tr.addEventListener("click", ev => {
    ev.stopPropagation();
    if (!kids.length) return;
    if (tr.dataset.open) { tr.dataset.open = ""; let n = tr.nextSibling; while (n && n.dataset.under === String(O.id[i])) { const x = n.nextSibling; n.remove(); n = x; } return; }
    tr.dataset.open = "1";
    let after = tr;
    kids.forEach(k => { const c = opRow(k, true, depth + 1); c.dataset.under = String(O.id[i]); after.after(c); after = c; });
  });
  return tr;
}
H.rows.forEach((row, r) => {
  const tr = el("tr", { class: "hm-row", "data-row": String(r) }, td(row.label, "l"));
  row.values.forEach((v, k) => {
    const c = td(row.text[k]);
    const share = colMax[k] > 0 ? v / colMax[k] : 0;
    if (share > 0) c.style.background = "rgba(229, 83, 60, " + (0.08 + 0.6 * share).toFixed(3) + ")";
    tr.append(c);
  });
  tr.append(td(row.lane, "l mono"));
  tr.addEventListener("click", () => {
    if (tr.classList.toggle("open")) {
      let after = tr;
      const ops = rowOps[r];
      const shown = ops.slice(0, 2000);
      shown.forEach(i => { const o = opRow(i, false, 0); o.dataset.row = String(r); after.after(o); after = o; });
      if (ops.length > shown.length) { const more = el("tr", { class: "op-row" }, el("td", { class: "l muted", colspan: String(H.columns.length + 2), text: (ops.length - shown.length) + " more ops in this row (the JSON report has them)" })); more.dataset.row = String(r); after.after(more); }
    } else {
      let n = tr.nextSibling;
      while (n && !n.classList.contains("hm-row")) { const x = n.nextSibling; n.remove(); n = x; }
    }
  });
  hbody.append(tr);
});
hm.append(hbody);
app.append(el("div", { class: "scroll" }, hm));

// --- split points --------------------------------------------------------------------------
const groups = V.split_groups;
section("Split points (where the layout of the data changes): " + D.splits.count + (groups.length < splits.length ? " in " + groups.length + " groups of the same cause and suggestion" : "") + (groups.length > 50 ? ", the 50 with the most bytes copied first" : ""));
const splitBox = el("div", { id: "splits" });
app.append(splitBox);
function drawSplit(g, k) {
  const s = splits[g.points[0]], i = pos.get(s.op);
  const box = el("div", { class: "split" });
  const name = el("b", { text: (k + 1) + ". " + (i === undefined ? "op " + s.op : str(O.name[i])) });
  if (g.points.length === 1) box.append(el("div", {}, name, " in " + (i === undefined ? "?" : opWhere(i))));
  else box.append(el("div", {}, name, " at " + g.points.length + " places, same cause and suggestion: " + g.points.map(p => { const j = pos.get(splits[p].op); return j === undefined ? "op " + splits[p].op : opWhere(j); }).filter((w, n, a) => a.indexOf(w) === n).join("; ")));
  if (i !== undefined && str(O.text[i])) box.append(el("div", { class: "mono", text: str(O.text[i]) }));
  box.append(el("div", { class: "mono", text: s.before + " → " + s.after + "  [" + s.kinds.join(", ") + "]  leads to " + g.copies + " layout cop" + (g.copies === 1 ? "y" : "ies") + ", " + mb(g.copy_bytes) + " MB" + (g.points.length > 1 ? " together" : "") }));
  box.append(el("div", { text: "→ " + s.suggestion }));
  splitBox.append(box);
}
groups.slice(0, 50).forEach(drawSplit);
if (groups.length > 50) {
  const more = el("button", { id: "more-splits", text: "show " + (splits.length < D.splits.count ? "the first " : "all ") + splits.length + " split points" });
  more.addEventListener("click", () => { more.remove(); groups.slice(50).forEach((g, k) => drawSplit(g, k + 50)); });
  app.append(more);
}

// --- copies --------------------------------------------------------------------------------
section("Copies: " + D.copies.count + (D.copies.rows.length < D.copies.count ? " (the " + D.copies.rows.length + " largest shown)" : ""));
const filter = el("select", { id: "copy-filter" }, el("option", { value: "", text: "every class" }));
["implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout"].forEach(c => filter.append(el("option", { value: c, text: c + " (" + T.copies[c] + ")" })));
app.append(el("div", { class: "tools" }, "class ", filter, el("span", { class: "muted", text: "click MB or DTLB walks to sort" })));
const ct = el("table", { id: "copies" });
const heads = ["#", "class", "copy made by", "module and source", "source → destination", "MB", "DTLB walks"];
if (T.gpu.traced) heads.push("GPU ms");
const chead = el("tr");
heads.forEach((h, k) => chead.append(el("th", { class: (k >= 5 ? "sortable" : "l"), text: h, "data-col": String(k) })));
ct.append(el("thead", {}, chead));
const cbody = el("tbody");
ct.append(cbody);
let copies = D.copies.rows.map((c, k) => ({ c, k }));
// The first 1,000 rows of the order and filter chosen are drawn; the rest when asked.
let copyLimit = 1000;
const moreCopies = el("button", { id: "more-copies", onclick: () => { copyLimit = Infinity; drawCopies(); } });
function drawCopies() {
  cbody.textContent = "";
  const chosen = copies.filter(x => !filter.value || x.c[3] === filter.value);
  moreCopies.textContent = "show all " + chosen.length + " copies";
  moreCopies.style.display = chosen.length > copyLimit ? "" : "none";
  chosen.slice(0, copyLimit).forEach(({ c, k }) => {
    const culprit = pos.get(c[1]);
    const tr = el("tr", { class: "copy-row" }, td(k + 1), td(c[3], "l"), td(culprit === undefined ? "op " + c[1] : str(O.name[culprit]), "l mono"),
      td(culprit === undefined ? "" : opWhere(culprit), "l"), td(shapeText(c[5]) + "  →  " + SH[c[6]][3], "l mono"), td(mb(c[4])), td(c[7]));
    if (T.gpu.traced) tr.append(td(c[8] >= 0 ? ms(c[8]) : "-"));
    cbody.append(tr);
  });
}
filter.addEventListener("change", drawCopies);
let sortDir = -1;
chead.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => {
  const key = { 5: 4, 6: 7, 7: 8 }[th.dataset.col];
  sortDir = -sortDir;
  copies.sort((a, b) => sortDir * (a.c[key] - b.c[key]));
  drawCopies();
}));
drawCopies();
app.append(el("div", { class: "scroll" }, ct), moreCopies);

// --- gradient layouts ----------------------------------------------------------------------
if (R.backward) {
  section("Gradient layouts (what DDP will see): " + D.grads.length + " parameters");
  const gt = el("table", { id: "grads" }, el("thead", {}, el("tr", {}, ...["parameter", "verdict", "sizes", "strides", "gradient strides", "what it means"].map(h => el("th", { class: "l", text: h })))));
  const gb = el("tbody");
  D.grads.forEach(g => gb.append(el("tr", {}, td(g.name, "l mono"), td(g.verdict, "l " + (g.verdict === "match" ? "good" : g.verdict === "frozen" || g.verdict === "no_grad" ? "" : "bad")),
    td(g.sizes, "l mono"), td(g.strides, "l mono"), td(g.grad_strides, "l mono"), td(g.suggestion, "wrap"))));
  gt.append(gb);
  app.append(el("div", { class: "scroll" }, gt));
}
// When the page finished drawing, from the start of navigation (scripts/bench-html.py reads it).
document.body.dataset.drawnMs = performance.now().toFixed(1);

// --- compare-formats: the variants side by side ---------------------------------------------
function formats() {
  const V = D.variants;
  app.append(el("h1", { text: "layoutprof compare-formats — " + D.model }));
  app.append(el("div", { id: "verdict", class: D.verdict.clear ? "good" : "", text: D.verdict.summary }));
  const vt = el("table", { id: "variants" }, el("thead", {}, el("tr", {}, ...["variant", "status", "inputs", "converted", "plain calls", "median ms", "min–max ms", "IQR ms (q1–q3)", "against the fastest"].map(h => el("th", { class: "l", text: h })))));
  const vb = el("tbody");
  V.forEach(v => {
    const c = v.conversion, t = v.time;
    const vs = D.verdict.against.find(a => a.variant === v.name);
    vb.append(el("tr", { class: "variant-row" }, td(v.name, "l mono"),
      td(v.ran ? v.status + (v.error ? ": " + v.error : "") : "not run: " + v.skipped, "l " + (v.ok ? "" : "bad")),
      td(v.inputs.join(", "), "l mono"),
      td(c.to ? c.parameters + " of " + c.parameters_total + " parameters, " + c.buffers + " of " + c.buffers_total + " buffers, " + c.inputs + " inputs to " + c.to : "nothing (as given)", "l"),
      td(t.calls), td(t.calls ? ms(t.median) : "-"), td(t.calls ? ms(t.min) + "–" + ms(t.max) : "-"),
      td(t.calls ? ms(t.q3 - t.q1) + " (" + ms(t.q1) + "–" + ms(t.q3) + ")" : "-"),
      td(v.name === D.verdict.fastest ? "fastest" : vs ? vs.ratio.toFixed(2) + "x, +" + ms(vs.difference_ns) + " ms, " + (vs.beyond_noise ? "beyond noise" : "within noise") : "", "l " + (vs && vs.beyond_noise ? "bad" : ""))));
  });
  vt.append(vb);
  section("Variants (plain calls measured without the observer, interleaved across the variants)", el("div", { class: "scroll" }, vt));
  const notes = [...D.verdict.against.map(a => a.variant + ": " + a.why), ...D.verdict.not_timed];
  if (D.verdict.control) notes.push("control: " + D.verdict.control);
  notes.push("noise rule: a difference counts when both variants have at least 5 plain calls, their interquartile ranges do not overlap, and their medians differ by more than either variant's interquartile range");
  app.append(el("ul", {}, ...notes.map(n => el("li", { text: n }))));

  const figs = ["implicit", "MB copied", "MB layout", "split points"];
  const mt = el("table", { id: "format-modules" });
  const h1 = el("tr", {}, el("th", { class: "l", text: "module (depth " + D.depth + ")" }));
  V.forEach(v => h1.append(el("th", { colspan: "4", text: v.name })));
  const h2 = el("tr", {}, el("th", { class: "l", text: "" }));
  V.forEach(() => figs.forEach(f => h2.append(el("th", { text: f }))));
  mt.append(el("thead", {}, h1, h2));
  const mbody = el("tbody");
  const colMax = [0, 0, 0, 0];
  V.forEach(v => v.rows.forEach(r => r.forEach((x, k) => { colMax[k] = Math.max(colMax[k], x); })));
  D.labels.forEach((label, i) => {
    const tr = el("tr", { class: "format-row" }, td(label, "l mono"));
    V.forEach(v => {
      const r = v.rows[i];
      [0, 1, 2, 3].forEach(k => {
        const c = td(!r ? "-" : k === 1 || k === 2 ? mb(r[k]) : r[k]);
        if (r && colMax[k] > 0 && r[k] > 0 && label !== "(total)") c.style.background = "rgba(229, 83, 60, " + (0.08 + 0.6 * r[k] / colMax[k]).toFixed(3) + ")";
        tr.append(c);
      });
    });
    mbody.append(tr);
  });
  mt.append(mbody);
  section("Copies per module and variant (derived)", el("div", { class: "scroll" }, mt));

  D.verdict.copies.forEach(d => {
    const ct = el("table", { class: "copy-changes", "data-variant": d.variant }, el("thead", {}, el("tr", {}, ...["", "class", "op", "module", "source", "layouts", "copies", "MB"].map(h => el("th", { class: "l", text: h })))));
    const cb = el("tbody");
    [["adds", d.added], ["avoids", d.avoided], ["resizes", d.resized]].forEach(([what, list]) => list.forEach(k => cb.append(el("tr", { class: "copy-change " + what },
      td(what, "l " + (what === "adds" ? "bad" : what === "avoids" ? "good" : "")), td(k.class, "l"), td(k.op, "l mono"), td(k.module, "l mono"),
      td(k.source + (k.source_text ? "  " + k.source_text : ""), "wrap mono"), td(k.src + " → " + k.dst, "l mono"),
      td(k.count[0] + " → " + k.count[1]), td(mb(k.bytes[0]) + " → " + mb(k.bytes[1]))))));
    ct.append(cb);
    section(d.variant + " against as_given: adds " + d.added.length + " copy groups (" + mb(d.added_bytes) + " MB), avoids " + d.avoided.length + " (" + mb(d.avoided_bytes) + " MB)",
      d.added.length + d.avoided.length + d.resized.length ? el("div", { class: "scroll" }, ct) : el("div", { class: "muted", text: "the same copies as as_given" }));
  });
  document.body.dataset.drawnMs = performance.now().toFixed(1);
}

// --- a comparison --------------------------------------------------------------------------
function comparison() {
  app.append(el("h1", { text: "layoutprof: " + D.base + " → " + D.new }));
  const failed = D.checks.filter(k => !k.passed);
  app.append(el("div", { class: failed.length ? "bad" : "good", id: "verdict",
    text: failed.length ? "REGRESSED: " + failed.length + " of " + D.checks.length + " checks failed" : "OK: " + D.checks.length + " checks passed" }));
  const checks = el("table", { id: "checks" }, el("thead", {}, el("tr", {}, ...["", "scope", "rule", "baseline", "new", "what changed"].map(h => el("th", { class: "l", text: h })))));
  const cb = el("tbody");
  failed.concat(D.checks.filter(k => k.passed)).forEach(k => cb.append(el("tr", { class: k.passed ? "check-pass" : "check-fail" },
    td(k.passed ? "ok" : "REGRESSION", "l " + (k.passed ? "good" : "bad")), td(k.scope, "l mono"), td(k.rule, "l"), td(k.before), td(k.after), td(k.detail, "wrap"))));
  checks.append(cb);
  section("Checks, regressions first", el("div", { class: "scroll" }, checks));
  if (D.notes.length) section("Notes", el("ul", {}, ...D.notes.map(n => el("li", { text: n }))));
  const figs = [["implicit_copies", "implicit copies", String], ["explicit_copies", "explicit copies", String], ["copy_bytes", "MB copied", mb],
    ["split_points", "split points", String], ["dtlb_walks", "DTLB walks", String], ["time_ns", "time ms", ms]];
  const mt = el("table", { id: "modules" });
  const h1 = el("tr", {}, el("th", { class: "l", text: "module" }));
  figs.forEach(f => h1.append(el("th", { text: f[1] + " (baseline | new)" })));
  mt.append(el("thead", {}, h1));
  const mbody = el("tbody");
  const worse = d => figs.slice(0, 5).some(f => d[f[0]][1] > d[f[0]][0]);
  D.modules.slice().sort((a, b) => worse(b) - worse(a)).forEach(d => {
    const tr = el("tr", { class: "module-row" }, td((d.module || "(top)") + (!d.in_base ? " (new)" : !d.in_new ? " (removed)" : ""), "l mono"));
    figs.forEach(f => { const [a, b] = d[f[0]]; const c = td(f[2](a) + " | " + f[2](b)); if (f[0] !== "time_ns" && b > a) c.className = "bad"; else if (f[0] !== "time_ns" && b < a) c.className = "good"; tr.append(c); });
    mbody.append(tr);
  });
  mt.append(mbody);
  section("Modules side by side, regressions first", el("div", { class: "muted", text: "copies, MB and split points derived, DTLB walks modelled, time measured" }), el("div", { class: "scroll" }, mt));
  document.body.dataset.drawnMs = performance.now().toFixed(1);
}
})();
)JS";

void write_page(std::ostream& out, const std::string& title, const TextBuf& data) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << xml_escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
      << "<div id=\"app\"><noscript>This layoutprof report draws itself with JavaScript.</noscript></div>\n"
      << "<script type=\"application/json\" id=\"layoutprof-data\">";
  data.write_to(out);
  out << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
}

class HtmlReporter : public Reporter {
 public:
  std::string name() const override { return "html"; }
  bool writes_reports() const override { return true; }
  bool writes_comparisons() const override { return true; }

  void write(std::ostream& out, const Report& r, const ReporterOptions& o) const override {
    require_whole_report(r);
    const HeatmapTable table = heatmap_table(r, o.group_by, o.depth);
    Tables tables;
    TextBuf data;
    data += "{\"kind\":\"report\",\n\"run\":";
    data += script_safe(dump_compact(run_json(r.run)));
    data += ",\n\"summary\":";
    data += script_safe(dump_compact(summary_json(r)));
    data += ",\n\"heatmap\":";
    data += script_safe(dump_compact(heatmap_json(table, o.group_by)));
    data += ",\n\"verdict\":";
    data += script_safe(dump_compact(verdict_json(r, kMaxEmbeddedSplits)));
    data += ",\n\"grads\":";
    data += script_safe(dump_compact(grads_json(r)));
    data += ",\n\"backward_from\":";
    put_int(data, r.backward_from);
    data += ",\n";
    write_ops(data, r, table, o.group_by, tables);
    data += ",\n";
    write_copies(data, r, tables);
    data += ",\n";
    write_splits(data, r, tables);
    data += ",\n";
    tables.write(data);
    data += "}";
    write_page(out, "layoutprof: " + r.run.model, data);
  }

  void write(std::ostream& out, const Comparison& c, const ReporterOptions& o) const override {
    json doc = comparison_json(c);  // what --format json writes
    doc["kind"] = "comparison";
    doc["table"] = o.diff_table;
    TextBuf data;
    data += script_safe(dump_compact(doc));
    write_page(out, "layoutprof: " + c.base_name + " vs " + c.new_name, data);
  }

  bool writes_format_comparisons() const override { return true; }
  void write(std::ostream& out, const FormatComparison& c, const ReporterOptions&) const override {
    auto row = [](const FormatRow& r) {
      return json::array({r.implicit_copies, r.copy_bytes, r.layout_copy_bytes, r.split_points});
    };
    json variants = json::array();
    for (size_t i = 0; i < c.variants.size(); ++i) {
      const FormatVariant& v = c.variants[i];
      const RunInfo& run = v.report.run;
      json rows = json::array();
      if (i < c.rows.size())
        for (const FormatRow& r : c.rows[i]) rows.push_back(row(r));
      json inputs = json::array();
      for (const ModelInput& in : run.inputs) inputs.push_back(in.spec.text);
      variants.push_back({{"name", v.name}, {"ran", v.ran}, {"ok", v.ok()}, {"skipped", v.skipped},
                          {"status", run.status}, {"error", run.error}, {"inputs", inputs},
                          {"same_as_given", v.same_as_given()},
                          {"conversion", {{"to", run.conversion.to}, {"parameters", run.conversion.parameters},
                                          {"parameters_total", run.conversion.parameters_total},
                                          {"buffers", run.conversion.buffers},
                                          {"buffers_total", run.conversion.buffers_total},
                                          {"inputs", run.conversion.inputs}}},
                          {"time", {{"calls", v.time.calls}, {"min", v.time.min_ns}, {"q1", v.time.q1_ns},
                                    {"median", v.time.median_ns}, {"q3", v.time.q3_ns}, {"max", v.time.max_ns}}},
                          {"rows", rows}});
    }
    auto change = [](const CopyChange& k) {
      const CopyGroup& g = k.group;
      return json{{"class", copy_class_name(g.cls)}, {"op", g.op}, {"module", g.module.empty() ? "(top)" : g.module},
                  {"source", g.source}, {"source_text", g.source_text}, {"src", g.src_layout}, {"dst", g.dst_layout},
                  {"count", {k.count_before, k.count_after}}, {"bytes", {k.bytes_before, k.bytes_after}}};
    };
    json copies = json::array();
    for (const CopyDelta& d : c.verdict.copies) {
      json entry = {{"variant", d.variant}, {"added", json::array()}, {"avoided", json::array()},
                    {"resized", json::array()}, {"added_bytes", d.added_bytes()}, {"avoided_bytes", d.avoided_bytes()}};
      for (const CopyChange& k : d.added) entry["added"].push_back(change(k));
      for (const CopyChange& k : d.avoided) entry["avoided"].push_back(change(k));
      for (const CopyChange& k : d.resized) entry["resized"].push_back(change(k));
      copies.push_back(entry);
    }
    json against = json::array();
    for (const TimeAgainstFastest& t : c.verdict.against)
      against.push_back({{"variant", t.variant}, {"ratio", t.ratio}, {"difference_ns", t.difference_ns},
                         {"beyond_noise", t.beyond_noise}, {"why", t.why}});
    json labels = c.labels;
    labels.push_back("(total)");
    const FormatVerdict& v = c.verdict;
    json doc = {{"kind", "formats"}, {"model", c.model}, {"depth", c.depth}, {"labels", labels},
                {"variants", variants},
                {"verdict", {{"fastest", v.fastest}, {"clear", v.clear}, {"summary", v.summary},
                             {"against", against}, {"not_timed", v.not_timed}, {"control", v.control},
                             {"control_failed", v.control_failed}, {"copies", copies}}}};
    TextBuf data;
    data += script_safe(dump_compact(doc));
    write_page(out, "layoutprof compare-formats: " + c.model, data);
  }
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace layoutprof
