#include "cli/entry.h"

#include <exception>
#include <iostream>

#include "support/errors.h"

namespace layoutprof {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "layoutprof: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
}

int run_mapping_errors(const std::function<int()>& command) {
  try {
    return command();
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

}  // namespace layoutprof
