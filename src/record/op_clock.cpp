#include "record/op_clock.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <utility>

namespace layoutprof {

namespace {
bool tsc_is_the_clock() {
#if defined(__x86_64__)
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return in >> source && source == "tsc";
#else
  return false;
#endif
}
}  // namespace

const bool g_tsc = tsc_is_the_clock();

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string op_clock_text() {
  return g_tsc ? "the CPU's time-stamp counter (rdtsc; the kernel's clocksource is tsc), scaled to the steady clock"
               : "steady clock";
}

TickScale TickScale::now() {
  static const std::pair<int64_t, int64_t> first{ticks(), now_ns()};
  TickScale s;
  s.tick0_ = first.first;
  s.ns0_ = first.second;
  if (g_tsc) {
    const int64_t t = ticks(), n = now_ns();
    if (t > s.tick0_ && n > s.ns0_) s.rate_ = static_cast<double>(n - s.ns0_) / static_cast<double>(t - s.tick0_);
  }
  return s;
}

int64_t TickScale::ns(int64_t tick) const {
  if (!g_tsc) return tick;
  return ns0_ + static_cast<int64_t>(std::llround(static_cast<double>(tick - tick0_) * rate_));
}

}  // namespace layoutprof
