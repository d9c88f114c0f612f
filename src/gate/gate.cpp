#include "gate/gate.h"

#include "analysis/cause_text.h"
#include "analysis/hazards.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

// {fmt} in this .cpp only (see support/format.cpp: never in a header torch-linked files read).
#include <fmt/format.h>

#include "analysis/analysis.h"
#include "analysis/backend_conversions.h"
#include "support/errors.h"
#include "support/format.h"

namespace layoutprof {

double parse_fraction(const std::string& option, const std::string& text) {
  std::string number = text;
  bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  try {
    size_t used = 0;
    double v = std::stod(number, &used);
    if (used != number.size() || v < 0 || !std::isfinite(v)) throw std::invalid_argument(text);
    return percent ? v / 100.0 : v;
  } catch (const std::logic_error&) {
    throw UsageError(option + " '" + bounded(text) + "': expected a percentage like 5% or a fraction like 0.05");
  }
}

bool Comparison::regressed() const { return regressions() > 0; }

bool Comparison::failed(const std::string& rule) const {
  return std::any_of(checks.begin(), checks.end(), [&rule](const GateCheck& c) { return c.rule == rule && !c.passed; });
}

int Comparison::regressions() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const GateCheck& c) { return !c.passed; }));
}

namespace {

std::string input_signature(const RunInfo& run) {
  std::string s;
  // In process the inputs are what the user's code passed, noted for the causes; reports of
  // eager runs are compared whatever they were, as before they were noted.
  if (run.model_format == "eager") return s;
  for (const ModelInput& in : run.inputs) {
    s += in.spec.dtype + ":" + in.spec.format + ":";
    for (int64_t d : in.spec.sizes) s += std::to_string(d) + "x";
    for (int p : in.spec.perm) s += std::to_string(p) + ",";
    s += " ";
  }
  return s;
}

std::string inputs_text(const RunInfo& run) {
  std::string s;
  for (const ModelInput& in : run.inputs) s += (s.empty() ? "" : " ") + in.spec.text;
  return s.empty() ? "(none)" : s;
}

}  // namespace

void check_comparable(const Report& base, const Report& now) {
  // The gate compares whole runs: a report cut short by --max-ops, or by an interrupt, would
  // gate on a part.
  for (const auto& [r, which] : {std::pair{&base, "baseline"}, std::pair{&now, "new report"}}) {
    if (r->run.status == RunStatus::interrupted)
      throw UsageError("the " + std::string(which) + " is of an interrupted run (" + bounded(r->run.error) +
                       "): the gate compares whole runs; run it again");
    if (r->run.calls_recorded == 0 && r->run.status == RunStatus::ok)
      throw UsageError("the " + std::string(which) + " recorded no call: nothing to gate on (did the model run?)");
    if (r->run.ops_not_recorded > 0)
      throw UsageError("the " + std::string(which) + " stopped recording at --max-ops " +
                       std::to_string(r->run.max_ops) + " (" + std::to_string(r->run.ops_not_recorded) +
                       " op events not recorded): the gate compares whole calls; raise --max-ops");
  }
  if (input_signature(base.run) != input_signature(now.run))
    throw UsageError("the reports were made with other inputs (baseline: " + bounded(inputs_text(base.run)) +
                     "; new: " + bounded(inputs_text(now.run)) + "): make a baseline with the same --input");
  if (base.run.device != now.run.device)
    throw UsageError("the reports ran on other devices (baseline: " + bounded(base.run.device) +
                     ", new: " + bounded(now.run.device) + ")");
}

