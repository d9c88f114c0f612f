#include "report/cause_json.h"

#include "analysis/cause_text.h"
#include "report/json_fields.h"

namespace layoutprof {

using nlohmann::json;

namespace {

json id_or_null_json(int64_t id) { return id < 0 ? json(nullptr) : json(id); }

int64_t op_id(const json& j, int64_t ops, const char* what) {
  const int64_t id = report_json::as<int64_t>(j);
  if (id < 0 || id >= ops) throw std::out_of_range(std::string("a cause's ") + what + " names no op of the report");
  return id;
}

std::vector<int64_t> op_ids(const json& list, int64_t ops, const char* what) {
  std::vector<int64_t> ids;
  for (const json& j : list) ids.push_back(op_id(j, ops, what));
  return ids;
}

}  // namespace

json fix_action_json(const FixAction& a) {
  return {{"kind", fix_kind_name(a.kind)}, {"op", a.op},          {"where", a.where},
          {"format", a.format},            {"input", a.input < 0 ? json(nullptr) : json(a.input)},
          {"tensor", a.tensor},            {"not_applied", a.not_applied}};
}

FixAction fix_action_from(const json& j) {
  using report_json::as;
  FixAction a;
  a.kind = fix_kind_from_name(as<std::string>(j.at("kind")));
  a.op = as<std::string>(j.at("op"));
  a.where = as<std::string>(j.at("where"));
  a.format = as<std::string>(j.at("format"));
  if (!j.at("input").is_null()) a.input = as<int>(j.at("input"));
  a.tensor = as<std::string>(j.at("tensor"));
  a.not_applied = as<std::string>(j.at("not_applied"));
  return a;
}

json cause_json(const LayoutCause& c) {
  json choices = json::array(), actions = json::array();
  for (const FixAction& a : c.actions) actions.push_back(fix_action_json(a));
  for (const LayoutChoice& k : c.choices)
    choices.push_back({{"op", k.op}, {"followed", k.followed}, {"other", k.other}, {"swappable", k.swappable}});
  return {{"layout", c.layout},
          {"birthplace",
           {{"kind", birth_kind_name(c.kind)},
            {"op", id_or_null_json(c.birth_op)},
            {"name", c.op_name},
            {"module", c.module},
            {"modules", c.modules},
            {"from_layout", c.from_layout},
            {"decided_by", c.decided_by < 0 ? json(nullptr) : json(c.decided_by)},
            {"swapped_layout", c.swapped_layout},
            {"input", c.birth_input < 0 ? json(nullptr) : json(c.birth_input)},
            {"input_text", c.input_text},
            {"where", c.where},
            {"code", c.code}}},
          {"text", birthplace_text(c)},
          {"cost_text", cause_cost_text(c)},
          {"chain",
           {{"carriers", c.carriers},
            {"carriers_total", c.carriers_total},
            {"choices", choices},
            {"payers", c.payers},
            {"payers_total", c.payers_total},
            {"payer_modules", c.payer_modules}}},
          {"copies", c.copies},
          {"explicit_copies", c.explicit_copies},
          {"copy_bytes", c.copy_bytes},
          {"copy_ns", c.copy_ns},
          {"mixed_ops", c.mixed_ops},
          {"mixed_without_copy", c.mixed_without_copy},
          {"mixed_bytes", c.mixed_bytes},
          {"gradients", c.gradients},
          {"fixes", c.fixes},
          {"actions", actions},
          {"accepted", c.accepted}};
}

LayoutCause cause_from(const json& j, int64_t ops) {
  using report_json::as;
  LayoutCause c;
  c.layout = as<std::string>(j.at("layout"));
  const json& b = j.at("birthplace");
  c.kind = birth_kind_from_name(as<std::string>(b.at("kind")));
  if (!b.at("op").is_null()) c.birth_op = op_id(b.at("op"), ops, "birthplace");
  if (c.kind == BirthKind::op && c.birth_op < 0) throw std::out_of_range("a cause born at an op names none");
  c.op_name = as<std::string>(b.at("name"));
  c.module = as<std::string>(b.at("module"));
  if (b.contains("modules")) c.modules = as<std::vector<std::string>>(b.at("modules"));
  c.from_layout = as<std::string>(b.at("from_layout"));
  if (b.contains("decided_by") && !b.at("decided_by").is_null()) c.decided_by = as<int>(b.at("decided_by"));
  if (b.contains("swapped_layout")) c.swapped_layout = as<std::string>(b.at("swapped_layout"));
  if (!b.at("input").is_null()) c.birth_input = as<int>(b.at("input"));
  c.input_text = as<std::string>(b.at("input_text"));
  c.where = as<std::string>(b.at("where"));
  c.code = as<std::string>(b.at("code"));
  const json& chain = j.at("chain");
  c.carriers = op_ids(chain.at("carriers"), ops, "carrier");
  c.carriers_total = as<int64_t>(chain.at("carriers_total"));
  for (const json& k : chain.at("choices"))
    c.choices.push_back({op_id(k.at("op"), ops, "choice"), as<int>(k.at("followed")), as<std::string>(k.at("other")),
                         as<bool>(k.at("swappable"))});
  c.payers = op_ids(chain.at("payers"), ops, "payer");
  c.payers_total = as<int64_t>(chain.at("payers_total"));
  c.payer_modules = as<std::vector<std::string>>(chain.at("payer_modules"));
  c.copies = as<int64_t>(j.at("copies"));
  c.explicit_copies = as<int64_t>(j.at("explicit_copies"));
  c.copy_bytes = as<int64_t>(j.at("copy_bytes"));
  c.copy_ns = as<int64_t>(j.at("copy_ns"));
  c.mixed_ops = as<int64_t>(j.at("mixed_ops"));
  c.mixed_without_copy = as<int64_t>(j.at("mixed_without_copy"));
  c.mixed_bytes = as<int64_t>(j.at("mixed_bytes"));
  c.gradients = as<std::vector<std::string>>(j.at("gradients"));
  c.fixes = as<std::vector<std::string>>(j.at("fixes"));
  if (j.contains("actions"))  // reports written before fixes were actions have none
    for (const json& a : j.at("actions")) c.actions.push_back(fix_action_from(a));
  c.accepted = as<bool>(j.at("accepted"));
  return c;
}

}  // namespace layoutprof
