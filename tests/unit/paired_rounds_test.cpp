// The what-if's statistics: paired rounds, the median's order-statistic interval, the control.
#include "analysis/paired_rounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace layoutprof {
namespace {

// Rounds of a machine that drifts: each round's time moves by up to +-4% for every variant
// alike, and each timing by a further +-1% of its own (a fixed pseudo-random sequence).
struct Machine {
  uint64_t state = 12345;
  double next() {  // uniform in [-1, 1)
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 52) - 1.0;
  }
  std::vector<std::vector<int64_t>> rounds(int n, const std::vector<double>& factors) {
    std::vector<std::vector<int64_t>> out(factors.size());
    for (int r = 0; r < n; ++r) {
      const double drift = 1 + 0.04 * next();
      for (size_t v = 0; v < factors.size(); ++v)
        out[v].push_back(static_cast<int64_t>(10e6 * factors[v] * drift * (1 + 0.01 * next())));
    }
    return out;
  }
};

TEST(PairedRounds, TheMediansIntervalFromOrderStatisticsNeedsSixRoundsAt95) {
  EXPECT_EQ(median_interval(5, 0.95).lo, -1) << "2/32 = 0.0625 outside: no interval";
  const RankInterval six = median_interval(6, 0.95);
  EXPECT_EQ(six.lo, 0);
  EXPECT_EQ(six.hi, 5);
  EXPECT_NEAR(six.coverage, 1 - 2.0 / 64, 1e-12);
  const RankInterval twenty = median_interval(20, 0.95);  // the sign test's table: ranks 6 and 15 (1-based)
  EXPECT_EQ(twenty.lo, 5);
  EXPECT_EQ(twenty.hi, 14);
  EXPECT_GE(twenty.coverage, 0.95);
  EXPECT_LT(median_interval(20, 0.95).coverage - 0.95, 1 - 0.95) << "the narrowest interval that covers";
}

TEST(PairedRounds, ATenPercentPairedShiftIsMeasured) {
  Machine m;
  const auto r = m.rounds(12, {1.0, 1.0, 0.9});
  const RoundsVerdict v = judge_rounds(r[0], r[1], {r[2]});
  EXPECT_EQ(v.control.saving, Saving::within_noise) << v.control.text();
  ASSERT_EQ(v.variants.size(), 1u);
  const PairedRounds& p = v.variants[0];
  EXPECT_EQ(p.saving, Saving::faster) << p.text();
  EXPECT_NEAR(p.relative(), -0.10, 0.02);
  EXPECT_LT(p.relative_high(), 0);
  EXPECT_GT(p.relative_low(), -0.14);
  EXPECT_NE(p.text().find("measured: "), std::string::npos) << p.text();
  const RoundsVerdict slower = judge_rounds(r[0], r[1], {r[0]}, 0.95);
  EXPECT_EQ(slower.variants[0].saving, Saving::within_noise) << "the baseline against itself";
}

TEST(PairedRounds, IdenticalRoundsAreWithinNoise) {
  Machine m;
  const auto r = m.rounds(10, {1.0, 1.0});
  const PairedRounds same = pair_rounds(r[0], r[0], 1);
  EXPECT_EQ(same.saving, Saving::within_noise);
  EXPECT_EQ(same.difference_ns, 0);
  const PairedRounds twin = pair_rounds(r[0], r[1], 1);  // the same program timed twice
  EXPECT_EQ(twin.saving, Saving::within_noise) << twin.text();
  EXPECT_LE(twin.low_ns, 0);
  EXPECT_GE(twin.high_ns, 0);
}

TEST(PairedRounds, FiveRoundsAreNotJudgedAndSixAre) {
  Machine m;
  const auto r = m.rounds(6, {1.0, 1.0, 0.8});
  const std::vector<int64_t> b5(r[0].begin(), r[0].begin() + 5), a5(r[1].begin(), r[1].begin() + 5),
      v5(r[2].begin(), r[2].begin() + 5);
  const RoundsVerdict five = judge_rounds(b5, a5, {v5});
  EXPECT_EQ(five.variants[0].saving, Saving::not_judged) << five.variants[0].text();
  EXPECT_NE(five.variants[0].text().find("not judged"), std::string::npos);
  const RoundsVerdict six = judge_rounds(r[0], r[1], {r[2]});
  EXPECT_EQ(six.variants[0].saving, Saving::faster) << six.variants[0].text();
  // Three variants compared: each at 1 - 0.05/3, which six rounds (0.969) do not reach, seven do.
  const RoundsVerdict three = judge_rounds(r[0], r[1], {r[2], r[2], r[2]});
  EXPECT_EQ(three.variants[0].saving, Saving::not_judged);
  const auto r7 = m.rounds(7, {1.0, 1.0, 0.8});
  EXPECT_EQ(judge_rounds(r7[0], r7[1], {r7[2], r7[2], r7[2]}).variants[0].saving, Saving::faster);
}

TEST(PairedRounds, ANoisyControlWithholdsTheVerdict) {
  Machine m;
  // The baseline's second timing of each round runs 6% slower (a machine warming up within
  // each round): the rounds are not what the interval assumes.
  const auto r = m.rounds(12, {1.0, 1.06, 0.9});
  const RoundsVerdict v = judge_rounds(r[0], r[1], {r[2]});
  EXPECT_EQ(v.control.saving, Saving::slower) << v.control.text();
  EXPECT_EQ(v.variants[0].saving, Saving::withheld) << v.variants[0].text();
  EXPECT_NEAR(v.variants[0].relative(), -0.10, 0.02) << "the figures are kept";
  EXPECT_NE(v.variants[0].text().find("control"), std::string::npos);
}

TEST(PairedRounds, RoundsOfDifferentLengthsAreAnError) {
  EXPECT_THROW(pair_rounds({1, 2, 3}, {1, 2}, 1), std::invalid_argument);
}

}  // namespace
}  // namespace layoutprof
