// Plain calls: the model's calls without layoutprof (no observer, counters or GPU tracer), timed
// by the run (ProfileConfig::timed_calls) and by its caller afterwards (PlainCaller).
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <memory>
#include <vector>

#include "runner/runner.h"
#include "runner/model.h"
#include "runner/training.h"

namespace layoutprof {

// The model and inputs of a run that went well, shared with the run.
class LoadedModel final : public PlainCaller {
 public:
  LoadedModel(std::shared_ptr<Model> model, std::vector<c10::IValue> inputs, at::Device device, bool backward,
              const std::string& loss);
  int64_t call_ns() override;
  // One plain call's output (the what-if compares a variant's with the baseline's), and
  // whether the call drew random numbers (the default CPU generator's state moved).
  c10::IValue output(bool& drew_random);

 private:
  std::shared_ptr<Model> model_;
  std::vector<c10::IValue> inputs_;
  at::Device device_;
  bool backward_;
  ModelStep step_;
};

// ProfileConfig::timed_calls plain calls into RunInfo::plain_call_ns, with their notes.
// Returns false when a signal stopped them (the run is then "interrupted").
bool make_plain_calls(PlainCaller& plain, const ProfileConfig& config, Trace& trace, const ProgressFn& progress);

}  // namespace layoutprof
