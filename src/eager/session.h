// layoutprof inside the user's Python: a recording session over the calls the user's own code
// makes (an eager model's forward, a training step), with no model file and no runner of its
// own. The front end (src/python) says where each recorded call begins and ends; the session
// records them with the same Recorder as the CLI, and analyze() and the reporters turn them
// into the same reports. Torch-free interface.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "record/view_maker.h"
#include "report_model/report.h"

namespace layoutprof {

struct NamedTensor;  // runner/model.h

struct EagerOptions {
  std::string name = "eager";  // run.model: what the report calls the recorded code
  std::string torch_version;   // the torch the user's process runs (torch.__version__)
  int threads = 0;             // its intra-op threads (torch.get_num_threads())
  // Autograd is on: the recorder also takes the backward functions and their links to
  // forward ops; a call's backward pass begins with the engine's first backward function.
  bool autograd = false;
  int warmup = 0;              // calls run before the first recorded one (for the report)
  int64_t max_ops = 0;         // op events recorded per call and thread; 0: default_max_ops()
  // Between the recorded calls, each thread's latest ops are kept (from this many to twice as
  // many), with their tensors and lines, so that a failure there is explained; 0: none kept.
  int64_t recent_ops = 4096;
  // Perf events sampled over the recorded calls (the command's default, --counters sample) on
  // every thread the process has as the first recorded call begins, attributed to the ops as the
  // command attributes them; `events` empty: PerfCounters::default_events(). Off: none opened.
  bool counters = true;
  std::vector<std::string> events;
  // task-clock's sampling period where `events` names none: every 20 ms of a thread's CPU time,
  // a tenth of the command's rate. Each sample is a timer interrupt that the user's own calls pay
  // for (20-100 us in a VM); sampled figures are means over the calls, so fewer samples a call
  // widen their error bars but bias nothing.
  uint64_t clock_period_ns = 20000000;
  // Each call begins with the calling thread outside every module (the Python front end's
  // module hooks re-enter them); false: the modules it is in stay (a C++ program's scopes).
  bool reset_modules = true;
  // GPU time per op through CUPTI where this build has it and the process has a CUDA device,
  // opened as the first recorded call begins. Off: not traced, and the report says so.
  bool gpu = true;
};

class EagerSession {
 public:
  explicit EagerSession(EagerOptions options);
  ~EagerSession();
  EagerSession(const EagerSession&) = delete;
  EagerSession& operator=(const EagerSession&) = delete;

  // The ops every thread runs from here on belong to one recorded call.
  void begin_call();
  // The same, for a call handed `arguments`: those laid out other than contiguous have their
  // makers among the recent ops (made before the call) looked up first, for maker_of().
  void begin_call(const std::vector<NamedTensor>& arguments);
  // The op and line that made `tensor`'s view exactly (a compiled function's argument): among
  // the ops recorded so far in a timed call or between the calls, else among the makers of the
  // call's arguments begin_call() found; none where no recorded op made it.
  std::optional<ViewMaker> maker_of(const NamedTensor& tensor) const;
  // The call is over; `error` is what it raised ("" when it returned). A call that raised is
  // the run's last: the run's status is failed, and the report shows that call.
  void end_call(const std::string& error = "");
  // The user's code raised outside the recorded calls: the run failed all the same.
  void fail(const std::string& error);
  // The user's process was interrupted (`signal`: "SIGINT", "SIGTERM"): a call still open is
  // cut short and forgotten when a whole one was recorded (kept, as far as it ran, when none
  // was); the run's status is interrupted.
  void interrupt(const std::string& signal);
  // Ends the call and forgets it: a step begun that ran nothing (after the last p.step()).
  void drop_call();
  // Ends the call as the recording's last: forgotten when it ran no op and a call before it
  // was recorded (a step begun by the last step mark).
  void end_last_call();
  // The recording was never stopped by its front end: a call still open is handled as by
  // interrupt(), and the run's status is interrupted; `when` says when its reports were
  // written ("as the program exited").
  void not_stopped(const std::string& when);
  bool in_call() const;
  // Another CUPTI client (PyTorch's profiler) is about to start: GPU tracing stops now, keeping
  // what the call traced so far, and the calls from now on are not traced, with `why` in the
  // report, until resume_gpu(). Between ops, on the recording thread.
  void pause_gpu(const std::string& why);
  void resume_gpu();
  // What the report calls the recorded code (the outermost module's class) and the mode its
  // code set ("train" or "eval"), once known.
  void describe_model(const std::string& name, const std::string& mode);
  // Birthplaces made on purpose ("file.py:24", as --accept takes them): listed, not counted.
  void accept(const std::vector<std::string>& places);
  // A tensor the user's code passed to the model in the shown (first recorded) call: a model
  // input of the report, so that a layout it arrived with is traced to it. `origin` names the
  // argument and the call's line (the NamedTensor's name). Other calls', and tensors noted
  // before, are left out.
  void note_input(const NamedTensor& input);
  // The model's parameters, under the names its user gives them: with autograd on, the first
  // recorded call watches each gradient arrive (the parameters' verdicts).
  void watch_parameters(const std::vector<NamedTensor>& parameters);
  // The model's parameters and buffers, as its user names them, once it is known: the hazards
  // list those not dense or aliasing another, and name what a write reaches by them.
  void note_model_tensors(const std::vector<NamedTensor>& parameters, const std::vector<NamedTensor>& buffers);
  // A tensor the model returned to the user's code in the shown call: a copy written in place
  // and returned is not a lost write.
  void note_output(const NamedTensor& output);
  // DDP or AccumulateGrad warned about a gradient's strides: `line` starts with kDdpSeen or
  // kAccumulateGradSeen (analysis/grads.h), then says where and about which gradient; the
  // report shows it as measured, beside the gradient verdicts. Throws std::invalid_argument for
  // another line.
  void note_gradient_warning(const std::string& line);
  // DDP's buckets for the shown step were built (`built`: when) with these parameters' strides.
  void note_ddp_buckets(const std::vector<std::pair<std::string, std::vector<int64_t>>>& strides,
                        const std::string& built);
  // PyTorch warned of a write on an expanded tensor at `where` (file:line, the code on it):
  // the hazard at that line says so, or one is added for it (the warning is PyTorch's word).
  void note_layout_warning(const std::string& where, const std::string& code, const std::string& text);
  // torch.compile's records over the run (the report's "compiled" object, as the Python front
  // end reads them from torch's structured trace). Throws UsageError on JSON that is not one.
  void note_compiled(const std::string& json);
  int calls() const;
  // What was recorded, analysed (a call still open is ended first). Once only.
  Report finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes `report` whole, or not at all, to `path` as `format` ("json", "html", "text", "trace";
// "-": stdout). Throws UsageError for a format that writes no reports.
void write_report_file(const Report& report, const std::string& format, const std::string& path);
// The report as text in `format`.
std::string report_string(const Report& report, const std::string& format);
// The what-if's measurement, made after the report (the Python front end's _what_if.py: the
// report's "what_if" block with every variant in "variants") put into it. Throws UsageError on
// JSON that is not one.
void note_what_if(Report& report, const std::string& json);

}  // namespace layoutprof
