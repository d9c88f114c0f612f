// EagerSession: the recorder over calls the user's code makes, then the analysis.
#include "eager/session.h"

#include <ATen/Context.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/analysis.h"
#include "analysis/birthplace.h"
#include "core/pools.h"
#include "counters/process_threads.h"
#include "eager/module_sites.h"
#include "record/recorder.h"
#include "report/compiled_json.h"
#include "report/what_if_json.h"
#include "report/ddp_seen.h"
#include "report/reporter.h"
#include "record/tensor_info.h"
#include "runner/inputs.h"
#include "runner/run_notes.h"
#include "runner/model.h"
#include "runner/open_collectors.h"
#include "runner/runner.h"
#include "runner/training.h"
#include "support/atomic_file.h"
#include "support/errors.h"

namespace layoutprof {

struct EagerSession::State {
  // First, so it goes last: what the session interned is freed only after all of it (and its
  // reports hold leases of their own).
  PoolLease pools;
  EagerOptions options;
  Recorder recorder;
  Trace trace;
  std::vector<NamedTensor> parameters;  // watch_parameters()
  std::unique_ptr<GradWatch> grads;     // the first recorded call's, with autograd on
  std::vector<std::string> grad_seen;    // note_gradient_warning()
  std::vector<std::pair<std::string, std::vector<int64_t>>> buckets;  // note_ddp_buckets()
  std::string buckets_built;
  std::vector<TensorInfo> returned;      // note_output(), in the shown call
  std::vector<Hazard> warned;            // note_layout_warning()
  CompiledRun compiled;                  // note_compiled()
  Collectors collectors;                 // opened as the first recorded call begins
  bool collectors_open = false;
  ThreadLook threads;                    // the threads started since the last call
  std::string gpu_not_opened;            // why no GPU tracer opened
  std::string gpu_paused;                // pause_gpu()'s reason, until resume_gpu()
  bool in_call = false;
  bool finished = false;
  bool window = false;  // the recent ops are recorded (outside the calls)
  // begin_call(arguments): the makers of the call's arguments, found among the recent ops.
  std::vector<std::pair<TensorInfo, ViewMaker>> argument_makers;

  // The shown call's parameters learn DDP's buckets; without a word from AccumulateGrad in a
  // training step, that it gave none is measured too.
  void note_gradient_words() {
    if (trace.calls.empty()) return;
    for (const auto& [name, strides] : buckets)
      for (ParamGrad& p : trace.calls.front().parameters)
        if (p.name == name) {
          p.bucket_param_strides = strides;
          p.buckets_built = buckets_built;
        }
    const bool heard = std::any_of(grad_seen.begin(), grad_seen.end(),
                                   [](const std::string& l) { return l.rfind(kAccumulateGradSeen, 0) == 0; });
    if (!heard && trace.run.backward)
      grad_seen.push_back(std::string(kAccumulateGradSeen) +
                          " (this process): none, listened from the start of the profiled block");
    trace.run.measured.insert(trace.run.measured.end(), grad_seen.begin(), grad_seen.end());
  }

  // Between the recorded calls, the recent ops of every thread are kept, with their tensors
  // and lines, so that a failure there is explained (fail()): EagerOptions::recent_ops.
  void start_window() {
    if (finished || in_call || window || options.recent_ops <= 0) return;
    recorder.set_window(static_cast<size_t>(options.recent_ops));
    recorder.start(Recorder::Mode::timed);
    window = true;
  }
  // Ends the window: its ops as a Call (`keep`), or forgotten.
  Call end_window(bool keep) {
    Call call;
    if (!window) return call;
    window = false;
    if (keep) call = recorder.stop();
    else recorder.discard();
    recorder.set_window(0);
    recorder.set_max_ops(trace.run.max_ops);
    return call;
  }

