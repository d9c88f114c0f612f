#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "support/format.h"
#include "cli/gate_cli.h"
#include "cli/setting_flags.h"
#include "analysis/analysis.h"
#include "support/atomic_file.h"
#include "counters/counters.h"
#include "analysis/dtlb_model.h"
#include "support/errors.h"
#include "support/interrupt.h"
#include "support/process_memory.h"
#include "report/json_report.h"
#include "runner/runner.h"
#include "runner/what_if.h"
#include "report/reporter.h"

namespace layoutprof {

void setup_run(CLI::App& app, RunOptions& o) {
  app.add_option("model", o.model, "torch.export program (.pt2, torch.export.save) or TorchScript archive (torch.jit.save)");
  app.add_option("--load-library", o.libraries,
                 "FILE.so: a library registering custom ops the model calls (torch.ops.NS.*), loaded "
                 "before the model (repeatable)");
  app.add_option("--input,-i", o.inputs,
                 "one per forward() argument, in order: DIMxDIM...[:dtype][:format][:grad]; dtype "
                 "f32 f64 f16 bf16 i64 i32 i8 u8 bool; format contiguous channels_last "
                 "channels_last_3d perm=0,2,3,1; grad: the input requires grad (--backward)");
  app.add_option("--warmup", o.warmup, "unrecorded calls first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--iters", o.iters, "recorded calls")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", o.threads, "intra-op threads (0: LibTorch's default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-ops", o.max_ops,
                 "op events recorded per call (and thread) at most; past it the run stops "
                 "recording, says where, and reports the call up to there (default: what this "
                 "machine's available memory holds, at 1 KB an op event)")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", o.device, "cpu, or cuda[:N] on a CUDA build")->capture_default_str();
  app.add_option("--json", o.json_path, "write the JSON report to FILE ('-': stdout)");
  app.add_option("--html", o.html_path, "write the report as one self-contained HTML page to FILE");
  app.add_option("--format", o.format, "what goes to stdout")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--events", o.events,
                 "performance counters per op: libpfm4 event names, comma-separated, as "
                 "perf stat -e takes them, ':period=N' to set a sampled event's period (default: "
                 "DTLB load/store misses, LLC misses, cycles, instructions, page-faults, task-clock)");
  app.add_option("--counters", o.counter_mode,
                 "sample: the events sampled into ring buffers read after each call, each sample "
                 "charged to the ops running then (estimates, with their error; nothing per op); "
                 "count: read at every top-level op and copy (exact, a few us per op); off: none")
      ->check(CLI::IsMember({"sample", "count", "off"}))
      ->capture_default_str();
  app.add_option("--bandwidth-events", o.bandwidth_events,
                 "system-wide events that count memory traffic, 64 bytes a count, comma-separated "
                 "libpfm4 names (default: the memory controllers' CAS counts libpfm4 finds); read "
                 "per op when counting, every 1 ms and shared among the ops by time when sampling");
  app.add_flag("--list-events", o.list_events, "list the events this machine's PMUs offer, then exit");
  app.add_flag("--no-counters", o.no_counters, "read no performance counters (--counters off)");
  app.add_flag("--no-backend", o.no_backend,
               "no backend pass (one more call, untimed, with oneDNN's log read: the reorders it "
               "makes inside each op)");
  app.add_option("--tlb", o.tlb,
                 "DTLB model: l1=ENTRIES:WAYS,l2=ENTRIES:WAYS,page=4k|2m (default "
                 "l1=64:4,l2=1536:12,page=4k)");
  app.add_option("--trace", o.trace, "write a Chrome trace / Perfetto JSON of the recorded call to FILE");
  app.add_option("--baseline", o.baseline,
                 "compare the run with this baseline report: exit 1 when something regressed");
  app.add_flag("--update-baseline", o.update_baseline,
               "write this run's report as the new --baseline (atomically) and exit 0");
  app.add_flag("--backward", o.backward,
               "each call is a training step: forward with autograd, backward from a seeded "
               "random-normal gradient per output (or --loss sum), gradients set to none; "
               "records the backward ops and every parameter's gradient layout (what DDP will see)");
  app.add_option("--accept", o.accept,
                 "FILE:LINE: a birthplace (or a hazard's line: an aliasing) made on purpose; it counts as no "
                 "cause or hazard and is not gated (the report lists it as accepted; repeatable)");
  app.add_option("--loss", o.loss, "--backward's upstream gradient: randn (default) or sum (out.sum())")
      ->check(CLI::IsMember({"randn", "sum"}));
  app.add_flag("--timings", o.timings,
               "print each step's wall time on stderr (loading, calls, analysis, each report): "
               "measured, steady clock");
  app.add_flag("--what-if{3}", o.what_if,
               "after the run, apply the top N causes' fixes (3) to fresh loads of the model and measure each "
               "against the model as it is, in interleaved rounds of plain calls (REPORT.md, What-if)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--what-if-budget", o.what_if_budget, "seconds the what-if's rounds may take")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_view_options(app, o.view);
  add_gate_options(app, o.gate, false);
}

