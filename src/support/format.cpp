#include "support/format.h"

// {fmt} is used in .cpp files of the torch-free layers only, never in a header: a 2.x wheel
// ships its own fmt headers under torch/include, which would shadow Debian's (the library
// linked) in any file compiled with torch's include path.
#include <fmt/format.h>

namespace layoutprof {

// One call, no stream: the text report formats a number per heatmap cell this way.
std::string fixed(double v, int precision) { return fmt::format("{:.{}f}", v, precision); }

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

std::string ms_of(double ns) { return fmt::format("{:.{}f}", ns / 1e6, ns >= 1e6 ? 2 : 3); }

std::string general(double x) { return fmt::format("{:.2g}", x); }

}  // namespace layoutprof
