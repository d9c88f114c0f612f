// A TorchScript model a Session records: what the report knows of it beyond its ops.
#pragma once

#include <torch/script.h>

#include "layoutprof/session.h"

namespace layoutprof {

// The report calls the recorded code by `model`'s class (unless SessionOptions::name was set),
// gives its mode (train or eval, as the program set it), lists its parameters and buffers that
// are not dense or alias one another (the hazards), and with SessionOptions::autograd watches
// its parameters' gradients in the first recorded step (the gradient verdicts that predict
// DDP's "Grad strides do not match bucket view strides"). Call it before the first recorded
// step, after model.train() or model.eval().
LAYOUTPROF_API void describe_model(Session& session, const torch::jit::Module& model);

}  // namespace layoutprof
