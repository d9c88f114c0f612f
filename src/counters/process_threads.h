// The process's threads, and a cheap look at whether they changed: what a recording in process
// asks before each call, to sample the threads started since.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace layoutprof {

// The threads of this process (ids from /proc/self/task), in order.
std::vector<int> process_threads();

// Lists the process's threads again only when they may have changed since the last look: where
// /proc/self/task's link count (2 + the number of threads, one stat) moved, or `recheck` passed
// (a thread that exited as another started leaves the count as it was). A call of a millisecond
// pays one stat instead of reading the directory.
class ThreadLook {
 public:
  explicit ThreadLook(std::chrono::milliseconds recheck = std::chrono::milliseconds(100)) : recheck_(recheck) {}
  // The threads, where they may have changed since the last look (always at the first); none
  // where they have not.
  std::optional<std::vector<int>> changed();

 private:
  std::chrono::milliseconds recheck_;
  int64_t links_ = -1;
  std::chrono::steady_clock::time_point listed_{};
};

}  // namespace layoutprof
