// compare-formats' verdict on hand-built reports: the spread of plain calls, the fastest pick
// paired round by round (the what-if's statistics), the control (as_given against itself),
// the copies each variant adds or avoids, and the writers.
#include "analysis/format_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/analysis.h"
#include "report/format_comparison_report.h"
#include "report/json_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using namespace testing;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// x -> transpose -> reshape, whose clone copies the transposed view: an implicit layout copy
// charged to aten::reshape in `module`, each of its top-level ops at `line`. `batch` sizes the
// copied tensor (2 x 3 x 4 floats a batch).
void add_copy(Call& call, const std::string& module, const std::string& line, int64_t batch = 2) {
  const size_t first = call.events.size();
  const uint64_t buffer = 2 + first;
  TensorInfo x = tensor({batch, 4, 3}, {12, 3, 1}, 1);
  TensorInfo xt = tensor({batch, 3, 4}, {12, 1, 3}, 1);
  TensorInfo dense = tensor({batch, 3, 4}, {12, 4, 1}, buffer);
  add_op(call, "aten::transpose", -1, {x}, {xt}, module);
  int64_t r = add_op(call, "aten::reshape", -1, {xt}, {tensor({batch, 12}, {12, 1}, buffer)}, module);
  int64_t c = add_op(call, "aten::clone", r, {xt}, {dense});
  TensorInfo src = xt;
  src.arg = 1;
  add_op(call, "aten::copy_", c, {dense, src}, {dense});
  for (size_t i = first; i < call.events.size(); ++i) call.events[i].source = line;
}

// A call of `n` such copies, then a relu in "head".
Call copies_at(int n, const std::string& module = "block", const std::string& line = "model.py:7", int64_t batch = 2) {
  Call call;
  for (int i = 0; i < n; ++i) add_copy(call, module, line, batch);
  add_op(call, "aten::relu", -1, {tensor({batch, 4, 3}, {12, 3, 1}, 1)}, {tensor({batch, 4, 3}, {12, 3, 1}, 99)}, "head");
  call.wall_ns = 1000;
  return call;
}

// `n` plain calls spread evenly over median - spread .. median + spread (ns).
std::vector<int64_t> around(int64_t median, int64_t spread, int n = 9) {
  std::vector<int64_t> calls;
  for (int i = 0; i < n; ++i) calls.push_back(median - spread + 2 * spread * i / (n - 1));
  return calls;
}

FormatVariant variant(const std::string& name, Call call, std::vector<int64_t> plain, Conversion conversion = {}) {
  ModelInput input;
  input.spec = parse_input_spec("2x4x3");
  input.tensor = tensor({2, 4, 3}, {12, 3, 1}, 1);
  Trace t = trace_of({std::move(call)}, {input});
  t.run.plain_call_ns = std::move(plain);
  t.run.conversion = conversion;
  FormatVariant v;
  v.name = name;
  v.ran = true;
  v.report = analyze(std::move(t));
  v.time = time_spread(v.report.run.plain_call_ns);
  return v;
}

// channels_last converted two parameters and its input; contiguous converted nothing.
const Conversion kConvertedToChannelsLast{"channels_last", 2, 4, 0, 0, 1};
const Conversion kNothingConverted{"contiguous", 0, 4, 0, 0, 0};

TEST(TimeSpread, QuartilesInterpolateBetweenTheSortedCalls) {
  TimeSpread odd = time_spread({500, 100, 300, 200, 400});
  EXPECT_EQ(odd.calls, 5);
  EXPECT_EQ(odd.min_ns, 100);
  EXPECT_EQ(odd.q1_ns, 200);
  EXPECT_EQ(odd.median_ns, 300);
  EXPECT_EQ(odd.q3_ns, 400);
  EXPECT_EQ(odd.max_ns, 500);
  EXPECT_EQ(odd.iqr_ns(), 200);
  TimeSpread even = time_spread({400, 100, 300, 200});
  EXPECT_EQ(even.q1_ns, 175);
  EXPECT_EQ(even.median_ns, 250);
  EXPECT_EQ(even.q3_ns, 325);
  EXPECT_EQ(time_spread({}).calls, 0);
  EXPECT_EQ(time_spread({7}).median_ns, 7);
}

// `calls` in the reverse order: the same spread, paired round by round against `calls` their
// differences change sign (no shift).
std::vector<int64_t> reversed(std::vector<int64_t> calls) {
  std::reverse(calls.begin(), calls.end());
  return calls;
}