namespace {

// Longest common subsequence of two name lists: pairs of indices.
std::vector<std::pair<size_t, size_t>> lcs(const std::vector<std::string>& a,
                                           const std::vector<std::string>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint32_t>> len(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      len[i][j] = a[i] == b[j] ? len[i + 1][j + 1] + 1 : std::max(len[i + 1][j], len[i][j + 1]);
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j]) {
      pairs.emplace_back(i++, j++);
    } else if (len[i + 1][j] >= len[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

// Positions in r.ops of each module's top-level ops, in order (positions, not ids: a report
// read for the gate holds its top-level ops only).
std::map<std::string, std::vector<int64_t>> top_level_by_module(const Report& r) {
  std::map<std::string, std::vector<int64_t>> by;
  for (size_t i = 0; i < r.ops.size(); ++i)
    if (r.ops[i].parent < 0) by[r.ops[i].module].push_back(static_cast<int64_t>(i));
  return by;
}

}  // namespace

std::vector<int64_t> align_top_level_ops(const Report& base, const Report& now) {
  std::vector<int64_t> match(now.ops.size(), -1);
  auto base_by = top_level_by_module(base);
  for (const auto& [module, now_ids] : top_level_by_module(now)) {
    auto it = base_by.find(module);
    if (it == base_by.end()) continue;
    const auto& base_ids = it->second;
    // Long modules are aligned window by window, each window starting after the last pair
    // the previous one settled (so an insertion does not shift the windows' boundaries);
    // only pairs in a window's first half are settled, unless it reaches both ends.
    const size_t kWindow = 2048;
    size_t i0 = 0, j0 = 0;
    while (i0 < base_ids.size() && j0 < now_ids.size()) {
      // A common prefix pairs up as it is (an LCS can always take it): comparing a model with
      // itself stays linear, and only the windows at a difference pay for the LCS table.
      while (i0 < base_ids.size() && j0 < now_ids.size() &&
             base.ops[base_ids[i0]].name == now.ops[now_ids[j0]].name)
        match[now_ids[j0++]] = base_ids[i0++];
      if (i0 == base_ids.size() || j0 == now_ids.size()) break;
      size_t na = std::min(kWindow, base_ids.size() - i0), nb = std::min(kWindow, now_ids.size() - j0);
      std::vector<std::string> a, b;
      for (size_t i = 0; i < na; ++i) a.push_back(base.ops[base_ids[i0 + i]].name);
      for (size_t j = 0; j < nb; ++j) b.push_back(now.ops[now_ids[j0 + j]].name);
      auto pairs = lcs(a, b);
      const bool last = i0 + na == base_ids.size() && j0 + nb == now_ids.size();
      const size_t half_i = i0 + na / 2, half_j = j0 + nb / 2;
      size_t settled_i = i0, settled_j = j0;
      bool any = false;
      for (auto [i, j] : pairs) {
        // Past the window's first half a pair may be an artefact of the window's edge: the
        // next window, anchored here, settles it.
        if (!last && any && (i0 + i >= half_i || j0 + j >= half_j)) break;
        match[now_ids[j0 + j]] = base_ids[i0 + i];
        settled_i = i0 + i + 1;
        settled_j = j0 + j + 1;
        any = true;
      }
      if (last) break;
      if (!any) {  // nothing in common in this window: move past it
        i0 += na;
        j0 += nb;
      } else {
        i0 = settled_i;
        j0 = settled_j;
      }
    }
  }
  return match;
}

namespace {

std::string fmt_mb(int64_t bytes) { return bytes < 100000 ? std::to_string(bytes) + " B" : mb(bytes) + " MB"; }

std::string fmt_ms(int64_t ns) { return ms(ns) + " ms"; }

std::string fmt_change(double before, double after) {
  if (before == 0) return after == 0 ? "" : " (new)";
  return fmt::format(" ({:+.1f}%)", 100.0 * (after - before) / before);
}

// More than `fraction` above `before`. Growth from zero has no ratio: the count rules (new
// implicit copies, new split points) judge it.
bool exceeds(double before, double after, double fraction) {
  return before > 0 && after - before > fraction * before;
}

// Copied bytes grew past both allowances: the relative one and, from zero, the absolute one.
bool bytes_grew(int64_t before, int64_t after, const GateOptions& o) {
  double allowed = std::max(static_cast<double>(o.max_new_copy_bytes), o.max_copy_bytes_increase * static_cast<double>(before));
  return static_cast<double>(after - before) > allowed;
}

std::string where(const OpEvent& op) {
  std::string s = op.name;
  if (!op.source.empty()) s += " at " + op.source;
  return s;
}

std::string scope_name(const std::string& module) { return module.empty() ? "(top)" : module; }

struct Side {
  const Report& r;
  std::map<std::string, const ModuleStats*> modules;
  std::map<int64_t, int64_t> implicit_by_op;  // top-level op -> implicit layout copies
  std::map<int64_t, const SplitPoint*> split_by_op;
  std::map<std::string, std::vector<int64_t>> top_level;  // module -> its top-level ops, in order
  explicit Side(const Report& report) : r(report), top_level(top_level_by_module(report)) {
    for (const ModuleStats& m : r.modules) modules[m.module] = &m;
    for (const CopyRecord& c : r.copies)
      if (c.cls == CopyClass::implicit_layout) implicit_by_op[c.culprit]++;
    for (const SplitPoint& sp : r.split_points) split_by_op[sp.op] = &sp;
  }
  const ModuleStats* module(const std::string& m) const {
    auto it = modules.find(m);
    return it == modules.end() ? nullptr : it->second;
  }
  // The position in r.ops of the op with this id (ops are in id order; a report read for the
  // gate holds its top-level ops only), -1 if not there.
  int64_t position(int64_t id) const {
    auto it = std::lower_bound(r.ops.begin(), r.ops.end(), id,
                               [](const OpEvent& op, int64_t v) { return op.id < v; });
    return it != r.ops.end() && it->id == id ? static_cast<int64_t>(it - r.ops.begin()) : -1;
  }
  // The base's op id paired with the op at position `at` of `now`, -1 if none.
  int64_t paired_id(const std::vector<int64_t>& match, int64_t at) const {
    return at >= 0 && match[at] >= 0 ? r.ops[match[at]].id : -1;
  }
  int64_t implicit_at(int64_t op) const {
    auto it = implicit_by_op.find(op);
    return it == implicit_by_op.end() ? 0 : it->second;
  }
};

int64_t all_bytes(const ModuleStats* m) {
  if (!m) return 0;
  int64_t b = 0;
  for (int64_t v : m->copy_bytes) b += v;
  return b;
}

int64_t implicit_of(const ModuleStats* m) {
  return m ? m->copies[static_cast<int>(CopyClass::implicit_layout)] : 0;
}

// The ops of `now` in `module` whose implicit copies are new, and the split points that are.
struct NewThings {
  int64_t new_implicit = 0;  // sum over ops of the copies each gained: a moved copy counts
  std::vector<std::string> copies;
  std::vector<std::string> splits;
  int64_t split_count = 0;
};

NewThings new_things(const Side& base, const Side& now, const std::vector<int64_t>& match,
                     const std::string& module) {
  NewThings t;
  auto ids = now.top_level.find(module);
  if (ids == now.top_level.end()) return t;
  for (int64_t at : ids->second) {
    const OpEvent& op = now.r.ops[at];
    const int64_t b = base.paired_id(match, at);
    int64_t before = b >= 0 ? base.implicit_at(b) : 0;
    int64_t after = now.implicit_at(op.id);
    if (after > before) {
      t.new_implicit += after - before;
      t.copies.push_back(where(op) + " (" + std::to_string(before) + " → " + std::to_string(after) +
                         (b < 0 ? ", a new op)" : ")"));
    }
    auto sp = now.split_by_op.find(op.id);
    if (sp != now.split_by_op.end() && (b < 0 || !base.split_by_op.count(b))) {
      t.split_count++;
      t.splits.push_back(where(op) + ": " + sp->second->before + " → " + sp->second->after);
    }
  }
  return t;
}

std::string join(const std::vector<std::string>& items, size_t max_items = 3) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < max_items; ++i) s += (i ? "; " : "") + items[i];
  if (items.size() > max_items) s += "; and " + std::to_string(items.size() - max_items) + " more";
  return s;
}

// The run's status: a model that ran in the baseline and now raises has regressed.
GateCheck status_check(const RunInfo& base, const RunInfo& now) {
  GateCheck st{"total", "status", base.status == RunStatus::ok || now.status != RunStatus::ok,
               to_string(base.status), to_string(now.status), ""};
  if (now.status == RunStatus::failed && base.status == RunStatus::ok) {
    st.passed = false;
    st.detail = "the model now raises: " + now.error;
  }
  return st;
}

// Modules: the new report's order, then those only the baseline has.
std::vector<std::string> module_order(const Report& base, const Report& now) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (const ModuleStats& m : now.modules)
    if (seen.insert(m.module).second) order.push_back(m.module);
  for (const ModuleStats& m : base.modules)
    if (seen.insert(m.module).second) order.push_back(m.module);
  return order;
}

