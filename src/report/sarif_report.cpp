// A Comparison as SARIF 2.1.0 (check/diff --format sarif), the format code-scanning views read:
// each cause and hazard the baseline did not have is a result at its file and line, with its
// fixes in its message, under a rule per kind (birthplace-op, hazard-lost_write, ...); an error
// where the gate failed on it, a warning where the thresholds allowed it. The gate's other
// failed checks, which have no line, are the invocation's notifications.
#include "report/sarif_report.h"

#include "analysis/cause_text.h"
#include "analysis/hazards.h"
#include "report/comparison_text.h"
#include "report/json_out.h"
#include "report/reporter.h"
#include "report/source_place.h"

namespace layoutprof {

namespace {

using nlohmann::json;

struct Rule {
  std::string id, text;
};

std::vector<Rule> rules() {
  return {
      {"birthplace-op", "A layout born at an op: its output took a layout its inputs did not have, and later ops pay "
                        "for it (implicit copies, mixed-format ops, gradients to convert)."},
      {"birthplace-model_input", "A layout that arrived with a model input, and that later ops pay for."},
      {"birthplace-unrecorded", "A layout of a parameter, a buffer or a tensor made before the recorded call, that "
                                "later ops pay for."},
      {"hazard-aliased_write", "An in-place write into elements that several positions share: the result depends on "
                               "the order of the writes."},
      {"hazard-lost_write", "An in-place write into a copy that nothing reads afterwards: the write is lost."},
      {"hazard-failed_view", "view() raised on its input's strides."},
      {"hazard-refused_write", "PyTorch refused an in-place write for its overlap."},
      {"hazard-model_tensor", "A parameter or buffer that is not dense, or shares another's storage."},
      {"hazard-stride_assertion", "Compiled code's check of an op's real strides against its fake kernel's raised."},
  };
}

size_t rule_index(const std::string& id) {
  const std::vector<Rule> all = rules();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].id == id) return i;
  throw std::logic_error("sarif: no rule " + id);
}

json rules_json() {
  json out = json::array();
  for (const Rule& r : rules())
    out.push_back({{"id", r.id},
                   {"shortDescription", {{"text", r.text}}},
                   {"help", {{"text", "layoutprof's src/report/REPORT.md: " +
                                          std::string(r.id.rfind("hazard", 0) == 0 ? "Hazards" : "Causes")}}}});
  return out;
}

// An artifact's location: a path relative to the repository as it is, an absolute one (an
// installed library's) as a file URI.
json artifact(const std::string& file) {
  if (!file.empty() && file[0] == '/') return {{"uri", "file://" + file}};
  return {{"uri", file}, {"uriBaseId", "%SRCROOT%"}};
}

// Where a result is: its line, or the model file where the report knows none.
json locations(const std::string& where, const std::string& model) {
  const SourcePlace p = source_place(where);
  json physical = {{"artifactLocation", artifact(p.line > 0 ? p.file : model)}};
  if (p.line > 0) physical["region"] = {{"startLine", p.line}};
  return json::array({{{"physicalLocation", physical}}});
}

json result(const std::string& rule, const std::string& level, const std::string& text,
            const std::vector<std::string>& fixes, const json& where, const std::string& key) {
  json fix_list = json::array();
  for (const std::string& f : fixes) fix_list.push_back(f);
  return {{"ruleId", rule},
          {"ruleIndex", rule_index(rule)},
          {"level", level},
          {"message", {{"text", with_fixes(text, fixes)}}},
          {"locations", where},
          {"partialFingerprints", {{"layoutprofKey/v1", key}}},
          {"properties", {{"fixes", fix_list}}}};
}

json results(const Comparison& c) {
  json out = json::array();
  const std::string cause_level = finding_level(c, "birthplaces");
  for (const LayoutCause& k : c.fresh_causes)
    out.push_back(result(std::string("birthplace-") + birth_kind_name(k.kind), cause_level,
                         "New layout cause: " + birthplace_text(k) + (k.code.empty() ? "" : " (`" + k.code + "`)") +
                             "; " + cause_cost_text(k),
                         k.fixes, locations(k.where, c.model), birthplace_key(k)));
  const std::string hazard_level = finding_level(c, "hazards");
  for (const Hazard& h : c.fresh_hazards)
    out.push_back(result(std::string("hazard-") + hazard_kind_name(h.kind), hazard_level, "New hazard: " + hazard_text(h),
                         h.fixes, locations(h.where, c.model), hazard_gate_key(h)));
  return out;
}

// The gate's failed checks that no result stands for (they have no line).
json notifications(const Comparison& c) {
  json out = json::array();
  for (const GateCheck& k : c.checks)
    if (!k.passed && k.rule != "birthplaces" && k.rule != "hazards")
      out.push_back({{"level", "error"}, {"message", {{"text", check_line(k)}}}});
  return out;
}

}  // namespace

std::string with_fixes(std::string text, const std::vector<std::string>& fixes) {
  for (size_t i = 0; i < fixes.size(); ++i) text += (i ? "; or " : "\nFix: ") + fixes[i];
  return text;
}

json sarif_log(const Comparison& c) {
  json invocation = {{"executionSuccessful", true},
                     {"exitCode", c.regressed() ? 1 : 0},
                     {"toolExecutionNotifications", notifications(c)}};
  json run = {{"tool", {{"driver", {{"name", "layoutprof"}, {"version", LAYOUTPROF_VERSION}, {"rules", rules_json()}}}}},
              {"invocations", json::array({invocation})},
              {"originalUriBaseIds", {{"%SRCROOT%", {{"description", {{"text", "the directory the model's "
                                                                              "lines are relative to"}}}}}}},
              {"results", results(c)},
              {"properties", {{"baseline", c.base_name}, {"new", c.new_name}, {"regressed", c.regressed()}}}};
  return {{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({run})}};
}

namespace {

class SarifReporter : public Reporter {
 public:
  std::string name() const override { return "sarif"; }
  bool writes_comparisons() const override { return true; }
  void write(std::ostream& out, const Comparison& c, const ReporterOptions&) const override {
    out << sarif_log(c).dump(1) << "\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> make_sarif_reporter() { return std::make_unique<SarifReporter>(); }

}  // namespace layoutprof
