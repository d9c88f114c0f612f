#include "core/layout.h"

#include <gtest/gtest.h>

namespace layoutprof {
namespace {

struct LayoutCase {
  const char* what;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  const char* label;
};

class LayoutClassTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(LayoutClassTest, Classifies) {
  const LayoutCase& c = GetParam();
  EXPECT_EQ(layout_label(classify_layout(c.sizes, c.strides)), c.label) << c.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, LayoutClassTest,
    ::testing::Values(
        LayoutCase{"row-major 3-D", {2, 3, 4}, {12, 4, 1}, "contiguous"},
        LayoutCase{"scalar", {}, {}, "contiguous"},
        LayoutCase{"empty tensor", {0, 3}, {3, 1}, "contiguous"},
        LayoutCase{"transpose(1,2)", {2, 4, 3}, {12, 1, 4}, "permuted(0,2,1)"},
        LayoutCase{"2-D .t()", {4, 3}, {1, 4}, "permuted(1,0)"},
        LayoutCase{"permute(0,2,3,1) of NCHW", {2, 4, 5, 3}, {60, 5, 1, 20},
                   "permuted(0,3,1,2)"},
        LayoutCase{"channels_last NCHW", {2, 3, 4, 5}, {60, 1, 15, 3}, "channels_last"},
        LayoutCase{"channels_last_3d", {2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}, "channels_last_3d"},
        LayoutCase{"size-1 dims never decide: odd strides on them", {1, 3, 1, 4}, {999, 4, 7, 1},
                   "contiguous"},
        LayoutCase{"channels_last with C == 1 reads as contiguous", {2, 1, 4, 5}, {20, 1, 5, 1},
                   "contiguous"},
        LayoutCase{"transpose of a dim of size 1 changes nothing", {3, 1, 4}, {4, 4, 1},
                   "contiguous"},
        LayoutCase{"narrow on dim 0 stays contiguous", {2, 4}, {4, 1}, "contiguous"},
        LayoutCase{"narrow on an inner dim leaves gaps", {2, 2, 4}, {12, 4, 1}, "strided"},
        LayoutCase{"step slice", {5}, {2}, "strided"},
        LayoutCase{"narrow after transpose", {2, 2, 4}, {12, 1, 3}, "strided"},
        LayoutCase{"expand", {3, 4}, {0, 1}, "broadcast"},
        LayoutCase{"expand of a 1-element dim to size 1 is not broadcast", {1, 4}, {0, 1},
                   "contiguous"},
        LayoutCase{"overlapping windows (unfold-like)", {3, 4}, {1, 1}, "overlapping"},
        LayoutCase{"negative-free sliding window", {4, 3}, {2, 1}, "overlapping"}));

TEST(Layout, PermutedOrderIsThePhysicalOrderOutermostFirst) {
  Layout l = classify_layout({2, 3, 4}, {1, 8, 2});  // dim 1 outermost, then 2, then 0
  ASSERT_EQ(l.cls, LayoutClass::permuted);
  EXPECT_EQ(l.order, (std::vector<int>{1, 2, 0}));
}

TEST(Layout, LabelRoundTrips) {
  for (const char* label : {"contiguous", "permuted(0,2,1)", "channels_last", "strided",
                            "broadcast", "overlapping", "channels_last_3d"}) {
    EXPECT_EQ(layout_label(layout_from_label(label)), label);
  }
  EXPECT_THROW(layout_from_label("sideways"), std::invalid_argument);
}

// Strides that only a permute of a tensor with dims of size 1 leaves: contiguous by class,
// but not what .contiguous() or channels_last make (DDP compares them all).
TEST(Layout, OddStridesOnDimsOfSizeOneAreTold) {
  EXPECT_TRUE(odd_size1_strides({8, 1, 3, 3}, {9, 72, 3, 1}));
  EXPECT_FALSE(odd_size1_strides({8, 1, 3, 3}, {9, 9, 3, 1}));  // contiguous
  EXPECT_FALSE(odd_size1_strides({8, 1, 3, 3}, {9, 1, 3, 1}));  // channels_last
  EXPECT_TRUE(odd_size1_strides({1, 16}, {1, 1}));              // a transposed row
  EXPECT_FALSE(odd_size1_strides({8, 3, 3, 3}, {1, 8, 72, 24}));  // permuted: no dim of size 1 to blame
  EXPECT_FALSE(odd_size1_strides({6, 8}, {1, 6}));
}

TEST(Layout, EffectiveDimsDropSizeOne) {
  auto a = effective_dims({1, 3, 4}, {12, 4, 1});
  auto b = effective_dims({3, 1, 4}, {4, 99, 1});
  EXPECT_EQ(a, b);
}

TEST(Layout, TensorInfoBytes) {
  TensorInfo t;
  t.set_shape({2, 3}, {3, 1}, "f32", "cpu", 4);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.bytes(), 24);
}

}  // namespace
}  // namespace layoutprof
