#include "analysis/verdict.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/analysis.h"
#include "report/comparison_text.h"
#include "gate/gate.h"
#include "report/json_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::add_op;
using testing::tensor;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A convolution in `module` that copies one operand into the other's memory format inside a
// nested contiguous(), as oneDNN does: `data` and `weight` are its inputs, `copied` (0: the
// data, 1: the weight) the one converted to `to_strides`.
void add_conv(Call& call, const std::string& module, TensorInfo data, TensorInfo weight, int copied,
              std::vector<int64_t> to_strides, uint64_t copy_storage) {
  data.arg = 0;
  weight.arg = 1;
  TensorInfo out = tensor({2, 16, 4, 4}, {256, 1, 64, 16}, copy_storage + 100);
  const int64_t conv = add_op(call, "aten::conv2d", -1, {data, weight}, {out}, module);
  const TensorInfo& src = copied == 0 ? data : weight;
  TensorInfo dst = tensor(src.sizes(), std::move(to_strides), copy_storage);
  const int64_t contiguous = add_op(call, "aten::contiguous", conv, {src}, {dst});
  TensorInfo from = src;
  from.arg = 1;
  dst.arg = 0;
  add_op(call, "aten::copy_", contiguous, {dst, from}, {dst}, "", 2000);
}

TensorInfo nhwc_data() { return tensor({2, 8, 4, 4}, {128, 1, 32, 8}, 1); }
TensorInfo nchw_data() { return tensor({2, 8, 4, 4}, {128, 16, 4, 1}, 1); }
TensorInfo nchw_weight(uint64_t storage) { return tensor({16, 8, 3, 3}, {72, 9, 3, 1}, storage); }
TensorInfo nhwc_weight(uint64_t storage) { return tensor({16, 8, 3, 3}, {72, 1, 24, 8}, storage); }

// Two convolutions whose NCHW weights meet channels_last data, then a reshape after a transpose.
Report two_causes() {
  Call call = testing::transpose_reshape_call();
  add_conv(call, "features.conv1", nhwc_data(), nchw_weight(10), 1, {72, 1, 24, 8}, 11);
  add_conv(call, "features.conv2", nhwc_data(), nchw_weight(20), 1, {72, 1, 24, 8}, 21);
  return analyze(testing::trace_of({call}));
}

TEST(CopyCauses, WeightsInAnotherFormatAreOneCauseWithTheModelConversionAsFix) {
  const std::vector<CopyCause> causes = group_copy_causes(two_causes());
  ASSERT_EQ(causes.size(), 2u);
  const CopyCause& k = causes[0];  // most bytes first: two 16x8x3x3 weights
  EXPECT_EQ(k.kind, CauseKind::format_mismatch);
  EXPECT_FALSE(k.data_converted);
  EXPECT_EQ(k.copies, 2);
  EXPECT_EQ(k.bytes, 2 * 16 * 8 * 3 * 3 * 4);
  EXPECT_EQ(k.time_ns, 4000) << "the copies' own measured time";
  EXPECT_EQ(k.modules, (std::vector<std::string>{"features.conv1", "features.conv2"}));
  EXPECT_EQ(k.readers, (std::vector<std::string>{"aten::conv2d"}));
  EXPECT_EQ(k.from, "contiguous");
  EXPECT_EQ(k.to, "channels_last");
  EXPECT_TRUE(contains(k.what, "channels_last data meets NCHW (contiguous) weights")) << k.what;
  EXPECT_EQ(k.fix, "convert the model once: model.to(memory_format=torch.channels_last)");
}

TEST(CopyCauses, AReshapeAfterATransposeNamesTheTransposeAndWhereItWasCalled) {
  const std::vector<CopyCause> causes = group_copy_causes(two_causes());
  ASSERT_EQ(causes.size(), 2u);
  const CopyCause& k = causes[1];
  EXPECT_EQ(k.kind, CauseKind::view_copy);
  EXPECT_EQ(k.copies, 1);
  EXPECT_EQ(k.bytes, 2 * 3 * 4 * 4);
  EXPECT_EQ(k.readers, (std::vector<std::string>{"aten::reshape"}));
  EXPECT_EQ(k.origin, "aten::transpose");
  EXPECT_EQ(k.modules, (std::vector<std::string>{"block"}));
  EXPECT_EQ(k.sources, (std::vector<std::string>{"model.py:11"}));
  EXPECT_EQ(k.origin_sources, (std::vector<std::string>{"model.py:10"}));
  EXPECT_TRUE(contains(k.fix, "`.contiguous()` on the result of the transpose")) << k.fix;
}

