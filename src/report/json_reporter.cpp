// JSON: a run's report (json_report.h, schema in report.schema.json) and a comparison, for
// dashboards: the verdict, every gate check and each module's figures, baseline and new.
#include <nlohmann/json.hpp>

#include "report/format_comparison_report.h"
#include "report/json_report.h"
#include "report/reporter.h"
#include "report/comparison_json.h"

namespace layoutprof {

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json checks = nlohmann::json::array(), modules = nlohmann::json::array();
  for (const GateCheck& k : c.checks)
    checks.push_back({{"scope", k.scope}, {"rule", k.rule}, {"passed", k.passed}, {"before", k.before},
                      {"after", k.after}, {"detail", k.detail}});
  auto both = [](const int64_t (&v)[2]) { return nlohmann::json::array({v[0], v[1]}); };
  for (const ModuleDiff& d : c.modules)
    modules.push_back({{"module", d.module},
                       {"in_base", d.in_base},
                       {"in_new", d.in_new},
                       {"implicit_copies", both(d.implicit)},
                       {"explicit_copies", both(d.explicit_copies)},
                       {"copy_bytes", both(d.copy_bytes)},
                       {"split_points", both(d.split_points)},
                       {"dtlb_walks", both(d.dtlb_walks)},
                       {"time_ns", both(d.time_ns)}});
  return {{"layoutprof_comparison", 1},
          {"base", c.base_name},
          {"new", c.new_name},
          {"regressed", c.regressed()},
          {"regressions", c.regressions()},
          {"checks", checks},
          {"modules", modules},
          {"notes", c.notes},
          {"figures", "each module pair is [base, new]: copies, bytes and split points derived, DTLB walks "
                      "modelled, time measured"}};
}

namespace {

class JsonReporter : public Reporter {
 public:
  std::string name() const override { return "json"; }
  bool writes_reports() const override { return true; }
  bool writes_comparisons() const override { return true; }
  void write(std::ostream& out, const Report& r, const ReporterOptions&) const override { write_report_json(out, r); }
  void write(std::ostream& out, const Comparison& c, const ReporterOptions&) const override {
    out << dump_json(comparison_json(c)) << "\n";
  }
  bool writes_format_comparisons() const override { return true; }
  void write(std::ostream& out, const FormatComparison& c, const ReporterOptions&) const override {
    write_format_comparison_json(out, c);
  }
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter() { return std::make_unique<JsonReporter>(); }

}  // namespace layoutprof
