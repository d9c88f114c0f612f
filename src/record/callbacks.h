// The RecordFunction callbacks, added and removed. Torch-free interface; callbacks.cpp holds
// the LibTorch code.
#pragma once

#include <cstdint>

namespace layoutprof {

struct RecordingState;

// Adds the global callbacks for `rec`'s mode (and training setting); returns their handle.
uint64_t add_callbacks(const RecordingState& rec);
void remove_callbacks(uint64_t handle);
// The calling thread's ops are not recorded while `paused` (torch.compile compiling a frame on
// it: its fake-tensor ops are the compiler's, not the model's). Ops that began before the pause
// end as usual; those inside it are left out whole.
void pause_thread(bool paused);

}  // namespace layoutprof
