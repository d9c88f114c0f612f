// layoutprof::Session: records the ops a LibTorch program runs, in its own process, with the
// recorder, counters, analysis and reports of the `layoutprof` command: every op's layouts, the
// layout copies and their causes (the line where a layout was born, and the fix there), split
// points, per-module counters. Ops of a TorchScript module the program loaded carry their
// module path and source line, as the command gives them; other code names its rows with
// layoutprof::Scope (scope.h).
//
//   layoutprof::SessionOptions options;
//   options.warmup = 2;
//   options.json = "report.json";
//   layoutprof::Session session(options);   // step 0 begins
//   for (int i = 0; i < 5; ++i) {
//     model.forward(inputs);
//     session.step();                        // step i ends, step i + 1 begins
//   }
//   layoutprof::SessionReport report = session.stop();   // report.json written
//
// One session records at a time in a process. Errors are std::runtime_error, one line,
// starting "layoutprof: "; misuse (step() after stop()) is std::logic_error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layoutprof/report.h"

namespace layoutprof {

struct SessionOptions {
  // What the report calls the recorded code (run.model); "": the class describe_model() names,
  // else "program".
  std::string name;
  int warmup = 0;                // the first steps, run unrecorded
  int steps = 0;                 // steps recorded after them; 0: every one until stop()
  // Perf events sampled over the recorded steps on every thread of the process, per op and
  // module, as the command samples them: `events` empty, its defaults (task-clock and the DTLB
  // and cache events the CPU has; task-clock every 20 ms, a tenth of the command's rate, since
  // the program's own calls pay for each sample); otherwise libpfm4 names
  // ("task-clock:period=2000000": the command's rate). Sampled figures are means over the
  // steps. What cannot open is listed in the report with the reason. counters = false: none.
  bool counters = true;
  std::vector<std::string> events;
  // GPU time per op through CUPTI, where layoutprof was built with it and the process has a CUDA
  // device (the report says which, and why not). false: not traced.
  bool gpu = true;
  // The steps are training steps: the backward pass's ops are recorded and charged to their
  // forward ops, and the first recorded step gives every watched parameter's gradient verdict
  // (describe_model in torchscript.h says which parameters).
  bool autograd = false;
  int64_t max_ops = 0;  // op events recorded per step and thread; 0: what memory holds
  // Birthplaces made on purpose ("model.py:24", as --accept takes them): listed, not counted.
  std::vector<std::string> accept;
  // Files the report is written to when stop() returns ("" none, "-" stdout). A session never
  // stopped writes them all the same, with status "interrupted", as it is destroyed or as the
  // program exits (std::exit, returning from main).
  std::string json, text, html;
};

class LAYOUTPROF_API Session {
 public:
  // Begins step 0. Throws std::runtime_error when another session is recording in this
  // process (stop it first), or for options it cannot take (an event libpfm4 does not know is
  // not an error: the report says why it was not measured).
  explicit Session(SessionOptions options = {});
  // A session not stopped: its reports are written (status "interrupted"), errors ignored.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The step under way ends; the next begins (recorded when it is one of options.steps after
  // the warm-up ones).
  void step();
  // The step under way failed with `error` (what the program caught): it is the report's last,
  // shown up to the op that raised, and the run's status is "failed". Steps after it are not
  // recorded.
  void fail(const std::string& error);
  // Ends the recording: the step under way is the last (dropped when it ran no op and an
  // earlier one was recorded), the report is analysed and written to the options' files.
  // Throws std::logic_error when called twice, std::runtime_error naming the first file that
  // could not be written (the others are written).
  SessionReport stop();
  // The step under way (0 first, warm-up steps included), and whether it is recorded.
  int step_index() const;
  bool recording() const;

 private:
  friend struct SessionAccess;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace layoutprof
