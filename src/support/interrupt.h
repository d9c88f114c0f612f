// Ctrl-C (SIGINT) and SIGTERM during a run. The first asks the run to stop after the call in
// progress and to report what it recorded (status "interrupted", exit 128 + the signal: 130,
// 143); a second exits at once, with that status, removing the output file being written so
// that no partial file is left (every output is written to a temporary file, then renamed).
#pragma once

namespace layoutprof {

// Installs the handlers (once; later calls do nothing).
void install_interrupt_handlers();
// The first signal received since then: 0, SIGINT or SIGTERM.
int interrupt_signal();
// The temporary file an atomic write is filling, which a second signal removes; nullptr when
// none. The text must live until it is cleared.
void set_pending_output(const char* path);

}  // namespace layoutprof
