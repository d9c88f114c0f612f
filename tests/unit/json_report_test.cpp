#include "report/json_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/analysis.h"
#include "support/errors.h"
#include "report/text_report.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

// A file of this process's own in the temporary folder: two builds' suites run at once.
std::string own_temp(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

using nlohmann::json;
using ::testing::HasSubstr;

// `text` with the line `n` lines after the one that contains `marker` replaced by `line`.
std::string with_line(const std::string& text, const std::string& marker, int n, const std::string& line) {
  size_t at = text.rfind('\n', text.find(marker)) + 1;
  for (int i = 0; i < n; ++i) at = text.find('\n', at) + 1;
  return text.substr(0, at) + line + text.substr(text.find('\n', at));
}

Report sample_report() {
  ModelInput mi;
  mi.spec.text = "2x4x3";
  mi.spec.sizes = {2, 4, 3};
  mi.tensor = testing::tensor({2, 4, 3}, {12, 3, 1}, 1);
  return analyze(testing::trace_of({testing::transpose_reshape_call()}, {mi}));
}

TEST(JsonReport, HasTheDocumentedTopLevelShape) {
  json j = report_to_json(sample_report());
  EXPECT_EQ(j["schema_version"], 2);
  for (const char* key : {"run", "summary", "ops", "copies", "split_points", "modules"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["run"]["status"], "ok");
  EXPECT_TRUE(j["run"]["error"].is_null());
  const json& copies = j["summary"]["copies"];
  EXPECT_EQ(copies.size(), 5u);
  for (const char* c : {"implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout"})
    EXPECT_TRUE(copies.contains(c)) << c;
  EXPECT_EQ(copies["implicit_layout"], 1);
  json ops = op_list_json(report_from_json(j));
  EXPECT_EQ(ops[0]["parent"], nullptr);
  EXPECT_EQ(ops[2]["parent"], 1);
  EXPECT_EQ(j["ops"]["rows"][2][0], 1) << "rows: [parent, name, ...]";
  EXPECT_EQ(j["ops"]["names"][j["ops"]["rows"][0][1].get<size_t>()], "aten::transpose");
  EXPECT_EQ(j["copies"][0]["class"], "implicit_layout");
  EXPECT_EQ(j["copies"][0]["origin"], 0);
  EXPECT_EQ(ops[0]["outputs"][0]["layout"], "permuted(0,2,1)");
  EXPECT_EQ(j["ops"]["tensors"][j["ops"]["rows"][0][9][0].get<size_t>()]["layout"], "permuted(0,2,1)");
}

TEST(JsonReport, RoundTripsExactly) {
  json first = report_to_json(sample_report());
  json second = report_to_json(report_from_json(first));
  EXPECT_EQ(first, second);
}

TEST(JsonReport, ReadsSchemaOneReports) {
  Report r = sample_report();
  json v2 = report_to_json(r);
  json v1 = v2;
  v1["schema_version"] = 1;
  v1["ops"] = op_list_json(r);
  EXPECT_EQ(report_to_json(report_from_json(v1)), v2);
  // Files as the tool writes them (rows converted as they stream by), and with their keys
  // sorted as JSON tools re-save them (rows before the tables they refer to), in both schemas.
  std::vector<std::pair<std::string, std::string>> files = {
      {"written", report_json_text(r)}, {"v2_sorted", v2.dump(2)}, {"v1_sorted", v1.dump(2)}};
  std::string v1_in_order = "{\"schema_version\": 1";
  for (const char* key : {"run", "ops", "summary", "figures", "copies", "split_points", "modules"})
    v1_in_order += std::string(", \"") + key + "\": " + v1[key].dump();
  files.emplace_back("v1", v1_in_order + "}");
  for (const auto& [name, text] : files) {
    std::string path = own_temp("schema_" + name + ".json");
    std::ofstream(path) << text;
    EXPECT_EQ(report_to_json(load_report_file(path)), v2) << name;
  }
}

// Rows read from a file in the written key order go through the SAX path (no JSON tree per
// row): every malformed row is refused with the reader's one line, never a crash.
// A report file with this text is refused as not a report, in one line.
void expect_refused(const std::string& text, const std::string& what) {
  // One file per test: CTest runs tests in parallel.
  std::string path = own_temp(std::string("refused_") +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
  std::ofstream(path) << text;
  for (OpDetail detail : {OpDetail::full, OpDetail::top_level}) {  // as render reads it, and the gate
    try {
      load_report_file(path, detail);
      ADD_FAILURE() << what << ": read without an error (" << (detail == OpDetail::full ? "full" : "top_level") << ")";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("not a valid layoutprof report")) << what;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << what;
    }
  }
}

using Mutate = std::function<void(nlohmann::ordered_json&)>;

// Each mutation of the written report is refused, on one line and indented.
void expect_each_refused(const nlohmann::ordered_json& written,
                         const std::vector<std::pair<std::string, Mutate>>& cases) {
  for (const auto& [what, mutate] : cases) {
    nlohmann::ordered_json doc = written;
    mutate(doc);
    for (const std::string& text : {doc.dump(), doc.dump(1)}) expect_refused(text, what);
  }
}

TEST(JsonReport, MalformedRowsInAFileAreRefusedWithOneLine) {
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(report_json_text(sample_report()));
  ASSERT_EQ(written.begin().key(), "schema_version") << "the written order, rows after their tables";
  using Mutate = std::function<void(nlohmann::ordered_json&)>;
  const std::vector<std::pair<std::string, Mutate>> cases = {
      {"a string for a name index", [](auto& row) { row[1] = "aten::add"; }},
      {"a fraction for a time", [](auto& row) { row[4] = 1.5; }},
      {"a boolean for failed", [](auto& row) { row[7] = true; }},
      {"too short", [](auto& row) { row.erase(row.size() - 1); }},
      {"too long", [](auto& row) { row.push_back(0); row.push_back(0); row.push_back(0); }},
      {"a negative index", [](auto& row) { row[1] = -1; }},
      {"an index past its table", [](auto& row) { row[3] = 1000000; }},
      {"a parent after the op", [](auto& row) { row[0] = 99; }},
      {"past int64", [](auto& row) { row[5] = 18446744073709551615ull; }},
      {"an odd tensor list", [](auto& row) { row[8] = {0}; }},
      {"an object for a tensor list", [](auto& row) { row[9] = {{"a", 1}}; }},
      {"a scalar for a tensor list", [](auto& row) { row[9] = 3; }},
      {"counters of another run", [](auto& row) { row.push_back({1, 1.0, 0}); }},
      {"a thread past uint32", [](auto& row) { row[6] = 1ll << 40; }},
  };
  for (const auto& [what, mutate] : cases) {
    nlohmann::ordered_json row = written["ops"]["rows"][1];
    mutate(row);
    // The document on one line (every byte through nlohmann's parser), and as layoutprof
    // writes it, a row a line (rows through simdjson, one at a time: line_feeder.h).
    nlohmann::ordered_json doc = written;
    doc["ops"]["rows"][1] = row;
    const std::string one_line = doc.dump();
    const std::string line_per_row = with_line(report_json_text(sample_report()), "\"rows\": [", 2, row.dump() + ",");
    for (const std::string* text : {&one_line, &line_per_row}) expect_refused(*text, what);
  }
}

// A real, or an integer past the field's range, where an integer belongs: refused with one
// line by both readers, never converted (a real past int's range converted to int is undefined
// behaviour: the report fuzz target's finding, tests/fuzz/regressions/report/).
TEST(JsonReport, RealsAndOutOfRangeIntegersWhereIntegersBelongAreRefused) {
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(report_json_text(sample_report()));
  using Mutate = std::function<void(nlohmann::ordered_json&)>;
  const std::vector<std::pair<std::string, Mutate>> cases = {
      {"a huge real for a tensor's arg", [](auto& d) { d["ops"]["tensors"][0]["arg"] = 6.66667e105; }},
      {"a real for elem_size", [](auto& d) { d["ops"]["tensors"][0]["elem_size"] = 4.5; }},
      {"an int64 for elem_size", [](auto& d) { d["ops"]["tensors"][0]["elem_size"] = 1ll << 40; }},
      {"a real in a tensor's sizes", [](auto& d) { d["ops"]["tensors"][0]["sizes"][0] = 1e300; }},
      {"a real for run.threads", [](auto& d) { d["run"]["threads"] = 1e20; }},
      {"past int for run.iters", [](auto& d) { d["run"]["iters"] = 1ll << 33; }},
      {"a real for summary.ops", [](auto& d) { d["summary"]["ops"] = 2.5; }},
      {"a real for a module's ops", [](auto& d) { d["modules"][0]["ops"] = -1e30; }},
  };
  expect_each_refused(written, cases);
}

// The summary's totals must be what the op list and copies add up to: a report whose totals
// were edited (to pass a gate, say) is refused before the gate reads them.
TEST(JsonReport, TotalsThatAreNotWhatTheOpsAndCopiesAddUpToAreRefused) {
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(report_json_text(sample_report()));
  ASSERT_FALSE(written["copies"].empty()) << "the sample report has copies";
  using Mutate = std::function<void(nlohmann::ordered_json&)>;
  const std::vector<std::pair<std::string, Mutate>> cases = {
      {"one op more", [](auto& d) { d["summary"]["ops"] = d["summary"]["ops"].template get<int64_t>() + 1; }},
      {"one top-level op less", [](auto& d) { d["summary"]["top_level_ops"] = d["summary"]["top_level_ops"].template get<int64_t>() - 1; }},
      {"no implicit copies", [](auto& d) { for (auto& [k, v] : d["summary"]["copies"].items()) v = 0; }},
      {"fewer bytes copied", [](auto& d) { for (auto& [k, v] : d["summary"]["copy_bytes"].items()) v = 0; }},
      {"a copy of negative bytes", [](auto& d) { d["copies"][0]["bytes"] = -1; }},
      {"another split point count", [](auto& d) { d["summary"]["split_points"] = d["split_points"].size() + 1; }},
  };
  expect_each_refused(written, cases);
}

// The run's words are closed sets (core/run_enums.h): a status, a counter's mode or scope, or
// a run's counter mode outside them is refused in one line by both readers, naming the word.
TEST(JsonReport, UnknownStatusCounterModeAndScopeAreRefused) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()}, sample_report().run.inputs);
  CounterStatus cycles;
  cycles.event = "cycles";
  cycles.reason = "no PMU here";
  t.run.counters = {cycles};
  t.run.counter_mode = CounterMode::counted;
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(report_json_text(analyze(t)));
  ASSERT_EQ(report_to_json(report_from_json(json(written))), json(written)) << "the words read back as written";
  const std::vector<std::tuple<std::string, Mutate, std::string>> cases = {
      {"a status", [](auto& d) { d["run"]["status"] = "crashed"; }, "unknown run status 'crashed'"},
      {"a counter's mode", [](auto& d) { d["run"]["counters"][0]["mode"] = "guessed"; }, "unknown counter mode 'guessed'"},
      {"a counter's scope", [](auto& d) { d["run"]["counters"][0]["scope"] = "socket"; }, "unknown counter scope 'socket'"},
      {"the run's counter mode", [](auto& d) { d["run"]["counter_mode"] = "guessed"; }, "unknown counter mode 'guessed'"},
      {"interval for the run", [](auto& d) { d["run"]["counter_mode"] = "interval"; }, "neither sampled nor counted"},
  };
  for (const auto& [what, mutate, message] : cases) {
    nlohmann::ordered_json doc = written;
    mutate(doc);
    expect_refused(doc.dump(1), what);
    try {
      report_from_json(json(doc));
      ADD_FAILURE() << what << ": read without an error";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << what;
    }
  }
}

