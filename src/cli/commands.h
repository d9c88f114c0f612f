// One options struct, one setup_x and one run_x per subcommand; main.cpp wires them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "report_model/report.h"

namespace layoutprof {

struct ViewOptions {
  std::string group_by = "module";
  int depth = 0;
  int top = 10;
  bool verbose = false;  // -v: the text header lists every figure measured and not, and why
};

// The gate's thresholds, as typed; shared by check, diff and a run with --baseline.
struct GateCliOptions {
  int64_t max_new_implicit_copies = 0;
  std::string max_copy_bytes_increase = "5%";
  int64_t max_new_copy_bytes = 0;
  int64_t max_new_split_points = 0;
  int64_t max_new_grad_mismatches = 0;
  int64_t max_new_birthplaces = 0;
  int64_t max_new_hazards = 0;
  int64_t max_new_recompiles = 0;
  int64_t max_new_backend_reorders = -1;   // -1: off
  std::string max_backend_bytes_increase;  // off
  std::string max_dtlb_increase = "5%";
  std::string max_measured_saving;  // off
  std::string gate_time;
  std::string gate_counters;
  std::string format = "text";  // a reporter that writes comparisons (reporter.h)
  std::string output = "-";     // where the comparison goes ('-': stdout)
  std::string junit;            // JUnit XML file
};

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> libraries;  // --load-library
  int warmup = 3;
  int iters = 3;
  int threads = 0;
  int64_t max_ops = 0;  // 0: default_max_ops()
  std::string device = "cpu";
  std::string json_path;
  std::string html_path;  // the HTML page
  std::string format = "text";
  ViewOptions view;
  std::string events;  // comma-separated libpfm4 event names
  bool list_events = false;
  bool no_counters = false;
  bool no_backend = false;              // --no-backend: no backend pass
  std::string counter_mode = "sample";  // --counters sample|count|off
  std::string bandwidth_events;         // --bandwidth-events
  std::string tlb;
  std::string trace;  // Chrome trace / Perfetto JSON file
  std::string baseline;
  bool update_baseline = false;
  bool timings = false;  // each step's wall time on stderr
  bool backward = false;  // training steps
  std::string loss;       // --backward's upstream gradient: randn | sum
  std::vector<std::string> accept;  // --accept FILE:LINE
  int what_if = 0;                  // --what-if[=N]: the top N causes' fixes measured (0: off)
  double what_if_budget = 60;       // --what-if-budget S
  GateCliOptions gate;
};

struct CompareOptions {
  std::string base;
  std::string now;
  GateCliOptions gate;
};

struct RenderOptions {
  std::string report;
  std::string format = "text";  // a reporter that writes run reports (reporter.h)
  std::string output = "-";
  ViewOptions view;
};

// compare-formats: the model run as given, with channels_last and with contiguous tensors.
struct CompareFormatsOptions {
  std::string model;
  std::vector<std::string> inputs;
  int warmup = 3;
  int iters = 3;
  int threads = 0;
  int timed_calls = 20;  // plain calls per variant, timed without the observer: the verdict's
  std::string json_path;
  std::string html_path;  // the variants side by side, one page
};

// run -- python script.py: the script recorded in process by the layoutprof package.
struct PythonRunOptions {
  std::string json_path;
  std::string html_path;
  int warmup = 1;
  int calls = 1;
  bool quiet = false;
  std::vector<std::string> command;  // python [options] script.py [args...]
};

void setup_run(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);

CLI::App* setup_python_run(CLI::App& app, PythonRunOptions& options);
int run_python_script(const PythonRunOptions& options);  // returns only on an error

CLI::App* setup_render(CLI::App& app, RenderOptions& options);
int run_render(const RenderOptions& options);

CLI::App* setup_compare_formats(CLI::App& app, CompareFormatsOptions& options);
int run_compare_formats(const CompareFormatsOptions& options);

// Shared by every command that prints a heatmap.
CLI::App* setup_check(CLI::App& app, CompareOptions& options);
int run_check(const CompareOptions& options);
CLI::App* setup_diff(CLI::App& app, CompareOptions& options);
int run_diff(const CompareOptions& options);

void add_view_options(CLI::App& app, ViewOptions& view);
// --max-new-implicit-copies and the rest; `with_format` adds --format and -o.
void add_gate_options(CLI::App& app, GateCliOptions& gate, bool with_format);
bool stdout_wants_color();
// The report in that format (reporter.h) to `path` ('-': stdout), whole or not at all, as
// --group-by, --depth and --top ask; text on a terminal is shaded in colour.
void write_report_as(const std::string& format, const Report& report, const ViewOptions& view,
                     const std::string& path);

}  // namespace layoutprof
