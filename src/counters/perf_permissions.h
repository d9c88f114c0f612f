// Why perf_event_open refuses this process, probed rather than assumed: what counts is the
// kernel's paranoid level as the process reads it, its effective capabilities (CAP_PERFMON,
// CAP_SYS_ADMIN; not the uid: root in a default container has neither), and a seccomp filter
// (Docker's default profile answers EPERM to perf_event_open without those capabilities; a
// paranoid or capability refusal is EACCES).
#pragma once

#include <string>

namespace layoutprof {

struct PerfPermissions {
  int paranoid = 2;  // kernel.perf_event_paranoid; -9: not readable
  int seccomp = 0;   // "Seccomp:" of /proc/self/status: 0 none, 1 strict, 2 a filter; -1 not said
  bool cap_perfmon = false;
  bool cap_sys_admin = false;
};

// kernel.perf_event_paranoid as this process reads it; -9 when it cannot.
int read_paranoid_level();
// From /proc/self/status's text and the paranoid level read apart.
PerfPermissions parse_permissions(const std::string& proc_status, int paranoid);
// This process's, now.
PerfPermissions read_permissions();
// perf_event_open's EACCES or EPERM as a reason that says what would change it.
std::string permission_failure(int err, const PerfPermissions& p);

}  // namespace layoutprof
