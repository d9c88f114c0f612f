#include "analysis/analysis.h"

#include <gtest/gtest.h>

#include "synthetic.h"

namespace layoutprof {
namespace {

using namespace testing;

int count(const PerCopyClass& v, CopyClass c) { return static_cast<int>(v[static_cast<int>(c)]); }

TEST(Analysis, ReshapeAfterTransposeIsAnImplicitCopyBornAtTheTranspose) {
  Report r = analyze(trace_of({transpose_reshape_call()}));
  ASSERT_EQ(r.copies.size(), 1u);
  const CopyRecord& c = r.copies[0];
  EXPECT_EQ(c.cls, CopyClass::implicit_layout);
  EXPECT_EQ(r.ops[c.culprit].name, "aten::reshape");
  ASSERT_GE(c.origin, 0);
  EXPECT_EQ(r.ops[c.origin].name, "aten::transpose");
  EXPECT_EQ(c.bytes, 24 * 4);
  EXPECT_EQ(count(r.summary.copies, CopyClass::implicit_layout), 1);
  EXPECT_EQ(count(r.summary.copy_bytes, CopyClass::implicit_layout), 96);
  EXPECT_EQ(r.summary.ops, 5);
  EXPECT_EQ(r.summary.top_level_ops, 2);
}

TEST(Analysis, SplitPointsAtTheTransposeAndAtTheCopy) {
  Report r = analyze(trace_of({transpose_reshape_call()}));
  ASSERT_EQ(r.split_points.size(), 2u);
  EXPECT_EQ(r.summary.split_points, 2);
  for (const SplitPoint& sp : r.split_points) {
    EXPECT_EQ(sp.copies, 1) << r.ops[sp.op].name;
    EXPECT_EQ(sp.copy_bytes, 96);
    EXPECT_FALSE(sp.suggestion.empty());
  }
  const SplitPoint* transpose = nullptr;
  const SplitPoint* reshape = nullptr;
  for (const SplitPoint& sp : r.split_points)
    (r.ops[sp.op].name == "aten::transpose" ? transpose : reshape) = &sp;
  ASSERT_TRUE(transpose && reshape);
  EXPECT_EQ(transpose->before, "contiguous");
  EXPECT_EQ(transpose->after, "permuted(0,2,1)");
  EXPECT_EQ(transpose->kinds, (CompactVector<Str>{"layout_change"}));
  EXPECT_EQ(reshape->kinds, (CompactVector<Str>{"layout_change", "layout_copy"}));
  EXPECT_NE(reshape->suggestion.str().find("born at aten::transpose"), std::string::npos)
      << reshape->suggestion;
}

TEST(Analysis, ExplicitContiguousIsExplicit) {
  Call call;
  TensorInfo xt = tensor({3, 4}, {1, 3}, 1);
  TensorInfo dense = tensor({3, 4}, {4, 1}, 2);
  add_op(call, "aten::t", -1, {tensor({4, 3}, {3, 1}, 1)}, {xt});
  int64_t c = add_op(call, "aten::contiguous", -1, {xt}, {dense});
  int64_t k = add_op(call, "aten::clone", c, {xt}, {dense});
  TensorInfo src = xt;
  src.arg = 1;
  add_op(call, "aten::copy_", k, {dense, src}, {dense});
  Report r = analyze(trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].cls, CopyClass::explicit_layout);
  EXPECT_EQ(r.ops[r.copies[0].origin].name, "aten::t");
}

TEST(Analysis, OriginFollowsChainsOfViewsBackToTheFirstLayoutChange) {
  // transpose (dense -> permuted) then narrow (permuted -> strided) then a copy of the narrow.
  Call call;
  TensorInfo x = tensor({2, 4, 3}, {12, 3, 1}, 1);
  TensorInfo xt = tensor({2, 3, 4}, {12, 1, 3}, 1);
  TensorInfo xn = tensor({2, 2, 4}, {12, 1, 3}, 1);
  TensorInfo dense = tensor({2, 2, 4}, {8, 4, 1}, 2);
  add_op(call, "aten::transpose", -1, {x}, {xt});
  add_op(call, "aten::narrow", -1, {xt}, {xn});
  int64_t m = add_op(call, "aten::matmul", -1, {xn}, {dense});
  TensorInfo src = xn;
  src.arg = 1;
  add_op(call, "aten::copy_", m, {dense, src}, {dense});
  Report r = analyze(trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.ops[r.copies[0].origin].name, "aten::transpose");
  EXPECT_EQ(r.copies[0].cls, CopyClass::implicit_layout);
}

TEST(Analysis, OriginIsAModelInputWhenTheInputItselfIsNotDense) {
  Call call;
  TensorInfo in = tensor({2, 3, 4, 5}, {60, 1, 15, 3}, 7);  // channels_last input
  TensorInfo w = tensor({8, 3, 3, 3}, {27, 9, 3, 1}, 8, 1);
  TensorInfo dense = tensor({2, 3, 4, 5}, {60, 20, 5, 1}, 9);
  int64_t conv = add_op(call, "aten::conv2d", -1, {in, w}, {tensor({2, 8, 2, 3}, {48, 6, 3, 1}, 10)});
  TensorInfo src = in;
  src.arg = 1;
  add_op(call, "aten::copy_", conv, {dense, src}, {dense});
  ModelInput mi;
  mi.tensor = in;
  Report r = analyze(trace_of({call}, {mi}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].origin, -1);
  EXPECT_EQ(r.copies[0].origin_input, 0);
  ASSERT_EQ(r.split_points.size(), 1u);
  const SplitPoint& sp = r.split_points[0];
  EXPECT_EQ(sp.kinds, (CompactVector<Str>{"layout_change", "layout_copy", "mixed_formats"}));
  EXPECT_NE(sp.suggestion.str().find("channels_last"), std::string::npos);
}

TEST(Analysis, OneByOneKernelsDoNotMixFormats) {
  Call call;
  TensorInfo in = tensor({2, 3, 4, 5}, {60, 1, 15, 3}, 7);
  TensorInfo w = tensor({8, 3, 1, 1}, {3, 1, 1, 1}, 8, 1);  // dense in both orders
  add_op(call, "aten::conv2d", -1, {in, w}, {tensor({2, 8, 4, 5}, {160, 1, 40, 8}, 10)});
  Report r = analyze(trace_of({call}));
  EXPECT_TRUE(r.split_points.empty());
}

TEST(Analysis, ModulesAggregateInExecutionOrder) {
  Report r = analyze(trace_of({transpose_reshape_call()}));
  ASSERT_EQ(r.modules.size(), 1u);
  const ModuleStats& m = r.modules[0];
  EXPECT_EQ(m.module, "block");
  EXPECT_EQ(m.ops, 5);
  EXPECT_EQ(m.top_level_ops, 2);
  EXPECT_EQ(m.noncontiguous_inputs, 1);  // reshape reads the permuted tensor
  EXPECT_EQ(count(m.copies, CopyClass::implicit_layout), 1);
  EXPECT_EQ(m.split_points, 2);
  EXPECT_EQ(m.transitions, (std::vector<std::string>{"contiguous", "permuted(0,2,1)", "contiguous"}));
}

TEST(Analysis, DurationsAreMediansOverIdenticalCalls) {
  Report r = analyze(trace_of({transpose_reshape_call(100), transpose_reshape_call(900),
                               transpose_reshape_call(300)}));
  EXPECT_TRUE(r.run.calls_identical);
  EXPECT_EQ(r.ops[1].duration_ns, 300);
  EXPECT_EQ(r.run.calls_recorded, 3);
}

// Calls after the first keep only their figures, and a run spills those to disk (the
// durations and counters as varints in a temporary file): the medians are the same.
TEST(Analysis, MediansOverCallsKeptAsSpilledFiguresAreTheSame) {
  auto with_counters = [](int64_t reshape_ns, uint64_t faults) {
    Call c = transpose_reshape_call(reshape_ns);
    for (OpEvent& e : c.events)
      if (e.parent < 0) e.counters = {CounterValue{faults, static_cast<double>(faults) * 1.5, false}};
    return c;
  };
  std::vector<Call> calls = {with_counters(100, 10), with_counters(900, 90), with_counters(300, 30)};
  Trace whole = trace_of(calls);
  CounterStatus faults;
  faults.event = "page-faults";
  faults.measured = true;
  whole.run.counters = {faults};
  Trace kept = whole;
  for (size_t i = 1; i < kept.calls.size(); ++i) {
    kept.calls[i] = keep_figures_only(kept.calls[i], kept.calls[0]);
    kept.calls[i].spill();
    ASSERT_TRUE(kept.calls[i].duration_ns.spilled()) << SpillFile::note();
  }
  Report a = analyze(whole), b = analyze(kept);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  EXPECT_EQ(b.ops[1].duration_ns, 300);
  for (size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].duration_ns, b.ops[i].duration_ns) << i;
    ASSERT_EQ(a.ops[i].counters.size(), b.ops[i].counters.size()) << i;
    for (size_t k = 0; k < a.ops[i].counters.size(); ++k) {
      EXPECT_EQ(a.ops[i].counters[k].raw, b.ops[i].counters[k].raw);
      EXPECT_EQ(a.ops[i].counters[k].scaled, b.ops[i].counters[k].scaled);
    }
  }
  EXPECT_EQ(b.ops[0].counters[0].raw, 30u);
  EXPECT_EQ(b.ops[0].counters[0].scaled, 45.0);
}

