// The gate's findings where CI shows them: SARIF (a result per new cause and hazard at its line,
// rules per kind, the other failed checks as notifications) and GitHub workflow commands (their
// escaping, a finding without a line).
#include "report/sarif_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

Comparison findings() {
  Comparison c;
  c.model = "model.pt";
  LayoutCause k;
  k.kind = BirthKind::op;
  k.layout = "permuted(0,2,1)";
  k.op_name = "aten::transpose";
  k.where = "blocks/attn.py:24";
  k.code = "x = x.transpose(1, 2)";
  k.copies = 2;
  k.fixes = {".contiguous() after it at blocks/attn.py:24", "100% sure, a, b"};
  c.fresh_causes.push_back(k);
  Hazard h;
  h.kind = HazardKind::model_tensor;
  h.tensor = "buffer `slots`";
  c.fresh_hazards.push_back(h);  // no line
  c.checks.push_back({"total", "birthplaces", false, "0", "1", "1 new"});
  c.checks.push_back({"total", "hazards", true, "0", "1", ""});
  c.checks.push_back({"(top)", "implicit_layout copies", false, "0", "2", "aten::reshape"});
  return c;
}

TEST(Sarif, EachNewFindingIsAResultAtItsLineUnderItsKindsRule) {
  const nlohmann::json log = sarif_log(findings());
  EXPECT_EQ(log["version"], "2.1.0");
  const nlohmann::json& run = log["runs"][0];
  const nlohmann::json& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(run["results"].size(), 2u);
  const nlohmann::json& cause = run["results"][0];
  EXPECT_EQ(cause["ruleId"], "birthplace-op");
  EXPECT_EQ(rules[cause["ruleIndex"].get<size_t>()]["id"], "birthplace-op");
  EXPECT_EQ(cause["level"], "error");
  const nlohmann::json& place = cause["locations"][0]["physicalLocation"];
  EXPECT_EQ(place["artifactLocation"]["uri"], "blocks/attn.py");
  EXPECT_EQ(place["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(place["region"]["startLine"], 24);
  EXPECT_THAT(cause["message"]["text"].get<std::string>(), HasSubstr("\nFix: .contiguous() after it"));
  EXPECT_EQ(cause["properties"]["fixes"].size(), 2u);
  EXPECT_EQ(cause["partialFingerprints"]["layoutprofKey/v1"], birthplace_key(findings().fresh_causes[0]));
  const nlohmann::json& hazard = run["results"][1];
  EXPECT_EQ(hazard["ruleId"], "hazard-model_tensor");
  EXPECT_EQ(hazard["level"], "warning") << "the hazards check passed: the thresholds allowed it";
  EXPECT_EQ(hazard["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "model.pt") << "no line: the model";
  EXPECT_FALSE(hazard["locations"][0]["physicalLocation"].contains("region"));
  const nlohmann::json& notes = run["invocations"][0]["toolExecutionNotifications"];
  ASSERT_EQ(notes.size(), 1u) << "the copy check, which no result stands for";
  EXPECT_THAT(notes[0]["message"]["text"].get<std::string>(), HasSubstr("implicit_layout copies"));
  EXPECT_EQ(run["invocations"][0]["exitCode"], 1);
}

TEST(Sarif, AnInstalledLibrarysLineIsAFileUri) {
  Comparison c = findings();
  c.fresh_causes[0].where = "/usr/lib/python3/dist-packages/torchvision/models/resnet.py:268";
  const nlohmann::json place = sarif_log(c)["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(place["artifactLocation"]["uri"], "file:///usr/lib/python3/dist-packages/torchvision/models/resnet.py");
  EXPECT_FALSE(place["artifactLocation"].contains("uriBaseId"));
}

TEST(GithubAnnotations, OneEscapedCommandPerFindingThenTheFailedChecks) {
  const std::string out = github_annotations(findings());
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(out.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("::error file=blocks/attn.py,line=24,title=layoutprof%3A new layout cause::", 0), 0u)
      << lines[0];
  EXPECT_THAT(lines[0], HasSubstr("%0AFix: .contiguous() after it at blocks/attn.py:24; or 100%25 sure, a, b"));
  EXPECT_EQ(lines[1].rfind("::warning title=layoutprof%3A new hazard::", 0), 0u) << "no line, no file: " << lines[1];
  EXPECT_EQ(lines[2].rfind("::error title=layoutprof gate%3A implicit_layout copies::", 0), 0u) << lines[2];
  EXPECT_EQ(github_annotations(Comparison{}), "");
}

}  // namespace
}  // namespace layoutprof
