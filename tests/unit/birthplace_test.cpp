// Birthplaces (analysis/birthplace.h) on synthetic traces: where a layout was born, the chain
// it took, who paid, the fixes, and the report's JSON and text forms of them.
#include "analysis/birthplace.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "analysis/cause_text.h"
#include "analysis/mixed_formats.h"
#include "analysis/what_if_plan.h"
#include "core/input_spec.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::add_op;
using testing::tensor;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// [2, 8, 4, 4] activations and [8, 8, k, k] weights, in either format.
TensorInfo nchw(uint64_t storage) { return tensor({2, 8, 4, 4}, {128, 16, 4, 1}, storage); }
TensorInfo nhwc(uint64_t storage) { return tensor({2, 8, 4, 4}, {128, 1, 32, 8}, storage); }
TensorInfo weight3x3(uint64_t storage) { return tensor({8, 8, 3, 3}, {72, 9, 3, 1}, storage, 1); }
TensorInfo weight1x1(uint64_t storage) { return tensor({8, 8, 1, 1}, {8, 1, 1, 1}, storage, 1); }

// A convolution reading `data` with `weight`, writing `out`; with `copy_weight`, the backend
// converts the weight to channels_last under it (an aten::copy_ the trace shows).
int64_t conv(Call& call, const std::string& module, TensorInfo data, TensorInfo weight, TensorInfo out,
             bool copy_weight) {
  data.arg = 0;
  const int64_t id = add_op(call, "aten::conv2d", -1, {data, weight}, {out}, module);
  if (copy_weight) {
    TensorInfo dst = tensor(weight.sizes(), {72, 1, 24, 8}, 900 + static_cast<uint64_t>(id));
    TensorInfo src = weight;
    src.arg = 1;
    add_op(call, "aten::copy_", id, {dst, src}, {dst});
  }
  return id;
}

// tokens [2, 16, 8] -> transpose (permuted) -> reshape, a view laid out channels_last -> a 3x3
// convolution (weight copied) -> a 1x1 one (dense in both formats: no copy).
Call attention_view_call() {
  Call call;
  TensorInfo tokens = tensor({2, 16, 8}, {128, 8, 1}, 1);
  TensorInfo t = tensor({2, 8, 16}, {128, 1, 8}, 1);
  add_op(call, "aten::transpose", -1, {tokens}, {t}, "attn");
  add_op(call, "aten::reshape", -1, {t}, {nhwc(1)}, "attn");
  conv(call, "conv1", nhwc(1), weight3x3(10), nhwc(2), true);
  conv(call, "conv_shortcut", nhwc(2), weight1x1(11), nhwc(3), false);
  call.wall_ns = 10000;
  return call;
}

TEST(Birthplace, AViewThatHappensToBeChannelsLastIsTheBirthplaceOfTheConvolutionsCopies) {
  const Report r = analyze(testing::trace_of({attention_view_call()}));
  ASSERT_EQ(r.causes.size(), 1u);
  const LayoutCause& c = r.causes[0];
  EXPECT_EQ(c.kind, BirthKind::op);
  EXPECT_EQ(c.layout, "channels_last");
  EXPECT_EQ(r.ops[c.birth_op].name, "aten::reshape");
  EXPECT_EQ(c.where, "model.py:11");
  EXPECT_EQ(c.from_layout, "permuted(0,2,1)");
  EXPECT_EQ(c.copies, 1);
  EXPECT_EQ(c.copy_bytes, 8 * 8 * 3 * 3 * 4);
  EXPECT_EQ(c.mixed_ops, 2);
  EXPECT_EQ(c.mixed_without_copy, 1);
  EXPECT_EQ(c.mixed_bytes, 8 * 8 * 4);  // the 1x1 weight, read in the other format
  EXPECT_EQ(c.payers_total, 2);
  EXPECT_EQ(c.carriers_total, 1);  // conv1 passes channels_last on to conv_shortcut
  EXPECT_EQ(c.payer_modules, (std::vector<std::string>{"conv1", "conv_shortcut"}));
  // Recorded on the CPU: the fix at the line and the model's conversion, as equals, both measured.
  ASSERT_GE(c.fixes.size(), 1u);
  EXPECT_TRUE(contains(c.fixes[0], "measure both")) << c.fixes[0];
  EXPECT_TRUE(contains(c.fixes[0], "`.contiguous()` on the result of aten::reshape at model.py:11")) << c.fixes[0];
  EXPECT_TRUE(contains(c.fixes[0], "or convert the model to the layout that arrives: "
                                   "model.to(memory_format=torch.channels_last)")) << c.fixes[0];
  for (const std::string& f : c.fixes) EXPECT_FALSE(contains(f, "avoid")) << f;
  // The same fixes as actions: the contiguous() at the reshape's line, the model's conversion.
  ASSERT_EQ(c.actions.size(), 2u);
  EXPECT_EQ(c.actions[0].kind, FixKind::contiguous_at);
  EXPECT_EQ(c.actions[0].op, "aten::reshape");
  EXPECT_EQ(c.actions[0].where, "model.py:11");
  EXPECT_EQ(c.actions[0].format, "contiguous");
  EXPECT_EQ(c.actions[1].kind, FixKind::convert_model);
  EXPECT_EQ(c.actions[1].format, "channels_last");
}

