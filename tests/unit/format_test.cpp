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
// Each byte sequence is whole UTF-8 (1 to 4 bytes, continuation bytes where they belong).
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// A heatmap's layout lane ("contiguous→strided→…", each arrow three bytes) clipped anywhere:
// whole characters, the width asked.
TEST(Format, ClipCutsBetweenCharactersToTheWidthAsked) {
  std::string lane = "contiguous";
  for (int i = 0; i < 6; ++i) lane += "→strided→broadcast";
  for (size_t w = 2; w < width(lane); ++w) {
    const std::string clipped = clip(lane, w);
    EXPECT_TRUE(valid_utf8(clipped)) << w << ": " << clipped;
    EXPECT_EQ(width(clipped), w) << clipped;
    EXPECT_EQ(clipped.substr(clipped.size() - 3), "…");
  }
  EXPECT_EQ(clip("contiguous", 10), "contiguous") << "what fits stays whole";
  EXPECT_EQ(clip("contiguous→strided", 12), "contiguous→…");
}

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
