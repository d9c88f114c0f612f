// The user's source line of an op, read from the Python stack of the thread that runs it.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>

namespace layoutprof {

// Frames whose file lies under one of these folders are not the user's (torch's package,
// layoutprof's own); the nearest other frame is. Call once, with the GIL held.
void set_library_folders(const std::string& torch_folder, const std::string& package_folder);

// A Python callable (file, line) -> None, (file, line) or (file, line, module): where a line of
// generated code comes from (inductor's code for a compiled region: the user's line of the FX
// node it runs, and the node's module path inside the compiled module when it is known). Asked
// once per new (code, line); None forgets it. Call with the GIL held.
void set_source_translator(PyObject* translator);

// ModuleSites' source probe: takes the GIL (the op's Python binding has released it), finds the
// nearest user frame of the calling thread, and interns its "file:line" and text once. 0 on a
// thread that has never run Python (it does not wait for the GIL there), or while Python is
// finalizing.
uint32_t user_source_now(uint32_t* nested_module);

}  // namespace layoutprof
