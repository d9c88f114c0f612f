// A Comparison as JUnit XML: one test case per gate check, failed where it regressed, so that
// a CI system shows each regression as a failed test.
#include <sstream>

#include "report/comparison_text.h"
#include "report/reporter.h"
#include "report/markup.h"

namespace layoutprof {

std::string junit_xml(const Comparison& c) {
  std::ostringstream out;
  int failed = c.regressions();
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"layoutprof\" tests=\"" << c.checks.size() << "\" failures=\"" << failed << "\">\n";
  out << "  <testsuite name=\"layoutprof gate\" tests=\"" << c.checks.size() << "\" failures=\"" << failed
      << "\" errors=\"0\" skipped=\"0\">\n";
  for (const GateCheck& k : c.checks) {
    out << "    <testcase classname=\"layoutprof." << xml_escape(k.scope) << "\" name=\"" << xml_escape(k.rule) << "\"";
    if (k.passed) {
      out << "/>\n";
    } else {
      out << ">\n      <failure message=\"" << xml_escape(k.rule + " " + k.before + " → " + k.after) << "\">"
          << xml_escape(check_line(k)) << "</failure>\n    </testcase>\n";
    }
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}


namespace {

class JunitReporter : public Reporter {
 public:
  std::string name() const override { return "junit"; }
  bool writes_comparisons() const override { return true; }
  void write(std::ostream& out, const Comparison& c, const ReporterOptions&) const override { out << junit_xml(c); }
};

}  // namespace

std::unique_ptr<Reporter> make_junit_reporter() { return std::make_unique<JunitReporter>(); }

}  // namespace layoutprof
