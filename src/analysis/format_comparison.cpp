#include "analysis/format_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "support/format.h"
#include "analysis/analysis.h"
#include "analysis/heatmap.h"
#include "analysis/paired_rounds.h"

namespace layoutprof {

TimeSpread time_spread(std::vector<int64_t> ns) {
  TimeSpread t;
  if (ns.empty()) return t;
  std::sort(ns.begin(), ns.end());
  // Linear interpolation between the two sorted calls around h = (n - 1) * p.
  auto quantile = [&ns](double p) {
    const double h = static_cast<double>(ns.size() - 1) * p;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, ns.size() - 1);
    const double v = static_cast<double>(ns[lo]) + (h - static_cast<double>(lo)) * static_cast<double>(ns[hi] - ns[lo]);
    return static_cast<int64_t>(std::llround(v));
  };
  t.calls = static_cast<int64_t>(ns.size());
  t.min_ns = ns.front();
  t.q1_ns = quantile(0.25);
  t.median_ns = quantile(0.5);
  t.q3_ns = quantile(0.75);
  t.max_ns = ns.back();
  return t;
}

std::string CopyGroup::key() const {
  // Fields joined by a byte no op name, path or layout label holds.
  const char sep = '\x1f';
  return std::string(copy_class_name(cls)) + sep + op + sep + module + sep + source + sep + src_layout + sep +
         dst_layout;
}

std::vector<CopyGroup> copy_groups(const Report& report) {
  require_whole_report(report);  // copies' culprits are ids, which index a whole report's ops
  std::vector<CopyGroup> groups;
  std::map<std::string, size_t> index;
  for (const CopyRecord& c : report.copies) {
    CopyGroup g;
    g.cls = c.cls;
    if (c.culprit >= 0 && c.culprit < static_cast<int64_t>(report.ops.size())) {
      const OpEvent& culprit = report.ops[static_cast<size_t>(c.culprit)];
      g.op = culprit.name.str();
      g.module = culprit.module.str();
      g.source = culprit.source.str();
      g.source_text = culprit.source_text.str();
    }
    g.src_layout = c.src.label().str();
    g.dst_layout = c.dst.label().str();
    auto [it, inserted] = index.emplace(g.key(), groups.size());
    if (inserted) groups.push_back(g);
    CopyGroup& in = groups[it->second];
    in.count++;
    in.bytes += c.bytes;
  }
  return groups;
}

bool FormatVariant::same_as_given() const {
  const Conversion& c = report.run.conversion;
  return c.parameters == 0 && c.buffers == 0 && c.inputs == 0;
}

int64_t CopyDelta::added_bytes() const {
  int64_t b = 0;
  for (const CopyChange& c : added) b += c.bytes_after - c.bytes_before;
  return b;
}

int64_t CopyDelta::avoided_bytes() const {
  int64_t b = 0;
  for (const CopyChange& c : avoided) b += c.bytes_before - c.bytes_after;
  return b;
}

CopyDelta copy_delta(const Report& as_given, const Report& variant, const std::string& variant_name) {
  CopyDelta d;
  d.variant = variant_name;
  const std::vector<CopyGroup> before = copy_groups(as_given), after = copy_groups(variant);
  std::map<std::string, const CopyGroup*> before_by_key, after_by_key;
  for (const CopyGroup& g : before) before_by_key[g.key()] = &g;
  for (const CopyGroup& g : after) after_by_key[g.key()] = &g;
  // The variant's groups in its order: more, fewer or other bytes than as_given's.
  for (const CopyGroup& g : after) {
    auto it = before_by_key.find(g.key());
    const CopyGroup* b = it == before_by_key.end() ? nullptr : it->second;
    CopyChange c{g, b ? b->count : 0, g.count, b ? b->bytes : 0, g.bytes};
    if (c.count_after > c.count_before) d.added.push_back(c);
    else if (c.count_after < c.count_before) d.avoided.push_back(c);
    else if (c.bytes_after != c.bytes_before) d.resized.push_back(c);
  }
  // as_given's groups the variant does not have at all, in as_given's order.
  for (const CopyGroup& g : before)
    if (!after_by_key.count(g.key())) d.avoided.push_back({g, g.count, 0, g.bytes, 0});
  return d;
}

