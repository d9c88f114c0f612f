#include "core/compact_vector.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/str.h"
#include "core/trace.h"

namespace layoutprof {
namespace {

TEST(CompactVector, IsOnePointerAndEmptyAllocatesNothing) {
  static_assert(sizeof(CompactVector<CounterValue>) == sizeof(void*));
  CompactVector<int64_t> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.data(), nullptr);
  EXPECT_EQ(v.begin(), v.end());
}

TEST(CompactVector, GrowsKeepingItsElementsInOrder) {
  CompactVector<int64_t> v;
  std::vector<int64_t> ref;
  for (int64_t i = 0; i < 1000; ++i) {
    v.push_back(i * 3);
    ref.push_back(i * 3);
  }
  ASSERT_EQ(v.size(), ref.size());
  EXPECT_EQ(v.to_vector(), ref);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 2997);
  v.push_back(v[10]);  // an element of its own, while it grows
  EXPECT_EQ(v.back(), 30);
}

TEST(CompactVector, CopiesAreDeepAndMovesLeaveTheSourceEmpty) {
  CompactVector<Str> a{"x", "y"};
  CompactVector<Str> b = a;
  b.push_back("z");
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_NE(a, b);
  CompactVector<Str> c = std::move(b);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_TRUE(b.empty());  // NOLINT: the moved-from state is specified
  c = a;
  EXPECT_EQ(c, a);
  c = c;  // self-assignment keeps it
  EXPECT_EQ(c, a);
}

TEST(CompactVector, ResizeValueInitialisesAndClearKeepsNothing) {
  CompactVector<CounterValue> v;
  v.resize(3);
  ASSERT_EQ(v.size(), 3u);
  for (const CounterValue& c : v) EXPECT_EQ(c.raw, 0u);
  v[1].raw = 7;
  v.resize(5);
  EXPECT_EQ(v[1].raw, 7u);
  EXPECT_EQ(v[4].raw, 0u);
  v.clear();
  EXPECT_TRUE(v.empty());
  std::vector<CounterValue> from{{1, 1.5, true}};
  v = from;
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].multiplexed);
}

}  // namespace
}  // namespace layoutprof
