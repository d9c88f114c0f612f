// check and diff as SARIF 2.1.0 (--format sarif) and as GitHub workflow annotations: the new
// causes and hazards at their files and lines, where code-scanning views and pull requests
// show them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gate/gate.h"

namespace layoutprof {

// A finding's text, then its fixes: "...\nFix: A; or B".
std::string with_fixes(std::string text, const std::vector<std::string>& fixes);

// A new finding's level in both formats: "error" where the gate's `check` ("birthplaces",
// "hazards") failed on it, "warning" where the thresholds allowed it.
inline const char* finding_level(const Comparison& c, const char* check) {
  return c.failed(check) ? "error" : "warning";
}

// The SARIF log: one run, a result per new cause and hazard (rules per kind), the gate's other
// failed checks as the invocation's notifications.
nlohmann::json sarif_log(const Comparison& c);

// One workflow command a line ("::error file=F,line=L,title=T::message"): each new cause and
// hazard at its line (error where its check failed, warning where the thresholds allowed it),
// then each other failed check without a place. Empty when nothing is new and nothing failed.
std::string github_annotations(const Comparison& c);

}  // namespace layoutprof
