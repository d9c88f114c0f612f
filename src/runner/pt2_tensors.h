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
// The example inputs (torch.save's (args, kwargs)) as the graph's user inputs named `names`
// take them: the positional ones, then the keyword ones by name. None where the entry is "",
// or where a keyword input the graph takes is not among them.
std::vector<c10::IValue> load_sample_inputs(const pt2::Archive& archive, const std::string& entry,
                                            const std::vector<std::string>& names);

}  // namespace layoutprof
