#include "counters/process_threads.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

namespace layoutprof {

std::vector<int> process_threads() {
  std::vector<int> tids;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') tids.push_back(std::atoi(entry->d_name));
    closedir(dir);
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::optional<std::vector<int>> ThreadLook::changed() {
  struct stat st {};
  const int64_t links = ::stat("/proc/self/task", &st) == 0 ? static_cast<int64_t>(st.st_nlink) : -1;
  const auto now = std::chrono::steady_clock::now();
  if (links >= 0 && links == links_ && now - listed_ < recheck_) return std::nullopt;
  links_ = links;
  listed_ = now;
  return process_threads();
}

}  // namespace layoutprof
