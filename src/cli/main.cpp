// layoutprof: the memory-layout profiler of PyTorch models.
// This executable links no LibTorch: the commands that only read reports (render, check,
// diff, --version) run here and start in milliseconds, and `run -- python script.py` becomes
// that Python; every other command line is handed, as it is, to layoutprof-run, the program
// that loads and runs models.
#include <cstring>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/entry.h"
#include "cli/model_runner.h"

namespace {

bool reads_reports_only(int argc, char** argv) {
  if (argc < 2) return false;
  for (const char* command : {"render", "check", "diff", "run", "--version"}) {
    if (std::strcmp(argv[1], command) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace layoutprof;
  if (!reads_reports_only(argc, argv)) return exec_model_runner(argv);

  CLI::App app{"layoutprof: shapes, strides and hidden layout copies of every op of a PyTorch model"};
  app.set_version_flag("--version", std::string("layoutprof ") + LAYOUTPROF_VERSION + " (LibTorch " +
                                        LAYOUTPROF_TORCH_VERSION + ")");
  RenderOptions render_options;
  CLI::App* render = setup_render(app, render_options);
  CompareOptions check_options, diff_options;
  CLI::App* check = setup_check(app, check_options);
  setup_diff(app, diff_options);
  PythonRunOptions python_options;
  CLI::App* python = setup_python_run(app, python_options);
  app.require_subcommand(1);
  if (std::optional<int> status = parse_command_line(app, argc, argv)) return *status;

  return run_mapping_errors([&] {
    if (python->parsed()) return run_python_script(python_options);
    if (render->parsed()) return run_render(render_options);
    if (check->parsed()) return run_check(check_options);
    return run_diff(diff_options);
  });
}
