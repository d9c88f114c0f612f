// Compiled as a file of the analysis layer: the allowed file, plus one include of a reporter's
// header. The reporters sit above the analysis, so their folder is not on its include path and
// this must not compile (layers.ForbiddenIncludeFails checks the compiler's message).
#include "analysis_includes_report_model.cpp"
#include "report/reporter.h"
