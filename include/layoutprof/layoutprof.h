// layoutprof's C++ API, all of it: Session (session.h), SessionReport (report.h), Scope
// (scope.h), describe_model (torchscript.h), the version (version.h).
// include/layoutprof/README.md says how to use it.
#pragma once

#include "layoutprof/report.h"
#include "layoutprof/scope.h"
#include "layoutprof/session.h"
#include "layoutprof/torchscript.h"
#include "layoutprof/version.h"
