#include "report/compiled_json.h"

#include "report/json_fields.h"

namespace layoutprof {

using nlohmann::json;
using report_json::as;

namespace {

json copy_json(const CompiledCopy& c) {
  return {{"kind", c.kind},     {"tensor", c.tensor}, {"from", c.from},     {"to", c.to},
          {"bytes", c.bytes},   {"every_call", c.every_call}, {"kernel", c.kernel}, {"before", c.before},
          {"module", c.module}, {"where", c.where},   {"code", c.code}};
}

CompiledCopy copy_from(const json& j) {
  CompiledCopy c;
  c.kind = as<std::string>(j.at("kind"));
  if (c.kind != "input" && c.kind != "weight" && c.kind != "intermediate" && c.kind != "output" && c.kind != "code")
    throw std::out_of_range("a compiled copy's kind is input, weight, intermediate, output or code");
  c.tensor = as<std::string>(j.at("tensor"));
  c.from = as<std::string>(j.at("from"));
  c.to = as<std::string>(j.at("to"));
  c.bytes = as<int64_t>(j.at("bytes"));
  if (c.bytes < 0) throw std::out_of_range("a compiled copy's bytes are negative");
  c.every_call = as<bool>(j.at("every_call"));
  c.kernel = as<std::string>(j.at("kernel"));
  c.before = as<std::string>(j.at("before"));
  c.module = as<std::string>(j.at("module"));
  c.where = as<std::string>(j.at("where"));
  c.code = as<std::string>(j.at("code"));
  return c;
}

json graph_json(const CompiledGraph& g) {
  json inputs = json::array(), copies = json::array();
  for (const CompiledInput& i : g.inputs) inputs.push_back({{"name", i.name}, {"layout", i.layout}});
  for (const CompiledCopy& c : g.copies) copies.push_back(copy_json(c));
  return {{"compile_id", g.compile_id}, {"graph", g.graph}, {"function", g.function}, {"where", g.where},
          {"step", g.step}, {"compile_s", g.compile_s}, {"called_at", g.called_at}, {"inputs", inputs},
          {"layout_opt", g.layout_opt}, {"layout_opt_reason", g.layout_opt_reason}, {"copies", copies}};
}

CompiledGraph graph_from(const json& j) {
  CompiledGraph g;
  g.compile_id = as<std::string>(j.at("compile_id"));
  g.graph = as<std::string>(j.at("graph"));
  g.function = as<std::string>(j.at("function"));
  g.where = as<std::string>(j.at("where"));
  g.step = as<int64_t>(j.at("step"));
  g.compile_s = as<double>(j.at("compile_s"));
  g.called_at = as<std::string>(j.at("called_at"));
  for (const json& i : j.at("inputs")) g.inputs.push_back({as<std::string>(i.at("name")), as<std::string>(i.at("layout"))});
  g.layout_opt = as<std::string>(j.at("layout_opt"));
  g.layout_opt_reason = as<std::string>(j.at("layout_opt_reason"));
  for (const json& c : j.at("copies")) g.copies.push_back(copy_from(c));
  return g;
}

json recompile_json(const Recompile& r) {
  return {{"compile_id", r.compile_id}, {"function", r.function}, {"where", r.where},   {"step", r.step},
          {"reason", r.reason},         {"tensor", r.tensor},     {"kind", r.kind},     {"dim", r.dim},
          {"expected", r.expected},     {"actual", r.actual},     {"compile_s", r.compile_s},
          {"before", r.before},         {"after", r.after},       {"layout", r.layout}, {"called_at", r.called_at},
          {"fix", r.fix}};
}

Recompile recompile_from(const json& j) {
  Recompile r;
  r.compile_id = as<std::string>(j.at("compile_id"));
  r.function = as<std::string>(j.at("function"));
  r.where = as<std::string>(j.at("where"));
  r.step = as<int64_t>(j.at("step"));
  r.reason = as<std::string>(j.at("reason"));
  r.tensor = as<std::string>(j.at("tensor"));
  r.kind = as<std::string>(j.at("kind"));
  r.dim = as<int64_t>(j.at("dim"));
  r.expected = as<std::string>(j.at("expected"));
  r.actual = as<std::string>(j.at("actual"));
  r.compile_s = as<double>(j.at("compile_s"));
  r.before = as<std::string>(j.at("before"));
  r.after = as<std::string>(j.at("after"));
  r.layout = as<bool>(j.at("layout"));
  r.called_at = as<std::string>(j.at("called_at"));
  r.fix = as<std::string>(j.at("fix"));
  return r;
}

json break_json(const GraphBreak& b) {
  return {{"compile_id", b.compile_id}, {"step", b.step}, {"where", b.where}, {"reason", b.reason},
          {"crossing", b.crossing}};
}

GraphBreak break_from(const json& j) {
  GraphBreak b;
  b.compile_id = as<std::string>(j.at("compile_id"));
  b.step = as<int64_t>(j.at("step"));
  b.where = as<std::string>(j.at("where"));
  b.reason = as<std::string>(j.at("reason"));
  b.crossing = as<std::vector<std::string>>(j.at("crossing"));
  return b;
}

}  // namespace

json compiled_json(const CompiledRun& c) {
  json graphs = json::array(), recompiles = json::array(), dynamic = json::array(), limits = json::array(),
       breaks = json::array();
  for (const CompiledGraph& g : c.graphs) graphs.push_back(graph_json(g));
  for (const Recompile& r : c.recompiles) recompiles.push_back(recompile_json(r));
  for (const DynamicDim& d : c.dynamic) dynamic.push_back({{"compile_id", d.compile_id}, {"source", d.source}, {"value", d.value}});
  for (const RecompileLimitHit& h : c.limit_hits)
    limits.push_back({{"step", h.step}, {"limit", h.limit}, {"function", h.function}, {"reason", h.reason}});
  for (const GraphBreak& b : c.breaks) breaks.push_back(break_json(b));
  return {{"records", c.records},
          {"torch", c.torch},
          {"graphs", graphs},
          {"recompiles", recompiles},
          {"dynamic", dynamic},
          {"limit_hits", limits},
          {"breaks", breaks},
          {"cache", {{"fx_graph_cache_hit", c.fx_cache_hits}, {"fx_graph_cache_miss", c.fx_cache_misses},
                     {"aotautograd_cache_hit", c.aot_cache_hits}, {"aotautograd_cache_miss", c.aot_cache_misses}}},
          {"not_measured", c.not_measured},
          {"observer", c.observer},
          {"summary", {{"layout_recompiles", c.layout_recompiles()}, {"recompiles", c.recompiles.size()},
                       {"copies_per_call", c.copies_per_call()}, {"copy_bytes_per_call", c.copy_bytes_per_call()}}}};
}

CompiledRun compiled_from(const json& j) {
  CompiledRun c;
  c.seen = true;
  c.records = as<std::string>(j.at("records"));
  c.torch = as<std::string>(j.at("torch"));
  for (const json& g : j.at("graphs")) c.graphs.push_back(graph_from(g));
  for (const json& r : j.at("recompiles")) c.recompiles.push_back(recompile_from(r));
  for (const json& d : j.at("dynamic"))
    c.dynamic.push_back({as<std::string>(d.at("compile_id")), as<std::string>(d.at("source")), as<std::string>(d.at("value"))});
  for (const json& h : j.at("limit_hits"))
    c.limit_hits.push_back({as<int64_t>(h.at("step")), as<std::string>(h.at("limit")), as<std::string>(h.at("function")),
                            as<std::string>(h.at("reason"))});
  for (const json& b : j.at("breaks")) c.breaks.push_back(break_from(b));
  const json& cache = j.at("cache");
  c.fx_cache_hits = as<int64_t>(cache.at("fx_graph_cache_hit"));
  c.fx_cache_misses = as<int64_t>(cache.at("fx_graph_cache_miss"));
  c.aot_cache_hits = as<int64_t>(cache.at("aotautograd_cache_hit"));
  c.aot_cache_misses = as<int64_t>(cache.at("aotautograd_cache_miss"));
  c.not_measured = as<std::vector<std::string>>(j.at("not_measured"));
  if (j.contains("observer")) c.observer = as<std::vector<std::string>>(j.at("observer"));  // since 2026-12-06
  return c;
}

CompiledRun compiled_from_text(const std::string& text) { return compiled_from(json::parse(text)); }

}  // namespace layoutprof
