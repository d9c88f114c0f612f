// Gradient verdicts (autograd's layout contract), DDP's lines, and a training step's report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "analysis/grads.h"
#include "report/chrome_trace.h"
#include "support/errors.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

ParamGrad param(std::vector<int64_t> sizes, std::vector<int64_t> strides, std::vector<int64_t> grad_strides,
                bool grad_dense = true) {
  ParamGrad p;
  p.name = "w";
  p.sizes = sizes;
  p.strides = std::move(strides);
  p.has_grad = true;
  p.grad_sizes = std::move(sizes);
  p.grad_strides = std::move(grad_strides);
  p.grad_dense = grad_dense;
  return p;
}

// DDP's own warning beside the verdicts: one it gave that a size1_only verdict predicts is no
// contradiction; one no verdict predicts, and a prediction where DDP gave none, are flagged.
TEST(GradVerdict, AVerdictThatContradictsDdpsOwnWarningIsFlagged) {
  Report r;
  ParamGrad dw = param({16, 1, 3, 3}, {9, 9, 3, 1}, {9, 1, 3, 1});
  dw.name = "dw.weight";
  dw.verdict = grad_verdict(dw);
  ParamGrad conv = param({16, 8, 3, 3}, {1, 8, 192, 64}, {72, 9, 3, 1});
  conv.name = "conv.weight";
  conv.verdict = grad_verdict(conv);
  r.parameters = {dw, conv};
  r.run.measured = {"DDP's grad-strides warning (this process, step 1): grad sizes [16, 1, 3, 3] strides [9, 1, 3, 1], "
                    "bucket view strides [9, 9, 3, 1]"};
  EXPECT_TRUE(ddp_contradictions(r).empty());
  r.run.measured = {"DDP's grad-strides warning (rank 0, step 1): grad sizes [16, 8, 3, 3] strides [72, 9, 3, 1], "
                    "bucket view strides [1, 8, 192, 64]"};
  ASSERT_EQ(ddp_contradictions(r).size(), 1u);
  EXPECT_THAT(ddp_contradictions(r)[0], HasSubstr("sizes [16, 8, 3, 3] and strides [72, 9, 3, 1] that no prediction"));
  r.run.measured = {"DDP's grad-strides warning (this process): none, listened from the start of the profiled block"};
  ASSERT_EQ(ddp_contradictions(r).size(), 1u);
  EXPECT_THAT(ddp_contradictions(r)[0], HasSubstr("`dw.weight`: the shown step predicts DDP's warning, but DDP gave none"));
  // Warnings come once per process: one before the shown step says nothing of it; one after it,
  // where the shown step predicts one, contradicts it.
  r.run.warmup = 1;
  r.run.measured = {"DDP's grad-strides warning (this process, step 1): grad sizes [16, 8, 3, 3] strides [72, 9, 3, 1], "
                    "bucket view strides [1, 8, 192, 64]"};
  EXPECT_TRUE(ddp_contradictions(r).empty());
  r.run.measured = {"DDP's grad-strides warning (this process, step 3): grad sizes [16, 1, 3, 3] strides [9, 1, 3, 1], "
                    "bucket view strides [9, 9, 3, 1]"};
  ASSERT_EQ(ddp_contradictions(r).size(), 1u);
  EXPECT_THAT(ddp_contradictions(r)[0], HasSubstr("but DDP gave it in step 3"));
}