// A sampled counter's figure over the calls is their mean, its raw the samples summed: an op
// taking a sample in one call of three gets a third of a period, where a median would say 0
// (and modules, summing such ops, would lose every sparse op's time). Counted ones stay medians.
TEST(Analysis, SampledCountersAreMeansOverTheCallsAndCountedOnesMedians) {
  auto call_with = [](uint64_t samples, uint64_t faults) {
    Call c = transpose_reshape_call();
    for (OpEvent& e : c.events)
      if (e.parent < 0)
        e.counters = {CounterValue{samples, static_cast<double>(samples) * 2000000.0, false},
                      CounterValue{faults, static_cast<double>(faults), false}};
    return c;
  };
  Trace t = trace_of({call_with(0, 10), call_with(1, 90), call_with(0, 30)});
  CounterStatus clock, faults;
  clock.event = "task-clock";
  clock.measured = true;
  clock.mode = CounterMode::sampled;
  clock.period = 2000000;
  faults.event = "page-faults";
  faults.measured = true;  // counted
  t.run.counters = {clock, faults};
  Report r = analyze(t);
  ASSERT_EQ(r.ops[0].counters.size(), 2u);
  EXPECT_EQ(r.ops[0].counters[0].raw, 1u) << "the samples of the three calls";
  EXPECT_DOUBLE_EQ(r.ops[0].counters[0].scaled, 2000000.0 / 3);
  EXPECT_EQ(r.ops[0].counters[1].raw, 30u) << "a counted value's median";
  ASSERT_EQ(r.run.counters[0].calls, 3);
  EXPECT_EQ(r.run.counters[1].calls, 1) << "not sampled: no mean";
  EXPECT_DOUBLE_EQ(r.run.counters[0].error(r.ops[0].counters[0]), 2000000.0 * 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.run.counters[1].error(r.ops[0].counters[1]), 0.0);
}

