// compare-formats' variants: a model's parameters and buffers laid out in one memory format,
// as Python's model.to(memory_format=...) lays them out (torch side).
#pragma once

#include <string>

#include "core/trace.h"

namespace layoutprof {

class Model;

// ProfileConfig::convert_to ("channels_last" or "contiguous") over every parameter and buffer
// of the model and its submodules, in place; `done` counts what there was and what changed.
// Throws c10::Error when a tensor cannot take the format.
void convert_model(Model& model, const std::string& to, Conversion& done);

}  // namespace layoutprof