TEST(Birthplace, AFixWhoseCopyWouldTakeALaterWriteAwayIsNotApplied) {
  // The reshape's result views the tokens' storage, and a later add_ writes into that storage:
  // a .contiguous() on the reshape's result would leave the tokens unwritten.
  Call call = attention_view_call();
  add_op(call, "aten::add_", -1, {tensor({2, 16, 8}, {128, 8, 1}, 1), tensor({2, 16, 8}, {128, 8, 1}, 20)},
         {tensor({2, 16, 8}, {128, 8, 1}, 1)}, "attn");
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  ASSERT_FALSE(r.causes[0].actions.empty());
  const FixAction& a = r.causes[0].actions[0];
  EXPECT_EQ(a.kind, FixKind::none);
  EXPECT_TRUE(contains(a.not_applied, "written in place later, by aten::add_")) << a.not_applied;
  EXPECT_TRUE(contains(r.causes[0].fixes[0], "not while the code writes into it later (aten::add_"))
      << r.causes[0].fixes[0];
  EXPECT_EQ(analyze(testing::trace_of({attention_view_call()})).causes.at(0).actions.at(0).kind, FixKind::contiguous_at)
      << "without the write, the same fix is applied";
}

TEST(Birthplace, AResidualAddThatFollowsItsFirstOperandIsAChoiceWithASwapFix) {
  Call call;
  // shortcut (NCHW, storage 1); a permute back makes channels_last data (storage 2's view),
  // a 1x1 convolution carries it, and branch + shortcut takes the branch's layout.
  TensorInfo nhwc_as_nhwc_sizes = tensor({2, 4, 4, 8}, {128, 32, 8, 1}, 2);
  add_op(call, "aten::permute", -1, {nhwc_as_nhwc_sizes}, {nhwc(2)}, "block");
  conv(call, "block.pw", nhwc(2), weight1x1(10), nhwc(3), false);
  TensorInfo shortcut = nchw(1);
  shortcut.arg = 1;
  add_op(call, "aten::add", -1, {nhwc(3), shortcut}, {nhwc(4)}, "block");
  conv(call, "down", nhwc(4), weight3x3(11), nhwc(5), true);
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  const LayoutCause& c = r.causes[0];
  EXPECT_EQ(r.ops[c.birth_op].name, "aten::permute");
  ASSERT_EQ(c.choices.size(), 1u);
  EXPECT_EQ(r.ops[c.choices[0].op].name, "aten::add");
  EXPECT_EQ(c.choices[0].followed, 0);
  EXPECT_EQ(c.choices[0].other, "contiguous");
  EXPECT_TRUE(c.choices[0].swappable);
  EXPECT_EQ(c.carriers_total, 2);  // the 1x1 convolution and the add
  EXPECT_EQ(c.mixed_ops, 2);
  EXPECT_EQ(c.mixed_without_copy, 1);
  const auto swap = std::find_if(c.fixes.begin(), c.fixes.end(), [](const std::string& f) { return contains(f, "swap the operands of aten::add"); });
  EXPECT_NE(swap, c.fixes.end());
  const auto swap_action = std::find_if(c.actions.begin(), c.actions.end(),
                                        [](const FixAction& a) { return a.kind == FixKind::swap_operands; });
  ASSERT_NE(swap_action, c.actions.end());
  EXPECT_EQ(swap_action->op, "aten::add");
  // The same add written `torch.add(branch, shortcut, alpha=2)`: branch + 2 * shortcut, which a
  // swap would change. No swap is offered, nor applied: the swap is listed as refused, by name.
  const int64_t add = c.choices[0].op;
  call.events[add].source_text = "out = torch.add(branch, shortcut, alpha=2)";
  const Report scaled = analyze(testing::trace_of({call}));
  ASSERT_EQ(scaled.causes.size(), 1u);
  for (const std::string& f : scaled.causes[0].fixes) EXPECT_FALSE(contains(f, "swap the operands")) << f;
  for (const FixAction& a : scaled.causes[0].actions) EXPECT_NE(a.kind, FixKind::swap_operands);
  const auto refused = std::find_if(scaled.causes[0].actions.begin(), scaled.causes[0].actions.end(),
                                    [](const FixAction& a) { return contains(a.not_applied, "alpha"); });
  ASSERT_NE(refused, scaled.causes[0].actions.end());
  EXPECT_EQ(refused->kind, FixKind::none);
  EXPECT_TRUE(contains(refused->not_applied, "aten::add with alpha (a + alpha * b) is not commutative")) << refused->not_applied;
}

