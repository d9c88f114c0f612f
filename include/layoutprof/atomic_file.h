// Outputs are written whole or not at all: a temporary file beside the target, then rename.
#pragma once

#include <string>

namespace layoutprof {

// Writes `content` to `path` ("-" means stdout). Throws OutputError naming the file and errno.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace layoutprof