// One row of the diff table: the module's figures in the baseline (b) and the new report (n).
ModuleDiff module_diff(const std::string& module, const ModuleStats* b, const ModuleStats* n) {
  ModuleDiff d;
  d.module = module;
  d.in_base = b != nullptr;
  d.in_new = n != nullptr;
  for (int side = 0; side < 2; ++side) {
    const ModuleStats* m = side == 0 ? b : n;
    if (!m) continue;
    d.implicit[side] = implicit_of(m);
    d.explicit_copies[side] = m->copies[static_cast<int>(CopyClass::explicit_layout)];
    d.copy_bytes[side] = all_bytes(m);
    d.split_points[side] = m->split_points;
    d.dtlb_walks[side] = m->dtlb_walks;
    d.time_ns[side] = m->time_ns;
  }
  return d;
}

// A module of the new report: its implicit copies, copy bytes, split points and DTLB walks
// checked, and an improvement noted.
void add_module_checks(Comparison& c, const ModuleDiff& d, const NewThings& t, const GateOptions& o) {
  const std::string scope = scope_name(d.module);
  GateCheck implicit{scope, "implicit_layout copies", true, std::to_string(d.implicit[0]),
                     std::to_string(d.implicit[1]), join(t.copies)};
  implicit.passed = t.new_implicit <= o.max_new_implicit_copies;
  c.checks.push_back(implicit);

  GateCheck bytes{scope, "copy bytes", !bytes_grew(d.copy_bytes[0], d.copy_bytes[1], o),
                  fmt_mb(d.copy_bytes[0]), fmt_mb(d.copy_bytes[1]) + fmt_change(d.copy_bytes[0], d.copy_bytes[1]),
                  join(t.copies)};
  c.checks.push_back(bytes);

  GateCheck splits{scope, "split points", t.split_count <= o.max_new_split_points,
                   std::to_string(d.split_points[0]), std::to_string(d.split_points[1]),
                   t.splits.empty() ? "" : "new: " + join(t.splits)};
  c.checks.push_back(splits);

  GateCheck dtlb{scope, "DTLB walks (modelled)", !exceeds(d.dtlb_walks[0], d.dtlb_walks[1], o.max_dtlb_increase),
                 std::to_string(d.dtlb_walks[0]), std::to_string(d.dtlb_walks[1]) + fmt_change(d.dtlb_walks[0], d.dtlb_walks[1]), ""};
  c.checks.push_back(dtlb);

  if (d.implicit[1] < d.implicit[0])
    c.notes.push_back(scope + ": implicit_layout copies " + std::to_string(d.implicit[0]) + " → " +
                      std::to_string(d.implicit[1]) + " (improved)");
}

