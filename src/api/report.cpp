// layoutprof::SessionReport: the reporters over a Session's Report.
#include "layoutprof/report.h"

#include <stdexcept>

#include "api/session_access.h"
#include "core/run_enums.h"

namespace layoutprof {

namespace {

// The reporters' errors, as the API says its errors are: one line starting "layoutprof: ".
template <typename Call>
auto said(Call call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error(what.rfind("layoutprof: ", 0) == 0 ? what : "layoutprof: " + what);
  }
}

}  // namespace

std::string SessionReport::text(const std::string& format) const {
  return said([&] { return report_string(data_->report, format); });
}

void SessionReport::write(const std::string& format, const std::string& path) const {
  said([&] { write_report_file(data_->report, format, path); });
}

std::string SessionReport::status() const { return to_string(data_->report.run.status); }

int SessionReport::steps() const { return data_->report.run.calls_recorded; }

}  // namespace layoutprof
