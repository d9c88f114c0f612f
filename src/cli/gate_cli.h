// What the run command shares with check and diff.
#pragma once

#include <string>

#include "cli/commands.h"
#include "support/atomic_file.h"
#include "gate/gate.h"

namespace layoutprof {

GateOptions gate_options(const GateCliOptions& g);

// Refuses incomparable reports (UsageError), compares, and writes --junit if asked.
Comparison compare_files_or_reports(const Report& base, const std::string& base_name, const Report& now,
                                    const std::string& new_name, const GateOptions& options,
                                    const std::string& junit);

}  // namespace layoutprof
