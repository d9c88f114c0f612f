// torch.compile's section of the text report (report_model/compiled.h): the recompiles with
// their guards and layouts, the layout copies inductor's code makes every call with their
// lines, automatic dynamic promotions, recompile_limit hits, graph breaks and the caches. It
// comes on the first screen, before the verdict; compiled_verdict() is the verdict's line.
#pragma once

#include <ostream>
#include <string>

#include "report_model/report.h"

namespace layoutprof {

void write_compiled(std::ostream& out, const CompiledRun& c);
// "  and torch.compile: ..." (with its newline), or "" when nothing was compiled.
std::string compiled_verdict(const CompiledRun& c);

}  // namespace layoutprof
