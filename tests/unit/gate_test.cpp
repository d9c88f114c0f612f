#include "report/comparison_text.h"
#include "gate/gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "analysis/analysis.h"
#include "support/errors.h"
#include "report/json_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using namespace testing;
using ::testing::HasSubstr;

ModelInput input(const std::string& spec_text) {
  ModelInput mi;
  mi.spec = parse_input_spec(spec_text);
  mi.tensor = tensor({2, 4, 3}, {12, 3, 1}, 1);
  return mi;
}

// Modules "stem", "block" and "head"; with_copy makes block transpose and reshape (an
// implicit copy) where it otherwise only views.
Report model(bool with_copy, bool extra_upstream_op = false, const std::string& spec = "2x4x3") {
  Call call;
  TensorInfo x = tensor({2, 4, 3}, {12, 3, 1}, 1);
  if (extra_upstream_op) add_op(call, "aten::relu", -1, {x}, {tensor({2, 4, 3}, {12, 3, 1}, 5)}, "stem");
  add_op(call, "aten::linear", -1, {x}, {tensor({2, 4, 3}, {12, 3, 1}, 6)}, "stem");
  if (with_copy) {
    TensorInfo xt = tensor({2, 3, 4}, {12, 1, 3}, 1);
    TensorInfo dense = tensor({2, 3, 4}, {12, 4, 1}, 2);
    add_op(call, "aten::transpose", -1, {x}, {xt}, "block");
    int64_t r = add_op(call, "aten::reshape", -1, {xt}, {tensor({2, 12}, {12, 1}, 2)}, "block");
    int64_t k = add_op(call, "aten::clone", r, {xt}, {dense});
    TensorInfo src = xt;
    src.arg = 1;
    add_op(call, "aten::copy_", k, {dense, src}, {dense});
  } else {
    add_op(call, "aten::reshape", -1, {x}, {tensor({2, 12}, {12, 1}, 1)}, "block");
  }
  add_op(call, "aten::add", -1, {x, x}, {tensor({2, 4, 3}, {12, 3, 1}, 7)}, "head");
  call.wall_ns = 1000;
  return analyze(trace_of({call}, {input(spec)}));
}

GateCheck find(const Comparison& c, const std::string& scope, const std::string& rule) {
  for (const GateCheck& k : c.checks)
    if (k.scope == scope && k.rule == rule) return k;
  ADD_FAILURE() << "no check " << scope << " / " << rule;
  return {};
}

TEST(Gate, EqualReportsPass) {
  Report a = model(true);
  Comparison c = compare_reports(a, a, GateOptions{});
  EXPECT_FALSE(c.regressed());
  EXPECT_GT(c.checks.size(), 10u);
}

TEST(Gate, ANewImplicitCopyRegressesAndSaysWhere) {
  Comparison c = compare_reports(model(false), model(true), GateOptions{});
  EXPECT_TRUE(c.regressed());
  GateCheck k = find(c, "block", "implicit_layout copies");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.before, "0");
  EXPECT_EQ(k.after, "1");
  EXPECT_THAT(k.detail, HasSubstr("aten::reshape at model.py:"));
  EXPECT_THAT(k.detail, HasSubstr("(0 → 1)"));
  GateCheck splits = find(c, "block", "split points");
  EXPECT_FALSE(splits.passed);
  EXPECT_THAT(splits.detail, HasSubstr("aten::transpose"));  // a new op, a new split point
  EXPECT_FALSE(find(c, "total", "implicit_layout copies").passed);
  // The modules that did not change pass.
  EXPECT_TRUE(find(c, "head", "implicit_layout copies").passed);
  EXPECT_TRUE(find(c, "stem", "copy bytes").passed);
}

