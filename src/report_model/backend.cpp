// The reorder roles' names, as the JSON report spells them, and a reorder's two formats.
#include "report_model/backend.h"

#include <stdexcept>

namespace layoutprof {

const char* reorder_role_name(ReorderRole r) {
  switch (r) {
    case ReorderRole::none: return "none";
    case ReorderRole::activation: return "activation";
    case ReorderRole::weight: return "weight";
    case ReorderRole::other: return "other";
  }
  return "none";
}

ReorderRole reorder_role_from_name(const std::string& name) {
  for (ReorderRole r : {ReorderRole::none, ReorderRole::activation, ReorderRole::weight, ReorderRole::other})
    if (name == reorder_role_name(r)) return r;
  throw std::invalid_argument("unknown reorder role '" + name + "'");
}

namespace {

// The format of the first argument named `arg` ("" when there is none).
std::string format_of(const BackendPrimitive& p, const char* arg) {
  for (const BackendArg& a : p.args)
    if (a.arg == arg) return a.format;
  return "";
}

}  // namespace

std::string BackendCall::from() const { return p.kind == "reorder" ? format_of(p, "src") : ""; }
std::string BackendCall::to() const { return p.kind == "reorder" ? format_of(p, "dst") : ""; }

}  // namespace layoutprof
