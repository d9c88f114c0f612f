#include "report/chrome_trace.h"

#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using nlohmann::json;

Report sample() {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  CounterStatus st;
  st.event = "page-faults";
  st.measured = true;
  t.run.counters = {st};
  for (OpEvent& e : t.calls[0].events)
    if (e.parent < 0) e.counters = {CounterValue{3, 3.0, false}};
  return analyze(t);
}

TEST(ChromeTrace, SlicesNestOnTheirThreadsAndCarryLayouts) {
  Report r = sample();
  json j = chrome_trace(r);
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::vector<json> slices;
  for (const json& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph"));
    ASSERT_TRUE(e.contains("pid"));
    if (e["ph"] == "X") slices.push_back(e);
  }
  ASSERT_EQ(slices.size(), r.ops.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    const json& s = slices[i];
    EXPECT_GE(s["dur"].get<double>(), 0.0);
    const OpEvent& op = r.ops[i];
    if (op.parent >= 0) {  // inside its parent
      const json& p = slices[op.parent];
      EXPECT_GE(s["ts"].get<double>(), p["ts"].get<double>());
      EXPECT_LE(s["ts"].get<double>() + s["dur"].get<double>(),
                p["ts"].get<double>() + p["dur"].get<double>() + 1e-9);
    }
  }
  EXPECT_EQ(slices[1]["args"]["inputs"][0], "2x3x4 f32 strides (12,1,3) permuted(0,2,1)");
}

TEST(ChromeTrace, CopiesAreNamedByClassAndCountersAreTracks) {
  json j = chrome_trace(sample());
  bool copy = false, counter = false, bytes = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "copy [implicit_layout]") {
      copy = true;
      EXPECT_EQ(e["cat"], "copy,implicit_layout");
      EXPECT_EQ(e["args"]["bytes"], 96);
    }
    if (e["ph"] == "C" && e["name"] == "page-faults") counter = true;
    if (e["ph"] == "C" && e["name"] == "bytes copied") bytes = true;
  }
  EXPECT_TRUE(copy);
  EXPECT_TRUE(counter);
  EXPECT_TRUE(bytes);
}

TEST(ChromeTrace, GpuRunsCarryEachOpsKernelsAndTimes) {
  Call call = testing::transpose_reshape_call();
  for (OpEvent& e : call.events) e.gpu_ns = 0;
  call.events[3].gpu_ns = 4000;  // the copy_'s kernel
  call.events[3].gpu_launches = 1;
  call.events[3].kernels = {"elementwise_kernel"};
  json j = chrome_trace(analyze(testing::trace_of({call})));
  bool seen = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_TRUE(e["args"].contains("gpu_ns")) << e["name"];
    if (e["name"] == "copy [implicit_layout]") {
      seen = true;
      EXPECT_EQ(e["args"]["gpu_ns"], 4000);
      EXPECT_EQ(e["args"]["kernels"], json::array({"elementwise_kernel"}));
    }
    if (e["name"] == "aten::reshape") { EXPECT_EQ(e["args"]["copy_gpu_ns"], 4000); }
  }
  EXPECT_TRUE(seen);
  const json cpu = chrome_trace(sample());  // kept: a range-for over a temporary's member dangles
  for (const json& e : cpu["traceEvents"])
    if (e["ph"] == "X") { EXPECT_FALSE(e["args"].contains("gpu_ns")) << "CPU runs have no GPU args"; }
}

TEST(ChromeTrace, ChildrenLongerThanTheirParentAreClamped) {
  Call call = testing::transpose_reshape_call();
  call.events[2].duration_ns = 1'000'000;  // clone "outlasts" reshape (medians of other calls)
  Report r = analyze(testing::trace_of({call}));
  json j = chrome_trace(r);
  std::vector<json> slices;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == "X") slices.push_back(e);
  EXPECT_LE(slices[2]["ts"].get<double>() + slices[2]["dur"].get<double>(),
            slices[1]["ts"].get<double>() + slices[1]["dur"].get<double>());
}

}  // namespace
}  // namespace layoutprof