namespace {

// "RSS N MB (peak M MB)" of this process (measured).
std::string memory_mb() {
  const std::optional<ProcessMemory> m = process_memory();
  if (!m) return "RSS unknown";
  return "RSS " + std::to_string(m->rss_kb / 1024) + " MB (peak " + std::to_string(m->peak_kb / 1024) + " MB)";
}

// Counter flags that contradict each other.
void check_counter_flags(const RunOptions& o) {
  if (o.no_counters && !o.events.empty())
    throw UsageError("--events and --no-counters contradict each other");
  if (o.counter_mode == "off" && !o.events.empty())
    throw UsageError("--events and --counters off contradict each other");
  if (o.no_counters && o.counter_mode != "sample" && o.counter_mode != "off")
    throw UsageError("--no-counters and --counters " + o.counter_mode + " contradict each other");
}

// What run_profile() runs, from the flags; a flag it cannot use is a usage error here, before
// the model loads.
ProfileConfig profile_config(const RunOptions& o) {
  ProfileConfig config;
  config.model = o.model;
  config.libraries = o.libraries;
  for (const std::string& text : o.inputs) {
    config.inputs.push_back(with_flag([&] { return parse_input_spec(text); }));
    // A gradient needs a training step: said here, with both flags, before the model loads.
    if (config.inputs.back().requires_grad && !o.backward)
      throw UsageError("--input '" + bounded(text) + "': :grad needs --backward");
  }
  config.warmup = o.warmup;
  config.iters = o.iters;
  config.threads = o.threads;
  config.device = o.device;
  config.counters = !o.no_counters && o.counter_mode != "off";
  config.sample_counters = o.counter_mode == "sample";
  config.backend = !o.no_backend;
  config.events = with_flag([&] { return split_event_list(o.events); });
  config.bandwidth_events = with_flag([&] { return split_event_list(o.bandwidth_events); }, "--bandwidth-events");
  if (!config.counters && !config.bandwidth_events.empty())
    throw UsageError("--bandwidth-events needs counters (not --counters off)");
  config.tlb = o.tlb;
  config.max_ops = o.max_ops;
  if (!o.loss.empty() && !o.backward) throw UsageError("--loss needs --backward");
  config.backward = o.backward;
  config.loss = o.loss.empty() ? "randn" : o.loss;
  for (const std::string& a : o.accept)
    if (a.rfind(':') == std::string::npos || a.rfind(':') + 1 == a.size())
      throw UsageError("--accept '" + bounded(a) + "': expected FILE:LINE, as a cause's birthplace or a hazard names it");
  config.accepted = o.accept;
  with_flag([&] { return parse_tlb_config(o.tlb); });  // a bad --tlb is a usage error before the model loads
  return config;
}

// Progress goes to a terminal; --timings also says when each step began (seconds since the
// start) and, at the end, how long layoutprof's own work after the calls took.
class Progress {
 public:
  explicit Progress(const RunOptions& o)
      : on_(::isatty(STDERR_FILENO) || o.timings), timings_(o.timings), start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void operator()(const std::string& line) const {
    if (!on_) return;
    if (timings_)
      std::cerr << "layoutprof: " << std::fixed << std::setprecision(3) << seconds() << " s, " << memory_mb()
                << ": ";
    else std::cerr << "layoutprof: ";
    std::cerr << line << "\n";
  }

