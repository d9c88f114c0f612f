// Hazards (analysis/hazards.h) on synthetic traces: aliased, lost and refused writes, failed
// views, parameters and buffers; the idioms that are none; the text, JSON and gate forms.
#include "analysis/hazards.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "gate/gate.h"
#include "report/chrome_trace.h"
#include "report/json_report.h"
#include "report/reporter.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::add_op;
using testing::tensor;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The gate's hazards check of a comparison (it has one).
const GateCheck& hazard_check(const Comparison& c) {
  for (const GateCheck& k : c.checks)
    if (k.rule == "hazards") return k;
  throw std::logic_error("no hazards check");
}

// A tensor of storage `storage` at `version` (offset `offset`).
TensorInfo at(std::vector<int64_t> sizes, std::vector<int64_t> strides, uint64_t storage, uint32_t version,
              int64_t offset = 0, int arg = 0) {
  TensorInfo t = tensor(std::move(sizes), std::move(strides), storage, arg);
  t.version = version;
  t.storage_offset = offset;
  return t;
}

Report analyzed(Call call, std::vector<ModelTensor> model = {}) {
  Trace t = testing::trace_of({std::move(call)});
  t.run.model_tensors = std::move(model);
  return analyze(std::move(t));
}

// a [3] -> expand(4, 3) (strides 0,1) -> select(0, 0) -> copy_(v): every row changes.
Call expand_then_write() {
  Call call;
  add_op(call, "aten::expand", -1, {at({3}, {1}, 1, 0)}, {at({4, 3}, {0, 1}, 1, 0)});
  add_op(call, "aten::select", -1, {at({4, 3}, {0, 1}, 1, 0)}, {at({3}, {1}, 1, 0)});
  add_op(call, "aten::copy_", -1, {at({3}, {1}, 1, 0), at({3}, {1}, 2, 0, 0, 1)}, {at({3}, {1}, 1, 1)});
  return call;
}

TEST(Hazards, AWriteThroughAViewOfAnExpandIsAnAliasedWriteNamingTheExpand) {
  const Report r = analyzed(expand_then_write());
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& h = r.hazards[0];
  EXPECT_EQ(h.kind, HazardKind::aliased_write);
  EXPECT_EQ(h.certainty, "yes");
  EXPECT_EQ(h.where, "model.py:12");
  EXPECT_EQ(h.sharing, 4);
  EXPECT_EQ(h.maker_where, "model.py:10");
  EXPECT_TRUE(contains(h.maker, "aten::expand at model.py:10")) << h.maker;
  EXPECT_TRUE(contains(h.fixes.at(0), "`.clone()`")) << h.fixes[0];
}

TEST(Hazards, AFillOfAnExpandedBufferNamesTheBufferAndListsIt) {
  Call call;
  add_op(call, "aten::fill_", -1, {at({4, 8}, {1, 0}, 5, 3)}, {at({4, 8}, {1, 0}, 5, 4)});
  const Report r = analyzed(std::move(call), {testing::model_tensor("slots", true, at({4, 8}, {1, 0}, 5, 3))});
  ASSERT_EQ(r.hazards.size(), 2u);
  EXPECT_EQ(r.hazards[0].kind, HazardKind::model_tensor);
  EXPECT_TRUE(contains(r.hazards[0].detail, "buffer `slots` is broadcast, not dense: 8 positions share each element"))
      << r.hazards[0].detail;
  EXPECT_EQ(r.hazards[1].kind, HazardKind::aliased_write);
  EXPECT_EQ(r.hazards[1].maker, "buffer `slots`");
  EXPECT_EQ(r.hazards[1].sharing, 8);
}

TEST(Hazards, AWritePyTorchRefusedIsAttributedToItsLine) {
  Call call = expand_then_write();
  const int64_t w = add_op(call, "aten::add_", -1, {at({4, 3}, {0, 1}, 1, 1)}, {});
  call.events[w].failed = true;
  Trace t = testing::trace_of({std::move(call)});
  t.run.status = RunStatus::failed;
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.hazards.size(), 2u);
  EXPECT_EQ(r.hazards[1].kind, HazardKind::refused_write);
  EXPECT_EQ(r.hazards[1].where, "model.py:13");
}

