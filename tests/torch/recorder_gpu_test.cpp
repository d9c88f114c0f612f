// The recorder's side of its collectors, on the CPU. GPU tracing: which ops push an external
// correlation id, that every push is popped, and that what the tracer returns for an id lands
// on that op (the tracer here is a test double that logs pushes and returns one synthetic record
// per id; the CUPTI tracer itself is tested in tests/gpu). Sampling: what a later call keeps of
// a drain (a stand-in sampler's).
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/script.h>

#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "counters/collectors.h"
#include "counters/gpu.h"
#include "record/op_clock.h"
#include "record/recorder.h"

namespace layoutprof {
namespace {

class LoggingTracer : public GpuTracer {
 public:
  void start() noexcept override {
    pushed.clear();
    thread_pushed.clear();
    depth = max_depth = thread_depth = 0;
  }
  bool push(uint64_t id) override {
    pushed.push_back(id);
    max_depth = std::max(max_depth, ++depth);
    return true;
  }
  void pop() override { --depth; }
  bool push_on_thread(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mutex);
    thread_pushed.push_back(id);
    ++thread_depth;
    return true;
  }
  void pop_on_thread() override {
    std::lock_guard<std::mutex> lock(mutex);
    --thread_depth;
  }
  // One kernel per pushed id (the main thread's, then the others'), id * 10 ns long, named
  // after the id.
  GpuRecords stop() noexcept override {
    depth_at_stop = depth;
    thread_depth_at_stop = thread_depth;
    GpuRecords r;
    r.traced = true;
    pushed.insert(pushed.end(), thread_pushed.begin(), thread_pushed.end());
    for (size_t i = 0; i < pushed.size(); ++i) {
      uint32_t correlation = static_cast<uint32_t>(i + 1);
      r.activities.push_back({GpuActivity::Kind::kernel, "k" + std::to_string(pushed[i]), 0,
                              static_cast<int64_t>(pushed[i] * 10), correlation, 0, 0});
      r.correlations.push_back({correlation, pushed[i]});
    }
    return r;
  }
  std::string describe() override { return "logging tracer"; }

