// The gradient verdicts' names, as the JSON report spells them.
#include <stdexcept>
#include <string>

#include "core/trace.h"

namespace layoutprof {

namespace {
constexpr const char* kVerdictNames[] = {"match", "size1_only", "layout_mismatch", "no_grad", "frozen"};
constexpr int kVerdicts = sizeof kVerdictNames / sizeof kVerdictNames[0];
}  // namespace

const char* grad_verdict_name(GradVerdict v) { return kVerdictNames[static_cast<int>(v)]; }

GradVerdict grad_verdict_from_name(const std::string& name) {
  for (int i = 0; i < kVerdicts; ++i)
    if (name == kVerdictNames[i]) return static_cast<GradVerdict>(i);
  throw std::invalid_argument("unknown gradient verdict '" + name + "'");
}

}  // namespace layoutprof
