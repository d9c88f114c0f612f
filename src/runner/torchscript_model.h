// The TorchScript implementation of Model (torch::jit::load), for load_model().
#pragma once

#include <memory>
#include <string>

namespace layoutprof {

class Model;

// Throws ModelLoadError with what is wrong: a file that is no TorchScript archive, one saved by
// a newer PyTorch than this LibTorch reads, one without forward().
std::unique_ptr<Model> load_torchscript(const std::string& path);

}  // namespace layoutprof