// Copies and split points belong to top-level ops, as analyze() makes them: the gate aligns
// top-level ops, and a split point at a nested op "regressed" against its own report (the
// report fuzz target's third finding).
TEST(JsonReport, CulpritsAndSplitPointsThatAreNotTopLevelOpsAreRefused) {
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(report_json_text(sample_report()));
  int64_t nested = -1;
  for (size_t i = 0; i < written["ops"]["rows"].size() && nested < 0; ++i)
    if (!written["ops"]["rows"][i][0].is_null()) nested = static_cast<int64_t>(i);
  ASSERT_GE(nested, 0) << "the sample report has a nested op";
  ASSERT_FALSE(written["copies"].empty());
  nlohmann::ordered_json split = written;
  ASSERT_FALSE(split["split_points"].empty());
  split["split_points"][0]["op"] = nested;
  expect_refused(split.dump(), "a split point at a nested op");
  nlohmann::ordered_json culprit = written;
  culprit["copies"][0]["culprit"] = culprit["copies"][0]["op"];  // the aten::copy_ itself, nested
  expect_refused(culprit.dump(), "a culprit that is not the copy's top-level op");
}

// A report read from a file is the same report whatever the file's layout: as written (its
// op rows, tensors, copies and split points one per line, each parsed alone), re-indented by
// a JSON tool, on one line, or with one entry spread over lines in the middle of its array.
TEST(JsonReport, ReadsTheSameReportWhateverTheFilesLayout) {
  const std::string written = report_json_text(sample_report());
  const json doc = json::parse(written);
  std::string spread = written;
  const size_t row = spread.find("\n", spread.find("\"rows\": [") + 12) + 1;  // the second row
  spread.insert(spread.find(',', row) + 1, "\n   ");
  for (const std::string& text : {written, doc.dump(2), doc.dump(), spread}) {
    const std::string path = own_temp("layout.json");
    std::ofstream(path) << text;
    EXPECT_EQ(report_json_text(load_report_file(path)), written) << text.substr(0, 200);
  }
}

