#include "report/text_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "report/json_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

std::string render(const Report& r, TextOptions o = {}) {
  std::ostringstream out;
  write_text_report(out, r, o);
  return out.str();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(TextReport, ShowsHeaderHeatmapSplitPointsAndTotals) {
  std::string text = render(analyze(testing::trace_of({testing::transpose_reshape_call()})));
  EXPECT_TRUE(contains(text, "layoutprof test — model.pt")) << text;
  EXPECT_TRUE(contains(text, "Heatmap")) << text;
  EXPECT_TRUE(contains(text, "contiguous→permuted(0,2,1)→contiguous")) << text;
  EXPECT_TRUE(contains(text, "Split points (where the layout of the data changes): 2")) << text;
  EXPECT_TRUE(contains(text, "aten::reshape in block at model.py:11")) << text;
  EXPECT_TRUE(contains(text, "implicit_layout")) << text;
  EXPECT_FALSE(contains(text, "\x1b[")) << "colour without asking";
}

TEST(TextReport, LeadsWithTheVerdictAndTheCausesAndListsWhatWasNotMeasuredOnlyWhenVerbose) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  t.run.not_measured = {"GPU time: CPU run (--device cuda to trace it)"};
  const Report r = analyze(t);
  const std::string text = render(r);
  const size_t verdict = text.find("\nVerdict: 1 implicit layout copy a call, 0.000 MB, 20.0% of the forward's time "
                                   "(measured: the copies' own time, 0.001 of 0.005 ms, one call)\n");
  const size_t causes = text.find("\nCauses of the layout copies, grouped: 1 cause, most bytes first\n"
                                  "  1. 1 implicit, 0.000 MB, 0.001 ms: aten::reshape needs dense data: ");
  const size_t heatmap = text.find("\nHeatmap: ");
  ASSERT_NE(verdict, std::string::npos) << text;
  ASSERT_NE(causes, std::string::npos) << text;
  EXPECT_LT(verdict, causes);
  EXPECT_LT(causes, heatmap);
  EXPECT_TRUE(contains(text, "; 1 not measured (-v lists them)\n")) << text;
  EXPECT_FALSE(contains(text, "not measured  GPU time")) << text;
  TextOptions verbose;
  verbose.verbose = true;
  EXPECT_TRUE(contains(render(r, verbose), "  not measured  GPU time: CPU run (--device cuda to trace it)\n"));
}

TEST(TextReport, ARunWithNoRecordedCallJudgesNothing) {
  Trace t = testing::trace_of({});
  t.run.warmup = 1;
  const std::string text = render(analyze(t));
  EXPECT_TRUE(contains(text, "\nVerdict: nothing to judge: no call was recorded (1 warm-up call before it)\n")) << text;
  EXPECT_FALSE(contains(text, "no implicit layout copies")) << text;
}

TEST(TextReport, ACompareFormatsVariantSaysWhatWasConverted) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  EXPECT_FALSE(contains(render(analyze(t)), "  converted ")) << "a plain run converts nothing";
  t.run.conversion = {"channels_last", 2, 8, 0, 3, 0};
  EXPECT_TRUE(contains(render(analyze(t)),
                       "  converted 2 of 8 parameters, 0 of 3 buffers and 0 inputs to channels_last (compare-formats)\n"));
}

TEST(TextReport, ColourOnlyWhenAsked) {
  TextOptions o;
  o.color = true;
  EXPECT_TRUE(contains(render(analyze(testing::trace_of({testing::transpose_reshape_call()})), o),
                       "\x1b[38;5;"));
}

TEST(TextReport, RenderOfTheJsonReproducesTheLiveText) {
  Report live = analyze(testing::trace_of({testing::transpose_reshape_call()}));
  Report loaded = report_from_json(report_to_json(live));
  EXPECT_EQ(render(live), render(loaded));
}

TEST(TextReport, GroupByOpAndTopLimit) {
  TextOptions o;
  o.group_by = GroupBy::op;
  o.top = 1;
  std::string text = render(analyze(testing::trace_of({testing::transpose_reshape_call()})), o);
  EXPECT_TRUE(contains(text, "rows are top-level ops")) << text;
  EXPECT_TRUE(contains(text, "top 1 by bytes copied")) << text;
  EXPECT_FALSE(contains(text, "  2. ")) << text;
}

TEST(TextReport, FailedRunShowsTheFailingOpAndItsInputs) {
  Call call = testing::transpose_reshape_call();
  call.events.resize(2);
  call.events[1].failed = true;
  call.events[1].name = "aten::view";
  call.events[1].outputs = {};
  Trace t = testing::trace_of({call});
  t.run.status = RunStatus::failed;
  t.run.error = "RuntimeError: view size is not compatible";
  std::string text = render(analyze(t));
  EXPECT_TRUE(contains(text, "status    failed: RuntimeError: view size")) << text;
  EXPECT_TRUE(contains(text, "The model raised in aten::view in block")) << text;
  EXPECT_TRUE(contains(text, "strides (12,1,3) permuted(0,2,1)")) << text;
}

TEST(TextReport, ShadesSurviveExtremeValues) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  CounterStatus st;
  st.event = "task-clock";
  st.measured = true;
  t.run.counters = {st};
  for (OpEvent& e : t.calls[0].events)
    if (e.parent < 0) e.counters = {CounterValue{1, 1.7e308, false}};  // sums to infinity
  std::string text = render(analyze(t));
  EXPECT_TRUE(contains(text, "task-clock ns")) << text;
}

TEST(Heatmap, ModuleDepth) {
  EXPECT_EQ(module_at_depth("layer1.0.conv1", 1), "layer1");
  EXPECT_EQ(module_at_depth("layer1.0.conv1", 2), "layer1.0");
  EXPECT_EQ(module_at_depth("layer1.0.conv1", 5), "layer1.0.conv1");
  EXPECT_EQ(module_at_depth("", 2), "(top)");
}

TEST(Heatmap, AutoDepthKeepsRowsWithinTheLimit) {
  Report r;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 10; ++j) {
      ModuleStats m;
      m.module = "layer" + std::to_string(i) + "." + std::to_string(j);
      r.modules.push_back(m);
    }
  EXPECT_EQ(auto_depth(r, 40), 1);
  EXPECT_EQ(auto_depth(r, 50), 2);
}

}  // namespace
}  // namespace layoutprof
