// What both executables' main() share: parsing the command line and turning errors into the
// documented exit codes (README, "Exit codes"). Nothing below main() exits.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

namespace layoutprof {

// Parses argv into `app`: nothing when the command is to run, else the exit status (0 after
// --help or --version, kExitUsage after a usage error, said in one line).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// Runs `command` and returns its status, or the exit code of the error it threw.
int run_mapping_errors(const std::function<int()>& command);

}  // namespace layoutprof
