#include "layoutprof/packed_ints.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "layoutprof/trace.h"

namespace layoutprof {
namespace {

std::vector<int64_t> values() {
  std::mt19937_64 rng(7);
  std::vector<int64_t> v = {0, -1, 1, INT64_MAX, INT64_MIN, 127, 128, -128};
  for (int i = 0; i < 200000; ++i) v.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  return v;
}

TEST(PackedInts, ReadsBackInOrderInMemoryAndSpilled) {
  const std::vector<int64_t> in = values();
  PackedInts p;
  for (int64_t v : in) p.push_back(v);
  PackedInts spilled = p;
  spilled.spill();
  ASSERT_TRUE(SpillFile::get()) << SpillFile::note();
  EXPECT_TRUE(spilled.spilled());
  EXPECT_EQ(spilled.size(), in.size());
  for (const PackedInts* packed : {&p, &spilled}) {
    PackedInts::Reader r = packed->reader();  // through a 64 KB buffer when spilled
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(r.next(), in[i]) << i << (packed->spilled() ? " spilled" : "");
    EXPECT_EQ(r.next(), 0) << "past the end";
  }
}

TEST(PackedInts, CounterReadingsKeepRawScaledAndMultiplexed) {
  PackedInts p;
  const std::vector<CounterValue> in = {{12, 12.0, false}, {5, 7.25, true}, {0, 0.0, false}, {UINT64_MAX / 4, 1e300, true}};
  for (const CounterValue& c : in) p.push_counter(c);
  EXPECT_EQ(p.counters(), in.size());
  p.spill();
  PackedInts::Reader r = p.reader();
  for (const CounterValue& c : in) {
    CounterValue got = r.next_counter();
    EXPECT_EQ(got.raw, c.raw);
    EXPECT_EQ(got.scaled, c.scaled);
    EXPECT_EQ(got.multiplexed, c.multiplexed);
  }
}

TEST(PackedInts, TwoSpilledListsReadSideBySide) {
  PackedInts a, b;
  for (int64_t i = 0; i < 50000; ++i) {
    a.push_back(i);
    b.push_back(-i * 1000);
  }
  a.spill();
  b.spill();
  PackedInts::Reader ra = a.reader(), rb = b.reader();
  for (int64_t i = 0; i < 50000; ++i) {
    ASSERT_EQ(ra.next(), i);
    ASSERT_EQ(rb.next(), -i * 1000);
  }
}

}  // namespace
}  // namespace layoutprof
