#include <algorithm>
#include <cstdlib>

#include "counters/counters.h"
#include "support/errors.h"
#include "support/setting_error.h"

namespace layoutprof {

std::vector<std::string> split_event_list(const std::string& list) {
  std::vector<std::string> events;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    if (comma > at) events.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  if (!list.empty() && events.empty()) throw SettingError(Setting::events, " '" + bounded(list) + "' names no event");
  return events;
}

std::vector<CounterValue> counter_delta(const uint64_t* begin, const uint64_t* end,
                                        const std::vector<CounterGroupLayout>& groups,
                                        size_t events) {
  std::vector<CounterValue> out(events);
  size_t at = 0;
  for (const CounterGroupLayout& g : groups) {
    const uint64_t* b = begin + at;
    const uint64_t* e = end + at;
    at += 2 + g.events;
    if (b[0] == kFailedRead || e[0] == kFailedRead || e[0] < b[0] || e[1] < b[1]) {
      // A failed or inconsistent read: no count from this group, and the value says so.
      for (size_t k = 0; k < g.events && g.first_event + k < events; ++k) out[g.first_event + k].multiplexed = true;
      continue;
    }
    uint64_t enabled = e[0] - b[0];
    uint64_t running = e[1] - b[1];
    bool multiplexed = running < enabled;
    // Counting the whole time (or no time passed on the clocks we were given): no scaling.
    double scale = running >= enabled ? 1.0
                   : running == 0     ? 0.0
                                      : static_cast<double>(enabled) / static_cast<double>(running);
    for (size_t k = 0; k < g.events && g.first_event + k < events; ++k) {
      CounterValue& v = out[g.first_event + k];
      uint64_t d = e[2 + k] >= b[2 + k] ? e[2 + k] - b[2 + k] : 0;
      v.raw += d;
      v.scaled += static_cast<double>(d) * scale;
      v.multiplexed = v.multiplexed || multiplexed;
    }
  }
  return out;
}

}  // namespace layoutprof
