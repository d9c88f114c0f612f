// The pools' epochs (core/pools.h) and the ids kept per epoch (core/id_table.h).
#include "core/pools.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/id_table.h"
#include "core/layout.h"
#include "core/str.h"

namespace layoutprof {
namespace {

int released = 0;
void count_release() { ++released; }

TensorShape shape_of(std::vector<int64_t> sizes, Str dtype) {
  TensorShape s;
  s.sizes = std::move(sizes);
  s.strides.assign(s.sizes.size(), 1);
  for (size_t d = s.sizes.size(); d-- > 1;) s.strides[d - 1] = s.strides[d] * s.sizes[d];
  s.dtype = dtype;
  s.device = "cpu";
  return s;
}

TEST(Pools, WhatAnEpochInternsIsFreedWithItsLastLease) {
  (void)empty_shape();
  const PoolCounts before = pool_counts();
  const uint64_t generation = pools_generation();
  {
    PoolLease lease;
    Str name("pools_test.epoch.layer1.conv1");
    Str dtype("pools_test_dtype");
    const TensorShape* shape = intern_shape(shape_of({3, 7, 11, 13}, dtype));
    EXPECT_EQ(shape->label, "contiguous");
    const PoolCounts during = pool_counts();
    EXPECT_EQ(during.strings, before.strings + 2);  // the label "contiguous" may be older
    EXPECT_EQ(during.shapes, before.shapes + 1);
    EXPECT_GT(during.string_bytes, before.string_bytes);
    EXPECT_GT(during.shape_bytes, before.shape_bytes);
    std::optional<PoolLease> copy(lease);
    EXPECT_EQ(pool_leases(), 2);
    copy.reset();
    EXPECT_EQ(pools_generation(), generation) << "a lease is still held";
    EXPECT_EQ(pool_counts().shapes, before.shapes + 1);
  }
  EXPECT_EQ(pool_leases(), 0);
  EXPECT_EQ(pools_generation(), generation + 1);
  EXPECT_EQ(pool_counts(), before);
}

TEST(Pools, WhatIsInternedWithNoLeaseStays) {
  Str kept("pools_test.kept.name");
  const TensorShape* kept_shape = intern_shape(shape_of({5, 17, 19}, "pools_test_kept_dtype"));
  const PoolCounts before = pool_counts();
  {
    PoolLease lease;
    EXPECT_EQ(Str("pools_test.kept.name"), kept) << "found, not interned again";
    EXPECT_EQ(intern_shape(shape_of({5, 17, 19}, "pools_test_kept_dtype")), kept_shape);
    Str("pools_test.made.in.the.epoch");
  }
  EXPECT_EQ(pool_counts(), before);
  EXPECT_EQ(kept, "pools_test.kept.name");
  EXPECT_EQ(kept_shape->sizes, (std::vector<int64_t>{5, 17, 19}));
  EXPECT_EQ(kept_shape->label, "contiguous");
}

TEST(Pools, TheDefaultShapeAndTextAreKeptWhenFirstAskedInAnEpoch) {
  {
    PoolLease lease;
    const TensorInfo t;  // empty_shape(), maybe first asked here
    EXPECT_TRUE(t.sizes().empty());
    EXPECT_TRUE(Str().empty());
  }
  const TensorInfo after;
  EXPECT_TRUE(after.sizes().empty());
  EXPECT_EQ(after.label(), "contiguous");
  EXPECT_TRUE(Str().empty());
}

TEST(Pools, HooksRunOnceAsEachEpochEnds) {
  on_pools_released(&count_release);
  on_pools_released(&count_release);  // registered once
  released = 0;
  {
    PoolLease a;
    PoolLease b;
  }
  EXPECT_EQ(released, 1);
  { PoolLease c; }
  EXPECT_EQ(released, 2);
}

TEST(IdTable, KeptIdsStayAndAnEndedEpochsIdsFindNothing) {
  IdTable<std::string> t;
  const uint32_t root = t.intern("", "", false);
  const uint32_t a = t.intern("a", "a", true);
  EXPECT_EQ(t.intern("a", "other", true), a) << "interned once";
  EXPECT_TRUE(IdTable<std::string>::is_epochs(a));
  EXPECT_FALSE(IdTable<std::string>::is_epochs(root));
  ASSERT_NE(t.find(a), nullptr);
  EXPECT_EQ(*t.find(a), "a");
  EXPECT_EQ(t.size(), 2u);
  t.forget_epoch();
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.find(a), nullptr);
  ASSERT_NE(t.find(root), nullptr);
  const uint32_t b = t.intern("b", "b", true);
  EXPECT_NE(b, a) << "an ended epoch's id is not handed out again";
  EXPECT_EQ(t.find(a), nullptr);
  EXPECT_EQ(*t.find(b), "b");
  EXPECT_NE(t.intern("a", "a", true), a);
  EXPECT_EQ(t.find(IdTable<std::string>::kNone), nullptr);
}

}  // namespace
}  // namespace layoutprof
