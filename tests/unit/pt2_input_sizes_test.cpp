// The sizes a .pt2 program accepts (pt2/input_sizes.h): static dimensions exactly, dynamic
// ones within their range and equal wherever the program has them equal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pt2/input_sizes.h"
#include "support/setting_error.h"

namespace layoutprof::pt2 {
namespace {

using ::testing::HasSubstr;

// Two user inputs [s0, 8] and [s0, 3], s0 in 2..64.
Program two_inputs() {
  Program p;
  for (const char* name : {"x", "y"}) {
    InputSpec spec;
    spec.arg.kind = ArgKind::Tensor;
    spec.arg.names = {name};
    p.input_specs.push_back(spec);
  }
  TensorMeta x, y;
  x.sizes = {{std::nullopt, "Symbol('s0', positive=True, integer=True)"}, {8, ""}};
  y.sizes = {{std::nullopt, "s0"}, {3, ""}};
  p.graph.tensor_values["x"] = x;
  p.graph.tensor_values["y"] = y;
  p.range_constraints["s0"] = {2, 64};
  return p;
}

std::string refusal(const std::vector<std::vector<int64_t>>& sizes) {
  try {
    check_input_sizes(two_inputs(), sizes, std::vector<bool>(sizes.size(), true));
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    return e.what();
  }
  return "";
}

TEST(Pt2InputSizes, AcceptsWhatTheProgramWasExportedFor) {
  EXPECT_EQ(refusal({{2, 8}, {2, 3}}), "");
  EXPECT_EQ(refusal({{64, 8}, {64, 3}}), "");
}

TEST(Pt2InputSizes, RefusesAStaticDimensionThatDiffers) {
  EXPECT_THAT(refusal({{4, 9}, {4, 3}}),
              HasSubstr("input 0 (x) dimension 1 is 9; the program was exported for 8 (a static dimension)"));
}

TEST(Pt2InputSizes, RefusesADynamicDimensionOutsideItsRange) {
  EXPECT_THAT(refusal({{65, 8}, {65, 3}}),
              HasSubstr("input 0 (x) dimension 0 is 65; the program was exported for 2 to 64 (dynamic dimension s0)"));
  EXPECT_THAT(refusal({{1, 8}, {1, 3}}), HasSubstr("exported for 2 to 64"));
}

TEST(Pt2InputSizes, RefusesOneSymbolBoundToTwoSizes) {
  EXPECT_THAT(refusal({{4, 8}, {5, 3}}),
              HasSubstr("input 1 (y) dimension 0 is 5 but input 0 (x) dimension 0 is 4; the program has them equal (s0)"));
}

TEST(Pt2InputSizes, RefusesAnotherRank) {
  EXPECT_THAT(refusal({{4, 8, 1}, {4, 3}}), HasSubstr("input 0 (x) has 3 dimensions; the program was exported for 2"));
}

TEST(Pt2InputSizes, ReadsTheSymbolsExportWrites) {
  EXPECT_EQ(single_symbol("s77"), "s77");
  EXPECT_EQ(single_symbol("Symbol('s77', positive=True, integer=True)"), "s77");
  EXPECT_EQ(single_symbol("2*s77"), "");
  EXPECT_EQ(single_symbol("Mul(Integer(2), Symbol('s77', positive=True, integer=True))"), "");
  EXPECT_EQ(single_symbol("Symbol('a b')"), "");
}

}  // namespace
}  // namespace layoutprof::pt2
