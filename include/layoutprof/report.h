// layoutprof::SessionReport: what a Session recorded, analysed: the report the command writes
// for a model file, as JSON, text or HTML.
#pragma once

#include <memory>
#include <string>

#include "layoutprof/export.h"

namespace layoutprof {

class LAYOUTPROF_API SessionReport {
 public:
  // The report in `format`: "json" (every field: src/report/REPORT.md), "text" (the command's
  // text report: verdict, causes with the line to change, heatmap), "html", "markdown", "trace"
  // (Chrome trace JSON). Throws std::runtime_error for another format.
  std::string text(const std::string& format = "text") const;
  std::string json() const { return text("json"); }
  // Writes the report in `format` to `path` ("-": stdout), whole or not at all. Throws
  // std::runtime_error when the file cannot be written (nothing is left half-written).
  void write(const std::string& format, const std::string& path) const;
  // "ok", "failed" (a step failed: Session::fail), or "interrupted" (a session never stopped).
  std::string status() const;
  // The steps recorded.
  int steps() const;

 private:
  friend struct SessionAccess;
  struct Data;
  std::shared_ptr<const Data> data_;
};

}  // namespace layoutprof
