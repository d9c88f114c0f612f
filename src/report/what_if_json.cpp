#include "report/what_if_json.h"

#include <cmath>

#include "report/cause_json.h"
#include "report/json_fields.h"

namespace layoutprof {

using nlohmann::json;
using report_json::as;

json rounds_json(const PairedRounds& p) {
  return {{"rounds", p.rounds},
          {"level", p.level},
          {"baseline_median_ns", p.baseline_median_ns},
          {"variant_median_ns", p.variant_median_ns},
          {"difference_ns", p.difference_ns},
          {"low_ns", p.low_ns},
          {"high_ns", p.high_ns},
          {"coverage", p.coverage},
          {"relative", p.relative()},
          {"saving", saving_name(p.saving)},
          {"text", p.text()}};
}

namespace {

double finite(const json& j) {
  const double x = as<double>(j);
  if (!std::isfinite(x)) throw std::out_of_range("a what-if figure is not a finite number");
  return x;
}

PairedRounds rounds_from(const json& j) {
  PairedRounds p;
  p.rounds = as<int64_t>(j.at("rounds"));
  if (p.rounds < 0) throw std::out_of_range("a what-if's rounds are negative");
  p.level = finite(j.at("level"));
  p.baseline_median_ns = finite(j.at("baseline_median_ns"));
  p.variant_median_ns = finite(j.at("variant_median_ns"));
  p.difference_ns = finite(j.at("difference_ns"));
  p.low_ns = finite(j.at("low_ns"));
  p.high_ns = finite(j.at("high_ns"));
  if (j.contains("coverage")) p.coverage = finite(j.at("coverage"));
  p.saving = saving_from_name(as<std::string>(j.at("saving")));
  return p;
}

json counts_json(const WhatIfCounts& c) {
  json j = {{"implicit_copies", c.implicit_copies}, {"explicit_copies", c.explicit_copies},
            {"copy_bytes", c.copy_bytes}, {"mixed_ops", c.mixed_ops}};
  if (c.backend_reorders >= 0) j["backend_reorders"] = c.backend_reorders;
  return j;
}

WhatIfCounts counts_from(const json& j) {
  WhatIfCounts c;
  c.implicit_copies = as<int64_t>(j.at("implicit_copies"));
  c.explicit_copies = as<int64_t>(j.at("explicit_copies"));
  c.copy_bytes = as<int64_t>(j.at("copy_bytes"));
  c.mixed_ops = as<int64_t>(j.at("mixed_ops"));
  if (j.contains("backend_reorders") && (c.backend_reorders = as<int64_t>(j.at("backend_reorders"))) < 0)
    throw std::out_of_range("a what-if's backend reorders are negative");
  if (c.implicit_copies < 0 || c.explicit_copies < 0 || c.copy_bytes < 0 || c.mixed_ops < 0)
    throw std::out_of_range("a what-if count is negative");
  return c;
}

json outputs_json(const OutputComparison& o) {
  return {{"match", output_match_name(o.match)}, {"max_abs", o.max_abs}, {"max_rel", o.max_rel},
          {"why", o.why}, {"text", o.text()}};
}

OutputComparison outputs_from(const json& j) {
  OutputComparison o;
  o.match = output_match_from_name(as<std::string>(j.at("match")));
  o.max_abs = finite(j.at("max_abs"));
  o.max_rel = finite(j.at("max_rel"));
  o.why = as<std::string>(j.at("why"));
  return o;
}

json variant_json(const WhatIfVariant& v) {
  json actions = json::array();
  for (const FixAction& a : v.actions) actions.push_back(fix_action_json(a));
  json j = {{"name", v.name}, {"actions", actions}, {"causes", v.causes}, {"refused", v.refused}};
  if (!v.refused.empty()) return j;
  j["time"] = rounds_json(v.time);
  j["recorded"] = counts_json(v.counts);
  j["outputs"] = outputs_json(v.outputs);
  j["cause_survives"] = v.cause_survives;
  return j;
}

}  // namespace

WhatIfVariant what_if_variant_from(const json& j, int64_t causes) {
  WhatIfVariant v;
  v.name = as<std::string>(j.at("name"));
  for (const json& a : j.at("actions")) v.actions.push_back(fix_action_from(a));
  v.causes = as<std::vector<int64_t>>(j.at("causes"));
  for (int64_t c : v.causes)
    if (c < 0 || c >= causes) throw std::out_of_range("a what-if variant names no cause of the report");
  v.refused = as<std::string>(j.at("refused"));
  if (!v.refused.empty()) return v;
  v.time = rounds_from(j.at("time"));
  v.counts = counts_from(j.at("recorded"));
  v.outputs = outputs_from(j.at("outputs"));
  v.cause_survives = as<bool>(j.at("cause_survives"));
  return v;
}

namespace {

json calls_json(const std::vector<RoundCall>& calls) {
  json out = json::array();
  for (const RoundCall& c : calls)
    out.push_back({{"who", c.who}, {"round", c.round}, {"start_ns", c.start_ns}, {"ns", c.ns}});
  return out;
}

std::vector<RoundCall> calls_from(const json& list) {
  std::vector<RoundCall> calls;
  for (const json& c : list) {
    calls.push_back({as<std::string>(c.at("who")), as<int64_t>(c.at("round")), as<int64_t>(c.at("start_ns")),
                     as<int64_t>(c.at("ns"))});
    if (calls.back().round < 0 || calls.back().start_ns < 0 || calls.back().ns < 0)
      throw std::out_of_range("a what-if call's round, start or time is negative");
  }
  return calls;
}

}  // namespace

json what_if_json(const WhatIfRun& w) {
  json together = json::array(), notes = w.notes;
  for (const WhatIfVariant& v : w.variants)
    if (v.causes.size() != 1) together.push_back(variant_json(v));
  return {{"why_not", w.why_not},      {"rounds", w.rounds},   {"rounds_asked", w.rounds_asked},
          {"budget_s", w.budget_s},    {"threads", w.threads}, {"device", w.device},
          {"notes", notes},            {"control", rounds_json(w.control)},
          {"baseline", counts_json(w.baseline)}, {"together", together}, {"calls", calls_json(w.calls)}};
}

json cause_what_if_json(const WhatIfRun& w, int64_t cause) {
  json out = json::array();
  for (const WhatIfVariant& v : w.variants)
    if (v.causes.size() == 1 && v.causes[0] == cause) out.push_back(variant_json(v));
  return out;
}

WhatIfRun what_if_from(const json& block, int64_t causes) {
  WhatIfRun w;
  w.ran = true;
  w.why_not = as<std::string>(block.at("why_not"));
  w.rounds = as<int64_t>(block.at("rounds"));
  w.rounds_asked = as<int64_t>(block.at("rounds_asked"));
  w.budget_s = finite(block.at("budget_s"));
  w.threads = as<int64_t>(block.at("threads"));
  w.device = as<std::string>(block.at("device"));
  w.notes = as<std::vector<std::string>>(block.at("notes"));
  w.control = rounds_from(block.at("control"));
  w.baseline = counts_from(block.at("baseline"));
  if (block.contains("calls")) w.calls = calls_from(block.at("calls"));  // absent in reports of before
  for (const char* list : {"variants", "together"})
    if (block.contains(list))
      for (const json& v : block.at(list)) w.variants.push_back(what_if_variant_from(v, causes));
  return w;
}

WhatIfRun what_if_from_text(const std::string& text, int64_t causes) { return what_if_from(json::parse(text), causes); }

}  // namespace layoutprof
