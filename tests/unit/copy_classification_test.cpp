#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::tensor;

struct CopyCase {
  const char* what;
  TensorInfo src;
  TensorInfo dst;
  const char* culprit;
  CopyClass expected;
};

class CopyClassTest : public ::testing::TestWithParam<CopyCase> {};

TEST_P(CopyClassTest, Classifies) {
  const CopyCase& c = GetParam();
  EXPECT_EQ(copy_class_name(classify_copy(c.src, c.dst, c.culprit)),
            std::string(copy_class_name(c.expected)))
      << c.what;
}

TensorInfo f64(TensorInfo t) {
  t.set_shape(t.sizes(), t.strides(), "f64", t.device(), 8);
  return t;
}

TensorInfo on_cuda(TensorInfo t) {
  t.set_shape(t.sizes(), t.strides(), t.dtype(), "cuda:0", t.elem_size());
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    Table, CopyClassTest,
    ::testing::Values(
        CopyCase{"dtype change wins over everything", tensor({3, 4}, {1, 3}),
                 f64(tensor({3, 4}, {4, 1})), "aten::reshape", CopyClass::dtype_device},
        CopyCase{"device change", tensor({3, 4}, {4, 1}), on_cuda(tensor({3, 4}, {4, 1})),
                 "aten::to", CopyClass::dtype_device},
        CopyCase{"bias broadcast into addmm output (fewer elements)", tensor({4}, {1}),
                 tensor({8, 4}, {4, 1}), "aten::linear", CopyClass::broadcast},
        CopyCase{"expanded source (zero stride)", tensor({8, 4}, {0, 1}), tensor({8, 4}, {4, 1}),
                 "aten::contiguous", CopyClass::broadcast},
        CopyCase{"plain buffer copy", tensor({8, 4}, {4, 1}), tensor({8, 4}, {4, 1}),
                 "aten::clone", CopyClass::same_layout},
        CopyCase{"same layout once size-1 dims are dropped", tensor({1, 8, 4}, {7, 4, 1}),
                 tensor({1, 8, 4}, {32, 4, 1}), "aten::reshape", CopyClass::same_layout},
        CopyCase{"reshape after transpose", tensor({2, 3, 4}, {12, 1, 3}),
                 tensor({2, 3, 4}, {12, 4, 1}), "aten::reshape", CopyClass::implicit_layout},
        CopyCase{"conv on a channels_last input with NCHW weights", tensor({2, 3, 4, 5}, {60, 1, 15, 3}),
                 tensor({2, 3, 4, 5}, {60, 20, 5, 1}), "aten::conv2d", CopyClass::implicit_layout},
        CopyCase{"explicit .contiguous()", tensor({2, 3, 4}, {12, 1, 3}),
                 tensor({2, 3, 4}, {12, 4, 1}), "aten::contiguous", CopyClass::explicit_layout},
        CopyCase{"explicit clone", tensor({4, 3}, {1, 4}), tensor({4, 3}, {3, 1}), "aten::clone",
                 CopyClass::explicit_layout},
        CopyCase{"explicit .to(memory_format)", tensor({2, 3, 4, 5}, {60, 20, 5, 1}),
                 tensor({2, 3, 4, 5}, {60, 1, 15, 3}), "aten::to", CopyClass::explicit_layout},
        CopyCase{"gapped source (narrow) into dense", tensor({2, 2, 4}, {12, 4, 1}),
                 tensor({2, 2, 4}, {8, 4, 1}), "aten::matmul", CopyClass::implicit_layout}));

TEST(CopyClass, ExplicitOpNames) {
  for (const char* name : {"aten::contiguous", "aten::clone", "aten::copy_", "aten::to",
                           "aten::_to_copy", "aten::type_as"})
    EXPECT_TRUE(is_explicit_copy_op(name)) << name;
  for (const char* name : {"aten::reshape", "aten::conv2d", "aten::matmul", "aten::layer_norm"})
    EXPECT_FALSE(is_explicit_copy_op(name)) << name;
}

TEST(CopyClass, NamesRoundTrip) {
  for (int i = 0; i < kCopyClassCount; ++i) {
    auto c = static_cast<CopyClass>(i);
    EXPECT_EQ(copy_class_from_name(copy_class_name(c)), c);
  }
  EXPECT_THROW(copy_class_from_name("sideways"), std::invalid_argument);
}

}  // namespace
}  // namespace layoutprof
