// layoutprof compare-formats MODEL --input ...: the model profiled as given, with channels_last
// tensors and with contiguous ones, and which of them is fastest here.
#include <unistd.h>

#include <csignal>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "analysis/analysis.h"
#include "support/atomic_file.h"
#include "support/errors.h"
#include "analysis/format_comparison.h"
#include "report/format_comparison_report.h"
#include "report/reporter.h"
#include "support/interrupt.h"
#include "runner/rounds.h"
#include "runner/runner.h"

namespace layoutprof {

CLI::App* setup_compare_formats(CLI::App& app, CompareFormatsOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "compare-formats",
      "run the model as given, with channels_last and with contiguous inputs, parameters and buffers: the copies "
      "each adds or avoids, and which is fastest here (plain calls, beyond the run's noise)");
  sub->add_option("model", o.model, "TorchScript archive (torch.jit.save)")->required();
  sub->add_option("--input,-i", o.inputs,
                  "one per forward() argument, in order, as for a plain run: DIMxDIM...[:dtype][:format]; the "
                  "channels_last variant makes 4-D inputs channels_last and 5-D ones channels_last_3d, the "
                  "contiguous variant every input contiguous");
  sub->add_option("--warmup", o.warmup, "unrecorded calls first, per variant")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--iters", o.iters, "recorded calls per variant")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--threads", o.threads, "intra-op threads (0: LibTorch's default)")->check(CLI::NonNegativeNumber);
  sub->add_option("--timed-calls", o.timed_calls,
                  "rounds of plain calls after the recorded ones, timed without the observer: as_given, each "
                  "variant, as_given again (at least 7 for a verdict: a 95% interval for each of two pairs)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--json", o.json_path,
                  "write every variant's report and the verdict as one JSON document to FILE ('-': stdout, "
                  "instead of the text)");
  sub->add_option("--html", o.html_path, "write the variants side by side as one self-contained HTML page to FILE");
  return sub;
}

namespace {

// The variants' plain calls in the what-if's interleaved rounds (runner/rounds.h): as_given,
// then channels_last and contiguous (in turns), then as_given again; returns as_given's second
// calls (the control). A variant whose model raises in a plain call takes no more and is
// reported failed, as a recorded call that raised would be. No rounds without as_given: every
// variant is paired with it.
std::vector<int64_t> plain_calls(std::vector<FormatVariant>& variants,
                                 std::vector<std::unique_ptr<PlainCaller>>& callers, int rounds,
                                 const std::function<void(const std::string&)>& progress) {
  if (rounds == 0 || !callers.front()) return {};
  std::vector<PlainCaller*> others;
  std::vector<size_t> index;  // each caller's variant
  for (size_t i = 1; i < callers.size(); ++i)
    if (callers[i]) {
      others.push_back(callers[i].get());
      index.push_back(i);
    }
  RoundTimes t = interleaved_rounds(*callers.front(), others, {rounds, 0, "plain calls"}, progress);
  auto finish = [&](RunInfo& run, std::vector<int64_t> ns, const std::string& failed) {
    run.plain_call_ns = std::move(ns);
    if (!failed.empty()) {
      run.status = RunStatus::failed;
      run.error = failed;
      return;
    }
    run.measured.push_back(plain_calls_note(static_cast<int64_t>(run.plain_call_ns.size()), false) +
                           ", interleaved with the other variants' round by round");
    if (const int sig = interrupt_signal()) {  // the plain calls stopped short: no verdict rests on them
      run.status = RunStatus::interrupted;
      run.error = std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + " after " + std::to_string(t.rounds()) +
                  " of " + std::to_string(rounds) + " rounds of plain calls";
    }
  };
  finish(variants.front().report.run, t.baseline, t.baseline_failed);
  for (size_t k = 0; k < index.size(); ++k) finish(variants[index[k]].report.run, t.variants[k], t.failed[k]);
  return t.baseline_again;
}

}  // namespace

int run_compare_formats(const CompareFormatsOptions& o) {
  std::vector<InputSpec> inputs;
  for (const std::string& text : o.inputs)  // exit 2 before any load
    inputs.push_back(with_flag([&] { return parse_input_spec(text); }));
  const bool progress_on = ::isatty(STDERR_FILENO);
  install_interrupt_handlers();  // Ctrl-C: the variant in progress ends its call; the rest are not run

  auto progress = [progress_on](const std::string& line) {
    if (progress_on) std::cerr << "layoutprof: " << line << "\n";
  };

  // Each variant's profile: warm-up and recorded calls, its model kept for the plain calls.
  std::vector<FormatVariant> variants;
  std::vector<std::unique_ptr<PlainCaller>> callers;
  for (const std::string& name : format_variant_names()) {
    FormatVariant v;
    v.name = name;
    callers.emplace_back();
    if (interrupt_signal()) {
      v.skipped = "interrupted before it began";
      variants.push_back(std::move(v));
      continue;
    }
    ProfileConfig config;
    config.model = o.model;
    config.inputs = inputs;
    config.warmup = o.warmup;
    config.iters = o.iters;
    config.threads = o.threads;
    config.counters = false;  // the timing is the verdict's: nothing else runs beside the model
    config.convert_to = name == "as_given" ? "" : name;
    try {
      v.report = analyze(with_flag([&] {
        return run_profile(config, [&](const std::string& line) { progress(name + ": " + line); }, &callers.back());
      }));
      v.ran = true;
    } catch (const Error& e) {
      // As given, a refused input or an unloadable model is the command's error (exit 2, 3),
      // as for a plain run. A converted variant that cannot even start (its inputs do not fit
      // in memory, say) is a finding: the others are still compared.
      if (name == "as_given") throw;
      v.skipped = e.what();
    }
    variants.push_back(std::move(v));
  }
  std::vector<int64_t> given_again = plain_calls(variants, callers, o.timed_calls, progress);

  const FormatComparison c = compare_formats(std::move(variants), std::move(given_again));
  auto writer = [&c](const std::string& format) {
    return [&c, format](std::ostream& out) { find_reporter(format, ReportKind::format_comparison).write(out, c, {}); };
  };
  // Each whole, then written: no half table on stdout, no half file.
  write_file_atomically("-", writer(o.json_path == "-" ? "json" : "text"));
  if (!o.json_path.empty() && o.json_path != "-") write_file_atomically(o.json_path, writer("json"));
  if (!o.html_path.empty()) write_file_atomically(o.html_path, writer("html"));

  if (const int sig = interrupt_signal()) {
    std::cerr << "layoutprof: compare-formats interrupted: the output holds the variants that ran\n";
    return 128 + sig;
  }
  // The model raising as given is the plain run's exit 4; a converted variant that raises is
  // what the comparison found (said on stdout and in the JSON), not an error.
  const RunInfo& given = c.variants.front().report.run;
  if (given.status == RunStatus::failed) {
    std::cerr << "layoutprof: model '" << o.model << "' raised as given: " << given.error << "\n";
    return kExitModelRun;
  }
  return kExitOk;
}

}  // namespace layoutprof