// A compiled graph's backward makes a weight's gradient channels_last (inductor's layout
// optimization) and AccumulateGrad copies it to the contiguous parameter's layout: the fix is a
// compile setting, not a `.contiguous()` on the compiled function.
TEST(CopyCauses, ALayoutBornInCompiledCodeIsFixedWhereInductorPicksIt) {
  Call call;
  TensorInfo grad_out = tensor({2, 16, 4, 4}, {256, 16, 4, 1}, 1);
  TensorInfo grad_w = tensor({16, 8, 3, 3}, {72, 1, 24, 8}, 2);
  TensorInfo param_grad = tensor({16, 8, 3, 3}, {72, 9, 3, 1}, 3);
  add_op(call, "autograd::engine::evaluate_function: CompiledFunctionBackward", -1, {grad_out}, {grad_w});
  const int64_t acc =
      add_op(call, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", -1, {grad_w}, {}, "c1");
  const int64_t clone = add_op(call, "aten::clone", acc, {grad_w}, {param_grad});
  TensorInfo dst = param_grad, src = grad_w;
  src.arg = 1;
  add_op(call, "aten::copy_", clone, {dst, src}, {param_grad});
  call.wall_ns = 5000;
  const Report r = analyze(testing::trace_of({call}));
  const std::vector<CopyCause> causes = group_copy_causes(r);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_TRUE(contains(causes[0].fix, "torch._inductor.config.layout_optimization = False")) << causes[0].fix;
  EXPECT_FALSE(contains(causes[0].fix, "`.contiguous()` on the result")) << causes[0].fix;
  ASSERT_EQ(r.causes.size(), 1u);
  ASSERT_FALSE(r.causes[0].fixes.empty());
  EXPECT_TRUE(contains(r.causes[0].fixes[0], "inductor's choice inside the compiled graph")) << r.causes[0].fixes[0];
}

// ViT-style tokens, permuted(0,2,1), made inside a compiled region and copied by the eager
// code after it: no compile setting concerns 3-D data, so none is offered.
TEST(CopyCauses, ATokenLayoutAtACompiledGraphsEdgeIsFixedWhereTheDataIsMade) {
  Call call;
  TensorInfo tokens = tensor({2, 16, 8}, {128, 1, 16}, 1);
  TensorInfo dense = tensor({2, 16, 8}, {128, 8, 1}, 2);
  add_op(call, "Torch-Compiled Region: 0/0", -1, {}, {tokens});
  const int64_t reshape = add_op(call, "aten::reshape", -1, {tokens}, {tensor({32, 8}, {8, 1}, 2)});
  const int64_t clone = add_op(call, "aten::clone", reshape, {tokens}, {dense});
  TensorInfo src = tokens;
  src.arg = 1;
  add_op(call, "aten::copy_", clone, {dense, src}, {dense});
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  ASSERT_FALSE(r.causes[0].fixes.empty());
  const std::string& fix = r.causes[0].fixes[0];
  EXPECT_TRUE(contains(fix, "a permuted(0,2,1) tensor crosses the compiled graph's edge")) << fix;
  EXPECT_FALSE(contains(fix, "layout_optimization")) << fix;
  EXPECT_FALSE(contains(fix, "channels_last")) << fix;
}

// A library op that transposes its own dense input inside itself and copies it (a fused
// attention's head merge): the library's copy, no cause by birthplace, and no fix for the caller.
TEST(CopyCauses, ACopyALibraryOpMakesOfItsOwnDenseInputsIsTheLibrarys) {
  Call call;
  TensorInfo x = tensor({2, 16, 8}, {128, 8, 1}, 1);
  TensorInfo inner = tensor({2, 8, 16}, {128, 1, 8}, 1);
  TensorInfo dense = tensor({2, 8, 16}, {128, 16, 1}, 2);
  const int64_t op = add_op(call, "aten::_native_multi_head_attention", -1, {x}, {tensor({2, 16, 8}, {128, 8, 1}, 3)});
  add_op(call, "aten::transpose", op, {x}, {inner});
  const int64_t clone = add_op(call, "aten::clone", op, {inner}, {dense});
  TensorInfo src = inner;
  src.arg = 1;
  add_op(call, "aten::copy_", clone, {dense, src}, {dense});
  const Report r = analyze(testing::trace_of({call}));
  EXPECT_TRUE(r.causes.empty()) << r.causes.size();
  const std::vector<CopyCause> causes = group_copy_causes(r);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_TRUE(causes[0].library);
  EXPECT_TRUE(contains(causes[0].what, "of its own dense inputs on every call: the library's own copy")) << causes[0].what;
  EXPECT_EQ(causes[0].fix.rfind("none in the calling code", 0), 0u) << causes[0].fix;
}

// The same inside compiled code: an op the region calls (a fused encoder layer) handed
// transposed tokens splits heads of a tensor it made itself and copies them. The copy is that
// op's own, not a layout the region was born with (no compile setting, no cause).
TEST(CopyCauses, ACopyOfAViewAnOpCompiledCodeCallsMadeOfItsOwnTensorIsThatOpsOwn) {
  Call call;
  TensorInfo tokens = tensor({2, 16, 8}, {128, 1, 16}, 1);
  TensorInfo qkv = tensor({2, 16, 2, 4}, {128, 8, 4, 1}, 4);
  TensorInfo heads = tensor({2, 2, 16, 4}, {128, 4, 8, 1}, 4);
  TensorInfo dense = tensor({2, 2, 16, 4}, {128, 64, 4, 1}, 5);
  const int64_t region = add_op(call, "Torch-Compiled Region: 0/0", -1, {}, {});
  const int64_t layer = add_op(call, "aten::_transformer_encoder_layer_fwd", region, {tokens},
                               {tensor({2, 16, 8}, {128, 1, 16}, 3)});
  add_op(call, "aten::permute", layer, {qkv}, {heads});
  const int64_t clone = add_op(call, "aten::clone", layer, {heads}, {dense});
  TensorInfo src = heads;
  src.arg = 1;
  add_op(call, "aten::copy_", clone, {dense, src}, {dense});
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_TRUE(r.causes.empty()) << r.causes[0].op_name;
  // The grouped line says the same: the op's own copy, nothing to change in the calling code.
  const std::vector<CopyCause> groups = group_copy_causes(r);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(groups[0].library) << groups[0].what;
  EXPECT_EQ(groups[0].fix.rfind("none in the calling code", 0), 0u) << groups[0].fix;
}

// DDP's reducer copying a bucket view into a .grad of another layout: a copy that follows from
// the gradient layouts, not a birthplace whose result could be made contiguous.
TEST(CopyCauses, DdpsReducerCopyIsNoCauseAndPointsToTheGradients) {
  Call call;
  TensorInfo bucket = tensor({8, 8, 3, 3}, {1, 8, 192, 64}, 1);
  TensorInfo grad = tensor({8, 8, 3, 3}, {72, 9, 3, 1}, 2);
  const int64_t reducer = add_op(call, "torch.distributed.ddp.reducer::copy_bucket_to_grad", -1, {}, {});
  const int64_t view = add_op(call, "aten::as_strided", reducer, {tensor({576}, {1}, 1)}, {bucket});
  (void)view;
  TensorInfo src = bucket;
  src.arg = 1;
  add_op(call, "aten::copy_", reducer, {grad, src}, {grad});
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_TRUE(r.causes.empty()) << r.causes[0].op_name;
  const std::vector<CopyCause> groups = group_copy_causes(r);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(contains(groups[0].what, "DDP's reducer copies between a gradient bucket and a .grad")) << groups[0].what;
  EXPECT_EQ(groups[0].fix.rfind("none here: see Gradient warnings", 0), 0u) << groups[0].fix;
}

// One voice: NCHW data made inside the model (a buffer of zeros concatenated in) meets
// channels_last weights; the grouped conversion takes the birthplace's fix, not "hand the
// model channels_last input", which it already is.
TEST(CopyCauses, AConversionGroupPaidByOneBirthplaceSaysItsFix) {
  Call call;
  add_op(call, "aten::zeros", -1, {}, {nchw_data()});
  add_conv(call, "conv", nchw_data(), nhwc_weight(10), 0, {128, 1, 32, 8}, 11);
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  const std::vector<CopyCause> causes = verdict_of(r).causes;
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, CauseKind::format_mismatch);
  EXPECT_EQ(causes[0].fix, r.causes[0].fixes.front());
  EXPECT_TRUE(contains(causes[0].fix, "on the result of aten::zeros")) << causes[0].fix;
}

