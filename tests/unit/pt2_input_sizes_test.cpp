// The sizes a .pt2 program accepts (pt2/input_sizes.h): static dimensions exactly, dynamic
// ones within their range and equal wherever the program has them equal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pt2/input_sizes.h"
#include "pt2/sym_expr.h"
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

// What export wrote for torch.cat([x, x]) + y with y's batch Dim 2*dx, and for x[:, :-1] + y
// with x's Dim dx + 1 (torch 2.14.1).
TEST(Pt2InputSizes, ACompoundSizeMustEqualItsValueOnceItsSymbolsAreBound) {
  Program p = two_inputs();
  p.graph.tensor_values["y"].sizes[0].expr = "Mul(Integer(2), Symbol('s0', positive=True, integer=True))";
  EXPECT_NO_THROW(check_input_sizes(p, {{4, 8}, {8, 3}}, {true, true}));
  try {
    check_input_sizes(p, {{4, 8}, {7, 3}}, {true, true});
    ADD_FAILURE() << "accepted 7 for 2*s0 with s0 = 4";
  } catch (const SettingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 1 (y) dimension 0 is 7; the program has it 8 (a size derived from "
                                    "dynamic dimensions the other inputs give)"));
  }
  // Its only symbol bound by no dimension alone: left to the ops.
  p.graph.tensor_values["x"].sizes[0].expr = "Add(Symbol('s1', positive=True, integer=True), Integer(1))";
  p.graph.tensor_values["y"].sizes[0].expr = "Mul(Integer(2), Symbol('s1', positive=True, integer=True))";
  EXPECT_NO_THROW(check_input_sizes(p, {{4, 8}, {7, 3}}, {true, true}));
}

TEST(Pt2SizeExpressions, SympysSreprFormsEvaluateExactly) {
  const std::map<std::string, int64_t> s{{"s0", 6}, {"s1", 4}};
  EXPECT_EQ(evaluate_size("Add(Symbol('s0', positive=True, integer=True), Integer(1))", s), 7);
  EXPECT_EQ(evaluate_size("Mul(Integer(2), Symbol('s0', positive=True, integer=True))", s), 12);
  EXPECT_EQ(evaluate_size("Mul(Rational(1, 2), Symbol('s0'))", s), 3);
  EXPECT_EQ(evaluate_size("Add(Mul(Integer(-1), Symbol('s1')), Symbol('s0'))", s), 2);
  EXPECT_EQ(evaluate_size("FloorDiv(Symbol('s0'), Integer(4))", s), 1);
  EXPECT_EQ(evaluate_size("Mod(Symbol('s0'), Integer(4))", s), 2);
  EXPECT_EQ(evaluate_size("Pow(Symbol('s1'), Integer(2))", s), 16);
  EXPECT_EQ(evaluate_size("Max(Symbol('s0'), Symbol('s1'), Integer(5))", s), 6);
  EXPECT_EQ(evaluate_size("Mul(NegativeOne(), Symbol('s1'))", s), -4);
}

TEST(Pt2SizeExpressions, WhatCannotBeEvaluatedHereIsNone) {
  const std::map<std::string, int64_t> s{{"s0", 5}};
  EXPECT_EQ(evaluate_size("Symbol('s9')", s), std::nullopt) << "an unbound symbol";
  EXPECT_EQ(evaluate_size("Mul(Rational(1, 2), Symbol('s0'))", s), std::nullopt) << "not an integer";
  EXPECT_EQ(evaluate_size("CeilToInt(Symbol('s0'))", s), std::nullopt) << "a function not known here";
  EXPECT_EQ(evaluate_size("Mul(Integer(9223372036854775807), Integer(2))", s), std::nullopt) << "overflow";
  EXPECT_EQ(evaluate_size("FloorDiv(Symbol('s0'), Integer(0))", s), std::nullopt);
  EXPECT_EQ(evaluate_size("Add(Integer(1), Integer(2)", s), std::nullopt) << "unclosed";
  EXPECT_EQ(evaluate_size("Add(Integer(1)) junk", s), std::nullopt);
  EXPECT_EQ(evaluate_size(std::string(10000, '(') , s), std::nullopt);
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "Add(";
  EXPECT_EQ(evaluate_size(deep, s), std::nullopt) << "nesting past the depth limit";
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
