// The CUPTI tracer (src/counters/cupti_tracer.cpp) against tests/gpu/fake_cupti.cpp, which
// stands in for libcupti and libcudart where there is no GPU: buffer hand-out and return,
// external correlation, records arriving late and across many buffers, dropped records,
// repeated start/stop. The real library on a real GPU is tests/gpu/cupti_copy_test.cu.
#include <gtest/gtest.h>

#include <cupti.h>

#include <memory>
#include <string>

#include "fake_cupti.h"
#include "analysis/backend_conversions.h"
#include "counters/collectors.h"
#include "counters/gpu.h"

namespace layoutprof {
namespace {

class CuptiTracerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cupti::reset();
    std::string why;
    tracer_ = create_gpu_tracer(0, &why);
    ASSERT_NE(tracer_, nullptr) << why;
  }
  std::unique_ptr<GpuTracer> tracer_;
};

TEST_F(CuptiTracerTest, EachKernelGoesToTheInnermostOpThatLaunchedIt) {
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel("gemm", 100, 300);
  fake_cupti::launch_kernel("gemm", 400, 500);
  tracer_->pop();
  tracer_->push(2);
  tracer_->push(3);  // a copy inside op 2
  fake_cupti::launch_kernel("elementwise_copy", 600, 700);
  tracer_->pop();
  fake_cupti::launch_memset(800, 850);
  tracer_->pop();
  fake_cupti::launch_kernel("outside_any_op", 900, 960);
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());

  EXPECT_EQ(a.by_external[1].gpu_ns, 300);
  EXPECT_EQ(a.by_external[1].activities, 2);
  EXPECT_EQ(a.by_external[1].kernels, (std::vector<std::string>{"gemm"}));
  EXPECT_EQ(a.by_external[3].gpu_ns, 100);
  EXPECT_EQ(a.by_external[3].kernels, (std::vector<std::string>{"elementwise_copy"}));
  EXPECT_EQ(a.by_external[2].gpu_ns, 50);
  EXPECT_EQ(a.by_external[2].kernels, (std::vector<std::string>{"memset"}));
  EXPECT_EQ(a.unattributed, 1);
  EXPECT_EQ(a.unattributed_ns, 60);
  EXPECT_EQ(a.dropped, 0u);
  EXPECT_EQ(fake_cupti::unbalanced_pops(), 0);
  EXPECT_EQ(fake_cupti::buffers_held(), 0u) << "stop() flushes every buffer back";
  EXPECT_EQ(fake_cupti::violations(), 0);
}

// The GPU's layout conversions end to end without a GPU: cuDNN 9's transposes and an NHWC
// convolution kernel launched inside one op, attributed by the tracer, and read by the
// kernel-name classifier (analysis/kernel_names.h) as the report reads the op's kernels.
TEST_F(CuptiTracerTest, CudnnsConversionKernelsAreToldApartInTheOpThatLaunchedThem) {
  const std::string to_nhwc =
      "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, "
      "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __half const*, __half*)";
  const std::string conv = "volta_s884cudnn_fp16_128x128_ldg8_relu_exp_interior_nhwc_tn_v1";
  const std::string to_nchw =
      "void cudnn::engines_precompiled::nhwcToNchwKernel<__half, __half, float, true, false, "
      "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __half const*, __half*)";
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel(to_nhwc, 0, 10);
  fake_cupti::launch_kernel(conv, 10, 60);
  fake_cupti::launch_kernel(to_nchw, 60, 70);
  tracer_->pop();
  tracer_->push(2);
  fake_cupti::launch_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)", 70, 75);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  OpList ops(2);
  ops[0].id = 0;
  ops[0].name = "aten::conv2d";
  ops[1].id = 1;
  ops[1].name = "aten::fill_";
  for (int i = 0; i < 2; ++i) {
    ops[i].gpu_ns = a.by_external[i + 1].gpu_ns;
    for (const std::string& k : a.by_external[i + 1].kernels) ops[i].kernels.push_back(Str(k));
  }
  const GpuLayoutKernels g = gpu_layout_kernels(ops);
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].op, 0);
  EXPECT_EQ(g.ops[0].conversions, (std::vector<std::string>{"nchwToNhwcKernel", "nhwcToNchwKernel"}));
  EXPECT_EQ(g.ops[0].gpu_ns, 70);
  EXPECT_EQ(g.nhwc, 1);
  EXPECT_TRUE(g.unknown.empty());
}

TEST_F(CuptiTracerTest, KernelsLaunchedThroughTheDriverApiAreAttributedToo) {
  // cuBLAS, cuDNN and Triton launch with cuLaunchKernel rather than cudaLaunchKernel.
  tracer_->start();
  tracer_->push(5);
  fake_cupti::launch_kernel("triton_poi_fused_0", 10, 40, fake_cupti::Api::driver);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(a.by_external[5].gpu_ns, 30);
  EXPECT_EQ(a.unattributed, 0);
}

