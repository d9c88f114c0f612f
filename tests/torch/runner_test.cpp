// run_profile() on models built here with TorchScript, for paths no committed sample takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ATen/record_function.h>
#include <torch/script.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "analysis/analysis.h"
#include "core/input_spec.h"
#include "runner/runner.h"
#include "support/errors.h"
#include "record/recorder.h"
#include "runner/model.h"
#include "runner/run_notes.h"
#include "counters/gpu.h"
#include "../unit/synthetic.h"

namespace layoutprof {
namespace {

// A file of this test process's own in the temporary folder: the suites of one CI run share it,
// and two of them writing the same model file while the other loads it failed a load.
std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
}

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
  std::string path = temp_file("fails_on_third_call.pt");
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
  EXPECT_EQ(trace.run.status, RunStatus::failed);
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
    const auto before_start = clock::now();
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
    // start_ns counts from a moment inside start(), after before_start: no allowance for how long
    // start() took (a fixed one failed under ThreadSanitizer on a busy machine).
    EXPECT_LE(e.start_ns + e.duration_ns, ns(outer1 - before_start)) << Recorder::op_clock();
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
  std::string path = temp_file("convolutions_and_a_transposed_weight.pt");
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
  ASSERT_EQ(trace.run.status, RunStatus::ok) << trace.run.error;
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
  ASSERT_EQ(trace.run.status, RunStatus::ok) << trace.run.error;
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
  ASSERT_EQ(trace.run.status, RunStatus::ok) << trace.run.error;
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
  EXPECT_EQ(failed.run.status, RunStatus::failed);
  EXPECT_FALSE(none);
  EXPECT_TRUE(failed.run.plain_call_ns.empty());
}

// A module whose forward() calls a submodule: op sites come from the interpreter as the ops run.
std::string outer_with_inner() {
  torch::jit::Module inner("Inner");
  inner.register_parameter("w", torch::randn({4, 4}), false);
  inner.define(R"JIT(
def forward(self, x):
    return torch.matmul(x, self.w)
)JIT");
  torch::jit::Module outer("Outer");
  outer.register_module("inner", inner);
  outer.register_buffer("scale", torch::ones({4}));
  outer.define(R"JIT(
def forward(self, x, y):
    z = self.inner.forward(x)
    return z * self.scale + y
)JIT");
  std::string path = temp_file("outer_with_inner.pt");
  outer.save(path);
  return path;
}

TEST(Model, TorchScriptNamesItsInputsParametersAndBuffers) {
  std::unique_ptr<Model> model = load_model(outer_with_inner());
  EXPECT_EQ(model->input_names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(model->sample_inputs().empty()) << "TorchScript archives carry no inputs";
  std::vector<NamedTensor> params = model->named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].name, "inner.w");
  EXPECT_EQ(params[0].tensor.sizes(), (std::vector<int64_t>{4, 4}));
  std::vector<NamedTensor> buffers = model->named_buffers();
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].name, "scale");
  // The handles share the model's tensors: what is done to them, the model sees.
  params[0].tensor.detach().zero_();
  std::vector<c10::IValue> inputs = {torch::ones({2, 4}), torch::zeros({2, 4})};
  at::Tensor out = model->forward(inputs).toTensor();
  EXPECT_EQ(out.abs().sum().item<float>(), 0.0f);
}

TEST(Model, LoadSaysWhatIsWrongWithAFile) {
  try {
    load_model(temp_file("no_such_model.pt"));
    FAIL() << "loaded a missing file";
  } catch (const ModelLoadError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot open model"));
  }
  const std::string junk = temp_file("not_a_model.pt");
  { std::ofstream(junk) << "not a zip archive"; }
  try {
    load_model(junk);
    FAIL() << "loaded a text file";
  } catch (const ModelLoadError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("is not a loadable TorchScript archive"));
  }
}

