#include "analysis/what_if_plan.h"

#include <set>

namespace layoutprof {

namespace {

// Two actions alike in every field: a plan is listed once.
std::string action_key(const FixAction& a) {
  return std::string(fix_kind_name(a.kind)) + "|" + a.op + "|" + a.where + "|" + a.format + "|" +
         std::to_string(a.input) + "|" + a.tensor + "|" + a.not_applied;
}

}  // namespace

std::string fix_name(const FixAction& a) {
  switch (a.kind) {
    case FixKind::contiguous_at:
    case FixKind::swap_operands: return std::string(fix_kind_name(a.kind)) + " " + a.op + " at " + a.where;
    case FixKind::feed_input: return "input " + std::to_string(a.input) + " as " + a.format;
    case FixKind::convert_model: return "model as " + a.format;
    case FixKind::dense_parameter: return a.tensor + " as " + a.format;
    case FixKind::none: break;
  }
  return fix_kind_name(a.kind);
}

std::vector<VariantPlan> what_if_plans(const Report& r, int top) {
  std::vector<VariantPlan> plans;
  std::set<std::string> seen;
  auto add = [&](std::vector<FixAction> actions, std::vector<int64_t> causes) {
    std::string key, name;
    for (const FixAction& a : actions) {
      key += action_key(a) + ";";
      name += (name.empty() ? "" : " + ") + fix_name(a);
    }
    if (seen.insert(key).second) plans.push_back({name, std::move(actions), std::move(causes)});
  };
  std::vector<FixAction> firsts;
  std::vector<int64_t> first_causes;
  int taken = 0;
  for (size_t i = 0; i < r.causes.size() && taken < top; ++i) {
    const LayoutCause& c = r.causes[i];
    if (c.accepted || c.actions.empty()) continue;
    ++taken;
    const auto index = static_cast<int64_t>(i);
    add({c.actions[0]}, {index});
    for (size_t k = 1; k < c.actions.size(); ++k)
      if (c.actions[k].kind == FixKind::swap_operands || c.actions[k].kind == FixKind::none) add({c.actions[k]}, {index});
    for (size_t k = 1; k < c.actions.size(); ++k)
      if (c.actions[k].kind == FixKind::convert_model) {
        add({c.actions[k]}, {index});
        break;
      }
    // The model's conversion put first (what the backend pass saw, cause_text.h): the fix at the
    // birthplace is measured beside it, so that the measurement decides between them.
    if (c.actions[0].kind == FixKind::convert_model)
      for (size_t k = 1; k < c.actions.size(); ++k) {
        const FixKind kind = c.actions[k].kind;
        if (kind == FixKind::convert_model || kind == FixKind::swap_operands || kind == FixKind::none) continue;
        add({c.actions[k]}, {index});
        break;
      }
    if (c.actions[0].kind != FixKind::none) {
      firsts.push_back(c.actions[0]);
      first_causes.push_back(index);
    }
  }
  if (firsts.size() > 1) add(firsts, first_causes);
  return plans;
}

}  // namespace layoutprof