 private:
  bool on_, timings_;
  std::chrono::steady_clock::time_point start_;
};

// The --baseline report, read before the model loads so that one that cannot be read stops
// the run first; none without --baseline, or when --update-baseline is to replace a missing or
// unreadable one.
std::optional<Report> read_baseline(const RunOptions& o) {
  if (o.baseline.empty()) return std::nullopt;
  try {
    return load_report_file(o.baseline, OpDetail::top_level);
  } catch (const UsageError&) {
    if (!o.update_baseline) throw;
  }
  return std::nullopt;
}

void write_json_report(const Report& report, const std::string& path) {
  const Reporter& json = find_reporter("json", ReportKind::report);
  write_file_atomically(path, [&report, &json](std::ostream& out) { json.write(out, report, {}); });
}

// The text or JSON report on stdout, then the files the flags ask for.
void write_reports(const RunOptions& o, const Report& report, bool json_to_stdout, const Progress& progress) {
  if (json_to_stdout) {
    progress("JSON report to stdout");
    write_json_report(report, "-");
  } else {
    progress("text report");
    write_report_as("text", report, o.view, "-");
  }
  if (!o.json_path.empty() && o.json_path != "-") {
    progress("JSON report to " + o.json_path);
    write_json_report(report, o.json_path);
  }
  if (!o.html_path.empty()) {
    progress("HTML report to " + o.html_path);
    write_report_as("html", report, o.view, o.html_path);
  }
  if (!o.trace.empty()) {
    progress("trace to " + o.trace);
    write_report_as("trace", report, o.view, o.trace);
  }
}

// The run compared with --baseline (its verdict on `verdict`), and the baseline replaced with
// --update-baseline unless this run failed or stopped short: whether the run regressed.
bool gate_against_baseline(const RunOptions& o, const std::optional<Report>& baseline, const GateOptions& gate,
                           const Report& report, std::ostream& verdict) {
  bool regressed = false;
  if (baseline) {
    try {
      Comparison c = compare_files_or_reports(*baseline, o.baseline, report, "this run", gate, o.gate.junit);
      print_github_annotations(c, &verdict == &std::cerr);  // the JSON report on stdout
      verdict << "\n" << comparison_text(find_reporter("text", ReportKind::comparison), c) << std::flush;
      regressed = c.regressed();
    } catch (const UsageError& e) {
      if (!o.update_baseline) throw;
      verdict << "\nlayoutprof: not compared: " << e.what() << "\n";
    }
  }
  if (o.update_baseline && report.run.status == RunStatus::failed) {
    verdict << "layoutprof: baseline " << o.baseline << " kept: this run failed\n" << std::flush;
  } else if (o.update_baseline && report.run.ops_not_recorded > 0) {
    verdict << "layoutprof: baseline " << o.baseline << " kept: this run stopped at --max-ops\n" << std::flush;
  } else if (o.update_baseline) {
    write_json_report(report, o.baseline);
    verdict << "layoutprof: baseline " << o.baseline << " updated\n" << std::flush;
    regressed = false;
  }
  return regressed;
}

// The exit status of a run that was not interrupted, with why on stderr: a recording cut
// short by --max-ops, or the model's error.
int run_exit_status(const RunOptions& o, const Report& report, bool regressed) {
  if (report.run.ops_not_recorded > 0 && report.run.status != RunStatus::failed)
    std::cerr << "layoutprof: recording stopped at --max-ops " << report.run.max_ops << ": "
              << report.run.ops_not_recorded << " op events of the call not recorded\n";
  if (report.run.status == RunStatus::failed) {
    std::cerr << "layoutprof: model '" << o.model << "' raised: " << report.run.error << "\n";
    return kExitModelRun;
  }
  return regressed ? kExitRegression : kExitOk;
}

}  // namespace

int run_run(const RunOptions& o) {
  if (o.list_events) {
    std::cout << PerfCounters::list_events() << std::flush;
    return kExitOk;
  }
  check_counter_flags(o);
  if (o.model.empty())
    throw UsageError("no model given: layoutprof MODEL.pt --input 1x3x224x224 (see --help)");
  const ProfileConfig config = profile_config(o);
  const Progress progress(o);
  if (o.update_baseline && o.baseline.empty()) throw UsageError("--update-baseline needs --baseline FILE");
  std::optional<GateOptions> gate;
  if (!o.baseline.empty()) gate = gate_options(o.gate);
  const std::optional<Report> baseline = read_baseline(o);

  // Ctrl-C or SIGTERM from here on: the calls recorded so far are reported (interrupt.h).
  install_interrupt_handlers();
  Trace trace = with_flag([&] { return run_profile(config, progress); });
  const double calls_done = progress.seconds();
  progress("analysis");
  Report report = analyze(std::move(trace));
  if (o.what_if > 0 && report.run.status != RunStatus::interrupted) {
    progress("what-if: the fixes of the top " + std::to_string(o.what_if) + " causes");
    report.what_if = measure_fixes(config, report, {o.what_if, o.what_if_budget}, progress);
  }

  const bool json_to_stdout = o.json_path == "-" || o.format == "json";
  write_reports(o, report, json_to_stdout, progress);
  if (o.timings)
    progress("reports done: " + fixed(progress.seconds() - calls_done, 3) +
             " s after the recorded calls (analysis and reports)");

  if (report.run.status == RunStatus::interrupted) {
    std::cerr << "layoutprof: " << report.run.error << ": the reports hold those calls"
              << (o.baseline.empty() ? "" : "; not compared with the baseline, which is kept") << "\n";
    return 128 + interrupt_signal();
  }
  bool regressed = false;
  if (!o.baseline.empty())
    regressed = gate_against_baseline(o, baseline, *gate, report, json_to_stdout ? std::cerr : std::cout);
  return run_exit_status(o, report, regressed);
}

}  // namespace layoutprof
