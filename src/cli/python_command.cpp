// layoutprof run [options] -- python [python options] script.py [args...]: the script run in
// process, as `python -m layoutprof [options] script.py args...` runs it (the package in that
// Python's environment records it). This process becomes that Python: the script's output,
// exit status and signals are its own.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "support/errors.h"

namespace layoutprof {

namespace {

// The Python options before the script that take a value of their own (python --help).
bool takes_value(const std::string& option) { return option == "-X" || option == "-W" || option == "-Q"; }

// [python, its options..., -m layoutprof, layoutprof's options..., script, args...]
std::vector<std::string> python_command_line(const PythonRunOptions& o) {
  const std::vector<std::string>& given = o.command;
  if (given.empty()) throw UsageError("run: give the Python command after --: layoutprof run -- python script.py");
  std::vector<std::string> line{given.front()};
  size_t i = 1;
  for (; i < given.size() && given[i].size() > 1 && given[i][0] == '-'; ++i) {
    if (given[i] == "-m" || given[i] == "-c")
      throw UsageError("run: " + given[i] + " is not a script: give python [options] script.py [args...]");
    line.push_back(given[i]);
    if (takes_value(given[i]) && i + 1 < given.size()) line.push_back(given[++i]);
  }
  if (i == given.size()) throw UsageError("run: no script after '" + given.front() + "': give python script.py");
  line.insert(line.end(), {"-m", "layoutprof", "--warmup", std::to_string(o.warmup), "--calls", std::to_string(o.calls)});
  if (!o.json_path.empty()) line.insert(line.end(), {"--json", o.json_path});
  if (!o.html_path.empty()) line.insert(line.end(), {"--html", o.html_path});
  if (o.quiet) line.push_back("--quiet");
  line.insert(line.end(), given.begin() + static_cast<long>(i), given.end());
  return line;
}

}  // namespace

CLI::App* setup_python_run(CLI::App& app, PythonRunOptions& o) {
  CLI::App* run = app.add_subcommand(
      "run", "run a Python script with layoutprof recording inside it (the layoutprof package of that Python: pip "
             "install src/python): layoutprof run [options] -- python script.py [args...]");
  run->add_option("--json", o.json_path, "write the JSON report to FILE (each rank its own: FILE.rankN.json)");
  run->add_option("--html", o.html_path, "write the HTML page to FILE");
  run->add_option("--warmup", o.warmup, "model calls run before recording")->check(CLI::Range(0, 1000000));
  run->add_option("--calls", o.calls, "model calls recorded")->check(CLI::Range(1, 1000000));
  run->add_flag("--quiet", o.quiet, "no text report on stderr");
  run->add_option("command", o.command, "the Python interpreter, its options, the script and its arguments")
      ->required();
  return run;
}

int run_python_script(const PythonRunOptions& o) {
  const std::vector<std::string> line = python_command_line(o);
  std::vector<char*> argv;
  for (const std::string& arg : line) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv.front(), argv.data());
  throw UsageError("run: cannot start '" + line.front() + "': " + std::strerror(errno));
}

}  // namespace layoutprof