// Every module's row and checks; returns the implicit copies new over all modules (what the
// total implicit_layout copies check judges).
int64_t compare_modules(Comparison& c, const Side& base, const Side& now, const std::vector<int64_t>& match,
                        const GateOptions& o) {
  int64_t total_new_implicit = 0;
  for (const std::string& module : module_order(base.r, now.r)) {
    ModuleDiff d = module_diff(module, base.module(module), now.module(module));
    c.modules.push_back(d);
    if (!d.in_new) {
      c.notes.push_back(scope_name(module) + ": only in the baseline");
      continue;
    }
    NewThings t = new_things(base, now, match, module);
    total_new_implicit += t.new_implicit;
    add_module_checks(c, d, t, o);
  }
  return total_new_implicit;
}

// Totals, per copy class: count (implicit copies judged by those new) and bytes.
void add_copy_class_totals(Comparison& c, const Summary& sb, const Summary& sn, int64_t total_new_implicit,
                           const GateOptions& o) {
  for (int k = 0; k < kCopyClassCount; ++k) {
    const std::string cls = copy_class_name(static_cast<CopyClass>(k));
    bool count_ok = k == static_cast<int>(CopyClass::implicit_layout)
                        ? total_new_implicit <= o.max_new_implicit_copies
                        : true;
    c.checks.push_back({"total", cls + " copies", count_ok, std::to_string(sb.copies[k]),
                        std::to_string(sn.copies[k]), ""});
    c.checks.push_back({"total", cls + " bytes", !bytes_grew(sb.copy_bytes[k], sn.copy_bytes[k], o),
                        fmt_mb(sb.copy_bytes[k]), fmt_mb(sn.copy_bytes[k]) + fmt_change(sb.copy_bytes[k], sn.copy_bytes[k]), ""});
  }
}