// The backend pass's log of a call whose one convolution (top-level op 0) ran in oneDNN, its data
// reordered (`reordered`) or read directly.
BackendLog conv_log(const Call& call, bool reordered) {
  BackendLog log;
  log.state = "ran";
  for (const OpEvent& e : call.events) log.top_ops += e.parent < 0 && e.thread == 0;
  auto add = [&](const char* kind, const char* problem) {
    BackendPrimitive p;
    p.kind = kind;
    p.args = {{"src", "f32", "acdb"}, {"dst", "f32", "aBcd16b"}};
    p.problem = problem;
    p.top_op = 0;
    p.top_name = call.events[0].name.str();
    log.primitives.push_back(p);
  };
  if (reordered) add("reorder", "2x8x4x4");
  add("convolution", "mb2_ic8oc10_ih4oh4kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1");
  return log;
}

TEST(Birthplace, WhatOneDnnDidWithTheLayoutDecidesTheFixesOrder) {
  Call call;
  conv(call, "conv1", nhwc(1), weight3x3(10), nhwc(2), true);
  ModelInput in;
  in.spec = parse_input_spec("2x8x4x4:perm=0,2,3,1");
  in.tensor = nhwc(1);
  // oneDNN ran the convolution on the channels_last data directly: the model's conversion first.
  Trace direct = testing::trace_of({call}, {in});
  direct.backend = conv_log(call, false);
  const Report r = analyze(std::move(direct));
  ASSERT_EQ(r.causes.size(), 1u);
  const LayoutCause& c = r.causes[0];
  ASSERT_EQ(c.fixes.size(), 2u);
  EXPECT_TRUE(contains(c.fixes[0], "convert the model to the layout that arrives: model.to(memory_format=torch.channels_last) "
                                   "(seen in the backend pass: oneDNN ran 1 of these convolutions on the channels_last data "
                                   "directly")) << c.fixes[0];
  EXPECT_TRUE(contains(c.fixes[1], "or feed input 0 in the model's format")) << c.fixes[1];
  ASSERT_EQ(c.actions.size(), 2u);
  EXPECT_EQ(c.actions[0].kind, FixKind::convert_model);
  EXPECT_EQ(c.actions[1].kind, FixKind::feed_input);
  // The what-if measures both, so that its measurement decides.
  std::vector<FixKind> planned;
  for (const VariantPlan& p : what_if_plans(r, 1)) planned.push_back(p.actions.at(0).kind);
  EXPECT_EQ(planned, (std::vector<FixKind>{FixKind::convert_model, FixKind::feed_input}));
  // It reordered the data: channels_last buys no direct read, the input fed NCHW first.
  Trace reordered = testing::trace_of({call}, {in});
  reordered.backend = conv_log(call, true);
  const Report q = analyze(std::move(reordered));
  ASSERT_EQ(q.causes.size(), 1u);
  EXPECT_TRUE(contains(q.causes[0].fixes[0], "feed input 0 in the model's format")) << q.causes[0].fixes[0];
  EXPECT_TRUE(contains(q.causes[0].fixes[0], "oneDNN reordered the channels_last data in 1 convolution, 1 activation reorder")) << q.causes[0].fixes[0];
  EXPECT_EQ(q.causes[0].actions[0].kind, FixKind::feed_input);
  // A pass that did not run says so beside "measure both".
  Trace skipped = testing::trace_of({call}, {in});
  skipped.backend.state = "skipped";
  skipped.backend.reason = "your own ONEDNN_VERBOSE=1 is set";
  const Report s = analyze(std::move(skipped));
  EXPECT_TRUE(contains(s.causes[0].fixes[0], "did not run: your own ONEDNN_VERBOSE=1 is set")) << s.causes[0].fixes[0];
}

