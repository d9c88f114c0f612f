#include "runner/plain_calls.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <chrono>
#include <optional>
#include <stdexcept>

#include "support/interrupt.h"
#include "runner/device.h"
#include "runner/run_notes.h"

namespace layoutprof {

LoadedModel::LoadedModel(std::shared_ptr<Model> model, std::vector<c10::IValue> inputs, at::Device device,
                         bool backward, const std::string& loss)
    : model_(std::move(model)),
      inputs_(std::move(inputs)),
      device_(device),
      backward_(backward),
      step_(*model_, backward, loss) {}

int64_t LoadedModel::call_ns() {
  // Forward only without autograd, as the recorded calls ran (the guard is per thread).
  std::optional<at::NoGradGuard> no_grad;
  if (!backward_) no_grad.emplace();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    step_(inputs_, [] {});
    synchronize(device_);  // the call is over when its kernels are
  } catch (const std::exception& e) {
    throw std::runtime_error(model_->error_reason(e));
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

c10::IValue LoadedModel::output(bool& drew_random) {
  std::optional<at::NoGradGuard> no_grad;
  if (!backward_) no_grad.emplace();
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor before = generator.get_state();
  c10::IValue out;
  try {
    out = step_(inputs_, [] {});
    synchronize(device_);
  } catch (const std::exception& e) {
    throw std::runtime_error(model_->error_reason(e));
  }
  drew_random = !at::equal(before, generator.get_state());
  return out;
}

bool make_plain_calls(PlainCaller& plain, const ProfileConfig& config, Trace& trace, const ProgressFn& progress) {
  if (config.timed_calls <= 0) return true;
  RunInfo& run = trace.run;
  std::string stopped;
  for (int i = 0; i < config.timed_calls && !interrupt_signal(); ++i) {
    progress("plain call " + std::to_string(i + 1) + "/" + std::to_string(config.timed_calls));
    try {
      run.plain_call_ns.push_back(plain.call_ns());
    } catch (const std::exception& e) {
      stopped = "plain call " + std::to_string(i + 1) + " raised (" + e.what() + ")";
      break;
    }
  }
  const std::string calls = std::to_string(run.plain_call_ns.size()) + " of " + std::to_string(config.timed_calls);
  run.measured.push_back(plain_calls_note(config.timed_calls, config.backward));
  if (!stopped.empty()) run.not_measured.push_back("plain calls after " + calls + ": " + stopped);
  if (const int sig = interrupt_signal()) {
    run.status = RunStatus::interrupted;
    run.error = signal_name(sig) + " after " + std::to_string(trace.calls.size()) + " recorded calls and " + calls +
                " plain calls";
    return false;
  }
  return true;
}

}  // namespace layoutprof
