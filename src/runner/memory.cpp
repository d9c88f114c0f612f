#include "runner/memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "support/errors.h"
#include "support/setting_error.h"
#include "runner/runner.h"

namespace layoutprof {

int64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : -1;
}

int64_t default_max_ops() {
  // A run holds about 260 bytes per op event and `check` about 390 (two reports, measured by
  // scripts/bench-scale.sh on a loop of small ops): 1 KB leaves room for both.
  constexpr int64_t kBytesPerOp = 1024;
  const int64_t available = available_memory();
  if (available <= 0) return 1'000'000;  // unknown: a million op events
  return std::max<int64_t>(available / kBytesPerOp, 100'000);
}

namespace {

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000 && u < 6) v /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

}  // namespace

void check_inputs_fit(const std::vector<InputSpec>& specs) {
  const int64_t available = available_memory();
  int64_t total = 0;
  for (const InputSpec& spec : specs) {
    int64_t bytes = input_bytes(spec);
    int64_t peak = 0;
    if (bytes < 0 || __builtin_mul_overflow(bytes, spec.format == "contiguous" ? 1 : 2, &peak) ||
        __builtin_add_overflow(total, peak, &total))
      throw SettingError(Setting::input, " '" + bounded(spec.text) + "': its tensor would take more than 2^63 bytes");
    if (available >= 0 && total > available)
      throw SettingError(Setting::input, " '" + bounded(spec.text) + "': its tensor needs " + std::to_string(bytes) +
                                             " bytes (" + human_bytes(bytes) + ")" +
                                             (peak > bytes ? ", twice that while it is built" : "") +
                                             (total > peak ? ", on top of the inputs before it" : "") +
                                             "; this machine has " + std::to_string(available) + " bytes (" +
                                             human_bytes(available) + ") available");
  }
}

}  // namespace layoutprof