TEST_F(CuptiTracerTest, CollectsWhatExternalCorrelationNeedsAndStopsAfterwards) {
  tracer_->start();
  for (int kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                   CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
    EXPECT_TRUE(fake_cupti::enabled(kind)) << "activity kind " << kind;
  tracer_->stop();
  for (int kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
    EXPECT_FALSE(fake_cupti::enabled(kind)) << "activity kind " << kind;
}

TEST_F(CuptiTracerTest, ManyBuffersOfLateRecordsAllFindTheirOps) {
  constexpr int kOps = 1000, kPerOp = 100;  // tens of MB of records: several 8 MB buffers
  tracer_->start();
  uint64_t t = 0;
  for (int op = 1; op <= kOps; ++op) {
    tracer_->push(op);
    for (int k = 0; k < kPerOp; ++k, t += 10) fake_cupti::launch_kernel("k" + std::to_string(k % 3), t, t + op);
    tracer_->pop();
  }
  GpuRecords records = tracer_->stop();
  ASSERT_GE(fake_cupti::buffers_requested(), 3u) << "the test must span several buffers";
  GpuAttribution a = attribute_gpu_activity(records);
  EXPECT_EQ(a.dropped, 0u);
  EXPECT_EQ(a.unattributed, 0);
  ASSERT_EQ(a.by_external.size(), static_cast<size_t>(kOps));
  for (int op = 1; op <= kOps; ++op) {
    EXPECT_EQ(a.by_external[op].activities, kPerOp) << op;
    EXPECT_EQ(a.by_external[op].gpu_ns, int64_t{kPerOp} * op) << op;
  }
  EXPECT_EQ(a.by_external[1].kernels, (std::vector<std::string>{"k0", "k1", "k2"}));
}

TEST_F(CuptiTracerTest, WhenThePoolRunsOutRecordsAreDroppedCountedAndTheNextCallIsWhole) {
  // 16 x 8 MB of buffers: a million launches with their API and correlation records overflow it.
  tracer_->start();
  tracer_->push(1);
  for (int k = 0; k < 1000000; ++k) fake_cupti::launch_kernel("flood", 2 * k, 2 * k + 1);
  tracer_->pop();
  GpuRecords flooded = tracer_->stop();
  EXPECT_GT(flooded.dropped, 0u);
  EXPECT_EQ(flooded.dropped, fake_cupti::records_dropped());
  EXPECT_GT(flooded.activities.size(), 100000u) << "the pool was used before it ran out";
  EXPECT_EQ(fake_cupti::buffers_held(), 0u);

  // Buffers are back in the pool: the next recorded call loses nothing.
  const uint64_t dropped_before = fake_cupti::records_dropped();
  tracer_->start();
  tracer_->push(2);
  for (int k = 0; k < 1000; ++k) fake_cupti::launch_kernel("after", k, k + 3);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(a.dropped, 0u);
  EXPECT_EQ(fake_cupti::records_dropped(), dropped_before);
  EXPECT_EQ(a.by_external[2].activities, 1000);
  EXPECT_EQ(a.by_external[2].gpu_ns, 3000);
  EXPECT_EQ(a.unattributed, 0);
  EXPECT_EQ(fake_cupti::violations(), 0);
}

TEST_F(CuptiTracerTest, EachStopReturnsOnlyItsOwnCall) {
  for (int call = 0; call < 3; ++call) {
    tracer_->start();
    tracer_->push(10 + call);
    fake_cupti::launch_kernel("k", 0, 5 + call);
    tracer_->pop();
    GpuAttribution a = attribute_gpu_activity(tracer_->stop());
    ASSERT_EQ(a.by_external.size(), 1u) << "call " << call;
    EXPECT_EQ(a.by_external.begin()->first, static_cast<uint64_t>(10 + call));
    EXPECT_EQ(a.by_external.begin()->second.gpu_ns, 5 + call);
  }
}

TEST_F(CuptiTracerTest, ABufferThatComesBackLateIsNeverChargedToTheNextCallsOps) {
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel("earlier_call", 0, 100);
  tracer_->pop();
  fake_cupti::hold_back_next_flush();
  GpuAttribution first = attribute_gpu_activity(tracer_->stop());
  EXPECT_TRUE(first.by_external.empty()) << "its correlation record is still with CUPTI";

  tracer_->start();
  tracer_->push(1);  // the same op index in the next call
  fake_cupti::launch_kernel("this_call", 0, 10);
  tracer_->pop();
  GpuAttribution second = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(second.by_external[1].kernels, (std::vector<std::string>{"this_call"}));
  EXPECT_EQ(second.by_external[1].gpu_ns, 10);
  EXPECT_EQ(second.unattributed, 0) << "the earlier call's kernel is not this call's work at all";
  EXPECT_EQ(fake_cupti::buffers_held(), 0u);
  EXPECT_EQ(fake_cupti::violations(), 0) << "the held buffer was neither handed out again nor read early";
}

TEST_F(CuptiTracerTest, IdsOfOtherToolsAreIgnored) {
  tracer_->start();
  tracer_->push(4);
  // PyTorch's profiler pushes CUSTOM0 for its ops and CUSTOM1 for user annotations.
  for (auto kind : {CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1})
    cuptiActivityPushExternalCorrelationId(kind, 99);
  fake_cupti::launch_kernel("k", 0, 20);
  uint64_t id = 0;
  for (auto kind : {CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1})
    cuptiActivityPopExternalCorrelationId(kind, &id);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  ASSERT_EQ(a.by_external.size(), 1u);
  EXPECT_EQ(a.by_external[4].gpu_ns, 20);
}

TEST_F(CuptiTracerTest, ItsIdsAreOfItsOwnKindNotPyTorchProfilers) {
  tracer_->start();
  tracer_->push(1);
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2), 1u);
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), 0u);
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1), 0u);
  tracer_->pop();
  tracer_->stop();
}

