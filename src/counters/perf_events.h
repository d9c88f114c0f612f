// What the counting (perf_counters.cpp) and sampling (perf_sampler.cpp) collectors share:
// libpfm4's encoding of an event name and perf_event_open's errors in words a user can act
// on. Private to src/counters: it includes the kernel's and libpfm4's headers.
#pragma once

#include <linux/perf_event.h>

#include <string>

namespace layoutprof::perf_detail {

struct Encoded {
  perf_event_attr attr;
  std::string name;  // libpfm4's full name of the event
};

// libpfm4, initialised once per process; false with the reason in `why` when it failed.
bool pfm_ready(std::string* why);
// User and kernel levels; throws std::runtime_error naming the event and pfm_strerror.
Encoded encode_event(const std::string& event);
// perf_event_open(2)'s errno as a reason (no PMU, paranoid level, thread gone).
std::string open_failure(int err);
int paranoid_level();
// task-clock or cpu-clock: software events that count nanoseconds.
bool is_clock_event(const Encoded& e);
long open_event(perf_event_attr& attr, int pid, int cpu, int group_fd);
// Opens `attr` alone on (pid, cpu) to see whether it can be; where perf_event_paranoid refuses
// kernel-and-user, sets exclude_kernel (and hv) in `attr`, tries again and says so in `note`.
// Returns the fd (the caller closes it) or -1 with errno set.
long open_probe(perf_event_attr& attr, int pid, int cpu, std::string& note);

}  // namespace layoutprof::perf_detail
