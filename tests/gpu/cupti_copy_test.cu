// The CUPTI tracer on a real GPU: a contiguous and a strided copy kernel, each under its own
// external correlation id, must both be seen, attributed, with plausible times (the strided
// one slower). Skips, with the reason, where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "layoutprof/gpu.h"

namespace {

__global__ void copy_contiguous(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// Reads the source transposed: what a layout copy of a transposed matrix does.
__global__ void copy_strided(const float* src, float* dst, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    int r = i / cols, c = i % cols;
    dst[i] = src[c * rows + r];
  }
}

TEST(Cupti, SeesAContiguousAndAStridedCopyKernel) {
  std::string why;
  auto tracer = layoutprof::create_gpu_tracer(&why);
  if (!tracer) GTEST_SKIP() << why;
  const int rows = 4096, cols = 4096, n = rows * cols;
  float *src = nullptr, *dst = nullptr;
  ASSERT_EQ(cudaMalloc(&src, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dst, n * sizeof(float)), cudaSuccess);
  copy_contiguous<<<(n + 255) / 256, 256>>>(src, dst, n);  // warm-up
  cudaDeviceSynchronize();

  tracer->start();
  tracer->push(1);
  copy_contiguous<<<(n + 255) / 256, 256>>>(src, dst, n);
  tracer->pop();
  tracer->push(2);
  copy_strided<<<(n + 255) / 256, 256>>>(src, dst, rows, cols);
  tracer->pop();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  layoutprof::GpuAttribution a = layoutprof::attribute_gpu_activity(tracer->stop());
  cudaFree(src);
  cudaFree(dst);

  ASSERT_EQ(a.by_external.count(1), 1u);
  ASSERT_EQ(a.by_external.count(2), 1u);
  const auto& contiguous = a.by_external[1];
  const auto& strided = a.by_external[2];
  EXPECT_NE(contiguous.kernels.at(0).find("copy_contiguous"), std::string::npos);
  EXPECT_NE(strided.kernels.at(0).find("copy_strided"), std::string::npos);
  EXPECT_GT(contiguous.gpu_ns, 1000);      // 128 MB moved: more than a microsecond
  EXPECT_LT(contiguous.gpu_ns, 100000000);  // and less than 100 ms
  EXPECT_GT(strided.gpu_ns, contiguous.gpu_ns) << "the strided copy should be slower";
  EXPECT_EQ(a.dropped, 0u);
  std::printf("contiguous copy %.3f ms, strided copy %.3f ms on %s\n", contiguous.gpu_ns / 1e6,
              strided.gpu_ns / 1e6, tracer->describe().c_str());
}

}  // namespace
