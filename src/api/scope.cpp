// layoutprof::Scope: a named scope on its thread (api/program_sites.h).
#include "layoutprof/scope.h"

#include "api/program_sites.h"

namespace layoutprof {

Scope::Scope(const char* name, const char* file, int line) { enter_scope(name, file, line); }

Scope::~Scope() { leave_scope(); }

}  // namespace layoutprof