// A later call that sampled and took no sample keeps no counter values (Call::took_no_sample):
// each reads as 0 in the mean, as if it had kept them.
TEST(Analysis, ACallThatTookNoSampleCountsAsZerosInTheMean) {
  auto call_with = [](uint64_t samples) {
    Call c = transpose_reshape_call();
    for (OpEvent& e : c.events)
      if (e.parent < 0) e.counters = {CounterValue{samples, static_cast<double>(samples) * 1000.0, false}};
    return c;
  };
  CounterStatus clock;
  clock.event = "task-clock";
  clock.measured = true;
  clock.mode = CounterMode::sampled;
  clock.period = 1000;
  Trace kept = trace_of({call_with(3), call_with(0), call_with(0), call_with(1)});
  kept.run.counters = {clock};
  Trace whole = kept;
  for (size_t i = 1; i < kept.calls.size(); ++i) kept.calls[i] = keep_figures_only(kept.calls[i], kept.calls[0]);
  kept.calls[2].counters = PackedInts();
  kept.calls[2].took_no_sample = true;
  const Report a = analyze(whole), b = analyze(kept);
  EXPECT_EQ(b.ops[0].counters[0].raw, 4u);
  EXPECT_DOUBLE_EQ(b.ops[0].counters[0].scaled, 1000.0);
  for (size_t i = 0; i < a.ops.size(); ++i) {
    if (!a.ops[i].counters.empty()) {
      EXPECT_DOUBLE_EQ(a.ops[i].counters[0].scaled, b.ops[i].counters[0].scaled) << i;
    }
  }
}

TEST(Analysis, DifferingCallsAreReported) {
  Call other = transpose_reshape_call();
  other.events.pop_back();
  Report r = analyze(trace_of({transpose_reshape_call(), other}));
  EXPECT_FALSE(r.run.calls_identical);
  EXPECT_EQ(r.ops.size(), 5u);
}

