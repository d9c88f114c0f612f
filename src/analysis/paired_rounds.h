// What a variant of a run saves, judged from interleaved rounds of plain calls (the what-if
// work: each round times the baseline, then each variant, then the baseline again, so that the
// machine's drift touches every variant of a round alike). Plain C++: no LibTorch.
//
// The figure is the median of the paired per-round differences (variant minus baseline), with
// a distribution-free confidence interval for that median from order statistics: with n
// differences sorted, [d(k), d(n-k+1)] covers the median with probability
// 1 - 2 P(Binomial(n, 1/2) <= k - 1) whatever their distribution (the sign test's interval).
// A 95% interval needs 6 rounds (2 / 2^6 = 0.031); the level is corrected for the number of
// variants compared (Bonferroni: each at 1 - 0.05 / m), which may need more. The control is the
// baseline against itself (the second baseline of each round): where its own interval excludes
// 0, the rounds are noisier than the interval says, and no variant is judged. The verdicts'
// structs are the report model's (report_model/what_if.h): every output reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report_model/what_if.h"

namespace layoutprof {

// A sorted sample's order-statistic interval for its median at confidence `level`: the
// 0-based ranks (lo, hi) of the widest-k interval [x(k), x(n-k+1)] that still covers with at
// least that probability; lo = -1 where n is too small for any.
struct RankInterval {
  int64_t lo = -1, hi = -1;
  double coverage = 0;  // its exact coverage
};
RankInterval median_interval(int64_t n, double level);
// The fewest rounds that give an interval at `level` (6 at 0.95).
int64_t rounds_needed(double level);

// The variant's rounds against the baseline's (same length: round i of each was timed in the
// same round). `comparisons`: how many variants the run compares (the level's correction).
// Rounds of different lengths are an error (std::invalid_argument).
PairedRounds pair_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& variant_ns,
                         int comparisons, double level = 0.95);
// The same over the rounds both have: the first min(sizes) of each (a variant that raised in a
// plain call took no more rounds).
PairedRounds pair_first_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& variant_ns,
                               int comparisons, double level = 0.95);

// Each variant judged against the baseline, given the control: the baseline's first timing of
// each round against its second. A control whose interval excludes 0 withholds every judgement
// (the variants keep their figures). A variant with fewer rounds than the baseline (it raised
// in a plain call and took no more) is paired with the baseline's first as many.
struct RoundsVerdict {
  PairedRounds control;
  std::vector<PairedRounds> variants;
};
RoundsVerdict judge_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& baseline_again_ns,
                           const std::vector<std::vector<int64_t>>& variants_ns, double level = 0.95);

}  // namespace layoutprof