TEST(Gate, RemovingACopyIsAnImprovementNotARegression) {
  Comparison c = compare_reports(model(true), model(false), GateOptions{});
  EXPECT_FALSE(c.regressed());
  bool noted = false;
  for (const std::string& n : c.notes) noted = noted || n.find("improved") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Gate, ThresholdsLetChangesThrough) {
  GateOptions lenient;
  lenient.max_new_implicit_copies = 1;
  lenient.max_new_split_points = 2;
  lenient.max_copy_bytes_increase = 1e9;
  lenient.max_new_copy_bytes = 1000;
  lenient.max_dtlb_increase = 1e9;
  lenient.max_new_birthplaces = 1;
  Comparison c = compare_reports(model(false), model(true), lenient);
  EXPECT_FALSE(c.regressed()) << format_comparison(c, DiffFormat::text, false);
}

TEST(Gate, ANewBirthplaceIsARegressionNamedWithItsLine) {
  Comparison c = compare_reports(model(false), model(true), GateOptions{});
  const GateCheck k = find(c, "total", "birthplaces");
  EXPECT_FALSE(k.passed);
  EXPECT_EQ(k.before, "0");
  EXPECT_EQ(k.after, "1");
  EXPECT_THAT(k.detail, HasSubstr("1 new: permuted(0,2,1) born at aten::transpose in block (model.py:"));
  // The same birthplace on another line (an edit above it) is not new.
  Report moved = model(true);
  for (LayoutCause& cause : moved.causes) cause.where += "0";
  EXPECT_TRUE(find(compare_reports(model(true), moved, GateOptions{}), "total", "birthplaces").passed);
  // A baseline written before birthplaces is compared as before, and the comparison says so.
  Report old = model(false);
  old.causes_in_file = false;
  const Comparison before = compare_reports(old, model(true), GateOptions{});
  EXPECT_THAT(before.notes, Contains(HasSubstr("written before layoutprof traced them")));
}

TEST(Gate, AnOpInsertedUpstreamDoesNotShiftTheRest) {
  Report base = model(true);
  Report now = model(true, /*extra_upstream_op=*/true);
  Comparison c = compare_reports(base, now, GateOptions{});
  EXPECT_FALSE(c.regressed()) << format_comparison(c, DiffFormat::text, true);
  std::vector<int64_t> match = align_top_level_ops(base, now);
  for (const OpEvent& op : now.ops) {
    if (op.parent >= 0) continue;
    if (op.name == "aten::relu") { EXPECT_EQ(match[op.id], -1); }
    else { ASSERT_GE(match[op.id], 0) << op.name; }
    if (match[op.id] >= 0) { EXPECT_EQ(base.ops[match[op.id]].name, op.name); }
  }
}

// check, diff and --baseline read reports with their top-level ops only: every comparison is
// the one the whole reports make, either way round, and against a live (whole) report.
TEST(Gate, ReportsReadForTheGateCompareAsWholeReports) {
  const Report base = model(false), now = model(true, /*extra_upstream_op=*/true);
  auto gate_read = [](const Report& r, const std::string& name) {
    const std::string path = ::testing::TempDir() + "/gate_" + name + "." + std::to_string(getpid()) + ".json";
    std::ofstream(path) << report_json_text(r);
    return load_report_file(path, OpDetail::top_level);
  };
  const Report base_g = gate_read(base, "base"), now_g = gate_read(now, "now");
  ASSERT_LT(now_g.ops.size(), now.ops.size()) << "nested ops are left out";
  for (bool table : {false, true}) {
    auto text = [table](const Report& a, const Report& b) {
      return format_comparison(compare_reports(a, b, GateOptions{}), DiffFormat::markdown, table);
    };
    EXPECT_EQ(text(base_g, now_g), text(base, now));
    EXPECT_EQ(text(now_g, base_g), text(now, base));
    EXPECT_EQ(text(base_g, now), text(base, now));  // --baseline: the live report is whole
    EXPECT_THAT(text(base_g, now_g), HasSubstr("aten::reshape"));
  }
  EXPECT_TRUE(compare_reports(base_g, now_g, GateOptions{}).regressed());
  // The alignment pairs positions, the same ops as the whole reports' alignment pairs by id.
  const std::vector<int64_t> match = align_top_level_ops(base_g, now_g), whole = align_top_level_ops(base, now);
  ASSERT_EQ(match.size(), now_g.ops.size());
  int64_t paired = 0;
  for (size_t i = 0; i < now_g.ops.size(); ++i) {
    const int64_t expected = whole[now_g.ops[i].id];
    EXPECT_EQ(match[i] >= 0 ? base_g.ops[match[i]].id : -1, expected) << now_g.ops[i].name;
    paired += expected >= 0;
  }
  EXPECT_EQ(paired, 3) << "linear, reshape and add pair; relu and transpose are new";
}

