// LAYOUTPROF_API marks what liblayoutprof exports: the classes and functions of this folder.
// The library is built with hidden visibility (and a version script, src/api/exports.map), so
// nothing else of it, and none of the libraries built into it, is seen by the program.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define LAYOUTPROF_API __attribute__((visibility("default")))
#else
#define LAYOUTPROF_API
#endif
