// layoutprof check BASE NEW and layoutprof diff A B: the gate over two saved reports.
#include <cstdlib>
#include <exception>
#include <future>
#include <iostream>

#include "cli/commands.h"
#include "cli/gate_cli.h"
#include "support/errors.h"
#include "gate/gate.h"
#include "report/json_report.h"
#include "report/reporter.h"
#include "report/sarif_report.h"

namespace layoutprof {

void add_gate_options(CLI::App& app, GateCliOptions& g, bool with_format) {
  app.add_option("--max-new-implicit-copies", g.max_new_implicit_copies,
                 "implicit layout copies a module (or the model) may gain")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-copy-bytes-increase", g.max_copy_bytes_increase,
                 "growth of copied bytes allowed, per module and per copy class")
      ->capture_default_str();
  app.add_option("--max-new-copy-bytes", g.max_new_copy_bytes,
                 "bytes copies may grow by beyond --max-copy-bytes-increase (growth from zero included)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-new-split-points", g.max_new_split_points, "new split points allowed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-new-grad-mismatches", g.max_new_grad_mismatches,
                 "parameters whose gradient may newly be laid out unlike them (size1_only or "
                 "layout_mismatch; --backward reports)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-new-birthplaces", g.max_new_birthplaces,
                 "causes born at a place the baseline's causes were not (--accept'ed ones aside)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-new-hazards", g.max_new_hazards,
                 "hazards (aliased or lost writes, failed views, parameters not dense) at a place the baseline's were not")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-new-recompiles", g.max_new_recompiles,
                 "torch.compile recompiles an input's layout caused (a stride guard) for a function and tensor the "
                 "baseline's were not (in-process reports)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-measured-saving", g.max_measured_saving,
                 "fail where a fix the new report's what-if measured saves at least this, e.g. 5% (the interval's "
                 "bound nearest 0; causes not --accept'ed; off by default)");
  app.add_option("--max-new-backend-reorders", g.max_new_backend_reorders,
                 "oneDNN reorders a call (activation and weight, the backend pass) the new report may have beyond "
                 "the baseline's (off by default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-backend-bytes-increase", g.max_backend_bytes_increase,
                 "growth of those reorders' bytes allowed, e.g. 5% (off by default)");
  app.add_option("--max-dtlb-increase", g.max_dtlb_increase, "growth of modelled DTLB walks allowed")
      ->capture_default_str();
  app.add_option("--gate-time", g.gate_time, "also gate forward() time, e.g. 10% (noisy: off by default)");
  app.add_option("--gate-counters", g.gate_counters, "also gate every measured counter, e.g. 10%");
  app.add_option("--junit", g.junit, "write the checks as JUnit XML to FILE");
  if (with_format) {
    app.add_option("--format", g.format, "the format (markdown: for a pull-request comment; html: a page; sarif: for code scanning)")
        ->check(CLI::IsMember(reporter_names(ReportKind::comparison)))
        ->capture_default_str();
    app.add_option("-o,--output", g.output, "write it to FILE ('-': stdout)")->capture_default_str();
  }
}

GateOptions gate_options(const GateCliOptions& g) {
  GateOptions o;
  o.max_new_implicit_copies = g.max_new_implicit_copies;
  o.max_copy_bytes_increase = parse_fraction("--max-copy-bytes-increase", g.max_copy_bytes_increase);
  o.max_new_split_points = g.max_new_split_points;
  o.max_new_grad_mismatches = g.max_new_grad_mismatches;
  o.max_new_birthplaces = g.max_new_birthplaces;
  o.max_new_hazards = g.max_new_hazards;
  o.max_new_recompiles = g.max_new_recompiles;
  o.max_new_copy_bytes = g.max_new_copy_bytes;
  o.max_dtlb_increase = parse_fraction("--max-dtlb-increase", g.max_dtlb_increase);
  if (!g.max_measured_saving.empty())
    o.max_measured_saving = parse_fraction("--max-measured-saving", g.max_measured_saving);
  if (g.max_new_backend_reorders >= 0) o.max_new_backend_reorders = g.max_new_backend_reorders;
  if (!g.max_backend_bytes_increase.empty())
    o.max_backend_bytes_increase = parse_fraction("--max-backend-bytes-increase", g.max_backend_bytes_increase);
  if (!g.gate_time.empty()) o.gate_time = parse_fraction("--gate-time", g.gate_time);
  if (!g.gate_counters.empty()) o.gate_counters = parse_fraction("--gate-counters", g.gate_counters);
  return o;
}

Comparison compare_files_or_reports(const Report& base, const std::string& base_name, const Report& now,
                                    const std::string& new_name, const GateOptions& options,
                                    const std::string& junit) {
  check_comparable(base, now);
  Comparison c = compare_reports(base, now, options);
  c.base_name = base_name;
  c.new_name = new_name;
  if (!junit.empty())
    write_file_atomically(junit, [&c](std::ostream& out) { find_reporter("junit", ReportKind::comparison).write(out, c, {}); });
  return c;
}

void print_github_annotations(const Comparison& c, bool document_on_stdout) {
  const char* actions = std::getenv("GITHUB_ACTIONS");
  if (!actions || std::string(actions) != "true") return;
  (document_on_stdout ? std::cerr : std::cout) << github_annotations(c) << std::flush;
}

namespace {

int compare(const CompareOptions& o, bool with_table) {
  const GateOptions options = gate_options(o.gate);  // bad thresholds: usage errors before any file is read
  // The two reports are read side by side (reading is most of a large comparison's time);
  // errors are reported as before: the baseline's first.
  // The gate reads the top-level op events only, without tensors: copies and split points
  // carry their own.
  std::future<Report> base_read =
      std::async(std::launch::async, [&o] { return load_report_file(o.base, OpDetail::top_level); });
  Report now;
  std::exception_ptr now_error;
  try {
    now = load_report_file(o.now, OpDetail::top_level);
  } catch (...) {
    now_error = std::current_exception();
  }
  Report base = base_read.get();
  if (now_error) std::rethrow_exception(now_error);
  Comparison c = compare_files_or_reports(base, o.base, now, o.now, options, o.gate.junit);
  const Reporter& reporter = find_reporter(o.gate.format, ReportKind::comparison);
  ReporterOptions view;
  view.diff_table = with_table;
  const bool for_people = o.gate.format == "text" || o.gate.format == "markdown";
  print_github_annotations(c, o.gate.output == "-" && !for_people);
  write_file_atomically(o.gate.output, [&](std::ostream& out) { reporter.write(out, c, view); });
  return c.regressed() ? kExitRegression : kExitOk;
}

}  // namespace

CLI::App* setup_check(CLI::App& app, CompareOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "check", "compare a report with a baseline report: exit 0 when nothing regressed, 1 when something did");
  sub->add_option("baseline", o.base, "the baseline report (JSON)")->required();
  sub->add_option("new", o.now, "the new report (JSON)")->required();
  add_gate_options(*sub, o.gate, true);
  return sub;
}

int run_check(const CompareOptions& o) { return compare(o, false); }

CLI::App* setup_diff(CLI::App& app, CompareOptions& o) {
  CLI::App* sub = app.add_subcommand("diff", "the same comparison as a table per module");
  sub->add_option("a", o.base, "the earlier report (JSON)")->required();
  sub->add_option("b", o.now, "the later report (JSON)")->required();
  add_gate_options(*sub, o.gate, true);
  return sub;
}

int run_diff(const CompareOptions& o) {
  compare(o, true);
  return kExitOk;  // a table to read; `check` is the gate
}

}  // namespace layoutprof