TEST(Analysis, FailedRunShowsTheFailingCall) {
  Call call;
  TensorInfo xt = tensor({2, 3, 4}, {12, 1, 3}, 1);
  add_op(call, "aten::transpose", -1, {tensor({2, 4, 3}, {12, 3, 1}, 1)}, {xt});
  int64_t v = add_op(call, "aten::view", -1, {xt}, {});
  call.events[v].failed = true;
  Trace t = trace_of({call});
  t.run.status = RunStatus::failed;
  t.run.error = "RuntimeError: view size is not compatible";
  Report r = analyze(t);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_TRUE(r.ops[1].failed);
  EXPECT_EQ(r.ops[1].inputs[0].layout().cls, LayoutClass::permuted);
  EXPECT_EQ(r.run.status, RunStatus::failed);
}

TEST(Analysis, AnOpWithoutRecordedOutputsTakesThoseOfTheChildThatMadeThem) {
  // TorchScript's chunk reports no outputs; its aten::chunk child does.
  Call call;
  TensorInfo x = tensor({2, 16, 96}, {1536, 96, 1}, 1);
  TensorInfo q = tensor({2, 16, 32}, {1536, 96, 1}, 1);
  int64_t chunk = add_op(call, "chunk", -1, {x}, {});
  add_op(call, "aten::chunk", chunk, {x}, {q});
  int64_t m = add_op(call, "aten::matmul", -1, {q}, {tensor({2, 16, 32}, {512, 32, 1}, 2)});
  TensorInfo dense = tensor({2, 16, 32}, {512, 32, 1}, 3);
  TensorInfo src = q;
  src.arg = 1;
  add_op(call, "aten::copy_", m, {dense, src}, {dense});
  Report r = analyze(trace_of({call}));
  const OpEvent& first = r.ops[0];
  ASSERT_NE(main_output(r.ops, first.id), nullptr);
  EXPECT_EQ(main_output(r.ops, first.id)->layout().cls, LayoutClass::strided);
  const SplitPoint* at_chunk = nullptr;
  for (const SplitPoint& sp : r.split_points)
    if (sp.op == chunk) at_chunk = &sp;
  ASSERT_NE(at_chunk, nullptr);
  EXPECT_EQ(at_chunk->after, "strided");
  EXPECT_EQ(at_chunk->copies, 1) << "the matmul's copy is born at the chunk";
  EXPECT_NE(at_chunk->suggestion.str().find("`.contiguous()` on the result of this chunk"), std::string::npos) << at_chunk->suggestion;
}

TEST(Analysis, TensorsWithoutStridesNeitherCrashNorMixFormats) {
  // An mkldnn (opaque) 4-D activation next to an NCHW weight: no strides to classify.
  Call call;
  TensorInfo opaque;
  opaque.set_shape({2, 3, 4, 5}, {}, "f32", "cpu", 4);
  ASSERT_EQ(opaque.layout().cls, LayoutClass::unknown);
  TensorInfo w = tensor({8, 3, 3, 3}, {27, 9, 3, 1}, 8, 1);
  add_op(call, "aten::conv2d", -1, {opaque, w}, {opaque});
  Report r = analyze(trace_of({call}));
  EXPECT_TRUE(r.split_points.empty());
  EXPECT_EQ(r.modules[0].noncontiguous_inputs, 0);
}

TEST(Analysis, NoCallsGivesAnEmptyReport) {
  Report r = analyze(trace_of({}));
  EXPECT_TRUE(r.ops.empty());
  EXPECT_EQ(r.summary.ops, 0);
}

TEST(Analysis, BroadcastCopiesHaveNoOrigin) {
  Call call;
  TensorInfo bias = tensor({4}, {1}, 3);
  TensorInfo out = tensor({8, 4}, {4, 1}, 4);
  int64_t l = add_op(call, "aten::linear", -1, {tensor({8, 4}, {4, 1}, 1), tensor({4, 4}, {4, 1}, 2), bias}, {out});
  TensorInfo src = tensor({8, 4}, {0, 1}, 3, 1);
  add_op(call, "aten::copy_", l, {out, src}, {out});
  Report r = analyze(trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].cls, CopyClass::broadcast);
  EXPECT_EQ(r.copies[0].origin, -1);
  EXPECT_TRUE(r.split_points.empty());
}

}  // namespace
}  // namespace layoutprof
