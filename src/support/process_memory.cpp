#include "support/process_memory.h"

#include <cstdlib>
#include <fstream>
#include <string>

namespace layoutprof {

std::optional<ProcessMemory> process_memory() {
  std::ifstream status("/proc/self/status");
  std::string line;
  ProcessMemory m;
  int found = 0;
  const std::pair<const char*, long*> fields[] = {
      {"VmRSS:", &m.rss_kb}, {"VmHWM:", &m.peak_kb}, {"RssAnon:", &m.anon_kb}, {"RssFile:", &m.file_kb}};
  while (std::getline(status, line))
    for (const auto& [name, value] : fields)
      if (line.rfind(name, 0) == 0) {
        *value = std::atol(line.c_str() + std::char_traits<char>::length(name));
        ++found;
      }
  if (found != 4) return std::nullopt;
  return m;
}

}  // namespace layoutprof
