// The torch.export implementation of Model (.pt2 archives), for load_model(): the program read
// by the pt2 layer, its weights streamed from the archive into tensors, run by Pt2Executor.
#pragma once

#include <memory>
#include <string>

namespace layoutprof {

class Model;

// Throws ModelLoadError (one line) for an archive it cannot read or a program it cannot run;
// with a LibTorch 1.x, for any .pt2 (torch.export needs 2.x).
std::unique_ptr<Model> load_pt2(const std::string& path);

}  // namespace layoutprof
