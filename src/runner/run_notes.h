// What a run says it measured, and did not (RunInfo::measured, not_measured, the counters'
// notes): the runner's words, apart from the steps that earn them. Torch-free.
#pragma once

#include <string>

#include "counters/counters.h"
#include "runner/runner.h"
#include "core/trace.h"

namespace layoutprof {

// The memory traffic notes (RunInfo::bandwidth, bandwidth_note) once the counters are open.
void note_bandwidth(const ProfileConfig& config, const BandwidthEvents& bandwidth, bool sampled, RunInfo& run);

// How the recorded calls went, for the notes.
struct RecordedCalls {
  int iters = 0;              // the calls asked for
  bool counted = false;       // counters read at every top-level op and copy
  bool sampled = false;       // counters sampled
  bool gpu_traced = false;    // a GPU tracer was open
  bool sites_applied = true;  // every shown call got its module paths and source lines
};

// RunInfo's figures and notes after the recorded calls: how many, whether a signal stopped
// them, what was measured and what was not.
void note_recorded_calls(const ProfileConfig& config, const RecordedCalls& calls, Trace& trace);

// A signal's name for the notes: SIGTERM or SIGINT.
std::string signal_name(int sig);

// A recording in process did not trace GPU time, for `why`: the line that says so, and when the
// shown call ran ops on CUDA, how many.
std::string gpu_time_in_process(const Trace& trace, const std::string& why);

}  // namespace layoutprof
