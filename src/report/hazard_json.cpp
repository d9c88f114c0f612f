#include "report/hazard_json.h"

#include "analysis/hazards.h"
#include "report/json_fields.h"

namespace layoutprof {

using nlohmann::json;

json hazard_json(const Hazard& h) {
  return {{"kind", hazard_kind_name(h.kind)},
          {"certainty", h.certainty},
          {"op", h.op < 0 ? json(nullptr) : json(h.op)},
          {"name", h.op_name},
          {"module", h.module},
          {"where", h.where},
          {"code", h.code},
          {"tensor", h.tensor},
          {"layout", h.layout},
          {"sharing", h.sharing},
          {"maker", h.maker},
          {"maker_where", h.maker_where},
          {"detail", h.detail},
          {"fixes", h.fixes},
          {"count", h.count},
          {"outside_calls", h.outside_calls},
          {"accepted", h.accepted},
          {"text", hazard_text(h)}};
}

Hazard hazard_from(const json& j, int64_t ops) {
  using report_json::as;
  Hazard h;
  h.kind = hazard_kind_from_name(as<std::string>(j.at("kind")));
  h.certainty = as<std::string>(j.at("certainty"));
  if (h.certainty != "yes" && h.certainty != "could not tell")
    throw std::out_of_range("a hazard's certainty is \"yes\" or \"could not tell\"");
  if (!j.at("op").is_null()) {
    h.op = as<int64_t>(j.at("op"));
    if (h.op < 0 || h.op >= ops) throw std::out_of_range("a hazard names no op of the report");
  }
  h.op_name = as<std::string>(j.at("name"));
  h.module = as<std::string>(j.at("module"));
  h.where = as<std::string>(j.at("where"));
  h.code = as<std::string>(j.at("code"));
  h.tensor = as<std::string>(j.at("tensor"));
  h.layout = as<std::string>(j.at("layout"));
  h.sharing = as<int64_t>(j.at("sharing"));
  h.maker = as<std::string>(j.at("maker"));
  h.maker_where = as<std::string>(j.at("maker_where"));
  h.detail = as<std::string>(j.at("detail"));
  h.fixes = as<std::vector<std::string>>(j.at("fixes"));
  h.count = as<int64_t>(j.at("count"));
  h.outside_calls = as<bool>(j.at("outside_calls"));
  h.accepted = as<bool>(j.at("accepted"));
  return h;
}

}  // namespace layoutprof