TEST(CopyCauses, DataConvertedToTheWeightsFormatAsksForInputInThatFormat) {
  Call call;
  add_conv(call, "conv", nchw_data(), nhwc_weight(10), 0, {128, 1, 32, 8}, 11);
  const std::vector<CopyCause> causes = group_copy_causes(analyze(testing::trace_of({call})));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, CauseKind::format_mismatch);
  EXPECT_TRUE(causes[0].data_converted);
  EXPECT_TRUE(contains(causes[0].fix, "hand the model channels_last input")) << causes[0].fix;
}

TEST(CopyCauses, AnInputCopiedToChannelsLastAsksForAChannelsLastInput) {
  // A permuted model input that the convolution copies to channels_last: the fix names the
  // format it is copied to, as the cause at the input does, not contiguous.
  Call call;
  TensorInfo in = tensor({2, 3, 4, 5}, {60, 1, 3, 12}, 7);
  TensorInfo w = tensor({8, 3, 3, 3}, {27, 1, 9, 3}, 8, 1);
  TensorInfo dense = tensor({2, 3, 4, 5}, {60, 1, 15, 3}, 9);
  const int64_t conv = add_op(call, "aten::conv2d", -1, {in, w}, {tensor({2, 8, 2, 3}, {48, 1, 24, 8}, 10)});
  TensorInfo src = in;
  src.arg = 1;
  add_op(call, "aten::copy_", conv, {dense, src}, {dense});
  ModelInput mi;
  mi.tensor = in;
  const std::vector<CopyCause> causes = group_copy_causes(analyze(testing::trace_of({call}, {mi})));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, CauseKind::input_copy);
  EXPECT_EQ(causes[0].fix, "hand the model a channels_last input (x.contiguous(memory_format=torch.channels_last) where "
                           "it is made)");
}

