// Reports nested too deep: refused with one line wherever the nesting sits, through each
// reader (the file reader's SAX handler, its token path for op rows and its simdjson path for
// entries one per line, and the DOM reader), at the limit's edge and far past it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "support/errors.h"
#include "report/json_report.h"
#include "report/json_fields.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using report_json::kMaxReportDepth;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kMark = "@deep@";
constexpr const char* kTooDeep = "nest deeper than";

// A report with something in every field the readers look at: op rows with counters, a copy
// with counters and sampled addresses, a split point, tensor samples, the run's inputs.
Report rich_report() {
  Call call = testing::transpose_reshape_call();
  int64_t copy = -1;
  for (OpEvent& e : call.events) {
    if (e.parent < 0 || e.name == Str("aten::copy_")) e.counters = {CounterValue{3, 48.0, false}};
    if (e.name == Str("aten::copy_")) copy = e.id;
  }
  call.tensor_samples = {{static_cast<int32_t>(copy), 1, 0, 2}};
  ModelInput mi;
  mi.spec.text = "2x4x3";
  mi.spec.sizes = {2, 4, 3};
  mi.tensor = testing::tensor({2, 4, 3}, {12, 3, 1}, 1);
  Trace t = testing::trace_of({call}, {mi});
  testing::sample_page_faults(t);
  return analyze(t);
}

// Where a deep value goes: replacing the value at `at`, appended to the array at `at`, or
// under a key no reader knows in the object at `at` (a value every reader skips).
struct Position {
  ordered_json::json_pointer at;
  enum How { replace, append, add_key } how;
  // The containers around the deep value, the document included.
  size_t around() const {
    size_t n = 0;
    for (ordered_json::json_pointer p = at; !p.empty(); p = p.parent_pointer()) ++n;
    return how == replace ? n : n + 1;
  }
  std::string name() const {
    return at.to_string() + (how == append ? "/-" : how == add_key ? "/unknown" : "");
  }
};

// Every position of `doc`: each value, each array's end, each object's new key; of the
// entries of an array, which repeat one shape, the first two (an op row's parent is null in
// the first and a number in the second).
std::vector<Position> every_position(const ordered_json& doc) {
  std::vector<Position> out;
  std::vector<ordered_json::json_pointer> todo{ordered_json::json_pointer()};
  while (!todo.empty()) {
    const ordered_json::json_pointer at = todo.back();
    todo.pop_back();
    out.push_back({at, Position::replace});
    const ordered_json& v = doc.at(at);
    if (v.is_array()) {
      out.push_back({at, Position::append});
      for (size_t i = 0; i < v.size() && i < 2; ++i) todo.push_back(at / i);
    } else if (v.is_object()) {
      out.push_back({at, Position::add_key});
      for (const auto& item : v.items()) todo.push_back(at / item.key());
    }
  }
  return out;
}

ordered_json marked(const ordered_json& doc, const Position& p) {
  ordered_json out = doc;
  if (p.how == Position::replace) out[p.at] = kMark;
  if (p.how == Position::append) out[p.at].push_back(kMark);
  if (p.how == Position::add_key) out[p.at]["unknown"] = kMark;
  return out;
}

// An array written one entry per line, as layoutprof writes its arrays of entries (which the
// file reader's simdjson path takes), else on one line.
std::string entries(const ordered_json& v) {
  if (!v.is_array() || v.empty()) return v.dump();
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ",\n" : "\n") + v[i].dump();
  return out + "\n]";
}

// The document laid out as layoutprof writes it: its op rows, tensor table, copies and split
// points one entry per line.
std::string as_written(const ordered_json& doc) {
  if (!doc.is_object()) return doc.dump();
  std::string out = "{";
  for (const auto& [key, v] : doc.items()) {
    out += (out.size() > 1 ? ",\n" : "") + json(key).dump() + ": ";
    if (key == "copies" || key == "split_points") {
      out += entries(v);
    } else if (key == "ops" && v.is_object()) {
      std::string ops = "{";
      for (const auto& [k, t] : v.items())
        ops += (ops.size() > 1 ? ",\n" : "") + json(k).dump() + ": " + (k == "rows" || k == "tensors" ? entries(t) : t.dump());
      out += ops + "}";
    } else {
      out += v.dump();
    }
  }
  return out + "}\n";
}

// The file's texts for a document with a deep value at `p`: as written; on one line, where
// that changes the path it takes (an entry the simdjson path would take, on its own line as
// written); with its keys sorted as JSON tools re-save them, where that changes it (the op
// rows then come before the tables, and stay in the tree, converted at the end).
std::vector<std::string> layouts(const ordered_json& doc, const Position& p) {
  const ordered_json d = marked(doc, p);
  std::vector<std::string> out = {as_written(d)};
  const std::string at = p.at.to_string();
  auto under = [&at](const char* prefix) { return at.rfind(prefix, 0) == 0; };
  if (under("/copies/") || under("/split_points/") || under("/ops/rows/") || under("/ops/tensors/"))
    out.push_back(d.dump());
  if (under("/ops")) out.push_back(json::parse(d.dump()).dump());
  return out;
}

