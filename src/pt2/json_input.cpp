#include "pt2/json_input.h"

#include <limits>

#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

using simdjson::dom::element_type;

const char* type_name(const Json& v) {
  switch (v.type()) {
    case element_type::ARRAY: return "array";
    case element_type::OBJECT: return "object";
    case element_type::INT64: case element_type::UINT64: case element_type::DOUBLE: return "number";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "?";
}

std::string number_text(const Json& v) { return bounded(simdjson::minify(v), 40); }

}  // namespace

// An `at` ending in ": " is a file's top level ("t.pt2: t/models/model.json: "), before any member.
void bad(const std::string& at, const std::string& problem) {
  throw ModelLoadError(at.back() == ' ' ? at + problem : at + ": " + problem);
}

// The parser's depth limit stops nesting before the reader's recursion sees it.
JsonDocument parse_json(const std::string& text, const std::string& at) {
  JsonDocument doc{std::make_unique<simdjson::dom::parser>(), {}};
  const simdjson::error_code sized = doc.parser->allocate(std::max<size_t>(text.size(), 64), kMaxJsonDepth);
  if (sized) bad(at, std::string("cannot parse its JSON (") + simdjson::error_message(sized) + ")");
  const simdjson::padded_string padded(text);
  const simdjson::error_code e = doc.parser->parse(padded).get(doc.root);
  if (e == simdjson::DEPTH_ERROR) bad(at, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  if (e) bad(at, std::string("invalid JSON (") + simdjson::error_message(e) + ")");
  return doc;
}

std::string dot(const std::string& at, std::string_view key) {
  return at + (at.back() == ' ' ? "" : ".") + bounded(std::string(key), 80);
}
std::string index(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }

Json member(const Json& object, const char* key, const std::string& at) {
  Json v;
  if (object_at(object, at).at_key(key).get(v)) bad(at, std::string("no member '") + key + "'");
  return v;
}

std::optional<Json> optional_member(const Json& object, const char* key, const std::string& at) {
  Json v;
  if (object_at(object, at).at_key(key).get(v) || v.is_null()) return std::nullopt;
  return v;
}

JsonObject object_at(const Json& v, const std::string& at) {
  JsonObject o;
  if (v.get(o)) bad(at, std::string("an object expected, found ") + type_name(v));
  return o;
}

JsonArray array_at(const Json& v, const std::string& at) {
  JsonArray a;
  if (v.get(a)) bad(at, std::string("an array expected, found ") + type_name(v));
  return a;
}

int64_t int_at(const Json& v, const std::string& at) {
  int64_t i = 0;
  if (!v.get(i)) return i;
  bad(at, std::string("a 64-bit integer expected, found ") + (v.is_number() ? "the number " + number_text(v) : type_name(v)));
}

// The exporter writes infinities and NaN as these strings (JSON has no such numbers).
double float_at(const Json& v, const std::string& at) {
  double d = 0;
  if (v.is_number() && !v.get(d)) return d;
  std::string_view s;
  if (!v.get(s)) {
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    bad(at, "a number expected, found \"" + bounded(std::string(s), 40) + "\"");
  }
  bad(at, std::string("a number expected, found ") + type_name(v));
}

bool bool_at(const Json& v, const std::string& at) {
  bool b = false;
  if (v.get(b)) bad(at, std::string("true or false expected, found ") + type_name(v));
  return b;
}

std::string string_at(const Json& v, const std::string& at) {
  std::string_view s;
  if (v.get(s)) bad(at, std::string("a string expected, found ") + type_name(v));
  return std::string(s);
}

UnionField union_at(const Json& v, const std::string& at) {
  const JsonObject o = object_at(v, at);
  if (o.size() != 1) bad(at, "one field expected (a schema union), found " + std::to_string(o.size()));
  const auto field = *o.begin();
  return {field.key, field.value};
}

}  // namespace layoutprof::pt2