  std::vector<uint64_t> pushed, thread_pushed;
  int depth = 0, max_depth = 0, depth_at_stop = -1, thread_depth = 0, thread_depth_at_stop = -1;
  std::mutex mutex;
};

// CUPTI refused the call: nothing pushed, nothing traced.
class RefusedTracer : public GpuTracer {
 public:
  void start() noexcept override {}
  bool push(uint64_t) override { return false; }
  void pop() override { ++pops; }
  GpuRecords stop() noexcept override {
    GpuRecords r;
    r.error = "CUPTI enable activity kind: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    return r;
  }
  std::string describe() override { return "refused"; }
  int pops = 0;
};

Call record(const std::string& sample, const at::Tensor& input, GpuTracer& tracer) {
  torch::jit::Module m = torch::jit::load(std::string(SAMPLES_DIR) + "/" + sample);
  m.eval();
  torch::NoGradGuard no_grad;
  Recorder recorder;
  GpuCollector gpu(tracer);
  recorder.start(Recorder::Mode::timed, {&gpu});
  m.forward({input});
  return recorder.stop();
}

// Another thread's op whose id was pushed holds that id's kernel and time: an id with the top
// bit set (gpu_external_id), its own. Returns how many did.
size_t check_other_threads(const Call& call, const LoggingTracer& tracer) {
  EXPECT_EQ(tracer.thread_depth_at_stop, 0) << "every other thread's push popped";
  std::set<uint64_t> ids;
  for (const OpEvent& e : call.events) {
    if (e.thread == 0 || e.kernels.empty()) continue;
    EXPECT_EQ(e.kernels.size(), 1u) << e.name;
    const uint64_t id = std::stoull(e.kernels[0].str().substr(1));
    EXPECT_EQ(id >> 31, 1u) << e.name << ": another thread's id has the top bit set";
    EXPECT_EQ(e.gpu_ns, static_cast<int64_t>(id * 10)) << e.name;
    EXPECT_TRUE(ids.insert(id).second) << e.name << ": id " << id << " is another op's too";
  }
  EXPECT_EQ(ids.size(), tracer.thread_pushed.size()) << "each pushed id lands on its op";
  return ids.size();
}

void check_attribution(const Call& call, const LoggingTracer& tracer) {
  EXPECT_EQ(tracer.depth_at_stop, 0) << "every push popped";
  check_other_threads(call, tracer);
  size_t expected_pushes = 0, main_index = 0;
  for (const OpEvent& e : call.events) {
    if (e.thread != 0) continue;
    const uint64_t id = ++main_index;  // ids are main-thread event indices + 1
    const bool pushes = e.parent < 0 || e.name == "aten::copy_";
    if (pushes) {
      ++expected_pushes;
      EXPECT_EQ(e.gpu_ns, static_cast<int64_t>(id * 10)) << e.name << " #" << e.id;
      EXPECT_EQ(e.kernels, (std::vector<Str>{"k" + std::to_string(id)})) << e.name;
      EXPECT_EQ(e.gpu_launches, 1) << e.name;
    } else {
      EXPECT_EQ(e.gpu_ns, 0) << e.name << " is nested: its kernels count to its top-level op";
      EXPECT_TRUE(e.kernels.empty());
    }
  }
  EXPECT_EQ(tracer.pushed.size(), expected_pushes + tracer.thread_pushed.size());
}

TEST(RecorderGpu, EachTopLevelOpAndCopyGetsItsOwnIdAndItsKernels) {
  LoggingTracer tracer;
  Call call = record("transpose_reshape.pt", torch::randn({2, 8, 16}), tracer);
  check_attribution(call, tracer);
  bool copy_nested_in_reshape = false;
  for (const OpEvent& e : call.events)
    if (e.name == "aten::copy_" && e.parent >= 0) copy_nested_in_reshape = true;
  EXPECT_TRUE(copy_nested_in_reshape) << "the sample's reshape copies inside itself";
  EXPECT_GE(tracer.max_depth, 2) << "the copy's id is pushed inside its op's";
}

TEST(RecorderGpu, ConvolutionsCopyingTheirWeightsKeepTheCopyTimeApart) {
  LoggingTracer tracer;
  Call call = record("channels_last_convnet.pt",
                     torch::randn({2, 3, 32, 32}).contiguous(at::MemoryFormat::ChannelsLast), tracer);
  check_attribution(call, tracer);
  int copies = 0;
  for (const OpEvent& e : call.events) copies += e.name == "aten::copy_" && e.thread == 0;
  EXPECT_GT(copies, 0);
}

// Ops on a thread other than the one that records (as autograd's device thread runs a CUDA
// backward pass) push ids of their own there, and get their kernels. A plain thread rather
// than a TorchScript fork: LibTorch's futures race on their own objects under ThreadSanitizer
// (scripts/tsan-runs.sh).
TEST(RecorderGpu, AnotherThreadsOpsPushIdsOfTheirOwnAndGetTheirKernels) {
  LoggingTracer tracer;
  Recorder recorder;
  GpuCollector gpu(tracer);
  torch::NoGradGuard no_grad;
  const at::Tensor x = torch::randn({8, 16});
  recorder.start(Recorder::Mode::timed, {&gpu});
  at::Tensor here = x.t().contiguous();
  at::Tensor there;
  std::thread other([&] { there = (x.t() * 2).contiguous(); });
  other.join();
  Call call = recorder.stop();
  check_attribution(call, tracer);
  EXPECT_GE(check_other_threads(call, tracer), 3u) << "the other thread's t, mul and contiguous (and its copy)";
}

TEST(RecorderGpu, ACallCuptiRefusedHasNoGpuFiguresRatherThanZeros) {
  RefusedTracer tracer;
  Call call = record("transpose_reshape.pt", torch::randn({2, 8, 16}), tracer);
  EXPECT_EQ(call.gpu_error, "CUPTI enable activity kind: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(tracer.pops, 0) << "nothing was pushed, so nothing is popped";
  ASSERT_FALSE(call.events.empty());
  for (const OpEvent& e : call.events) EXPECT_EQ(e.gpu_ns, -1) << e.name;
}

// transpose_reshape.pt without gradients, warmed up, and its first recorded call: the one that
// records the tensors, to which later calls are matched.
struct FirstCall {
  torch::NoGradGuard no_grad;
  torch::jit::Module m = torch::jit::load(std::string(SAMPLES_DIR) + "/transpose_reshape.pt");
  std::vector<c10::IValue> inputs{torch::randn({2, 8, 16})};
  Recorder recorder;
  Call first;
  FirstCall() {
    m.eval();
    m.forward(inputs);
    recorder.start(Recorder::Mode::timed);
    m.forward(inputs);
    first = recorder.stop();
  }
};

// Calls after the first are recorded in Mode::figures: the same ops, times and GPU pushes,
// without the tensors, and checked against the first call's op sequence.
TEST(Recorder, FiguresModeRecordsTheSameOpsWithoutTheirTensors) {
  FirstCall f;
  auto& [no_grad, m, inputs, recorder, first] = f;
  ASSERT_FALSE(first.events.empty());
  EXPECT_TRUE(first.tensors_recorded);
  size_t tensors = 0;
  for (const OpEvent& e : first.events) tensors += e.inputs.size() + e.outputs.size();
  EXPECT_GT(tensors, first.events.size()) << "the first call records its ops' tensors";

  LoggingTracer tracer;
  GpuCollector gpu(tracer);
  recorder.start(Recorder::Mode::figures, {&gpu});
  m.forward(inputs);
  Call figures = recorder.stop_figures(first);
  EXPECT_TRUE(figures.figures_only);
  EXPECT_TRUE(figures.same_ops_as_first);
  EXPECT_EQ(figures.duration_ns.size(), first.events.size());
  EXPECT_EQ(figures.gpu_ns.size(), first.events.size());
  EXPECT_FALSE(tracer.pushed.empty()) << "top-level ops still push their GPU correlation ids";

  recorder.start(Recorder::Mode::figures);
  m.forward(inputs);
  Call whole = recorder.stop();  // a failing later call is shown like this
  EXPECT_FALSE(whole.tensors_recorded);
  ASSERT_EQ(whole.events.size(), first.events.size());
  for (size_t i = 0; i < whole.events.size(); ++i) {
    EXPECT_EQ(whole.events[i].name, first.events[i].name);
    EXPECT_EQ(whole.events[i].parent, first.events[i].parent);
    EXPECT_TRUE(whole.events[i].inputs.empty() && whole.events[i].outputs.empty());
  }
}

// stop() hands the raw events it has converted back to the kernel, 16384 at a time: a call of
// more events than that converts whole, and the next calls (which must not reuse the released
// array) record the same ops.
TEST(Recorder, ACallLargerThanTheReleaseStepConvertsWholeAndTheNextCallsToo) {
  torch::jit::Module m = torch::jit::load(std::string(SAMPLES_DIR) + "/op_loop.pt");
  m.eval();
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> inputs{torch::randn({2500, 8, 8})};  // 17 op events a row
  m.forward(inputs);
  Recorder recorder;
  std::vector<Call> calls;
  for (int i = 0; i < 2; ++i) {
    recorder.start(Recorder::Mode::timed);
    m.forward(inputs);
    calls.push_back(recorder.stop());
  }
  recorder.start(Recorder::Mode::figures);
  m.forward(inputs);
  Call figures = recorder.stop_figures(calls[0]);
  const Call& first = calls[0];
  ASSERT_GT(first.events.size(), 2u * 16384);
  EXPECT_TRUE(figures.same_ops_as_first);
  ASSERT_EQ(calls[1].events.size(), first.events.size());
  size_t named = 0;
  for (size_t i = 0; i < first.events.size(); ++i) {
    const OpEvent& a = first.events[i];
    const OpEvent& b = calls[1].events[i];
    ASSERT_EQ(a.id, static_cast<int64_t>(i));
    ASSERT_LT(a.parent, a.id);
    ASSERT_EQ(a.name, b.name) << "op " << i;
    ASSERT_EQ(a.parent, b.parent) << "op " << i;
    ASSERT_EQ(a.inputs.size(), b.inputs.size()) << "op " << i;
    ASSERT_GE(a.duration_ns, 0);
    named += !a.name.empty();
  }
  EXPECT_EQ(named, first.events.size()) << "no event reads a released (zeroed) raw event";
}

// A sampler that hands the recorder a set drain of one sampled counter (period 16).
class StubSampler : public Collector {
 public:
  bool active() const override { return true; }
  void start(size_t) override {}
  void stop() override {}
  void collect(CallRecords& out) override {
    out.sampling = true;
    out.drain = drain;
    out.periods = {16};
  }
  void notes(RunInfo&) const override {}
  SamplerDrain drain{{}, {0}, {0}, {0}, {}};
};

// A later call whose drain holds nothing (or only samples from between calls) keeps no counter
// values (the analysis reads zeros); one with a sample keeps its totals and a value per counted
// op; one whose samples the kernel lost keeps no values but its totals, which say so.
TEST(Recorder, ALaterCallKeepsSampledCountersOnlyWhereItsDrainHoldsSomething) {
  FirstCall f;
  auto& [no_grad, m, inputs, recorder, first] = f;
  size_t top = 0;  // counted ops: the main thread's top-level ops, and its copies
  for (const OpEvent& e : first.events) top += e.parent < 0;
  ASSERT_GT(top, 0u);

  StubSampler sampler;
  enum class Sample { none, in_the_call, before_it };
  auto later = [&](Sample sample) {
    const int64_t before = now_ns();
    recorder.start(Recorder::Mode::figures, {&sampler});
    m.forward(inputs);
    const int64_t in_the_call = now_ns();  // after the last op, before the call's end
    sampler.drain.samples.clear();
    const auto tid = static_cast<int32_t>(::syscall(SYS_gettid));
    if (sample != Sample::none)
      sampler.drain.samples.push_back({0, tid, sample == Sample::in_the_call ? in_the_call : before, 0});
    return recorder.stop_figures(first);
  };
  Call empty = later(Sample::none);
  EXPECT_TRUE(empty.took_no_sample);
  EXPECT_EQ(empty.counters.counters(), 0u);
  ASSERT_EQ(empty.sample_totals.size(), 1u);
  EXPECT_EQ(empty.sample_totals[0].samples, 0);

  Call one = later(Sample::in_the_call);
  EXPECT_FALSE(one.took_no_sample);
  EXPECT_GE(one.counters.counters(), top) << "a value per counted op";
  ASSERT_EQ(one.sample_totals.size(), 1u);
  EXPECT_EQ(one.sample_totals[0].samples, 1);

  Call outside = later(Sample::before_it);
  EXPECT_TRUE(outside.took_no_sample) << "a sample taken between calls is not the call's";
  EXPECT_EQ(outside.counters.counters(), 0u);

  sampler.drain.lost[0] = 3;
  Call lost = later(Sample::none);
  EXPECT_TRUE(lost.took_no_sample) << "nothing to attribute";
  ASSERT_EQ(lost.sample_totals.size(), 1u);
  EXPECT_EQ(lost.sample_totals[0].lost, 3) << "samples were taken and lost: the call says so";
  EXPECT_EQ(lost.sample_totals[0].samples, 0);
}

}  // namespace
}  // namespace layoutprof