TEST(Hazards, TwoViewsOfOneStorageThatPartlyOverlapInOneWrite) {
  // x[1:].copy_(x[:-1]) on a [5] tensor: PyTorch would refuse it; recorded as run, it is aliased.
  Call call;
  add_op(call, "aten::copy_", -1, {at({4}, {1}, 1, 0, 1), at({4}, {1}, 1, 0, 0, 1)}, {at({4}, {1}, 1, 1, 1)});
  const Report r = analyzed(std::move(call));
  ASSERT_EQ(r.hazards.size(), 1u);
  EXPECT_EQ(r.hazards[0].kind, HazardKind::aliased_write);
  EXPECT_TRUE(contains(r.hazards[0].detail, "partly overlap")) << r.hazards[0].detail;
}

// A transposed parameter `w` (storage 7) -> reshape(-1), which copies into storage 8 ->
// copy_(src) into the copy.
Call reshape_then_write() {
  Call call;
  const int64_t r = add_op(call, "aten::reshape", -1, {at({4, 8}, {1, 4}, 7, 0)}, {at({32}, {1}, 8, 0)});
  add_op(call, "aten::clone", r, {at({4, 8}, {1, 4}, 7, 0)}, {at({4, 8}, {8, 1}, 8, 0)});
  add_op(call, "aten::copy_", -1, {at({32}, {1}, 8, 0), at({32}, {1}, 3, 0, 0, 1)}, {at({32}, {1}, 8, 1)});
  return call;
}

TEST(Hazards, AWriteIntoAReshapeCopyNothingReadsIsALostWriteNamingTheParameter) {
  const Report r = analyzed(reshape_then_write(), {testing::model_tensor("proj.weight", false, at({4, 8}, {1, 4}, 7, 0))});
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& h = r.hazards[0];
  EXPECT_EQ(h.kind, HazardKind::lost_write);
  EXPECT_EQ(h.tensor, "parameter `proj.weight`");
  EXPECT_EQ(h.where, "model.py:12");
  EXPECT_EQ(h.maker_where, "model.py:10");
  EXPECT_TRUE(contains(h.detail, "keeps its old values")) << h.detail;
  EXPECT_TRUE(contains(h.fixes.at(1), "or `view` instead of `reshape`")) << h.fixes[1];
}

TEST(Hazards, ACopyReadAfterTheWriteOrReturnedIsNoLostWrite) {
  Call read = reshape_then_write();
  add_op(read, "aten::sum", -1, {at({32}, {1}, 8, 1)}, {at({}, {}, 9, 0)});
  EXPECT_TRUE(analyzed(std::move(read)).hazards.empty());

  Call returned = reshape_then_write();
  returned.outputs = {at({32}, {1}, 8, 1)};
  EXPECT_TRUE(analyzed(std::move(returned)).hazards.empty());
}

TEST(Hazards, AStorageMadeAgainAtTheSameAddressIsNoRead) {
  // A later tensor with the copy's storage identity but an older version is a new storage.
  Call call = reshape_then_write();
  add_op(call, "aten::sum", -1, {at({32}, {1}, 8, 0)}, {at({}, {}, 9, 0)});
  ASSERT_EQ(analyzed(std::move(call)).hazards.size(), 1u);
}

TEST(Hazards, TheIdiomsAreNoHazard) {
  Call call;
  // An in-place op on a fresh dense tensor.
  add_op(call, "aten::zeros", -1, {}, {at({4}, {1}, 1, 0)});
  add_op(call, "aten::add_", -1, {at({4}, {1}, 1, 0)}, {at({4}, {1}, 1, 1)});
  // An expand only read.
  add_op(call, "aten::expand", -1, {at({3}, {1}, 2, 0)}, {at({4, 3}, {0, 1}, 2, 0)});
  add_op(call, "aten::mul", -1, {at({4, 3}, {0, 1}, 2, 0), at({4, 3}, {3, 1}, 3, 0, 0, 1)}, {at({4, 3}, {3, 1}, 4, 0)});
  // reshape that returned a view, then copy_ into it: the write reaches the tensor.
  add_op(call, "aten::reshape", -1, {at({4, 3}, {3, 1}, 4, 0)}, {at({12}, {1}, 4, 0)});
  add_op(call, "aten::copy_", -1, {at({12}, {1}, 4, 0), at({12}, {1}, 5, 0, 0, 1)}, {at({12}, {1}, 4, 1)});
  // A metadata-only in-place op on an expand: no element is written.
  add_op(call, "aten::expand", -1, {at({3}, {1}, 7, 0)}, {at({4, 3}, {0, 1}, 7, 0)});
  add_op(call, "aten::requires_grad_", -1, {at({4, 3}, {0, 1}, 7, 0)}, {at({4, 3}, {0, 1}, 7, 0)});
  // x.t().contiguous().view(-1).
  add_op(call, "aten::t", -1, {at({4, 3}, {3, 1}, 4, 1)}, {at({3, 4}, {1, 3}, 4, 1)});
  add_op(call, "aten::contiguous", -1, {at({3, 4}, {1, 3}, 4, 1)}, {at({3, 4}, {4, 1}, 6, 0)});
  add_op(call, "aten::view", -1, {at({3, 4}, {4, 1}, 6, 0)}, {at({12}, {1}, 6, 0)});
  EXPECT_TRUE(analyzed(std::move(call)).hazards.empty());
}