TEST(FormatVerdict, TheFastestBeyondNoiseIsNamedWithRatioMillisecondsAndItsPairedInterval) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(2020000, 50000)));
  v.push_back(variant("channels_last", copies_at(0), around(1000000, 50000), kConvertedToChannelsLast));
  v.push_back(variant("contiguous", copies_at(1), around(2000000, 50000), kNothingConverted));
  FormatVerdict verdict = format_verdict(v, around(2020000, 50000));
  EXPECT_EQ(verdict.fastest, "channels_last");
  EXPECT_TRUE(verdict.clear);
  ASSERT_EQ(verdict.against.size(), 2u);
  EXPECT_EQ(verdict.against[0].variant, "contiguous") << "the nearest first";
  EXPECT_DOUBLE_EQ(verdict.against[0].ratio, 2.0);
  EXPECT_EQ(verdict.against[0].difference_ns, 1000000);
  EXPECT_TRUE(verdict.against[0].beyond_noise);
  const PairedRounds& p = verdict.against[0].rounds;
  EXPECT_EQ(p.rounds, 9);
  EXPECT_DOUBLE_EQ(p.level, 0.975) << "two pairs: each at 1 - 0.05 / 2";
  EXPECT_EQ(p.saving, Saving::slower);
  EXPECT_DOUBLE_EQ(p.low_ns, 1000000);
  EXPECT_EQ(verdict.summary,
            "channels_last is fastest here: 2.00x faster than contiguous (1.000 ms less per call, paired interval "
            "1.000..1.000 ms), beyond noise");
  // The control: as_given timed first and last in each round, the same each time.
  EXPECT_FALSE(verdict.control_failed);
  EXPECT_EQ(verdict.control_rounds.saving, Saving::within_noise);
  EXPECT_THAT(verdict.control, HasSubstr("as_given against itself, timed first and last in each round: within noise"));
  EXPECT_TRUE(verdict.not_timed.empty());
}

TEST(FormatVerdict, ASteadyShiftInsideWideSpreadsIsMeasuredPairedRoundByRound) {
  // The rounds drift together over +-10%; channels_last is 2% faster in every one of them. The
  // spreads overlap, the pairs do not.
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(1020000, 100000)));
  v.push_back(variant("channels_last", copies_at(0), around(1000000, 100000), kConvertedToChannelsLast));
  FormatVerdict verdict = format_verdict(v, around(1020000, 100000));
  EXPECT_EQ(verdict.fastest, "channels_last");
  EXPECT_TRUE(verdict.clear) << verdict.summary;
  EXPECT_EQ(verdict.against.at(0).rounds.level, 0.95) << "one pair";
  EXPECT_THAT(verdict.against.at(0).why, HasSubstr("beyond noise: measured, slower: 1.00 -> 1.02 ms a call (+2.0%"));
}

TEST(FormatVerdict, DifferencesOfBothSignsAreWithinNoise) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), reversed(around(1000000, 100000))));
  v.push_back(variant("channels_last", copies_at(0), around(999000, 100000), kConvertedToChannelsLast));
  FormatVerdict verdict = format_verdict(v, reversed(around(1000000, 100000)));
  EXPECT_EQ(verdict.fastest, "channels_last") << "the lowest median, named";
  EXPECT_FALSE(verdict.clear);
  EXPECT_FALSE(verdict.against.at(0).beyond_noise);
  EXPECT_EQ(verdict.against.at(0).rounds.saving, Saving::within_noise);
  EXPECT_EQ(verdict.summary,
            "channels_last has the lowest median, but within noise of as_given: no variant is measurably fastest here");
}

TEST(FormatVerdict, AsGivenApartFromItselfMeansNoVerdict) {
  // as_given's second call of each round is half a millisecond slower than its first: the
  // machine's noise is more than the intervals see, and channels_last's lead cannot be trusted.
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(1000000, 10000)));
  v.push_back(variant("channels_last", copies_at(0), around(500000, 10000), kConvertedToChannelsLast));
  FormatVerdict verdict = format_verdict(v, around(1500000, 10000));
  EXPECT_TRUE(verdict.control_failed);
  EXPECT_FALSE(verdict.clear);
  EXPECT_EQ(verdict.against.at(0).rounds.saving, Saving::withheld);
  EXPECT_THAT(verdict.summary, HasSubstr("no verdict on time: as_given against itself differs beyond noise"));
  EXPECT_THAT(verdict.control, HasSubstr("measured, slower: 1.00 -> 1.50 ms a call"));
}