// The gate's read keeps the top-level op events, with their ids, and everything it compares;
// whatever the file's layout and schema. What it read cannot be rendered by mistake.
TEST(JsonReport, TheGatesReadKeepsTheTopLevelOpsWithTheirIds) {
  const Report r = sample_report();
  json v2 = report_to_json(r);
  json v1 = v2;
  v1["schema_version"] = 1;
  v1["ops"] = op_list_json(r);
  std::vector<int32_t> top_ids;
  for (const OpEvent& op : r.ops)
    if (op.parent < 0) top_ids.push_back(op.id);
  ASSERT_LT(top_ids.size(), r.ops.size()) << "the sample has nested ops";
  for (const std::string& text : {report_json_text(r), v2.dump(2), v1.dump()}) {
    const std::string path = own_temp("gate_read.json");
    std::ofstream(path) << text;
    const Report g = load_report_file(path, OpDetail::top_level);
    EXPECT_TRUE(g.top_level_only);
    ASSERT_EQ(g.ops.size(), top_ids.size()) << text.substr(0, 100);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const OpEvent& op = g.ops[i];
      EXPECT_EQ(op.id, top_ids[i]);
      EXPECT_EQ(op.parent, -1);
      EXPECT_EQ(std::string(op.name), std::string(r.ops[op.id].name));
      EXPECT_EQ(std::string(op.module), std::string(r.ops[op.id].module));
      EXPECT_EQ(op.duration_ns, r.ops[op.id].duration_ns);
      EXPECT_TRUE(op.inputs.empty() && op.outputs.empty());
    }
    EXPECT_EQ(g.copies.size(), r.copies.size());
    EXPECT_EQ(g.split_points.size(), r.split_points.size());
    EXPECT_EQ(g.summary.ops, r.summary.ops);
    std::ostringstream out;
    EXPECT_THROW(write_text_report(out, g, TextOptions{}), std::logic_error);
    EXPECT_THROW(report_json_text(g), std::logic_error);
  }
}