TEST(Hazards, AFailedViewNamesItsInputsLayoutAndTheBirthplace) {
  Call call;
  add_op(call, "aten::t", -1, {at({4, 6}, {6, 1}, 1, 0)}, {at({6, 4}, {1, 6}, 1, 0)}, "head");
  add_op(call, "aten::mul", -1, {at({6, 4}, {1, 6}, 1, 0)}, {at({6, 4}, {1, 6}, 2, 0)}, "head");
  const int64_t v = add_op(call, "aten::view", -1, {at({6, 4}, {1, 6}, 2, 0)}, {}, "head");
  call.events[v].failed = true;
  Trace t = testing::trace_of({std::move(call)});
  t.run.status = RunStatus::failed;
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& h = r.hazards[0];
  EXPECT_EQ(h.kind, HazardKind::failed_view);
  EXPECT_EQ(h.where, "model.py:12");
  EXPECT_TRUE(contains(h.detail, "permuted(1,0)")) << h.detail;
  EXPECT_EQ(h.maker_where, "model.py:10");
  ASSERT_EQ(h.fixes.size(), 2u);
  EXPECT_EQ(h.fixes[0], "`.reshape(...)` instead of `.view(...)` at model.py:12");
  EXPECT_EQ(h.fixes[1], "or `.contiguous()` on the result of aten::t at model.py:10");
}

// A view that fails in a Python backward function: the gradient it views was made permuted by
// the transpose's backward (the forward line's gradient); the fix goes where it is read, never
// on autograd's own result.
TEST(Hazards, AViewThatFailsInABackwardFunctionIsFollowedToTheForwardLineWhoseGradientItViews) {
  Call call;
  const int64_t fwd = add_op(call, "aten::transpose", -1, {at({4, 8, 16}, {128, 16, 1}, 1, 0)},
                             {at({8, 4, 16}, {16, 128, 1}, 1, 0)}, "block");
  call.events[fwd].source = "model.py:23";
  const int64_t tb = add_op(call, "autograd::engine::evaluate_function: TransposeBackward0", -1, {}, {});
  call.backward_from = tb;
  call.events[tb].source = "train.py:40";
  const int64_t node = add_op(call, "TransposeBackward0", tb, {at({8, 4, 16}, {64, 16, 1}, 2, 0)}, {});
  call.events[node].forward_op = static_cast<int32_t>(fwd);
  add_op(call, "aten::transpose", node, {at({8, 4, 16}, {64, 16, 1}, 2, 0)}, {at({4, 8, 16}, {16, 64, 1}, 2, 0)});
  const int64_t fb = add_op(call, "autograd::engine::evaluate_function: BiasGeluBackward", -1, {}, {});
  call.events[fb].source = "train.py:40";
  const int64_t v = add_op(call, "aten::view", fb, {at({4, 8, 16}, {16, 64, 1}, 2, 0)}, {});
  call.events[v].failed = call.events[fb].failed = true;
  call.events[v].source = "fused.py:13";  // taken as its exception passed
  Trace t = testing::trace_of({std::move(call)});
  t.run.status = RunStatus::failed;
  t.run.backward = true;
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& h = r.hazards[0];
  EXPECT_EQ(h.where, "fused.py:13");
  EXPECT_TRUE(contains(h.maker, "born in the backward pass at TransposeBackward0, the gradient of model.py:23")) << h.maker;
  ASSERT_EQ(h.fixes.size(), 2u);
  EXPECT_EQ(h.fixes[0], "`.reshape(...)` instead of `.view(...)` at fused.py:13");
  EXPECT_FALSE(contains(h.fixes[1], "evaluate_function")) << h.fixes[1];
  ASSERT_EQ(r.causes.size(), 1u);
  EXPECT_FALSE(contains(r.causes[0].fixes[0], "on the result of")) << r.causes[0].fixes[0];
}

