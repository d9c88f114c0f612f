// The fuzz targets' bodies: each reader of outside text, fed arbitrary bytes. A reader may
// refuse its input with the errors it documents (UsageError: exit 2, one line); anything
// else (a crash, a sanitizer report, another exception, a hang) is a finding. Shared by the
// libFuzzer targets (fuzz_main.cpp, clang) and the regression test over the findings kept in
// tests/fuzz/regressions/ (tests/unit/fuzz_regressions_test.cpp, every build).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "counters/counters.h"
#include "analysis/dtlb_model.h"
#include "support/errors.h"
#include "report/comparison_text.h"
#include "gate/gate.h"
#include "core/input_spec.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace layoutprof::fuzz {

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// A documented refusal must be one line.
inline void one_line(const std::exception& e) {
  if (std::string(e.what()).find('\n') != std::string::npos) throw std::logic_error("a multi-line error message");
}

// --input DIMxDIM...[:dtype][:format][:grad]
inline int input_spec(const uint8_t* data, size_t size) {
  try {
    InputSpec spec = parse_input_spec(text(data, size));
    if (input_bytes(spec) < 0) throw std::logic_error("an input spec past 2^63 bytes was accepted");
  } catch (const UsageError& e) {
    one_line(e);
  }
  return 0;
}

// --tlb l1=ENTRIES:WAYS,l2=ENTRIES:WAYS,page=4k|2m; an accepted one is written back and read again.
inline int tlb(const uint8_t* data, size_t size) {
  try {
    TlbConfig c = parse_tlb_config(text(data, size));
    TlbConfig again = parse_tlb_config(tlb_config_string(c));
    if (tlb_config_string(again) != tlb_config_string(c)) throw std::logic_error("--tlb does not round-trip");
  } catch (const UsageError& e) {
    one_line(e);
  }
  return 0;
}

// --events: the list, then each name through libpfm4's encoder (no event is opened).
inline int events(const uint8_t* data, size_t size) {
  try {
    for (const std::string& event : split_event_list(text(data, size))) {
      try {
        PerfCounters::encode(event);
      } catch (const std::runtime_error& e) {  // an unknown event: named, with libpfm4's reason
        one_line(e);
      }
    }
  } catch (const UsageError& e) {
    one_line(e);
  }
  return 0;
}

// The gate's thresholds: --max-copy-bytes-increase 5%, --gate-time 0.1, ...
inline int fraction(const uint8_t* data, size_t size) {
  try {
    double v = parse_fraction("--max-copy-bytes-increase", text(data, size));
    if (!(v >= 0)) throw std::logic_error("a negative or NaN threshold was accepted");
  } catch (const UsageError& e) {
    one_line(e);
  }
  return 0;
}

// A report or baseline, as render, check, diff and --baseline read it; what reads back is
// rendered and compared with itself, as those commands do.
inline int report(const uint8_t* data, size_t size) {
  const int fd = ::memfd_create("report", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("memfd_create");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  for (size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) throw std::runtime_error("writing the memfd");
    done += static_cast<size_t>(n);
  }
  std::optional<Report> whole;
  std::string whole_text;  // its comparison with itself
  try {
    ::lseek(fd, 0, SEEK_SET);
    Report r = read_report_fd(fd, "fuzz.json", OpDetail::full);
    std::ostringstream out;
    write_text_report(out, r, TextOptions{});
    check_comparable(r, r);
    Comparison c = compare_reports(r, r, GateOptions{});
    if (c.regressed()) throw std::logic_error("a report regressed against itself");
    whole_text = format_comparison(c, DiffFormat::markdown, true);
    (void)report_json_text(r);
    whole = std::move(r);
  } catch (const UsageError& e) {
    one_line(e);
  }
  // As the gate reads it: the same comparison as from the whole report.
  try {
    ::lseek(fd, 0, SEEK_SET);
    Report g = read_report_fd(fd, "fuzz.json", OpDetail::top_level);
    check_comparable(g, g);
    Comparison c = compare_reports(g, g, GateOptions{});
    if (c.regressed()) throw std::logic_error("a report read for the gate regressed against itself");
    if (whole) {
      if (format_comparison(c, DiffFormat::markdown, true) != whole_text)
        throw std::logic_error("the gate's read of a report compares otherwise than the whole report");
      if (compare_reports(*whole, g, GateOptions{}).regressed())  // as --baseline compares
        throw std::logic_error("a report regressed against its own gate read");
    }
  } catch (const UsageError& e) {
    one_line(e);
  }
  return 0;
}

}  // namespace layoutprof::fuzz
