// run_profile() on models built here with TorchScript, for paths no committed sample takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ATen/record_function.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "layoutprof/analysis.h"
#include "layoutprof/input_spec.h"
#include "layoutprof/runner.h"
#include "record/recorder.h"

namespace layoutprof {
namespace {

// A module that raises on its third forward() (view() of a transposed tensor): with no warm-up, the sites call is the first
// and the first recorded call the second, so the call that fails is the second recorded one,
// which records op names and times only (Recorder::Mode::figures).
std::string fails_on_third_call() {
  torch::jit::Module m("FailsOnThirdCall");
  m.register_attribute("calls", c10::IntType::get(), 0);
  m.define(R"JIT(
def forward(self, x):
    self.calls = self.calls + 1
    y = x.t().contiguous()
    if self.calls == 3:
        y = x.t().view(-1)
    return y
)JIT");
  std::string path = ::testing::TempDir() + "/fails_on_third_call.pt";
  m.save(path);
  return path;
}

TEST(Runner, ALaterCallThatFailsIsShownWithoutTensorsAndSaysSo) {
  ProfileConfig config;
  config.model = fails_on_third_call();
  config.inputs = {parse_input_spec("4x8")};
  config.warmup = 0;
  config.iters = 3;
  config.counters = false;
  Trace trace = run_profile(config, [](const std::string&) {});
  EXPECT_EQ(trace.run.status, "failed");
  EXPECT_THAT(trace.run.error, ::testing::HasSubstr("view"));
  ASSERT_EQ(trace.calls.size(), 2u) << "recording stops at the failing call";
  EXPECT_TRUE(trace.calls[0].tensors_recorded);
  EXPECT_FALSE(trace.calls[1].tensors_recorded);
  EXPECT_TRUE(std::any_of(trace.run.not_measured.begin(), trace.run.not_measured.end(),
                          [](const std::string& s) { return s.find("tensors of the failing call 2") == 0; }))
      << ::testing::PrintToString(trace.run.not_measured);
  Report r = analyze(trace);
  ASSERT_FALSE(r.ops.empty()) << "the failing call's ops are shown";
  EXPECT_EQ(r.copies.size(), 0u) << "the failing call's copy has no tensors to classify";
  // The first recorded call, which did record tensors, saw the copy of the transpose.
  bool copy_with_tensors = false;
  for (const OpEvent& e : trace.calls[0].events)
    copy_with_tensors = copy_with_tensors || (e.name == "aten::copy_" && e.inputs.size() == 2);
  EXPECT_TRUE(copy_with_tensors);
}

// Op times are steady-clock nanoseconds whichever clock the recorder reads (Recorder::op_clock:
// the time-stamp counter where it is the kernel's clocksource, scaled): an op's duration lies
// between the steady clock's readings just inside it and just outside it.
TEST(Recorder, OpTimesAreSteadyClockNanoseconds) {
  using clock = std::chrono::steady_clock;
  Recorder recorder;
  for (int ms : {30, 3}) {
    recorder.start(Recorder::Mode::figures);
    const auto outer0 = clock::now();
    clock::time_point inner0, inner1;
    {
      RECORD_FUNCTION("layoutprof_test::sleep", std::vector<c10::IValue>());
      inner0 = clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      inner1 = clock::now();
    }
    const auto outer1 = clock::now();
    Call call = recorder.stop();
    ASSERT_EQ(call.events.size(), 1u) << Recorder::op_clock();
    const OpEvent& e = call.events[0];
    EXPECT_EQ(e.name, "layoutprof_test::sleep");
    auto ns = [](clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
    EXPECT_GE(e.duration_ns, ns(inner1 - inner0)) << Recorder::op_clock();
    EXPECT_LE(e.duration_ns, ns(outer1 - outer0)) << Recorder::op_clock();
    EXPECT_GE(e.start_ns, 0);
    EXPECT_LE(e.start_ns + e.duration_ns, ns(outer1 - outer0) + 100000);  // start() precedes outer0
  }
}

// compare-formats' variants (ProfileConfig::convert_to) on a module with a 3x3 and a 1x1
// convolution weight (4-D), a transposed 2-D weight and a 5-D buffer.
std::string convolutions_and_a_transposed_weight() {
  torch::jit::Module m("ConvolutionsAndATransposedWeight");
  m.register_parameter("conv_w", torch::randn({4, 3, 3, 3}), false);
  m.register_parameter("pointwise_w", torch::randn({4, 4, 1, 1}), false);
  m.register_parameter("lin_w", torch::randn({8, 4}).t(), false);  // [4, 8], strides (1, 4)
  m.register_buffer("volume", torch::randn({1, 2, 2, 2, 2}));
  m.define(R"JIT(
def forward(self, x):
    y = torch.conv2d(x, self.conv_w, None, [1, 1], [1, 1])
    y = torch.conv2d(y, self.pointwise_w)
    return torch.matmul(y.mean([2, 3]), self.lin_w) + self.volume.sum()
)JIT");
  std::string path = ::testing::TempDir() + "/convolutions_and_a_transposed_weight.pt";
  m.save(path);
  return path;
}

// The strides of the first top-level aten::conv2d's input `arg` in the shown call.
std::vector<int64_t> conv_input_strides(const Trace& trace, size_t arg) {
  for (const OpEvent& e : trace.calls.at(0).events)
    if (e.parent < 0 && e.name == "aten::conv2d") return e.inputs[arg].strides();
  ADD_FAILURE() << "no aten::conv2d";
  return {};
}

ProfileConfig variant_config(const std::string& convert_to) {
  ProfileConfig config;
  config.model = convolutions_and_a_transposed_weight();
  config.inputs = {parse_input_spec("2x3x8x8")};
  config.warmup = 1;
  config.iters = 1;
  config.counters = false;
  config.convert_to = convert_to;
  return config;
}

TEST(Runner, ChannelsLastConvertsThe4DAnd5DTensorsAsModelToDoes) {
  Trace trace = run_profile(variant_config("channels_last"), [](const std::string&) {});
  ASSERT_EQ(trace.run.status, "ok") << trace.run.error;
  const Conversion& c = trace.run.conversion;
  EXPECT_EQ(c.to, "channels_last");
  // Both convolution weights (the 1x1 one too: its NCHW strides on the size-1 dims are not
  // channels_last's, as Python's conversion leaves them), not the 2-D weight; the 5-D buffer.
  EXPECT_EQ(c.parameters, 2);
  EXPECT_EQ(c.parameters_total, 3);
  EXPECT_EQ(c.buffers, 1);
  EXPECT_EQ(c.buffers_total, 1);
  EXPECT_EQ(c.inputs, 1);
  EXPECT_EQ(trace.run.inputs.at(0).spec.text, "2x3x8x8:channels_last");
  EXPECT_EQ(trace.run.inputs.at(0).tensor.label(), "channels_last");
  EXPECT_EQ(conv_input_strides(trace, 1), (std::vector<int64_t>{27, 1, 9, 3})) << "the weight the model holds, converted";
  EXPECT_TRUE(trace.run.plain_call_ns.empty()) << "timed_calls 0: no plain calls";
}

TEST(Runner, ContiguousConvertsEveryTensorThatIsNot) {
  Trace trace = run_profile(variant_config("contiguous"), [](const std::string&) {});
  ASSERT_EQ(trace.run.status, "ok") << trace.run.error;
  const Conversion& c = trace.run.conversion;
  EXPECT_EQ(c.parameters, 1) << "the transposed 2-D weight only";
  EXPECT_EQ(c.buffers, 0);
  EXPECT_EQ(c.inputs, 0);
  EXPECT_EQ(trace.run.inputs.at(0).spec.text, "2x3x8x8") << "unchanged";
  EXPECT_EQ(conv_input_strides(trace, 1), (std::vector<int64_t>{27, 9, 3, 1}));
  // As given: nothing converted, nothing said.
  Trace given = run_profile(variant_config(""), [](const std::string&) {});
  EXPECT_EQ(given.run.conversion.to, "");
  EXPECT_EQ(given.run.conversion.parameters_total, 0) << "not even counted";
  EXPECT_THROW(run_profile(variant_config("nhwc"), [](const std::string&) {}), std::invalid_argument);
}

TEST(Runner, PlainCallsAfterTheRecordedOnesAndAKeptModel) {
  ProfileConfig config = variant_config("");
  config.timed_calls = 4;
  std::unique_ptr<PlainCaller> keep;
  Trace trace = run_profile(config, [](const std::string&) {}, &keep);
  ASSERT_EQ(trace.run.status, "ok") << trace.run.error;
  ASSERT_EQ(trace.run.plain_call_ns.size(), 4u);
  for (int64_t ns : trace.run.plain_call_ns) EXPECT_GT(ns, 0);
  EXPECT_TRUE(std::any_of(trace.run.measured.begin(), trace.run.measured.end(), [](const std::string& m) {
    return m.rfind("plain calls: wall time of each of 4 forward() calls", 0) == 0;
  })) << ::testing::PrintToString(trace.run.measured);
  ASSERT_TRUE(keep);
  // The kept model still runs, without the observer: no recorder is active, so nothing records.
  EXPECT_GT(keep->call_ns(), 0);
  EXPECT_FALSE(at::hasCallbacks()) << "the observer is gone after run_profile";
  // A run that failed keeps nothing.
  ProfileConfig failing;
  failing.model = fails_on_third_call();
  failing.inputs = {parse_input_spec("4x8")};
  failing.warmup = 0;
  failing.counters = false;
  failing.timed_calls = 3;
  std::unique_ptr<PlainCaller> none;
  Trace failed = run_profile(failing, [](const std::string&) {}, &none);
  EXPECT_EQ(failed.run.status, "failed");
  EXPECT_FALSE(none);
  EXPECT_TRUE(failed.run.plain_call_ns.empty());
}

}  // namespace
}  // namespace layoutprof