TEST(Birthplace, AnInputPermutedOutsideTheModelNamesTheInputSpecAndItsFix) {
  Call call;
  conv(call, "conv1", nhwc(1), weight3x3(10), nhwc(2), true);
  ModelInput in;
  in.spec = parse_input_spec("2x8x4x4:perm=0,2,3,1");
  in.tensor = nhwc(1);
  const Report r = analyze(testing::trace_of({call}, {in}));
  ASSERT_EQ(r.causes.size(), 1u);
  const LayoutCause& c = r.causes[0];
  EXPECT_EQ(c.kind, BirthKind::model_input);
  EXPECT_EQ(c.birth_input, 0);
  EXPECT_EQ(c.input_text, "input 0: 2x8x4x4:perm=0,2,3,1 (strides 128,1,32,8)");
  ASSERT_FALSE(c.fixes.empty());
  // Recorded on the CPU: the NCHW input and the channels_last model are offered as equals.
  EXPECT_EQ(c.fixes[0], "measure both, no measurement decides here (on the CPU oneDNN often runs channels_last the "
                        "faster; layoutprof compare-formats): feed input 0 in the model's format: --input 2x8x4x4 (now "
                        "2x8x4x4:perm=0,2,3,1); or convert the model to the layout that arrives: "
                        "model.to(memory_format=torch.channels_last)");
  EXPECT_EQ(c.fixes.size(), 1u);
  ASSERT_EQ(c.actions.size(), 2u) << "both ways are actions: the input fed NCHW, the model converted";
  EXPECT_EQ(c.actions[0].kind, FixKind::feed_input);
  EXPECT_EQ(c.actions[0].input, 0);
  EXPECT_EQ(c.actions[0].format, "contiguous");
  EXPECT_EQ(c.actions[1].kind, FixKind::convert_model);
  EXPECT_EQ(c.actions[1].format, "channels_last");
  Trace gpu = testing::trace_of({call}, {in});
  gpu.run.device = "cuda:0";
  const Report on_gpu = analyze(gpu);
  ASSERT_EQ(on_gpu.causes.size(), 1u);
  EXPECT_EQ(on_gpu.causes[0].fixes[0], "feed input 0 in the model's format: --input 2x8x4x4 (now 2x8x4x4:perm=0,2,3,1)");
}

TEST(Birthplace, AnElementwiseOpWithAPartlyBroadcastOperandSaysWhichOperandDecided) {
  // [2, 8, 1, 4] contiguous + [2, 8, 4, 4] channels_last: TensorIterator's output is
  // permuted(0,2,1,3), a layout neither operand has (checked on 1.13 and 2.14: the other order
  // gives channels_last). A reshape then copies it.
  Call call;
  TensorInfo b = tensor({2, 8, 1, 4}, {32, 4, 4, 1}, 1);
  TensorInfo a = tensor({2, 8, 4, 4}, {128, 1, 32, 8}, 2, 1);
  TensorInfo out = tensor({2, 8, 4, 4}, {128, 4, 32, 1}, 3);
  add_op(call, "aten::add", -1, {b, a}, {out}, "mix");
  const int64_t reshape = add_op(call, "aten::reshape", -1, {out}, {tensor({2, 128}, {128, 1}, 4)}, "head");
  TensorInfo dst = tensor({2, 8, 4, 4}, {128, 16, 4, 1}, 4), src = out;
  src.arg = 1;
  add_op(call, "aten::copy_", reshape, {dst, src}, {dst});
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  const LayoutCause& c = r.causes[0];
  EXPECT_EQ(c.op_name, "aten::add");
  EXPECT_EQ(c.layout, "permuted(0,2,1,3)");
  EXPECT_GE(c.decided_by, 0);
  EXPECT_EQ(c.swapped_layout, "channels_last");
  EXPECT_TRUE(contains(c.fixes.at(1), "swap the operands of aten::add")) << c.fixes.at(1);
}

TEST(Birthplace, ALineALoopRunsManyTimesIsOneBirthplace) {
  // for i in range(3): y = x.transpose(1, 2).reshape(...): three transposes on one line, each
  // copied by its reshape, are one cause of three copies.
  Call call;
  for (uint64_t i = 0; i < 3; ++i) {
    TensorInfo x = tensor({2, 4, 3}, {12, 3, 1}, 10 * i + 1), xt = tensor({2, 3, 4}, {12, 1, 3}, 10 * i + 1);
    TensorInfo dense = tensor({2, 3, 4}, {12, 4, 1}, 10 * i + 2);
    const int64_t t = add_op(call, "aten::transpose", -1, {x}, {xt}, "loop");
    call.events[t].source = "model.py:7";
    const int64_t r = add_op(call, "aten::reshape", -1, {xt}, {tensor({2, 12}, {12, 1}, 10 * i + 2)}, "loop");
    call.events[r].source = "model.py:7";
    TensorInfo src = xt;
    src.arg = 1;
    add_op(call, "aten::copy_", r, {dense, src}, {dense});
  }
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_EQ(r.causes[0].copies, 3);
  EXPECT_EQ(r.causes[0].where, "model.py:7");
  EXPECT_EQ(r.causes[0].payers_total, 3);
}

TEST(Birthplace, OneLineInManyModulesIsOneBirthplace) {
  // A norm class's permute back, run by two modules: one cause, both modules named.
  Call call;
  for (uint64_t i = 0; i < 2; ++i) {
    const std::string module = "stages." + std::to_string(i) + ".norm";
    const int64_t p = add_op(call, "aten::permute", -1, {tensor({2, 4, 4, 8}, {128, 32, 8, 1}, 10 * i + 1)},
                             {nhwc(10 * i + 1)}, module);
    call.events[p].source = "norm.py:133";
    conv(call, "stages." + std::to_string(i) + ".conv", nhwc(10 * i + 1), weight3x3(10 * i + 5), nhwc(10 * i + 2), true);
  }
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_EQ(r.causes[0].copies, 2);
  EXPECT_EQ(r.causes[0].modules, (std::vector<std::string>{"stages.0.norm", "stages.1.norm"}));
  EXPECT_EQ(birthplace_text(r.causes[0]),
            "channels_last born at aten::permute in stages.0.norm and 1 more (norm.py:133) from contiguous data");
}

