// The flags that give the run's settings: the layers below the CLI say what is wrong with a
// setting (support/setting_error.h) and the CLI says which flag gave it, so that a message
// the user sees names what they typed ("--input '2xQ': 'Q' is not a dimension").
#pragma once

#include <string>

#include "support/setting_error.h"

namespace layoutprof {

inline const char* setting_flag(Setting s) {
  switch (s) {
    case Setting::input: return "--input";
    case Setting::device: return "--device";
    case Setting::backward: return "--backward";
    case Setting::events: return "--events";
    case Setting::tlb: return "--tlb";
  }
  return setting_name(s);
}

// Runs `f`; a SettingError from it comes out as a UsageError that names `flag` (by default,
// the flag of the setting it is about).
template <typename F>
auto with_flag(F&& f, const char* flag = nullptr) -> decltype(f()) {
  try {
    return f();
  } catch (const SettingError& e) {
    throw UsageError(e.naming(flag ? flag : setting_flag(e.setting())));
  }
}

}  // namespace layoutprof
