// A figure from sampled counters and its statistical error: what the recorder, the gate and
// the reporters all state about a sampled event.
#pragma once

#include <cmath>
#include <cstdint>

namespace layoutprof {

// The estimate of a sampled figure and its statistical error (one standard deviation): the
// samples times the period, and period x sqrt(samples + 1): Poisson error on the number of
// samples, plus one period for where the sampling phase fell at the span's ends. Over several
// calls, `samples` is their sum and the figure their mean: the error is
// period x sqrt(samples + calls) / calls (a phase per call).
inline double sampled_estimate(uint64_t samples, uint64_t period) {
  return static_cast<double>(samples) * static_cast<double>(period);
}
inline double sampled_error(uint64_t samples, uint64_t period, int64_t calls = 1) {
  const double n = static_cast<double>(calls > 0 ? calls : 1);
  return static_cast<double>(period) * std::sqrt(static_cast<double>(samples) + n) / n;
}

}  // namespace layoutprof
