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

}  // namespace
}  // namespace layoutprof
