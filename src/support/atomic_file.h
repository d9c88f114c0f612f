// Outputs are written whole or not at all: a temporary file beside the target, then rename.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace layoutprof {

// Writes `content` to `path` ("-" means stdout). Throws OutputError naming the file and errno.
void write_file_atomically(const std::string& path, const std::string& content);
// The same, with the content written by `write` as it goes (nothing held in memory whole).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace layoutprof
