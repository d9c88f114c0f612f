#include "counters/perf_permissions.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace layoutprof {

namespace {

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;

// The value after "Name:" on its line of /proc/self/status, or "".
std::string status_field(const std::string& status, const std::string& name) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, name.size() + 1, name + ":") == 0) {
      const size_t start = line.find_first_not_of(" \t", name.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  return "";
}

std::string capabilities_text(const PerfPermissions& p) {
  if (p.cap_perfmon || p.cap_sys_admin) return std::string("the process has ") + (p.cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN");
  return "the process has neither CAP_PERFMON nor CAP_SYS_ADMIN (the uid does not count: root in a default "
         "container has neither)";
}

}  // namespace

PerfPermissions parse_permissions(const std::string& proc_status, int paranoid) {
  PerfPermissions p;
  p.paranoid = paranoid;
  const std::string seccomp = status_field(proc_status, "Seccomp");
  p.seccomp = seccomp.empty() ? -1 : std::atoi(seccomp.c_str());
  const std::string caps = status_field(proc_status, "CapEff");
  const uint64_t eff = caps.empty() ? 0 : std::strtoull(caps.c_str(), nullptr, 16);
  p.cap_sys_admin = (eff >> kCapSysAdmin) & 1u;
  p.cap_perfmon = (eff >> kCapPerfmon) & 1u;
  return p;
}

int read_paranoid_level() {
  std::ifstream sysctl("/proc/sys/kernel/perf_event_paranoid");
  int paranoid = -9;
  if (!(sysctl >> paranoid)) paranoid = -9;
  return paranoid;
}

PerfPermissions read_permissions() {
  std::ifstream status("/proc/self/status");
  std::stringstream text;
  text << status.rdbuf();
  return parse_permissions(text.str(), read_paranoid_level());
}

std::string permission_failure(int err, const PerfPermissions& p) {
  const std::string text = std::strerror(err);
  // Docker's filter answers EPERM; a paranoid or capability refusal is EACCES.
  if (err == EPERM && p.seccomp == 2)
    return text + ": a seccomp filter refuses perf_event_open in this process (Docker's default profile allows "
                  "it only with CAP_PERFMON or CAP_SYS_ADMIN: run the container with --cap-add PERFMON, or with "
                  "a seccomp profile that allows perf_event_open)";
  const std::string level = p.paranoid == -9 ? "perf_event_paranoid could not be read"
                                             : "perf_event_paranoid is " + std::to_string(p.paranoid);
  std::string why = text + ": " + level + "; " + capabilities_text(p) + ". ";
  if (p.paranoid >= 3)
    return why + "Debian's kernels refuse every perf_event_open without CAP_PERFMON at 3 (upstream treats 3 "
                 "as 2): sysctl kernel.perf_event_paranoid=2, or CAP_PERFMON";
  return why + "2 allows counting one's own threads in user space, 1 kernel time too, 0 and -1 CPU-wide "
               "events (uncore bandwidth); CAP_PERFMON allows them all";
}

}  // namespace layoutprof
