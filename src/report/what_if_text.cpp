#include "report/what_if_text.h"

#include <algorithm>
#include <cstdio>

#include "analysis/cause_text.h"
#include "support/format.h"

namespace layoutprof {

namespace {

std::string arrow(int64_t before, int64_t after) { return std::to_string(before) + " -> " + std::to_string(after); }

std::string percent_saved(double relative) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", -100 * relative);
  return buf;
}

bool line_fix(const FixAction& a) { return a.kind == FixKind::contiguous_at || a.kind == FixKind::swap_operands; }

// The cause a fix is for, in a few words: "channels_last born at model.py:24", "channels_last of
// model input 0", "permuted(2,3,1,0) of parameter `conv.weight`".
std::string cause_place(const LayoutCause& c) {
  switch (c.kind) {
    case BirthKind::op: return c.layout + " born at " + (c.where.empty() ? c.op_name : c.where);
    case BirthKind::model_input: return c.layout + " of model input " + std::to_string(c.birth_input);
    case BirthKind::unrecorded: break;
  }
  const size_t sizes = c.input_text.find(" (");
  return c.layout + (c.input_text.empty() ? " that no recorded op made" : " of " + c.input_text.substr(0, sizes));
}

}  // namespace

std::string what_if_run_text(const WhatIfRun& w) {
  if (!w.why_not.empty()) return "what-if: nothing measured: " + w.why_not;
  std::string s = "what-if: " + std::to_string(w.rounds) + " interleaved rounds (at most " +
                  std::to_string(w.rounds_asked) + ", " + fixed(w.budget_s, 0) + " s budget) on " + w.device + ", " +
                  std::to_string(w.threads) + (w.threads == 1 ? " thread" : " threads") + "; control " +
                  w.control.text();
  for (const std::string& n : w.notes) s += "; " + n;
  return s;
}

std::string what_if_variant_text(const WhatIfRun& w, const WhatIfVariant& v) {
  if (!v.refused.empty()) return "what-if, " + v.name + ": not applied: " + v.refused;
  const WhatIfCounts& b = w.baseline;
  const WhatIfCounts& a = v.counts;
  return "what-if, " + v.name + ": " + v.time.text() + "; implicit copies " + arrow(b.implicit_copies, a.implicit_copies) +
         ", explicit " + arrow(b.explicit_copies, a.explicit_copies) + "; " + mb(b.copy_bytes) + " -> " +
         mb(a.copy_bytes) + " MB; mixed-format ops " + arrow(b.mixed_ops, a.mixed_ops) +
         (b.backend_reorders >= 0 && a.backend_reorders >= 0
              ? "; oneDNN reorders " + arrow(b.backend_reorders, a.backend_reorders)
              : "") +
         "; " + v.outputs.text();
}

std::vector<std::string> what_if_variant_notes(const WhatIfVariant& v) {
  std::vector<std::string> notes;
  for (const FixAction& a : v.actions)
    if (line_fix(a) && v.refused.empty())
      notes.push_back("applied by layoutprof at " + a.where + " for this measurement; change the code there");
  if (v.cause_survives)
    notes.push_back("! the cause is still found in this variant's call: a defect of layoutprof's, please report it");
  return notes;
}

std::vector<const WhatIfVariant*> cause_variants(const WhatIfRun& w, int64_t cause) {
  std::vector<const WhatIfVariant*> out;
  for (const WhatIfVariant& v : w.variants)
    if (v.causes.size() == 1 && v.causes[0] == cause) out.push_back(&v);
  return out;
}

const WhatIfVariant* best_measured(const WhatIfRun& w) {
  const WhatIfVariant* best = nullptr;
  for (const WhatIfVariant& v : w.variants)
    if (v.refused.empty() && v.time.saving == Saving::faster && (!best || v.time.relative() < best->time.relative()))
      best = &v;
  return best;
}

std::vector<size_t> causes_by_measured_saving(const Report& r) {
  std::vector<size_t> order(r.causes.size());
  std::vector<double> saving(r.causes.size(), 0);  // the best measured relative change, 0 none
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    for (const WhatIfVariant* v : cause_variants(r.what_if, static_cast<int64_t>(i)))
      if (v->refused.empty() && v->time.saving == Saving::faster) saving[i] = std::min(saving[i], v->time.relative());
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return saving[a] < saving[b]; });
  return order;
}

std::string what_if_verdict_text(const Report& r) {
  const WhatIfRun& w = r.what_if;
  if (!w.ran) return "";
  if (!w.why_not.empty()) return "no fix measured: " + w.why_not;
  const WhatIfVariant* best = best_measured(w);
  if (!best) {
    int64_t ran = 0, slower = 0;
    for (const WhatIfVariant& v : w.variants) {
      ran += v.refused.empty();
      slower += v.refused.empty() && v.time.saving == Saving::slower;
    }
    return "no fix measured a saving (" + std::to_string(ran) + " applied, " + std::to_string(slower) +
           " of them slower; see each cause's what-if)";
  }
  const std::string whose =
      best->causes.size() == 1 ? ", for the " + cause_place(r.causes.at(static_cast<size_t>(best->causes[0]))) : "";
  const std::string low = percent_saved(best->time.relative_high()), high = percent_saved(best->time.relative_low());
  return "the best measured fix saves " + percent_saved(best->time.relative()) + " a call: " + best->name + whose +
         " (measured: " + ms(static_cast<int64_t>(best->time.baseline_median_ns)) + " -> " +
         ms(static_cast<int64_t>(best->time.variant_median_ns)) + " ms, saving interval " + low.substr(0, low.size() - 1) +
         ".." + high + ", " + std::to_string(best->time.rounds) + " rounds)";
}

}  // namespace layoutprof
