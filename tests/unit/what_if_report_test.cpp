// The what-if's figures in the report (report_model/what_if.h): the JSON block and each cause's
// own variants and the rounds' calls, read back as written; the trace's track of those calls;
// the text's verdict line, the variant lines under their cause and the ranking; the gate's
// --max-measured-saving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>

#include "analysis/analysis.h"
#include "analysis/paired_rounds.h"
#include "analysis/what_if_plan.h"
#include "gate/gate.h"
#include "report/chrome_trace.h"
#include "report/json_report.h"
#include "report/reporter.h"
#include "report/text_report.h"
#include "support/errors.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Rounds of a 10 ms call and of a variant `shift` of it faster (with a little spread).
std::vector<int64_t> rounds_at(double ms, int n) {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<int64_t>(ms * 1e6) + (i % 3) * 20000);
  return out;
}

WhatIfVariant measured(const std::string& name, FixAction action, std::vector<int64_t> causes, double ms) {
  WhatIfVariant v;
  v.name = name;
  v.actions = {action};
  v.causes = std::move(causes);
  v.time = pair_rounds(rounds_at(10, 8), rounds_at(ms, 8), 2);
  v.counts = {0, 1, 96, 0};
  v.outputs.match = OutputMatch::close;
  v.outputs.max_abs = 2.4e-6;
  return v;
}

// A report whose one cause (a transpose whose view a reshape copies) had its fixes measured:
// the line fix 10% faster, the model-wide one slower.
Report measured_report() {
  Report r = analyze(testing::trace_of({testing::transpose_reshape_call()}));
  EXPECT_EQ(r.causes.size(), 1u);
  WhatIfRun& w = r.what_if;
  w.ran = true;
  w.rounds = w.rounds_asked = 8;
  w.budget_s = 60;
  w.threads = 2;
  w.device = "cpu";
  w.control = pair_rounds(rounds_at(10, 8), rounds_at(10, 8), 1);
  w.baseline = {1, 0, 96, 0};
  FixAction line, wide;
  line.kind = FixKind::contiguous_at;
  line.op = "aten::transpose";
  line.where = "model.py:7";
  line.format = "contiguous";
  wide.kind = FixKind::convert_model;
  wide.format = "channels_last";
  w.variants = {measured("contiguous_at aten::transpose at model.py:7", line, {0}, 9),
                measured("model as channels_last", wide, {0}, 11)};
  WhatIfVariant refused;
  refused.name = "swap";
  refused.causes = {0, 0};
  refused.refused = "the line's view is written in place later";
  w.variants.push_back(refused);
  w.calls = {{"baseline", 0, 0, 10000000},
             {"contiguous_at aten::transpose at model.py:7", 0, 10100000, 9000000},
             {"model as channels_last", 0, 19200000, 11000000},
             {"baseline again", 0, 30300000, 10000000}};
  return r;
}

TEST(WhatIfReport, TheJsonHoldsTheRunAndEachCausesVariantsAndReadsThemBack) {
  const Report r = measured_report();
  const nlohmann::json j = report_to_json(r);
  ASSERT_TRUE(j.contains("what_if"));
  EXPECT_EQ(j["what_if"]["rounds"], 8);
  EXPECT_EQ(j["what_if"]["together"].size(), 1u);  // the variant of two causes' fixes
  ASSERT_EQ(j["what_if"]["calls"].size(), 4u);
  EXPECT_EQ(j["what_if"]["calls"][3]["who"], "baseline again");
  EXPECT_EQ(j["what_if"]["calls"][3]["start_ns"], 30300000);
  ASSERT_EQ(j["causes"][0]["what_if"].size(), 2u);
  EXPECT_EQ(j["causes"][0]["what_if"][0]["time"]["saving"], "faster");
  EXPECT_EQ(j["causes"][0]["what_if"][1]["time"]["saving"], "slower");
  EXPECT_EQ(j["causes"][0]["what_if"][0]["outputs"]["match"], "close");
  const Report back = report_from_json(j);
  EXPECT_EQ(back.what_if.variants.size(), 3u);
  EXPECT_EQ(report_to_json(back), j);
  // Without a what-if, neither the block nor the causes' lists are written.
  const nlohmann::json plain = report_to_json(analyze(testing::trace_of({testing::transpose_reshape_call()})));
  EXPECT_FALSE(plain.contains("what_if"));
  EXPECT_FALSE(plain["causes"][0].contains("what_if"));
  // A variant naming a cause the report has not is refused.
  nlohmann::json bad = j;
  bad["causes"][0]["what_if"][0]["causes"] = {3};
  EXPECT_THROW(report_from_json(bad), UsageError);
}

