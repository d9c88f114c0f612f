// describe_model: what a Session's report knows of the TorchScript model a program runs.
#include "layoutprof/torchscript.h"

#include <torch/script.h>

#include "api/session_access.h"
#include "runner/model.h"

namespace layoutprof {

void describe_model(Session& session, const torch::jit::Module& model) {
  EagerSession& eager = SessionAccess::eager(session);
  const auto type = model.type()->name();
  const std::string name = type && !SessionAccess::named(session) ? type->name() : "";
  eager.describe_model(name, model.is_training() ? "train" : "eval");
  const std::vector<NamedTensor> parameters = named_tensors(model.named_parameters(true));
  eager.note_model_tensors(parameters, named_tensors(model.named_buffers(true)));
  eager.watch_parameters(parameters);
}

}  // namespace layoutprof