TEST(Birthplace, AViewThatFailsOnAnEarlierLayoutGetsReshapeAtTheViewAndContiguousAtTheBirth) {
  // x.t() (permuted), then .view(-1), which raises: the fix names both lines.
  Call call;
  add_op(call, "aten::t", -1, {tensor({4, 6}, {6, 1}, 1)}, {tensor({6, 4}, {1, 6}, 1)}, "head");
  const int64_t v = add_op(call, "aten::view", -1, {tensor({6, 4}, {1, 6}, 1)}, {}, "head");
  call.events[v].failed = true;
  Trace t = testing::trace_of({call});
  t.run.status = RunStatus::failed;
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_EQ(r.causes[0].op_name, "aten::t");
  ASSERT_FALSE(r.causes[0].fixes.empty());
  EXPECT_EQ(r.causes[0].fixes[0],
            "`.reshape(...)` instead of `.view(...)` at model.py:11, or `.contiguous()` on the result of aten::t at "
            "model.py:10");
  ASSERT_FALSE(r.causes[0].actions.empty());
  EXPECT_EQ(r.causes[0].actions[0].kind, FixKind::none) << "a failing run has no time to save";
  EXPECT_TRUE(contains(r.causes[0].actions[0].not_applied, "fails")) << r.causes[0].actions[0].not_applied;
}

TEST(Birthplace, AChannelsLastModelFedChannelsLastDataHasNoCause) {
  Call call;
  TensorInfo w = tensor({8, 8, 3, 3}, {72, 1, 24, 8}, 10, 1);
  add_op(call, "aten::conv2d", -1, {nhwc(1), w}, {nhwc(2)}, "conv1");
  add_op(call, "aten::relu", -1, {nhwc(2)}, {nhwc(3)}, "act");
  const Report r = analyze(testing::trace_of({call}));
  EXPECT_TRUE(r.causes.empty());
}

TEST(Birthplace, AConvolutionWhoseWeightIsChannelsLastBirthsItFromTheParameter) {
  // NCHW data, a channels_last weight: the output goes channels_last (either may suggest the
  // format); the next convolution's NCHW weight is then copied. The layout came from no op.
  Call call;
  TensorInfo w = tensor({8, 8, 3, 3}, {72, 1, 24, 8}, 10, 1);
  add_op(call, "aten::conv2d", -1, {nchw(1), w}, {nhwc(2)}, "conv1");
  conv(call, "conv2", nhwc(2), weight3x3(11), nhwc(3), true);
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].kind, BirthKind::unrecorded);
  EXPECT_EQ(r.causes[0].carriers_total, 1);
}

TEST(Birthplace, ALayoutThatComesWithAParameterNamesItAndFixesItWhereTheCodeSetsIt) {
  // The same channels_last weight, known as the model's parameter `conv1.weight` (its layout was
  // set between the calls, by `.data =` or a state dict assigned): the cause names it.
  Call call;
  TensorInfo w = tensor({8, 8, 3, 3}, {72, 1, 24, 8}, 10, 1);
  add_op(call, "aten::conv2d", -1, {nchw(1), w}, {nhwc(2)}, "conv1");
  conv(call, "conv2", nhwc(2), weight3x3(11), nhwc(3), true);
  Trace t = testing::trace_of({call});
  t.run.model_tensors = {testing::model_tensor("conv1.weight", false, w), testing::model_tensor("conv2.weight", false, weight3x3(11))};
  const Report r = analyze(t);
  ASSERT_FALSE(r.causes.empty());
  const LayoutCause& c = r.causes[0];
  EXPECT_EQ(c.kind, BirthKind::unrecorded);
  EXPECT_EQ(c.input_text, "parameter `conv1.weight` (sizes 8,8,3,3, strides 72,1,24,8)");
  EXPECT_EQ(birthplace_text(c), "channels_last comes with the model's parameter `conv1.weight` (sizes 8,8,3,3, "
                                "strides 72,1,24,8), laid out so before the call (no recorded op made it)");
  ASSERT_FALSE(c.fixes.empty());
  EXPECT_TRUE(contains(c.fixes[0], "`.contiguous()` on parameter `conv1.weight` where the code sets it between the calls"))
      << c.fixes[0];
  ASSERT_FALSE(c.actions.empty());
  EXPECT_EQ(c.actions[0].kind, FixKind::dense_parameter);
  EXPECT_EQ(c.actions[0].tensor, "conv1.weight");
  EXPECT_EQ(c.actions[0].format, "contiguous");
  // The op between the calls that made that view, as the recent ops saw it: its line is the
  // birthplace's, and the fix goes there.
  t.run.model_tensors[0].made_by = "aten::permute";
  t.run.model_tensors[0].made_at = "train.py:51";
  t.run.model_tensors[0].made_code = "w = w.permute(0, 2, 3, 1)";
  const LayoutCause made = analyze(t).causes.at(0);
  EXPECT_EQ(made.where, "train.py:51");
  EXPECT_TRUE(contains(birthplace_text(made), "laid out so before the call by aten::permute (train.py:51)"))
      << birthplace_text(made);
  EXPECT_TRUE(contains(made.fixes.at(0), "between the calls, made at train.py:51 (`w = w.permute(0, 2, 3, 1)`)"))
      << made.fixes.at(0);
}

