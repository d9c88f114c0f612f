// The backend pass's primitives charged to the shown call's ops, the reorders' roles, and the
// verdict's words: synthetic logs over synthetic calls (the e2e test compares with oneDNN's own
// log on a real model).
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "analysis/backend_conversions.h"
#include "report/backend_json.h"
#include "report/chrome_trace.h"
#include "gate/gate.h"
#include "report/backend_text.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::add_op;
using testing::tensor;

BackendPrimitive primitive(std::string kind, std::string problem, int64_t top, std::string top_name,
                           std::string from = "abcd", std::string to = "aBcd16b", double ms = 1.0) {
  BackendPrimitive p;
  p.kind = std::move(kind);
  p.impl = "jit:uni";
  p.prop = "forward_inference";
  p.args = {{"src", "f32", std::move(from)}, {"dst", "f32", std::move(to)}};
  p.problem = std::move(problem);
  p.ms = ms;
  p.top_op = top;
  p.top_name = std::move(top_name);
  p.inner_name = "aten::mkldnn_convolution";
  return p;
}

// Two convolutions (the second grouped) and a relu between them, as top-level ops.
Call two_convs() {
  Call call;
  TensorInfo x = tensor({8, 3, 32, 32}, {3072, 1024, 32, 1});
  int64_t c1 = add_op(call, "aten::conv2d", -1, {x}, {x}, "conv1");
  add_op(call, "aten::mkldnn_convolution", c1, {x}, {x});
  add_op(call, "aten::relu", -1, {x}, {x}, "relu");
  add_op(call, "aten::conv2d", -1, {x}, {x}, "conv2");
  call.wall_ns = 100'000'000;
  return call;
}

BackendLog log_of_two_convs() {
  BackendLog log;
  log.state = "ran";
  log.top_ops = 3;
  log.library = "oneDNN v3.12.0";
  const std::string conv1 = "mb8_ic3oc64_ih32oh16kh3sh2dh0ph1_iw32ow16kw3sw2dw0pw1";
  log.primitives.push_back(primitive("reorder", "64x3x3x3", 0, "aten::conv2d", "abcd", "Acdb16a"));       // weight
  log.primitives.push_back(primitive("convolution", conv1, 0, "aten::conv2d"));
  log.primitives.push_back(primitive("reorder", "8x64x16x16", 0, "aten::conv2d", "aBcd16b", "abcd"));   // activation out
  const std::string conv2 = "mb8_g2ic64oc64_ih16oh16kh3sh1dh0ph1_iw16ow16kw3sw1dw0pw1";
  log.primitives.push_back(primitive("reorder", "8x64x16x16", 2, "aten::conv2d", "abcd", "aBcd16b"));   // activation in
  log.primitives.push_back(primitive("reorder", "2x32x32x3x3", 2, "aten::conv2d", "abcde", "ABcde16b16a"));  // grouped weight
  log.primitives.push_back(primitive("convolution", conv2, 2, "aten::conv2d"));
  log.primitives.push_back(primitive("reorder", "4x4", -1, ""));  // another thread's: charged to none
  return log;
}

TEST(BackendConversions, AConvolutionsProblemGivesItsDims) {
  ConvDims d = conv_dims("mb8_g2ic64oc32_ih16oh8kh3sh2dh0ph1_iw16ow8kw3sw2dw0pw1");
  EXPECT_EQ(d.src, (std::vector<int64_t>{8, 64, 16, 16}));
  EXPECT_EQ(d.dst, (std::vector<int64_t>{8, 32, 8, 8}));
  EXPECT_EQ(d.weights, (std::vector<int64_t>{2, 16, 32, 3, 3}));
  EXPECT_TRUE(conv_dims("8x64x56x56").src.empty());
  EXPECT_EQ(reorder_dims("8x64x56x56"), (std::vector<int64_t>{8, 64, 56, 56}));
  EXPECT_TRUE(reorder_dims("8x-1").empty());
  EXPECT_TRUE(reorder_dims("mb8_ic3").empty());
}

