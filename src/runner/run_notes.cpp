#include "runner/run_notes.h"

#include <algorithm>
#include <csignal>

#include "support/interrupt.h"
#include "core/packed_ints.h"
#include "record/recorder.h"

namespace layoutprof {

std::string plain_calls_note(int64_t calls, bool backward) {
  return "plain calls: wall time of each of " + std::to_string(calls) + " " +
         (backward ? "training steps" : "forward() calls") +
         " after the recorded ones, without the observer, counters or GPU tracer: steady clock";
}

std::string signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

void note_bandwidth(const ProfileConfig& config, const BandwidthEvents& bandwidth, bool sampled, RunInfo& run) {
  if (!config.counters) {
    run.bandwidth_note = "counters turned off (--no-counters)";
    return;
  }
  // Memory traffic: the system-wide (uncore) events, per op when counting, at intervals when sampling.
  const bool measured = std::any_of(run.counters.begin(), run.counters.end(), [](const CounterStatus& c) {
    return c.scope == CounterScope::system && c.measured;
  });
  run.bandwidth = measured ? "measured" : "derived";
  run.bandwidth_note = bandwidth.note;
  if (measured && sampled)
    run.bandwidth_note += ", read every 1 ms by a thread of layoutprof's own and shared among the ops "
                          "running in each interval by time";
  for (const CounterStatus& c : run.counters)
    if (c.scope == CounterScope::system && !c.measured) run.bandwidth_note += "; " + c.event + ": " + c.reason;
}

namespace {

// Each sampled event's samples over the recorded calls, and the events that lost some.
void note_samples(const std::vector<Call>& calls, RunInfo& run) {
  size_t k = 0;
  for (CounterStatus& st : run.counters) {
    if (!st.measured) continue;
    for (const Call& c : calls)
      if (k < c.sample_totals.size()) {
        st.samples += c.sample_totals[k].samples;
        st.attributed += c.sample_totals[k].attributed;
        st.lost += c.sample_totals[k].lost;
      }
    ++k;
  }
  for (const CounterStatus& st : run.counters)
    if (st.sampled() && st.lost > 0)
      run.not_measured.push_back(st.event + ": " + std::to_string(st.lost) +
                                 " samples lost (a ring buffer was full during a call): its estimates "
                                 "undercount; a longer period (" + st.event + ":period=N) takes fewer");
  run.measured.push_back("performance counters, sampled: " + run.counter_read +
                         "; each sample charged to the top-level op and copy running on forward()'s "
                         "thread at its time (estimate = samples x period)");
}

// The GPU time: measured when the tracer saw every call through, else why not.
void note_gpu(const ProfileConfig& config, bool traced, const std::vector<Call>& calls, RunInfo& run) {
  if (config.device == "cpu") run.not_measured.push_back("GPU time: CPU run (--device cuda to trace it)");
  if (!traced) return;
  std::string error;
  size_t with_error = 0;
  int64_t graph_uncorrelated = 0;
  for (const Call& c : calls) {
    if (!c.gpu_error.empty()) error = c.gpu_error, ++with_error;
    graph_uncorrelated += c.gpu_graph_uncorrelated;
  }
  if (with_error < calls.size() || calls.empty())
    run.measured.push_back(
        "GPU time: CUPTI activity records of the kernels, copies and memsets each top-level op and "
        "copy launched (external correlation); CUDA runtime and driver API calls are traced for "
        "that, which adds to the host time of GPU runs' ops");
  if (with_error > 0)
    run.not_measured.push_back(
        "GPU time" +
        (with_error < calls.size() ? " of " + std::to_string(with_error) + " of " + std::to_string(calls.size()) + " recorded calls" : std::string()) +
        ": " + error);
  if (graph_uncorrelated > 0)
    run.not_measured.push_back(
        "GPU time of " + std::to_string(graph_uncorrelated) +
        " CUDA graph kernels, copies and memsets: their correlation ids named no graph launch (CUPTI 13.0 "
        "after a process's first session; fixed in CUDA 13.1 Update 1): counted unattributed, not charged to an op");
}

}  // namespace

void note_recorded_calls(const ProfileConfig& config, const RecordedCalls& calls, Trace& trace) {
  RunInfo& run = trace.run;
  run.calls_recorded = static_cast<int>(trace.calls.size());
  if (const int sig = interrupt_signal(); sig && run.status == RunStatus::ok) {
    // Stopped between calls: the calls recorded are whole; the report says how many of how many.
    run.status = RunStatus::interrupted;
    run.error = signal_name(sig) + " after " + std::to_string(trace.calls.size()) + " of " +
                std::to_string(calls.iters) + " recorded calls";
  }
  run.measured = {config.backward
                      ? "op times and training step wall time (forward and backward): steady clock, "
                        "median over recorded calls"
                      : "op times and forward() wall time: steady clock, median over recorded calls",
                  "shapes, strides and layout classes of every op's tensors (recorded in the first "
                  "recorded call; the others record op names, times and counters only)",
                  "op times read with " + Recorder::op_clock()};
  if (trace.calls.size() > 1) run.measured.push_back(SpillFile::note());
  if (calls.counted) run.measured.push_back("performance counters: " + run.counter_read);
  if (calls.sampled) note_samples(trace.calls, run);
  if (config.backward)
    run.measured.push_back(
        "parameter gradient layouts: sizes and strides of each gradient as autograd hands it to "
        "AccumulateGrad (tensor hook), first recorded step");
  if (!calls.sites_applied)
    run.not_measured.push_back(
        "module paths and source lines of some calls: the op sequence changed between calls");
  if (!config.counters) run.not_measured.push_back("performance counters: turned off (--no-counters)");
  int64_t not_recorded = 0;
  for (const Call& c : trace.calls) not_recorded = std::max(not_recorded, c.ops_not_recorded);
  if (not_recorded > 0)
    run.not_measured.push_back("op events past the first " + std::to_string(run.max_ops) +
                               " of a call (--max-ops): " + std::to_string(not_recorded) +
                               " were not recorded");
  note_gpu(config, calls.gpu_traced, trace.calls, run);
}

// GPU time was not traced in process: one line, which says why and, when the shown call ran ops
// on a GPU, how many.
std::string gpu_time_in_process(const Trace& trace, const std::string& why) {
  int64_t on_gpu = 0;
  if (!trace.calls.empty())
    for (const OpEvent& e : trace.calls.front().events) {
      bool gpu = false;
      for (const TensorInfo& t : e.inputs) gpu |= t.device().rfind("cuda", 0) == 0;
      for (const TensorInfo& t : e.outputs) gpu |= t.device().rfind("cuda", 0) == 0;
      on_gpu += gpu;
    }
  if (on_gpu == 0) return "GPU time: " + why;
  return "GPU time: not measured: " + std::to_string(on_gpu) + " ops of the shown call ran on CUDA: " + why;
}

}  // namespace layoutprof
