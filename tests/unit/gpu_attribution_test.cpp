#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "counters/gpu.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

GpuActivity kernel(const std::string& name, int64_t start, int64_t end, uint32_t correlation) {
  GpuActivity a;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation = correlation;
  return a;
}

TEST(GpuAttribution, JoinsKernelsToOpsThroughCorrelationIds) {
  GpuRecords r;
  r.activities = {kernel("gemm", 100, 300, 7), kernel("elementwise_copy", 400, 450, 9),
                  kernel("gemm", 500, 600, 7)};
  r.correlations = {{7, 1}, {9, 2}};
  GpuAttribution a = attribute_gpu_activity(r);
  EXPECT_EQ(a.by_external[1].gpu_ns, 300);
  EXPECT_EQ(a.by_external[1].activities, 2);
  EXPECT_EQ(a.by_external[1].kernels, (std::vector<std::string>{"gemm"}));
  EXPECT_EQ(a.by_external[2].gpu_ns, 50);
  EXPECT_EQ(a.unattributed, 0);
}

TEST(GpuAttribution, RecordsLateOrOutOfOrderStillFindTheirOp) {
  GpuRecords r;
  // Buffers complete in any order: the kernels come before their correlation records, the
  // second op's before the first's.
  r.activities = {kernel("b", 900, 950, 12), kernel("a2", 300, 400, 11), kernel("a1", 100, 200, 11)};
  r.correlations = {{12, 5}, {11, 4}};
  GpuAttribution a = attribute_gpu_activity(r);
  EXPECT_EQ(a.by_external[4].gpu_ns, 200);
  EXPECT_EQ(a.by_external[4].kernels, (std::vector<std::string>{"a1", "a2"})) << "launch order";
  EXPECT_EQ(a.by_external[5].gpu_ns, 50);
}

TEST(GpuAttribution, DroppedAndUnmatchedRecordsAreCountedNotLost) {
  GpuRecords r;
  r.activities = {kernel("orphan", 0, 70, 99), kernel("a", 100, 200, 1)};
  r.correlations = {{1, 3}};
  r.dropped = 4;
  GpuAttribution a = attribute_gpu_activity(r);
  EXPECT_EQ(a.unattributed, 1);
  EXPECT_EQ(a.unattributed_ns, 70);
  EXPECT_EQ(a.dropped, 4u);
  EXPECT_EQ(a.by_external.size(), 1u);
}

TEST(GpuReport, CopyKernelTimeReachesCopiesModulesAndSummary) {
  Call call = testing::transpose_reshape_call();
  for (OpEvent& e : call.events) e.gpu_ns = 0;
  call.events[1].gpu_ns = 1000;  // reshape's own kernels
  call.events[3].gpu_ns = 4000;  // the copy_ kernel
  call.events[3].kernels = {"elementwise_kernel"};
  call.events[1].gpu_launches = 2;
  call.events[3].gpu_launches = 1;
  call.gpu_dropped = 2;
  Trace t = testing::trace_of({call});
  t.run.gpu = "Test GPU";
  Report r = analyze(t);
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].gpu_ns, 4000);
  EXPECT_TRUE(r.summary.gpu.traced);
  EXPECT_EQ(r.summary.gpu.gpu_ns, 5000);
  EXPECT_EQ(r.summary.gpu.copy_gpu_ns, 4000);
  EXPECT_EQ(r.summary.gpu.dropped, 2u);
  EXPECT_EQ(r.summary.gpu.kernels, 3) << "launches, not distinct names";
  // Per op: the copy's kernel time at the copy and at every op around it.
  EXPECT_EQ(r.ops[0].copy_gpu_ns, 0) << "transpose";
  EXPECT_EQ(r.ops[1].copy_gpu_ns, 4000) << "reshape";
  EXPECT_EQ(r.ops[2].copy_gpu_ns, 4000) << "clone";
  EXPECT_EQ(r.ops[3].copy_gpu_ns, 4000) << "copy_";
  EXPECT_EQ(r.ops[4].copy_gpu_ns, 0) << "_unsafe_view";
  EXPECT_EQ(op_list_json(report_from_json(report_to_json(r)))[1]["copy_gpu_ns"], 4000);
  EXPECT_EQ(r.modules[0].gpu_ns, 5000);
  EXPECT_EQ(r.modules[0].copy_gpu_ns, 4000);
  std::ostringstream text;
  write_text_report(text, r, TextOptions{});
  EXPECT_NE(text.str().find("copy-kernel ms"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\n  on the GPU, layout-copy kernels took "), std::string::npos) << text.str();
  std::ostringstream verbose;
  TextOptions all;
  all.verbose = true;
  write_text_report(verbose, r, all);
  EXPECT_NE(verbose.str().find("gpu       Test GPU"), std::string::npos) << "the verbose header names the GPU";
  EXPECT_EQ(report_to_json(report_from_json(report_to_json(r))), report_to_json(r));
}

TEST(GpuReport, CpuRunsSayNoGpuWasTraced) {
  Report r = analyze(testing::trace_of({testing::transpose_reshape_call()}));
  EXPECT_FALSE(r.summary.gpu.traced);
  EXPECT_TRUE(op_list_json(report_from_json(report_to_json(r)))[0]["gpu_ns"].is_null());
  EXPECT_TRUE(op_list_json(report_from_json(report_to_json(r)))[0]["copy_gpu_ns"].is_null());
  EXPECT_TRUE(op_list_json(report_from_json(report_to_json(r)))[0]["gpu_launches"].is_null());
}

}  // namespace
}  // namespace layoutprof