// Compiled code's stride check raised on a fused op fed transposed tokens: the op the message
// names, its input's layout born at the transpose before the compiled call, `.contiguous()` there.
TEST(Hazards, ACompiledStrideCheckThatFailedIsALayoutFailureAtTheInputsBirthplace) {
  Call call;
  const int64_t tr = add_op(call, "aten::transpose", -1, {at({2, 64, 16}, {1024, 16, 1}, 1, 0)},
                            {at({2, 16, 64}, {1024, 1, 16}, 1, 0)});
  const int64_t region = add_op(call, "Torch-Compiled Region: 0/0", -1, {}, {}, "encoder");
  add_op(call, "cpp_fused_0", region, {at({2, 16, 64}, {1024, 1, 16}, 1, 0)}, {at({64}, {1}, 5, 0)});
  add_op(call, "aten::_transformer_encoder_layer_fwd", region, {at({2, 16, 64}, {1024, 1, 16}, 1, 0)},
         {at({2, 16, 64}, {1024, 1, 16}, 2, 0)});
  Trace t = testing::trace_of({std::move(call)});
  t.run.status = RunStatus::failed;
  t.run.error = "AssertionError: expected size 16==16, stride 1==64 at dim=1 (Error in op: "
                "torch.ops.aten._transformer_encoder_layer_fwd.default)";
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& h = r.hazards[0];
  EXPECT_EQ(h.kind, HazardKind::stride_assertion);
  EXPECT_EQ(h.op_name, "aten::_transformer_encoder_layer_fwd");
  EXPECT_EQ(h.where, "model.py:11");  // the compiled call's line
  EXPECT_EQ(h.maker_where, "model.py:" + std::to_string(10 + tr));
  ASSERT_EQ(h.fixes.size(), 2u);
  EXPECT_TRUE(contains(h.fixes[0], "`.contiguous()` on the result of aten::transpose")) << h.fixes[0];
  EXPECT_TRUE(contains(h.fixes[1], "report aten::_transformer_encoder_layer_fwd to PyTorch")) << h.fixes[1];
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  EXPECT_TRUE(contains(text.str(), "\nVerdict: the script fails at model.py:11: the compiled code checks")) << text.str();
  // Another failure is no stride check.
  Call plain;
  add_op(plain, "aten::relu", -1, {at({4}, {1}, 1, 0)}, {at({4}, {1}, 2, 0)});
  Trace other = testing::trace_of({std::move(plain)});
  other.run.status = RunStatus::failed;
  other.run.error = "AssertionError: expected 3 got 4";
  EXPECT_TRUE(analyze(std::move(other)).hazards.empty());
}

TEST(Hazards, TheVerdictOfARunThatFailedAtAViewLeadsWithTheFailure) {
  // One voice: the failure is what the user meets first, then the counts up to it.
  Call call;
  add_op(call, "aten::t", -1, {at({4, 6}, {6, 1}, 1, 0)}, {at({6, 4}, {1, 6}, 1, 0)}, "head");
  const int64_t v = add_op(call, "aten::view", -1, {at({6, 4}, {1, 6}, 1, 0)}, {}, "head");
  call.events[v].failed = true;
  Trace t = testing::trace_of({std::move(call)});
  t.run.status = RunStatus::failed;
  std::ostringstream text;
  write_text_report(text, analyze(std::move(t)), TextOptions{});
  const std::string s = text.str();
  EXPECT_TRUE(contains(s, "\nVerdict: the script fails at model.py:11: aten::view raised on a permuted(1,0) input"))
      << s;
  EXPECT_TRUE(contains(s, "  and before it: no implicit layout copies in a call")) << s;
}

TEST(Hazards, AParameterThatAliasesAnotherInAnotherExtentIsListed) {
  Call call;
  add_op(call, "aten::relu", -1, {at({4}, {1}, 2, 0)}, {at({4}, {1}, 3, 0)});
  const Report r = analyzed(std::move(call), {testing::model_tensor("a.weight", false, at({4, 8}, {8, 1}, 7, 0)),
                                               testing::model_tensor("b.weight", false, at({8, 4}, {1, 8}, 7, 0)),
                                               testing::model_tensor("tied.weight", false, at({4, 8}, {8, 1}, 7, 0))});
  ASSERT_EQ(r.hazards.size(), 3u);
  EXPECT_TRUE(contains(r.hazards[0].detail, "shares its storage with parameter `b.weight`")) << r.hazards[0].detail;
}

