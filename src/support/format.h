// Number and column formatting shared by the text report, the gate and the analysis's
// suggestions.
#pragma once

#include <cstdint>
#include <string>

namespace layoutprof {

// `v` with `precision` digits after the point, as printf's "%.*f" writes it ("1.500"). Written
// with {fmt} in format.cpp, never here: torch-linked files (the run command) include this
// header, and a 2.x wheel's own fmt headers under torch/include would shadow Debian's there.
std::string fixed(double v, int precision);

// A fraction as a signed percentage, one decimal: "+7.0%", "-18.1%".
std::string signed_percent(double fraction);
// A time in ms for sentences: two decimals from 1 ms up, three below ("12.31", "0.514").
std::string ms_of(double ns);
// Two significant digits, as printf's "%.2g" writes them ("2.4e-06").
std::string general(double x);

inline std::string mb(int64_t bytes) { return fixed(bytes / 1e6, 3); }
inline std::string ms(int64_t ns) { return fixed(ns / 1e6, 3); }

// Display width of a UTF-8 string (every code point counts one column).
inline size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// `s` in at most `w` columns: cut before a character and ended with "…" where it is wider.
inline std::string clip(const std::string& s, size_t w) {
  if (width(s) <= w) return s;
  std::string out;
  size_t cols = 0;
  for (char byte : s) {
    if ((static_cast<unsigned char>(byte) & 0xC0) != 0x80 && ++cols >= w) break;  // a character's first byte
    out += byte;
  }
  return out + "…";
}

// `s` without its leading and trailing blanks (spaces, tabs, line ends).
inline std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
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
