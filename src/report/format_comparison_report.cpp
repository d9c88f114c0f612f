#include "report/format_comparison_report.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <utility>

#include "support/format.h"
#include "support/errors.h"
#include "report/backend_text.h"
#include "report/json_report.h"
#include "report/json_out.h"
#include "report/what_if_json.h"

namespace layoutprof {

namespace {

using nlohmann::json;

// How the variants' times are judged, in words (the what-if's rule).
const char* const kNoiseRule =
    "the variants are timed in interleaved rounds (as_given, each variant, as_given again); a variant differs "
    "from the fastest when the order-statistic interval of their paired per-round difference excludes 0 (95%, "
    "corrected for the number of pairs), and only while as_given against itself stays within noise";

std::string against_words(Saving s) {
  switch (s) {
    case Saving::slower: return "beyond noise";
    case Saving::not_judged: return "not judged (too few rounds)";
    case Saving::withheld: return "not judged (noisy control)";
    case Saving::faster:
    case Saving::within_noise: break;
  }
  return "within noise";
}

// What became of a variant, in a few words: ok, or why it has no figures.
std::string variant_state(const FormatVariant& v) {
  if (!v.ran) return "not run: " + v.skipped;
  const RunInfo& run = v.report.run;
  if (run.status == RunStatus::failed) return "could not run: " + bounded(run.error, 400);
  if (run.status != RunStatus::ok) return to_string(run.status) + (run.error.empty() ? "" : ": " + run.error);
  return "ok";
}

std::string input_texts(const FormatVariant& v) {
  std::string text;
  for (const ModelInput& in : v.report.run.inputs) text += (text.empty() ? "" : ", ") + in.spec.text;
  return text.empty() ? "-" : text;
}

std::string plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string conversion_text(const FormatVariant& v) {
  if (!v.ran) return "-";
  const Conversion& c = v.report.run.conversion;
  if (c.to.empty()) return "nothing (the model and inputs as given)";
  return std::to_string(c.parameters) + " of " + plural(c.parameters_total, "parameter", "parameters") + ", " +
         std::to_string(c.buffers) + " of " + plural(c.buffers_total, "buffer", "buffers") + ", " +
         plural(c.inputs, "input", "inputs") + " to " + c.to + (v.same_as_given() ? " (the tensors as given)" : "");
}

// The first variant that ran: whose run line (device, threads, LibTorch) the header shows.
const FormatVariant* first_run(const FormatComparison& c) {
  for (const FormatVariant& v : c.variants)
    if (v.ran) return &v;
  return nullptr;
}

void write_header(std::ostream& out, const FormatComparison& c) {
  const FormatVariant* first = first_run(c);
  out << "layoutprof " << (first ? first->report.run.layoutprof_version : LAYOUTPROF_VERSION)
      << " compare-formats — " << c.model << "\n";
  size_t name_w = 7;
  for (const FormatVariant& v : c.variants) name_w = std::max(name_w, width(v.name));
  for (const FormatVariant& v : c.variants) {
    out << "  " << pad_right(v.name, name_w) << "  " << variant_state(v) << "\n";
    if (!v.ran) continue;
    out << "  " << std::string(name_w, ' ') << "  inputs " << input_texts(v) << "; converted " << conversion_text(v)
        << "\n";
  }
  if (first) {
    const RunInfo& run = first->report.run;
    int64_t plain = 0;
    for (const FormatVariant& v : c.variants) plain = std::max(plain, v.time.calls);
    out << "  run       " << run.device << ", " << run.threads << " threads, LibTorch " << run.torch_version
        << ", per variant: warm-up " << run.warmup << ", recorded calls " << run.iters << ", plain calls " << plain
        << "\n";
  }
  out << "  measured  plain calls: wall time of each forward() after the recorded ones, without the observer or "
         "counters, the variants interleaved round by round, steady clock (median, min–max, interquartile range)\n";
  out << "  derived   copies, bytes and split points of each variant's recorded call; the verdict, from the plain "
         "calls by the noise rule below\n";
}

// Copies per module: a column group per variant.
void write_rows(std::ostream& out, const FormatComparison& c) {
  out << "\nCopies per module (derived): rows are modules at depth " << c.depth
      << " in execution order, as the heatmap's; MB copied of every class, and of layout copies (implicit and "
         "explicit)\n";
  size_t label_w = 8;
  for (const std::string& l : c.labels) label_w = std::max(label_w, std::min<size_t>(width(l), 36));
  const char* titles[] = {"implicit", "MB copied", "MB layout", "splits"};
  const size_t col_w[] = {9, 10, 10, 7};
  size_t group_w = 0;
  for (size_t w : col_w) group_w += w;
  // First line: the variants over their column groups; second: the columns.
  out << "  " << std::string(label_w, ' ');
  for (const FormatVariant& v : c.variants) out << "  │" << pad_left(v.name, group_w);
  out << "\n  " << pad_right("module", label_w);
  for (size_t g = 0; g < c.variants.size(); ++g) {
    out << "  │";
    for (size_t k = 0; k < 4; ++k) out << pad_left(titles[k], col_w[k]);
  }
  out << "\n";
  for (size_t r = 0; r <= c.labels.size(); ++r) {
    const std::string label = r < c.labels.size() ? c.labels[r] : "(total)";
    out << "  " << pad_right(label.size() > 36 ? label.substr(0, 35) + "…" : label, label_w);
    for (size_t g = 0; g < c.variants.size(); ++g) {
      out << "  │";
      if (!c.variants[g].ok()) {
        for (size_t k = 0; k < 4; ++k) out << pad_left("-", col_w[k]);
        continue;
      }
      const FormatRow& row = c.rows[g][r];
      out << pad_left(std::to_string(row.implicit_copies), col_w[0]) << pad_left(mb(row.copy_bytes), col_w[1])
          << pad_left(mb(row.layout_copy_bytes), col_w[2]) << pad_left(std::to_string(row.split_points), col_w[3]);
    }
    out << "\n";
  }
}

// The plain calls' spread, fastest first, each against the fastest.
void write_times(std::ostream& out, const FormatComparison& c) {
  out << "\nPlain calls (measured, steady clock; fastest median first)\n";
  std::vector<const FormatVariant*> order;
  for (const FormatVariant& v : c.variants)
    if (v.ok() && v.time.calls > 0) order.push_back(&v);
  std::stable_sort(order.begin(), order.end(), [](const FormatVariant* a, const FormatVariant* b) {
    return a->time.median_ns < b->time.median_ns;
  });
  if (order.empty()) {
    out << "  (no variant ran plain calls)\n";
    return;
  }
  size_t name_w = 7;
  for (const FormatVariant* v : order) name_w = std::max(name_w, width(v->name));
  out << "  " << pad_right("variant", name_w) << pad_left("calls", 7) << pad_left("median ms", 12)
      << pad_left("min–max ms", 22) << pad_left("IQR ms (q1–q3)", 27) << "   against the fastest\n";
  const FormatVerdict& verdict = c.verdict;
  for (const FormatVariant* v : order) {
    const TimeSpread& t = v->time;
    std::string against;
    if (v->name == verdict.fastest) against = "fastest";
    for (const TimeAgainstFastest& a : verdict.against)
      if (a.variant == v->name)
        against = fixed(a.ratio, 2) + "x, +" + ms(a.difference_ns) + " ms, " + against_words(a.rounds.saving);
    if (against.empty()) against = "not judged";
    out << "  " << pad_right(v->name, name_w) << pad_left(std::to_string(t.calls), 7) << pad_left(ms(t.median_ns), 12)
        << pad_left(ms(t.min_ns) + "–" + ms(t.max_ns), 22)
        << pad_left(ms(t.iqr_ns()) + " (" + ms(t.q1_ns) + "–" + ms(t.q3_ns) + ")", 27) << "   " << against << "\n";
  }
  // What oneDNN converted in each variant explains much of a measured difference on the CPU.
  std::string reorders;
  for (const FormatVariant& v : c.variants)
    if (v.ran) reorders += (reorders.empty() ? "" : ", ") + v.name + " " + backend_reorders_text(v.report);
  if (!reorders.empty()) out << "  oneDNN reorders a call (measured in each variant's backend pass): " << reorders << "\n";
}

void write_verdict(std::ostream& out, const FormatComparison& c) {
  const FormatVerdict& v = c.verdict;
  out << "\nVerdict (derived from the plain calls): " << v.summary << "\n";
  for (const TimeAgainstFastest& a : v.against)
    out << "  " << v.fastest << " against " << a.variant << ": " << fixed(a.ratio, 2) << "x, " << ms(a.difference_ns)
        << " ms less per call; " << a.why << "\n";
  if (!v.control.empty()) out << "  control  " << v.control << (v.control_failed ? ": the control FAILED" : "") << "\n";
  for (const std::string& n : v.not_timed) out << "  not timed  " << n << "\n";
  out << "  noise rule: " << kNoiseRule << "\n";
}

std::string change_line(const CopyChange& ch) {
  const CopyGroup& g = ch.group;
  std::string where = g.op.empty() ? "(no culprit)" : g.op;
  if (!g.module.empty()) where += " in " + g.module;
  if (!g.source.empty()) where += " at " + g.source;
  return std::to_string(ch.count_before) + " → " + std::to_string(ch.count_after) + "  " + copy_class_name(g.cls) +
         ", " + mb(ch.bytes_before) + " → " + mb(ch.bytes_after) + " MB: " + where + "  (" + g.src_layout + " → " +
         g.dst_layout + ")";
}

void write_changes(std::ostream& out, const char* kind, const std::vector<CopyChange>& changes, size_t most) {
  for (size_t i = 0; i < changes.size() && i < most; ++i) {
    out << "    " << kind << "  " << change_line(changes[i]) << "\n";
    if (!changes[i].group.source_text.empty()) out << "        " << changes[i].group.source_text << "\n";
  }
  if (changes.size() > most) {
    int64_t count = 0, bytes = 0;
    for (size_t i = most; i < changes.size(); ++i) {
      count += std::abs(changes[i].count_after - changes[i].count_before);
      bytes += std::abs(changes[i].bytes_after - changes[i].bytes_before);
    }
    out << "    ... and " << changes.size() - most << " more groups " << kind << " (" << count << " copies, "
        << mb(bytes) << " MB; all in --json)\n";
  }
}

void write_copy_deltas(std::ostream& out, const FormatComparison& c, const FormatTextOptions& o) {
  out << "\nCopies against as_given (derived; identical copies grouped: class, culprit op, module, line, layouts)\n";
  if (c.verdict.copies.empty()) {
    out << "  (none compared: as_given and another variant must both have run)\n";
    return;
  }
  for (const CopyDelta& d : c.verdict.copies) {
    int64_t added = 0, avoided = 0;
    for (const CopyChange& ch : d.added) added += ch.count_after - ch.count_before;
    for (const CopyChange& ch : d.avoided) avoided += ch.count_before - ch.count_after;
    out << "  " << d.variant << ": ";
    if (d.added.empty() && d.avoided.empty() && d.resized.empty()) {
      out << "the same copies as as_given\n";
      continue;
    }
    out << "adds " << plural(added, "copy", "copies") << " (" << mb(d.added_bytes()) << " MB), avoids "
        << plural(avoided, "copy", "copies") << " (" << mb(d.avoided_bytes()) << " MB)";
    if (!d.resized.empty()) out << ", " << d.resized.size() << " of other sizes";
    out << "\n";
    write_changes(out, "adds   ", d.added, o.copy_groups);
    write_changes(out, "avoids ", d.avoided, o.copy_groups);
    write_changes(out, "resizes", d.resized, o.copy_groups);
  }
}

// --- JSON ------------------------------------------------------------------------------------

json time_json(const TimeSpread& t) {
  return {{"calls", t.calls},   {"min_ns", t.min_ns}, {"q1_ns", t.q1_ns},   {"median_ns", t.median_ns},
          {"q3_ns", t.q3_ns},   {"max_ns", t.max_ns}, {"iqr_ns", t.iqr_ns()}};
}

json row_json(const FormatRow& r) {
  return {{"module", r.label},
          {"implicit_copies", r.implicit_copies},
          {"copy_bytes", r.copy_bytes},
          {"layout_copy_bytes", r.layout_copy_bytes},
          {"split_points", r.split_points}};
}

json change_json(const CopyChange& ch) {
  const CopyGroup& g = ch.group;
  return {{"class", copy_class_name(g.cls)},
          {"op", g.op},
          {"module", g.module},
          {"source", g.source},
          {"source_text", g.source_text},
          {"src_layout", g.src_layout},
          {"dst_layout", g.dst_layout},
          {"count_before", ch.count_before},
          {"count_after", ch.count_after},
          {"bytes_before", ch.bytes_before},
          {"bytes_after", ch.bytes_after}};
}

json changes_json(const std::vector<CopyChange>& changes) {
  json list = json::array();
  for (const CopyChange& ch : changes) list.push_back(change_json(ch));
  return list;
}

json verdict_json(const FormatVerdict& v) {
  json against = json::array();
  for (const TimeAgainstFastest& a : v.against)
    against.push_back({{"variant", a.variant},
                       {"ratio", a.ratio},
                       {"difference_ns", a.difference_ns},
                       {"beyond_noise", a.beyond_noise},
                       {"rounds", rounds_json(a.rounds)},
                       {"why", a.why}});
  json copies = json::array();
  for (const CopyDelta& d : v.copies)
    copies.push_back({{"variant", d.variant},
                      {"added", changes_json(d.added)},
                      {"avoided", changes_json(d.avoided)},
                      {"resized", changes_json(d.resized)},
                      {"added_bytes", d.added_bytes()},
                      {"avoided_bytes", d.avoided_bytes()}});
  return {{"fastest", v.fastest.empty() ? json(nullptr) : json(v.fastest)},
          {"clear", v.clear},
          {"summary", v.summary},
          {"against_fastest", against},
          {"not_timed", v.not_timed},
          {"control", v.control.empty() ? json(nullptr) : json(v.control)},
          {"control_rounds", v.control.empty() ? json(nullptr) : rounds_json(v.control_rounds)},
          {"control_failed", v.control_failed},
          {"copies", copies}};
}

// Keys in the order given, then `last` (a value written by `write_last`).
void write_object(std::ostream& out, const std::vector<std::pair<std::string, json>>& fields, const char* last,
                  const std::function<void()>& write_last) {
  out << "{";
  for (const auto& [key, value] : fields) out << dump_compact(key) << ": " << dump_compact(value) << ", ";
  out << dump_compact(last) << ": ";
  write_last();
  out << "}";
}

}  // namespace

void write_format_comparison_text(std::ostream& out, const FormatComparison& c, const FormatTextOptions& o) {
  write_header(out, c);
  write_rows(out, c);
  write_times(out, c);
  write_verdict(out, c);
  write_copy_deltas(out, c, o);
}

void write_format_comparison_json(std::ostream& out, const FormatComparison& c) {
  const json figures = {
      {"measured", {"variants[].time and each report's run.plain_call_ns: wall time of each plain forward() after "
                    "the recorded calls, without the observer or counters, in interleaved rounds (steady clock)",
                    "as_given_again_ns: as_given's second call of each round (the control)"}},
      {"derived", {"variants[].rows and total: copies, bytes and split points of each variant's report",
                   "verdict: the fastest variant by median plain call, each other variant paired with it round by "
                   "round, the control; copies added and avoided against as_given"}},
      {"modelled", json::array()}};
  out << "{\"compare_formats_version\": " << kCompareFormatsVersion << ",\n\"figures\": " << dump_compact(figures)
      << ",\n\"model\": " << dump_compact(c.model) << ",\n\"depth\": " << c.depth
      << ",\n\"noise_rule\": " << dump_compact({{"text", kNoiseRule}, {"level", 0.95}})
      << ",\n\"as_given_again_ns\": " << dump_compact(c.given_again_ns)
      << ",\n\"variants\": [";
  for (size_t i = 0; i < c.variants.size(); ++i) {
    const FormatVariant& v = c.variants[i];
    json rows = json::array();
    for (size_t r = 0; r + 1 < c.rows[i].size(); ++r) rows.push_back(row_json(c.rows[i][r]));
    json inputs = json::array();
    for (const ModelInput& in : v.report.run.inputs) inputs.push_back(in.spec.text);
    const Conversion& conv = v.report.run.conversion;
    out << (i ? ",\n" : "\n");
    write_object(out,
                 {{"name", v.name},
                  {"ran", v.ran},
                  {"skipped", v.ran ? json(nullptr) : json(v.skipped)},
                  {"status", v.ran ? json(to_string(v.report.run.status)) : json(nullptr)},
                  {"error", v.ran && !v.report.run.error.empty() ? json(v.report.run.error) : json(nullptr)},
                  {"inputs", inputs},
                  {"conversion", conv.to.empty() ? json(nullptr)
                                                 : json{{"to", conv.to},
                                                        {"parameters", conv.parameters},
                                                        {"parameters_total", conv.parameters_total},
                                                        {"buffers", conv.buffers},
                                                        {"buffers_total", conv.buffers_total},
                                                        {"inputs", conv.inputs}}},
                  {"time", time_json(v.time)},
                  {"rows", rows},
                  {"total", row_json(c.rows[i].back())}},
                 "report", [&] {
                   if (v.ran) write_report_json(out, v.report);
                   else out << "null";
                 });
  }
  out << "\n],\n\"verdict\": " << dump_compact(verdict_json(c.verdict)) << "}\n";
}

}  // namespace layoutprof