// DDP's buckets keep the strides the parameters had when they were built: a parameter laid out
// otherwise since (a .data = between steps) gives DDP a .grad in the new layout, and DDP warns;
// once the buckets are rebuilt with the new strides, it does not.
TEST(GradVerdict, DdpComparesTheGradWithTheBucketsBuiltStrides) {
  ParamGrad fc = param({6, 8}, {1, 6}, {8, 1});  // a transposed weight; its gradient row-major
  fc.verdict = grad_verdict(fc);
  EXPECT_EQ(fc.verdict, GradVerdict::layout_mismatch);
  EXPECT_FALSE(ddp_warns(fc));  // DDP built now: AccumulateGrad copies into [1, 6], the view's
  fc.bucket_param_strides = {8, 1};
  fc.buckets_built = "at construction, at train.py:12";
  EXPECT_TRUE(ddp_warns(fc));
  EXPECT_EQ(ddp_warning_lines(fc), (std::vector<std::string>{"grad.sizes() = [6, 8], strides() = [1, 6]",
                                                              "bucket_view.sizes() = [6, 8], strides() = [8, 1]"}));
  EXPECT_THAT(grad_suggestion(fc), HasSubstr("DDP built its buckets at construction, at train.py:12, when the "
                                             "parameter's strides were [8, 1]; they are [1, 6] now"));
  fc.bucket_param_strides = {1, 6};  // rebuilt as the second call began
  EXPECT_FALSE(ddp_warns(fc));
  // A parameter that is not dense has a contiguous view, and AccumulateGrad makes its .grad
  // contiguous: no warning, whatever its strides were.
  ParamGrad sliced = param({6, 8}, {16, 1}, {8, 1});
  sliced.verdict = grad_verdict(sliced);
  sliced.bucket_param_strides = {8, 1};
  EXPECT_FALSE(ddp_warns(sliced));
  EXPECT_EQ(bucket_view_strides(sliced), (std::vector<int64_t>{8, 1}));
  // A .grad kept from before the change: AccumulateGrad adds into it (and warns), DDP sees it.
  ParamGrad kept = fc;
  kept.had_grad = true;
  kept.prior_grad_strides = {8, 1};
  EXPECT_TRUE(accumulate_grad_warns(kept));
  EXPECT_EQ(stored_grad_strides(kept), (std::vector<int64_t>{8, 1}));
  EXPECT_TRUE(ddp_warns(kept));  // [8, 1] against the rebuilt [1, 6]
  EXPECT_THAT(grad_suggestion(kept), HasSubstr("the .grad kept from an earlier step has strides [8, 1]"));
  // AccumulateGrad's contract ignores dims of size 1.
  ParamGrad dw = param({8, 1, 3, 3}, {9, 9, 3, 1}, {9, 9, 3, 1});
  dw.had_grad = true;
  dw.prior_grad_strides = {9, 1, 3, 1};
  EXPECT_FALSE(accumulate_grad_warns(dw));
  EXPECT_TRUE(ddp_warns(dw));  // but DDP compares every stride
}

TEST(GradVerdict, FollowsAutogradsLayoutContract) {
  // The same strides.
  EXPECT_EQ(grad_verdict(param({16, 8, 3, 3}, {72, 9, 3, 1}, {72, 9, 3, 1})), GradVerdict::match);
  // The seed's 1x1 weight: channels_last gradient, NCHW parameter, differing on size-1 dims only.
  EXPECT_EQ(grad_verdict(param({256, 256, 1, 1}, {256, 1, 1, 1}, {256, 1, 256, 256})), GradVerdict::size1_only);
  // A depthwise weight: the size-1 input-channel dim.
  EXPECT_EQ(grad_verdict(param({32, 1, 3, 3}, {9, 9, 3, 1}, {9, 1, 3, 1})), GradVerdict::size1_only);
  // A 3x3 weight with a channels_last gradient: differs on dims of size > 1.
  EXPECT_EQ(grad_verdict(param({16, 8, 3, 3}, {72, 9, 3, 1}, {72, 1, 24, 8})), GradVerdict::layout_mismatch);
  // A transposed gradient of a row-major matrix.
  EXPECT_EQ(grad_verdict(param({16, 8}, {8, 1}, {1, 16})), GradVerdict::layout_mismatch);
  // A zero stride on a dim of size 1 breaks the contract (AccumulateGrad copies it).
  EXPECT_EQ(grad_verdict(param({1, 16}, {16, 1}, {0, 1})), GradVerdict::layout_mismatch);
  // Not dense (an expanded view), even where the strides of the dims > 1 agree.
  EXPECT_EQ(grad_verdict(param({4, 1, 8}, {8, 8, 1}, {8, 0, 1}, false)), GradVerdict::layout_mismatch);
  // A parameter that is not dense wants a contiguous gradient: never its own strides.
  EXPECT_EQ(grad_verdict(param({4, 8}, {16, 1}, {8, 1})), GradVerdict::layout_mismatch);
  ParamGrad unused = param({3}, {1}, {});
  unused.has_grad = false;
  EXPECT_EQ(grad_verdict(unused), GradVerdict::no_grad);
  unused.requires_grad = false;
  EXPECT_EQ(grad_verdict(unused), GradVerdict::frozen);
}

