// The interleaved rounds (runner/rounds.h) on stand-in callers: the order of a round's calls,
// the timeline, a variant that raises, a baseline that raises, the round limit and the budget.
#include "runner/rounds.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace layoutprof {
namespace {

// A caller that logs its calls into a shared list and takes `ns` (reported, not slept); it
// raises on its call number `raises_at` (1-based; 0: never).
struct Logged : PlainCaller {
  Logged(std::string name, std::vector<std::string>& log, int64_t ns, int raises_at = 0)
      : name(std::move(name)), log(log), ns(ns), raises_at(raises_at) {}
  int64_t call_ns() override {
    if (++calls == raises_at) throw std::runtime_error(name + " broke");
    log.push_back(name);
    return ns;
  }
  std::string name;
  std::vector<std::string>& log;
  int64_t ns;
  int raises_at;
  int calls = 0;
};

void quiet(const std::string&) {}

TEST(InterleavedRounds, EachRoundIsTheBaselineTheVariantsInTurnAndTheBaselineAgain) {
  std::vector<std::string> log;
  Logged base("b", log, 100), x("x", log, 200), y("y", log, 300);
  const RoundTimes t = interleaved_rounds(base, {&x, &y}, {3, 0, "test"}, quiet);
  EXPECT_EQ(log, (std::vector<std::string>{"b", "x", "y", "b", "b", "y", "x", "b", "b", "x", "y", "b"}));
  EXPECT_EQ(t.rounds(), 3);
  EXPECT_EQ(t.baseline, (std::vector<int64_t>{100, 100, 100}));
  EXPECT_EQ(t.baseline_again.size(), 3u);
  EXPECT_EQ(t.variants.at(1), (std::vector<int64_t>{300, 300, 300}));
  ASSERT_EQ(t.calls.size(), 12u);
  EXPECT_EQ(t.calls[0].who, TimedCall::kBaseline);
  EXPECT_EQ(t.calls[5].who, 1) << "round 2 begins its variants one further along";
  EXPECT_EQ(t.calls[5].round, 1);
  EXPECT_EQ(t.calls[7].who, TimedCall::kBaselineAgain);
  for (size_t i = 1; i < t.calls.size(); ++i) EXPECT_GE(t.calls[i].start_ns, t.calls[i - 1].start_ns);
}

TEST(InterleavedRounds, AVariantThatRaisesTakesNoMoreAndTheOthersGoOn) {
  std::vector<std::string> log;
  Logged base("b", log, 100), x("x", log, 200, 2), y("y", log, 300);
  const RoundTimes t = interleaved_rounds(base, {&x, &y}, {4, 0, "test"}, quiet);
  EXPECT_EQ(t.rounds(), 4);
  EXPECT_EQ(t.variants[0].size(), 1u) << "its rounds before the one it raised in";
  EXPECT_EQ(t.failed[0], "plain call 2 raised: x broke");
  EXPECT_EQ(t.variants[1].size(), 4u);
  EXPECT_TRUE(t.failed[1].empty());
  EXPECT_EQ(x.calls, 2);
}

TEST(InterleavedRounds, ABaselineThatRaisesEndsTheRoundsAndDropsThatRound) {
  std::vector<std::string> log;
  Logged base("b", log, 100, 4), x("x", log, 200);  // its second round's second call
  const RoundTimes t = interleaved_rounds(base, {&x}, {5, 0, "test"}, quiet);
  EXPECT_EQ(t.rounds(), 1);
  EXPECT_EQ(t.variants[0].size(), 1u);
  EXPECT_EQ(t.calls.size(), 3u) << "the dropped round's calls are not on the timeline";
  EXPECT_EQ(t.baseline_failed, "plain call 2 (the round's second) raised: b broke");
}

// A caller that takes real time, for the budget.
struct Sleeper : PlainCaller {
  int64_t call_ns() override {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(40)) {
    }
    return 40000000;
  }
};

TEST(InterleavedRounds, NoRoundBeginsOnceTheBudgetIsSpent) {
  Sleeper base, x;
  const RoundTimes t = interleaved_rounds(base, {&x}, {1000, 0.1, "test"}, quiet);
  // A round takes at least 120 ms: the first begins, the second would begin past the 100 ms.
  EXPECT_EQ(t.rounds(), 1);
}

}  // namespace
}  // namespace layoutprof
