#include "pt2/json_input.h"

#include <limits>

#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

const char* type_name(const Json& v) { return v.type_name(); }

}  // namespace

// An `at` ending in ": " is a file's top level ("t.pt2: t/models/model.json: "), before any member.
void bad(const std::string& at, const std::string& problem) {
  throw ModelLoadError(at.back() == ' ' ? at + problem : at + ": " + problem);
}

// nlohmann's parser calls back at each value's start with its depth; throwing there stops it
// before the nesting reaches the stack (destroying a deep value recurses too).
Json parse_json(const std::string& text, const std::string& at) {
  const Json::parser_callback_t limit_depth = [&at](int depth, Json::parse_event_t event, Json&) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      bad(at, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return Json::parse(text, limit_depth);
  } catch (const Json::exception& e) {
    bad(at, "invalid JSON (" + bounded(e.what(), 200) + ")");
  }
}

std::string dot(const std::string& at, const std::string& key) {
  return at + (at.back() == ' ' ? "" : ".") + bounded(key, 80);
}
std::string index(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }

const Json& member(const Json& object, const char* key, const std::string& at) {
  const auto it = object_at(object, at).find(key);
  if (it == object.end()) bad(at, std::string("no member '") + key + "'");
  return *it;
}

const Json* optional_member(const Json& object, const char* key, const std::string& at) {
  const auto it = object_at(object, at).find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const Json& object_at(const Json& v, const std::string& at) {
  if (!v.is_object()) bad(at, std::string("an object expected, found ") + type_name(v));
  return v;
}

const Json& array_at(const Json& v, const std::string& at) {
  if (!v.is_array()) bad(at, std::string("an array expected, found ") + type_name(v));
  return v;
}

int64_t int_at(const Json& v, const std::string& at) {
  if (v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max())))
    return v.get<int64_t>();
  bad(at, std::string("a 64-bit integer expected, found ") + (v.is_number() ? "the number " + bounded(v.dump(), 40) : type_name(v)));
}

// The exporter writes infinities and NaN as these strings (JSON has no such numbers).
double float_at(const Json& v, const std::string& at) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  bad(at, std::string("a number expected, found ") + (v.is_string() ? "\"" + bounded(v.get<std::string>(), 40) + "\"" : type_name(v)));
}

bool bool_at(const Json& v, const std::string& at) {
  if (!v.is_boolean()) bad(at, std::string("true or false expected, found ") + type_name(v));
  return v.get<bool>();
}

const std::string& string_at(const Json& v, const std::string& at) {
  if (!v.is_string()) bad(at, std::string("a string expected, found ") + type_name(v));
  return v.get_ref<const std::string&>();
}

Json::const_iterator union_at(const Json& v, const std::string& at) {
  if (object_at(v, at).size() != 1) bad(at, "one field expected (a schema union), found " + std::to_string(v.size()));
  return v.begin();
}

}  // namespace layoutprof::pt2