namespace {

// Why a variant takes no part in the timing verdict; empty when it does.
std::string not_timed_reason(const FormatVariant& v) {
  if (!v.ran) return v.name + ": not run (" + v.skipped + ")";
  const RunInfo& run = v.report.run;
  if (run.status == RunStatus::failed) return v.name + ": could not run: " + run.error;
  if (run.status != RunStatus::ok)
    return v.name + ": " + to_string(run.status) + (run.error.empty() ? "" : " (" + run.error + ")");
  if (v.time.calls == 0) return v.name + ": no plain calls";
  return "";
}

std::string ratio_text(double ratio) { return fixed(ratio, 2) + "x"; }

// The variants that take part in the timing verdict, lowest median first; the others' reasons
// go to v.not_timed.
std::vector<const FormatVariant*> timed_variants(const std::vector<FormatVariant>& variants, FormatVerdict& v) {
  std::vector<const FormatVariant*> timed;
  for (const FormatVariant& f : variants) {
    std::string why = not_timed_reason(f);
    if (why.empty()) timed.push_back(&f);
    else v.not_timed.push_back(why);
  }
  // Lowest median first; stable, so that a tie keeps the variants' order.
  std::stable_sort(timed.begin(), timed.end(), [](const FormatVariant* a, const FormatVariant* b) {
    return a->time.median_ns < b->time.median_ns;
  });
  return timed;
}

// The rounds' reading in words.
std::string rounds_why(const PairedRounds& p) {
  switch (p.saving) {
    case Saving::slower: return "beyond noise: " + p.text();
    case Saving::not_judged:
      return "not judged: " + std::to_string(p.rounds) + " rounds give no interval at " +
             signed_percent(p.level).substr(1) +
             " (at least " + std::to_string(rounds_needed(p.level)) + " are needed)";
    case Saving::withheld: return "not judged: the control was not within noise; " + p.text();
    case Saving::faster: return "within noise: paired round by round it was the faster; " + p.text();
    case Saving::within_noise: break;
  }
  return p.text();
}

// Where the other timed variants stand against the fastest.
struct Standing {
  const TimeAgainstFastest* nearest_beyond = nullptr;  // the closest that differs beyond noise
  std::vector<std::string> within;  // within noise of the fastest, or not judged
  std::vector<std::string> same;    // ran the fastest's very tensors
  bool judged = true;               // every pair had rounds enough for an interval
};

// The fastest against each other timed variant, paired round by round: v.fastest and
// v.against (which the standing's nearest_beyond points into).
Standing against_fastest(const std::vector<const FormatVariant*>& timed, FormatVerdict& v) {
  Standing s;
  if (timed.empty()) return s;
  const FormatVariant& fastest = *timed.front();
  v.fastest = fastest.name;
  const int comparisons = static_cast<int>(std::max<size_t>(1, timed.size() - 1));
  for (size_t i = 1; i < timed.size(); ++i) {
    const FormatVariant& other = *timed[i];
    TimeAgainstFastest t;
    t.variant = other.name;
    t.difference_ns = other.time.median_ns - fastest.time.median_ns;
    t.ratio = fastest.time.median_ns > 0 ? static_cast<double>(other.time.median_ns) /
                                               static_cast<double>(fastest.time.median_ns)
                                         : 1.0;
    t.rounds = pair_first_rounds(fastest.report.run.plain_call_ns, other.report.run.plain_call_ns, comparisons);
    if (v.control_failed && t.rounds.saving != Saving::not_judged) t.rounds.saving = Saving::withheld;
    t.beyond_noise = t.rounds.saving == Saving::slower;
    t.why = rounds_why(t.rounds);
    v.against.push_back(t);
  }
  for (size_t i = 0; i < v.against.size(); ++i) {
    const TimeAgainstFastest& t = v.against[i];
    s.judged = s.judged && t.rounds.saving != Saving::not_judged;
    // Two variants that converted nothing ran the same tensors: no finding.
    if (fastest.same_as_given() && timed[i + 1]->same_as_given()) s.same.push_back(t.variant);
    else if (!t.beyond_noise) s.within.push_back(t.variant);
    else if (!s.nearest_beyond) s.nearest_beyond = &t;
  }
  return s;
}

// The control: as_given's first call of each round against its second (v.control_rounds,
// v.control, v.control_failed).
void run_control(const std::vector<FormatVariant>& variants, const std::vector<int64_t>& again, FormatVerdict& v) {
  for (const FormatVariant& f : variants) {
    if (f.name != "as_given" || !not_timed_reason(f).empty() || again.empty()) continue;
    v.control_rounds = pair_first_rounds(f.report.run.plain_call_ns, again, 1);
    v.control_failed = v.control_rounds.saving == Saving::faster || v.control_rounds.saving == Saving::slower;
    v.control = "as_given against itself, timed first and last in each round: " + v.control_rounds.text();
  }
}

// The copies each converted variant adds or avoids, against as_given.
std::vector<CopyDelta> copies_against_given(const std::vector<FormatVariant>& variants) {
  std::vector<CopyDelta> copies;
  const FormatVariant* as_given = nullptr;
  for (const FormatVariant& f : variants)
    if (f.name == "as_given" && f.ok()) as_given = &f;
  if (as_given)
    for (const FormatVariant& f : variants)
      if (&f != as_given && f.ok()) copies.push_back(copy_delta(as_given->report, f.report, f.name));
  return copies;
}

// "a", "a and b", "a, b and c".
std::string name_list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + names[i];
  return text;
}

