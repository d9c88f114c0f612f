// TensorIterator's output layout as layoutprof models it (analysis/elementwise_order.h), against
// what the torch of this build does (tests/python/elementwise_cases.py), and on the cases the
// causes name.
#include "analysis/elementwise_order.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::tensor;

// Strides over the dims of size > 1: where two layouts of one shape can differ.
std::vector<int64_t> effective(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  std::vector<int64_t> kept;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1) kept.push_back(strides[d]);
  return kept;
}

TEST(ElementwiseOrder, TwoFullSizeOperandsGiveTheFirstOnesLayout) {
  const TensorInfo nhwc = tensor({2, 8, 4, 4}, {128, 1, 32, 8}, 1);
  const TensorInfo nchw = tensor({2, 8, 4, 4}, {128, 16, 4, 1}, 2);
  EXPECT_EQ(elementwise_output_order({&nhwc, &nchw}, {2, 8, 4, 4}).strides, nhwc.strides());
  const ElementwiseOrder swapped = elementwise_output_order({&nchw, &nhwc}, {2, 8, 4, 4});
  EXPECT_EQ(swapped.strides, nchw.strides());
  EXPECT_EQ(swapped.decided_by, 0);
}

TEST(ElementwiseOrder, APartlyBroadcastOperandIsSkippedWhereItHasStrideZero) {
  // [2, 8, 4, 4] channels_last plus a [1, 8, 4, 1] one: the second decides nothing where it
  // is broadcast; the first decides the rest.
  const TensorInfo a = tensor({2, 8, 4, 4}, {128, 1, 32, 8}, 1);
  const TensorInfo b = tensor({1, 8, 4, 1}, {32, 4, 1, 1}, 2);
  const ElementwiseOrder o = elementwise_output_order({&b, &a}, {2, 8, 4, 4});
  EXPECT_FALSE(o.fast_path);
  EXPECT_GE(o.decided_by, 0);
}

// Every case the torch of this build ran: the modelled output strides are the real ones.
TEST(ElementwiseOrder, MatchesWhatTheTorchOfThisBuildDoes) {
  const std::string python = TORCH_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no Python with this build's torch";
  const std::string command = python + " " + ELEMENTWISE_CASES;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe) << command;
  std::string line;
  int cases = 0, wrong = 0;
  char buf[4096];
  std::ostringstream first_wrong;
  while (fgets(buf, sizeof buf, pipe.get())) {
    const nlohmann::json c = nlohmann::json::parse(buf);
    const TensorInfo a = tensor(c["a"][0], c["a"][1], 1), b = tensor(c["b"][0], c["b"][1], 2);
    const std::vector<int64_t> sizes = c["out"][0], strides = c["out"][1];
    const ElementwiseOrder o = elementwise_output_order({&a, &b}, sizes);
    ++cases;
    if (effective(sizes, o.strides) != effective(sizes, strides)) {
      if (wrong++ < 5) first_wrong << c.dump() << " modelled " << nlohmann::json(o.strides).dump() << "\n";
    }
  }
  EXPECT_GT(cases, 300) << command;
  EXPECT_EQ(wrong, 0) << wrong << " of " << cases << " cases differ, first:\n" << first_wrong.str();
}

}  // namespace
}  // namespace layoutprof
