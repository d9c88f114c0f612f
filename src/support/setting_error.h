// A usage error in one setting of a run (an input, the device, the training step, an event
// list, the DTLB model), said without naming how the setting was given: the layers below the
// CLI say what is wrong with it, and the CLI, which knows the flag, names that
// (cli/setting_flags.h).
#pragma once

#include <string>

#include "support/errors.h"

namespace layoutprof {

enum class Setting { input, device, backward, events, tlb };

// The setting's name where no flag is named: "input '2xQ': ...", "training step: ...".
inline const char* setting_name(Setting s) {
  switch (s) {
    case Setting::input: return "input";
    case Setting::device: return "device";
    case Setting::backward: return "training step";
    case Setting::events: return "event list";
    case Setting::tlb: return "TLB";
  }
  return "setting";
}

class SettingError : public UsageError {
 public:
  // `detail` follows the setting's name, or its flag: the value as given and what is wrong
  // with it (" '2xQ': 'Q' is not a dimension"), or ": what is wrong".
  SettingError(Setting setting, const std::string& detail)
      : UsageError(setting_name(setting) + detail), setting_(setting), detail_(detail) {}
  Setting setting() const { return setting_; }
  // The message with `flag` in place of the setting's name: "--input '2xQ': ...".
  std::string naming(const std::string& flag) const { return flag + detail_; }

 private:
  Setting setting_;
  std::string detail_;
};

}  // namespace layoutprof