std::string with_nesting(std::string text, size_t arrays) {
  const std::string mark = json(kMark).dump();
  const size_t at = text.find(mark);
  return text.replace(at, mark.size(), std::string(arrays, '[') + std::string(arrays, ']'));
}

// What each reader makes of `text`: its one-line error, or "" when it read a report.
std::vector<std::string> outcomes(const std::string& text) {
  // The process id in the name: two test runs at once (two builds' suites) must not share a file.
  const std::string path = ::testing::TempDir() + "/depth_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "." +
                           std::to_string(getpid()) + ".json";
  std::ofstream(path, std::ios::trunc) << text;
  std::vector<std::function<void()>> readers = {
      [&] { load_report_file(path, OpDetail::full); },       // render
      [&] { load_report_file(path, OpDetail::top_level); },  // check, diff, --baseline
      [&] { report_from_json(json::parse(text)); }};  // a tree the caller parsed
  std::vector<std::string> out;
  for (const auto& read : readers) {
    try {
      read();
      out.emplace_back();
    } catch (const UsageError& e) {
      out.emplace_back(e.what());
    }
  }
  return out;
}

std::vector<ordered_json> documents() {
  const Report r = rich_report();
  ordered_json v2 = ordered_json::parse(report_json_text(r));
  ordered_json v1 = v2;
  v1["schema_version"] = 1;
  v1["ops"] = ordered_json::parse(op_list_json(r).dump());
  return {v2, v1};
}

TEST(JsonReportDepth, JustPastTheLimitAnywhereIsRefusedInOneLineByEveryReader) {
  size_t cases = 0;
  for (const ordered_json& doc : documents())
    for (const Position& p : every_position(doc))
      for (const std::string& text : layouts(doc, p)) {
        for (const std::string& why : outcomes(with_nesting(text, kMaxReportDepth - p.around() + 1))) {
          EXPECT_THAT(why, HasSubstr(kTooDeep)) << p.name();
          EXPECT_EQ(why.find('\n'), std::string::npos) << p.name();
        }
        ++cases;
      }
  EXPECT_GT(cases, 600u) << "every field of both schemas";
}

TEST(JsonReportDepth, AtTheLimitAnywhereIsReadOrRefusedForWhatItHolds) {
  for (const ordered_json& doc : documents())
    for (const Position& p : every_position(doc))
      for (const std::string& text : layouts(doc, p))
        for (const std::string& why : outcomes(with_nesting(text, kMaxReportDepth - p.around()))) {
          EXPECT_THAT(why, Not(HasSubstr(kTooDeep))) << p.name();
          EXPECT_EQ(why.find('\n'), std::string::npos) << p.name();
        }
}

// Values no reader looks at are skipped whole: a report that carries one nested to the limit
// reads as the same report.
TEST(JsonReportDepth, ASkippedValueNestedToTheLimitIsRead) {
  const ordered_json doc = documents()[0];
  const std::string expect = report_json_text(rich_report());
  for (const Position& p : {Position{ordered_json::json_pointer(), Position::add_key},
                            Position{ordered_json::json_pointer("/figures"), Position::replace},
                            Position{ordered_json::json_pointer("/ops/encoding"), Position::replace},
                            Position{ordered_json::json_pointer("/copies/0"), Position::add_key}})
    for (const std::string& text : layouts(doc, p)) {
      const std::string path = ::testing::TempDir() + "/depth_skipped." + std::to_string(getpid()) + ".json";
      std::ofstream(path, std::ios::trunc) << with_nesting(text, kMaxReportDepth - p.around());
      EXPECT_EQ(report_json_text(load_report_file(path)), expect) << p.name();
    }
}

// Hundreds of thousands deep, where the reported crash was (schema_version, the first thing
// read) and in each part of the document and each path an entry can take.
TEST(JsonReportDepth, HundredsOfThousandsDeepIsRefusedInOneLine) {
  const ordered_json doc = documents()[0];
  for (const char* at : {"", "/schema_version", "/run", "/run/inputs/0/tensor/sizes", "/summary/copies",
                         "/ops/names", "/ops/tensors/0", "/ops/rows/0", "/ops/rows/1/8", "/copies/0",
                         "/copies/0/src/strides", "/split_points/0/kinds", "/modules/0", "/tensor_samples/0",
                         "/figures"}) {
    const Position p{ordered_json::json_pointer(at), Position::replace};
    for (const std::string& text : layouts(doc, p))
      for (const std::string& why : outcomes(with_nesting(text, 300000))) {
        EXPECT_THAT(why, HasSubstr(kTooDeep)) << at;
        EXPECT_EQ(why.find('\n'), std::string::npos) << at;
      }
  }
}

}  // namespace
}  // namespace layoutprof