// The split points of the new report at ops that had none in the baseline (or are new).
void add_split_total(Comparison& c, const Side& base, const Side& now, const std::vector<int64_t>& match,
                     const GateOptions& o) {
  int64_t new_splits = 0;
  for (const SplitPoint& sp : now.r.split_points) {
    const int64_t b = base.paired_id(match, now.position(sp.op));
    if (b < 0 || !base.split_by_op.count(b)) ++new_splits;
  }
  c.checks.push_back({"total", "split points", new_splits <= o.max_new_split_points,
                      std::to_string(base.r.summary.split_points), std::to_string(now.r.summary.split_points),
                      new_splits ? std::to_string(new_splits) + " new" : ""});
}

// Training steps: a parameter whose gradient is newly laid out unlike it (DDP's warning, or
// a copy every step) is a regression.
void add_gradient_check(Comparison& c, const Report& base_report, const Report& now_report, const GateOptions& o) {
  std::map<std::string, GradVerdict> before;
  for (const ParamGrad& p : base_report.parameters) before[p.name] = p.verdict;
  auto mismatch = [](GradVerdict v) { return v == GradVerdict::size1_only || v == GradVerdict::layout_mismatch; };
  int64_t was = 0, is = 0, fresh = 0;
  std::string which;
  for (const ParamGrad& p : base_report.parameters) was += mismatch(p.verdict);
  for (const ParamGrad& p : now_report.parameters) {
    if (!mismatch(p.verdict)) continue;
    ++is;
    auto it = before.find(p.name);
    if (it != before.end() && it->second == p.verdict) continue;
    ++fresh;
    if (which.size() < 200) which += (which.empty() ? "" : ", ") + p.name + " " + grad_verdict_name(p.verdict);
  }
  if (!base_report.run.backward)
    c.notes.push_back("gradient layouts: the baseline has no training step (--backward), so every "
                      "mismatch of this run is new");
  c.checks.push_back({"total", "gradient layout mismatches", fresh <= o.max_new_grad_mismatches,
                      std::to_string(was), std::to_string(is), fresh ? std::to_string(fresh) + " new: " + which : ""});
}

// The file of a place ("model.py" of "model.py:24"): what the gate matches, an edit above a
// line moving its number.
std::string file_of(const std::string& where) {
  const size_t colon = where.rfind(':');
  return colon == std::string::npos ? where : where.substr(0, colon);
}

}  // namespace

std::string birthplace_key(const LayoutCause& k) {
  return std::string(birth_kind_name(k.kind)) + "|" + k.layout + "|" + file_of(k.where) + "|" + k.op_name + "|" +
         (k.where.empty() ? k.module : std::string()) + "|" + k.code + "|" + std::to_string(k.birth_input);
}

namespace {

// Causes: a birthplace the baseline did not have is a regression, named with its line.
void add_birthplace_check(Comparison& c, const Report& base, const Report& now, const GateOptions& o) {
  if (!base.causes_in_file) {
    c.notes.push_back("birthplaces: the baseline was written before layoutprof traced them; its copies are "
                      "compared by the op that paid for them, as before");
    return;
  }
  std::set<std::string> before;
  int64_t was = 0, is = 0, fresh = 0;
  for (const LayoutCause& k : base.causes)
    if (!k.accepted) was += before.insert(birthplace_key(k)).second;
  std::string which;
  for (const LayoutCause& k : now.causes) {
    if (k.accepted) continue;
    ++is;
    if (before.count(birthplace_key(k))) continue;
    ++fresh;
    c.fresh_causes.push_back(k);
    if (which.size() < 300) which += (which.empty() ? "" : "; ") + birthplace_text(k) + (k.code.empty() ? "" : ": " + k.code);
  }
  c.checks.push_back({"total", "birthplaces", fresh <= o.max_new_birthplaces, std::to_string(was), std::to_string(is),
                      fresh ? std::to_string(fresh) + " new: " + which : ""});
}

}  // namespace

std::string hazard_gate_key(const Hazard& h) {
  return std::string(hazard_kind_name(h.kind)) + "|" + file_of(h.where) + "|" + h.op_name + "|" + h.code + "|" +
         (h.kind == HazardKind::model_tensor ? h.tensor : std::string());
}

