#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "layoutprof/json_report.h"
#include "layoutprof/text_report.h"

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
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return (no_color == nullptr || *no_color == '\0') && ::isatty(STDOUT_FILENO);
}

CLI::App* setup_render(CLI::App& app, RenderOptions& options) {
  CLI::App* sub = app.add_subcommand("render", "print the text heatmap of a saved JSON report");
  sub->add_option("report", options.report, "a report written with --json")->required();
  add_view_options(*sub, options.view);
  return sub;
}

void print_text_report(const Report& report, const ViewOptions& view) {
  TextOptions text;
  text.group_by = view.group_by == "op" ? GroupBy::op : GroupBy::module;
  text.depth = view.depth;
  text.top = view.top;
  text.color = stdout_wants_color();
  std::ostringstream out;  // whole, then written: no half report on stdout
  write_text_report(out, report, text);
  std::cout << out.str() << std::flush;
}

int run_render(const RenderOptions& options) {
  print_text_report(load_report_file(options.report), options.view);
  return 0;
}

}  // namespace layoutprof
