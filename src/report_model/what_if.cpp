#include "report_model/what_if.h"

#include <stdexcept>

#include "support/format.h"

namespace layoutprof {

const char* saving_name(Saving s) {
  switch (s) {
    case Saving::not_judged: return "not_judged";
    case Saving::withheld: return "withheld";
    case Saving::within_noise: return "within_noise";
    case Saving::faster: return "faster";
    case Saving::slower: return "slower";
  }
  return "not_judged";
}

Saving saving_from_name(const std::string& name) {
  for (Saving s : {Saving::not_judged, Saving::withheld, Saving::within_noise, Saving::faster, Saving::slower})
    if (name == saving_name(s)) return s;
  throw std::invalid_argument("not a what-if verdict: " + name);
}

const char* output_match_name(OutputMatch m) {
  switch (m) {
    case OutputMatch::not_compared: return "not_compared";
    case OutputMatch::equal: return "equal";
    case OutputMatch::close: return "close";
    case OutputMatch::differs: return "differs";
  }
  return "not_compared";
}

OutputMatch output_match_from_name(const std::string& name) {
  for (OutputMatch m : {OutputMatch::not_compared, OutputMatch::equal, OutputMatch::close, OutputMatch::differs})
    if (name == output_match_name(m)) return m;
  throw std::invalid_argument("not an output comparison: " + name);
}


std::string PairedRounds::text() const {
  std::string s =
      ms_of(baseline_median_ns) + " -> " + ms_of(variant_median_ns) + " ms a call (" + signed_percent(relative());
  if (saving == Saving::not_judged)
    return "not judged: " + s + "; " + std::to_string(rounds) + " rounds give no interval at " +
           signed_percent(level).substr(1) + ")";
  const std::string low = signed_percent(relative_low());
  s += ", interval " + low.substr(0, low.size() - 1) + ".." + signed_percent(relative_high()) + ")";
  switch (saving) {
    case Saving::faster: return "measured: " + s;
    case Saving::slower: return "measured, slower: " + s;
    case Saving::within_noise: return "within noise: " + s;
    case Saving::withheld: return "not judged, the control was noisy: " + s;
    case Saving::not_judged: break;
  }
  return s;
}

std::string OutputComparison::text() const {
  switch (match) {
    case OutputMatch::equal: return "outputs equal";
    case OutputMatch::close:
    case OutputMatch::differs:
      return std::string("outputs ") + output_match_name(match) + " (max abs " + general(max_abs) + ", max rel " +
             general(max_rel) + ")";
    case OutputMatch::not_compared: break;
  }
  return "outputs not compared: " + why;
}

}  // namespace layoutprof
