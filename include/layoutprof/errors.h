// Errors that map to the documented exit codes. Only main() turns them into an exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace layoutprof {

enum ExitCode : int {
  kExitOk = 0,
  kExitRegression = 1,  // the gate found a regression
  kExitUsage = 2,       // bad command line, bad --input, wrong number of inputs, bad report file
  kExitModelLoad = 3,   // model file missing, unreadable or not a TorchScript archive
  kExitModelRun = 4,    // the model raised while running
  kExitOutput = 5,      // an output file could not be written
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

struct UsageError : Error {
  explicit UsageError(const std::string& m) : Error(kExitUsage, m) {}
};
struct ModelLoadError : Error {
  explicit ModelLoadError(const std::string& m) : Error(kExitModelLoad, m) {}
};
struct OutputError : Error {
  explicit OutputError(const std::string& m) : Error(kExitOutput, m) {}
};

// First line of a message: LibTorch errors carry backtraces and source excerpts we don't print.
std::string first_line(const std::string& message);

}  // namespace layoutprof