TEST(Gate, BytesGrowingBeyondTheThresholdRegress) {
  Report base = model(true);
  Report bigger = base;
  for (ModuleStats& m : bigger.modules)
    if (m.module == "block") m.copy_bytes[static_cast<int>(CopyClass::implicit_layout)] *= 2;
  bigger.summary.copy_bytes[static_cast<int>(CopyClass::implicit_layout)] *= 2;
  Comparison c = compare_reports(base, bigger, GateOptions{});
  EXPECT_FALSE(find(c, "block", "copy bytes").passed);
  EXPECT_FALSE(find(c, "total", "implicit_layout bytes").passed);
  GateOptions lenient;
  lenient.max_copy_bytes_increase = 1.5;
  EXPECT_FALSE(compare_reports(base, bigger, lenient).regressed());
}

TEST(Gate, ACopyThatMovesToAnotherOpIsNew) {
  Report base = model(true);
  Report moved = base;
  // The same number of implicit copies, now paid by another op of the module.
  for (CopyRecord& c : moved.copies)
    if (c.cls == CopyClass::implicit_layout)
      for (const OpEvent& op : moved.ops)
        if (op.parent < 0 && op.name == "aten::transpose") c.culprit = op.id;
  Comparison c = compare_reports(base, moved, GateOptions{});
  EXPECT_FALSE(find(c, "block", "implicit_layout copies").passed);
  EXPECT_THAT(find(c, "block", "implicit_layout copies").detail, HasSubstr("aten::transpose"));
}

TEST(Gate, LongModulesAlignAcrossWindowsAfterAnInsertion) {
  // 5000 top-level ops in one module, one inserted at the front: all the rest still pair.
  auto long_model = [](bool inserted) {
    Call call;
    TensorInfo x = tensor({4}, {1}, 1);
    if (inserted) add_op(call, "aten::relu", -1, {x}, {x}, "m");
    const char* names[] = {"aten::add", "aten::mul", "aten::sub", "aten::div", "aten::neg"};
    for (int i = 0; i < 5000; ++i) add_op(call, names[(i * 7 + i / 3) % 5], -1, {x}, {x}, "m");
    return analyze(trace_of({call}, {input("2x4x3")}));
  };
  Report base = long_model(false), now = long_model(true);
  std::vector<int64_t> match = align_top_level_ops(base, now);
  int64_t unmatched = 0;
  for (const OpEvent& op : now.ops)
    if (match[op.id] < 0) ++unmatched;
  EXPECT_EQ(unmatched, 1);
  EXPECT_EQ(match[1], 0);
  EXPECT_EQ(match[5000], 4999);
}

TEST(Gate, TimeIsShownButGatedOnlyWhenAsked) {
  Report base = model(false);
  Report slow = base;
  slow.summary.wall_ns = base.summary.wall_ns * 3;
  EXPECT_FALSE(compare_reports(base, slow, GateOptions{}).regressed());
  GateOptions timed;
  timed.gate_time = 0.10;
  Comparison c = compare_reports(base, slow, timed);
  EXPECT_TRUE(c.regressed());
  EXPECT_FALSE(find(c, "total", "forward time (measured)").passed);
}