TEST(BackendConversions, EachPrimitiveIsChargedToItsOpAndEachReorderGetsItsRole) {
  Call call = two_convs();
  BackendRun b = attribute_backend(log_of_two_convs(), call.events);
  ASSERT_TRUE(b.matched) << b.reason;
  ASSERT_EQ(b.calls.size(), 7u);
  EXPECT_EQ(b.calls[0].op, 0);
  EXPECT_EQ(b.calls[0].role, ReorderRole::weight);
  EXPECT_EQ(b.calls[1].role, ReorderRole::none);
  EXPECT_EQ(b.calls[2].role, ReorderRole::activation);
  EXPECT_EQ(b.calls[2].bytes, 8 * 64 * 16 * 16 * 4);
  EXPECT_EQ(b.calls[3].op, 3);  // the third top-level op is event 3
  EXPECT_EQ(b.calls[3].role, ReorderRole::activation);
  EXPECT_EQ(b.calls[4].role, ReorderRole::weight);  // groups: [g, oc/g, ic/g, kh, kw]
  EXPECT_EQ(b.calls[6].op, -1);
  EXPECT_EQ(b.calls[6].role, ReorderRole::other);
  const BackendSummary s = backend_summary(b);
  EXPECT_EQ(s.activation.count, 2);
  EXPECT_EQ(s.weight.count, 2);
  EXPECT_EQ(s.other.count, 1);
  EXPECT_EQ(s.unattributed, 1);
}

TEST(BackendConversions, DimsThatFitTwoRolesAreOtherNeverAGuess) {
  Call call = two_convs();
  BackendLog log;
  log.state = "ran";
  log.top_ops = 3;
  // A 1x1 convolution whose weights [8, 8, 1, 1] have the source's dims [8, 8, 1, 1].
  log.primitives.push_back(primitive("convolution", "mb8_ic8oc8_ih1oh1kh1sh1dh0ph0_iw1ow1kw1sw1dw0pw0", 0, "aten::conv2d"));
  log.primitives.push_back(primitive("reorder", "8x8x1x1", 0, "aten::conv2d"));
  BackendRun b = attribute_backend(log, call.events);
  EXPECT_EQ(b.calls[1].role, ReorderRole::other);
}

TEST(BackendConversions, ACallOfOtherOpsChargesNothing) {
  Call call = two_convs();
  BackendLog log = log_of_two_convs();
  log.top_ops = 4;
  BackendRun b = attribute_backend(log, call.events);
  EXPECT_FALSE(b.matched);
  for (const BackendCall& c : b.calls) EXPECT_EQ(c.op, -1);
  log = log_of_two_convs();
  log.primitives[0].top_name = "aten::linear";  // same count, another op at that place
  EXPECT_FALSE(attribute_backend(log, call.events).matched);
}

Report report_with(BackendLog log) {
  Trace t = testing::trace_of({two_convs()});
  t.backend = std::move(log);
  return analyze(std::move(t));
}

