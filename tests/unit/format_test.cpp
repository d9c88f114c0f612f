#include "support/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace layoutprof {
namespace {

// What the stream wrote before fixed() moved to {fmt}: printf's "%.*f".
std::string printf_fixed(double v, int precision) {
  char text[400];
  std::snprintf(text, sizeof text, "%.*f", precision, v);
  return text;
}

// The reports compare as text: every number fixed() writes must stay byte for byte what it was,
// ties (0.125, 2.5: rounded to even on the exact binary value), signed zero and non-finite
// values included.
TEST(Format, FixedWritesWhatPrintfWrites) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, 0.125, 0.375, 2.5, 3.5, -2.5, 0.0005, 0.0015, 1234.5678, 1e15, 9.999e17,
                   1e300, -1e-300, inf, -inf, std::nan(""), -std::nan("")})
    for (int p : {0, 1, 2, 3}) EXPECT_EQ(fixed(v, p), printf_fixed(v, p)) << v << " to " << p << " places";
  std::mt19937_64 random(7);
  std::uniform_int_distribution<int64_t> bytes(0, int64_t{1} << 40);
  for (int i = 0; i < 20000; ++i) {
    const int64_t n = bytes(random);
    EXPECT_EQ(mb(n), printf_fixed(static_cast<double>(n) / 1e6, 3)) << n;
    EXPECT_EQ(fixed(static_cast<double>(n) / 8.0, 1), printf_fixed(static_cast<double>(n) / 8.0, 1)) << n;
  }
}

}  // namespace
}  // namespace layoutprof
