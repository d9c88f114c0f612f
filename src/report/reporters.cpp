// The registry of output formats (reporters.def) and the Reporter defaults.
#include <sstream>
#include <stdexcept>

#include "support/errors.h"
#include "report/reporter.h"

namespace layoutprof {

#define LAYOUTPROF_REPORTER(name) std::unique_ptr<Reporter> make_##name##_reporter();
#include "report/reporters.def"
#undef LAYOUTPROF_REPORTER

void Reporter::write(std::ostream&, const Report&, const ReporterOptions&) const {
  throw std::logic_error("the " + name() + " format writes comparisons only");
}

void Reporter::write(std::ostream&, const Comparison&, const ReporterOptions&) const {
  throw std::logic_error("the " + name() + " format writes no comparison of two reports");
}

void Reporter::write(std::ostream&, const FormatComparison&, const ReporterOptions&) const {
  throw std::logic_error("the " + name() + " format writes no compare-formats result");
}

const std::vector<std::unique_ptr<Reporter>>& all_reporters() {
  static const std::vector<std::unique_ptr<Reporter>> reporters = [] {
    std::vector<std::unique_ptr<Reporter>> r;
#define LAYOUTPROF_REPORTER(name) r.push_back(make_##name##_reporter());
#include "report/reporters.def"
#undef LAYOUTPROF_REPORTER
    return r;
  }();
  return reporters;
}

namespace {

bool writes(const Reporter& r, ReportKind kind) {
  switch (kind) {
    case ReportKind::report: return r.writes_reports();
    case ReportKind::comparison: return r.writes_comparisons();
    case ReportKind::format_comparison: return r.writes_format_comparisons();
  }
  return false;
}

}  // namespace

std::vector<std::string> reporter_names(ReportKind kind) {
  std::vector<std::string> names;
  for (const auto& r : all_reporters())
    if (writes(*r, kind)) names.push_back(r->name());
  return names;
}

const Reporter& find_reporter(const std::string& name, ReportKind kind, const std::string& option) {
  for (const auto& r : all_reporters())
    if (r->name() == name && writes(*r, kind)) return *r;
  std::string known;
  for (const std::string& n : reporter_names(kind)) known += (known.empty() ? "" : ", ") + n;
  const char* what = kind == ReportKind::report       ? "a run report"
                     : kind == ReportKind::comparison ? "a comparison"
                                                      : "a compare-formats result";
  throw UsageError(option + " " + name + ": " + what + " is written as " + known);
}

std::string report_text(const Reporter& reporter, const Report& report, const ReporterOptions& options) {
  std::ostringstream out;
  reporter.write(out, report, options);
  return out.str();
}

std::string comparison_text(const Reporter& reporter, const Comparison& c, const ReporterOptions& options) {
  std::ostringstream out;
  reporter.write(out, c, options);
  return out.str();
}

}  // namespace layoutprof