TEST(Birthplace, ACauseOnALineOfAnInstalledPackageComesAfterTheUsersOwn) {
  // Two transposes, each copied by a reshape: the package's moves more bytes, the user's line
  // comes first all the same (the first screen names the line the user changes).
  Call call;
  const int64_t lib = add_op(call, "aten::transpose", -1, {tensor({8, 4, 3}, {12, 3, 1}, 1)}, {tensor({8, 3, 4}, {12, 1, 3}, 1)});
  const int64_t r1 = add_op(call, "aten::reshape", -1, {tensor({8, 3, 4}, {12, 1, 3}, 1)}, {tensor({8, 12}, {12, 1}, 2)});
  const int64_t c1 = add_op(call, "aten::clone", r1, {tensor({8, 3, 4}, {12, 1, 3}, 1)}, {tensor({8, 3, 4}, {12, 4, 1}, 2)});
  TensorInfo src1 = tensor({8, 3, 4}, {12, 1, 3}, 1);
  src1.arg = 1;
  add_op(call, "aten::copy_", c1, {tensor({8, 3, 4}, {12, 4, 1}, 2), src1}, {tensor({8, 3, 4}, {12, 4, 1}, 2)});
  add_op(call, "aten::transpose", -1, {tensor({2, 4, 3}, {12, 3, 1}, 3)}, {tensor({2, 3, 4}, {12, 1, 3}, 3)});
  const int64_t r2 = add_op(call, "aten::reshape", -1, {tensor({2, 3, 4}, {12, 1, 3}, 3)}, {tensor({2, 12}, {12, 1}, 4)});
  const int64_t c2 = add_op(call, "aten::clone", r2, {tensor({2, 3, 4}, {12, 1, 3}, 3)}, {tensor({2, 3, 4}, {12, 4, 1}, 4)});
  TensorInfo src2 = tensor({2, 3, 4}, {12, 1, 3}, 3);
  src2.arg = 1;
  add_op(call, "aten::copy_", c2, {tensor({2, 3, 4}, {12, 4, 1}, 4), src2}, {tensor({2, 3, 4}, {12, 4, 1}, 4)});
  call.events[lib].source = Str("/venv/lib/python3.11/site-packages/timm/layers/norm.py:128");
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 2u);
  EXPECT_EQ(r.causes[0].where, "model.py:14");
  EXPECT_GT(r.causes[1].copy_bytes, r.causes[0].copy_bytes);
}

TEST(Birthplace, ContiguousDataOfARankNoMemoryFormatConcernsIsNoBirthplace) {
  // A matmul's backward writes a contiguous [4, 8] gradient into a transposed buffer: the copy
  // is its reader's demand; contiguous 2-D data was born in no layout a user could change.
  Call call;
  TensorInfo g = tensor({4, 8}, {8, 1}, 1);
  TensorInfo dst = tensor({4, 8}, {1, 4}, 2);
  const int64_t mm = add_op(call, "aten::mm", -1, {g, tensor({8, 8}, {8, 1}, 3)}, {dst});
  TensorInfo src = g;
  src.arg = 1;
  add_op(call, "aten::copy_", mm, {dst, src}, {dst});
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_TRUE(r.causes.empty()) << birthplace_text(r.causes.front());
}

// `y = x.transpose(1, 2).contiguous()`: the only cost is the copy the line asks for, so the fix
// adds nothing there; the same birth with an implicit copy downstream still asks for it.
TEST(Birthplace, AFixNeverAsksForTheContiguousItsLineAlreadyHas) {
  for (const bool implicit : {false, true}) {
    Call call;
    TensorInfo x = tensor({2, 8, 16}, {128, 16, 1}, 1);
    TensorInfo t = tensor({2, 16, 8}, {128, 1, 16}, 1);
    TensorInfo dense = tensor({2, 16, 8}, {128, 8, 1}, 2);
    const int64_t tr = add_op(call, "aten::transpose", -1, {x}, {t});
    call.events[tr].source_text = implicit ? "y = x.transpose(1, 2)" : "y = x.transpose(1, 2).contiguous()";
    const int64_t copier = add_op(call, implicit ? "aten::reshape" : "aten::contiguous", -1, {t},
                                  {implicit ? tensor({32, 8}, {8, 1}, 2) : dense});
    const int64_t clone = add_op(call, "aten::clone", copier, {t}, {dense});
    TensorInfo src = t;
    src.arg = 1;
    add_op(call, "aten::copy_", clone, {dense, src}, {dense});
    const Report r = analyze(testing::trace_of({call}));
    ASSERT_EQ(r.causes.size(), 1u);
    const std::string& fix = r.causes[0].fixes.front();
    EXPECT_EQ(fix.rfind(implicit ? "`.contiguous()` on the result of aten::transpose" : "nothing to add at model.py:10", 0), 0u)
        << fix;
  }
}

