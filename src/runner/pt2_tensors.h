// The tensors a .pt2 archive stores: weights and constants, streamed from their entries
// straight into their storages (no second copy of the archive in memory; tied weights share
// one storage as they share one entry), and the example inputs it was exported with.
#pragma once

#include <ATen/core/ivalue.h>

#include <map>
#include <string>
#include <vector>

#include "pt2/program.h"

namespace layoutprof {

namespace pt2 {
class Archive;
}

// By fully qualified name. Throws ModelLoadError naming the tensor it cannot make.
std::map<std::string, at::Tensor> load_stored_tensors(const pt2::Archive& archive,
                                                      const std::map<std::string, pt2::StoredTensor>& stored);
// The positional example inputs (torch.save's (args, kwargs)); none where the entry is "".
std::vector<c10::IValue> load_sample_inputs(const pt2::Archive& archive, const std::string& entry);

}  // namespace layoutprof