TEST(FormatVerdict, TooFewRoundsAreNotJudgedAndSayHowManyAreNeeded) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(2000000, 10000, 6)));
  v.push_back(variant("channels_last", copies_at(0), around(1000000, 10000, 6), kConvertedToChannelsLast));
  v.push_back(variant("contiguous", copies_at(1), around(3000000, 10000, 6), kConvertedToChannelsLast));
  FormatVerdict verdict = format_verdict(v, around(2000000, 10000, 6));
  EXPECT_EQ(verdict.control_rounds.saving, Saving::within_noise) << "6 rounds give the control's 95% interval";
  EXPECT_EQ(verdict.against.at(0).rounds.saving, Saving::not_judged) << "two pairs at 97.5% need 7";
  EXPECT_FALSE(verdict.clear);
  EXPECT_EQ(verdict.summary, "no verdict on time: 6 rounds are too few for an interval (--timed-calls 7 or more)");
  EXPECT_THAT(verdict.against.at(0).why, HasSubstr("not judged: 6 rounds give no interval at 97.5% (at least 7"));
}

TEST(FormatVerdict, AVariantThatRaisedOrHasNoCallsIsLeftOutAndSaysWhy) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(1000000, 10000)));
  FormatVariant raised = variant("channels_last", copies_at(1), {}, kConvertedToChannelsLast);
  raised.report.run.status = RunStatus::failed;
  raised.report.run.error = "RuntimeError: view size is not compatible with input tensor's size and stride";
  v.push_back(std::move(raised));
  v.push_back(variant("contiguous", copies_at(1), {}, kNothingConverted));
  FormatVerdict verdict = format_verdict(v, around(1000000, 10000));
  ASSERT_EQ(verdict.not_timed.size(), 2u);
  EXPECT_EQ(verdict.not_timed[0],
            "channels_last: could not run: RuntimeError: view size is not compatible with input tensor's size and stride");
  EXPECT_EQ(verdict.not_timed[1], "contiguous: no plain calls");
  EXPECT_EQ(verdict.fastest, "as_given");
  EXPECT_FALSE(verdict.clear);
  EXPECT_EQ(verdict.summary, "no verdict on time: only as_given ran with timings, nothing to compare it with");
  // Copies are compared for every variant that ran ok, timed or not.
  ASSERT_EQ(verdict.copies.size(), 1u);
  EXPECT_EQ(verdict.copies[0].variant, "contiguous");
  // Not run at all.
  FormatVariant skipped;
  skipped.name = "channels_last";
  skipped.skipped = "interrupted before it began";
  EXPECT_THAT(format_verdict({std::move(skipped)}, {}).not_timed.at(0),
              HasSubstr("channels_last: not run (interrupted"));
}

TEST(FormatVerdict, AVariantThatRaisedInItsPlainCallsIsPairedOverTheRoundsItRan) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(2000000, 10000, 12)));
  v.push_back(variant("channels_last", copies_at(0), around(1000000, 10000, 8), kConvertedToChannelsLast));
  FormatVerdict verdict = format_verdict(v, around(2000000, 10000, 12));
  EXPECT_EQ(verdict.against.at(0).rounds.rounds, 8);
  EXPECT_TRUE(verdict.clear);
}

TEST(CopyDelta, IdenticalCopiesAreGroupedAndCountedAgainstAsGiven) {
  Report given = variant("as_given", copies_at(1), {}).report;
  // Three copies at the same op, module and line: one group, two more than as_given.
  CopyDelta more = copy_delta(given, variant("channels_last", copies_at(3), {}).report, "channels_last");
  ASSERT_EQ(more.added.size(), 1u);
  EXPECT_TRUE(more.avoided.empty());
  const CopyChange& added = more.added[0];
  EXPECT_EQ(added.group.op, "aten::reshape");
  EXPECT_EQ(added.group.module, "block");
  EXPECT_EQ(added.group.source, "model.py:7");
  EXPECT_EQ(added.group.cls, CopyClass::implicit_layout);
  EXPECT_EQ(added.group.src_layout, "permuted(0,2,1)");
  EXPECT_EQ(added.group.dst_layout, "contiguous");
  EXPECT_EQ(added.count_before, 1);
  EXPECT_EQ(added.count_after, 3);
  EXPECT_EQ(added.bytes_before, 96);  // 2 x 3 x 4 floats
  EXPECT_EQ(added.bytes_after, 288);
  EXPECT_EQ(more.added_bytes(), 192);
  // None: the group avoided, with as_given's count and bytes.
  CopyDelta none = copy_delta(given, variant("contiguous", copies_at(0), {}).report, "contiguous");
  ASSERT_EQ(none.avoided.size(), 1u);
  EXPECT_EQ(none.avoided[0].count_before, 1);
  EXPECT_EQ(none.avoided[0].count_after, 0);
  EXPECT_EQ(none.avoided_bytes(), 96);
  // The same copy at another line is another group: one avoided, one added.
  CopyDelta moved = copy_delta(given, variant("x", copies_at(1, "block", "model.py:9"), {}).report, "x");
  ASSERT_EQ(moved.added.size(), 1u);
  ASSERT_EQ(moved.avoided.size(), 1u);
  EXPECT_EQ(moved.added[0].group.source, "model.py:9");
  EXPECT_EQ(moved.avoided[0].group.source, "model.py:7");
  // As many copies of a larger tensor: resized.
  CopyDelta larger = copy_delta(given, variant("x", copies_at(1, "block", "model.py:7", 4), {}).report, "x");
  ASSERT_EQ(larger.resized.size(), 1u);
  EXPECT_EQ(larger.resized[0].bytes_after, 192);
  EXPECT_TRUE(copy_delta(given, given, "same").added.empty());
}

