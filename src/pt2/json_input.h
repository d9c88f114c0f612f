// The pt2 reader's view of JSON (simdjson's DOM: the parse lives in one tape that is handed back
// whole once the program's structs are built, so a large model.json leaves no parsed tree behind
// in the heap), and typed reads of members that refuse, in one line naming where, what the
// schema does not allow. `at` is the place read so far ("t.pt2: t/models/model.json:
// graph.nodes[3]"); text from the file in it is bounded by whoever appends it. Private to src/pt2.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace layoutprof::pt2 {

using Json = simdjson::dom::element;
using JsonArray = simdjson::dom::array;
using JsonObject = simdjson::dom::object;

// Deeper JSON than this is refused while parsing (the schema nests a graph inside an argument
// inside a node inside a graph, so a few levels per subgraph; 200 is a program no export writes),
// which also bounds the reader's own recursion over the parsed value.
constexpr int kMaxJsonDepth = 200;

// A parsed document: `root` is valid while the document lives.
struct JsonDocument {
  std::unique_ptr<simdjson::dom::parser> parser;
  Json root;
};

[[noreturn]] void bad(const std::string& at, const std::string& problem);
JsonDocument parse_json(const std::string& text, const std::string& at);

// `at` + ".key" / `at` + "[i]".
std::string dot(const std::string& at, std::string_view key);
std::string index(const std::string& at, size_t i);

Json member(const Json& object, const char* key, const std::string& at);
// Empty where absent or null.
std::optional<Json> optional_member(const Json& object, const char* key, const std::string& at);
JsonObject object_at(const Json& v, const std::string& at);
JsonArray array_at(const Json& v, const std::string& at);
int64_t int_at(const Json& v, const std::string& at);
double float_at(const Json& v, const std::string& at);  // also "Infinity", "-Infinity", "NaN"
bool bool_at(const Json& v, const std::string& at);
std::string string_at(const Json& v, const std::string& at);

// A schema union: an object of exactly one member, its field name and value.
struct UnionField {
  std::string_view key;
  Json value;
};
UnionField union_at(const Json& v, const std::string& at);

}  // namespace layoutprof::pt2
