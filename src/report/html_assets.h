// The HTML page's stylesheet and script: src/report/html/page.css and page.js, built into the
// program (scripts/cmake/EmbedText.cmake, from CMakeLists.txt), so that the page written is one
// self-contained file and no asset is read from disk when a report is rendered.
#pragma once

#include <string_view>

namespace layoutprof {

extern const std::string_view kHtmlPageStyle;   // page.css
extern const std::string_view kHtmlPageScript;  // page.js

}  // namespace layoutprof
