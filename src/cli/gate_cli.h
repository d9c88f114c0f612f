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

// Under GitHub Actions (GITHUB_ACTIONS=true): the comparison's new causes and hazards, and its
// other failed checks, as workflow commands, which the runner shows as annotations. On stdout,
// where the runner reads them, unless a machine-readable document takes stdout
// (`document_on_stdout`): then on stderr. Nothing elsewhere.
void print_github_annotations(const Comparison& c, bool document_on_stdout);

}  // namespace layoutprof
