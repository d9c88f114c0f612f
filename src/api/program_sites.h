// Where an op of a C++ program comes from, for a Session: the TorchScript frames running on the
// op's thread (their module path joined under the innermost Scope, their source line), else
// the innermost layoutprof::Scope's name and line. The source probe of module_sites() while a
// Session of the C++ API records. LibTorch inside, none in the interface.
#pragma once

#include <cstdint>

namespace layoutprof {

// The calling thread enters a scope named `name` (joined under the one it is in) opened at
// `file`:`line`, or leaves the innermost one.
void enter_scope(const char* name, const char* file, int line);
void leave_scope();

// module_sites()'s probe: the source line id of the op starting on the calling thread, and in
// `*nested` the TorchScript module path it runs in (ModuleSites::SourceProbe).
uint32_t program_source(uint32_t* nested);

}  // namespace layoutprof
