#include "runner/model.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/errors.h"
#include "pt2/archive.h"
#include "runner/pt2_model.h"
#include "runner/torchscript_model.h"

namespace layoutprof {

namespace {

struct ModelFormat {
  bool (*recognizes)(const std::string& path);
  std::unique_ptr<Model> (*load)(const std::string& path);
};

// The formats, tried in order, each recognised by its contents (not the file's name): a zip
// holding a torch.export program, then TorchScript, which takes any file: its loader says why
// a file that no format recognises is not a model.
const ModelFormat kFormats[] = {
    {pt2::is_pt2_archive, load_pt2},
    {[](const std::string&) { return true; }, load_torchscript},
};

}  // namespace

void load_op_library(const std::string& path) {
  // Global: the ops it registers stay for the process's life, as torch.ops.load_library keeps them.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))
    throw ModelLoadError("cannot load the op library '" + path + "': " + first_line(dlerror()));
}

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
