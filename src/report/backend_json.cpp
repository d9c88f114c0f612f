#include "report/backend_json.h"

#include "report/json_fields.h"

namespace layoutprof {

using nlohmann::json;

namespace {

json call_json(const BackendCall& c) {
  json args = json::array();
  for (const BackendArg& a : c.p.args) args.push_back({{"arg", a.arg}, {"dtype", a.dtype}, {"format", a.format}});
  json j = {{"kind", c.p.kind},
            {"impl", c.p.impl},
            {"prop", c.p.prop},
            {"args", args},
            {"problem", c.p.problem},
            {"ms", c.p.ms < 0 ? json(nullptr) : json(c.p.ms)},
            {"op", c.op < 0 ? json(nullptr) : json(c.op)},
            {"inner", c.p.inner_name}};
  if (c.role != ReorderRole::none) {
    j["role"] = reorder_role_name(c.role);
    j["from"] = c.from();
    j["to"] = c.to();
    j["dims"] = c.dims;
    j["bytes"] = c.bytes;
  }
  return j;
}

BackendCall call_from(const json& j, int64_t ops) {
  using report_json::as;
  BackendCall c;
  c.p.kind = as<std::string>(j.at("kind"));
  c.p.impl = as<std::string>(j.at("impl"));
  c.p.prop = as<std::string>(j.at("prop"));
  for (const json& a : j.at("args"))
    c.p.args.push_back({as<std::string>(a.at("arg")), as<std::string>(a.at("dtype")), as<std::string>(a.at("format"))});
  c.p.problem = as<std::string>(j.at("problem"));
  if (!j.at("ms").is_null()) c.p.ms = as<double>(j.at("ms"));
  if (!j.at("op").is_null()) {
    c.op = as<int64_t>(j.at("op"));
    if (c.op < 0 || c.op >= ops) throw std::out_of_range("a backend primitive names no op of the report");
  }
  c.p.inner_name = as<std::string>(j.at("inner"));
  if (j.contains("role")) {
    c.role = reorder_role_from_name(as<std::string>(j.at("role")));
    c.dims = as<std::vector<int64_t>>(j.at("dims"));
    c.bytes = as<int64_t>(j.at("bytes"));
    if (c.bytes < 0) throw std::out_of_range("a reorder's bytes are negative");
  }
  return c;
}

}  // namespace

json backend_json(const BackendRun& b) {
  json calls = json::array();
  for (const BackendCall& c : b.calls) calls.push_back(call_json(c));
  return {{"state", b.state},
          {"reason", b.reason},
          {"library", b.library},
          {"matched", b.matched},
          {"lines_unparsed", b.lines_unparsed},
          {"call_ns", b.call_ns < 0 ? json(nullptr) : json(b.call_ns)},
          {"primitives", calls}};
}

BackendRun backend_from(const json& j, int64_t ops) {
  using report_json::as;
  BackendRun b;
  b.state = as<std::string>(j.at("state"));
  b.reason = as<std::string>(j.at("reason"));
  b.library = as<std::string>(j.at("library"));
  b.matched = as<bool>(j.at("matched"));
  b.lines_unparsed = as<int64_t>(j.at("lines_unparsed"));
  if (j.contains("call_ns") && !j.at("call_ns").is_null() && (b.call_ns = as<int64_t>(j.at("call_ns"))) < 0)
    throw std::out_of_range("the backend pass's call_ns is negative");
  for (const json& c : j.at("primitives")) b.calls.push_back(call_from(c, ops));
  return b;
}

}  // namespace layoutprof
