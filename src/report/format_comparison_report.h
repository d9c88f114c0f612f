// The writers of a FormatComparison (compare-formats): the text on stdout and the --json
// document. Another writer (HTML) takes the same struct.
#pragma once

#include <ostream>

#include "analysis/format_comparison.h"

namespace layoutprof {

constexpr int kCompareFormatsVersion = 2;  // the --json document's compare_formats_version

struct FormatTextOptions {
  size_t copy_groups = 20;  // copy groups listed per variant and kind (added, avoided, resized)
};

// The header, the copies per module, the plain calls' spread, the verdict, and the copies each
// variant adds or avoids against as_given.
void write_format_comparison_text(std::ostream& out, const FormatComparison& c, const FormatTextOptions& options = {});

// One JSON document: every variant (its conversion, plain-call spread, rows and its whole
// report as write_report_json writes it, embedded) and the verdict. Written as it goes.
void write_format_comparison_json(std::ostream& out, const FormatComparison& c);

}  // namespace layoutprof