// The recorder asks the model's site source, as the ops run, where each top-level op comes
// from: the TorchScript interpreter names the submodule and the line of the model's code.
TEST(Model, TorchScriptSitesComeFromTheInterpreterAsTheOpsRun) {
  std::unique_ptr<Model> model = load_model(outer_with_inner());
  model->set_training(false);
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> inputs = {torch::ones({2, 4}), torch::zeros({2, 4})};
  Recorder recorder;
  recorder.set_site_source(&model->op_sites());
  recorder.start(Recorder::Mode::sites);
  model->forward(inputs);
  std::vector<OpSite> sites = recorder.stop_sites();
  ASSERT_FALSE(sites.empty());
  bool matmul_in_inner = false, mul_at_top = false;
  for (const OpSite& s : sites) {
    if (s.name == "aten::matmul") {
      matmul_in_inner = s.module == "inner";
      EXPECT_THAT(s.source_text.str(), ::testing::HasSubstr("torch.matmul(x, self.w)"));
      EXPECT_FALSE(s.source.empty());
    }
    if (s.name == "aten::mul") mul_at_top = s.module == "";
  }
  EXPECT_TRUE(matmul_in_inner) << "aten::matmul's module path";
  EXPECT_TRUE(mul_at_top) << "the model's own ops have the empty path";
}

// A front end that names its ops up front answers with the ids of what it runs; the recorder
// keeps the ids and asks for their text only after the call.
class FixedSites final : public OpSiteSource {
 public:
  SiteId current() override {
    ++asked;
    return {7, 9};
  }
  std::string module_path(uint32_t module) const override { return module == 7 ? "block.3" : "?"; }
  SourceLine source_line(uint32_t source) const override {
    return source == 9 ? SourceLine{"model.py:12", "x = x.permute(0, 2, 3, 1)"} : SourceLine{};
  }
  int asked = 0;
};

TEST(Recorder, AsksItsSiteSourceForTopLevelOpsOnly) {
  FixedSites source;
  Recorder recorder;
  recorder.set_site_source(&source);
  recorder.start(Recorder::Mode::sites);
  {
    RECORD_FUNCTION("layoutprof_test::outer", std::vector<c10::IValue>());
    { RECORD_FUNCTION("layoutprof_test::nested", std::vector<c10::IValue>()); }
  }
  std::vector<OpSite> sites = recorder.stop_sites();
  EXPECT_EQ(source.asked, 1) << "the nested op is not asked about";
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].name, "layoutprof_test::outer");
  EXPECT_EQ(sites[0].module, "block.3");
  EXPECT_EQ(sites[0].source, "model.py:12");
  EXPECT_EQ(sites[0].source_text, "x = x.permute(0, 2, 3, 1)");
  // Timed calls that take their own sites (models that fork) resolve them at stop().
  recorder.set_capture_sites(true);
  recorder.start(Recorder::Mode::timed);
  { RECORD_FUNCTION("layoutprof_test::outer", std::vector<c10::IValue>()); }
  Call call = recorder.stop();
  recorder.set_capture_sites(false);
  ASSERT_EQ(call.events.size(), 1u);
  EXPECT_TRUE(call.sites_recorded);
  EXPECT_EQ(call.events[0].module, "block.3");
  EXPECT_EQ(call.events[0].source, "model.py:12");
}

// A source whose answers count up: source k is "model.py:k".
class CountingSites final : public OpSiteSource {
 public:
  SiteId current() override { return {0, static_cast<uint32_t>(++asked)}; }
  std::string module_path(uint32_t) const override { return ""; }
  SourceLine source_line(uint32_t source) const override { return {"model.py:" + std::to_string(source), ""}; }
  int asked = 0;
};

