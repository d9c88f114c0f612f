#include "runner/device.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include "support/errors.h"
#include "support/setting_error.h"
#include "counters/gpu.h"

namespace layoutprof {

namespace {

// Refuses a CUDA device that this LibTorch or this machine cannot give.
void check_cuda_available(const std::string& name) {
#ifndef LAYOUTPROF_TORCH_HAS_CUDA
  throw SettingError(Setting::device, " " + name + ": this LibTorch " + std::string(TORCH_VERSION) +
                                         " is built without CUDA (Debian's LibTorch is CPU-only); build layoutprof "
                                         "against a CUDA-enabled PyTorch (TORCH_PYTHON=/path/to/python scripts/setup.sh)");
#else
  // A CUDA LibTorch: at::hasCUDA() is false on a machine without a GPU from 2.x on (it asks
  // the runtime), so whether LibTorch has CUDA is known from the build, and whether there is
  // a device from the runtime, with its reason where the CUPTI build can ask.
  if (torch::cuda::device_count() == 0) {
    std::string why;
    create_gpu_tracer(-1, &why);
    if (why.rfind("no CUDA device: ", 0) == 0) why = why.substr(16);
    else why = "the CUDA runtime finds none";
    throw SettingError(Setting::device, " " + name + ": no CUDA device (" + why + "); this LibTorch " +
                                           std::string(TORCH_VERSION) + " has CUDA, this machine no usable GPU");
  }
#endif
}

}  // namespace

at::Device target_device(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name.rfind("cuda", 0) != 0)
    throw SettingError(Setting::device, " '" + name + "': expected cpu, cuda or cuda:N");
  check_cuda_available(name);
  try {
    at::Device device(name);
    if (device.has_index() && device.index() >= static_cast<int>(torch::cuda::device_count()))
      throw SettingError(Setting::device, " " + name + ": only " + std::to_string(torch::cuda::device_count()) +
                                             " CUDA device(s)");
    return device;
  } catch (const c10::Error& e) {
    throw SettingError(Setting::device, " '" + name + "': " + first_line(e.what_without_backtrace()));
  }
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace layoutprof
