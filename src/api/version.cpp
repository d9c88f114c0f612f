// layoutprof::library_version(): the version the library was built as (layoutprof/version.h).
#include "layoutprof/version.h"

namespace layoutprof {

const char* library_version() { return LAYOUTPROF_VERSION_STRING; }

}  // namespace layoutprof
