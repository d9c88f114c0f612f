#include "record/uncaught.h"

#include <gtest/gtest.h>

#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace layoutprof {
namespace {

// Records, as it is destroyed, the two counts side by side; inner ones throw again during
// unwinding, so the counts reach 2.
struct Probe {
  const UncaughtCount& count;
  std::vector<std::pair<unsigned, int>>& seen;
  int nest;
  ~Probe() {
    seen.emplace_back(count.now(), std::uncaught_exceptions());
    if (nest > 0) {
      try {
        Probe inner{count, seen, nest - 1};
        throw std::runtime_error("inner");
      } catch (const std::runtime_error&) {
      }
    }
  }
};

TEST(UncaughtCount, IsStdUncaughtExceptionsInsideAndOutsideUnwinding) {
  const UncaughtCount count;
  std::vector<std::pair<unsigned, int>> seen;
  EXPECT_EQ(count.now(), 0u);
  { Probe quiet{count, seen, 0}; }
  try {
    Probe p{count, seen, 1};
    throw std::runtime_error("outer");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(count.now(), 0u);
  ASSERT_EQ(seen.size(), 3u);
  for (const auto& [ours, std_count] : seen) EXPECT_EQ(static_cast<int>(ours), std_count);
  EXPECT_EQ(seen[0].first, 0u);  // destroyed normally
  EXPECT_EQ(seen[1].first, 1u);  // during the outer unwinding
  EXPECT_EQ(seen[2].first, 2u);  // during the inner one, inside the outer
}

TEST(UncaughtCount, IsPerThread) {
  const UncaughtCount main_count;
  unsigned other = 99, main_seen = 99;
  struct Unwinding {
    const UncaughtCount& main;
    unsigned& other;
    unsigned& main_seen;
    ~Unwinding() {
      main_seen = main.now();
      std::thread([this] { other = UncaughtCount().now(); }).join();
    }
  };
  try {
    Unwinding u{main_count, other, main_seen};
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(main_seen, 1u);
  EXPECT_EQ(other, 0u) << "another thread's count is its own";
}

}  // namespace
}  // namespace layoutprof
