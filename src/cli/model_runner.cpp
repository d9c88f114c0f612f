#include "cli/model_runner.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "support/errors.h"

namespace layoutprof {
namespace {

std::string own_folder() {
  std::string path(4096, '\0');
  ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return ".";
  path.resize(static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace

std::vector<std::string> model_runner_candidates() {
  const std::string here = own_folder();
  return {here + "/layoutprof-run", here + "/" LAYOUTPROF_LIBEXEC_FROM_BIN "/layoutprof-run"};
}

int exec_model_runner(char** argv) {
  std::string tried;
  int error = ENOENT;
  for (const std::string& path : model_runner_candidates()) {
    ::execv(path.c_str(), argv);
    if (errno != ENOENT || tried.empty()) error = errno;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  std::cerr << "layoutprof: cannot start layoutprof-run, the part of layoutprof that runs models ("
            << tried << "): " << std::strerror(error) << "; the installation is incomplete\n";
  return kExitInternal;
}

}  // namespace layoutprof
