// Where `layoutprof` finds layoutprof-run, the program that loads and runs models (it links
// LibTorch, which this executable does not), and how it hands a command line over to it.
#pragma once

#include <string>
#include <vector>

namespace layoutprof {

// The places layoutprof-run may be, in the order tried: beside this executable (a build
// folder), then in the libexec folder that `cmake --install` fills.
std::vector<std::string> model_runner_candidates();

// Replaces this process with layoutprof-run on the same arguments (so the exit status,
// signals and the process id are the model run's own). Returns only when it could not start:
// then it has said why in one line, and the result is kExitInternal.
int exec_model_runner(char** argv);

}  // namespace layoutprof
