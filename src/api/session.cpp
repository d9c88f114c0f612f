// layoutprof::Session: the C++ API's recording, an EagerSession driven by steps.
#include "layoutprof/session.h"

#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "api/program_sites.h"
#include "api/session_access.h"
#include "eager/module_sites.h"
#include "eager/session.h"

namespace layoutprof {

namespace {

// The process's one recording session, claimed by a Session as it begins and given back as it
// stops. A forked child inherits its parent's, which does not record in the child.
struct ActiveSession {
  std::mutex mutex;
  Session* session = nullptr;
  pid_t pid = 0;
};

ActiveSession& active() {
  static ActiveSession* a = new ActiveSession;  // used at exit, after static destructors begin
  return *a;
}

void claim(Session* session) {
  ActiveSession& a = active();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.session && a.pid == getpid())
    throw std::runtime_error("layoutprof: another session is recording in this process (one records at a time): "
                             "stop it before beginning this one");
  a.session = session;
  a.pid = getpid();
}

void release(Session* session) {
  ActiveSession& a = active();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (a.session == session) a.session = nullptr;
}

EagerOptions eager_options(const SessionOptions& o) {
  if (o.warmup < 0 || o.steps < 0) throw std::runtime_error("layoutprof: SessionOptions: warmup and steps must be >= 0");
  EagerOptions e;
  e.name = o.name.empty() ? "program" : o.name;
  e.torch_version = TORCH_VERSION;
  e.threads = at::get_num_threads();
  e.autograd = o.autograd;
  e.warmup = o.warmup;
  e.max_ops = o.max_ops;
  e.counters = o.counters;
  e.events = o.events;
  e.gpu = o.gpu;
  e.reset_modules = false;  // a Scope open across steps stays open
  return e;
}

void at_exit();

}  // namespace

struct Session::State {
  SessionOptions options;
  std::unique_ptr<EagerSession> eager;
  int index = 0;          // the step under way
  bool failed = false;    // a step failed: none is recorded after it
  bool stopped = false;

  bool recorded(int step) const {
    const int n = step - options.warmup;
    return !failed && n >= 0 && (options.steps == 0 || n < options.steps);
  }
  void begin_if_recorded() {
    if (recorded(index)) eager->begin_call();
  }
  // The report, written to the options' files; the session gives back its claim.
  SessionReport finish(Session* self) {
    stopped = true;
    module_sites().set_source_probe(nullptr);
    release(self);
    SessionReport report = SessionAccess::report(eager->finish());
    eager.reset();
    write_outputs(report);
    return report;
  }
  // Each file asked for, whole or not at all; the first that could not be written throws, after
  // the others were tried.
  void write_outputs(const SessionReport& report) const {
    const std::pair<const char*, const std::string*> outputs[] = {
        {"json", &options.json}, {"text", &options.text}, {"html", &options.html}};
    std::string error;
    for (const auto& [format, path] : outputs) try {
        if (!path->empty()) report.write(format, *path);
      } catch (const std::exception& e) {
        if (error.empty()) error = e.what();
      }
    if (!error.empty()) throw std::runtime_error(error);
  }
};

Session::Session(SessionOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  const EagerOptions eager = eager_options(options);
  claim(this);  // first: a second session must not start the recorder under the first one's
  try {
    s.eager = std::make_unique<EagerSession>(eager);
  } catch (...) {
    release(this);
    throw;
  }
  s.options = std::move(options);
  s.eager->accept(s.options.accept);
  module_sites().set_source_probe(&program_source);
  // At each session: a handler runs before the statics constructed before it are destroyed
  // (those the earlier sessions' analysis and reporters made), so each session registers anew.
  std::atexit(at_exit);
  s.begin_if_recorded();
}

Session::~Session() {
  if (state_->stopped) return;
  try {
    state_->eager->not_stopped("as the Session was destroyed");
    state_->finish(this);
  } catch (...) {  // a destructor: the reports are written when they can be
  }
}

void Session::step() {
  State& s = *state_;
  if (s.stopped) throw std::logic_error("layoutprof: Session::step() after stop()");
  if (s.eager->in_call()) s.eager->end_call();
  ++s.index;
  s.begin_if_recorded();
}

void Session::fail(const std::string& error) {
  State& s = *state_;
  if (s.stopped) throw std::logic_error("layoutprof: Session::fail() after stop()");
  if (s.eager->in_call()) s.eager->end_call(error.empty() ? "failed" : error);
  else s.eager->fail(error.empty() ? "failed" : error);
  s.failed = true;
}

SessionReport Session::stop() {
  State& s = *state_;
  if (s.stopped) throw std::logic_error("layoutprof: Session::stop() twice");
  if (s.eager->in_call()) s.eager->end_last_call();
  return s.finish(this);
}

int Session::step_index() const { return state_->index; }

bool Session::recording() const { return !state_->stopped && state_->eager->in_call(); }

bool SessionAccess::named(const Session& session) { return !session.state_->options.name.empty(); }

void SessionAccess::finish(Session& session) { session.state_->finish(&session); }

EagerSession& SessionAccess::eager(Session& session) {
  if (session.state_->stopped) throw std::logic_error("layoutprof: the session is stopped");
  return *session.state_->eager;
}

namespace {

// The program exits with a session never stopped: its reports are written (interrupted).
void at_exit() {
  ActiveSession& a = active();
  Session* session = nullptr;
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    if (a.pid == getpid()) session = a.session;
  }
  if (!session) return;
  try {
    SessionAccess::eager(*session).not_stopped("as the program exited");
    SessionAccess::finish(*session);
  } catch (...) {  // exiting: nothing can be reported of a failure to report
  }
}

}  // namespace

}  // namespace layoutprof
