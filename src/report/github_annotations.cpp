// The gate's findings as GitHub Actions workflow commands, which the runner turns into
// annotations on the pull request's lines (the commands check, diff and --baseline print them
// when GITHUB_ACTIONS is set).
#include "analysis/cause_text.h"
#include "analysis/hazards.h"
#include "report/comparison_text.h"
#include "report/sarif_report.h"
#include "report/source_place.h"

namespace layoutprof {

namespace {

// A workflow command's message: '%', CR and LF escaped (the runner's own encoding).
std::string escape_data(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '%') out += "%25";
    else if (ch == '\r') out += "%0D";
    else if (ch == '\n') out += "%0A";
    else out += ch;
  }
  return out;
}

// A property's value: the message's escapes, and ':' and ',' which end a property.
std::string escape_property(const std::string& s) {
  std::string out;
  for (char ch : escape_data(s)) {
    if (ch == ':') out += "%3A";
    else if (ch == ',') out += "%2C";
    else out += ch;
  }
  return out;
}

std::string command(const std::string& level, const std::string& where, const std::string& title,
                    const std::string& message) {
  std::string props;
  const SourcePlace p = source_place(where);
  if (p.line > 0) props = "file=" + escape_property(p.file) + ",line=" + std::to_string(p.line) + ",";
  return "::" + level + " " + props + "title=" + escape_property(title) + "::" + escape_data(message) + "\n";
}

}  // namespace

std::string github_annotations(const Comparison& c) {
  std::string out;
  const std::string cause_level = finding_level(c, "birthplaces");
  for (const LayoutCause& k : c.fresh_causes)
    out += command(cause_level, k.where, "layoutprof: new layout cause",
                   with_fixes(birthplace_text(k) + "; " + cause_cost_text(k), k.fixes));
  const std::string hazard_level = finding_level(c, "hazards");
  for (const Hazard& h : c.fresh_hazards)
    out += command(hazard_level, h.where, "layoutprof: new hazard", with_fixes(hazard_text(h), h.fixes));
  for (const GateCheck& k : c.checks)
    if (!k.passed && k.rule != "birthplaces" && k.rule != "hazards")
      out += command("error", "", "layoutprof gate: " + k.rule, check_line(k));
  return out;
}

}  // namespace layoutprof
