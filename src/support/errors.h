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
  kExitInternal = 70,   // a bug in layoutprof (EX_SOFTWARE)
  // 128 + the signal (130 SIGINT, 143 SIGTERM): interrupted; the reports hold the calls
  // recorded before it (interrupt.h)
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

// First line of a message: LibTorch errors carry backtraces and source excerpts we don't
// print; at most 400 bytes of it (bounded()).
std::string first_line(const std::string& message);
// `text` cut to `most` bytes (at a character boundary) and saying how long it was, control
// characters replaced by '?': a message never echoes unbounded text from a file or an
// argument, and stays one line.
std::string bounded(const std::string& text, size_t most = 80);

}  // namespace layoutprof
