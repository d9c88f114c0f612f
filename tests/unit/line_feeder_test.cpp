#include "report/line_feeder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace layoutprof {
namespace {

using nlohmann::json;

// A tree built on nlohmann's public SAX interface, which arms the feeder at every array under
// the key "a", as the report reader does at its arrays of entries; the entries passed by are
// kept as text.
struct Parsed {
  json doc;
  std::vector<std::string> passed;
  size_t fast = 0;
};

class Sax final : public nlohmann::json_sax<json> {
 public:
  Sax(json& doc, LineFeeder& feeder, Parsed& parsed) : doc_(doc), feeder_(feeder), parsed_(parsed) {}
  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(v); }
  bool binary(binary_t& v) override { return put(json::binary(v)); }
  bool start_object(std::size_t) override {
    open_.push_back(place(json::object()));
    return true;
  }
  bool key(string_t& k) override {
    last_key_ = k;
    slot_ = &(*open_.back())[k];
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (last_key_ == "a")
      feeder_.arm([this](simdjson::dom::element e) { parsed_.passed.push_back(simdjson::minify(e)); });
    last_key_.clear();
    open_.push_back(place(json::array()));
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&e)) throw *pe;
    throw e;
  }

 private:
  json* place(json&& v) {
    if (open_.empty()) {
      doc_ = std::move(v);
      return &doc_;
    }
    if (!open_.back()->is_array()) {
      *slot_ = std::move(v);
      return slot_;
    }
    open_.back()->push_back(std::move(v));
    return &open_.back()->back();
  }
  bool put(json v) {
    place(std::move(v));
    return true;
  }

  json& doc_;
  LineFeeder& feeder_;
  Parsed& parsed_;
  std::vector<json*> open_;
  json* slot_ = nullptr;
  std::string last_key_;
};

Parsed parse(const std::string& text, size_t block = 1 << 20, size_t max_entry_depth = simdjson::DEFAULT_MAX_DEPTH) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  EXPECT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  Parsed out;
  LineFeeder feeder(fds[0], block, max_entry_depth);
  Sax sax(out.doc, feeder, out);
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

// The report reader bounds an entry's depth so that the document's stays within its limit: an
// entry nested deeper goes to the parser, which counts the document's depth as a whole.
TEST(LineFeeder, AnEntryNestedDeeperThanItsBoundGoesToTheParser) {
  Parsed p = parse("{\"a\": [\n[1],\n[[[1]]],\n[2]\n]}", 1 << 20, 2);
  EXPECT_EQ(p.fast, 1u);
  EXPECT_EQ(p.passed, (std::vector<std::string>{"[1]"}));
  EXPECT_EQ(p.doc, json::parse(R"({"a": [[[[1]]], [2]]})"));
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