TEST(FormatComparison, RowsAreTheHeatmapsModulesAndATotal) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(1000000, 10000)));
  v.push_back(variant("channels_last", copies_at(2, "stem"), around(1000000, 10000), kConvertedToChannelsLast));
  FormatVariant skipped;
  skipped.name = "contiguous";
  skipped.skipped = "interrupted before it began";
  v.push_back(std::move(skipped));
  FormatComparison c = compare_formats(std::move(v), around(1000000, 10000));
  EXPECT_EQ(c.model, "model.pt");
  EXPECT_EQ(c.depth, 1);
  EXPECT_EQ(c.labels, (std::vector<std::string>{"block", "head", "stem"})) << "as_given's first, then the others'";
  ASSERT_EQ(c.rows.size(), 3u);
  ASSERT_EQ(c.rows[1].size(), 4u) << "a row per label, then the total";
  EXPECT_EQ(c.rows[1][0].implicit_copies, 0);
  EXPECT_EQ(c.rows[1][2].implicit_copies, 2);
  EXPECT_EQ(c.rows[1][2].copy_bytes, 192);
  EXPECT_EQ(c.rows[1][2].layout_copy_bytes, 192);
  EXPECT_EQ(c.rows[1][2].split_points, c.variants[1].report.summary.split_points);
  const FormatRow& total = c.rows[0].back();
  EXPECT_EQ(total.label, "(total)");
  EXPECT_EQ(total.implicit_copies, 1);
  EXPECT_EQ(total.copy_bytes, 96);
  EXPECT_GT(total.split_points, 0);
  EXPECT_EQ(total.split_points, c.rows[0][0].split_points) << "all of as_given's in block";
  EXPECT_EQ(c.variants[0].time.calls, 9) << "filled from the plain calls";
  EXPECT_EQ(c.rows[2].back().copy_bytes, 0) << "a variant not run has empty rows";
}

FormatComparison three_variants() {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(1), around(2020000, 50000)));
  v.push_back(variant("channels_last", copies_at(3), around(1000000, 50000), kConvertedToChannelsLast));
  FormatVariant raised = variant("contiguous", copies_at(1), {}, kNothingConverted);
  raised.report.run.status = RunStatus::failed;
  raised.report.run.error = "RuntimeError: boom";
  v.push_back(std::move(raised));
  return compare_formats(std::move(v), around(2020000, 50000));
}

TEST(FormatComparisonText, SaysWhatEachVariantDidTheTimesTheVerdictAndTheCopies) {
  std::ostringstream out;
  write_format_comparison_text(out, three_variants());
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("compare-formats — model.pt"));
  EXPECT_THAT(text, HasSubstr("converted 2 of 4 parameters, 0 of 0 buffers, 1 input to channels_last"));
  EXPECT_THAT(text, HasSubstr("contiguous     could not run: RuntimeError: boom"));
  EXPECT_THAT(text, HasSubstr("Copies per module (derived): rows are modules at depth 1"));
  EXPECT_THAT(text, HasSubstr("  (total)"));
  EXPECT_THAT(text, HasSubstr("Plain calls (measured"));
  EXPECT_THAT(text, HasSubstr("channels_last is fastest here: 2.02x faster than as_given (1.020 ms less per call, "
                              "paired interval 1.020..1.020 ms), beyond noise"));
  EXPECT_THAT(text, HasSubstr("control  as_given against itself, timed first and last in each round: within noise"));
  EXPECT_THAT(text, HasSubstr("not timed  contiguous: could not run: RuntimeError: boom"));
  EXPECT_THAT(text, HasSubstr("noise rule: the variants are timed in interleaved rounds (as_given, each variant, "
                              "as_given again)"));
  EXPECT_THAT(text, HasSubstr("channels_last: adds 2 copies (0.000 MB), avoids 0 copies"));
  EXPECT_THAT(text, HasSubstr("adds     1 → 3  implicit_layout, 0.000 → 0.000 MB: aten::reshape in block at model.py:7  "
                              "(permuted(0,2,1) → contiguous)"));
}

