#include "core/packed_ints.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <vector>

#include "core/trace.h"
#include "synthetic.h"

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

// Pages of [at, at + bytes) the process has in memory (mincore).
size_t resident_pages(const void* at, size_t bytes) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  if (::mincore(const_cast<void*>(at), bytes, in.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(CallPark, EventsAndTensorsLeaveMemoryAndComeBackWhole) {
  ASSERT_TRUE(SpillFile::get()) << SpillFile::note();
  Call call;
  MappedVector<TensorInfo> block;
  for (int i = 0; i < 20000; ++i) block.push_back(testing::tensor({i + 1, 3}, {3, 1}));
  const TensorInfo* tensors = call.tensors->adopt(std::move(block));
  for (int i = 0; i < 20000; ++i) {
    OpEvent& e = call.events.emplace_back();
    e.id = i;
    e.parent = i % 7 == 0 ? -1 : i - 1;
    e.name = i % 3 ? "aten::add" : "aten::copy_";
    e.thread = static_cast<uint32_t>(i % 2);
    e.duration_ns = 1000 + i;
    e.inputs = TensorList(tensors + i, 1);
  }
  const std::vector<OpEvent> before(call.events.begin(), call.events.end());
  const size_t event_bytes = call.events.size() * sizeof(OpEvent);
  ASSERT_GT(resident_pages(call.events.data(), event_bytes), 0u);

  call.park();
  EXPECT_TRUE(call.events_parked());
  // The events' and tensors' pages are the kernel's again; what stop_figures compares stays.
  EXPECT_EQ(resident_pages(call.events.data(), event_bytes), 0u);
  EXPECT_EQ(resident_pages(tensors, 20000 * sizeof(TensorInfo)), 0u);
  ASSERT_EQ(call.events.size(), before.size());  // the size survives the pages
  for (size_t i = 0; i < before.size(); ++i) {
    const OpKey k = call.key(i);
    ASSERT_EQ(k.name, before[i].name) << i;
    ASSERT_EQ(k.parent, before[i].parent) << i;
    ASSERT_EQ(k.thread, before[i].thread) << i;
  }

  call.unpark();
  EXPECT_FALSE(call.events_parked());
  for (size_t i = 0; i < before.size(); ++i) {
    const OpEvent& e = call.events[i];
    ASSERT_EQ(e.id, before[i].id);
    ASSERT_EQ(e.parent, before[i].parent);
    ASSERT_EQ(e.name, before[i].name);
    ASSERT_EQ(e.duration_ns, before[i].duration_ns);
    ASSERT_EQ(e.inputs.size(), 1u);
    ASSERT_EQ(e.inputs[0].sizes()[0], static_cast<int64_t>(i) + 1) << i;
  }
}

TEST(CallPark, ACallThatTookItsOwnSitesKeepsItsEvents) {
  // A forking model's later calls are matched by the shown call's modules and sources.
  Call call;
  call.sites_recorded = true;
  for (int i = 0; i < 5000; ++i) call.events.emplace_back().module = "branch";
  call.park();
  EXPECT_FALSE(call.events_parked());
  EXPECT_GT(resident_pages(call.events.data(), call.events.size() * sizeof(OpEvent)), 0u);
  EXPECT_EQ(call.events[4999].module, "branch");
  call.unpark();
}

}  // namespace
}  // namespace layoutprof
