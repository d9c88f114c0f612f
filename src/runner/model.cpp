#include "runner/model.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/errors.h"
#include "runner/torchscript_model.h"

namespace layoutprof {

namespace {

struct ModelFormat {
  bool (*recognizes)(const std::string& path);
  std::unique_ptr<Model> (*load)(const std::string& path);
};

// The formats, tried in order. TorchScript is last and takes any file: its loader says why a
// file that no format recognises is not a model.
const ModelFormat kFormats[] = {
    {[](const std::string&) { return true; }, load_torchscript},
};

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw ModelLoadError("cannot open model '" + path + "': " + std::strerror(errno));
  }
  for (const ModelFormat& format : kFormats)
    if (format.recognizes(path)) return format.load(path);
  throw ModelLoadError("'" + path + "' is no model file layoutprof reads");
}

}  // namespace layoutprof