// A report whose summary holds one counter total: counted, or sampled (samples x period).
Report with_counter(uint64_t raw, double scaled, CounterMode mode, uint64_t period) {
  Report r = model(false);
  CounterStatus st;
  st.event = "page-faults";
  st.measured = true;
  st.mode = mode;
  st.period = period;
  r.run.counters = {st};
  r.summary.counters = {CounterValue{raw, scaled, false}};
  return r;
}

TEST(Gate, SampledCountersAreGatedOnlyWhenAskedAndBeyondTheirError) {
  const Report base = with_counter(100, 100 * 1000.0, CounterMode::sampled, 1000);
  const Report within = with_counter(110, 110 * 1000.0, CounterMode::sampled, 1000);   // +10%: noise at 100 samples
  const Report beyond = with_counter(200, 200 * 1000.0, CounterMode::sampled, 1000);   // +100%
  Comparison shown = compare_reports(base, beyond, GateOptions{});
  EXPECT_FALSE(shown.regressed()) << "counters are not gated unless asked";
  EXPECT_THAT(shown.notes, Contains(HasSubstr("sampled (estimates, +- ")));
  GateOptions gated;
  gated.gate_counters = 0.05;
  Comparison a = compare_reports(base, within, gated);
  EXPECT_TRUE(find(a, "total", "page-faults (sampled)").passed)
      << "10 more samples of 100 is within two standard deviations of the difference";
  Comparison b = compare_reports(base, beyond, gated);
  EXPECT_FALSE(find(b, "total", "page-faults (sampled)").passed);
  // The same totals counted are exact: +10% is past 5%.
  Comparison counted = compare_reports(with_counter(100000, 100000, CounterMode::counted, 0), with_counter(110000, 110000, CounterMode::counted, 0), gated);
  EXPECT_FALSE(find(counted, "total", "page-faults (measured)").passed);
}

TEST(Gate, GpuTimeAndLayoutCopyKernelTimeAreGatedWithTime) {
  Report base = model(true);
  base.summary.gpu.traced = true;
  base.summary.gpu.gpu_ns = 1000000;
  base.summary.gpu.copy_gpu_ns = 100000;
  Report slower_copies = base;
  slower_copies.summary.gpu.gpu_ns = 1050000;  // +5%: within 10%
  slower_copies.summary.gpu.copy_gpu_ns = 150000;  // +50%
  Comparison shown = compare_reports(base, slower_copies, GateOptions{});
  EXPECT_FALSE(shown.regressed());
  EXPECT_THAT(shown.notes, Contains(HasSubstr("GPU time 1.000 ms → 1.050 ms (+5.0%), of which layout-copy kernels 0.100 ms → 0.150 ms")));
  GateOptions timed;
  timed.gate_time = 0.10;
  Comparison c = compare_reports(base, slower_copies, timed);
  EXPECT_TRUE(find(c, "total", "GPU time (measured)").passed);
  EXPECT_FALSE(find(c, "total", "layout-copy GPU time (measured)").passed);

  Report no_copies = base;
  no_copies.summary.gpu.copy_gpu_ns = 0;
  Report copies_appear = no_copies;
  copies_appear.summary.gpu.copy_gpu_ns = 5000;
  EXPECT_FALSE(find(compare_reports(no_copies, copies_appear, timed), "total", "layout-copy GPU time (measured)").passed)
      << "copy kernels appearing where there were none regress";

  Report cpu = model(true);
  EXPECT_THAT(compare_reports(cpu, base, timed).notes, Contains(HasSubstr("only the new run traced a GPU")));
}

TEST(Gate, AModelThatNowFailsRegresses) {
  Report base = model(false);
  Report failed = base;
  failed.run.status = RunStatus::failed;
  failed.run.error = "RuntimeError: view size is not compatible";
  Comparison c = compare_reports(base, failed, GateOptions{});
  EXPECT_FALSE(find(c, "total", "status").passed);
}

