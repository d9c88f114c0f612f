// layoutprof: the memory-layout profiler for TorchScript models.
// The only place that turns errors into exit codes (see README, "Exit codes").
#include <iostream>

#include "cli/commands.h"
#include "layoutprof/errors.h"
#include "layoutprof/runner.h"

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "layoutprof: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }

  try {
    if (render->parsed()) return run_render(render_options);
    if (check->parsed()) return run_check(check_options);
    if (diff->parsed()) return run_diff(diff_options);
    if (formats->parsed()) return run_compare_formats(formats_options);
    return run_run(run_options);
  } catch (const Error& e) {
    std::cerr << "layoutprof: " << e.what() << "\n";
    return e.code();
  } catch (const std::exception& e) {
    // Every error of the input, the model or the machine has its own type and code above:
    // what reaches here is layoutprof's own fault.
    std::cerr << "layoutprof: internal error (a bug in layoutprof; please report it): " << first_line(e.what())
              << "\n";
    return kExitInternal;
  }
}