// A layout born in the backward pass is enforced where the gradient is read, in the format
// the model's weights want: an NCHW gradient of a channels_last model is asked for in
// channels_last (never `.contiguous()` on what is contiguous already), a permuted one dense.
TEST(Birthplace, ALayoutBornInTheBackwardPassIsFixedWhereTheGradientIsReadInTheWeightsFormat) {
  LayoutCause c;
  c.kind = BirthKind::op;
  c.op_name = "autograd::engine::evaluate_function: ConvolutionBackward0";
  c.where = "model.py:3";
  c.layout = "contiguous";
  c.copies = 1;
  const Report r;
  const std::string nhwc_fix = cause_fixes(c, r, MemoryFormat::nhwc).at(0);
  EXPECT_EQ(nhwc_fix.rfind("`.contiguous(memory_format=torch.channels_last)` on the gradient where the code reads it", 0), 0u)
      << nhwc_fix;
  EXPECT_TRUE(contains(nhwc_fix, "g.contiguous(memory_format=torch.channels_last))`")) << nhwc_fix;
  EXPECT_EQ(birthplace_text(c), "contiguous born in the backward pass at ConvolutionBackward0, the gradient of model.py:3");
  c.layout = "permuted(0,2,1)";
  const std::string dense_fix = cause_fixes(c, r, MemoryFormat::nchw).at(0);
  EXPECT_EQ(dense_fix.rfind("`.contiguous()` on the gradient where the code reads it", 0), 0u) << dense_fix;
}

// A layout an installed package's line makes is not the user's line to change: the fix says so
// and names the user's model call that runs it, never a `.contiguous()` to write into the library.
TEST(Birthplace, ALayoutBornInAnInstalledPackageIsFollowedToTheUsersModelCall) {
  LayoutCause c;
  c.kind = BirthKind::op;
  c.op_name = "aten::permute";
  c.where = "/venv/lib/python3.11/site-packages/timm/layers/norm.py:128";
  c.code = "x = x.permute(0, 2, 3, 1)";
  c.modules = {"stem.1"};
  c.layout = "contiguous";
  c.mixed_ops = 1;
  Report r;
  ModelInput in;
  in.origin = "argument 0 of the model call at train.py:11 (`loss = loss_fn(model(x), y)`)";
  r.run.inputs.push_back(in);
  const std::string fix = cause_fixes(c, r, MemoryFormat::nhwc).at(0);
  EXPECT_EQ(fix.rfind("not a line to change: aten::permute at /venv/lib/python3.11/site-packages/timm/layers/norm.py:128 "
                      "(module stem.1) is an installed package's code, run by the model call at train.py:11",
                      0),
            0u)
      << fix;
  EXPECT_FALSE(contains(fix, ".contiguous(")) << fix;
  c.op_name = "autograd::engine::evaluate_function: ConvolutionBackward0";  // a library's gradient alike
  const std::string backward = cause_fixes(c, r, MemoryFormat::nhwc).at(0);
  EXPECT_EQ(backward.rfind("not a line to change: ConvolutionBackward0's gradient of /venv/", 0), 0u) << backward;
  c.op_name = "aten::permute";
  c.where = "model.py:4";  // the user's own line keeps its fix
  EXPECT_EQ(cause_fixes(c, r, MemoryFormat::nhwc).at(0).rfind("`.contiguous(memory_format=torch.channels_last)`", 0), 0u);
}

TEST(Birthplace, ADriftWithoutACopyIsNeverNothingToFix) {
  // channels_last data (born at a permute) through a 1x1 convolution: no copy, one mixed op.
  Call call;
  add_op(call, "aten::permute", -1, {tensor({2, 4, 4, 8}, {128, 32, 8, 1}, 1)}, {nhwc(1)}, "block");
  conv(call, "block.pw", nhwc(1), weight1x1(10), nhwc(2), false);
  const Report r = analyze(testing::trace_of({call}));
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_EQ(r.causes[0].mixed_without_copy, 1);
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  EXPECT_TRUE(contains(text.str(), "Verdict: no implicit layout copies in a call, but 1 mixed-format op runs in a layout "
                                   "the model's weights are not in (see Causes, by birthplace)")) << text.str();
  EXPECT_TRUE(contains(text.str(), "1 of 1 convolution run in a format the model's weights are not in")) << text.str();
}