TEST(FormatComparisonText, ListsAtMostTheGroupsAskedAndSaysHowManyMore) {
  std::vector<FormatVariant> v;
  v.push_back(variant("as_given", copies_at(0), around(1000000, 10000)));
  Call many;
  for (int line = 0; line < 5; ++line) add_copy(many, "block", "model.py:" + std::to_string(line));
  many.wall_ns = 1000;
  v.push_back(variant("channels_last", std::move(many), around(1000000, 10000), kConvertedToChannelsLast));
  FormatTextOptions o;
  o.copy_groups = 2;
  std::ostringstream out;
  write_format_comparison_text(out, compare_formats(std::move(v), around(1000000, 10000)), o);
  EXPECT_THAT(out.str(), HasSubstr("channels_last: adds 5 copies"));
  EXPECT_THAT(out.str(), HasSubstr("... and 3 more groups adds    (3 copies, 0.000 MB; all in --json)"));
  EXPECT_THAT(out.str(), Not(HasSubstr("model.py:4")));
}

TEST(FormatComparisonJson, OneWholeDocumentWithEveryVariantsReportAndTheVerdict) {
  const FormatComparison c = three_variants();
  std::ostringstream out;
  write_format_comparison_json(out, c);
  const json doc = json::parse(out.str());  // whole: it parses
  EXPECT_EQ(doc["compare_formats_version"], 2);
  EXPECT_EQ(doc["model"], "model.pt");
  EXPECT_EQ(doc["noise_rule"]["level"], 0.95);
  EXPECT_EQ(doc["as_given_again_ns"].size(), 9u);
  ASSERT_EQ(doc["variants"].size(), 3u);
  const json& cl = doc["variants"][1];
  EXPECT_EQ(cl["name"], "channels_last");
  EXPECT_EQ(cl["status"], "ok");
  EXPECT_EQ(cl["conversion"]["parameters"], 2);
  EXPECT_EQ(cl["time"]["calls"], 9);
  EXPECT_EQ(cl["time"]["median_ns"], 1000000);
  EXPECT_EQ(cl["total"]["implicit_copies"], 3);
  EXPECT_EQ(cl["rows"][0]["module"], "block");
  // Each variant's report is the one write_report_json writes, and reads back.
  EXPECT_EQ(cl["report"], report_to_json(c.variants[1].report));
  EXPECT_EQ(report_from_json(cl["report"]).summary.copies[0], 3);
  EXPECT_EQ(doc["variants"][0]["conversion"], nullptr);
  EXPECT_EQ(doc["variants"][2]["status"], "failed");
  EXPECT_EQ(doc["variants"][2]["error"], "RuntimeError: boom");
  const json& verdict = doc["verdict"];
  EXPECT_EQ(verdict["fastest"], "channels_last");
  EXPECT_EQ(verdict["clear"], true);
  EXPECT_EQ(verdict["against_fastest"][0]["variant"], "as_given");
  EXPECT_EQ(verdict["against_fastest"][0]["rounds"]["saving"], "slower");
  EXPECT_EQ(verdict["against_fastest"][0]["rounds"]["rounds"], 9);
  EXPECT_EQ(verdict["control_rounds"]["saving"], "within_noise");
  EXPECT_EQ(verdict["copies"][0]["variant"], "channels_last");
  EXPECT_EQ(verdict["copies"][0]["added"][0]["count_after"], 3);
  EXPECT_EQ(verdict["copies"][0]["added"][0]["op"], "aten::reshape");
  EXPECT_EQ(verdict["not_timed"][0], "contiguous: could not run: RuntimeError: boom");
  // A variant that did not run has no report.
  std::vector<FormatVariant> v;
  FormatVariant skipped;
  skipped.name = "as_given";
  skipped.skipped = "interrupted before it began";
  v.push_back(std::move(skipped));
  std::ostringstream none;
  write_format_comparison_json(none, compare_formats(std::move(v), {}));
  const json empty = json::parse(none.str());
  EXPECT_EQ(empty["variants"][0]["report"], nullptr);
  EXPECT_EQ(empty["variants"][0]["skipped"], "interrupted before it began");
  EXPECT_EQ(empty["verdict"]["fastest"], nullptr);
  EXPECT_EQ(empty["verdict"]["control_rounds"], nullptr);
}

}  // namespace
}  // namespace layoutprof
