#include "runner/what_if.h"

#include "analysis/backend_conversions.h"

#include <memory>
#include <set>
#include <tuple>

#include "analysis/analysis.h"
#include "analysis/paired_rounds.h"
#include "analysis/what_if_plan.h"
#include "runner/output_match.h"
#include "runner/plain_calls.h"
#include "runner/rounds.h"
#include "support/errors.h"
#include "support/interrupt.h"

namespace layoutprof {

namespace {

// A cause's birthplace as a variant's own run finds it again.
std::string cause_key(const LayoutCause& c) {
  const std::string place = c.kind == BirthKind::op            ? c.where
                            : c.kind == BirthKind::model_input ? std::to_string(c.birth_input)
                                                               : c.input_text;
  return c.layout + "|" + birth_kind_name(c.kind) + "|" + place;
}

// One variant's load: its recorded call's figures, the causes still costing something, and
// the model kept for its plain calls.
struct Loaded {
  WhatIfCounts counts;
  std::set<std::string> costing;
  std::unique_ptr<PlainCaller> caller;
  std::string refused;
};

Loaded load_variant(ProfileConfig config, const std::vector<FixAction>& fixes, const ProgressFn& progress,
                    const std::string& name) {
  config.fixes = fixes;
  Loaded out;
  try {
    const Report r = analyze(run_profile(config, [&](const std::string& line) { progress(name + ": " + line); },
                                         &out.caller));
    if (r.run.status != RunStatus::ok) out.refused = "the model raised with it: " + r.run.error;
    const auto at = [](const PerCopyClass& a, CopyClass c) { return a[static_cast<int>(c)]; };
    out.counts.implicit_copies = at(r.summary.copies, CopyClass::implicit_layout);
    out.counts.explicit_copies = at(r.summary.copies, CopyClass::explicit_layout);
    out.counts.copy_bytes = at(r.summary.copy_bytes, CopyClass::implicit_layout) +
                            at(r.summary.copy_bytes, CopyClass::explicit_layout);
    if (r.backend.ran()) {
      const BackendSummary backend = backend_summary(r.backend);
      out.counts.backend_reorders = backend.activation.count + backend.weight.count;
    }
    for (const LayoutCause& c : r.causes) {
      out.counts.mixed_ops += c.mixed_ops;
      if (c.copies > 0 || c.mixed_ops > 0 || !c.gradients.empty()) out.costing.insert(cause_key(c));
    }
  } catch (const FixRefused& e) {
    out.refused = e.what();
  }
  if (!out.refused.empty()) out.caller.reset();
  return out;
}

// Whether a cause the variant fixes still costs something at its birthplace (a swap fixes the
// chain after its op only: not asked).
bool survives(const VariantPlan& plan, const Report& report, const std::set<std::string>& costing) {
  for (const FixAction& a : plan.actions)
    if (a.kind == FixKind::swap_operands) return false;
  for (int64_t i : plan.causes)
    if (costing.count(cause_key(report.causes.at(static_cast<size_t>(i))))) return true;
  return false;
}

std::vector<std::string> run_notes(const ProfileConfig& config) {
  std::vector<std::string> notes{"each variant a fresh load of the model with its fixes applied"};
  if (config.backward)
    notes.push_back("a training step: the forward, then the backward, as the recorded calls ran them");
  return notes;
}

}  // namespace

WhatIfRun measure_fixes(const ProfileConfig& run_config, const Report& report, const WhatIfOptions& o,
                        const ProgressFn& progress) {
  ProfileConfig config = run_config;
  config.iters = 1;
  config.counters = false;  // the recorded call's copies; the times are the rounds'
  config.timed_calls = 0;
  WhatIfRun w;
  w.ran = true;
  w.rounds_asked = o.rounds;
  w.budget_s = o.budget_s;
  w.device = report.run.device;
  w.threads = report.run.threads;
  w.notes = run_notes(config);
  const std::vector<VariantPlan> plans = what_if_plans(report, o.top);
  if (report.run.status != RunStatus::ok) w.why_not = "the run did not end well";
  else if (plans.empty()) w.why_not = "no cause with a fix to measure";
  if (!w.why_not.empty()) return w;

  Loaded baseline = load_variant(config, {}, progress, "what-if baseline");
  if (!baseline.caller) {
    w.why_not = "the model as it is could not be loaded again: " + baseline.refused;
    return w;
  }
  w.baseline = baseline.counts;
  std::vector<Loaded> loaded;
  std::vector<PlainCaller*> timed;
  std::vector<size_t> timed_index;  // each timed caller's index in `plans`
  for (const VariantPlan& plan : plans) {
    loaded.push_back(load_variant(config, plan.actions, progress, "what-if " + plan.name));
    if (!loaded.back().caller) continue;
    timed.push_back(loaded.back().caller.get());
    timed_index.push_back(loaded.size() - 1);
  }
  auto* base = dynamic_cast<LoadedModel*>(baseline.caller.get());
  bool drew = false, drew_again = false;
  const c10::IValue reference = base->output(drew);
  const double spread = largest_difference(reference, base->output(drew_again));  // its own noise
  drew = drew || drew_again;
  RoundTimes times = interleaved_rounds(*baseline.caller, timed, {o.rounds, o.budget_s, "what-if"}, progress);
  if (!times.baseline_failed.empty()) w.notes.push_back("the baseline's " + times.baseline_failed);
  for (const TimedCall& call : times.calls) {
    std::string who = call.who == TimedCall::kBaseline ? "baseline" : "baseline again";
    if (call.who >= 0) who = plans.at(timed_index.at(static_cast<size_t>(call.who))).name;
    w.calls.push_back({who, call.round, call.start_ns, call.ns});
  }
  const RoundsVerdict verdict = judge_rounds(times.baseline, times.baseline_again, times.variants);
  w.rounds = times.rounds();
  w.control = verdict.control;
  size_t k = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    WhatIfVariant v;
    v.name = plans[i].name;
    v.actions = plans[i].actions;
    v.causes = plans[i].causes;
    v.refused = loaded[i].refused;
    if (loaded[i].caller) {
      const std::string& failed = times.failed.at(k);
      v.time = verdict.variants.at(k++);
      if (!failed.empty()) v.refused = "its " + failed;
      v.counts = loaded[i].counts;
      v.cause_survives = survives(plans[i], report, loaded[i].costing);
      bool variant_drew = false;
      const c10::IValue out = dynamic_cast<LoadedModel*>(loaded[i].caller.get())->output(variant_drew);
      if (drew || variant_drew) v.outputs.why = "the call draws random numbers";
      else v.outputs = compare_outputs(reference, out, spread);
    }
    w.variants.push_back(std::move(v));
  }
  return w;
}

}  // namespace layoutprof