// Another CUPTI client with buffer callbacks of its own, as PyTorch's profiler registers at
// each start: what it gets back, and how many buffers it handed out.
struct OtherClient {
  static inline std::vector<std::vector<uint8_t>> storage;
  static inline size_t records = 0, handed_out = 0, returned = 0;
  static void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
    storage.emplace_back(1 << 16);
    *buffer = storage.back().data();
    *size = storage.back().size();
    *max_records = 0;
    ++handed_out;
  }
  static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    ++returned;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++records;
  }
  static void start() {
    storage.reserve(64);
    cuptiActivityRegisterCallbacks(&request, &complete);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
};

TEST_F(CuptiTracerTest, AnotherClientKeepsItsBuffersAndTheNextCallTakesTheCallbacksBack) {
  tracer_->start();
  tracer_->stop();
  OtherClient::start();  // e.g. a torch.profiler session after the first recorded call
  fake_cupti::launch_kernel("profiled", 0, 7);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);  // it stopped without a flush
  EXPECT_EQ(OtherClient::returned, 0u);

  tracer_->start();
  EXPECT_EQ(OtherClient::returned, OtherClient::handed_out) << "its buffer went back to it, not to layoutprof";
  EXPECT_EQ(OtherClient::records, 1u);
  tracer_->push(1);
  fake_cupti::launch_kernel("recorded", 0, 5);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(a.by_external[1].kernels, (std::vector<std::string>{"recorded"})) << "the callbacks are layoutprof's again";
  EXPECT_EQ(a.by_external[1].gpu_ns, 5);
  EXPECT_EQ(fake_cupti::violations(), 0);
}

TEST_F(CuptiTracerTest, AGraphReplaysNodesGoToTheOpThatLaunchedIt) {
  tracer_->start();
  tracer_->push(3);  // the replay's scope
  fake_cupti::launch_graph(5, 2, 1000);
  tracer_->pop();
  GpuRecords r = tracer_->stop();
  EXPECT_EQ(r.graph_uncorrelated, 0);
  GpuAttribution a = attribute_gpu_activity(r);
  EXPECT_EQ(a.by_external[3].gpu_ns, 2000);
  EXPECT_EQ(a.by_external[3].kernels,
            (std::vector<std::string>{"graph_kernel [graph 5 node 1]", "graph_kernel [graph 5 node 2]"}));
  EXPECT_EQ(a.unattributed, 0);
}

TEST_F(CuptiTracerTest, GraphKernelsCarryingNoGraphLaunchsIdAreLeftUnattributed) {
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel("before", 0, 10);  // the id the broken graph kernels carry
  tracer_->pop();
  tracer_->push(2);
  fake_cupti::launch_graph(1, 3, 1000, /*correlated=*/false);
  tracer_->pop();
  GpuRecords r = tracer_->stop();
  EXPECT_EQ(r.graph_uncorrelated, 3);
  GpuAttribution a = attribute_gpu_activity(r);
  EXPECT_EQ(a.by_external[1].gpu_ns, 10) << "not charged the graph's kernels";
  EXPECT_EQ(a.by_external.count(2), 0u);
  EXPECT_EQ(a.unattributed, 3);
  EXPECT_EQ(a.unattributed_ns, 3000);
}

