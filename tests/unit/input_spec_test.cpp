#include "core/input_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/errors.h"
#include "support/setting_error.h"

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

TEST(InputSpec, ShapeOnlyDefaultsToContiguousF32) {
  InputSpec s = parse_input_spec("64x3x224x224");
  EXPECT_EQ(s.sizes, (std::vector<int64_t>{64, 3, 224, 224}));
  EXPECT_EQ(s.dtype, "f32");
  EXPECT_EQ(s.format, "contiguous");
}

TEST(InputSpec, DtypeAndFormat) {
  InputSpec s = parse_input_spec("8x3x224x224:f16:channels_last");
  EXPECT_EQ(s.dtype, "f16");
  EXPECT_EQ(s.format, "channels_last");
  EXPECT_EQ(parse_input_spec("8:i64").dtype, "i64");
  EXPECT_EQ(parse_input_spec("2x3x4x5x6:channels_last_3d").format, "channels_last_3d");
  EXPECT_EQ(parse_input_spec("4x4:bool").dtype, "bool");
}

TEST(InputSpec, Permutation) {
  InputSpec s = parse_input_spec("2x3x4x5:perm=0,2,3,1");
  EXPECT_EQ(s.format, "perm");
  EXPECT_EQ(s.perm, (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(parse_input_spec("2x3:u8:perm=1,0").dtype, "u8");
}

struct BadSpec {
  const char* text;
  const char* reason;
};

class InputSpecErrors : public ::testing::TestWithParam<BadSpec> {};

TEST_P(InputSpecErrors, NameTheArgumentAndTheReason) {
  const BadSpec& b = GetParam();
  try {
    parse_input_spec(b.text);
    FAIL() << "accepted " << b.text;
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(std::string("'") + b.text + "'"));
    EXPECT_THAT(e.what(), HasSubstr(b.reason));
    EXPECT_EQ(e.code(), kExitUsage);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, InputSpecErrors,
    ::testing::Values(BadSpec{"", "expected DIMxDIM"}, BadSpec{"2xa", "'a' is not a dimension"},
                      BadSpec{"2x", "'' is not a dimension"},
                      BadSpec{"2x-3", "'-3' is not a dimension"},
                      BadSpec{"2x3:f33", "unknown dtype or format 'f33'"},
                      BadSpec{"2x3:f32:sideways", "unknown format 'sideways'"},
                      BadSpec{"2x3:f32:contiguous:x", "too many ':' fields"},
                      BadSpec{"2x3:channels_last", "channels_last needs a 4-D shape"},
                      BadSpec{"2x3x4:channels_last_3d", "channels_last_3d needs a 5-D shape"},
                      BadSpec{"2x3:perm=0", "perm= lists 1 dims for a 2-D shape"},
                      BadSpec{"2x3:perm=0,0", "each dim 0..1 once"},
                      BadSpec{"2x3:perm=0,x", "'x' is not a dim index"},
                      BadSpec{"99999999999999999999", "too large"},
                      BadSpec{"2x3:i64:grad", ":grad needs a floating-point dtype"},
                      BadSpec{"2x3:grad:f32", "unknown dtype or format 'grad'"},
                      BadSpec{"2x3:f32:contiguous:x:grad", "too many ':' fields"}));

// The spec's error names the input, not a flag: the CLI, which knows how the spec was given,
// puts its flag in place of the setting's name (cli/setting_flags.h).
TEST(InputSpec, ErrorsNameTheInputAndLeaveTheFlagToTheCaller) {
  try {
    parse_input_spec("2xQ");
    FAIL() << "accepted 2xQ";
  } catch (const SettingError& e) {
    EXPECT_EQ(e.setting(), Setting::input);
    EXPECT_THAT(e.what(), ::testing::StartsWith("input '2xQ': 'Q' is not a dimension"));
    EXPECT_THAT(e.naming("--input"), ::testing::StartsWith("--input '2xQ': 'Q' is not a dimension"));
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

TEST(InputSpec, GradMarksAnInputThatRequiresGrad) {
  InputSpec s = parse_input_spec("2x3x4x5:f16:channels_last:grad");
  EXPECT_TRUE(s.requires_grad);
  EXPECT_EQ(s.dtype, "f16");
  EXPECT_EQ(s.format, "channels_last");
  EXPECT_TRUE(parse_input_spec("2x3:grad").requires_grad);
  EXPECT_FALSE(parse_input_spec("2x3:f32").requires_grad);
}

TEST(InputSpec, DtypeSizes) {
  EXPECT_EQ(dtype_size("f32"), 4);
  EXPECT_EQ(dtype_size("bf16"), 2);
  EXPECT_EQ(dtype_size("i64"), 8);
  EXPECT_EQ(dtype_size("nope"), 0);
  EXPECT_TRUE(is_floating_dtype("f16"));
  EXPECT_FALSE(is_floating_dtype("i8"));
}

// compare-formats' variants: what each makes of an input, and the text that names it.
TEST(InputSpec, TextIsWhatParsesBackToTheSameSpec) {
  for (const char* text : {"2x3", "2x3x4x5:channels_last", "2x3x4x5x6:f16:channels_last_3d", "2x3x4:perm=0,2,1",
                           "4x8:f64:grad", "8:i64"}) {
    InputSpec s = parse_input_spec(text);
    EXPECT_EQ(input_spec_text(s), text);
  }
  EXPECT_EQ(input_spec_text(parse_input_spec("2x3:f32:contiguous")), "2x3") << "defaults left out";
}

TEST(InputSpec, ChannelsLastVariantConvertsOnly4DAnd5DInputs) {
  InputSpec four = convert_input_spec(parse_input_spec("2x3x8x8:f16"), "channels_last");
  EXPECT_EQ(four.format, "channels_last");
  EXPECT_EQ(four.text, "2x3x8x8:f16:channels_last");
  EXPECT_EQ(convert_input_spec(parse_input_spec("2x3x4x8x8"), "channels_last").format, "channels_last_3d");
  InputSpec permuted = convert_input_spec(parse_input_spec("2x3x8x8:perm=0,3,1,2"), "channels_last");
  EXPECT_EQ(permuted.format, "channels_last");
  EXPECT_TRUE(permuted.perm.empty());
  // Other ranks stay as given, a permuted one too.
  InputSpec three = convert_input_spec(parse_input_spec("2x8x16:perm=0,2,1"), "channels_last");
  EXPECT_EQ(three.format, "perm");
  EXPECT_EQ(three.text, "2x8x16:perm=0,2,1");
}

TEST(InputSpec, ContiguousVariantConvertsEveryInput) {
  EXPECT_EQ(convert_input_spec(parse_input_spec("2x8x16:perm=0,2,1"), "contiguous").text, "2x8x16");
  EXPECT_EQ(convert_input_spec(parse_input_spec("2x3x8x8:channels_last:grad"), "contiguous").text, "2x3x8x8:grad");
  InputSpec kept = convert_input_spec(parse_input_spec("2x3:u8:contiguous"), "contiguous");
  EXPECT_EQ(kept.text, "2x3:u8:contiguous") << "unchanged: the text as the user wrote it";
  EXPECT_EQ(convert_input_spec(parse_input_spec("2x3x8x8:channels_last"), "").format, "channels_last");
  EXPECT_THROW(convert_input_spec(parse_input_spec("2x3"), "nhwc"), std::invalid_argument);
}

}  // namespace
}  // namespace layoutprof
