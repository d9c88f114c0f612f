// A Comparison (check, diff, --baseline) as text or as Markdown for a pull-request comment:
// the verdict, the layout copies' causes (baseline → new), each regression, the notes, and
// with the table, each module's figures.
#include "report/comparison_text.h"

#include <sstream>

#include "support/format.h"
#include "report/reporter.h"
#include "analysis/verdict.h"

namespace layoutprof {

namespace {

std::string scope_name(const std::string& module) { return module.empty() ? "(top)" : module; }

std::string pair(int64_t a, int64_t b) {
  return a == b ? std::to_string(a) : std::to_string(a) + " → " + std::to_string(b);
}

std::string pair_mb(int64_t a, int64_t b) { return a == b ? mb(a) : mb(a) + " → " + mb(b); }

std::string pair_ms(int64_t a, int64_t b) { return ms(a) + " → " + ms(b); }

const CopyCause* same_cause(const std::vector<CopyCause>& list, const CopyCause& k) {
  for (const CopyCause& other : list)
    if (other.kind == k.kind && other.cls == k.cls && other.what == k.what) return &other;
  return nullptr;
}

// One cause: its copies and bytes baseline → new, what it is, where, and its fix.
void write_cause(std::ostream& out, const CopyCause& k, const CopyCause* base, bool gone, bool md) {
  const int64_t copies[2] = {base ? base->copies : 0, gone ? 0 : k.copies};
  const int64_t bytes[2] = {base ? base->bytes : 0, gone ? 0 : k.bytes};
  std::vector<std::string> modules;
  for (const std::string& m : k.modules) modules.push_back(scope_name(m));
  out << (md ? "- " : "  cause  ") << pair(copies[0], copies[1]) << " "
      << (k.cls == CopyClass::explicit_layout ? "explicit" : "implicit") << ", " << pair_mb(bytes[0], bytes[1])
      << " MB: " << k.what << (gone ? " (gone)" : "") << "; in " << list_text(modules, 3);
  if (!k.sources.empty()) out << " at " << list_text(k.sources, 2);
  out << "\n";
  if (!gone) out << (md ? "  → " : "           → ") << k.fix << "\n";
}

// The new report's layout copies by cause, most bytes first, then the baseline's causes that
// are gone: what to act on, before the checks.
void write_causes(std::ostream& out, const Comparison& c, bool md) {
  if (c.new_causes.empty() && c.base_causes.empty()) return;
  out << (md ? "**Causes of the layout copies** (baseline → new):\n\n" : "  causes of the layout copies (baseline → new):\n");
  for (const CopyCause& k : c.new_causes) write_cause(out, k, same_cause(c.base_causes, k), false, md);
  for (const CopyCause& k : c.base_causes)
    if (!same_cause(c.new_causes, k)) write_cause(out, k, &k, true, md);
  if (md) out << "\n";
}

}  // namespace

std::string format_comparison(const Comparison& c, DiffFormat format, bool with_table) {
  std::ostringstream out;
  const bool md = format == DiffFormat::markdown;
  int failed = c.regressions();
  std::string verdict = failed ? "REGRESSED: " + std::to_string(failed) + " of " + std::to_string(c.checks.size()) + " checks failed"
                               : "OK: " + std::to_string(c.checks.size()) + " checks passed";
  if (md) {
    out << "### layoutprof: " << verdict << "\n\n";
    out << "baseline `" << c.base_name << "`, new `" << c.new_name << "`\n\n";
  } else {
    out << "layoutprof check: " << verdict << " (baseline " << c.base_name << ", new " << c.new_name << ")\n";
  }
  write_causes(out, c, md);
  for (const GateCheck& k : c.checks)
    if (!k.passed) out << (md ? "- **regression** " : "  REGRESSION  ") << check_line(k) << "\n";
  for (const std::string& n : c.notes) out << (md ? "- " : "  note  ") << n << "\n";
  if (!with_table) return out.str();

  const char* headers[] = {"module", "implicit", "explicit", "MB copied", "split points", "DTLB walks", "time ms"};
  std::vector<std::vector<std::string>> rows;
  for (const ModuleDiff& d : c.modules) {
    std::string name = scope_name(d.module) + (!d.in_base ? " (new)" : !d.in_new ? " (removed)" : "");
    rows.push_back({name, pair(d.implicit[0], d.implicit[1]), pair(d.explicit_copies[0], d.explicit_copies[1]),
                    pair_mb(d.copy_bytes[0], d.copy_bytes[1]), pair(d.split_points[0], d.split_points[1]),
                    pair(d.dtlb_walks[0], d.dtlb_walks[1]), pair_ms(d.time_ns[0], d.time_ns[1])});
  }
  out << "\n";
  if (md) {
    out << "|";
    for (const char* h : headers) out << " " << h << " |";
    out << "\n|";
    for (size_t i = 0; i < 7; ++i) out << (i ? "---:|" : "---|");
    out << "\n";
    for (const auto& row : rows) {
      out << "|";
      for (const auto& cell : row) out << " " << cell << " |";
      out << "\n";
    }
    out << "\nbaseline → new; copies, MB and split points derived, DTLB walks modelled, time measured\n";
    return out.str();
  }
  std::vector<size_t> col(7, 0);
  for (size_t i = 0; i < 7; ++i) col[i] = std::string(headers[i]).size();
  for (const auto& row : rows)
    for (size_t i = 0; i < 7; ++i) col[i] = std::max(col[i], width(row[i]));
  auto print_row = [&](const std::vector<std::string>& row) {
    out << " ";
    for (size_t i = 0; i < 7; ++i) out << (i == 0 ? " " + pad_right(row[i], col[i]) : "  " + pad_left(row[i], col[i]));
    out << "\n";
  };
  print_row({headers[0], headers[1], headers[2], headers[3], headers[4], headers[5], headers[6]});
  for (const auto& row : rows) print_row(row);
  out << "  (baseline → new; copies, MB and split points derived, DTLB walks modelled, time measured)\n";
  return out.str();
}


std::string check_line(const GateCheck& k) {
  std::string s = k.scope + ": " + k.rule + " " + k.before + " → " + k.after;
  if (!k.detail.empty()) s += ": " + k.detail;
  return s;
}

namespace {

class MarkdownReporter : public Reporter {
 public:
  std::string name() const override { return "markdown"; }
  bool writes_comparisons() const override { return true; }
  void write(std::ostream& out, const Comparison& c, const ReporterOptions& o) const override {
    out << format_comparison(c, DiffFormat::markdown, o.diff_table);
  }
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter() { return std::make_unique<MarkdownReporter>(); }

}  // namespace layoutprof