namespace {

// Hazards: one the baseline did not have fails the gate by default. A baseline written before
// layoutprof looked for them compares as none, and the comparison says so.
void add_hazard_check(Comparison& c, const Report& base, const Report& now, const GateOptions& o) {
  if (!base.hazards_in_file)
    c.notes.push_back("hazards: the baseline was written before layoutprof looked for them; it compares as none");
  std::set<std::string> before;
  int64_t was = 0, is = 0, fresh = 0;
  for (const Hazard& h : base.hazards)
    if (h.counted()) was += before.insert(hazard_gate_key(h)).second;
  std::string which;
  for (const Hazard& h : now.hazards) {
    if (!h.counted()) continue;
    ++is;
    if (before.count(hazard_gate_key(h))) continue;
    ++fresh;
    c.fresh_hazards.push_back(h);
    if (which.size() < 300) which += (which.empty() ? "" : "; ") + hazard_text(h);
  }
  c.checks.push_back({"total", "hazards", fresh <= o.max_new_hazards, std::to_string(was), std::to_string(is),
                      fresh ? std::to_string(fresh) + " new: " + which : ""});
}

// Recompiles an input's layout caused (torch.compile, in process): one the baseline did not
// have fails the gate by default. Checked where either report compiled something.
void add_recompile_check(Comparison& c, const Report& base, const Report& now, const GateOptions& o) {
  if (!base.compiled.seen && !now.compiled.seen) return;
  std::set<std::string> before;
  for (const Recompile& r : base.compiled.recompiles)
    if (r.layout) before.insert(r.key());
  int64_t fresh = 0;
  std::string which;
  for (const Recompile& r : now.compiled.recompiles) {
    if (!r.layout || before.count(r.key())) continue;
    ++fresh;
    if (which.size() < 300) which += (which.empty() ? "" : "; ") + r.function + " (" + r.where + "): " + r.reason;
  }
  c.checks.push_back({"total", "recompiles caused by layouts (torch.compile)", fresh <= o.max_new_recompiles,
                      std::to_string(base.compiled.layout_recompiles()), std::to_string(now.compiled.layout_recompiles()),
                      fresh ? std::to_string(fresh) + " new: " + which : ""});
}

// Noisy figures: shown, gated only when asked. The forward time.
void add_forward_time(Comparison& c, const Summary& sb, const Summary& sn, const GateOptions& o) {
  if (o.gate_time) {
    c.checks.push_back({"total", "forward time (measured)", !exceeds(sb.wall_ns, sn.wall_ns, *o.gate_time),
                        fmt_ms(sb.wall_ns), fmt_ms(sn.wall_ns) + fmt_change(sb.wall_ns, sn.wall_ns), ""});
  } else {
    c.notes.push_back("forward time " + fmt_ms(sb.wall_ns) + " → " + fmt_ms(sn.wall_ns) +
                      fmt_change(sb.wall_ns, sn.wall_ns) + ", measured: not gated (--gate-time to gate it)");
  }
}

// GPU time (CUPTI), where both runs traced a GPU: all of it, and the layout copies' kernels.
void add_gpu_time(Comparison& c, const Summary& sb, const Summary& sn, const GateOptions& o) {
  if (sb.gpu.traced && sn.gpu.traced) {
    std::string gpu_line = "GPU time " + fmt_ms(sb.gpu.gpu_ns) + " → " + fmt_ms(sn.gpu.gpu_ns) +
                           fmt_change(sb.gpu.gpu_ns, sn.gpu.gpu_ns) + ", of which layout-copy kernels " +
                           fmt_ms(sb.gpu.copy_gpu_ns) + " → " + fmt_ms(sn.gpu.copy_gpu_ns) + ", measured";
    if (o.gate_time) {
      c.checks.push_back({"total", "GPU time (measured)", !exceeds(sb.gpu.gpu_ns, sn.gpu.gpu_ns, *o.gate_time),
                          fmt_ms(sb.gpu.gpu_ns), fmt_ms(sn.gpu.gpu_ns) + fmt_change(sb.gpu.gpu_ns, sn.gpu.gpu_ns), ""});
      // From none to some is a regression too: the copy kernels are what the gate is for.
      bool copies_ok = sb.gpu.copy_gpu_ns > 0 ? !exceeds(sb.gpu.copy_gpu_ns, sn.gpu.copy_gpu_ns, *o.gate_time)
                                              : sn.gpu.copy_gpu_ns == 0;
      c.checks.push_back({"total", "layout-copy GPU time (measured)", copies_ok, fmt_ms(sb.gpu.copy_gpu_ns),
                          fmt_ms(sn.gpu.copy_gpu_ns) + fmt_change(sb.gpu.copy_gpu_ns, sn.gpu.copy_gpu_ns), ""});
    } else {
      c.notes.push_back(gpu_line + ": not gated (--gate-time to gate it)");
    }
  } else if (sb.gpu.traced != sn.gpu.traced) {
    c.notes.push_back(std::string("GPU time: only the ") + (sb.gpu.traced ? "baseline" : "new run") +
                      " traced a GPU, so it is not compared");
  }
}

// The performance counters both runs measured: a check each with --gate-counters, else a note.
void add_counter_checks(Comparison& c, const Report& base_report, const Report& now_report, const GateOptions& o) {
  const Summary& sb = base_report.summary;
  const Summary& sn = now_report.summary;
  std::map<std::string, std::pair<CounterValue, const CounterStatus*>> base_counters;
  const auto base_measured = base_report.run.measured_counters();
  for (size_t k = 0; k < base_measured.size() && k < sb.counters.size(); ++k)
    base_counters[base_measured[k]->event] = {sb.counters[k], base_measured[k]};
  const auto now_measured = now_report.run.measured_counters();
  for (size_t k = 0; k < now_measured.size() && k < sn.counters.size(); ++k) {
    const std::string& event = now_measured[k]->event;
    auto it = base_counters.find(event);
    if (it == base_counters.end()) continue;
    const CounterStatus& base_st = *it->second.second;
    const CounterStatus& now_st = *now_measured[k];
    double before = it->second.first.scaled, after = sn.counters[k].scaled;
    const bool sampled = base_st.sampled() || now_st.sampled();
    // The difference of two estimates is noise up to about two of its standard deviations.
    const double noise = 2 * std::hypot(base_st.error(it->second.first), now_st.error(sn.counters[k]));
    const std::string kind = sampled ? "sampled" : "measured";
    if (o.gate_counters) {
      const bool regressed = before > 0 && after - before > *o.gate_counters * before + noise;
      c.checks.push_back({"total", event + " (" + kind + ")", !regressed,
                          std::to_string(static_cast<int64_t>(before)),
                          std::to_string(static_cast<int64_t>(after)) +
                              (sampled ? " (+- " + fixed(noise / 2, 0) + ": allowed " + fixed(noise, 0) + " more)" : ""),
                          ""});
    } else {
      c.notes.push_back(event + " " + fixed(before, 0) + " → " + fixed(after, 0) + fmt_change(before, after) + ", " +
                        kind + (sampled ? " (estimates, +- " + fixed(noise / 2, 0) + ")" : "") +
                        ": not gated (--gate-counters to gate it)");
    }
  }
}

// The saving a variant surely measured: the bound of its interval nearest 0, as a fraction of
// the baseline's call (0 where it measured none).
double sure_saving(const WhatIfVariant& v) {
  return v.refused.empty() && v.time.saving == Saving::faster ? -v.time.relative_high() : 0;
}

// --max-measured-saving: a fix of a cause nobody accepted that measured at least that saving
// fails the gate. A report without a what-if fails it too: nothing was measured to pass it.
void add_measured_saving_check(Comparison& c, const Report& now, double threshold) {
  const std::string rule = "measured saving of a fix";
  const std::string limit = "at most " + fmt::format("{:.1f}%", 100 * threshold);
  if (!now.what_if.ran) {
    c.checks.push_back({"total", rule, false, limit, "not measured",
                        "the new report measured no fixes: run it with --what-if (profile(what_if=N) in process)"});
    return;
  }
  const WhatIfVariant* worst = nullptr;
  for (const WhatIfVariant& v : now.what_if.variants) {
    bool open = !v.causes.empty();
    for (int64_t i : v.causes) open = open && !now.causes.at(static_cast<size_t>(i)).accepted;
    if (open && (!worst || sure_saving(v) > sure_saving(*worst))) worst = &v;
  }
  const double saved = worst ? sure_saving(*worst) : 0;
  const std::string is = worst && saved > 0 ? fmt::format("{:.1f}%", 100 * saved) : "none";
  c.checks.push_back({"total", rule, saved < threshold || saved <= 0, limit, is,
                      saved >= threshold && saved > 0 ? worst->name + ": " + worst->time.text() + " (fix it, or --accept its birthplace)"
                                                      : now.what_if.why_not});
}

// The backend pass's reorders of a call, activation and weight: count and bytes; nullopt when
// the report's pass did not run (its reason in `why`).
std::optional<ReorderTotals> backend_reorders(const Report& r, std::string& why) {
  if (!r.backend.ran()) {
    why = r.backend.state.empty() ? "the report has no backend pass (written before it, or in process)"
                                  : "its backend pass did not run: " + r.backend.state + ", " + r.backend.reason;
    return std::nullopt;
  }
  const BackendSummary s = backend_summary(r.backend);
  return ReorderTotals{s.activation.count + s.weight.count, s.activation.bytes + s.weight.bytes, 0};
}

// --max-new-backend-reorders, --max-backend-bytes-increase.
void add_backend_checks(Comparison& c, const Report& base, const Report& now, const GateOptions& o) {
  if (!o.max_new_backend_reorders && !o.max_backend_bytes_increase) return;
  std::string why_base, why_now;
  const std::optional<ReorderTotals> b = backend_reorders(base, why_base), n = backend_reorders(now, why_now);
  const std::string rule = "backend reorders (oneDNN, measured in the backend pass)";
  if (!b || !n) {
    c.checks.push_back({"total", rule, false, b ? std::to_string(b->count) : "not seen", n ? std::to_string(n->count) : "not seen",
                        !n ? "the new report: " + why_now : "the baseline: " + why_base});
    return;
  }
  if (o.max_new_backend_reorders)
    c.checks.push_back({"total", rule, n->count - b->count <= *o.max_new_backend_reorders, std::to_string(b->count),
                        std::to_string(n->count) + fmt_change(b->count, n->count), ""});
  if (o.max_backend_bytes_increase)
    c.checks.push_back({"total", "backend reorder bytes (derived)", !exceeds(b->bytes, n->bytes, *o.max_backend_bytes_increase),
                        std::to_string(b->bytes), std::to_string(n->bytes) + fmt_change(b->bytes, n->bytes), ""});
}

}  // namespace

