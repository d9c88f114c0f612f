#include "support/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace layoutprof {

namespace {

std::atomic<int> g_signal{0};
std::atomic<const char*> g_pending{nullptr};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<const char*>::is_always_lock_free,
              "used from a signal handler");

// Async-signal-safe only: atomics, write, unlink, _exit.
void on_signal(int sig) {
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) {
    static const char note[] =
        "layoutprof: interrupted: stopping after the call in progress and writing what was recorded "
        "(interrupt again to stop at once)\n";
    ssize_t ignored = ::write(STDERR_FILENO, note, sizeof note - 1);
    (void)ignored;
    return;
  }
  if (const char* pending = g_pending.load()) ::unlink(pending);
  ::_exit(128 + g_signal.load());
}

}  // namespace

void install_interrupt_handlers() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // reads and writes in progress go on
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    return true;
  }();
  (void)installed;
}

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

void set_pending_output(const char* path) { g_pending.store(path); }

}  // namespace layoutprof