TEST(WhatIfReport, TheTraceShowsTheRoundsCallsInAProcessOfTheirOwnOneTrackPerVariant) {
  const nlohmann::json trace = chrome_trace(measured_report());
  std::map<int64_t, std::string> tracks;  // tid -> name, in the what-if's process
  std::vector<nlohmann::json> calls;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["pid"] != 2) continue;
    if (e["name"] == "thread_name") tracks[e["tid"].get<int64_t>()] = e["args"]["name"];
    if (e["ph"] == "X") calls.push_back(e);
  }
  EXPECT_EQ(tracks, (std::map<int64_t, std::string>{
                        {1, "baseline"}, {2, "contiguous_at aten::transpose at model.py:7"}, {3, "model as channels_last"}}));
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[1]["ts"], 10100.0);  // us
  EXPECT_EQ(calls[1]["dur"], 9000.0);
  EXPECT_EQ(calls[3]["tid"], 1) << "the baseline's second call on its track";
  EXPECT_EQ(calls[3]["args"]["who"], "baseline again");
  EXPECT_EQ(calls[3]["args"]["round"], 1);
  // Without a what-if the trace has no such process.
  const nlohmann::json plain = chrome_trace(analyze(testing::trace_of({testing::transpose_reshape_call()})));
  for (const nlohmann::json& e : plain["traceEvents"]) EXPECT_NE(e["pid"], 2);
}

TEST(WhatIfReport, TheTextLeadsWithTheBestMeasuredFixAndShowsEachUnderItsCause) {
  std::ostringstream out;
  write_text_report(out, measured_report(), {});
  const std::string s = out.str();
  EXPECT_THAT(s, HasSubstr("Verdict: the best measured fix saves 10.0% a call: contiguous_at aten::transpose at "
                           "model.py:7, for the permuted(0,2,1) born at model.py:"));
  EXPECT_THAT(s, HasSubstr(" (measured: 10.020 -> 9.020 ms, saving interval "));
  EXPECT_THAT(s, HasSubstr("what-if, contiguous_at aten::transpose at model.py:7: measured: 10.02 -> 9.02 ms a call "
                           "(-10.0%, interval"));
  EXPECT_THAT(s, HasSubstr("implicit copies 1 -> 0, explicit 0 -> 1; 0.000 -> 0.000 MB; mixed-format ops 0 -> 0; "
                           "outputs close (max abs 2.4e-06, max rel 0)"));
  EXPECT_THAT(s, HasSubstr("applied by layoutprof at model.py:7 for this measurement; change the code there"));
  EXPECT_THAT(s, HasSubstr("what-if, model as channels_last: measured, slower: 10.02 -> 11.02 ms a call (+10.0%"));
  EXPECT_THAT(s, HasSubstr("together, what-if, swap: not applied: the line's view is written in place later"));
  EXPECT_THAT(s, HasSubstr("what-if: 8 interleaved rounds (at most 8, 60 s budget) on cpu, 2 threads; control"));
  // The verdict's line comes before the recorded call's figures.
  EXPECT_LT(s.find("best measured fix"), s.find("implicit layout copy a call"));
}

TEST(WhatIfReport, TheHtmlPageCarriesTheVerdictLineAndEachVariantUnderItsCause) {
  std::ostringstream out;
  find_reporter("html", ReportKind::report).write(out, measured_report(), {});
  const std::string page = out.str();
  EXPECT_THAT(page, HasSubstr("\"measured_fix\":\"the best measured fix saves 10.0% a call"));
  EXPECT_THAT(page, HasSubstr("\"saving\":\"faster\",\"text\":\"what-if, contiguous_at aten::transpose at model.py:7: measured:"));
  EXPECT_THAT(page, HasSubstr("\"what_if\":\"what-if: 8 interleaved rounds"));
}

