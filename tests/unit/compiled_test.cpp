// torch.compile's section of a report (report_model/compiled.h): read and written as JSON, its
// text on the first screen, and the gate on recompiles an input's layout caused.
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.h"
#include "gate/gate.h"
#include "report/compiled_json.h"
#include "report/compiled_text.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Recompile stride_recompile() {
  Recompile r;
  r.compile_id = "0/1";
  r.function = "forward";
  r.where = "model.py:30";
  r.step = 1;
  r.reason = "0/0: tensor 'x' stride mismatch at index 1. expected 256, actual 1";
  r.tensor = "x";
  r.kind = "stride";
  r.dim = 1;
  r.expected = "256";
  r.actual = "1";
  r.compile_s = 1.5;
  r.before = "f32[2, 3, 16, 16][768, 256, 16, 1]";
  r.after = "f32[2, 3, 16, 16][768, 1, 48, 3]";
  r.layout = true;
  r.called_at = "train.py:49";
  r.fix = "make `x`'s layout the same every step";
  return r;
}

CompiledRun compiled_run() {
  CompiledRun c;
  c.seen = true;
  c.torch = "2.14.1";
  c.records = "structured trace";
  CompiledGraph g;
  g.compile_id = "0/0";
  g.function = "forward";
  g.where = "model.py:30";
  g.inputs = {{"x", "f32[2, 3, 16, 16][768, 256, 16, 1]"}};
  g.layout_opt = "on";
  CompiledCopy input{"input", "x", "f32[2, 3, 16, 16][768, 256, 16, 1]", "f32[2, 3, 16, 16][768, 1, 48, 3]", 6144, true,
                     "cpp_fused_convolution_0", "the extern convolution", "c1", "model.py:31", "y = self.c1(x)"};
  CompiledCopy weight = input;
  weight.kind = "weight";
  weight.tensor = "parameter `c1.weight`";
  weight.bytes = 3456;
  g.copies = {input, weight};
  c.graphs = {g};
  c.recompiles = {stride_recompile()};
  c.dynamic = {{"0/1", "L['x'].stride()[0]", "768"}};
  c.breaks = {{"1/0", 0, "model.py:40", "Call to `torch._dynamo.graph_break()`", {"x f32[2, 4][4, 1]"}}};
  c.fx_cache_misses = 2;
  return c;
}

Report report_with(CompiledRun c) {
  Call call;
  testing::add_op(call, "aten::relu", -1, {testing::tensor({4}, {1})}, {testing::tensor({4}, {1})});
  Report r = analyze(testing::trace_of({std::move(call)}));
  r.compiled = std::move(c);
  return r;
}

TEST(Compiled, TheJsonReportCarriesTheSectionAndReadsItBack) {
  const Report r = report_with(compiled_run());
  const nlohmann::json doc = report_to_json(r);
  ASSERT_TRUE(doc.contains("compiled"));
  EXPECT_EQ(doc["compiled"]["summary"]["layout_recompiles"], 1);
  EXPECT_EQ(doc["compiled"]["summary"]["copy_bytes_per_call"], 6144 + 3456);
  const Report back = report_from_json(doc);
  ASSERT_TRUE(back.compiled.seen);
  EXPECT_EQ(compiled_json(back.compiled), compiled_json(r.compiled));
  nlohmann::json plain = report_to_json(report_with(CompiledRun{}));
  EXPECT_FALSE(plain.contains("compiled"));  // nothing compiled: no section
}

TEST(Compiled, AnEntryThatIsNotOneIsRefused) {
  nlohmann::json j = compiled_json(compiled_run());
  j["graphs"][0]["copies"][0]["kind"] = "somewhere";
  EXPECT_THROW(compiled_from(j), std::out_of_range);
  j = compiled_json(compiled_run());
  j["recompiles"][0].erase("fix");
  EXPECT_ANY_THROW(compiled_from(j));
}

TEST(Compiled, TheFirstScreenNamesTheRecompileAndTheCopiesWithTheirLines) {
  std::ostringstream out;
  write_text_report(out, report_with(compiled_run()), {});
  const std::string text = out.str();
  const std::string first = text.substr(0, text.find("\nHeatmap"));
  EXPECT_TRUE(contains(first, "recompiles: 1 in the run, 1 caused by an input's layout")) << first;
  EXPECT_TRUE(contains(first, "`x` stride at dim 1: expected 256, actual 1")) << first;
  EXPECT_TRUE(contains(first, "called at train.py:49")) << first;
  EXPECT_TRUE(contains(first, "before the extern convolution in c1 (model.py:31)")) << first;
  EXPECT_TRUE(contains(first, "1 weight converted to another layout on every call")) << first;
  EXPECT_TRUE(contains(first, "graph break (model.py:40)")) << first;
  EXPECT_TRUE(contains(first, "and torch.compile: 1 recompile (1 caused by an input's layout: make `x`'s layout")) << first;
  EXPECT_EQ(compiled_verdict(CompiledRun{}), "");
}

TEST(Compiled, TheGateFailsOnANewLayoutRecompileOnly) {
  const Report none = report_with(CompiledRun{});
  const Report now = report_with(compiled_run());
  auto check = [](const Comparison& c) {
    for (const GateCheck& k : c.checks)
      if (contains(k.rule, "recompiles")) return k;
    ADD_FAILURE() << "no recompile check";
    return GateCheck{};
  };
  const Comparison c = compare_reports(none, now, GateOptions{});
  EXPECT_FALSE(check(c).passed);
  EXPECT_TRUE(contains(check(c).detail, "1 new: forward (model.py:30)")) << check(c).detail;
  EXPECT_TRUE(check(compare_reports(now, now, GateOptions{})).passed);
  GateOptions lenient;
  lenient.max_new_recompiles = 1;
  EXPECT_TRUE(check(compare_reports(none, now, lenient)).passed);
  CompiledRun sizes = compiled_run();
  sizes.recompiles[0].kind = "size";
  sizes.recompiles[0].layout = false;
  EXPECT_TRUE(check(compare_reports(none, report_with(sizes), GateOptions{})).passed);
  for (const GateCheck& k : compare_reports(report_with(CompiledRun{}), report_with(CompiledRun{}), GateOptions{}).checks)
    EXPECT_FALSE(contains(k.rule, "recompiles"));  // nothing compiled on either side: no check
}

}  // namespace
}  // namespace layoutprof