TEST(GradVerdict, DdpLinesOnlyWhereDdpWarnsAndAsItPrintsThem) {
  ParamGrad seed = param({256, 256, 1, 1}, {256, 1, 1, 1}, {256, 1, 256, 256});
  seed.verdict = grad_verdict(seed);
  EXPECT_EQ(ddp_warning_lines(seed),
            (std::vector<std::string>{"grad.sizes() = [256, 256, 1, 1], strides() = [256, 1, 256, 256]",
                                      "bucket_view.sizes() = [256, 256, 1, 1], strides() = [256, 1, 1, 1]"}));
  EXPECT_THAT(grad_suggestion(seed), HasSubstr("channels_last"));
  EXPECT_THAT(grad_suggestion(seed), HasSubstr("nothing is slower, but DDP compares every stride"));
  // A gradient AccumulateGrad copies reaches DDP in the parameter's layout: no warning.
  ParamGrad copied = param({16, 8}, {8, 1}, {1, 16});
  copied.verdict = grad_verdict(copied);
  EXPECT_TRUE(ddp_warning_lines(copied).empty());
  EXPECT_THAT(grad_suggestion(copied), HasSubstr("copies it (512 bytes)"));
  ParamGrad match = param({8}, {1}, {1});
  match.verdict = grad_verdict(match);
  EXPECT_TRUE(ddp_warning_lines(match).empty());
  EXPECT_EQ(grad_suggestion(match), "");
}

// A training step: forward ops, then the backward function of the first one, whose nested op
// writes the gradient of a parameter.
Trace training_trace() {
  Call call = testing::transpose_reshape_call();
  const int64_t fwd = 0;  // aten::transpose in "block"
  TensorInfo g = testing::tensor({4, 3}, {1, 4}, 77);
  int64_t bw = testing::add_op(call, "TransposeBackward0", -1, {}, {});
  int64_t inner = testing::add_op(call, "aten::t", bw, {}, {g});
  call.events[bw].forward_op = static_cast<int32_t>(fwd);
  call.events[bw].module = "";
  call.events[bw].source = "";
  call.events[inner].source = "";  // a nested op takes its parent's site, as recorded
  call.backward_from = bw;
  ParamGrad p = param({4, 3}, {3, 1}, {1, 4});
  p.name = "block.weight";
  p.grad_storage = 77;
  p.grad_ns = call.events[inner].start_ns + 5;
  ParamGrad unused = param({2}, {1}, {});
  unused.name = "block.unused";
  unused.has_grad = false;
  call.parameters = {unused, p};
  Trace t = testing::trace_of({call});
  t.run.backward = true;
  t.run.loss = "randn";
  return t;
}

// An op of the user's own Python inside the backward pass (a custom Function's backward): its
// recorded line is not the line `.backward()` was called at, and it stays; the others take
// their forward op's.
TEST(Training, AnOpOfAPythonBackwardKeepsItsOwnLine) {
  Trace t = training_trace();
  Call& call = t.calls.front();
  const int64_t bw = call.backward_from;
  call.events[bw].source = "train.py:40";  // loss.backward()
  const int64_t own = testing::add_op(call, "aten::view", bw, {}, {});
  call.events[own].source = "fused.py:12";
  call.events[bw + 1].source = "train.py:40";
  Report r = analyze(t);
  EXPECT_EQ(r.ops[own].source, "fused.py:12");
  EXPECT_EQ(r.ops[own].module, r.ops[0].module);
  EXPECT_EQ(r.ops[bw + 1].source, r.ops[0].source);
  EXPECT_EQ(r.ops[bw].source, r.ops[0].source);
}

