#include "record/backend_pass.h"

#include <ATen/Context.h>
#include <ATen/native/verbose_wrapper.h>  // torch::verbose::_mkldnn_set_verbose: LibTorch 1.13 and 2.x
#include <ATen/record_function.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "counters/onednn_log.h"

namespace layoutprof {

// What the callbacks share with the pass, under `mutex`.
struct BackendPass::State {
  std::mutex mutex;
  int log_fd = -1;    // the temporary file stdout writes to (read with pread)
  int saved_fd = -1;  // stdout as it was
  int64_t read_to = 0;
  LogSplitter splitter;
  std::thread::id main;  // the thread that calls forward()
  std::vector<std::string> main_stack;  // names of the ops open on it, outermost first
  int64_t top_ops = 0;                  // top-level ops it started
  int64_t other_open = 0;               // ops open on other threads
  bool other_seen = false;              // another thread had an op open since the last read
  struct Line {
    std::string text;
    int64_t top_op;
    std::string top_name, inner_name;
  };
  std::vector<Line> lines;
  std::vector<std::string> fresh;  // a read's new oneDNN lines (kept to save allocations)
  uint64_t callback = 0;
  bool running = false;

  // The bytes stdout received since the last read, their oneDNN lines charged to the op that
  // was innermost on forward()'s thread meanwhile, or to none.
  void read_new() {
    char buffer[65536];
    while (true) {
      const ssize_t n = pread(log_fd, buffer, sizeof buffer, read_to);
      if (n <= 0) break;
      read_to += n;
      splitter.feed(std::string_view(buffer, static_cast<size_t>(n)), fresh);
    }
    const bool known = !other_seen && !main_stack.empty();
    for (std::string& text : fresh)
      lines.push_back({std::move(text), known ? top_ops - 1 : -1, known ? main_stack.front() : "",
                       known ? main_stack.back() : ""});
    fresh.clear();
  }
};

namespace {

std::atomic<BackendPass::State*> g_pass{nullptr};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  BackendPass::State* s = g_pass.load(std::memory_order_acquire);
  if (!s) return nullptr;
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->running) return nullptr;
  s->read_new();
  if (std::this_thread::get_id() == s->main) {
    if (s->main_stack.empty()) ++s->top_ops;
    s->main_stack.emplace_back(fn.name());
  } else {
    ++s->other_open;
  }
  s->other_seen = s->other_open > 0;
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  BackendPass::State* s = g_pass.load(std::memory_order_acquire);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->running) return;
  s->read_new();
  if (std::this_thread::get_id() == s->main) {
    if (!s->main_stack.empty()) s->main_stack.pop_back();
  } else if (s->other_open > 0) {
    --s->other_open;
  }
  s->other_seen = s->other_open > 0;
}

[[noreturn]] void fail(const std::string& step) {
  throw std::runtime_error("the backend pass could not " + step + ": " + std::strerror(errno));
}

// An unlinked file in TMPDIR (or /var/tmp, as the spill file): what stdout writes meanwhile.
int open_log_file() {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/var/tmp";
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = dir + "/layoutprof-backend-XXXXXX";
  fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) fail("make a temporary file in " + dir + " for stdout");
  unlink(path.c_str());
  return fd;
}

void flush_stdout() {
  std::cout.flush();
  std::fflush(stdout);
}

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stdout closed: the user's bytes go where stdout would have taken them
    done += static_cast<size_t>(n);
  }
}

BackendLog parse_lines(const std::vector<BackendPass::State::Line>& lines, int64_t top_ops) {
  BackendLog log;
  log.state = "ran";
  log.top_ops = top_ops;
  for (const BackendPass::State::Line& line : lines) {
    if (log.library.empty()) log.library = onednn_version(line.text);
    bool understood = false;
    std::optional<BackendPrimitive> p = parse_onednn_exec(line.text, &understood);
    if (!p) {
      log.lines_unparsed += understood ? 0 : 1;
      continue;
    }
    p->top_op = line.top_op;
    p->top_name = line.top_name;
    p->inner_name = line.inner_name;
    log.primitives.push_back(std::move(*p));
  }
  return log;
}

}  // namespace

std::string backend_pass_unavailable() {
  for (const char* name : {"ONEDNN_VERBOSE", "DNNL_VERBOSE"})
    if (const char* v = std::getenv(name))
      return std::string("your own ") + name + "=" + v + " is set: oneDNN's log is yours, and layoutprof leaves it "
             "and its setting alone (unset it for the backend pass)";
  if (!at::hasMKLDNN()) return "this LibTorch was built without oneDNN (mkldnn)";
  return "";
}

BackendPass::BackendPass(bool training) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.main = std::this_thread::get_id();
  flush_stdout();
  s.log_fd = open_log_file();
  s.saved_fd = dup(STDOUT_FILENO);
  if (s.saved_fd < 0 || dup2(s.log_fd, STDOUT_FILENO) < 0) {
    const int err = errno;
    if (s.saved_fd >= 0) close(s.saved_fd);
    close(s.log_fd);
    errno = err;
    fail("capture stdout");
  }
  s.running = true;
  g_pass.store(&s, std::memory_order_release);
  auto callback = at::RecordFunctionCallback(on_start, on_end);
  s.callback = training ? at::addGlobalCallback(callback.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}))
                        : at::addGlobalCallback(callback.scopes({at::RecordScope::FUNCTION}));
  torch::verbose::_mkldnn_set_verbose(1);
}

BackendLog BackendPass::stop() {
  State& s = *state_;
  if (!s.running) return {};
  torch::verbose::_mkldnn_set_verbose(0);
  at::removeCallback(s.callback);
  flush_stdout();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.main_stack.clear();
    s.read_new();  // after the last op: charged to none
    s.running = false;
  }
  g_pass.store(nullptr, std::memory_order_release);
  dup2(s.saved_fd, STDOUT_FILENO);
  close(s.saved_fd);
  close(s.log_fd);
  s.splitter.finish();
  write_all(STDOUT_FILENO, s.splitter.user_bytes());
  return parse_lines(s.lines, s.top_ops);
}

BackendPass::~BackendPass() {
  try {
    stop();
  } catch (...) {
  }
}

}  // namespace layoutprof
