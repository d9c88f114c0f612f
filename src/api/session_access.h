// The API's classes from inside: the EagerSession a Session drives, and a SessionReport made
// of a Report. Private to src/api.
#pragma once

#include <memory>

#include "eager/session.h"
#include "layoutprof/report.h"
#include "layoutprof/session.h"

namespace layoutprof {

struct SessionReport::Data {
  Report report;
};

struct SessionAccess {
  // The session's recording; throws std::logic_error once it is stopped.
  static EagerSession& eager(Session& session);
  // Whether the program named the recorded code (SessionOptions::name).
  static bool named(const Session& session);
  // Stops the session without ending its step first (its recording ended it), and writes the
  // options' files.
  static void finish(Session& session);
  static SessionReport report(Report report) {
    SessionReport r;
    r.data_ = std::make_shared<SessionReport::Data>(SessionReport::Data{std::move(report)});
    return r;
  }
};

}  // namespace layoutprof
