// oneDNN's verbose log, read: the lines its execution log writes to stdout, told apart from
// the user's own output, and each `exec` line parsed into a BackendPrimitive. Both formats:
//   oneDNN 2.x  onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd16b:f0,,,8x64x56x56,0.12
//   oneDNN 3.x  onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd16b::f0,,,8x64x56x56,0.12
// (and dnnl_verbose, the name before 2.0; a timestamp field, ONEDNN_VERBOSE_TIMESTAMP, is
// skipped: the fields are found from the word `exec` and from the end). Plain C++, no torch.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend_log.h"

namespace layoutprof {

// Where oneDNN's marker starts in a physical line (0 for a line of its own; further on where
// the user's partial line came before it); npos when the line is not oneDNN's.
size_t onednn_marker_at(std::string_view line);

// An `exec` line as a primitive (top_op and the names left unset); nullopt for any other line
// (info, create, a line this parser does not understand: `understood` says which).
std::optional<BackendPrimitive> parse_onednn_exec(std::string_view line, bool* understood = nullptr);

// "oneDNN v3.12.0 (commit ...)" from an info line that carries the version; "" otherwise.
std::string onednn_version(std::string_view line);

// A memory descriptor token of either format (src_f32::blocked:abcd:f0, src:f32::blocked:abcd::f0).
std::optional<BackendArg> parse_onednn_arg(std::string_view token);

// Splits the bytes stdout received into oneDNN's lines and the user's own bytes, in order,
// chunk by chunk: a line is whole only once its newline arrives (a partial one waits in
// `pending`); a user's partial line followed by a oneDNN line goes to the user's bytes up to the
// marker.
class LogSplitter {
 public:
  // The bytes appended since the last feed; complete oneDNN lines are appended to `lines`.
  void feed(std::string_view bytes, std::vector<std::string>& lines);
  // The end of the capture: what waits is the user's (a oneDNN line always ends in a newline).
  void finish();
  const std::string& user_bytes() const { return user_; }

 private:
  std::string pending_;
  std::string user_;
};

}  // namespace layoutprof
