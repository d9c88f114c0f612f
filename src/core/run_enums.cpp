// The names of run_enums.h's values, one table per enum, read both ways.
#include "core/run_enums.h"

#include <array>
#include <stdexcept>

#include "support/errors.h"

namespace layoutprof {

namespace {

constexpr std::array<const char*, 3> kRunStatus = {"ok", "failed", "interrupted"};
constexpr std::array<const char*, 3> kCounterMode = {"counted", "sampled", "interval"};
constexpr std::array<const char*, 2> kCounterScope = {"thread", "system"};

template <typename E, size_t N>
E lookup(const std::array<const char*, N>& names, const std::string& name, const char* what) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<E>(i);
  std::string known;
  for (size_t i = 0; i < N; ++i) known += std::string(i ? ", " : "") + names[i];
  throw std::invalid_argument("unknown " + std::string(what) + " '" + bounded(name) + "' (" + known + ")");
}

}  // namespace

std::string to_string(RunStatus v) { return kRunStatus.at(static_cast<size_t>(v)); }
std::string to_string(CounterMode v) { return kCounterMode.at(static_cast<size_t>(v)); }
std::string to_string(CounterScope v) { return kCounterScope.at(static_cast<size_t>(v)); }

template <>
RunStatus from_string<RunStatus>(const std::string& name) {
  return lookup<RunStatus>(kRunStatus, name, "run status");
}
template <>
CounterMode from_string<CounterMode>(const std::string& name) {
  return lookup<CounterMode>(kCounterMode, name, "counter mode");
}
template <>
CounterScope from_string<CounterScope>(const std::string& name) {
  return lookup<CounterScope>(kCounterScope, name, "counter scope");
}

}  // namespace layoutprof
