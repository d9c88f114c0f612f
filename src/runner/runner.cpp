// run_profile(): a run's steps, from loading the model to the plain calls after the recorded
// ones. The model is reached through Model only, whatever its format.
#include "runner/runner.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "counters/collectors.h"
#include "counters/counters.h"
#include "analysis/dtlb_model.h"
#include "support/errors.h"
#include "counters/gpu.h"
#include "support/interrupt.h"
#include "record/backend_pass.h"
#include "record/recorder.h"
#include "runner/conversion.h"
#include "runner/device.h"
#include "runner/fixes.h"
#include "runner/inputs.h"
#include "runner/model.h"
#include "runner/open_collectors.h"
#include "runner/plain_calls.h"
#include "runner/run_notes.h"
#include "runner/training.h"

namespace layoutprof {

std::string torch_version() { return TORCH_VERSION; }

namespace {

// RunInfo's fields that the configuration decides.
void describe_run(const ProfileConfig& config, RunInfo& run) {
  run.model = config.model;
  run.warmup = config.warmup;
  run.iters = config.iters;
  run.torch_version = torch_version();
  run.layoutprof_version = LAYOUTPROF_VERSION;
  run.device = config.device;
  run.tlb = tlb_config_string(parse_tlb_config(config.tlb));
  run.backward = config.backward;
  if (config.backward) run.loss = config.loss;
  run.accepted = config.accepted;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// The model in the mode and on the device the run asks for, checked against the inputs given.
std::shared_ptr<Model> open_model(const ProfileConfig& config, const at::Device& device) {
  for (const std::string& library : config.libraries) load_op_library(library);
  std::shared_ptr<Model> model = load_model(config.model);
  model->set_training(config.backward);  // a training step: dropout, batch statistics
  if (device.is_cuda()) model->to(device);
  const std::vector<std::string> names = model->input_names();
  if (config.inputs.empty() && !model->sample_inputs().empty()) return model;  // the file's own inputs
  if (config.inputs.empty() && !names.empty())
    throw UsageError("model '" + config.model + "' forward() takes " + std::to_string(names.size()) + " input" +
                     (names.size() == 1 ? "" : "s") + " (" + joined(names) + ") and stores no example inputs: "
                     "give --input");
  if (config.inputs.size() != names.size())
    throw UsageError("model '" + config.model + "' forward() takes " + std::to_string(names.size()) + " input" +
                     (names.size() == 1 ? "" : "s") + " (" + joined(names) + "), got " +
                     std::to_string(config.inputs.size()));
  return model;
}

// compare-formats' variant of the model and its inputs' specs (the specs as given when nothing
// is converted). False when the model cannot take the format: the run failed, and says why.
bool make_variant(Model& model, const ProfileConfig& config, RunInfo& run, std::vector<InputSpec>& specs,
                  const ProgressFn& progress) {
  const std::string& to = config.convert_to;
  if (!to.empty() && to != "channels_last" && to != "contiguous")
    throw std::invalid_argument("ProfileConfig::convert_to '" + to + "'");
  run.conversion.to = to;
  if (!to.empty()) {
    progress("converting the parameters and buffers to " + to);
    try {
      convert_model(model, to, run.conversion);
    } catch (const c10::Error& e) {
      // A tensor type without that format: a failed run with no calls; the other variants go on.
      run.status = RunStatus::failed;
      run.error = "converting the model's parameters and buffers to " + to +
                  " raised: " + first_line(e.what_without_backtrace());
      return false;
    }
  }
  // No --input: the model file's own inputs, described as specs.
  const std::vector<InputSpec> given =
      config.inputs.empty() ? stored_input_specs(model.sample_inputs()) : config.inputs;
  for (const InputSpec& spec : given) {
    specs.push_back(convert_input_spec(spec, to));
    run.conversion.inputs += specs.back().format != spec.format;
  }
  return true;
}

// What a run's calls share. step(true) marks the backward pass's start for the recorder.
struct Calls {
  const ProfileConfig& config;
  const at::Device& device;
  const Model& model;
  Recorder& recorder;
  std::function<void(bool mark)> step;
  std::vector<TensorInfo>& returned;  // what the last step's forward() returned
  const ProgressFn& progress;
};

// Warm-up calls; true when one raised (the recorded call fails the same way and shows where).
bool warm_up(const Calls& calls) {
  for (int i = 0; i < calls.config.warmup && !interrupt_signal(); ++i) {
    calls.progress("warm-up " + std::to_string(i + 1) + "/" + std::to_string(calls.config.warmup));
    try {
      calls.step(false);
    } catch (const UsageError&) {
      throw;  // --backward on a model with nothing to differentiate
    } catch (const std::exception&) {
      return true;
    }
  }
  return false;
}

// One untimed call learns each top-level op's module path and source line; the timed calls
// then record without asking the model (see Recorder).
std::vector<OpSite> locate_ops(const Calls& calls) {
  if (interrupt_signal()) return {};
  calls.progress("locating ops in the model's code");
  calls.recorder.start(Recorder::Mode::sites);
  try {
    calls.step(false);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
    // The timed call below fails the same way; the sites up to the failing op are kept.
  }
  std::vector<OpSite> sites = calls.recorder.stop_sites();
  // A model that forks runs its tasks' ops in an order, and on threads, that vary between
  // calls: each timed call takes each top-level op's module and source line itself.
  calls.recorder.set_capture_sites(calls.recorder.saw_forks());
  return sites;
}

// One step under the recorder; false when the model raised (the run failed, and says where).
bool step_recorded(const Calls& calls, RunInfo& run) {
  try {
    calls.step(true);
    synchronize(calls.device);  // the call is over when its kernels are
    return true;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    run.status = RunStatus::failed;
    run.error = calls.model.error_reason(e);
    try {
      synchronize(calls.device);  // what did launch finishes before its records are flushed
    } catch (const std::exception&) {
    }
    return false;
  }
}

// Recorded call `i`; false when it failed. The first call (or a failing one) is kept whole; of
// the others, only the figures the medians need, and whether they ran the first call's ops.
bool record_call(const Calls& calls, Collectors& on, const std::vector<OpSite>& sites, int i, Trace& trace,
                 bool& sites_applied) {
  const bool first = trace.calls.empty();
  calls.recorder.start(first ? Recorder::Mode::timed : Recorder::Mode::figures, on.all());
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<GradWatch> grads;  // the first training step watches each gradient arrive
  if (calls.config.backward && first) grads.emplace(calls.model.named_parameters(), calls.recorder);
  const bool ok = step_recorded(calls, trace.run);
  const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  Call call = first || !ok ? calls.recorder.stop() : calls.recorder.stop_figures(trace.calls.front());
  call.spill();  // a later call's figures go to disk: memory stays flat over --iters
  call.wall_ns = wall;
  if (grads) call.parameters = grads->take();
  if (first || !ok) call.outputs = std::move(calls.returned);
  if ((first || !ok) && !call.sites_recorded) sites_applied = apply_sites(call, sites) && sites_applied;
  // The calls after the first keep no sites, except where the model forks: there each
  // call's ops are matched to the first call's by their sites (Recorder::stop_figures).
  calls.recorder.set_capture_sites(calls.recorder.saw_forks());
  if (!call.tensors_recorded)
    trace.run.not_measured.push_back("tensors of the failing call " + std::to_string(i + 1) +
                                     ": calls after the first record op names and times only, so "
                                     "its ops have no shapes and its copies no class");
  trace.calls.push_back(std::move(call));
  return ok;
}

// The recorded calls; returns whether every shown call got its sites.
bool record_calls(const Calls& calls, Collectors& on, const std::vector<OpSite>& sites, int iters, Trace& trace) {
  bool sites_applied = true;
  for (int i = 0; i < iters && !interrupt_signal(); ++i) {
    calls.progress("recorded call " + std::to_string(i + 1) + "/" + std::to_string(iters));
    if (!record_call(calls, on, sites, i, trace, sites_applied)) break;
    // The shown call waits in the spill file while the later calls run (Call::park).
    if (trace.calls.size() == 1 && i + 1 < iters) trace.calls.front().park();
  }
  calls.recorder.release_spare();
  if (!trace.calls.empty()) trace.calls.front().unpark();
  calls.progress("recorded calls done");
  return sites_applied;
}

// The backend pass: one more call, untimed, with oneDNN's log read op by op. Its call is like
// the warm-up's (no recorder), so nothing the recorded and plain calls measured changes.
void backend_pass(const Calls& calls, Trace& trace) {
  BackendLog& log = trace.backend;
  if (!calls.config.backend) {
    log.state = "off";
    log.reason = "--no-backend";
    return;
  }
  if (calls.device.is_cuda()) {
    log.state = "unavailable";
    log.reason = "oneDNN's log is the CPU's; on a GPU the conversion kernels are read from CUPTI's kernel names";
    return;
  }
  if (std::string why = backend_pass_unavailable(); !why.empty()) {
    log.state = why.rfind("your own", 0) == 0 ? "skipped" : "unavailable";
    log.reason = std::move(why);
    return;
  }
  calls.progress("backend pass: one more call with oneDNN's log read");
  std::string raised;
  try {
    BackendPass pass(calls.config.backward);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      calls.step(false);
      synchronize(calls.device);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      raised = first_line(e.what());
    }
    const auto t1 = std::chrono::steady_clock::now();
    log = pass.stop();
    log.call_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {  // stdout could not be captured
    log.state = "skipped";
    log.reason = e.what();
    return;
  }
  if (!raised.empty()) {
    log.state = "failed";
    log.reason = "the pass's call raised: " + raised;
  }
}

}  // namespace

Trace run_profile(const ProfileConfig& config, const ProgressFn& progress, std::unique_ptr<PlainCaller>* keep) {
  const at::Device device = target_device(config.device);
  Trace trace;
  RunInfo& run = trace.run;
  describe_run(config, run);
  if (config.threads > 0) at::set_num_threads(config.threads);
  run.threads = at::get_num_threads();

  progress("loading " + config.model);
  std::shared_ptr<Model> model = open_model(config, device);
  std::vector<InputSpec> specs;
  if (!make_variant(*model, config, run, specs, progress)) return trace;
  apply_model_fixes(*model, config.fixes, run.conversion);
  run.model_format = model->format();
  run.model_mode = model->mode();
  run.model_tensors = describe_model_tensors(model->named_parameters(), model->named_buffers());
  for (std::string& note : model->not_run()) run.not_measured.push_back(std::move(note));
  // The inputs the file stores, as they are, where no --input or conversion asks for others.
  std::vector<c10::IValue> inputs = config.inputs.empty() && config.convert_to.empty()
                                        ? stored_inputs(model->sample_inputs(), device, run.inputs)
                                        : make_inputs(specs, device, config.backward, run.inputs);
  apply_input_fixes(inputs, config.fixes);
  model->check_inputs(inputs);

  // Forward only: no autograd. A training step: forward with autograd, then backward.
  std::optional<at::NoGradGuard> no_grad;
  if (!config.backward) no_grad.emplace();
  Recorder recorder;
  recorder.set_training(config.backward);
  recorder.set_site_source(&model->op_sites());
  const ModelStep step(*model, config.backward, config.loss);
  std::vector<TensorInfo> returned;
  const Calls calls{config, device, *model, recorder,
                    [&](bool mark) {
                      returned = describe_returned(step(inputs, [&] { if (mark) recorder.mark_backward(); }));
                    },
                    returned, progress};
  const bool warmup_failed = warm_up(calls);
  run.max_ops = config.max_ops > 0 ? config.max_ops : default_max_ops();
  recorder.set_max_ops(run.max_ops);
  const std::vector<OpSite> sites = locate_ops(calls);

  Collectors collectors;
  open_collectors(config, device, collectors, run);
  RecordedCalls recorded;
  recorded.iters = warmup_failed ? 1 : std::max(1, config.iters);
  recorded.sites_applied = record_calls(calls, collectors, sites, recorded.iters, trace);
  recorded.counted = collectors.counters && collectors.counters->events() > 0;
  recorded.sampled = collectors.sampler && collectors.sampler->events() > 0;
  recorded.gpu_traced = collectors.gpu != nullptr;
  note_recorded_calls(config, recorded, trace);

  // Plain calls: what the model costs without layoutprof. The counters and the GPU tracer are
  // closed first: nothing but the model runs, as in a plain forward().
  if (run.status != RunStatus::ok) return trace;
  collectors = Collectors{};
  auto plain = std::make_unique<LoadedModel>(model, inputs, device, config.backward, config.loss);
  const bool plain_done = make_plain_calls(*plain, config, trace, progress);
  if (!interrupt_signal()) backend_pass(calls, trace);
  if (plain_done && keep) *keep = std::move(plain);
  return trace;
}

}  // namespace layoutprof
