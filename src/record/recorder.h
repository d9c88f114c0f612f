// The RecordFunction observer. Torch-free interface; recorder.cpp holds the LibTorch code.
#pragma once

#include <memory>

#include "layoutprof/trace.h"

namespace layoutprof {

// Records every ATen op (FUNCTION scope, nested ones included) on every thread between
// start() and stop(). One recorder may be active at a time.
class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void start();
  // Removes the observer and returns the recorded events in execution order (ids assigned,
  // parents resolved, times relative to start()). wall_ns is left for the caller.
  Call stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace layoutprof
