#include "report/reporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "report/chrome_trace.h"
#include "report/comparison_text.h"
#include "support/errors.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Report sample_report() { return analyze(testing::trace_of({testing::transpose_reshape_call()})); }

Comparison sample_comparison() {
  Report base = analyze(testing::trace_of({testing::transpose_reshape_call(1000)}));
  Report now = sample_report();
  Comparison c = compare_reports(base, now, GateOptions{});
  c.base_name = "base.json";
  c.new_name = "new.json";
  return c;
}

// The data a page embeds (its <script type="application/json"> element), parsed.
nlohmann::json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"layoutprof-data\">";
  size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  from += open.size();
  size_t to = page.find("</script>", from);
  EXPECT_NE(to, std::string::npos);
  return nlohmann::json::parse(page.substr(from, to - from));
}

std::string report_text_of(const FormatComparison& c) {
  std::ostringstream out;
  find_reporter("html", ReportKind::format_comparison).write(out, c, {});
  return out.str();
}

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

TEST(Reporter, EachFormatIsRegisteredForWhatItWrites) {
  EXPECT_THAT(reporter_names(ReportKind::report), ElementsAre("text", "json", "html", "trace"));
  EXPECT_THAT(reporter_names(ReportKind::comparison), ElementsAre("text", "json", "html", "markdown", "junit", "sarif"));
  EXPECT_THAT(reporter_names(ReportKind::format_comparison), ElementsAre("text", "json", "html"));
  EXPECT_EQ(find_reporter("html", ReportKind::report).name(), "html");
  try {
    find_reporter("markdown", ReportKind::report);
    FAIL() << "markdown writes no run report";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--format markdown: a run report is written as text, json, html, trace");
  }
  EXPECT_THROW(find_reporter("pdf", ReportKind::comparison, "-f"), UsageError);
}

TEST(Reporter, TheReportersWriteWhatTheFormatsFunctionsWrite) {
  const Report r = sample_report();
  std::ostringstream text, json, trace;
  write_text_report(text, r, TextOptions{});
  write_report_json(json, r);
  write_chrome_trace(trace, r);
  EXPECT_EQ(report_text(find_reporter("text", ReportKind::report), r), text.str());
  EXPECT_EQ(report_text(find_reporter("json", ReportKind::report), r), json.str());
  EXPECT_EQ(report_text(find_reporter("trace", ReportKind::report), r), trace.str());
  const Comparison c = sample_comparison();
  ReporterOptions table;
  table.diff_table = true;
  EXPECT_EQ(comparison_text(find_reporter("text", ReportKind::comparison), c),
            format_comparison(c, DiffFormat::text, false));
  EXPECT_EQ(comparison_text(find_reporter("markdown", ReportKind::comparison), c, table),
            format_comparison(c, DiffFormat::markdown, true));
  EXPECT_EQ(comparison_text(find_reporter("junit", ReportKind::comparison), c), junit_xml(c));
}

TEST(Reporter, ComparisonJsonHoldsEveryCheckAndModule) {
  const Comparison c = sample_comparison();
  nlohmann::json doc = nlohmann::json::parse(comparison_text(find_reporter("json", ReportKind::comparison), c));
  EXPECT_EQ(doc["regressed"], c.regressed());
  EXPECT_EQ(doc["checks"].size(), c.checks.size());
  ASSERT_EQ(doc["modules"].size(), c.modules.size());
  EXPECT_EQ(doc["modules"][0]["implicit_copies"][1], c.modules[0].implicit[1]);
  EXPECT_EQ(doc["base"], "base.json");
}

