// Text in XML and HTML (internal to the report layer): JUnit files and the HTML page's title.
#pragma once

#include <string>

namespace layoutprof {

// The five predefined entities; control characters but newline and tab become spaces (XML 1.0
// has no way to write them).
inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') out += ' ';
        else out += ch;
    }
  }
  return out;
}

}  // namespace layoutprof
