// The comparison's text forms, behind the text, markdown and junit reporters (reporter.h).
#pragma once

#include <string>

#include "gate/gate.h"

namespace layoutprof {

enum class DiffFormat { text, markdown };
// The verdict, regressions and notes; with_table: each module's figures, baseline → new.
std::string format_comparison(const Comparison& c, DiffFormat format, bool with_table);
std::string junit_xml(const Comparison& c);
// "scope: rule before → after: detail".
std::string check_line(const GateCheck& k);

}  // namespace layoutprof