TEST_F(CuptiTracerTest, APauseEndsTracingAtOnceKeepsTheCallSoFarAndLeavesLaterCallsUntraced) {
  GpuCollector gpu(*tracer_);
  gpu.start(0);
  gpu.op_start(0);
  fake_cupti::launch_kernel("before_pause", 0, 4);
  gpu.op_end();
  gpu.pause("torch.profiler ran");
  EXPECT_FALSE(fake_cupti::enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) << "the Activity API left to the other client";
  EXPECT_EQ(fake_cupti::buffers_held(), 0u);
  gpu.op_start(1);
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2), 0u);
  gpu.op_end();
  gpu.stop();
  CallRecords first;
  gpu.collect(first);
  EXPECT_TRUE(first.gpu_records.traced);
  EXPECT_EQ(first.gpu_records.error, "part of a call: torch.profiler ran");
  EXPECT_EQ(attribute_gpu_activity(first.gpu_records).by_external[1].gpu_ns, 4);

  gpu.start(0);  // paused: CUPTI untouched
  EXPECT_FALSE(fake_cupti::enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  gpu.stop();
  CallRecords second;
  gpu.collect(second);
  EXPECT_FALSE(second.gpu_records.traced);
  EXPECT_EQ(second.gpu_records.error, "torch.profiler ran");

  gpu.resume();
  gpu.start(0);
  EXPECT_TRUE(fake_cupti::enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  gpu.stop();
  CallRecords third;
  gpu.collect(third);
  EXPECT_TRUE(third.gpu_records.traced);
  EXPECT_TRUE(third.gpu_records.error.empty());
  EXPECT_EQ(fake_cupti::unbalanced_pops(), 0);
}

TEST_F(CuptiTracerTest, OpsLeftOpenByAFailedCallArePoppedAtStop) {
  tracer_->start();
  tracer_->push(1);
  tracer_->push(2);  // the model raised: no end callbacks, no pops
  fake_cupti::launch_kernel("k", 0, 5);
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(a.by_external[2].gpu_ns, 5);
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2), 0u);
  EXPECT_EQ(fake_cupti::unbalanced_pops(), 0);
}

TEST_F(CuptiTracerTest, ACuptiFailureLeavesTheCallUntracedAndSaysWhy) {
  fake_cupti::fail_enable(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  tracer_->start();  // does not throw
  tracer_->push(1);
  fake_cupti::launch_kernel("k", 0, 5);
  tracer_->pop();
  GpuRecords r = tracer_->stop();
  EXPECT_FALSE(r.traced);
  EXPECT_NE(r.error.find("CUPTI enable activity kind"), std::string::npos) << r.error;
  EXPECT_TRUE(r.activities.empty());
  EXPECT_EQ(fake_cupti::pushed(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2), 0u);
  EXPECT_EQ(fake_cupti::unbalanced_pops(), 0);
  for (int kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME})
    EXPECT_FALSE(fake_cupti::enabled(kind));

  fake_cupti::fail_enable(CUPTI_SUCCESS);  // and the next call is traced
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel("k", 0, 5);
  tracer_->pop();
  GpuRecords ok = tracer_->stop();
  EXPECT_TRUE(ok.traced);
  EXPECT_TRUE(ok.error.empty()) << ok.error;
  EXPECT_EQ(attribute_gpu_activity(ok).by_external[1].gpu_ns, 5);
}

TEST_F(CuptiTracerTest, KernelNamesAreDemangled) {
  tracer_->start();
  tracer_->push(1);
  fake_cupti::launch_kernel("_Z12copy_stridedPKfPfii", 0, 1);
  fake_cupti::launch_kernel("not_mangled_kernel", 1, 2);
  tracer_->pop();
  GpuAttribution a = attribute_gpu_activity(tracer_->stop());
  EXPECT_EQ(a.by_external[1].kernels,
            (std::vector<std::string>{"copy_strided(float const*, float*, int, int)", "not_mangled_kernel"}));
}

TEST_F(CuptiTracerTest, DescribesTheGpuDriverAndRuntime) {
  EXPECT_EQ(tracer_->describe(), "Fake GPU (tests) (cuda:0), driver CUDA 13.0, runtime CUDA 13.0, CUPTI API " +
                                     std::to_string(CUPTI_API_VERSION));
}

TEST(CuptiTracer, NoDeviceMeansNoTracerAndSaysWhy) {
  fake_cupti::reset();
  fake_cupti::set_device_count(0);
  std::string why;
  EXPECT_EQ(create_gpu_tracer(0, &why), nullptr);
  EXPECT_EQ(why, "no CUDA device: no CUDA-capable device is detected");
  fake_cupti::set_device_count(1);
  EXPECT_EQ(create_gpu_tracer(3, &why), nullptr);
  EXPECT_EQ(why, "no CUDA device 3 (1 found)");
  fake_cupti::reset();
}

}  // namespace
}  // namespace layoutprof