  // The counters, as the first recorded call begins, on the threads that exist then (LibTorch's
  // intra-op pool, after the warm-up steps); at each later call on the threads started since
  // (`threads` lists them again only where they may have changed). What did not open says why
  // in the run.
  void open_counters() {
    if (collectors_open) {  // a pool started since: its threads sampled from this call on
      if (!collectors.sampler) return;
      if (auto tids = threads.changed()) collectors.sampler->add_threads(*tids);
      return;
    }
    collectors_open = true;
    ProfileConfig config;
    config.counters = options.counters;
    config.events = options.events;
    config.clock_period_ns = options.clock_period_ns;
    try {
      open_collectors(config, at::Device(at::kCPU), collectors, trace.run);
    } catch (const std::exception& e) {
      collectors = Collectors{};
      trace.run.not_measured.push_back(std::string("performance counters: ") + e.what());
    }
    open_gpu();
  }

  // The GPU tracer, where wanted and a CUDA device exists (a GPU build without one, or a
  // CPU build: at::hasCUDA() is false); paused already if a CUPTI client runs.
  void open_gpu() {
    if (!options.gpu) gpu_not_opened = "turned off (gpu=False)";
    else if (!at::hasCUDA()) gpu_not_opened = "no CUDA device in this process";
    else gpu_not_opened = open_gpu_tracer(-1, collectors, trace.run);
    if (collectors.gpu_collector && !gpu_paused.empty()) collectors.gpu_collector->pause(gpu_paused);
  }