TEST(CopyCauses, AGroupThatACauseByBirthplaceTellsSaysWhatTheCauseSays) {
  // A convolution copies a permuted weight no recorded op made: known as the model's parameter,
  // the cause names it, and the group says so too, with its fix (not "no recorded op made").
  const auto make = [](bool named) {
    Call call;
    TensorInfo w = tensor({8, 3, 3, 3}, {1, 72, 24, 8}, 8, 1);
    TensorInfo dense = tensor({8, 3, 3, 3}, {27, 9, 3, 1}, 9);
    const int64_t conv = add_op(call, "aten::conv2d", -1, {tensor({2, 3, 4, 5}, {60, 20, 5, 1}, 7), w},
                                {tensor({2, 8, 2, 3}, {48, 6, 3, 1}, 10)});
    TensorInfo src = w;
    src.arg = 1;
    add_op(call, "aten::copy_", conv, {dense, src}, {dense});
    Trace t = testing::trace_of({call});
    if (named) t.run.model_tensors = {testing::model_tensor("conv.weight", false, w)};
    return analyze(t);
  };
  const Report named = make(true), unnamed = make(false);
  ASSERT_EQ(named.causes.size(), 1u);
  EXPECT_EQ(named.causes[0].input_text.rfind("parameter `conv.weight`", 0), 0u) << named.causes[0].input_text;
  const Verdict told = verdict_of(named), untold = verdict_of(unnamed);
  ASSERT_EQ(told.causes.size(), 1u);
  EXPECT_EQ(told.causes[0].what.rfind("aten::conv2d copies the model's parameter `conv.weight`, permuted(1,2,3,0) (cause "
                                      "by birthplace: ", 0), 0u) << told.causes[0].what;
  EXPECT_EQ(told.causes[0].fix, named.causes[0].fixes[0]);
  ASSERT_EQ(untold.causes.size(), 1u);
  EXPECT_TRUE(contains(untold.causes[0].what, "a permuted(1,2,3,0) tensor that no recorded op made")) << untold.causes[0].what;
}

TEST(CopyCauses, ARequestedCopyIsNotAnImplicitOne) {
  Call call;
  TensorInfo x = tensor({2, 4, 3}, {12, 3, 1}, 1);
  TensorInfo xt = tensor({2, 3, 4}, {12, 1, 3}, 1);
  TensorInfo dense = tensor({2, 3, 4}, {12, 4, 1}, 2);
  add_op(call, "aten::transpose", -1, {x}, {xt}, "m");
  const int64_t c = add_op(call, "aten::contiguous", -1, {xt}, {dense}, "m");
  TensorInfo src = xt;
  src.arg = 1;
  add_op(call, "aten::copy_", c, {dense, src}, {dense});
  const std::vector<CopyCause> causes = group_copy_causes(analyze(testing::trace_of({call})));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, CauseKind::explicit_request);
  EXPECT_EQ(causes[0].cls, CopyClass::explicit_layout);
  EXPECT_TRUE(contains(causes[0].fix, "(the transpose)")) << causes[0].fix;
}