TEST(Hazards, TheTextReportShowsThemBeforeTheVerdictWithLineAndFix) {
  const Report r = analyzed(expand_then_write());
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  const std::string s = text.str();
  const size_t hazards = s.find("Hazards: 1");
  ASSERT_NE(hazards, std::string::npos) << s;
  EXPECT_LT(hazards, s.find("Verdict"));
  EXPECT_TRUE(contains(s, "1. aliased write at model.py:12, aten::copy_")) << s;
  EXPECT_TRUE(contains(s, "→ fix: `.clone()` the expanded tensor")) << s;
}

TEST(Hazards, TheJsonReportHoldsThemAndReadsThemBack) {
  const Report r = analyzed(expand_then_write());
  const nlohmann::json j = report_to_json(r);
  ASSERT_EQ(j.at("hazards").size(), 1u);
  EXPECT_EQ(j["hazards"][0]["kind"], "aliased_write");
  const Report back = report_from_json(j);
  EXPECT_TRUE(back.hazards_in_file);
  EXPECT_EQ(report_to_json(back), j);
  nlohmann::json bad = j;
  bad["hazards"][0]["op"] = 9999;
  EXPECT_ANY_THROW(report_from_json(bad));
}

TEST(Hazards, TheHtmlPageShowsThemFirstAndTheTraceMarksThem) {
  const Report r = analyzed(expand_then_write());
  const std::string page = report_text(find_reporter("html", ReportKind::report, "format"), r);
  EXPECT_TRUE(contains(page, "\"kind\":\"aliased_write\"")) << page.substr(0, 200);
  EXPECT_TRUE(contains(page, "id: \"hazards\"")) << "the page's script renders them";
  int marks = 0;
  const nlohmann::json trace = chrome_trace(r);
  ASSERT_EQ(r.hazards.size(), 1u);
  for (const nlohmann::json& e : trace.at("traceEvents"))
    if (e.value("cat", "") == "hazard") {
      ++marks;
      EXPECT_EQ(e.at("ph"), "i");
      EXPECT_EQ(e.at("name"), "hazard: aliased write");
    }
  EXPECT_EQ(marks, 1) << trace.dump().substr(0, 3000);
}

TEST(Hazards, TheGateFailsOnANewHazardAndComparesAnOldBaselineAsNone) {
  const Report base = analyzed(reshape_then_write());  // no parameter named: the copy's source is unnamed
  Call clean;
  add_op(clean, "aten::relu", -1, {at({4}, {1}, 2, 0)}, {at({4}, {1}, 3, 0)});
  const Report none = analyzed(std::move(clean));
  const Report now = analyzed(expand_then_write());
  const Comparison c = compare_reports(none, now, GateOptions{});
  EXPECT_TRUE(c.regressed());
  EXPECT_FALSE(hazard_check(c).passed);
  EXPECT_TRUE(contains(hazard_check(c).detail, "1 new: aliased write at model.py:12")) << hazard_check(c).detail;
  nlohmann::json old = report_to_json(none);
  old.erase("hazards");
  const Comparison o = compare_reports(report_from_json(old), now, GateOptions{});
  bool noted = false;
  for (const std::string& n : o.notes) noted |= contains(n, "before layoutprof looked for them");
  EXPECT_TRUE(noted);
  GateOptions lenient;
  lenient.max_new_hazards = 1;
  EXPECT_TRUE(hazard_check(compare_reports(none, now, lenient)).passed);
  EXPECT_FALSE(hazard_check(compare_reports(base, now, GateOptions{})).passed);
  EXPECT_TRUE(hazard_check(compare_reports(now, now, GateOptions{})).passed);
}

TEST(Hazards, AnAcceptedLineIsListedNotGated) {
  Trace t = testing::trace_of({expand_then_write()});
  t.run.accepted = {"model.py:12"};
  const Report r = analyze(std::move(t));
  ASSERT_EQ(r.hazards.size(), 1u);
  EXPECT_TRUE(r.hazards[0].accepted);
  EXPECT_FALSE(r.hazards[0].counted());
}

}  // namespace
}  // namespace layoutprof