  // With autograd on, the first recorded call watches the parameters' gradients arrive.
  void watch_grads() {
    if (options.autograd && !parameters.empty()) grads = std::make_unique<GradWatch>(parameters, recorder);
  }
};

namespace {

// The parameters and buffers laid out other than contiguous, as the shown call begins: the
// latest op of the recent ops (between the calls) whose output is exactly that view, with its
// line (a top-level op's: the user's code). `.data =` and set_ are no ops; the permute before
// them is.
void name_makers(std::vector<ModelTensor>& tensors, const Call& recent) {
  for (ModelTensor& m : tensors) {
    if (m.tensor.layout().cls == LayoutClass::contiguous && !odd_size1_strides(m.tensor.sizes(), m.tensor.strides()))
      continue;
    for (size_t i = recent.events.size(); i-- > 0;) {
      const OpEvent& op = recent.events[i];
      if (op.source.empty() || std::none_of(op.outputs.begin(), op.outputs.end(),
                                            [&](const TensorInfo& t) { return same_view(t, m.tensor); }))
        continue;
      const OpEvent* maker = &op;  // the outermost op of that line: the user's call (permute, not as_strided)
      while (maker->parent >= 0 && recent.events[maker->parent].source == op.source) maker = &recent.events[maker->parent];
      m.made_by = maker->name.str();
      m.made_at = op.source.str();
      m.made_code = op.source_text.str();
      break;
    }
  }
}

}  // namespace

EagerSession::EagerSession(EagerOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  RunInfo& run = s.trace.run;
  run.model = s.options.name;
  run.model_format = "eager";
  run.model_mode = ModelMode{"eval", "user", ""};  // describe_model() says which, once known
  run.torch_version = s.options.torch_version;
  run.layoutprof_version = LAYOUTPROF_VERSION;
  run.threads = s.options.threads;
  run.warmup = s.options.warmup;
  run.max_ops = s.options.max_ops > 0 ? s.options.max_ops : default_max_ops();
  s.recorder.set_max_ops(run.max_ops);
  s.recorder.set_training(s.options.autograd);
  s.recorder.set_backward_at_engine(s.options.autograd);
  s.recorder.set_site_source(&module_sites());
  // Each call takes its ops' module paths as they run: the module hooks are the source.
  s.recorder.set_capture_sites(true);
  s.start_window();
}

EagerSession::~EagerSession() {
  state_->grads.reset();
  if (state_->in_call) state_->recorder.stop();
  state_->end_window(false);
}

void EagerSession::begin_call(const std::vector<NamedTensor>& arguments) {
  State& s = *state_;
  std::vector<std::pair<TensorInfo, ViewMaker>> makers;  // looked up before the recent ops end
  for (const NamedTensor& a : arguments) {
    if (!a.tensor.defined() || a.tensor.layout() != at::kStrided || a.tensor.is_contiguous()) continue;
    TensorInfo view = describe_tensor(a.tensor, 0);
    if (std::optional<ViewMaker> made = s.recorder.maker_of(view)) makers.emplace_back(view, *made);
  }
  begin_call();
  s.argument_makers = std::move(makers);
}

std::optional<ViewMaker> EagerSession::maker_of(const NamedTensor& tensor) const {
  const State& s = *state_;
  if (!tensor.tensor.defined() || tensor.tensor.layout() != at::kStrided) return std::nullopt;
  const TensorInfo view = describe_tensor(tensor.tensor, 0);
  if (std::optional<ViewMaker> made = s.recorder.maker_of(view)) return made;
  for (const auto& [argument, made] : s.argument_makers)
    if (same_view(argument, view)) return made;
  return std::nullopt;
}

void EagerSession::begin_call() {
  State& s = *state_;
  if (s.finished) throw std::logic_error("EagerSession: begin_call() after finish()");
  if (s.in_call) throw std::logic_error("EagerSession: begin_call() inside a call");
  s.argument_makers.clear();
  if (s.trace.calls.empty() && s.window) {
    const Call recent = s.end_window(true);
    name_makers(s.trace.run.model_tensors, recent);
  }
  s.end_window(false);
  if (s.trace.calls.size() == 1) s.trace.calls.front().park();  // the shown call waits on disk
  if (s.options.reset_modules) module_sites().reset_thread();  // the call starts outside every module
  const bool first = s.trace.calls.empty();
  s.open_counters();
  s.recorder.start(first ? Recorder::Mode::timed : Recorder::Mode::figures, s.collectors.all());
  s.in_call = true;
  if (first) s.watch_grads();
}

void EagerSession::end_call(const std::string& error) {
  State& s = *state_;
  if (!s.in_call) throw std::logic_error("EagerSession: end_call() outside a call");
  s.in_call = false;
  const bool first = s.trace.calls.empty();
  const int64_t wall = s.recorder.elapsed_ns();
  Call call = first || !error.empty() ? s.recorder.stop() : s.recorder.stop_figures(s.trace.calls.front());
  if (s.grads) call.parameters = s.grads->take();
  s.grads.reset();
  if (first) call.outputs = std::move(s.returned);
  call.spill();
  call.wall_ns = wall;
  if (!error.empty()) {
    s.trace.run.status = RunStatus::failed;
    s.trace.run.error = error;
  }
  s.trace.calls.push_back(std::move(call));
  if (error.empty()) s.start_window();
}

void EagerSession::fail(const std::string& error) {
  State& s = *state_;
  RunInfo& run = s.trace.run;
  run.status = RunStatus::failed;
  run.error = error + " (outside the recorded calls)";
  Call recent = s.end_window(true);
  if (recent.events.empty()) return;
  recent.outside_calls = true;
  run.measured.push_back("the ops shown: the last " + std::to_string(recent.events.size()) +
                         " before the failure outside the recorded calls (the recent ops, kept between the calls), " +
                         "not a model call");
  s.trace.calls.push_back(std::move(recent));
}

void EagerSession::interrupt(const std::string& signal) {
  State& s = *state_;
  if (s.in_call) {
    if (s.trace.calls.empty()) end_call("");
    else drop_call();
  }
  s.end_window(false);
  RunInfo& run = s.trace.run;
  run.status = RunStatus::interrupted;
  run.error = signal + " after " + std::to_string(s.trace.calls.size()) + " recorded calls";
}

void EagerSession::drop_call() {
  State& s = *state_;
  if (!s.in_call) throw std::logic_error("EagerSession: drop_call() outside a call");
  s.in_call = false;
  s.grads.reset();
  s.recorder.stop();
  s.start_window();
}

void EagerSession::end_last_call() {
  State& s = *state_;
  end_call("");
  const Call& last = s.trace.calls.back();
  const bool ran_nothing = last.figures_only ? last.duration_ns.size() == 0 : last.events.empty();
  if (ran_nothing && s.trace.calls.size() > 1) s.trace.calls.pop_back();
}

void EagerSession::not_stopped(const std::string& when) {
  interrupt("not stopped");
  RunInfo& run = state_->trace.run;
  run.error = "the recording was never stopped: its reports were written " + when + ", after " +
              std::to_string(state_->trace.calls.size()) + " recorded calls";
}

void EagerSession::describe_model(const std::string& name, const std::string& mode) {
  RunInfo& run = state_->trace.run;
  if (!name.empty()) run.model = name;
  if (mode == "train" || mode == "eval") run.model_mode.value = mode;
}

void EagerSession::accept(const std::vector<std::string>& places) { state_->trace.run.accepted = places; }

void EagerSession::note_input(const NamedTensor& input) {
  State& s = *state_;
  const at::Tensor& tensor = input.tensor;
  constexpr size_t kMaxNotedInputs = 64;
  std::vector<ModelInput>& inputs = s.trace.run.inputs;
  if (!s.in_call || !s.trace.calls.empty() || inputs.size() >= kMaxNotedInputs || !tensor.defined() ||
      tensor.layout() != at::kStrided)
    return;
  ModelInput in;
  in.tensor = describe_tensor(tensor, static_cast<int>(inputs.size()));
  for (const ModelInput& seen : inputs)
    if (seen.tensor.storage == in.tensor.storage && seen.tensor.storage_offset == in.tensor.storage_offset &&
        seen.tensor.shape == in.tensor.shape)
      return;
  try {
    in.spec = stored_input_specs({c10::IValue(tensor)}).front();
  } catch (const Error&) {
    return;  // a dtype --input cannot name: no spec to describe it by
  }
  in.origin = input.name;
  inputs.push_back(std::move(in));
}

void EagerSession::watch_parameters(const std::vector<NamedTensor>& parameters) {
  State& s = *state_;
  s.parameters = parameters;
  if (s.in_call && s.trace.calls.empty()) s.watch_grads();  // learnt during the first call
}

void EagerSession::note_model_tensors(const std::vector<NamedTensor>& parameters,
                                      const std::vector<NamedTensor>& buffers) {
  state_->trace.run.model_tensors = describe_model_tensors(parameters, buffers);
}

void EagerSession::note_output(const NamedTensor& output) {
  State& s = *state_;
  constexpr size_t kMaxNotedOutputs = 256;
  if (!s.in_call || !s.trace.calls.empty() || s.returned.size() >= kMaxNotedOutputs) return;
  std::vector<TensorInfo> more = describe_returned(c10::IValue(output.tensor));
  s.returned.insert(s.returned.end(), more.begin(), more.end());
}

void EagerSession::note_gradient_warning(const std::string& line) {
  if (line.rfind(kDdpSeen, 0) != 0 && line.rfind(kAccumulateGradSeen, 0) != 0)
    throw std::invalid_argument("note_gradient_warning: not a gradient warning line: " + line);
  state_->grad_seen.push_back(line);
}

void EagerSession::note_ddp_buckets(const std::vector<std::pair<std::string, std::vector<int64_t>>>& strides,
                                    const std::string& built) {
  state_->buckets = strides;
  state_->buckets_built = built;
}

void EagerSession::note_layout_warning(const std::string& where, const std::string& code, const std::string& text) {
  Hazard h;
  h.kind = HazardKind::aliased_write;
  h.where = where;
  h.code = code;
  h.tensor = "an expanded tensor";
  h.detail = "PyTorch warned: " + text;
  h.fixes = {"`.clone()` the expanded tensor before the write, so that each position has its own element"};
  state_->warned.push_back(std::move(h));
}

namespace {

// PyTorch's warnings joined to the hazards: the one at the warning's line says it, or the
// warning becomes one.
void add_warnings(Report& r, const std::vector<Hazard>& warned) {
  for (const Hazard& w : warned) {
    bool found = false;
    for (Hazard& h : r.hazards)
      if (h.op >= 0 && (accept_matches(w.where, h.where) || accept_matches(h.where, w.where))) {
        h.detail += "; PyTorch warned: " + w.detail.substr(w.detail.find(": ") + 2);
        found = true;
      }
    if (found) continue;
    r.hazards.push_back(w);
    for (const std::string& a : r.run.accepted) r.hazards.back().accepted |= accept_matches(a, w.where);
  }
}

// A compiled region that ran in the recorded call but was compiled before the profile began:
// its layout decisions were not heard, and its generated kernels emit no events (inductor's
// kernel events are switched on for the graphs compiled while a profile is under way).
void note_precompiled_regions(Report& r) {
  static const std::string kRegion = "Torch-Compiled Region: ";
  std::set<std::string> compiled, said;
  for (const CompiledGraph& g : r.compiled.graphs) compiled.insert(g.compile_id);
  Str last;
  for (const OpEvent& op : r.ops) {
    if (op.name == last) continue;  // a region's name repeats call after call
    last = op.name;
    const std::string& name = op.name.str();
    if (name.compare(0, kRegion.size(), kRegion) != 0) continue;
    const std::string id = name.substr(kRegion.size());
    if (compiled.count(id) || !said.insert(id).second) continue;
    r.compiled.seen = true;
    if (r.compiled.torch.empty()) r.compiled.torch = r.run.torch_version;
    r.compiled.not_measured.push_back("graph " + id + " was compiled before the profile began: its layout decisions "
                                      "were not read and its generated kernels emit no events; start the profile "
                                      "before the model's first call");
  }
}

}  // namespace

void EagerSession::note_compiled(const std::string& json) {
  try {
    state_->compiled = compiled_from_text(json);
  } catch (const std::exception& e) {
    throw UsageError(std::string("layoutprof: torch.compile's records could not be read: ") + bounded(e.what(), 200));
  }
}

void note_what_if(Report& report, const std::string& json) {
  try {
    report.what_if = what_if_from_text(json, static_cast<int64_t>(report.causes.size()));
  } catch (const std::exception& e) {
    throw UsageError(std::string("layoutprof: the what-if's figures could not be read: ") + bounded(e.what(), 200));
  }
}

bool EagerSession::in_call() const { return state_->in_call; }

void EagerSession::pause_gpu(const std::string& why) {
  State& s = *state_;
  if (s.gpu_paused.empty()) s.gpu_paused = why;
  if (s.collectors.gpu_collector) s.collectors.gpu_collector->pause(s.gpu_paused);
}

void EagerSession::resume_gpu() {
  State& s = *state_;
  s.gpu_paused.clear();
  if (s.collectors.gpu_collector) s.collectors.gpu_collector->resume();
}

int EagerSession::calls() const { return static_cast<int>(state_->trace.calls.size()); }

Report EagerSession::finish() {
  State& s = *state_;
  if (s.finished) throw std::logic_error("EagerSession: finish() twice");
  if (s.in_call) end_call("");
  s.end_window(false);
  s.finished = true;
  s.recorder.release_spare();
  if (!s.trace.calls.empty()) s.trace.calls.front().unpark();
  // A training step when the shown call ran a backward pass: the user's own loss and step.
  RunInfo& run = s.trace.run;
  run.backward = !s.trace.calls.empty() && s.trace.calls.front().backward_from >= 0;
  run.loss = run.backward ? "user" : "";
  ProfileConfig config;
  config.backward = run.backward;
  config.counters = s.options.counters;
  config.device = "";  // the user's code picks its devices
  RecordedCalls recorded;
  recorded.gpu_traced = s.collectors.gpu != nullptr;
  if (!recorded.gpu_traced && !s.gpu_not_opened.empty())
    run.not_measured.push_back(gpu_time_in_process(s.trace, s.gpu_not_opened));
  recorded.iters = static_cast<int>(s.trace.calls.size());
  recorded.counted = s.collectors.counters && s.collectors.counters->events() > 0;
  recorded.sampled = s.collectors.sampler && s.collectors.sampler->events() > 0;
  // The threads sampled in the end: those the later calls added (open_counters) too.
  if (s.collectors.sampler) run.counter_read = s.collectors.sampler->describe();
  s.collectors = Collectors{};
  run.iters = recorded.iters;
  note_recorded_calls(config, recorded, s.trace);
  s.note_gradient_words();
  Report report = analyze(std::move(s.trace));
  add_warnings(report, s.warned);
  report.compiled = std::move(s.compiled);
  note_precompiled_regions(report);
  return report;
}

std::string report_string(const Report& report, const std::string& format) {
  return report_text(find_reporter(format, ReportKind::report, "format"), report);
}

void write_report_file(const Report& report, const std::string& format, const std::string& path) {
  const Reporter& reporter = find_reporter(format, ReportKind::report, "format");
  write_file_atomically(path, [&](std::ostream& out) { reporter.write(out, report, {}); });
}

}  // namespace layoutprof
