// The backend pass: one extra, untimed call with oneDNN's execution log switched on, read op by
// op. The timed calls' collectors (counters/collector.h) hook top-level ops around timed calls;
// this pass needs every nested op's start and end during a call no figure is taken from, so it
// is its own RecordFunction callback, added for the pass's call and removed after it.
//
// How: stdout (fd 1) goes to an unlinked temporary file for the call (a file, not a pipe: oneDNN
// fflush()es each line, which would block once a pipe's 64 KiB sat unread); oneDNN prints each
// primitive's line on the thread that ran it, after it ran and before the aten op returns, so
// the bytes appended between two op boundaries are the primitives of the innermost op open then.
// At each op start and end the new bytes are read and charged to that op. While an op of another
// thread is open, bytes cannot be told apart (oneDNN's lines carry no thread id): they are kept
// unattributed, never guessed. The user's own bytes written meanwhile are given back to fd 1, in
// order, when the pass ends (so the user's output of the pass's call comes at its end).
#pragma once

#include <memory>
#include <string>

#include "core/backend_log.h"

namespace layoutprof {

// Why no pass can run in this process ("" when one can): the user's own ONEDNN_VERBOSE or
// DNNL_VERBOSE is set (their setting and their log are left alone), or this LibTorch was built
// without oneDNN.
std::string backend_pass_unavailable();

class BackendPass {
 public:
  // Starts the pass: stdout captured, oneDNN's log on, the callbacks added (`training`: the
  // autograd engine's backward functions too). Throws std::runtime_error, naming the step and
  // errno's text, when stdout cannot be captured (stdout is then as it was).
  explicit BackendPass(bool training);
  ~BackendPass();  // stop()s if not stopped (the log is dropped)
  BackendPass(const BackendPass&) = delete;
  BackendPass& operator=(const BackendPass&) = delete;

  // Ends it: oneDNN's log off (level 0: in oneDNN 3.x that also silences its own error
  // messages for the rest of the process, which the 0/1/2 API cannot restore), the callbacks
  // removed, stdout restored and the user's bytes written back. The log's primitives, each
  // charged to its op.
  BackendLog stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace layoutprof
