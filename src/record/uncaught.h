// std::uncaught_exceptions() for the recorder's hot path, without its call.
//
// The callbacks compare the count at an op's start and end (more at the end: the op threw).
// std::uncaught_exceptions() reaches the C++ runtime's per-thread exception globals through
// __tls_get_addr on every call, about 5 ns, twice an op event. The Itanium C++ ABI (2.2.2)
// lays those globals out as { __cxa_exception* caughtExceptions; unsigned int
// uncaughtExceptions; }, and libstdc++ and libc++abi both follow it; __cxa_get_globals()
// returns the calling thread's, at an address that stays valid for the thread's life. Taken
// once per thread, the count is one load.
#pragma once

#include <cxxabi.h>

namespace layoutprof {

class UncaughtCount {
 public:
  // The calling thread's count: read it on this thread only.
  UncaughtCount() : globals_(reinterpret_cast<const Globals*>(abi::__cxa_get_globals())) {}
  unsigned int now() const { return globals_->uncaught; }

 private:
  struct Globals {  // Itanium C++ ABI 2.2.2 __cxa_eh_globals
    void* caught;
    unsigned int uncaught;
  };
  const Globals* globals_;
};

}  // namespace layoutprof
