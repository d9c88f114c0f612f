// Every output format behind one interface, as google/benchmark puts its console, JSON and CSV
// output behind BenchmarkReporter: a reporter writes a run's Report, a Comparison of two
// reports (check, diff, --baseline), a FormatComparison (compare-formats), or several of them,
// to a stream. The commands pick one by name.
//
// Adding a format: one file in src/report/ that defines `make_<name>_reporter()`, and one
// line, LAYOUTPROF_REPORTER(<name>), in src/report/reporters.def (the report layer builds
// every .cpp of src/report/).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/format_comparison.h"
#include "gate/gate.h"
#include "analysis/heatmap.h"
#include "report_model/report.h"

namespace layoutprof {

// What the user asked of the output, whatever its format (a format ignores what it has no use for).
struct ReporterOptions {
  GroupBy group_by = GroupBy::module;  // heatmap rows
  int depth = 0;                       // module depth of the rows; 0: automatic (about 40 rows)
  int top = 10;                        // split points listed (text)
  bool color = false;                  // 256-colour shading (text on a terminal)
  bool diff_table = false;             // comparisons: the per-module table (diff), not the verdict only (check)
  bool verbose = false;                // text: the header's whole list of what was measured and not, and why
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string name() const = 0;
  virtual bool writes_reports() const { return false; }
  virtual bool writes_comparisons() const { return false; }
  virtual bool writes_format_comparisons() const { return false; }
  // The whole document. The defaults throw std::logic_error: the commands ask
  // find_reporter() for a reporter of the right kind first.
  virtual void write(std::ostream& out, const Report& report, const ReporterOptions& options) const;
  virtual void write(std::ostream& out, const Comparison& comparison, const ReporterOptions& options) const;
  virtual void write(std::ostream& out, const FormatComparison& formats, const ReporterOptions& options) const;
};

enum class ReportKind { report, comparison, format_comparison };

// The registered reporter of that name writing that kind; UsageError naming the ones that do
// ("--format": the option the name came from, for the message).
const Reporter& find_reporter(const std::string& name, ReportKind kind, const std::string& option = "--format");
// Names of the reporters writing that kind, in registration order.
std::vector<std::string> reporter_names(ReportKind kind);
const std::vector<std::unique_ptr<Reporter>>& all_reporters();

// The document as a string (tests, JUnit files, small outputs).
std::string report_text(const Reporter& reporter, const Report& report, const ReporterOptions& options = {});
std::string comparison_text(const Reporter& reporter, const Comparison& c, const ReporterOptions& options = {});

}  // namespace layoutprof
