// What the counting (perf_counters.cpp) and sampling (perf_sampler.cpp) collectors share:
// libpfm4's encoding of an event name and perf_event_open's errors in words a user can act
// on. Private to src/counters: it includes the kernel's and libpfm4's headers.
#pragma once

#include <linux/perf_event.h>
#include <unistd.h>

#include <string>
#include <utility>

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

// A perf event's file descriptor, closed when the object goes (as folly's File): move-only;
// false when the open failed, with errno saying why right after it.
class EventFd {
 public:
  EventFd() = default;
  explicit EventFd(int fd) : fd_(fd) {}
  EventFd(EventFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  EventFd& operator=(EventFd&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  ~EventFd() { close(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

EventFd open_event(perf_event_attr& attr, int pid, int cpu, int group_fd);
// Opens `attr` alone on (pid, cpu) to see whether it can be; where perf_event_paranoid refuses
// kernel-and-user, sets exclude_kernel (and hv) in `attr`, tries again and says so in `note`.
EventFd open_probe(perf_event_attr& attr, int pid, int cpu, std::string& note);

}  // namespace layoutprof::perf_detail
