// The JSON report's DOM reader: a report from its tree (schema 2 or 1), every id, total and
// tensor checked. The file reader (json_stream_reader.cpp) converts the op list, copies and
// split points as they stream by and the rest of the document through here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/errors.h"
#include "report/json_report.h"
#include "analysis/analysis.h"
#include "analysis/birthplace.h"
#include "report/cause_json.h"
#include "report/compiled_json.h"
#include "report/backend_json.h"
#include "report/hazard_json.h"
#include "report/what_if_json.h"
#include "report/json_fields.h"

namespace layoutprof {
namespace report_json {

namespace {

PerCopyClass per_class_from(const json& j) {
  PerCopyClass v{};
  for (int i = 0; i < kCopyClassCount; ++i)
    v[i] = as<int64_t>(j.at(copy_class_name(static_cast<CopyClass>(i))));
  return v;
}
std::string text_from(const json& j) { return j.is_null() ? "" : j.get<std::string>(); }

ModuleStats module_from(const json& j, const std::vector<std::string>& names) {
  ModuleStats m;
  m.module = j.at("module").get<std::string>();
  m.ops = as<int64_t>(j.at("ops"));
  m.top_level_ops = as<int64_t>(j.at("top_level_ops"));
  m.noncontiguous_inputs = as<int64_t>(j.at("noncontiguous_inputs"));
  m.copies = per_class_from(j.at("copies"));
  m.copy_bytes = per_class_from(j.at("copy_bytes"));
  m.time_ns = as<int64_t>(j.at("time_ns"));
  m.split_points = as<int64_t>(j.at("split_points"));
  m.transitions = j.at("transitions").get<std::vector<std::string>>();
  m.dtlb_walks = as<int64_t>(j.at("dtlb_walks"));
  m.tensor_bytes = as<int64_t>(j.at("tensor_bytes"));
  m.counters = counters_from(j.at("counters"), names);
  m.gpu_ns = as<int64_t>(j.at("gpu_ns"));
  m.copy_gpu_ns = as<int64_t>(j.at("copy_gpu_ns"));
  if (j.contains("mixed_ops")) m.mixed_ops = as<int64_t>(j.at("mixed_ops"));  // added with the causes
  if (j.contains("mixed_without_copy")) m.mixed_without_copy = as<int64_t>(j.at("mixed_without_copy"));
  return m;
}

// Ids in a report index its op list (`top`: each op event's top-level ancestor, as OpSink
// kept it); a report that breaks this is refused, not rendered.
void check_ids(const Report& r, const std::vector<int32_t>& top) {
  auto n = static_cast<int64_t>(top.size());
  auto valid = [n](int64_t id) { return id >= -1 && id < n; };
  for (const CopyRecord& c : r.copies)
    if (c.op < 0 || !valid(c.op) || c.culprit < 0 || !valid(c.culprit) || !valid(c.origin))
      throw std::out_of_range("a copy names an op that is not in the report");
  // A copy's culprit is the top-level op around it, and a split point is at a top-level op,
  // as analyze() makes them (the gate aligns top-level ops).
  for (const CopyRecord& c : r.copies)
    if (top[c.op] != c.culprit) throw std::out_of_range("a copy's culprit is not the top-level op around it");
  for (const SplitPoint& sp : r.split_points) {
    if (sp.op < 0 || !valid(sp.op)) throw std::out_of_range("a split point names a missing op");
    if (top[sp.op] != sp.op) throw std::out_of_range("a split point names an op that is not top-level");
    for (int64_t id : sp.copy_ops)
      if (id < 0 || !valid(id)) throw std::out_of_range("a split point names a missing copy");
  }
  for (const CopyRecord& c : r.copies)
    if (c.origin_input < -1 || c.origin_input >= static_cast<int>(r.run.inputs.size()))
      throw std::out_of_range("a copy names a model input that is not in the report");
  // The summary's totals are what its op list and copies add up to (the gate compares totals;
  // a report edited or cut by hand is refused, not trusted).
  int64_t top_level = 0;
  for (size_t i = 0; i < top.size(); ++i) top_level += top[i] == static_cast<int32_t>(i);
  if (r.summary.ops != n || r.summary.top_level_ops != top_level)
    throw std::out_of_range("summary.ops and summary.top_level_ops (" + std::to_string(r.summary.ops) + ", " +
                            std::to_string(r.summary.top_level_ops) + ") are not the op list's (" +
                            std::to_string(n) + ", " + std::to_string(top_level) + ")");
  PerCopyClass count{}, bytes{};
  for (const CopyRecord& c : r.copies) {
    const auto k = static_cast<size_t>(c.cls);
    ++count[k];
    if (c.bytes < 0 || __builtin_add_overflow(bytes[k], c.bytes, &bytes[k]))
      throw std::out_of_range("a copy's bytes are negative, or the copies' bytes add up past int64");
  }
  if (count != r.summary.copies || bytes != r.summary.copy_bytes)
    throw std::out_of_range("summary.copies and summary.copy_bytes are not what the copies add up to");
  if (r.summary.split_points != static_cast<int64_t>(r.split_points.size()))
    throw std::out_of_range("summary.split_points is not the number of split points");
  // Tensors: strides and order describe the sizes, and the class is what they say.
  auto check_tensor = [](const TensorInfo& t) {
    if (t.sizes().size() > 64 || (!t.strides().empty() && t.strides().size() != t.sizes().size()) ||
        (!t.layout().order.empty() && t.layout().order.size() != t.sizes().size()) || t.elem_size() < 0)
      throw std::out_of_range("a tensor's sizes, strides and order do not match");
    for (int64_t s : t.sizes())
      if (s < 0) throw std::out_of_range("a tensor has a negative size");
    if (!t.strides().empty() && classify_layout(t.sizes(), t.strides()).cls != t.layout().cls)
      throw std::out_of_range("a tensor's layout class does not match its strides");
  };
  for (const OpEvent& op : r.ops)
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const TensorInfo& t : *list) check_tensor(t);
  for (const CopyRecord& c : r.copies) {
    check_tensor(c.src);
    check_tensor(c.dst);
  }
}

ParamGrad parameter_from(const json& j) {
  ParamGrad p;
  p.name = j.at("name").get<std::string>();
  p.sizes = as<std::vector<int64_t>>(j.at("sizes"));
  p.strides = as<std::vector<int64_t>>(j.at("strides"));
  p.requires_grad = j.at("requires_grad").get<bool>();
  p.elem_size = as<int>(j.at("elem_size"));
  p.has_grad = !j.at("grad_sizes").is_null();
  if (p.has_grad) {
    p.grad_sizes = as<std::vector<int64_t>>(j.at("grad_sizes"));
    p.grad_strides = as<std::vector<int64_t>>(j.at("grad_strides"));
    p.grad_dense = j.at("grad_dense").get<bool>();
  }
  if (j.contains("prior_grad_strides") && !j.at("prior_grad_strides").is_null()) {
    p.had_grad = true;
    p.prior_grad_strides = as<std::vector<int64_t>>(j.at("prior_grad_strides"));
  }
  if (j.contains("ddp_bucket") && j.at("ddp_bucket").is_object()) {
    const json& b = j.at("ddp_bucket");
    if (!b.at("param_strides_when_built").is_null())
      p.bucket_param_strides = as<std::vector<int64_t>>(b.at("param_strides_when_built"));
    if (!b.at("built").is_null()) p.buckets_built = b.at("built").get<std::string>();
  }
  p.verdict = j.at("grad_verdict").is_null() ? GradVerdict::frozen
                                             : grad_verdict_from_name(j.at("grad_verdict").get<std::string>());
  p.producer = id_from(j.at("grad_producer"));
  return p;
}

TensorList tensors_from_row(const json& flat, const OpTablesIn& t, TensorStore& store) {
  if (!flat.is_array() || flat.size() % 2) throw std::out_of_range("an op's tensor list is malformed");
  thread_local std::vector<TensorInfo> out;
  out.clear();
  for (size_t i = 0; i < flat.size(); i += 2) {
    out.push_back(t.tensors.at(as<size_t>(flat.at(i))));
    out.back().storage = as<uint64_t>(flat.at(i + 1));
  }
  return store.add(out);
}

// One row of the op list (schema 2); `ops` holds the rows before it.
ModelInput input_from(const json& in) {
  ModelInput m;
  m.spec.text = in.at("spec").get<std::string>();
  m.spec.sizes = as<std::vector<int64_t>>(in.at("sizes"));
  m.spec.dtype = in.at("dtype").get<std::string>();
  m.spec.format = in.at("format").get<std::string>();
  m.spec.perm = as<std::vector<int>>(in.at("perm"));
  m.tensor = tensor_from(in.at("tensor"));
  if (in.contains("origin")) m.origin = in.at("origin").get<std::string>();
  return m;
}

CounterStatus counter_status_from(const json& c) {
  CounterStatus st;
  st.event = c.at("event").get<std::string>();
  st.encoding = c.at("encoding").get<std::string>();
  st.scope = from_string<CounterScope>(c.at("scope").get<std::string>());
  st.measured = c.at("measured").get<bool>();
  st.reason = text_from(c.at("reason"));
  st.note = c.at("note").get<std::string>();
  // Added with sampled counters: earlier reports counted.
  st.mode = from_string<CounterMode>(c.value("mode", std::string("counted")));
  if (st.mode == CounterMode::interval && st.measured) st.period = as<uint64_t>(c.at("period"));
  if (st.sampled() && st.measured) {
    st.period = as<uint64_t>(c.at("period"));
    if (st.period == 0) throw std::out_of_range("a sampled counter's period is 0");
    st.data_address = text_from(c.at("data_address"));
    st.samples = as<int64_t>(c.at("samples"));
    st.attributed = as<int64_t>(c.at("attributed"));
    st.lost = as<int64_t>(c.at("lost"));
    st.calls = c.contains("calls") ? as<int64_t>(c.at("calls")) : 1;  // added with means over calls
    if (st.samples < 0 || st.attributed < 0 || st.lost < 0 || st.attributed > st.samples || st.calls < 1)
      throw std::out_of_range("a sampled counter's sample counts are impossible");
  }
  return st;
}

// How the run's counters were taken: null for none; absent in reports from before sampling,
// which counted whatever counters they have.
std::optional<CounterMode> counter_mode_from(const json& run, const std::vector<CounterStatus>& counters) {
  if (!run.contains("counter_mode")) return counters.empty() ? std::nullopt : std::optional(CounterMode::counted);
  const json& m = run.at("counter_mode");
  if (m.is_null()) return std::nullopt;
  const CounterMode mode = from_string<CounterMode>(m.get<std::string>());
  if (mode == CounterMode::interval) throw std::out_of_range("run.counter_mode is neither sampled nor counted");
  return mode;
}

// What compare-formats' variants add: absent from a plain run's report.
void read_variant(const json& j, RunInfo& r) {
  if (j.contains("conversion")) {
    const json& c = j.at("conversion");
    r.conversion.to = c.at("to").get<std::string>();
    if (r.conversion.to != "channels_last" && r.conversion.to != "contiguous")
      throw std::out_of_range("run.conversion.to is neither channels_last nor contiguous");
    r.conversion.parameters = as<int64_t>(c.at("parameters"));
    r.conversion.parameters_total = as<int64_t>(c.at("parameters_total"));
    r.conversion.buffers = as<int64_t>(c.at("buffers"));
    r.conversion.buffers_total = as<int64_t>(c.at("buffers_total"));
    r.conversion.inputs = as<int64_t>(c.at("inputs"));
    const Conversion& v = r.conversion;
    if (v.parameters < 0 || v.parameters > v.parameters_total || v.buffers < 0 || v.buffers > v.buffers_total ||
        v.inputs < 0 || v.inputs > static_cast<int64_t>(r.inputs.size()))
      throw std::out_of_range("run.conversion's counts are not within the tensors it had");
  }
  if (j.contains("plain_call_ns")) {
    r.plain_call_ns = as<std::vector<int64_t>>(j.at("plain_call_ns"));
    for (int64_t ns : r.plain_call_ns)
      if (ns < 0) throw std::out_of_range("run.plain_call_ns holds a negative time");
  }
}

// Added with .pt2 programs: earlier reports are of TorchScript modules, which layoutprof ran in
// eval mode (train for --backward, which run_from() reads after).
ModelMode mode_from(const json& j) {
  ModelMode m{j.at("value").get<std::string>(), j.at("chosen_by").get<std::string>(), text_from(j.at("evidence"))};
  if (m.value != "train" && m.value != "eval" && m.value != "mixed" && m.value != "none")
    throw std::out_of_range("run.model_mode.value is not train, eval, mixed or none");
  if (m.chosen_by != "layoutprof" && m.chosen_by != "export" && m.chosen_by != "user")
    throw std::out_of_range("run.model_mode.chosen_by is not layoutprof, export or user");
  return m;
}

}  // namespace

RunInfo run_from(const json& j) {
  RunInfo r;
  r.model = j.at("model").get<std::string>();
  // Added with .pt2 programs: earlier reports are of TorchScript archives.
  r.model_format = j.value("model_format", std::string("torchscript"));
  if (r.model_format != "torchscript" && r.model_format != "pt2" && r.model_format != "eager")
    throw std::out_of_range("run.model_format is not torchscript, pt2 or eager");
  if (j.contains("model_mode")) r.model_mode = mode_from(j.at("model_mode"));
  for (const json& in : j.at("inputs")) r.inputs.push_back(input_from(in));
  r.threads = as<int>(j.at("threads"));
  r.warmup = as<int>(j.at("warmup"));
  r.iters = as<int>(j.at("iters"));
  r.calls_recorded = as<int>(j.at("calls_recorded"));
  if (j.contains("accepted")) r.accepted = as<std::vector<std::string>>(j.at("accepted"));
  r.calls_identical = j.at("calls_identical").get<bool>();
  // Added with schema 2's writers; earlier reports recorded every op event.
  r.max_ops = j.value("max_ops", int64_t{0});
  r.ops_not_recorded = j.value("ops_not_recorded", int64_t{0});
  if (r.max_ops < 0 || r.ops_not_recorded < 0) throw std::out_of_range("run.max_ops or ops_not_recorded is negative");
  r.device = j.at("device").get<std::string>();
  r.torch_version = j.at("torch_version").get<std::string>();
  r.layoutprof_version = j.at("layoutprof_version").get<std::string>();
  r.status = from_string<RunStatus>(j.at("status").get<std::string>());
  r.error = text_from(j.at("error"));
  // Added with --backward: reports from before read as forward-only runs.
  r.backward = j.value("backward", false);
  if (!j.contains("model_mode") && r.backward) r.model_mode.value = "train";
  r.loss = j.contains("loss") ? text_from(j.at("loss")) : "";
  for (const json& c : j.at("counters")) r.counters.push_back(counter_status_from(c));
  r.counter_mode = counter_mode_from(j, r.counters);
  r.counter_read = j.at("counter_read").get<std::string>();
  r.bandwidth = j.at("bandwidth").get<std::string>();
  r.bandwidth_note = j.at("bandwidth_note").get<std::string>();
  r.tlb = j.at("tlb").get<std::string>();
  r.gpu = text_from(j.at("gpu"));
  r.measured = j.at("measured").get<std::vector<std::string>>();
  r.not_measured = j.at("not_measured").get<std::vector<std::string>>();
  read_variant(j, r);
  return r;
}

OpEvent op_from(const json& j, const std::vector<std::string>& names, TensorStore& store) {
  OpEvent op;
  op.id = op_index(as<int64_t>(j.at("id")));
  op.parent = op_index(id_from(j.at("parent")));
  op.depth = as<int>(j.at("depth"));
  op.name = j.at("name").get<std::string>();
  op.module = j.at("module").get<std::string>();
  op.source = j.at("source").get<std::string>();
  op.source_text = j.at("source_text").get<std::string>();
  op.start_ns = as<int64_t>(j.at("start_ns"));
  op.duration_ns = as<int64_t>(j.at("duration_ns"));
  op.thread = as<uint32_t>(j.at("thread"));
  op.failed = j.at("failed").get<bool>();
  std::vector<TensorInfo> tensors;
  for (const json& t : j.at("inputs")) tensors.push_back(tensor_from(t));
  op.inputs = store.add(tensors);
  tensors.clear();
  for (const json& t : j.at("outputs")) tensors.push_back(tensor_from(t));
  op.outputs = store.add(tensors);
  op.counters = counters_from(j.at("counters"), names);
  op.gpu_ns = id_from(j.at("gpu_ns"));
  op.kernels = j.at("kernels").get<std::vector<Str>>();
  // Added within schema version 1: reports from before them read as "not given".
  if (j.contains("gpu_launches") && !j.at("gpu_launches").is_null()) op.gpu_launches = as<int64_t>(j.at("gpu_launches"));
  if (j.contains("copy_gpu_ns")) op.copy_gpu_ns = id_from(j.at("copy_gpu_ns"));
  return op;
}

void read_table(OpTablesIn& t, const std::string& key, const json& list) {
  auto strs = [&list] {
    std::vector<Str> out;
    for (const json& s : list) out.emplace_back(s.get<std::string>());
    return out;
  };
  if (key == "names") t.names = strs();
  else if (key == "modules") t.modules = strs();
  else if (key == "kernels") t.kernels = strs();
  else if (key == "sources")
    for (const json& s : list) t.sources.emplace_back(s.at(0).get<std::string>(), s.at(1).get<std::string>());
  else if (key == "tensors")
    for (const json& j : list) t.tensors.push_back(tensor_from(j, false));
}

OpEvent op_from_row(const json& row, const OpTablesIn& t, const OpSink& ops, TensorStore& store) {
  if (!row.is_array() || row.size() < 10 || row.size() > 12) throw std::out_of_range("an op row has the wrong length");
  OpEvent op;
  op.id = op_index(ops.size());
  const int64_t parent = id_from(row.at(0));
  if (parent >= op.id || parent < -1)
    throw std::out_of_range("ops[" + std::to_string(op.id) + "] has a bad id or parent");
  op.parent = static_cast<int32_t>(parent);
  op.depth = op.parent >= 0 ? ops.depth(op.parent) + 1 : 0;
  op.name = t.names.at(as<size_t>(row.at(1)));
  op.module = t.modules.at(as<size_t>(row.at(2)));
  const auto& source = t.sources.at(as<size_t>(row.at(3)));
  op.source = source.first;
  op.source_text = source.second;
  op.start_ns = as<int64_t>(row.at(4));
  op.duration_ns = as<int64_t>(row.at(5));
  op.thread = as<uint32_t>(row.at(6));
  op.failed = as<int>(row.at(7)) != 0;
  op.inputs = tensors_from_row(row.at(8), t, store);
  op.outputs = tensors_from_row(row.at(9), t, store);
  if (row.size() > 10) {
    const json& c = row.at(10);
    if (!c.empty() && c.size() != 3 * t.counter_names.size())
      throw std::out_of_range("an op's counters do not match run.counters");
    for (size_t k = 0; k < c.size(); k += 3) {
      CounterValue v;
      v.raw = as<uint64_t>(c.at(k));
      v.scaled = c.at(k + 1).get<double>();
      if (!std::isfinite(v.scaled) || v.scaled < 0 || v.scaled > 1e300)
        throw std::out_of_range("counter '" + t.counter_names[k / 3] + "' has an impossible value");
      v.multiplexed = as<int>(c.at(k + 2)) != 0;
      op.counters.push_back(v);
    }
  }
  if (row.size() > 11) {
    const json& g = row.at(11);
    op.gpu_ns = as<int64_t>(g.at(0));
    op.gpu_launches = as<int64_t>(g.at(1));
    op.copy_gpu_ns = as<int64_t>(g.at(2));
    for (const json& k : g.at(3)) op.kernels.push_back(t.kernels.at(as<size_t>(k)));
  }
  return op;
}

void check_version(const json& v) {
  if (v.is_number_integer() && (as<int64_t>(v) == kSchemaVersion || as<int64_t>(v) == 1)) return;
  std::string shown = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";  // the one line stays short
  throw UsageError("report schema_version " + shown + " is not supported (this layoutprof reads " +
                   std::to_string(kSchemaVersion) + ", and 1)");
}

[[noreturn]] void refuse_too_deep() {
  throw UsageError("not a valid layoutprof report: arrays and objects nest deeper than " +
                   std::to_string(kMaxReportDepth) + " levels");
}

namespace {

Summary summary_from(const json& s, const std::vector<std::string>& names) {
  Summary sum;
  sum.ops = as<int64_t>(s.at("ops"));
  sum.top_level_ops = as<int64_t>(s.at("top_level_ops"));
  sum.copies = per_class_from(s.at("copies"));
  sum.copy_bytes = per_class_from(s.at("copy_bytes"));
  sum.split_points = as<int64_t>(s.at("split_points"));
  sum.wall_ns = as<int64_t>(s.at("wall_ns"));
  sum.dtlb = dtlb_from(s.at("dtlb"));
  sum.tensor_bytes = as<int64_t>(s.at("tensor_bytes"));
  sum.counters = counters_from(s.at("counters"), names);
  const json& g = s.at("gpu");
  sum.gpu.traced = g.at("traced").get<bool>();
  sum.gpu.gpu_ns = as<int64_t>(g.at("gpu_ns"));
  sum.gpu.copy_gpu_ns = as<int64_t>(g.at("copy_gpu_ns"));
  sum.gpu.kernels = as<int64_t>(g.at("kernels"));
  sum.gpu.unattributed = as<int64_t>(g.at("unattributed"));
  sum.gpu.unattributed_ns = as<int64_t>(g.at("unattributed_ns"));
  sum.gpu.dropped = as<uint64_t>(g.at("dropped"));
  if (s.contains("grad_layout"))
    for (int v = 0; v < 4; ++v)
      sum.grad_layout[v] = as<int64_t>(s.at("grad_layout").at(grad_verdict_name(static_cast<GradVerdict>(v))));
  return sum;
}

// The op list from the tree, where the file reader left it there (or read no file): schema
// 1's op objects, or schema 2's tables and rows.
void ops_from_doc(const json& doc, bool v1, const Streamed* streamed, const std::vector<std::string>& names,
                  Report& r, OpSink& sink) {
  if (v1) {
    for (const json& j : doc.at("ops")) sink.add(op_from(j, names, *r.tensors));
    return;
  }
  const json& ops = doc.at("ops");
  OpTablesIn t;
  t.keep_op_tensors = sink.detail() == OpDetail::full;
  for (const char* key : kOpTables) read_table(t, key, ops.at(key));
  if (streamed && streamed->tensor_table) t.tensors = *streamed->tensor_table;
  t.counter_names = names;
  for (const json& row : ops.at("rows")) sink.add(op_from_row(row, t, sink, *r.tensors));
}

// Training steps (schema 2, --backward): where the backward pass starts, and each backward
// function's forward op. Added with --backward: reports from before have neither.
// The what-if's block, and each cause's own variants beside it.
void what_if_from(const json& doc, Report& r) {
  const auto causes = static_cast<int64_t>(r.causes.size());
  r.what_if = layoutprof::what_if_from(doc.at("what_if"), causes);
  for (const json& c : doc.at("causes"))
    if (c.contains("what_if"))
      for (const json& v : c.at("what_if")) r.what_if.variants.push_back(what_if_variant_from(v, causes));
}

void training_from(const json& ops, const OpSink& sink, Report& r) {
  if (ops.contains("backward_from")) {
    r.backward_from = id_from(ops.at("backward_from"));
    const json& pairs = ops.at("forward_ops");
    if (!pairs.is_array() || pairs.size() % 2) throw std::out_of_range("ops.forward_ops is malformed");
    for (size_t i = 0; i < pairs.size(); i += 2) {
      const int64_t op = as<int64_t>(pairs[i]), fwd = as<int64_t>(pairs[i + 1]);
      if (op < 0 || op >= sink.size() || fwd < 0 || fwd >= op)
        throw std::out_of_range("ops.forward_ops names an op out of range");
      if (sink.detail() == OpDetail::full) r.ops[op].forward_op = static_cast<int32_t>(fwd);
    }
  }
}

void parameters_from(const json& list, const OpSink& sink, Report& r) {
  for (const json& j : list) {
    r.parameters.push_back(parameter_from(j));
    if (r.parameters.back().producer >= sink.size())
      throw std::out_of_range("a parameter's grad_producer is out of range");
  }
}

void tensor_samples_from(const json& list, const OpSink& sink, size_t counters, Report& r) {
  for (const json& t : list) {
    if (!t.is_array() || t.size() != 4) throw std::out_of_range("a tensor_samples entry is not [op, slot, counter, samples]");
    TensorSamples ts;
    ts.op = as<int32_t>(t[0]);
    ts.slot = as<int32_t>(t[1]);
    ts.counter = as<uint32_t>(t[2]);
    ts.samples = as<uint64_t>(t[3]);
    if (ts.op < 0 || ts.op >= sink.size() || ts.slot < 0 || ts.counter >= counters)
      throw std::out_of_range("a tensor_samples entry names an op, tensor or counter out of range");
    if (sink.detail() == OpDetail::full) {
      const OpEvent& op = r.ops[ts.op];
      if (static_cast<size_t>(ts.slot) >= op.inputs.size() + op.outputs.size())
        throw std::out_of_range("a tensor_samples entry names a tensor its op does not have");
      r.tensor_samples.push_back(ts);
    }
  }
}

// The report's parts, once the version is known to be one this reader reads.
Report parts_from_doc(const json& doc, bool v1, Streamed* streamed) {
  const OpDetail detail = streamed ? streamed->sink.detail() : OpDetail::full;
  Report r;
  r.run = run_from(doc.at("run"));
  const std::vector<std::string> names = measured_names(r.run);
  r.summary = summary_from(doc.at("summary"), names);
  OpSink doc_sink(r.ops, detail);
  const OpSink* sink = &doc_sink;
  if (streamed && streamed->ops) {
    r.ops = std::move(streamed->report.ops);
    r.tensors = streamed->report.tensors;
    sink = &streamed->sink;
  } else {
    ops_from_doc(doc, v1, streamed, names, r, doc_sink);
  }
  if (streamed && streamed->copies) r.copies = std::move(streamed->report.copies);
  else
    for (const json& j : doc.at("copies")) r.copies.push_back(copy_from(j, names));
  if (streamed && streamed->split_points) r.split_points = std::move(streamed->report.split_points);
  else
    for (const json& j : doc.at("split_points")) r.split_points.push_back(split_from(j));
  for (const json& j : doc.at("modules")) r.modules.push_back(module_from(j, names));
  r.causes_in_file = doc.contains("causes");
  if (r.causes_in_file)
    for (const json& j : doc.at("causes")) r.causes.push_back(cause_from(j, sink->size()));
  r.hazards_in_file = doc.contains("hazards");
  if (r.hazards_in_file)
    for (const json& j : doc.at("hazards")) r.hazards.push_back(hazard_from(j, sink->size()));
  if (doc.contains("compiled")) r.compiled = compiled_from(doc.at("compiled"));
  if (doc.contains("what_if")) what_if_from(doc, r);
  if (doc.contains("backend")) r.backend = backend_from(doc.at("backend"), sink->size());
  if (!v1) training_from(doc.at("ops"), *sink, r);
  if (r.backward_from < -1 || r.backward_from > sink->size())
    throw std::out_of_range("ops.backward_from is out of range");
  if (doc.contains("parameters")) parameters_from(doc.at("parameters"), *sink, r);
  if (doc.contains("tensor_samples")) tensor_samples_from(doc.at("tensor_samples"), *sink, names.size(), r);
  check_ids(r, sink->top());
  // Birthplaces came after schema 2: a report written before them gets them derived here.
  if (!r.causes_in_file && detail == OpDetail::full) r.causes = find_causes(r, top_level_ancestors(r.ops));
  if (detail == OpDetail::top_level) {
    r.top_level_only = true;
    r.tensors = std::make_shared<TensorStore>();  // schema 1 kept them as it read
  }
  return r;
}

// Whether `doc` nests arrays and objects deeper than `limit` levels (itself the first),
// found without recursion: a tree can be deeper than the stack.
bool nests_deeper_than(const json& doc, size_t limit) {
  std::vector<std::pair<const json*, size_t>> todo{{&doc, 1}};
  while (!todo.empty()) {
    const auto [v, depth] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    if (depth > limit) return true;
    for (const json& child : *v) todo.emplace_back(&child, depth + 1);
  }
  return false;
}

}  // namespace

Report report_from_doc(const json& doc, Streamed* streamed) {
  if (!doc.is_object()) throw UsageError("not a layoutprof report: the document is not an object");
  if (!doc.contains("schema_version"))
    throw UsageError("not a layoutprof report: no schema_version");
  check_version(doc["schema_version"]);
  const bool v1 = as<int64_t>(doc["schema_version"]) == 1;
  try {
    return parts_from_doc(doc, v1, streamed);
  } catch (const json::exception& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  } catch (const std::logic_error& e) {  // invalid_argument, out_of_range
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  }
}

}  // namespace report_json

// A tree built by the caller may be nested to any depth: checked before anything else reads it.
Report report_from_json(const nlohmann::json& doc) {
  if (report_json::nests_deeper_than(doc, report_json::kMaxReportDepth)) report_json::refuse_too_deep();
  return report_json::report_from_doc(doc, nullptr);
}

}  // namespace layoutprof