TEST(HtmlReport, EmbedsTheReportsOpsCopiesAndHeatmapRows) {
  const Report r = sample_report();
  const std::string page = report_text(find_reporter("html", ReportKind::report), r);
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(page.find("http://"), std::string::npos) << "a self-contained page loads nothing";
  EXPECT_EQ(page.find("https://"), std::string::npos);
  nlohmann::json d = page_data(page);
  EXPECT_EQ(d["kind"], "report");
  EXPECT_EQ(d["ops"]["count"], r.ops.size());
  EXPECT_EQ(d["ops"]["embedded"], r.ops.size());
  for (const char* column : {"id", "parent", "name", "module", "source", "dur", "row", "in", "out"})
    EXPECT_EQ(d["ops"][column].size(), r.ops.size()) << column;
  EXPECT_EQ(d["copies"]["rows"].size(), r.copies.size());
  EXPECT_EQ(d["splits"]["count"], r.split_points.size());
  ASSERT_EQ(d["splits"]["rows"].size(), r.split_points.size());
  for (size_t i = 0; i < r.split_points.size(); ++i) {
    EXPECT_EQ(d["splits"]["rows"][i][0], r.split_points[i].op);
    EXPECT_EQ(d["strings"][d["splits"]["rows"][i][6].get<int>()], r.split_points[i].suggestion.str());
  }
  const auto rows = heatmap_rows(r, GroupBy::module, heatmap_depth(r, 0));
  ASSERT_EQ(d["heatmap"]["rows"].size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(d["heatmap"]["rows"][i]["label"], rows[i].label);
  // Each op's tensors by shape: the reshape's input is the transpose's permuted output.
  for (size_t i = 0; i < r.ops.size(); ++i) {
    ASSERT_EQ(d["ops"]["in"][i].size(), r.ops[i].inputs.size());
    for (size_t k = 0; k < r.ops[i].inputs.size(); ++k)
      EXPECT_EQ(d["shapes"][d["ops"]["in"][i][k].get<int>()][3], r.ops[i].inputs[k].label().str());
    EXPECT_EQ(d["strings"][d["ops"]["name"][i].get<int>()], r.ops[i].name.str());
    EXPECT_EQ(d["ops"]["row"][i], r.ops[i].parent < 0 ? 0 : -1);  // one row: block
  }
}

// The page holds the run's words as the JSON report writes them (page.js compares them), not
// the numbers of their enums (core/run_enums.h).
TEST(HtmlReport, ThePageHoldsTheStatusAndCounterModesAsWords) {
  Call call = testing::transpose_reshape_call();
  for (OpEvent& e : call.events)
    if (e.parent < 0 || e.name == Str("aten::copy_")) e.counters = {CounterValue{3, 48.0, false}};
  Trace t = testing::trace_of({call});
  testing::sample_page_faults(t);
  t.run.status = RunStatus::interrupted;
  const nlohmann::json d = page_data(report_text(find_reporter("html", ReportKind::report), analyze(t)));
  EXPECT_EQ(d["run"]["status"], "interrupted");
  EXPECT_EQ(d["run"]["counters"][0]["mode"], "sampled");
  ASSERT_EQ(d["summary"]["counters"].size(), 1u);
  EXPECT_EQ(d["summary"]["counters"][0]["mode"], "sampled");
}

TEST(HtmlReport, TextFromTheModelCannotCloseTheScript) {
  Report r = sample_report();
  r.run.model = "evil</script><script>alert(1)</script>.pt";
  r.ops[0].source_text = "x = '<!-- </SCRIPT>'";
  const std::string page = report_text(find_reporter("html", ReportKind::report), r);
  EXPECT_EQ(count(page, "</script>"), 2u);  // the data's and the code's
  EXPECT_THAT(page, HasSubstr("<title>layoutprof: evil&lt;/script&gt;"));
  nlohmann::json d = page_data(page);
  EXPECT_EQ(d["run"]["model"], r.run.model);
  EXPECT_EQ(d["strings"][d["ops"]["text"][0].get<int>()], "x = '<!-- </SCRIPT>'");
}

TEST(HtmlReport, AComparisonPageHoldsItsChecksAndModules) {
  const Comparison c = sample_comparison();
  nlohmann::json d = page_data(comparison_text(find_reporter("html", ReportKind::comparison), c));
  EXPECT_EQ(d["kind"], "comparison");
  EXPECT_EQ(d["checks"].size(), c.checks.size());
  EXPECT_EQ(d["regressions"], c.regressions());
  EXPECT_EQ(d["modules"].size(), c.modules.size());
}

TEST(HtmlReport, ACompareFormatsPageHoldsEveryVariantRowAndCopyChange) {
  std::vector<FormatVariant> variants;
  for (const std::string& name : format_variant_names()) {
    FormatVariant v;
    v.name = name;
    v.ran = true;
    // channels_last: a report with the copy, the others without (the reshape's input contiguous).
    v.report = sample_report();
    if (name != "channels_last") {
      v.report.copies.clear();
      v.report.summary.copies = {};
      v.report.summary.copy_bytes = {};
    }
    v.report.run.conversion.to = name == "as_given" ? "" : name;
    v.report.run.plain_call_ns = {100, 110, 120, 130, 140};
    variants.push_back(std::move(v));
  }
  const FormatComparison c = compare_formats(std::move(variants), {});
  nlohmann::json d = page_data(report_text_of(c));
  EXPECT_EQ(d["kind"], "formats");
  ASSERT_EQ(d["variants"].size(), 3u);
  EXPECT_EQ(d["labels"].back(), "(total)");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(d["variants"][i]["rows"].size(), c.rows[i].size());
  EXPECT_EQ(d["verdict"]["summary"], c.verdict.summary);
  ASSERT_EQ(d["verdict"]["copies"].size(), c.verdict.copies.size());
  for (size_t i = 0; i < c.verdict.copies.size(); ++i)
    EXPECT_EQ(d["verdict"]["copies"][i]["added"].size(), c.verdict.copies[i].added.size());
  EXPECT_EQ(d["verdict"]["copies"][0]["variant"], "channels_last");
  EXPECT_EQ(d["verdict"]["copies"][0]["added"].size(), 1u);  // the reshape's implicit copy
}

TEST(HtmlReport, RefusesAReportReadForTheGate) {
  Report r = sample_report();
  r.top_level_only = true;
  EXPECT_THROW(report_text(find_reporter("html", ReportKind::report), r), std::logic_error);
}

}  // namespace
}  // namespace layoutprof