Comparison compare_reports(const Report& base_report, const Report& now_report, const GateOptions& o) {
  Comparison c;
  c.base_name = base_report.run.model;
  c.new_name = now_report.run.model;
  c.model = now_report.run.model;
  Side base(base_report), now(now_report);
  std::vector<int64_t> match = align_top_level_ops(base_report, now_report);

  c.checks.push_back(status_check(base_report.run, now_report.run));
  const int64_t total_new_implicit = compare_modules(c, base, now, match, o);
  const Summary& sb = base_report.summary;
  const Summary& sn = now_report.summary;
  add_copy_class_totals(c, sb, sn, total_new_implicit, o);
  add_split_total(c, base, now, match, o);
  if (now_report.run.backward) add_gradient_check(c, base_report, now_report, o);
  add_birthplace_check(c, base_report, now_report, o);
  add_hazard_check(c, base_report, now_report, o);
  add_recompile_check(c, base_report, now_report, o);
  if (o.max_measured_saving) add_measured_saving_check(c, now_report, *o.max_measured_saving);
  add_backend_checks(c, base_report, now_report, o);
  c.checks.push_back({"total", "DTLB walks (modelled)", !exceeds(sb.dtlb.walks, sn.dtlb.walks, o.max_dtlb_increase),
                      std::to_string(sb.dtlb.walks), std::to_string(sn.dtlb.walks) + fmt_change(sb.dtlb.walks, sn.dtlb.walks), ""});
  add_forward_time(c, sb, sn, o);
  add_gpu_time(c, sb, sn, o);
  add_counter_checks(c, base_report, now_report, o);
  c.base_causes = group_copy_causes(base_report);
  c.new_causes = group_copy_causes(now_report);
  return c;
}

}  // namespace layoutprof
