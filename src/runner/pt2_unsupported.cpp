// load_pt2 for a LibTorch 1.x build: torch.export programs need the ops and the schema of 2.x.
#include <torch/version.h>

#include "pt2/archive.h"
#include "runner/model.h"
#include "runner/pt2_model.h"
#include "support/errors.h"

namespace layoutprof {

std::unique_ptr<Model> load_pt2(const std::string& path) {
  pt2::Archive archive(path);  // what holds no exported program (an AOTInductor package) is refused as such
  throw ModelLoadError("'" + path + "' is a torch.export program (.pt2), which needs layoutprof built against a "
                       "LibTorch 2.x (this one is " TORCH_VERSION "): TORCH_PYTHON=/path/to/python scripts/setup.sh");
}

}  // namespace layoutprof