TEST(BackendConversions, TheVerdictNeverSaysNoCopiesWhereOneDnnConvertedActivations) {
  Report r = report_with(log_of_two_convs());
  const std::string head = no_implicit_copies_text(r);
  EXPECT_NE(head.find("no implicit layout copies by PyTorch in a call, but 2 activation reorders"), std::string::npos) << head;
  EXPECT_NE(head.find("measured in the backend pass"), std::string::npos) << head;
  const std::string lines = backend_verdict_lines(r, true);
  EXPECT_NE(lines.find("2 weight reorders"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("activation"), std::string::npos) << lines;
  std::ostringstream out;
  write_backend(out, r, 10);
  EXPECT_NE(out.str().find("activation  1  abcd (NCHW) -> aBcd16b (blocked)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1. conv"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 primitive charged to no op"), std::string::npos) << out.str();
}

TEST(BackendConversions, APassNotRunSaysSo) {
  BackendLog log;
  log.state = "skipped";
  log.reason = "your own ONEDNN_VERBOSE=1 is set";
  EXPECT_NE(no_implicit_copies_text(report_with(log)).find("not seen: your own ONEDNN_VERBOSE=1 is set"), std::string::npos);
  log.state = "off";
  EXPECT_NE(no_implicit_copies_text(report_with(log)).find("--no-backend"), std::string::npos);
  log.state = "ran";
  EXPECT_EQ(no_implicit_copies_text(report_with(log)),
            "no implicit layout copies in a call, by PyTorch or as oneDNN's activation reorders");
}

TEST(BackendConversions, TheJsonObjectReadsBackAsWritten) {
  Report r = report_with(log_of_two_convs());
  BackendRun back = backend_from(backend_json(r.backend), static_cast<int64_t>(r.ops.size()));
  ASSERT_EQ(back.calls.size(), r.backend.calls.size());
  for (size_t i = 0; i < back.calls.size(); ++i) {
    EXPECT_EQ(back.calls[i].op, r.backend.calls[i].op);
    EXPECT_EQ(back.calls[i].role, r.backend.calls[i].role);
    EXPECT_EQ(back.calls[i].bytes, r.backend.calls[i].bytes);
    EXPECT_EQ(back.calls[i].from(), r.backend.calls[i].from());
  }
  EXPECT_EQ(back.library, "oneDNN v3.12.0");
  nlohmann::json bad = backend_json(r.backend);
  bad["primitives"][0]["op"] = 99;
  EXPECT_THROW(backend_from(bad, static_cast<int64_t>(r.ops.size())), std::out_of_range);
}

}  // namespace
}  // namespace layoutprof

namespace layoutprof {
namespace {

TEST(GpuLayoutKernels, AnOpsConversionKernelsAreItsAndUnknownNamesAreListed) {
  Call call;
  TensorInfo x = tensor({8, 3, 32, 32}, {3072, 1024, 32, 1});
  int64_t conv = add_op(call, "aten::conv2d", -1, {x}, {x}, "layer1.conv");
  call.events[conv].gpu_ns = 2'000'000;
  call.events[conv].kernels = {Str("void nchwToNhwcKernel<__half, __half, float, bool=1, bool=0>(int, int, int, int, __half const *, __half*, float, float)"),
                               Str("volta_s884cudnn_fp16_128x128_ldg8_relu_exp_interior_nhwc_tn_v1"),
                               Str("void nhwcToNchwKernel<float, float, float, bool=1, bool=0>(int, int, int, int, float const *, float*, float, float)")};
  int64_t relu = add_op(call, "aten::relu", -1, {x}, {x}, "relu");
  call.events[relu].kernels = {Str("void nhwcToNchwKernel(float const*, float*)")};  // the user's own, by that name
  int64_t conv2 = add_op(call, "aten::conv2d", -1, {x}, {x}, "layer2.conv");
  call.events[conv2].kernels = {Str("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1")};
  const GpuLayoutKernels g = gpu_layout_kernels(call.events);
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].op, conv);
  EXPECT_EQ(g.ops[0].conversions, (std::vector<std::string>{"nchwToNhwcKernel", "nhwcToNchwKernel"}));
  EXPECT_EQ(g.nhwc, 1);
  EXPECT_EQ(g.unknown, (std::vector<std::string>{"volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"}));

  Trace t = testing::trace_of({call});
  Report r = analyze(std::move(t));
  r.summary.gpu.traced = true;
  EXPECT_NE(backend_verdict_lines(r, false).find("on the GPU, 1 op launched cuDNN's layout conversion kernels"), std::string::npos);
  std::ostringstream out;
  write_backend(out, r, 5);
  EXPECT_NE(out.str().find("1. layer1.conv aten::conv2d at model.py:10: nchwToNhwcKernel and nhwcToNchwKernel, 2.000 ms"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("unknown layout: volta_scudnn_winograd"), std::string::npos) << out.str();
}

TEST(BackendGate, ReordersBeyondTheBaselinesFailWhereAsked) {
  Report base = report_with(log_of_two_convs());
  BackendLog more = log_of_two_convs();
  more.primitives.push_back(more.primitives[2]);  // one more activation reorder in conv1
  Report now = report_with(more);
  GateOptions off;
  Comparison c = compare_reports(base, now, off);
  for (const GateCheck& k : c.checks) EXPECT_EQ(k.rule.find("backend"), std::string::npos) << k.rule;
  GateOptions on;
  on.max_new_backend_reorders = 0;
  on.max_backend_bytes_increase = 0.5;
  c = compare_reports(base, now, on);
  int seen = 0;
  for (const GateCheck& k : c.checks) {
    if (k.rule.rfind("backend reorders", 0) == 0) {
      ++seen;
      EXPECT_FALSE(k.passed);
      EXPECT_EQ(k.before, "4");
    }
    if (k.rule.rfind("backend reorder bytes", 0) == 0) {
      ++seen;
      EXPECT_TRUE(k.passed) << k.before << " -> " << k.after;  // 8x64x16x16 more on ~4.6 MB: under 50%
    }
  }
  EXPECT_EQ(seen, 2);
  BackendLog none;
  none.state = "skipped";
  none.reason = "your own ONEDNN_VERBOSE=1 is set";
  c = compare_reports(base, report_with(none), on);
  bool failed_unseen = false;
  for (const GateCheck& k : c.checks)
    failed_unseen = failed_unseen || (k.rule.rfind("backend reorders", 0) == 0 && !k.passed && k.after == "not seen");
  EXPECT_TRUE(failed_unseen);
}

}  // namespace
}  // namespace layoutprof