TEST(JsonReport, ACommaBeforeTheClosingBracketIsNotJsonOnEitherPath) {
  std::string text = report_json_text(sample_report());
  const size_t rows_end = text.find("\n]", text.find("\"rows\": ["));
  ASSERT_NE(rows_end, std::string::npos);
  text.insert(rows_end, ",");
  std::string one_line = json::parse(report_json_text(sample_report())).dump();
  one_line.insert(one_line.find("]]", one_line.find("\"rows\":[")) + 1, ",");  // in the first row
  for (const std::string& t : {text, one_line}) {
    const std::string path = own_temp("comma.json");
    std::ofstream(path) << t;
    try {
      load_report_file(path);
      ADD_FAILURE() << "read without an error";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("is not valid JSON"));
    }
  }
}

TEST(JsonReport, RepeatedTensorsAndNamesAreStoredOnce) {
  Trace once = testing::trace_of({testing::transpose_reshape_call()});
  Trace looped = once;
  Call& c = looped.calls[0];
  const auto n = static_cast<int64_t>(c.events.size());
  for (int64_t k = 1; k < 100; ++k)  // the same ops again and again, as a loop runs them
    for (int64_t i = 0; i < n; ++i) {
      OpEvent e = c.events[i];
      e.id += k * n;
      if (e.parent >= 0) e.parent += k * n;
      c.events.push_back(e);
    }
  json one = report_to_json(analyze(once)), many = report_to_json(analyze(looped));
  EXPECT_EQ(many["ops"]["rows"].size(), 100u * n);
  EXPECT_EQ(many["ops"]["names"], one["ops"]["names"]);
  EXPECT_EQ(many["ops"]["tensors"], one["ops"]["tensors"]);
  EXPECT_EQ(many["ops"]["names"].size(), 5u);
}

