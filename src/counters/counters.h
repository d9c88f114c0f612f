// Hardware and software performance counters per op: libpfm4 names -> perf_event_open groups.
// This header is free of libpfm4 and kernel headers (they stay in src/counters).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "counters/sampling.h"
#include "core/trace.h"

namespace layoutprof {

// time_enabled of a group whose read failed: counter_delta leaves it out.
constexpr uint64_t kFailedRead = ~uint64_t{0};

// Where a group's values go in the list of measured events.
struct CounterGroupLayout {
  size_t first_event = 0;
  size_t events = 0;
};

// Uncore memory-controller events for bandwidth, and the first CPU of each socket to count
// them on (system-wide); empty, with the reason in `note`, where there are none.
struct BandwidthEvents {
  std::vector<std::string> events;
  std::vector<int> cpus;
  std::string note;
};

// One group per thread, each holding every per-thread event that could be opened, plus one
// group per socket for the uncore events. A snapshot is, per group, {time_enabled,
// time_running, value...}: what one read() of a PERF_FORMAT_GROUP leader returns, minus its
// count field.
class PerfCounters {
 public:
  // Always returns a usable object: events that cannot be opened (unknown name, no PMU,
  // perf_event_paranoid, no such thread) are left out and status() says why.
  static PerfCounters create(const std::vector<std::string>& events, const std::vector<int>& tids,
                             const BandwidthEvents& bandwidth = {});

  PerfCounters(PerfCounters&& other) noexcept;
  PerfCounters& operator=(PerfCounters&& other) noexcept;
  ~PerfCounters();

  const std::vector<CounterStatus>& status() const;  // per-thread events, then uncore ones
  size_t events() const;  // events measured (status() entries with measured set, in order)
  const std::vector<CounterGroupLayout>& groups() const;
  size_t snapshot_size() const;
  // Reads every thread's group, one read per group (rdpmc for the calling thread's group
  // where the kernel allows user-space reads).
  void read(uint64_t* snapshot) const;
  // "rdpmc" or "read()": how the calling thread's group is read.
  std::string read_method() const;

  // DTLB load and store misses, LLC misses, cycles, instructions, page-faults, task-clock.
  static std::vector<std::string> default_events();
  // Every event of every PMU libpfm4 finds on this machine, one per line.
  static std::string list_events();
  // The libpfm4 encoding of an event name, or an exception naming the event and pfm_strerror.
  static std::string encode(const std::string& event);
  // Memory-controller read and write events of the uncore PMUs libpfm4 finds here; or, where
  // `chosen` names events (--bandwidth-events), those, each count taken as a 64-byte line.
  static BandwidthEvents bandwidth_events(const std::vector<std::string>& chosen = {});

 private:
  struct Impl;
  explicit PerfCounters(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One sample as PerfSampler::drain() reads it off a ring buffer.
struct RawSample {
  uint32_t counter = 0;  // index among the sampler's measured events
  int32_t tid = 0;
  int64_t time_ns = 0;   // CLOCK_MONOTONIC (use_clockid): the steady clock's time line
  uint64_t addr = 0;     // data address; 0 where the event gives none
};

// What one drain() read: the samples in the order the buffers held them, and per measured
// event the samples the kernel dropped (full buffer) and the time it was enabled and running
// (summed over threads: running < enabled means the kernel multiplexed it).
struct SamplerDrain {
  std::vector<RawSample> samples;
  // Per event: records lost, and the time enabled and running since the last drain (read for
  // the events that can be multiplexed; 0 for software events, which run whenever enabled).
  std::vector<uint64_t> lost, enabled_ns, running_ns;
  // The system-wide (uncore) events read every interval while enabled, on the steady clock.
  std::vector<IntervalReading> intervals;
};

// The same events as PerfCounters, sampled instead of read per op: each opened per thread with
// a sample period, disabled until enable(); every thread's events write into one ring buffer,
// read by drain() after a recorded call, never per op. Samples carry thread, time on the
// steady clock, instruction pointer and data address.
struct SamplingOptions {
  int64_t interval_ns = 1000000;  // the uncore events' reading interval
  // task-clock's and cpu-clock's period where the event names none: 500 samples a second of a
  // thread's CPU time (the command's). Each sample is a timer interrupt, which costs the
  // interrupted thread 20-100 us in a VM: a recording in process, where the user's own calls
  // pay for it, asks for fewer (EagerOptions::clock_period_ns).
  uint64_t clock_period_ns = 2000000;
};

class PerfSampler {
 public:
  // Always returns a usable object: events that cannot be sampled are left out, with the reason
  // in status(). A period given with the event (libpfm4's ":period=N" or ":freq=N") is kept;
  // otherwise default_period() gives it (`options.clock_period_ns` for the clock events).
  // `bandwidth`'s uncore events, where given, are read system-wide every `options.interval_ns` by a
  // thread of the sampler's own while enabled (uncore PMUs take no sample interrupts): their
  // statuses come last, with mode "interval" and the interval as their period.
  static PerfSampler create(const std::vector<std::string>& events, const std::vector<int>& tids,
                            const BandwidthEvents& bandwidth = {}, const SamplingOptions& options = {});

  PerfSampler(PerfSampler&& other) noexcept;
  PerfSampler& operator=(PerfSampler&& other) noexcept;
  ~PerfSampler();

  // Entries with mode "sampled", period and data_address set for those measured.
  const std::vector<CounterStatus>& status() const;
  size_t events() const;  // measured: the sampled per-thread events, then the interval ones
  size_t interval_events() const;
  const std::vector<uint64_t>& periods() const;  // per sampled per-thread event
  // Every event of every thread, one ioctl each: about 10 us each in these VMs (another
  // thread's event takes an interprocessor interrupt), so a run enables them once, before its
  // first recorded call, and keeps them on (Recorder). Each does nothing when already so.
  void enable() const;
  void disable() const;
  // Opens the events on the threads of `tids` not tried before (a pool started after create():
  // a recording in process rescans the process's threads at each call), enabled when the others
  // are. A thread that cannot be set up is named in describe().
  void add_threads(const std::vector<int>& tids) const;
  // Everything written since the last drain.
  void drain(SamplerDrain& out) const;
  // "ring buffers of N KB on T thread(s)".
  std::string describe() const;

 private:
  struct Impl;
  explicit PerfSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// --events' comma-separated list; empty items are skipped. Throws UsageError for a list of
// nothing but commas.
std::vector<std::string> split_event_list(const std::string& list);

// The counts between two snapshots, per event: raw sums over groups (threads, sockets), and scaled by
// time_enabled / time_running where the kernel multiplexed a group.
std::vector<CounterValue> counter_delta(const uint64_t* begin, const uint64_t* end,
                                        const std::vector<CounterGroupLayout>& groups,
                                        size_t events);

}  // namespace layoutprof
