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
// The page's CSS and JavaScript are src/report/html/page.css and page.js (html_assets.h).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/grads.h"
#include "support/format.h"
#include "analysis/analysis.h"
#include "report/comparison_text.h"
#include "analysis/format_comparison.h"
#include "report/reporter.h"
#include "report/text_report.h"
#include "report/comparison_json.h"
#include "report/html_assets.h"
#include "report/json_out.h"
#include "report/markup.h"
#include "report/compiled_json.h"
#include "report/hazard_json.h"
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
                        {"mode", to_string(c.mode)}, {"period", c.period}, {"samples", c.samples}, {"lost", c.lost}});
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
          {"mode", mode_line(run.model_mode)},
          {"status", to_string(run.status)},
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
                        {"multiplexed", s.counters[k].multiplexed}, {"mode", to_string(measured[k]->mode)},
                        {"error", measured[k]->error(s.counters[k])}});
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
                    {"lane", clip(lane_text(t.rows[i]), kMaxLaneText)}});
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

// The stylesheet and script are the files' text, each after a line end of its own.
void write_page(std::ostream& out, const std::string& title, const TextBuf& data) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << xml_escape(title) << "</title>\n<style>\n" << kHtmlPageStyle << "</style>\n</head>\n<body>\n"
      << "<div id=\"app\"><noscript>This layoutprof report draws itself with JavaScript.</noscript></div>\n"
      << "<script type=\"application/json\" id=\"layoutprof-data\">";
  data.write_to(out);
  out << "</script>\n<script>\n" << kHtmlPageScript << "</script>\n</body>\n</html>\n";
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
    data += ",\n\"hazards\":";
    nlohmann::json hazards = nlohmann::json::array();
    for (const Hazard& h : r.hazards) hazards.push_back(hazard_json(h));
    data += script_safe(dump_compact(hazards));
    if (r.compiled.seen) {
      data += ",\n\"compiled\":";
      data += script_safe(dump_compact(compiled_json(r.compiled)));
    }
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
                          {"status", to_string(run.status)}, {"error", run.error}, {"inputs", inputs},
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
