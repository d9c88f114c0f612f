// The fuzz targets' bodies: each reader of outside text, fed arbitrary bytes. A reader may
// refuse its input with the errors it documents (UsageError: exit 2, one line; the .pt2 reader's
// ModelLoadError: exit 3, one line); anything else (a crash, a sanitizer report, another
// exception, a hang) is a finding. Shared by the libFuzzer targets (fuzz_main.cpp, clang) and the
// regression test over the findings kept in tests/fuzz/regressions/
// (tests/unit/fuzz_regressions_test.cpp, every build).
#pragma once

#include <sys/mman.h>
#include <unistd.h>
#include <zip.h>

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>
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
#include "pt2/export_mode.h"
#include "pt2/program_reader.h"
#include "pt2/sym_expr.h"
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

// A zip (libzip, in memory) of these entries, stored uncompressed.
inline std::string zip_of(const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_source_t* out = zip_source_buffer_create(nullptr, 0, 0, nullptr);
  zip_source_keep(out);
  zip_t* z = zip_open_from_source(out, ZIP_TRUNCATE, nullptr);
  if (!z) throw std::runtime_error("zip_open_from_source");
  for (const auto& [name, data] : entries) {
    const zip_int64_t i = zip_file_add(z, name.c_str(), zip_source_buffer(z, data.data(), data.size(), 0), 0);
    if (i < 0 || zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0) != 0)
      throw std::runtime_error("zip_file_add");
  }
  if (zip_close(z) != 0) throw std::runtime_error("zip_close");
  std::string bytes;
  zip_stat_t st;
  if (zip_source_stat(out, &st) == 0 && zip_source_open(out) == 0) {
    bytes.resize(st.size);
    bytes.resize(static_cast<size_t>(std::max<zip_int64_t>(0, zip_source_read(out, bytes.data(), st.size))));
    zip_source_close(out);
  }
  zip_source_free(out);
  return bytes;
}

// Input that is not a zip is taken as "model.json \0 model_weights_config.json" beside a
// 4 KiB weight_0 (zeros): in a zip, the CRC would refuse nearly every change to the JSON before
// the reader saw it.
inline std::string pt2_archive(const uint8_t* data, size_t size) {
  const std::string input = text(data, size);
  if (input.rfind("PK", 0) == 0) return input;
  const size_t split = std::min(input.find('\0'), input.size());
  return zip_of({{"m/models/model.json", input.substr(0, split)},
                 {"m/data/weights/model_weights_config.json", split < input.size() ? input.substr(split + 1) : "{\"config\": {}}"},
                 {"m/data/weights/weight_0", std::string(4096, '\0')}});
}

// A .pt2 archive (ModelLoadError: exit 3, one line): its program read, then every stored tensor
// streamed into a buffer of the size its metadata asks, as the executor loads weights. The reader
// has checked that size against the entry's, so the metadata alone never sizes an allocation;
// past 64 MiB (an entry the zip says inflates that far) only the size is compared.
inline int pt2(const uint8_t* data, size_t size) {
  namespace p2 = layoutprof::pt2;
  try {
    const p2::Archive archive = p2::Archive::from_bytes(pt2_archive(data, size), "fuzz.pt2");
    const p2::Program program = p2::read_program(archive);
    for (const auto* stored : {&program.weights, &program.constants})
      for (const auto& [fqn, tensor] : *stored) {
        const uint64_t bytes = p2::storage_bytes(tensor.meta, fqn);
        if (bytes > archive.size(tensor.entry)) throw std::logic_error("a stored tensor longer than its entry was accepted");
        if (bytes > (uint64_t{64} << 20)) continue;
        std::vector<char> storage(bytes);
        archive.read_into(tensor.entry, storage.data(), bytes);
      }
    // What the runner derives from the program before it runs: its mode, and its sizes'
    // values (each range's symbol bound to 3): an answer or none, never a throw.
    (void)p2::export_mode(program.graph);
    std::map<std::string, int64_t> symbols;
    for (const auto& [symbol, range] : program.range_constraints) symbols[symbol] = 3;
    for (const auto& [name, meta] : program.graph.tensor_values)
      for (const p2::SymIntValue& dim : meta.sizes)
        if (!dim.value) (void)p2::evaluate_size(dim.expr, symbols);
  } catch (const ModelLoadError& e) {
    one_line(e);
  }
  return 0;
}

}  // namespace layoutprof::fuzz