// The ops directly inside a compiled region (inductor's kernels and extern kernels, which dynamo
// runs under "Torch-Compiled Region: f/c") are asked where they come from, each on its own: the
// compiled code's line, which the front end maps to the user's. Deeper ops, and the children
// of any other op, take their parent's.
TEST(Recorder, OpsDirectlyInsideACompiledRegionTakeSitesOfTheirOwn) {
  CountingSites source;
  Recorder recorder;
  recorder.set_site_source(&source);
  recorder.set_capture_sites(true);
  for (Recorder::Mode mode : {Recorder::Mode::timed, Recorder::Mode::figures}) {
    source.asked = 0;
    recorder.start(mode);
    {
      RECORD_FUNCTION("Torch-Compiled Region: 0/0", std::vector<c10::IValue>());
      {
        RECORD_FUNCTION("layoutprof_test::extern_conv", std::vector<c10::IValue>());
        { RECORD_FUNCTION("layoutprof_test::inner", std::vector<c10::IValue>()); }
      }
      { RECORD_FUNCTION("cpp_fused_clone_0", std::vector<c10::IValue>()); }
    }
    {
      RECORD_FUNCTION("layoutprof_test::eager", std::vector<c10::IValue>());
      { RECORD_FUNCTION("layoutprof_test::eager_child", std::vector<c10::IValue>()); }
    }
    Call call = recorder.stop();
    EXPECT_EQ(source.asked, 4) << "the region, its two children and the eager op";
    if (mode != Recorder::Mode::timed) continue;
    ASSERT_EQ(call.events.size(), 6u);
    std::vector<std::string> sources;
    for (const OpEvent& e : call.events) sources.push_back(e.source.str());
    EXPECT_EQ(sources, (std::vector<std::string>{"model.py:1", "model.py:2", "model.py:2", "model.py:3",
                                                 "model.py:4", "model.py:4"}));
  }
  recorder.set_capture_sites(false);
}

// A recording in process that traced no GPU time says why; when its shown call ran ops on CUDA
// (a CUDA op in a build without CUPTI), the line says how many too.
TEST(RunNotes, AReportInProcessSaysWhyGpuTimeWasNotMeasuredWhenOpsRanOnCuda) {
  Call call;
  TensorInfo on_gpu = testing::tensor({2, 3}, {3, 1});
  on_gpu.set_shape({2, 3}, {3, 1}, "f32", "cuda:0", 4);
  testing::add_op(call, "aten::relu", -1, {testing::tensor({2, 3}, {3, 1})}, {testing::tensor({2, 3}, {3, 1}, 2)});
  Trace cpu_only = testing::trace_of({call});
  EXPECT_EQ(gpu_time_in_process(cpu_only, "no CUDA device in this process"),
            "GPU time: no CUDA device in this process");
  testing::add_op(call, "aten::to", -1, {testing::tensor({2, 3}, {3, 1})}, {on_gpu});
  testing::add_op(call, "aten::relu", -1, {on_gpu}, {on_gpu});
  std::string why;
  if (!gpu_tracing_built()) create_gpu_tracer(-1, &why);
  else why = "turned off (gpu=False)";
  EXPECT_EQ(gpu_time_in_process(testing::trace_of({call}), why),
            "GPU time: not measured: 2 ops of the shown call ran on CUDA: " + why);
}

// GPU time traced in some recorded calls and not in others (a torch.profiler session took CUPTI
// for a while): measured, and the calls it missed counted; graph kernels whose correlation was
// not trusted said apart.
TEST(RunNotes, GpuTimeMissedInSomeCallsIsCountedBesideTheMeasuredLine) {
  ProfileConfig config;
  config.device = "cuda";
  RecordedCalls recorded;
  recorded.iters = 3;
  recorded.gpu_traced = true;
  std::vector<Call> calls(3);
  calls[1].gpu_error = "not traced while torch.profiler ran";
  calls[2].gpu_graph_uncorrelated = 4;
  Trace trace = testing::trace_of({});
  trace.calls = std::move(calls);
  note_recorded_calls(config, recorded, trace);
  auto has = [](const std::vector<std::string>& lines, const std::string& start) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
  };
  EXPECT_TRUE(has(trace.run.measured, "GPU time: CUPTI activity records"));
  EXPECT_TRUE(has(trace.run.not_measured, "GPU time of 1 of 3 recorded calls: not traced while torch.profiler ran"));
  EXPECT_TRUE(has(trace.run.not_measured, "GPU time of 4 CUDA graph kernels, copies and memsets: their correlation ids"));
}

}  // namespace
}  // namespace layoutprof
