// The RecordFunction callbacks, added and removed. Torch-free interface; callbacks.cpp holds
// the LibTorch code.
#pragma once

#include <cstdint>

namespace layoutprof {

struct RecordingState;

// Adds the global callbacks for `rec`'s mode (and training setting); returns their handle.
uint64_t add_callbacks(const RecordingState& rec);
void remove_callbacks(uint64_t handle);

}  // namespace layoutprof
