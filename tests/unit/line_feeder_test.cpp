#include "report/line_feeder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace layoutprof {
namespace {

using nlohmann::json;

// nlohmann's DOM parser that arms the feeder at every array under the key "a", as the
// report reader does at its arrays of entries; the entries passed by are kept as text.
struct Parsed {
  json doc;
  std::vector<std::string> passed;
  size_t fast = 0;
};

Parsed parse(const std::string& text, size_t block = 1 << 20) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  EXPECT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  Parsed out;
  LineFeeder feeder(fds[0], block);
  struct Sax : nlohmann::detail::json_sax_dom_parser<json> {
    Sax(json& j, LineFeeder& f, Parsed& p) : json_sax_dom_parser(j, true), feeder(f), parsed(p) {}
    bool key(json::string_t& k) {
      last_key = k;
      return json_sax_dom_parser::key(k);
    }
    bool start_array(std::size_t n) {
      if (last_key == "a")
        feeder.arm([this](simdjson::dom::element e) { parsed.passed.push_back(simdjson::minify(e)); });
      last_key.clear();
      return json_sax_dom_parser::start_array(n);
    }
    LineFeeder& feeder;
    Parsed& parsed;
    std::string last_key;
  } sax(out.doc, feeder, out);
  try {
    json::sax_parse(feeder.begin(), feeder.end(), &sax);
  } catch (...) {
    ::close(fds[0]);
    throw;
  }
  ::close(fds[0]);
  out.fast = feeder.fast_entries();
  return out;
}

TEST(LineFeeder, PassesOneEntryPerLineByTheParserWhichSeesAnEmptyArray) {
  Parsed p = parse("{\"a\": [\n[1,2],\n  {\"k\": \"v\"} ,\r\n\n[3]\n],\n\"b\": [4]}\n");
  EXPECT_EQ(p.fast, 3u);
  EXPECT_EQ(p.passed, (std::vector<std::string>{"[1,2]", "{\"k\":\"v\"}", "[3]"}));
  EXPECT_EQ(p.doc, json::parse(R"({"a": [], "b": [4]})"));
}

TEST(LineFeeder, AnEntryOnTheBracketsLineLeavesTheArrayToTheParser) {
  Parsed p = parse("{\"a\": [[1,2],\n[3]\n]}");
  EXPECT_EQ(p.fast, 0u);
  EXPECT_EQ(p.doc, json::parse(R"({"a": [[1,2],[3]]})"));
}

TEST(LineFeeder, AnEntrySpreadOverLinesEndsThePassingWithNothingLost) {
  Parsed p = parse("{\"a\": [\n[1,2],\n[3,\n4],\n[5]\n]}");
  EXPECT_EQ(p.fast, 1u);
  EXPECT_EQ(p.doc, json::parse(R"({"a": [[3,4],[5]]})"));
  Parsed shared = parse("{\"a\": [\n[1],\n[2], [3],\n[4]\n]}");  // two entries on a line
  EXPECT_EQ(shared.fast, 1u);
  EXPECT_EQ(shared.doc, json::parse(R"({"a": [[2],[3],[4]]})"));
}

TEST(LineFeeder, WhatIsNotJsonStaysAnError) {
  EXPECT_THROW(parse("{\"a\": [\n[1],\n]}"), JsonSyntaxError) << "a comma before ]";
  EXPECT_THROW(parse("{\"a\": [\n[1]\n[2]\n]}"), json::parse_error) << "no comma between entries";
  EXPECT_THROW(parse("{\"a\": [\n[1],\n[2,]\n]}"), json::parse_error) << "a bad entry goes to the parser";
  EXPECT_THROW(parse("{\"a\": [\n[1],\n"), json::parse_error) << "cut short";
}

TEST(LineFeeder, LinesLongerThanTheBlockGoThroughTheParser) {
  std::string text = "{\"a\": [\n[1],\n[";
  for (int i = 0; i < 100; ++i) text += std::to_string(i) + ",";
  text += "100],\n[7]\n], \"b\": \"" + std::string(300, 'x') + "\"}";
  Parsed p = parse(text, 64);
  EXPECT_EQ(p.fast, 1u);
  json expect = json::parse(text);
  expect["a"].erase(0);
  EXPECT_EQ(p.doc, expect);
}

}  // namespace
}  // namespace layoutprof