TEST(WhatIfReport, NoSavingIsSaidPlainly) {
  Report r = measured_report();
  r.what_if.variants.erase(r.what_if.variants.begin());
  std::ostringstream out;
  write_text_report(out, r, {});
  EXPECT_THAT(out.str(), HasSubstr("Verdict: no fix measured a saving (1 applied, 1 of them slower"));
  EXPECT_THAT(out.str(), Not(HasSubstr("best measured fix")));
}

GateOptions measured_saving(double fraction) {
  GateOptions o;
  o.max_measured_saving = fraction;
  return o;
}

// The comparison's measured-saving check (a copy: the comparison is a temporary), or none.
std::optional<GateCheck> saving_check(const Comparison& c) {
  for (const GateCheck& k : c.checks)
    if (k.rule == "measured saving of a fix") return k;
  return std::nullopt;
}

TEST(WhatIfReport, TheGateFailsOnAMeasuredSavingOfAtLeastTheThreshold) {
  const Report r = measured_report();
  const double sure = -r.what_if.variants[0].time.relative_high();  // the interval's bound nearest 0
  ASSERT_GT(sure, 0.05);
  const Comparison fails = compare_reports(r, r, measured_saving(0.05));
  ASSERT_TRUE(saving_check(fails));
  EXPECT_FALSE(saving_check(fails)->passed);
  EXPECT_THAT(saving_check(fails)->detail, HasSubstr("contiguous_at aten::transpose at model.py:7: measured:"));
  EXPECT_TRUE(saving_check(compare_reports(r, r, measured_saving(sure + 0.01)))->passed);
  // Off by default; a cause accepted is not gated; a report that measured nothing fails, saying so.
  EXPECT_FALSE(saving_check(compare_reports(r, r, GateOptions{})));
  Report accepted = r;
  accepted.causes[0].accepted = true;
  EXPECT_TRUE(saving_check(compare_reports(r, accepted, measured_saving(0.05)))->passed);
  Report unmeasured = r;
  unmeasured.what_if = WhatIfRun{};
  const std::optional<GateCheck> none = saving_check(compare_reports(r, unmeasured, measured_saving(0.05)));
  EXPECT_FALSE(none->passed);
  EXPECT_THAT(none->detail, HasSubstr("measured no fixes: run it with --what-if"));
}

FixAction action(FixKind kind, const std::string& format = "", int input = -1) {
  FixAction a;
  a.kind = kind;
  a.op = kind == FixKind::contiguous_at ? "aten::permute" : kind == FixKind::swap_operands ? "aten::add" : "";
  a.where = a.op.empty() ? "" : "m.py:3";
  a.format = format;
  a.input = input;
  return a;
}

TEST(WhatIfPlan, EachCausesFirstFixItsSwapsItsModelWideOneThenTheFirstFixesTogether) {
  Report r;
  r.causes.resize(4);
  r.causes[0].actions = {action(FixKind::contiguous_at, "contiguous"), action(FixKind::swap_operands),
                         action(FixKind::convert_model, "channels_last")};
  r.causes[1].accepted = true;  // made on purpose: not measured
  r.causes[1].actions = {action(FixKind::feed_input, "contiguous", 1)};
  r.causes[2].actions = {action(FixKind::feed_input, "contiguous", 0), action(FixKind::convert_model, "channels_last")};
  r.causes[3].actions = {action(FixKind::contiguous_at, "contiguous")};
  std::vector<std::string> names;
  for (const VariantPlan& p : what_if_plans(r, 2)) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"contiguous_at aten::permute at m.py:3", "swap_operands aten::add at m.py:3",
                                             "model as channels_last", "input 0 as contiguous",
                                             "contiguous_at aten::permute at m.py:3 + input 0 as contiguous"}));
  const std::vector<VariantPlan> plans = what_if_plans(r, 2);
  EXPECT_EQ(plans.back().causes, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(plans[3].causes, (std::vector<int64_t>{2}));
  // A first fix no front end applies is listed (refused, with why), not put in the together one.
  r.causes[2].actions[0] = FixAction{};
  r.causes[2].actions[0].not_applied = "a compile setting";
  const std::vector<VariantPlan> refused = what_if_plans(r, 2);
  EXPECT_EQ(refused.back().name, "none");
  EXPECT_TRUE(what_if_plans(r, 0).empty());
}

}  // namespace
}  // namespace layoutprof
