// layoutprof-run: every command, those that run a model included; LibTorch is linked here.
// `layoutprof` (main.cpp) runs the report commands itself and hands the rest to this program.
#include <optional>

#include "cli/commands.h"
#include "cli/entry.h"
#include "runner/runner.h"

int main(int argc, char** argv) {
  using namespace layoutprof;
  CLI::App app{"layoutprof: shapes, strides and hidden layout copies of every op of a "
               "TorchScript model"};
  app.set_version_flag("--version", std::string("layoutprof ") + LAYOUTPROF_VERSION +
                                        " (LibTorch " + torch_version() + ")");
  RunOptions run_options;
  setup_run(app, run_options);
  RenderOptions render_options;
  CLI::App* render = setup_render(app, render_options);
  CompareOptions check_options, diff_options;
  CLI::App* check = setup_check(app, check_options);
  CLI::App* diff = setup_diff(app, diff_options);
  CompareFormatsOptions formats_options;
  CLI::App* formats = setup_compare_formats(app, formats_options);

  if (std::optional<int> status = parse_command_line(app, argc, argv)) return *status;
  return run_mapping_errors([&] {
    if (render->parsed()) return run_render(render_options);
    if (check->parsed()) return run_check(check_options);
    if (diff->parsed()) return run_diff(diff_options);
    if (formats->parsed()) return run_compare_formats(formats_options);
    return run_run(run_options);
  });
}