TEST(Birthplace, AcceptedBirthplacesAreListedButNotCounted) {
  Trace t = testing::trace_of({attention_view_call()});
  t.run.accepted = {"model.py:11"};
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_TRUE(r.causes[0].accepted);
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  EXPECT_TRUE(contains(text.str(), "accepted (--accept model.py:11): channels_last born at aten::reshape")) << text.str();
  EXPECT_FALSE(contains(text.str(), "Causes, by birthplace (where the layout was born; derived from the strides recorded on cpu): 1"));
}

TEST(Birthplace, AcceptMatchesAPathsTail) {
  EXPECT_TRUE(accept_matches("model.py:11", "/home/u/model.py:11"));
  EXPECT_TRUE(accept_matches("model.py:11", "model.py:11"));
  EXPECT_FALSE(accept_matches("model.py:11", "/home/u/mymodel.py:11"));
  EXPECT_FALSE(accept_matches("model.py:1", "model.py:11"));
}

TEST(Birthplace, TheTextReportLeadsWithTheBirthplaceLineAndItsFix) {
  const Report r = analyze(testing::trace_of({attention_view_call()}));
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  const std::string s = text.str();
  const size_t causes = s.find("Causes, by birthplace");
  ASSERT_NE(causes, std::string::npos) << s;
  EXPECT_LT(causes, s.find("Heatmap"));
  EXPECT_TRUE(contains(s, "1. channels_last born at aten::reshape in attn (model.py:11)")) << s;
  EXPECT_TRUE(contains(s, "→ fix: measure both, no measurement decides here")) << s;
  EXPECT_TRUE(contains(s, "`.contiguous()` on the result of aten::reshape at model.py:11")) << s;
  EXPECT_TRUE(contains(s, "[born channels_last] contiguous→permuted(0,2,1)")) << s;  // attn's layout lane
  EXPECT_TRUE(contains(s, "2 mixed-format ops (activations in one memory format, weights in another): 1 with a recorded "
                          "conversion copy, 1 without one; 2 of 2 convolutions")) << s;
}

TEST(Birthplace, TheJsonReportHoldsTheCausesAndReadsThemBack) {
  const Report r = analyze(testing::trace_of({attention_view_call()}));
  const nlohmann::json j = report_to_json(r);
  ASSERT_EQ(j.at("causes").size(), 1u);
  EXPECT_EQ(j["causes"][0]["birthplace"]["kind"], "op");
  EXPECT_EQ(j["causes"][0]["birthplace"]["where"], "model.py:11");
  EXPECT_EQ(j["causes"][0]["actions"][0]["kind"], "contiguous_at");
  EXPECT_EQ(j["causes"][0]["actions"][1]["kind"], "convert_model");
  EXPECT_TRUE(j["causes"][0]["actions"][1]["input"].is_null());
  const Report back = report_from_json(j);
  EXPECT_TRUE(back.causes_in_file);
  EXPECT_EQ(report_to_json(back), j);
  nlohmann::json before_actions = j;  // a report written before fixes were actions
  before_actions["causes"][0].erase("actions");
  EXPECT_TRUE(report_from_json(before_actions).causes.at(0).actions.empty());
  // A report written before birthplaces: its causes are derived on reading.
  nlohmann::json old = j;
  old.erase("causes");
  const Report derived = report_from_json(old);
  EXPECT_FALSE(derived.causes_in_file);
  ASSERT_EQ(derived.causes.size(), 1u);
  EXPECT_EQ(derived.causes[0].where, "model.py:11");
}

TEST(Birthplace, ACauseNamingAnOpTheReportLacksIsRefused) {
  nlohmann::json j = report_to_json(analyze(testing::trace_of({attention_view_call()})));
  j["causes"][0]["chain"]["payers"][0] = 9999;
  EXPECT_ANY_THROW(report_from_json(j));
}

TEST(MixedFormats, AWeightDenseInBothOrdersTakesTheFormatOfItsExactStrides) {
  EXPECT_EQ(memory_format_of(weight1x1(1)), MemoryFormat::nchw);
  EXPECT_EQ(memory_format_of(tensor({8, 8, 1, 1}, {8, 1, 8, 8}, 1)), MemoryFormat::nhwc);
  EXPECT_EQ(memory_format_of(tensor({8, 1, 7, 7}, {49, 49, 7, 1}, 1)), MemoryFormat::nchw);  // depthwise
  EXPECT_EQ(memory_format_of(tensor({8, 1, 7, 7}, {49, 1, 7, 1}, 1)), MemoryFormat::nhwc);
  EXPECT_EQ(memory_format_of(nhwc(1)), MemoryFormat::nhwc);
  EXPECT_EQ(memory_format_of(tensor({2, 8, 4}, {32, 4, 1}, 1)), MemoryFormat::none);
}

}  // namespace
}  // namespace layoutprof
