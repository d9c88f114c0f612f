// The API's classes from inside: the EagerSession a Session drives, and a SessionReport made
// of a Report. Private to src/api.
#pragma once

#include <memory>

#include "core/pools.h"
#include "eager/session.h"
#include "layoutprof/report.h"
#include "layoutprof/session.h"

namespace layoutprof {

struct SessionReport::Data {
  PoolLease pools;  // what the report's names were interned in outlives it (core/pools.h)
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
    r.data_ = std::make_shared<SessionReport::Data>(SessionReport::Data{PoolLease(), std::move(report)});
    return r;
  }
};

}  // namespace layoutprof
