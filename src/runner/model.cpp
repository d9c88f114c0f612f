#include "runner/model.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/errors.h"
#include "pt2/archive.h"
#include "record/tensor_info.h"
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

std::vector<ModelTensor> describe_model_tensors(const std::vector<NamedTensor>& parameters,
                                                const std::vector<NamedTensor>& buffers) {
  std::vector<ModelTensor> out;
  for (const auto* list : {&parameters, &buffers})
    for (const NamedTensor& n : *list)
      if (n.tensor.defined() && n.tensor.layout() == at::kStrided) {
        ModelTensor& m = out.emplace_back();
        m.name = n.name;
        m.buffer = list == &buffers;
        m.tensor = describe_tensor(n.tensor, 0);
      }
  return out;
}

std::vector<TensorInfo> describe_returned(const c10::IValue& value) {
  std::vector<TensorInfo> out;
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (t.defined() && t.layout() == at::kStrided) out.push_back(describe_tensor(t, 0));
  } else if (value.isTuple()) {
    for (const c10::IValue& v : value.toTupleRef().elements()) {
      std::vector<TensorInfo> more = describe_returned(v);
      out.insert(out.end(), more.begin(), more.end());
    }
  } else if (value.isList()) {
    for (const c10::IValue& v : value.toListRef()) {
      std::vector<TensorInfo> more = describe_returned(v);
      out.insert(out.end(), more.begin(), more.end());
    }
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) {
      std::vector<TensorInfo> more = describe_returned(item.value());
      out.insert(out.end(), more.begin(), more.end());
    }
  }
  return out;
}

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