// The verdict in one line.
std::string verdict_summary(const FormatVerdict& v, bool none_timed, const Standing& s) {
  const std::string same_note =
      s.same.empty() ? "" : "; " + name_list(s.same) + " ran the same tensors as " + v.fastest;
  if (none_timed) return "no verdict on time: no variant ran plain calls";
  if (v.control_failed)
    return "no verdict on time: as_given against itself differs beyond noise, so this run's noise is larger than "
           "the intervals see (other load on the machine?); run it again on a quiet machine";
  if (v.against.empty())
    return "no verdict on time: only " + v.fastest + " ran with timings, nothing to compare it with";
  if (!s.judged)
    return "no verdict on time: " + std::to_string(v.against.front().rounds.rounds) +
           " rounds are too few for an interval (--timed-calls " +
           std::to_string(rounds_needed(v.against.front().rounds.level)) + " or more)";
  if (v.clear) {
    const PairedRounds& p = s.nearest_beyond->rounds;
    return v.fastest + " is fastest here: " + ratio_text(s.nearest_beyond->ratio) + " faster than " +
           s.nearest_beyond->variant + " (" + ms(s.nearest_beyond->difference_ns) +
           " ms less per call, paired interval " + ms(static_cast<int64_t>(p.low_ns)) + ".." +
           ms(static_cast<int64_t>(p.high_ns)) + " ms), beyond noise" + same_note;
  }
  if (!s.within.empty())
    return v.fastest + " has the lowest median, but within noise of " + name_list(s.within) +
           ": no variant is measurably fastest here" + same_note;
  return "no verdict on time: every timed variant ran the same tensors (nothing was converted)";
}

}  // namespace

FormatVerdict format_verdict(const std::vector<FormatVariant>& variants, const std::vector<int64_t>& given_again_ns) {
  FormatVerdict v;
  run_control(variants, given_again_ns, v);
  const std::vector<const FormatVariant*> timed = timed_variants(variants, v);
  const Standing standing = against_fastest(timed, v);
  v.clear = !v.control_failed && standing.judged && standing.nearest_beyond && standing.within.empty();
  v.copies = copies_against_given(variants);
  v.summary = verdict_summary(v, timed.empty(), standing);
  return v;
}

std::vector<FormatRow> format_rows(const Report& report, int depth, const std::vector<std::string>& labels) {
  std::vector<FormatRow> rows(labels.size());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < labels.size(); ++i) {
    rows[i].label = labels[i];
    index[labels[i]] = i;
  }
  const std::vector<int64_t> top = top_level_ancestors(report.ops);
  auto row_of = [&](int64_t op) -> FormatRow* {
    if (op < 0 || op >= static_cast<int64_t>(report.ops.size())) return nullptr;
    auto it = index.find(heatmap_row_label(report, report.ops[top[op]], GroupBy::module, depth));
    return it == index.end() ? nullptr : &rows[it->second];
  };
  for (const CopyRecord& c : report.copies)
    if (FormatRow* row = row_of(c.op)) {
      row->implicit_copies += c.cls == CopyClass::implicit_layout;
      row->copy_bytes += c.bytes;
      if (is_layout_copy(c.cls)) row->layout_copy_bytes += c.bytes;
    }
  for (const SplitPoint& s : report.split_points)
    if (FormatRow* row = row_of(s.op)) row->split_points++;
  FormatRow total;
  total.label = "(total)";
  const Summary& sum = report.summary;
  total.implicit_copies = sum.copies[static_cast<int>(CopyClass::implicit_layout)];
  for (int64_t b : sum.copy_bytes) total.copy_bytes += b;
  total.layout_copy_bytes = sum.copy_bytes[static_cast<int>(CopyClass::implicit_layout)] +
                            sum.copy_bytes[static_cast<int>(CopyClass::explicit_layout)];
  total.split_points = sum.split_points;
  rows.push_back(total);
  return rows;
}

FormatComparison compare_formats(std::vector<FormatVariant> variants, std::vector<int64_t> given_again_ns,
                                 int depth) {
  FormatComparison c;
  c.given_again_ns = std::move(given_again_ns);
  for (FormatVariant& v : variants) {
    if (v.ran) v.time = time_spread(v.report.run.plain_call_ns);
    if (v.ran && c.model.empty()) c.model = v.report.run.model;
  }
  c.variants = std::move(variants);
  // The heatmap's automatic depth, of as_given's report (else the first with ops).
  const Report* shape = nullptr;
  for (const FormatVariant& v : c.variants) {
    if (!v.ran || v.report.ops.empty()) continue;
    if (v.name == "as_given") {
      shape = &v.report;
      break;
    }
    if (!shape) shape = &v.report;
  }
  c.depth = depth > 0 ? depth : shape ? auto_depth(*shape, 40) : 1;
  // Every variant's modules, in order of first appearance (as_given's first).
  std::map<std::string, bool> seen;
  for (const FormatVariant& v : c.variants) {
    if (!v.ran) continue;
    const std::vector<int64_t> top = top_level_ancestors(v.report.ops);
    for (const OpEvent& op : v.report.ops) {
      if (op.parent >= 0) continue;
      std::string label = heatmap_row_label(v.report, v.report.ops[top[op.id]], GroupBy::module, c.depth);
      if (!seen[label]) {
        seen[label] = true;
        c.labels.push_back(label);
      }
    }
  }
  for (const FormatVariant& v : c.variants) c.rows.push_back(format_rows(v.report, c.depth, c.labels));
  c.verdict = format_verdict(c.variants, c.given_again_ns);
  return c;
}

}  // namespace layoutprof
