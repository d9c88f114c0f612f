// Number and column formatting shared by the text report, the gate and the analysis's
// suggestions (internal to layoutprof_core).
#pragma once

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>

namespace layoutprof {

inline std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

inline std::string mb(int64_t bytes) { return fixed(bytes / 1e6, 3); }
inline std::string ms(int64_t ns) { return fixed(ns / 1e6, 3); }

// Display width of a UTF-8 string (every code point counts one column).
inline size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

inline std::string pad_right(const std::string& s, size_t w) {
  size_t have = width(s);
  return have >= w ? s : s + std::string(w - have, ' ');
}

inline std::string pad_left(const std::string& s, size_t w) {
  size_t have = width(s);
  return have >= w ? s : std::string(w - have, ' ') + s;
}

}  // namespace layoutprof
