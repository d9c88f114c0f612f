// oneDNN's verbose log read: lines as this machine's two oneDNN builds print them (measured here:
// oneDNN 2.6.3 inside Debian's LibTorch 1.13, oneDNN 3.12.0 inside the torch 2.14.1 wheel, under
// torch._C._verbose.mkldnn_set_verbose(1) around a resnet18 forward), and the user's bytes
// told apart from them.
#include <gtest/gtest.h>

#include "counters/onednn_log.h"

namespace layoutprof {
namespace {

constexpr const char* kReorder2 =
    "onednn_verbose,exec,cpu,reorder,jit:blk,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd16b:f0,"
    "attr-scratchpad:user ,,8x64x56x56,0.625";
constexpr const char* kConv2 =
    "onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:abcd:f0 "
    "wei_f32::blocked:Acdb16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,attr-scratchpad:user "
    ",alg:convolution_direct,mb8_ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3,10.7878";
constexpr const char* kReorder3 =
    "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcd::f0 "
    "dst:f32::blocked:Acdb16a::f0,attr-scratchpad:user,,64x3x7x7,7.10303";
constexpr const char* kConv3 =
    "onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx512_core,forward_training,src:f32:a:blocked:abcd::f0 "
    "wei:f32:a:blocked:Acdb16a::f0 bia:undef::undef::: dst:f32:a:blocked:aBcd16b::f0,attr-scratchpad:user,"
    "alg:convolution_direct,mb8_ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3,17.0881";

TEST(OnednnLog, ReadsAReorderOfOneDnn2) {
  bool understood = false;
  auto p = parse_onednn_exec(kReorder2, &understood);
  ASSERT_TRUE(p);
  EXPECT_TRUE(understood);
  EXPECT_EQ(p->kind, "reorder");
  EXPECT_EQ(p->impl, "jit:blk");
  ASSERT_EQ(p->args.size(), 2u);
  EXPECT_EQ(p->args[0].arg, "src");
  EXPECT_EQ(p->args[0].dtype, "f32");
  EXPECT_EQ(p->args[0].format, "abcd");
  EXPECT_EQ(p->args[1].arg, "dst");
  EXPECT_EQ(p->args[1].format, "aBcd16b");
  EXPECT_EQ(p->problem, "8x64x56x56");
  EXPECT_DOUBLE_EQ(p->ms, 0.625);
}

TEST(OnednnLog, ReadsAConvolutionOfBothVersionsAlike) {
  for (const char* line : {kConv2, kConv3}) {
    auto p = parse_onednn_exec(line);
    ASSERT_TRUE(p) << line;
    EXPECT_EQ(p->kind, "convolution");
    EXPECT_EQ(p->prop, "forward_training");
    ASSERT_EQ(p->args.size(), 4u);
    EXPECT_EQ(p->args[1].arg, "wei");
    EXPECT_EQ(p->args[1].format, "Acdb16a");
    EXPECT_EQ(p->args[2].arg, "bia");
    EXPECT_EQ(p->args[2].dtype, "undef");
    EXPECT_EQ(p->args[2].format, "undef");
    EXPECT_EQ(p->args[3].format, "aBcd16b");
    EXPECT_EQ(p->problem, "mb8_ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3");
  }
  auto p3 = parse_onednn_exec(kReorder3);
  ASSERT_TRUE(p3);
  EXPECT_EQ(p3->args[1].format, "Acdb16a");
  EXPECT_DOUBLE_EQ(p3->ms, 7.10303);
}

TEST(OnednnLog, InfoAndHeaderLinesAreNoExecution) {
  for (const char* line : {"onednn_verbose,info,oneDNN v2.6.3 (commit N/A)",
                           "onednn_verbose,v1,info,cpu,runtime:OpenMP,nthr:2",
                           "onednn_verbose,v1,primitive,info,template:operation,engine,primitive,implementation,"
                           "prop_kind,memory_descriptors,attributes,auxiliary,problem_desc,exec_time"}) {
    bool understood = false;
    EXPECT_FALSE(parse_onednn_exec(line, &understood)) << line;
    EXPECT_TRUE(understood) << line;
  }
  EXPECT_EQ(onednn_version("onednn_verbose,v1,info,oneDNN v3.12.0 (commit 80afa71049cd69a3df32adcccb623b12cd7baa22)"),
            "oneDNN v3.12.0 (commit 80afa71049cd69a3df32adcccb623b12cd7baa22)");
  EXPECT_EQ(onednn_version("onednn_verbose,info,oneDNN v2.6.3 (commit N/A)"), "oneDNN v2.6.3 (commit N/A)");
  EXPECT_EQ(onednn_version(kReorder3), "");
}

TEST(OnednnLog, AMalformedExecutionIsNotUnderstood) {
  bool understood = true;
  EXPECT_FALSE(parse_onednn_exec("onednn_verbose,exec,cpu,reorder", &understood));
  EXPECT_FALSE(understood);
  EXPECT_FALSE(parse_onednn_exec("onednn_verbose,exec,cpu,reorder,jit:uni,undef,src?f32,,,8x3,1", &understood));
  EXPECT_FALSE(understood);
  auto p = parse_onednn_exec("onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0,,,8x3,inf");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ms, -1);  // no time claimed where the field is not one
}

TEST(OnednnLog, ATimestampFieldIsSkipped) {
  auto p = parse_onednn_exec(
      "onednn_verbose,1701345678901.25,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 "
      "dst_f32::blocked:acdb:f0,,,2x3x4x5,0.01");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, "reorder");
  EXPECT_EQ(p->args[1].format, "acdb");
}

TEST(OnednnLogSplitter, GivesTheUserTheirBytesInOrderPartialLinesIncluded) {
  LogSplitter s;
  std::vector<std::string> lines;
  // print("step", end="", flush=True), then a oneDNN line, then the rest of the user's line.
  s.feed("hello\nstep", lines);
  s.feed(std::string(kReorder2) + "\n ok\npart", lines);
  s.feed("ial", lines);
  s.finish();
  EXPECT_EQ(s.user_bytes(), "hello\nstep ok\npartial");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], kReorder2);
}

TEST(OnednnLogSplitter, ALineSplitAcrossReadsIsWholeOnceItsNewlineArrives) {
  LogSplitter s;
  std::vector<std::string> lines;
  const std::string line = std::string(kConv3) + "\n";
  s.feed(line.substr(0, 40), lines);
  EXPECT_TRUE(lines.empty());
  s.feed(line.substr(40), lines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], kConv3);
  s.finish();
  EXPECT_EQ(s.user_bytes(), "");
}

}  // namespace
}  // namespace layoutprof