TEST(CopyCauses, AReportReadForTheGateGroupsItsCopiesTheSameWay) {
  const Report full = two_causes();
  const std::filesystem::path file =  // this process's own: two builds' suites run at once
      std::filesystem::temp_directory_path() / ("verdict_test_report." + std::to_string(getpid()) + ".json");
  std::ofstream(file) << dump_json(report_to_json(full));
  const Report gate = load_report_file(file.string(), OpDetail::top_level);
  std::filesystem::remove(file);
  const std::vector<CopyCause> a = group_copy_causes(full), b = group_copy_causes(gate);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].copies, b[i].copies);
    EXPECT_EQ(a[i].modules, b[i].modules);
    EXPECT_EQ(a[i].what, b[i].what);
    EXPECT_EQ(a[i].fix, b[i].fix);
  }
}

TEST(Verdict, TheImplicitCopiesShareIsTheirOwnTimeOverTheCall) {
  const Verdict v = verdict_of(two_causes());
  EXPECT_EQ(v.copies[static_cast<int>(CopyClass::implicit_layout)], 3);
  EXPECT_EQ(v.implicit_ns, 1000 + 2000 + 2000);
  EXPECT_EQ(v.wall_ns, 5000);
  EXPECT_EQ(share_text(v.implicit_ns, v.wall_ns), "100.0%");
  EXPECT_EQ(share_text(1, 0), "") << "no share of nothing";
  EXPECT_EQ(v.copy_gpu_ns, -1) << "no GPU traced";
}

TEST(SplitGroups, PointsWithTheSameCauseAndSuggestionAreOneGroup) {
  const Report r = two_causes();
  const std::vector<SplitGroup> groups = group_split_points(r);
  size_t points = 0;
  for (const SplitGroup& g : groups) points += g.points.size();
  EXPECT_EQ(points, r.split_points.size());
  ASSERT_FALSE(groups.empty());
  const SplitGroup& convs = groups[0];  // the most bytes
  ASSERT_EQ(convs.points.size(), 2u);
  EXPECT_EQ(r.ops[r.split_points[convs.points[0]].op].name, "aten::conv2d");
  EXPECT_EQ(r.ops[r.split_points[convs.points[1]].op].name, "aten::conv2d");
  EXPECT_EQ(convs.copies, 2);
  EXPECT_EQ(groups.size(), r.split_points.size() - 1) << "the transpose and the reshape stay apart";
}

TEST(ComparisonText, TheMarkdownLeadsWithTheCausesBaselineToNew) {
  const Report base = analyze(testing::trace_of({testing::transpose_reshape_call()}));
  const Comparison c = compare_reports(base, two_causes(), GateOptions{});
  const std::string md = format_comparison(c, DiffFormat::markdown, false);
  const size_t causes = md.find("**Causes of the layout copies** (baseline → new):");
  const size_t weights = md.find("- 0 → 2 implicit, 0.000 → 0.009 MB: aten::conv2d: channels_last data meets NCHW");
  const size_t reshape = md.find("- 1 implicit, 0.000 MB: aten::reshape needs dense data");
  const size_t regression = md.find("- **regression** ");
  ASSERT_NE(causes, std::string::npos) << md;
  ASSERT_NE(weights, std::string::npos) << md;
  ASSERT_NE(reshape, std::string::npos) << md;
  ASSERT_NE(regression, std::string::npos) << md;
  EXPECT_LT(causes, weights);
  EXPECT_LT(weights, reshape) << "most bytes first";
  EXPECT_LT(reshape, regression) << "the causes come before the checks";
  EXPECT_NE(md.find("  → convert the model once: model.to(memory_format=torch.channels_last)\n", weights), std::string::npos);
  // The other way round, the weights' cause is gone.
  const std::string back = format_comparison(compare_reports(two_causes(), base, GateOptions{}), DiffFormat::text, false);
  EXPECT_NE(back.find("  cause  2 → 0 implicit, 0.009 → 0.000 MB: aten::conv2d: "), std::string::npos) << back;
  EXPECT_NE(back.find(" on every call (gone); in features.conv1 and features.conv2 at "), std::string::npos) << back;
}

TEST(ListText, NamesTheFirstAndCountsTheRest) {
  EXPECT_EQ(list_text({"a"}, 3), "a");
  EXPECT_EQ(list_text({"a", "b"}, 3), "a and b");
  EXPECT_EQ(list_text({"a", "b", "c", "d", "e"}, 2), "a, b and 3 more");
}

}  // namespace
}  // namespace layoutprof