namespace layoutprof {
namespace {

TEST(BackendConversions, WeightsReLaidOutAtInferenceGetTheirBuildsPrepackFix) {
  Report r = report_with(log_of_two_convs());  // LibTorch 1.13.0 (testing::trace_of)
  EXPECT_NE(weight_prepack_fix(r).find("torch.jit.optimize_for_inference"), std::string::npos) << weight_prepack_fix(r);
  r.run.torch_version = "2.14.1";
  EXPECT_NE(weight_prepack_fix(r).find("torch._inductor.config.freezing = True"), std::string::npos);
  std::ostringstream out;
  write_backend(out, r, 5);
  EXPECT_NE(out.str().find("weights re-laid out on every call at inference (2 weight reorders"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("NCHW activations converted around oneDNN's convolutions (2 reorders"), std::string::npos);
  r.run.backward = true;  // a training step: the weights change every step
  EXPECT_EQ(weight_prepack_fix(r), "");
}

}  // namespace
}  // namespace layoutprof

namespace layoutprof {
namespace {

TEST(BackendConversions, TheTraceShowsThePrimitivesOnATrackOfTheirOwnAtTheirOpsStart) {
  Report r = report_with(log_of_two_convs());
  const nlohmann::json j = chrome_trace(r);
  std::vector<nlohmann::json> primitives;
  bool named = false;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e.contains("tid") && e["tid"] == 1000000) named = true;
    if (e["ph"] == "X" && e["cat"] == "backend,onednn") primitives.push_back(e);
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(primitives.size(), 6u) << "the unattributed one has no op to stand under";
  EXPECT_EQ(primitives[0]["name"], "reorder (weight)");
  EXPECT_DOUBLE_EQ(primitives[0]["ts"].get<double>(), r.ops[0].start_ns / 1e3);
  EXPECT_DOUBLE_EQ(primitives[1]["ts"].get<double>(), primitives[0]["ts"].get<double>() + 1000.0);  // 1 ms later
  EXPECT_EQ(primitives[1]["name"], "convolution");
  EXPECT_EQ(primitives[3]["args"]["op"], "aten::conv2d");
}

}  // namespace
}  // namespace layoutprof
