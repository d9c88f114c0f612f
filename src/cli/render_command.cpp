#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "support/atomic_file.h"
#include "report/json_report.h"
#include "report/reporter.h"

namespace layoutprof {

void add_view_options(CLI::App& app, ViewOptions& view) {
  app.add_option("--group-by", view.group_by, "heatmap rows: module or op")
      ->check(CLI::IsMember({"module", "op"}))
      ->capture_default_str();
  app.add_option("--depth", view.depth, "module depth of the heatmap rows (0: about 40 rows)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top", view.top, "split points listed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("-v,--verbose", view.verbose,
               "text: list every figure measured and not measured, with how and why (the JSON and HTML always hold them)");
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return (no_color == nullptr || *no_color == '\0') && ::isatty(STDOUT_FILENO);
}

CLI::App* setup_render(CLI::App& app, RenderOptions& options) {
  CLI::App* sub = app.add_subcommand("render", "write a saved JSON report in another format (default: the text heatmap)");
  sub->add_option("report", options.report, "a report written with --json")->required();
  sub->add_option("--format", options.format, "the format")
      ->check(CLI::IsMember(reporter_names(ReportKind::report)))
      ->capture_default_str();
  sub->add_option("-o,--output", options.output, "write it to FILE ('-': stdout)")->capture_default_str();
  add_view_options(*sub, options.view);
  return sub;
}

void write_report_as(const std::string& format, const Report& report, const ViewOptions& view,
                     const std::string& path) {
  const Reporter& reporter = find_reporter(format, ReportKind::report);
  ReporterOptions o;
  o.group_by = view.group_by == "op" ? GroupBy::op : GroupBy::module;
  o.depth = view.depth;
  o.top = view.top;
  o.verbose = view.verbose;
  o.color = format == "text" && path == "-" && stdout_wants_color();
  // Whole, then written: no half report on stdout or in the file.
  write_file_atomically(path, [&](std::ostream& out) { reporter.write(out, report, o); });
}

int run_render(const RenderOptions& options) {
  write_report_as(options.format, load_report_file(options.report), options.view, options.output);
  return 0;
}

}  // namespace layoutprof
