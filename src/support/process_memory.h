// This process's resident memory, from /proc/self/status (measured): what --timings prints and
// what the bench's load measurement splits into file-backed pages (code first touched) and
// anonymous ones (data).
#pragma once

#include <optional>

namespace layoutprof {

struct ProcessMemory {
  long rss_kb = 0;   // VmRSS
  long peak_kb = 0;  // VmHWM
  long anon_kb = 0;  // RssAnon: heap, anonymous mappings
  long file_kb = 0;  // RssFile: pages of mapped files (the libraries' code among them)
};

// Empty where /proc/self/status cannot be read or lacks a field.
std::optional<ProcessMemory> process_memory();

}  // namespace layoutprof
