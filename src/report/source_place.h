// A report's "file.py:24" split into the file and the line, for the outputs that point at code
// (SARIF, GitHub annotations).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace layoutprof {

struct SourcePlace {
  std::string file;  // "" where the report knows no place
  int64_t line = 0;  // 0 unknown
};

inline SourcePlace source_place(const std::string& where) {
  const size_t colon = where.rfind(':');
  if (colon == std::string::npos || colon + 1 == where.size()) return {where, 0};
  char* end = nullptr;
  const long long line = std::strtoll(where.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || line <= 0) return {where, 0};
  return {where.substr(0, colon), line};
}

}  // namespace layoutprof
