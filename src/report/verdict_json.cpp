#include "report/verdict_json.h"

#include "report/backend_text.h"

#include "analysis/cause_text.h"
#include "analysis/verdict.h"
#include "report/what_if_text.h"

namespace layoutprof {

namespace {

// Each birthplace with its chain, for the page: the birth op, the first carriers and payers,
// each with its op, module and line (the page links a module to its heatmap row).
nlohmann::json birthplaces_json(const Report& r) {
  using nlohmann::json;
  json births = json::array();
  for (size_t index : causes_by_measured_saving(r)) {  // those whose fix measured a saving first
    const LayoutCause& c = r.causes[index];
    json chain = json::array();
    auto step = [&](const char* role, int64_t id) {
      if (id < 0 || id >= static_cast<int64_t>(r.ops.size())) return;
      const OpEvent& op = r.ops[id];
      chain.push_back({{"role", role}, {"name", op.name}, {"module", op.module}, {"source", op.source}});
    };
    step("birth", c.birth_op);
    for (size_t i = 0; i < c.carriers.size() && i < 6; ++i) step("carrier", c.carriers[i]);
    for (size_t i = 0; i < c.payers.size() && i < 8; ++i) step("payer", c.payers[i]);
    json what_if = json::array();  // before -> after of each fix applied, and what it measured
    for (const WhatIfVariant* v : cause_variants(r.what_if, static_cast<int64_t>(index)))
      what_if.push_back({{"text", what_if_variant_text(r.what_if, *v)}, {"notes", what_if_variant_notes(*v)},
                         {"saving", v->refused.empty() ? saving_name(v->time.saving) : "refused"}});
    births.push_back({{"text", birthplace_text(c)}, {"code", c.code}, {"cost", cause_cost_text(c)},
                      {"fixes", c.fixes}, {"accepted", c.accepted}, {"where", c.where},
                      {"carriers_total", c.carriers_total}, {"payers_total", c.payers_total}, {"chain", chain},
                      {"what_if", what_if}});
  }
  return births;
}

// The verdict's lines on the backend's reorders, each without its lead and newline.
std::vector<std::string> backend_lines(const Report& r) {
  const int64_t implicit = r.summary.copies[static_cast<int>(CopyClass::implicit_layout)];
  std::vector<std::string> lines;
  std::string text = backend_verdict_lines(r, implicit == 0);
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    if (line.rfind("  ", 0) == 0) line.erase(0, 2);
    if (!line.empty()) lines.push_back(line);
    at = nl + 1;
  }
  return lines;
}

}  // namespace

nlohmann::json verdict_json(const Report& r, size_t max_split) {
  using nlohmann::json;
  const Verdict v = verdict_of(r);
  json causes = json::array();
  for (const CopyCause& k : v.causes)
    causes.push_back({{"kind", cause_kind_name(k.kind)}, {"class", copy_class_name(k.cls)}, {"copies", k.copies},
                      {"bytes", k.bytes}, {"time_ns", k.time_ns}, {"what", k.what}, {"fix", k.fix},
                      {"modules", k.modules}, {"sources", k.sources}, {"origin_sources", k.origin_sources}});
  json groups = json::array();
  for (const SplitGroup& g : group_split_points(r)) {
    json points = json::array();
    for (size_t p : g.points)
      if (p < max_split) points.push_back(p);
    if (!points.empty()) groups.push_back({{"points", points}, {"copies", g.copies}, {"copy_bytes", g.copy_bytes}});
  }
  return {{"implicit_ns", v.implicit_ns}, {"wall_ns", v.wall_ns}, {"share", share_text(v.implicit_ns, v.wall_ns)},
          {"medians", v.medians}, {"copy_gpu_ns", v.copy_gpu_ns}, {"gpu_ns", v.gpu_ns},
          {"gpu_share", share_text(v.copy_gpu_ns, v.gpu_ns)}, {"causes", causes}, {"split_groups", groups},
          {"birthplaces", birthplaces_json(r)}, {"mixed_ops", v.mixed_ops}, {"mixed_without_copy", v.mixed_without_copy},
          {"convolutions", v.convolutions}, {"mixed_convolutions", v.mixed_convolutions},
          {"what_if", r.what_if.ran ? what_if_run_text(r.what_if) : ""}, {"measured_fix", what_if_verdict_text(r)},
          // the backend's conversions, in the text report's words (backend_text.h)
          {"no_copies_text", no_implicit_copies_text(r)}, {"backend_lines", backend_lines(r)},
          {"backend_mixed", mixed_seen_text(r)}};
}

}  // namespace layoutprof