TEST(Training, BackwardOpsTakeTheirForwardOpsModuleAndTheGradientItsProducer) {
  Report r = analyze(training_trace());
  ASSERT_EQ(r.backward_from, 5);
  EXPECT_EQ(r.ops[5].module, r.ops[0].module);
  EXPECT_EQ(r.ops[6].source, r.ops[0].source);
  ASSERT_EQ(r.parameters.size(), 2u);
  EXPECT_EQ(r.parameters[0].name, "block.weight");  // worst first
  EXPECT_EQ(r.parameters[0].verdict, GradVerdict::layout_mismatch);
  EXPECT_EQ(r.parameters[0].producer, 6);
  EXPECT_EQ(r.parameters[1].verdict, GradVerdict::no_grad);
  EXPECT_EQ(r.summary.grad_layout[static_cast<int>(GradVerdict::layout_mismatch)], 1);
  EXPECT_EQ(r.summary.grad_layout[static_cast<int>(GradVerdict::no_grad)], 1);
  EXPECT_EQ(r.summary.grad_layout[static_cast<int>(GradVerdict::match)], 0);
}

TEST(Training, JsonCarriesPassesLinksAndParametersBothWays) {
  Report r = analyze(training_trace());
  nlohmann::json j = report_to_json(r);
  EXPECT_EQ(j["ops"]["backward_from"], 5);
  EXPECT_EQ(j["ops"]["forward_ops"], nlohmann::json::array({5, 0}));
  EXPECT_EQ(j["summary"]["grad_layout"]["layout_mismatch"], 1);
  EXPECT_EQ(j["parameters"][0]["grad_verdict"], "layout_mismatch");
  EXPECT_EQ(j["parameters"][0]["grad_producer"], 6);
  EXPECT_EQ(j["parameters"][0]["grad_forward_op"], 0);
  EXPECT_EQ(j["parameters"][0]["module"], "block");
  EXPECT_TRUE(j["parameters"][0]["ddp_warning"].is_null());
  EXPECT_TRUE(j["parameters"][1]["grad_strides"].is_null());
  Report back = report_from_json(j);
  EXPECT_EQ(back.backward_from, 5);
  EXPECT_EQ(back.ops[5].forward_op, 0);
  ASSERT_EQ(back.parameters.size(), 2u);
  EXPECT_EQ(back.parameters[0].verdict, GradVerdict::layout_mismatch);
  EXPECT_EQ(back.parameters[0].grad_strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(report_to_json(back), j);  // read back, written again: the same document
  nlohmann::json objects = op_list_json(back);  // the op list as objects: each op's pass
  EXPECT_EQ(objects[4]["pass"], "forward");
  EXPECT_EQ(objects[5]["pass"], "backward");
  EXPECT_EQ(objects[5]["forward_op"], 0);
  // A link that points forward in time, or past the ops, is refused.
  nlohmann::json bad = j;
  bad["ops"]["forward_ops"] = nlohmann::json::array({0, 5});
  EXPECT_THROW(report_from_json(bad), UsageError);
  bad = j;
  bad["parameters"][0]["grad_verdict"] = "sideways";
  EXPECT_THROW(report_from_json(bad), UsageError);
}

TEST(Training, TextListsTheMismatchesWithTheirForwardOp) {
  std::ostringstream out;
  write_text_report(out, analyze(training_trace()), TextOptions{});
  EXPECT_THAT(out.str(), HasSubstr("Gradient layouts (what DDP will see): 2 parameters; 0 match, 0 size1_only"));
  EXPECT_THAT(out.str(), HasSubstr("1. block.weight  layout_mismatch  sizes [4, 3], strides [3, 1], gradient strides [1, 4]"));
  EXPECT_THAT(out.str(), HasSubstr("made by aten::t in TransposeBackward0, the backward of aten::transpose in block"));
  EXPECT_THAT(out.str(), HasSubstr("2. block.unused  no_grad"));
  EXPECT_THAT(out.str(), HasSubstr("training step"));
}

TEST(Training, TraceMarksEachSlicesPassAndTheForwardOpOfABackwardOne) {
  nlohmann::json trace = chrome_trace(analyze(training_trace()));
  int backward = 0, forward = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int64_t id = e["args"]["id"];
    EXPECT_EQ(e["args"]["pass"], id >= 5 ? "backward" : "forward") << id;
    EXPECT_EQ(e["cat"].get<std::string>().find("backward") != std::string::npos, id >= 5) << id;
    (id >= 5 ? backward : forward)++;
    if (id == 5) {
      EXPECT_EQ(e["args"]["forward_op"], 0);
    }
  }
  EXPECT_EQ(forward, 5);
  EXPECT_EQ(backward, 2);
}

}  // namespace
}  // namespace layoutprof
