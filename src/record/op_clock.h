// The op events' clock: what the callbacks read as an op starts and ends, and how stop() turns
// those readings into steady-clock nanoseconds. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace layoutprof {

// Where the kernel keeps time with the CPU's time-stamp counter itself (clocksource "tsc":
// invariant and synchronised across CPUs, or the kernel would not use it), the counter read
// directly (rdtsc, about 10 ns here, against 25 for the steady clock's vDSO call: two reads per
// op event); else the steady clock. Ticks are scaled to the steady clock's nanoseconds at stop()
// (TickScale), from pairs of readings of both clocks.
extern const bool g_tsc;

int64_t now_ns();  // the steady clock

inline int64_t ticks() {
#if defined(__x86_64__)
  if (__builtin_expect(g_tsc, 1)) return static_cast<int64_t>(__rdtsc());
#endif
  return now_ns();
}

// What op events are timed with, in words (Recorder::op_clock).
std::string op_clock_text();

// Ticks to steady-clock nanoseconds: a linear map through the first pair of readings the
// process took and the latest (the longer apart, the finer the rate).
class TickScale {
 public:
  static TickScale now();
  // Steady-clock nanoseconds of a tick reading.
  int64_t ns(int64_t tick) const;

 private:
  int64_t tick0_ = 0, ns0_ = 0;
  double rate_ = 1.0;
};

}  // namespace layoutprof
