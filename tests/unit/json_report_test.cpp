#include "layoutprof/json_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "layoutprof/analysis.h"
#include "layoutprof/errors.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

Report sample_report() {
  ModelInput mi;
  mi.spec.text = "2x4x3";
  mi.spec.sizes = {2, 4, 3};
  mi.tensor = testing::tensor({2, 4, 3}, {12, 3, 1}, 1);
  return analyze(testing::trace_of({testing::transpose_reshape_call()}, {mi}));
}

TEST(JsonReport, HasTheDocumentedTopLevelShape) {
  json j = report_to_json(sample_report());
  EXPECT_EQ(j["schema_version"], 1);
  for (const char* key : {"run", "summary", "ops", "copies", "split_points", "modules"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["run"]["status"], "ok");
  EXPECT_TRUE(j["run"]["error"].is_null());
  const json& copies = j["summary"]["copies"];
  EXPECT_EQ(copies.size(), 5u);
  for (const char* c : {"implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout"})
    EXPECT_TRUE(copies.contains(c)) << c;
  EXPECT_EQ(copies["implicit_layout"], 1);
  EXPECT_EQ(j["ops"][0]["parent"], nullptr);
  EXPECT_EQ(j["ops"][2]["parent"], 1);
  EXPECT_EQ(j["copies"][0]["class"], "implicit_layout");
  EXPECT_EQ(j["copies"][0]["origin"], 0);
  EXPECT_EQ(j["ops"][0]["outputs"][0]["layout"], "permuted(0,2,1)");
}

TEST(JsonReport, RoundTripsExactly) {
  json first = report_to_json(sample_report());
  json second = report_to_json(report_from_json(first));
  EXPECT_EQ(first, second);
}

TEST(JsonReport, FailedRunCarriesItsError) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  t.run.status = "failed";
  t.run.error = "RuntimeError: boom";
  json j = report_to_json(analyze(t));
  EXPECT_EQ(j["run"]["status"], "failed");
  EXPECT_EQ(j["run"]["error"], "RuntimeError: boom");
  EXPECT_EQ(report_from_json(j).run.error, "RuntimeError: boom");
}

struct BadDoc {
  const char* what;
  std::function<void(json&)> mutate;
  const char* message;
};

TEST(JsonReport, RefusesDocumentsThatAreNotReports) {
  std::vector<BadDoc> cases = {
      {"array", [](json& j) { j = json::array(); }, "not an object"},
      {"no version", [](json& j) { j.erase("schema_version"); }, "no schema_version"},
      {"other version", [](json& j) { j["schema_version"] = 2; }, "schema_version 2 is not supported"},
      {"missing run", [](json& j) { j.erase("run"); }, "not a valid layoutprof report"},
      {"wrong type", [](json& j) { j["ops"][0]["id"] = "zero"; }, "not a valid layoutprof report"},
      {"bad class", [](json& j) { j["copies"][0]["class"] = "sideways"; }, "unknown copy class"},
      {"dangling id", [](json& j) { j["copies"][0]["culprit"] = 99; }, "not in the report"},
      {"bad parent", [](json& j) { j["ops"][1]["parent"] = 3; }, "bad id or parent"},
  };
  for (const BadDoc& c : cases) {
    json j = report_to_json(sample_report());
    c.mutate(j);
    try {
      report_from_json(j);
      ADD_FAILURE() << "accepted: " << c.what;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.what;
    }
  }
}

TEST(JsonReport, LoadReportFileNamesTheFile) {
  try {
    load_report_file("/nonexistent/report.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'/nonexistent/report.json'"));
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
  }
}

}  // namespace
}  // namespace layoutprof
