// Interleaved rounds of plain calls: the one way layoutprof times variants of a model against
// each other (--what-if's fixes, compare-formats' memory formats). Each round calls the
// baseline, then every variant (their order rotated by one each round, so that none always
// follows the same call), then the baseline again: whatever else the machine does over the
// rounds falls on every variant of a round alike, and the baseline's two timings of a round
// are the control (analysis/paired_rounds.h judges them). Torch-free: the calls are
// PlainCallers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/runner.h"

namespace layoutprof {

// One call of the rounds: who made it, in which round, when it began (ns since the first round
// began) and how long it took.
struct TimedCall {
  static constexpr int64_t kBaseline = -1, kBaselineAgain = -2;
  int64_t who = kBaseline;  // kBaseline, kBaselineAgain, or a variant's index
  int64_t round = 0;
  int64_t start_ns = 0, ns = 0;
};

struct RoundTimes {
  std::vector<int64_t> baseline, baseline_again;  // one per complete round
  // Per variant, one per complete round; a variant that raised has those of the rounds before.
  std::vector<std::vector<int64_t>> variants;
  // Per variant: "" or why it took no more calls ("plain call 3 raised: ..."); the rounds that
  // follow leave it out and still count as complete for the others.
  std::vector<std::string> failed;
  std::string baseline_failed;  // the baseline raised: the rounds stopped there
  std::vector<TimedCall> calls;  // every complete round's, in the order made
  int64_t rounds() const { return static_cast<int64_t>(baseline_again.size()); }
};

struct RoundLimits {
  int64_t rounds = 30;           // at most
  double budget_s = 0;           // no round begins once this long has passed (0: no budget)
  std::string label = "rounds";  // the progress line's
};

// Stops after the round in progress when a signal arrives (interrupt_signal()). A round the
// baseline raised in is dropped whole.
RoundTimes interleaved_rounds(PlainCaller& baseline, const std::vector<PlainCaller*>& variants,
                              const RoundLimits& limits, const ProgressFn& progress);

}  // namespace layoutprof
