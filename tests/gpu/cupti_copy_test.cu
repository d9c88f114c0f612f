// The CUPTI tracer on a real GPU: a contiguous and a strided copy kernel, each under its own
// external correlation id, must both be seen, attributed, with plausible times (the strided
// one slower). A plain program (no GoogleTest, so that it links against any LibTorch ABI):
// exit 0 pass, 1 fail, 77 skipped with the reason where there is no GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

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

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

}  // namespace

int main() {
  std::string why;
  auto tracer = layoutprof::create_gpu_tracer(-1, &why);
  if (!tracer) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  const int rows = 4096, cols = 4096, n = rows * cols;
  float *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dst, n * sizeof(float)) != cudaSuccess) {
    std::printf("FAIL cudaMalloc\n");
    return 1;
  }
  copy_contiguous<<<(n + 255) / 256, 256>>>(src, dst, n);  // warm-up
  cudaDeviceSynchronize();

  tracer->start();
  tracer->push(1);
  copy_contiguous<<<(n + 255) / 256, 256>>>(src, dst, n);
  tracer->pop();
  tracer->push(2);
  copy_strided<<<(n + 255) / 256, 256>>>(src, dst, rows, cols);
  tracer->pop();
  expect(cudaDeviceSynchronize() == cudaSuccess, "kernels ran");
  layoutprof::GpuAttribution a = layoutprof::attribute_gpu_activity(tracer->stop());
  cudaFree(src);
  cudaFree(dst);

  expect(a.by_external.count(1) == 1 && a.by_external.count(2) == 1, "both kernels attributed to their ids");
  if (failures) return 1;
  const auto& contiguous = a.by_external[1];
  const auto& strided = a.by_external[2];
  expect(contiguous.kernels.at(0).find("copy_contiguous") != std::string::npos, "contiguous kernel named");
  expect(strided.kernels.at(0).find("copy_strided") != std::string::npos, "strided kernel named");
  expect(contiguous.gpu_ns > 1000 && contiguous.gpu_ns < 100000000, "contiguous copy of 64 MB takes 1 us..100 ms");
  expect(strided.gpu_ns > contiguous.gpu_ns, "the strided copy is slower");
  expect(a.dropped == 0, "no record dropped");
  std::printf("contiguous copy %.3f ms, strided copy %.3f ms on %s\n", contiguous.gpu_ns / 1e6,
              strided.gpu_ns / 1e6, tracer->describe().c_str());
  return failures ? 1 : 0;
}
