// The CUPTI tracer on a real GPU and the real libcupti. Each launch runs under its own
// external correlation id and must come back attributed to it, with plausible times:
//  - a contiguous and a strided copy kernel (the strided one slower);
//  - a kernel under two nested ids (the inner one gets it);
//  - a kernel launched through the driver API (cuLaunchKernel, as cuBLAS and Triton do);
//  - a device-to-device cudaMemcpyAsync;
//  - a second recorded call, which must hold only its own records.
// A plain program (no GoogleTest, so that it links against any LibTorch ABI): exit 0 pass,
// 1 fail, 77 skipped with the reason where there is no GPU.
#include <cuda.h>  // types of the driver API only; its entry point comes through the runtime
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "counters/gpu.h"

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

bool has_kernel(const layoutprof::GpuAttribution& a, uint64_t id, const char* name) {
  auto it = a.by_external.find(id);
  if (it == a.by_external.end() || it->second.kernels.empty()) return false;
  return it->second.kernels.front().find(name) != std::string::npos;
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

LaunchFn driver_launch() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess)
    return nullptr;
#else
  if (cudaGetDriverEntryPoint("cuLaunchKernel", &fn, cudaEnableDefault, &found) != cudaSuccess) return nullptr;
#endif
  return found == cudaDriverEntryPointSuccess ? reinterpret_cast<LaunchFn>(fn) : nullptr;
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
  const unsigned blocks = (n + 255) / 256;
  float *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dst, n * sizeof(float)) != cudaSuccess) {
    std::printf("FAIL cudaMalloc\n");
    return 1;
  }
  copy_contiguous<<<blocks, 256>>>(src, dst, n);  // warm-up
  cudaDeviceSynchronize();
  LaunchFn launch = driver_launch();
  cudaFunction_t function = nullptr;
  bool driver_ready = launch && cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(copy_contiguous)) == cudaSuccess;
  expect(driver_ready, "cuLaunchKernel and the kernel's CUfunction found");

  tracer->start();
  tracer->push(1);
  copy_contiguous<<<blocks, 256>>>(src, dst, n);
  tracer->pop();
  tracer->push(2);
  copy_strided<<<blocks, 256>>>(src, dst, rows, cols);
  tracer->pop();
  tracer->push(3);
  tracer->push(4);
  copy_contiguous<<<blocks, 256>>>(src, dst, n);
  tracer->pop();
  tracer->pop();
  if (driver_ready) {
    tracer->push(5);
    int count = n;
    void* args[] = {&src, &dst, &count};
    launch(reinterpret_cast<CUfunction>(function), blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    tracer->pop();
  }
  tracer->push(6);
  cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice);
  tracer->pop();
  expect(cudaDeviceSynchronize() == cudaSuccess, "kernels ran");
  layoutprof::GpuRecords records = tracer->stop();
  expect(records.error.empty(), "CUPTI traced the call" + (records.error.empty() ? "" : ": " + records.error));
  layoutprof::GpuAttribution a = layoutprof::attribute_gpu_activity(records);

  expect(has_kernel(a, 1, "copy_contiguous"), "contiguous copy kernel attributed to its id");
  expect(has_kernel(a, 2, "copy_strided"), "strided copy kernel attributed to its id");
  expect(has_kernel(a, 4, "copy_contiguous") && a.by_external.count(3) == 0, "nested ids: the inner one gets the kernel");
  if (driver_ready) expect(has_kernel(a, 5, "copy_contiguous"), "a cuLaunchKernel launch is attributed");
  expect(has_kernel(a, 6, "memcpy DtoD"), "a device-to-device memcpy is attributed");
  expect(a.unattributed == 0, "no record left unattributed (" + std::to_string(a.unattributed) + ")");
  expect(a.dropped == 0, "no record dropped");
  const int64_t contiguous = a.by_external[1].gpu_ns, strided = a.by_external[2].gpu_ns;
  expect(contiguous > 1000 && contiguous < 100000000, "contiguous copy of 64 MB takes 1 us..100 ms");
  expect(strided > contiguous, "the strided copy is slower");

  // A second recorded call holds its own records only.
  tracer->start();
  tracer->push(1);
  copy_strided<<<blocks, 256>>>(src, dst, rows, cols);
  tracer->pop();
  cudaDeviceSynchronize();
  layoutprof::GpuAttribution second = layoutprof::attribute_gpu_activity(tracer->stop());
  expect(second.by_external.size() == 1 && has_kernel(second, 1, "copy_strided"),
         "the second call holds only its own kernel");

  cudaFree(src);
  cudaFree(dst);
  std::printf("contiguous copy %.3f ms, strided copy %.3f ms, memcpy DtoD %.3f ms on %s\n", contiguous / 1e6,
              strided / 1e6, a.by_external[6].gpu_ns / 1e6, tracer->describe().c_str());
  return failures ? 1 : 0;
}
