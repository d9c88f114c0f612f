#include "runner/rounds.h"

#include <chrono>
#include <stdexcept>

#include "support/interrupt.h"

namespace layoutprof {

namespace {

using Clock = std::chrono::steady_clock;

int64_t since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// One round's calls, kept apart until the round completes.
struct Round {
  int64_t baseline = -1, again = -1;
  std::vector<int64_t> variants;
  std::vector<TimedCall> calls;
};

// One call, timed and placed on the timeline; false when it raised (`error` says how).
bool timed_call(PlainCaller& caller, int64_t who, int64_t round, Clock::time_point start, Round& out,
                int64_t& ns, std::string& error) {
  const int64_t at = since(start);
  try {
    ns = caller.call_ns();
  } catch (const std::runtime_error& e) {
    error = e.what();
    return false;
  }
  out.calls.push_back({who, round, at, ns});
  return true;
}

}  // namespace

RoundTimes interleaved_rounds(PlainCaller& baseline, const std::vector<PlainCaller*>& variants,
                              const RoundLimits& limits, const ProgressFn& progress) {
  RoundTimes t;
  const size_t n = variants.size();
  t.variants.resize(n);
  t.failed.resize(n);
  const auto start = Clock::now();
  for (int64_t r = 0; r < limits.rounds && !interrupt_signal(); ++r) {
    if (limits.budget_s > 0 && static_cast<double>(since(start)) / 1e9 > limits.budget_s) break;
    progress(limits.label + ": round " + std::to_string(r + 1) + "/" + std::to_string(limits.rounds));
    Round round;
    round.variants.assign(n, -1);
    std::string error;
    if (!timed_call(baseline, TimedCall::kBaseline, r, start, round, round.baseline, error)) {
      t.baseline_failed = "plain call " + std::to_string(r + 1) + " raised: " + error;
      break;
    }
    for (size_t k = 0; k < n; ++k) {
      const size_t v = (static_cast<size_t>(r) + k) % n;
      if (!t.failed[v].empty()) continue;
      if (!timed_call(*variants[v], static_cast<int64_t>(v), r, start, round, round.variants[v], error))
        t.failed[v] = "plain call " + std::to_string(r + 1) + " raised: " + error;
    }
    if (!timed_call(baseline, TimedCall::kBaselineAgain, r, start, round, round.again, error)) {
      t.baseline_failed = "plain call " + std::to_string(r + 1) + " (the round's second) raised: " + error;
      break;
    }
    t.baseline.push_back(round.baseline);
    t.baseline_again.push_back(round.again);
    for (size_t v = 0; v < n; ++v)
      if (round.variants[v] >= 0) t.variants[v].push_back(round.variants[v]);
    t.calls.insert(t.calls.end(), round.calls.begin(), round.calls.end());
  }
  return t;
}

}  // namespace layoutprof
