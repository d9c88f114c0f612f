// The pt2 reader's view of JSON (nlohmann): a parse that refuses deep nesting, and typed reads
// of members that refuse, in one line naming where, what the schema does not allow. `at` is the
// place read so far ("t.pt2: t/models/model.json: graph.nodes[3]"); text from the file in it is
// bounded by whoever appends it. Private to src/pt2.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace layoutprof::pt2 {

using Json = nlohmann::json;

// Deeper JSON than this is refused while parsing (the schema nests a graph inside an argument
// inside a node inside a graph, so a few levels per subgraph; 200 is a program no export writes),
// which also bounds the reader's own recursion over the parsed value.
constexpr int kMaxJsonDepth = 200;

[[noreturn]] void bad(const std::string& at, const std::string& problem);
Json parse_json(const std::string& text, const std::string& at);

// `at` + ".key" / `at` + "[i]".
std::string dot(const std::string& at, const std::string& key);
std::string index(const std::string& at, size_t i);

const Json& member(const Json& object, const char* key, const std::string& at);
// Null where absent or null.
const Json* optional_member(const Json& object, const char* key, const std::string& at);
const Json& object_at(const Json& v, const std::string& at);
const Json& array_at(const Json& v, const std::string& at);
int64_t int_at(const Json& v, const std::string& at);
double float_at(const Json& v, const std::string& at);  // also "Infinity", "-Infinity", "NaN"
bool bool_at(const Json& v, const std::string& at);
const std::string& string_at(const Json& v, const std::string& at);
// A schema union: an object of exactly one member, its field name and value.
Json::const_iterator union_at(const Json& v, const std::string& at);

}  // namespace layoutprof::pt2