TEST(Gate, IncomparableReportsAreRefused) {
  try {
    check_comparable(model(false), model(false, false, "2x4x3:channels_last_3d"));
    ADD_FAILURE();
  } catch (const UsageError&) {
  }
  try {
    check_comparable(model(false), model(false, false, "8x4x3"));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("other inputs"));
    EXPECT_THAT(e.what(), HasSubstr("2x4x3"));
    EXPECT_THAT(e.what(), HasSubstr("8x4x3"));
  }
  EXPECT_NO_THROW(check_comparable(model(false), model(true)));  // another model: fine
  Report none = model(false);
  none.run.calls_recorded = 0;  // the model never ran: no copies is no evidence
  try {
    check_comparable(model(false), none);
    ADD_FAILURE() << "a report of no recorded call was gated on";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the new report recorded no call"), std::string::npos) << e.what();
  }
}

TEST(Gate, Fractions) {
  EXPECT_DOUBLE_EQ(parse_fraction("--x", "5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_fraction("--x", "0.1"), 0.1);
  EXPECT_THROW(parse_fraction("--x", "five"), UsageError);
  EXPECT_THROW(parse_fraction("--x", "-3%"), UsageError);
}

TEST(GateReporters, MarkdownTableAndJUnit) {
  Comparison c = compare_reports(model(false), model(true), GateOptions{});
  std::string md = format_comparison(c, DiffFormat::markdown, true);
  EXPECT_THAT(md, HasSubstr("### layoutprof: REGRESSED"));
  EXPECT_THAT(md, HasSubstr("| module | implicit |"));
  EXPECT_THAT(md, HasSubstr("| block | 0 → 1 |"));
  std::string xml = junit_xml(c);
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"layoutprof\""));
  EXPECT_THAT(xml, HasSubstr("failures=\"" + std::to_string(c.regressions()) + "\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"layoutprof.block\" name=\"implicit_layout copies\">"));
  EXPECT_THAT(xml, HasSubstr("<failure message="));
}

}  // namespace
}  // namespace layoutprof

namespace layoutprof {
namespace {

Report with_grad(GradVerdict verdict, const std::string& name = "conv.weight") {
  Report r = analyze(testing::trace_of({testing::transpose_reshape_call()}));
  r.run.backward = true;
  ParamGrad p;
  p.name = name;
  p.verdict = verdict;
  r.parameters = {p};
  return r;
}

TEST(Gate, ANewGradientLayoutMismatchRegressesByName) {
  auto failed = [](const Comparison& c) {
    for (const GateCheck& k : c.checks)
      if (k.rule == "gradient layout mismatches") return !k.passed;
    ADD_FAILURE() << "no gradient check";
    return false;
  };
  Comparison c = compare_reports(with_grad(GradVerdict::match), with_grad(GradVerdict::size1_only), GateOptions{});
  EXPECT_TRUE(c.regressed());
  EXPECT_TRUE(failed(c));
  // The same mismatch in both runs is not new; another parameter's is.
  EXPECT_FALSE(failed(compare_reports(with_grad(GradVerdict::layout_mismatch), with_grad(GradVerdict::layout_mismatch),
                                      GateOptions{})));
  EXPECT_TRUE(failed(compare_reports(with_grad(GradVerdict::layout_mismatch, "a.weight"),
                                     with_grad(GradVerdict::layout_mismatch, "b.weight"), GateOptions{})));
  // A mismatch that turns from one kind into the other is new too (a copy every step became
  // DDP's warning, or the other way round).
  EXPECT_TRUE(failed(compare_reports(with_grad(GradVerdict::size1_only), with_grad(GradVerdict::layout_mismatch),
                                     GateOptions{})));
  // Fixed: an improvement.
  EXPECT_FALSE(failed(compare_reports(with_grad(GradVerdict::size1_only), with_grad(GradVerdict::match), GateOptions{})));
  GateOptions lenient;
  lenient.max_new_grad_mismatches = 1;
  EXPECT_FALSE(failed(compare_reports(with_grad(GradVerdict::match), with_grad(GradVerdict::size1_only), lenient)));
}

}  // namespace
}  // namespace layoutprof