TEST(JsonReport, FailedRunCarriesItsError) {
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  t.run.status = RunStatus::failed;
  t.run.error = "RuntimeError: boom";
  json j = report_to_json(analyze(t));
  EXPECT_EQ(j["run"]["status"], "failed");
  EXPECT_EQ(j["run"]["error"], "RuntimeError: boom");
  EXPECT_EQ(report_from_json(j).run.error, "RuntimeError: boom");
}

// compare-formats' variants carry their conversion and plain calls; a plain run's report has
// neither key, as before.
TEST(JsonReport, AVariantsConversionAndPlainCallsRoundTrip) {
  EXPECT_FALSE(report_to_json(sample_report()).at("run").contains("conversion"));
  EXPECT_FALSE(report_to_json(sample_report()).at("run").contains("plain_call_ns"));
  Trace t = testing::trace_of({testing::transpose_reshape_call()});
  t.run.inputs = sample_report().run.inputs;
  t.run.conversion = {"channels_last", 2, 8, 1, 3, 1};
  t.run.plain_call_ns = {1200, 1100, 1300};
  json j = report_to_json(analyze(t));
  EXPECT_EQ(j["run"]["conversion"], json::parse(R"({"to": "channels_last", "parameters": 2, "parameters_total": 8,
                                                    "buffers": 1, "buffers_total": 3, "inputs": 1})"));
  EXPECT_EQ(j["run"]["plain_call_ns"], json::parse("[1200, 1100, 1300]"));
  Report back = report_from_json(j);
  EXPECT_EQ(back.run.conversion.buffers_total, 3);
  EXPECT_EQ(back.run.plain_call_ns, (std::vector<int64_t>{1200, 1100, 1300}));
  EXPECT_EQ(report_to_json(back), j);
  // Values no run writes are refused.
  for (const auto& [what, mutate] : std::vector<std::pair<std::string, std::function<void(json&)>>>{
           {"negative time", [](json& d) { d["run"]["plain_call_ns"][1] = -5; }},
           {"real time", [](json& d) { d["run"]["plain_call_ns"][1] = 1.5; }},
           {"unknown format", [](json& d) { d["run"]["conversion"]["to"] = "nhwc"; }},
           {"more than there were", [](json& d) { d["run"]["conversion"]["parameters"] = 9; }},
           {"more inputs than the run has", [](json& d) { d["run"]["conversion"]["inputs"] = 2; }}}) {
    json bad = j;
    mutate(bad);
    EXPECT_THROW(report_from_json(bad), UsageError) << what;
  }
}

