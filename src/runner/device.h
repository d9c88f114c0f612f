// The device a run's model and inputs live on (torch side).
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace layoutprof {

// "cpu", "cuda", "cuda:N"; throws UsageError for what this LibTorch or machine cannot run.
at::Device target_device(const std::string& name);

// Waits for the device's work: a call is over when its kernels are.
void synchronize(const at::Device& device);

}  // namespace layoutprof