// A run whose counters were sampled: the mode, period and sample counts, where the samples'
// addresses fell (the copy's source and destination), through the JSON and back.
TEST(JsonReport, SampledCountersAndTheirAddressesRoundTrip) {
  Call call = testing::transpose_reshape_call();
  int64_t copy = -1;
  for (OpEvent& e : call.events) {
    if (e.parent < 0 || e.name == Str("aten::copy_")) e.counters = {CounterValue{3, 48.0, false}};
    if (e.name == Str("aten::copy_")) copy = e.id;
  }
  ASSERT_GE(copy, 0);
  call.tensor_samples = {{static_cast<int32_t>(copy), 1, 0, 2},  // the copy's source (input 1)
                         {static_cast<int32_t>(copy), static_cast<int32_t>(call.events[copy].inputs.size()), 0, 1}};
  Trace t = testing::trace_of({call});
  t.run.inputs = sample_report().run.inputs;
  testing::sample_page_faults(t);
  const Report r = analyze(t);
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].src_samples, std::vector<uint64_t>{2});
  EXPECT_EQ(r.copies[0].dst_samples, std::vector<uint64_t>{1});
  json j = report_to_json(r);
  EXPECT_EQ(j["figures"]["counters"], "sampled");
  EXPECT_EQ(j["run"]["counter_mode"], "sampled");
  EXPECT_EQ(j["run"]["counters"][0]["period"], 16);
  EXPECT_EQ(j["run"]["counters"][0]["attributed"], 9);
  EXPECT_EQ(j["copies"][0]["address_samples"], json::parse(R"({"page-faults": {"source": 2, "destination": 1}})"));
  EXPECT_EQ(j["tensor_samples"].size(), 2u);
  const Report back = report_from_json(j);
  EXPECT_EQ(back.run.counters[0].mode, CounterMode::sampled);
  EXPECT_EQ(back.tensor_samples.size(), 2u);
  EXPECT_EQ(report_to_json(back), j);
  std::ostringstream text;
  write_text_report(text, back, TextOptions{});
  EXPECT_THAT(text.str(), HasSubstr("page-faults (sampled, one every 16): 96 +- 42 (6 samples) over the top-level ops"));
  EXPECT_THAT(text.str(), HasSubstr("2 samples (32) in aten::copy_'s input 1"));
  // A mean over calls: the error shrinks with them, the line says over how many (and so does a
  // report read back), and a report from before `calls` reads as one call.
  json over = j;
  over["run"]["counters"][0]["calls"] = 3;
  const Report three = report_from_json(over);
  EXPECT_EQ(three.run.counters[0].calls, 3);
  std::ostringstream three_text;
  write_text_report(three_text, three, TextOptions{});
  EXPECT_THAT(three_text.str(), HasSubstr("96 +- 16 (6 samples over 3 calls, their mean) over the top-level ops"));
  over["run"]["counters"][0].erase("calls");
  EXPECT_EQ(report_from_json(over).run.counters[0].calls, 1);
  for (const auto& [what, mutate] : std::vector<std::pair<std::string, std::function<void(json&)>>>{
           {"a period of 0", [](json& d) { d["run"]["counters"][0]["period"] = 0; }},
           {"more attributed than sampled", [](json& d) { d["run"]["counters"][0]["attributed"] = 11; }},
           {"no call", [](json& d) { d["run"]["counters"][0]["calls"] = 0; }},
           {"an unknown mode", [](json& d) { d["run"]["counters"][0]["mode"] = "guessed"; }},
           {"a tensor its op does not have", [](json& d) { d["tensor_samples"][0][1] = 9; }},
           {"an op out of range", [](json& d) { d["tensor_samples"][0][0] = 999; }},
           {"a counter out of range", [](json& d) { d["tensor_samples"][0][2] = 1; }},
           {"not four numbers", [](json& d) { d["tensor_samples"][0] = json::array({1, 2}); }}}) {
    json bad = j;
    mutate(bad);
    EXPECT_THROW(report_from_json(bad), UsageError) << what;
  }
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
      {"other version", [](json& j) { j["schema_version"] = 3; }, "schema_version 3 is not supported"},
      {"missing run", [](json& j) { j.erase("run"); }, "not a valid layoutprof report"},
      {"wrong type", [](json& j) { j["ops"]["rows"][0][4] = "zero"; }, "not a valid layoutprof report"},
      {"bad class", [](json& j) { j["copies"][0]["class"] = "sideways"; }, "unknown copy class"},
      {"dangling id", [](json& j) { j["copies"][0]["culprit"] = 99; }, "not in the report"},
      {"bad parent", [](json& j) { j["ops"]["rows"][1][0] = 3; }, "bad id or parent"},
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
