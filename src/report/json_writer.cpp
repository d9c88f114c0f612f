// The JSON report's writer: the document streamed out as it is made (no tree of the op list),
// and the tree forms tests and small reports use.
#include <array>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "analysis/grads.h"
#include "support/flat_index.h"
#include "report/json_report.h"
#include "report/cause_json.h"
#include "report/compiled_json.h"
#include "report/backend_json.h"
#include "report/hazard_json.h"
#include "report/what_if_json.h"
#include "report/json_fields.h"
#include "report/json_out.h"

namespace layoutprof {

using nlohmann::json;

namespace {

using report_json::measured_names;


// The one definition of a tensor's JSON (copies, the op list's tensor table, run inputs).
void write_tensor(JsonOut& o, const TensorInfo& t, bool with_storage = true) {
  o.begin('{');
  o.key("arg").num(t.arg);
  o.key("class").str(layout_class_name(t.layout().cls));
  o.key("device").str(t.device());
  o.key("dtype").str(t.dtype());
  o.key("elem_size").num(t.elem_size());
  o.key("layout").str(t.label());
  o.key("order").nums(t.layout().order);
  o.key("sizes").nums(t.sizes());
  if (with_storage) o.key("storage").unum(t.storage);
  o.key("storage_offset").num(t.storage_offset);
  o.key("strides").nums(t.strides());
  o.end('}');
}

// The one definition of a DTLB estimate's JSON (copies, summary).
void write_dtlb(JsonOut& o, const DtlbEstimate& d, bool with_fraction) {
  o.begin('{');
  o.key("accesses").num(d.accesses);
  if (with_fraction) o.key("fraction").real(d.fraction);
  o.key("l1_misses").num(d.l1_misses);
  o.key("sampled").boolean(d.sampled);
  o.key("walks").num(d.walks);
  o.end('}');
}

// The same as trees, for the places that build one (few tensors: the run's inputs, op_list_json).
json tensor_json(const TensorInfo& t) {
  TextBuf text;
  JsonOut o(text);
  write_tensor(o, t);
  return json::parse(text.view());
}

json dtlb_json(const DtlbEstimate& d, bool with_fraction) {
  TextBuf text;
  JsonOut o(text);
  write_dtlb(o, d, with_fraction);
  return json::parse(text.view());
}


json per_class_json(const PerCopyClass& v) {
  json j = json::object();
  for (int i = 0; i < kCopyClassCount; ++i) j[copy_class_name(static_cast<CopyClass>(i))] = v[i];
  return j;
}

template <typename CounterList>  // std::vector or CompactVector
json counters_json(const CounterList& values, const std::vector<std::string>& names) {
  json j = json::object();
  for (size_t k = 0; k < values.size() && k < names.size(); ++k)
    j[names[k]] = {{"raw", values[k].raw}, {"scaled", values[k].scaled},
                   {"multiplexed", values[k].multiplexed}};
  return j;
}

// Optional values: a negative number (no op, no GPU traced) or an empty string is null.
json id_or_null(int64_t id) { return id < 0 ? json(nullptr) : json(id); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json counter_status_json(const std::vector<CounterStatus>& counters) {
  json list = json::array();
  for (const CounterStatus& c : counters) {
    json item = {{"event", c.event},
                 {"encoding", c.encoding},
                 {"scope", to_string(c.scope)},
                 {"measured", c.measured},
                 {"reason", c.measured ? json(nullptr) : json(c.reason)},
                 {"note", c.note},
                 {"mode", to_string(c.mode)}};
    if (c.mode == CounterMode::interval && c.measured) item["period"] = c.period;
    if (c.sampled() && c.measured) {
      item["period"] = c.period;
      item["data_address"] = text_or_null(c.data_address);
      item["samples"] = c.samples;
      item["attributed"] = c.attributed;
      item["lost"] = c.lost;
      item["calls"] = c.calls;
    }
    list.push_back(std::move(item));
  }
  return list;
}

// The run as a plain run's report has it.
json plain_run_json(const RunInfo& r) {
  json inputs = json::array();
  for (const ModelInput& in : r.inputs) {
    inputs.push_back({{"spec", in.spec.text},
                      {"sizes", in.spec.sizes},
                      {"dtype", in.spec.dtype},
                      {"format", in.spec.format},
                      {"perm", in.spec.perm},
                      {"tensor", tensor_json(in.tensor)}});
    if (!in.origin.empty()) inputs.back()["origin"] = in.origin;
  }
  return json{{"model", r.model},
              {"model_format", r.model_format},
              {"model_mode", {{"value", r.model_mode.value},
                              {"chosen_by", r.model_mode.chosen_by},
                              {"evidence", text_or_null(r.model_mode.evidence)}}},
              {"inputs", inputs},
              {"threads", r.threads},
              {"warmup", r.warmup},
              {"iters", r.iters},
              {"calls_recorded", r.calls_recorded},
              {"calls_identical", r.calls_identical},
              {"max_ops", r.max_ops},
              {"ops_not_recorded", r.ops_not_recorded},
              {"device", r.device},
              {"torch_version", r.torch_version},
              {"layoutprof_version", r.layoutprof_version},
              {"status", to_string(r.status)},
              {"error", text_or_null(r.error)},
              {"backward", r.backward},
              {"loss", text_or_null(r.loss)},
              {"counters", counter_status_json(r.counters)},
              {"counter_mode", r.counter_mode ? json(to_string(*r.counter_mode)) : json(nullptr)},
              {"counter_read", r.counter_read},
              {"bandwidth", r.bandwidth},
              {"bandwidth_note", r.bandwidth_note},
              {"tlb", r.tlb},
              {"gpu", text_or_null(r.gpu)},
              {"measured", r.measured},
              {"not_measured", r.not_measured}};
}

// The run, with what compare-formats' variants add (keys a plain run's report does not have).
json run_json(const RunInfo& r) {
  json j = plain_run_json(r);
  if (!r.conversion.to.empty())
    j["conversion"] = {{"to", r.conversion.to},
                       {"parameters", r.conversion.parameters},
                       {"parameters_total", r.conversion.parameters_total},
                       {"buffers", r.conversion.buffers},
                       {"buffers_total", r.conversion.buffers_total},
                       {"inputs", r.conversion.inputs}};
  if (!r.plain_call_ns.empty()) j["plain_call_ns"] = r.plain_call_ns;
  if (!r.accepted.empty()) j["accepted"] = r.accepted;
  return j;
}

json op_json(const OpEvent& op, const std::vector<std::string>& names) {
  json inputs = json::array(), outputs = json::array();
  for (const TensorInfo& t : op.inputs) inputs.push_back(tensor_json(t));
  for (const TensorInfo& t : op.outputs) outputs.push_back(tensor_json(t));
  return json{{"id", op.id},
              {"parent", id_or_null(op.parent)},
              {"depth", op.depth},
              {"name", op.name},
              {"module", op.module},
              {"source", op.source},
              {"source_text", op.source_text},
              {"start_ns", op.start_ns},
              {"duration_ns", op.duration_ns},
              {"thread", op.thread},
              {"failed", op.failed},
              {"inputs", inputs},
              {"outputs", outputs},
              {"counters", counters_json(op.counters, names)},
              {"gpu_ns", id_or_null(op.gpu_ns)},
              {"gpu_launches", op.gpu_ns < 0 ? json(nullptr) : json(op.gpu_launches)},
              {"copy_gpu_ns", id_or_null(op.copy_gpu_ns)},
              {"kernels", op.kernels}};
}

void write_copy(TextBuf& out, const CopyRecord& c, const std::vector<std::string>& names) {
  JsonOut o(out);
  o.begin('{');
  o.key("bytes").num(c.bytes);
  o.key("class").str(copy_class_name(c.cls));
  if (c.counters.empty()) o.key("counters").raw("{}");
  else o.key("counters").raw(dump_compact(counters_json(c.counters, names)));
  o.key("culprit").num(c.culprit);
  o.key("dst");
  write_tensor(o, c.dst);
  o.key("dtlb");
  write_dtlb(o, c.dtlb, true);
  o.key("gpu_ns").num_or_null(c.gpu_ns);
  o.key("op").num(c.op);
  o.key("origin").num_or_null(c.origin);
  o.key("origin_input").num_or_null(c.origin_input);
  if (!c.src_samples.empty()) {  // sampled data addresses: [source, destination] per counter
    json a = json::object();
    for (size_t k = 0; k < c.src_samples.size() && k < names.size(); ++k)
      a[names[k]] = {{"source", c.src_samples[k]}, {"destination", c.dst_samples[k]}};
    o.key("address_samples").raw(dump_compact(a));
  }
  o.key("src");
  write_tensor(o, c.src);
  o.end('}');
}

void write_split(TextBuf& out, const SplitPoint& sp, const OpList& ops) {
  const OpEvent& op = ops.at(sp.op);
  JsonOut o(out);
  o.begin('{');
  o.key("after").str(sp.after);
  o.key("before").str(sp.before);
  o.key("copies").num(sp.copies);
  o.key("copy_bytes").num(sp.copy_bytes);
  o.key("copy_ops").nums(sp.copy_ops);
  o.key("kinds").strs(sp.kinds);
  o.key("module").str(op.module);
  o.key("name").str(op.name);
  o.key("op").num(sp.op);
  o.key("source").str(op.source);
  o.key("source_text").str(op.source_text);
  o.key("suggestion").str(sp.suggestion);
  o.end('}');
}

json module_json(const ModuleStats& m, const std::vector<std::string>& names) {
  return json{{"module", m.module},
              {"ops", m.ops},
              {"top_level_ops", m.top_level_ops},
              {"noncontiguous_inputs", m.noncontiguous_inputs},
              {"copies", per_class_json(m.copies)},
              {"copy_bytes", per_class_json(m.copy_bytes)},
              {"time_ns", m.time_ns},
              {"split_points", m.split_points},
              {"transitions", m.transitions},
              {"dtlb_walks", m.dtlb_walks},
              {"tensor_bytes", m.tensor_bytes},
              {"counters", counters_json(m.counters, names)},
              {"gpu_ns", m.gpu_ns},
              {"copy_gpu_ns", m.copy_gpu_ns},
              {"mixed_ops", m.mixed_ops},
              {"mixed_without_copy", m.mixed_without_copy}};
}

const char* const kOpsEncoding =
    "One row per op event of the shown call, in execution order (its index is the op's id): "
    "[parent, name, module, source, start_ns, duration_ns, thread, failed, inputs, outputs, "
    "counters?, gpu?]. parent: an earlier row's index or null. name, module, source: indexes "
    "into names, modules and sources ([file:line, line text]). failed: 0 or 1. inputs, "
    "outputs: flat [tensor, buffer, tensor, buffer, ...]; tensor indexes tensors (each as in "
    "copies, without storage), buffer numbers the storage buffers of the call by first "
    "appearance (0: none). counters: [] or [raw, scaled, multiplexed (0/1)] per measured "
    "counter of run.counters, concatenated. gpu (GPU runs only): [gpu_ns, gpu_launches, "
    "copy_gpu_ns, [kernel name indexes into kernels]]. Trailing optional columns are left out. "
    "Training steps (--backward): rows from backward_from on are the backward pass, the rows "
    "before it the forward pass; forward_ops is flat [backward row, forward row, ...] pairs, "
    "each backward function and the forward op that made its autograd node.";

json figures_json() {
  return {{"start_ns", "measured"},     {"duration_ns", "measured"}, {"time_ns", "measured"},
          {"wall_ns", "measured"},      {"copies", "derived"},       {"copy_bytes", "derived"},
          {"split_points", "derived"},  {"noncontiguous_inputs", "derived"},
          {"tensor_bytes", "derived"},  {"dtlb", "modelled"},        {"counters", "measured"},
          {"gpu_ns", "measured"}};
}

json grad_layout_json(const std::array<int64_t, 4>& counts) {
  json j = json::object();
  for (int v = 0; v < 4; ++v) j[grad_verdict_name(static_cast<GradVerdict>(v))] = counts[v];
  return j;
}

// DDP's bucket view of a parameter: the strides it was built from, and when (null: no DDP
// seen, the view as DDP built around the model as it is would make it).
json ddp_bucket_json(const ParamGrad& p) {
  return {{"view_strides", bucket_view_strides(p)},
          {"param_strides_when_built", p.bucket_param_strides.empty() ? json(nullptr) : json(p.bucket_param_strides)},
          {"built", p.buckets_built.empty() ? json(nullptr) : json(p.buckets_built)}};
}

// A parameter's gradient layout, with what it means: the op that produced the gradient,
// the forward op, module and source line that op belongs to, DDP's warning lines when DDP
// would print them, and a suggestion.
json parameter_json(const ParamGrad& p, const Report& r) {
  const OpEvent* producer = p.producer >= 0 && p.producer < static_cast<int64_t>(r.ops.size()) ? &r.ops[p.producer] : nullptr;
  const OpEvent* forward = nullptr;
  for (const OpEvent* o = producer; o && !forward; o = o->parent >= 0 ? &r.ops[o->parent] : nullptr)
    if (o->forward_op >= 0 && o->forward_op < static_cast<int64_t>(r.ops.size())) forward = &r.ops[o->forward_op];
  std::vector<std::string> ddp = ddp_warning_lines(p);
  const bool got = p.has_grad;
  return {{"name", p.name},
          {"sizes", p.sizes},
          {"strides", p.strides},
          {"requires_grad", p.requires_grad},
          {"elem_size", p.elem_size},
          {"grad_sizes", got ? json(p.grad_sizes) : json(nullptr)},
          {"grad_strides", got ? json(p.grad_strides) : json(nullptr)},
          {"grad_dense", got ? json(p.grad_dense) : json(nullptr)},
          {"grad_verdict", p.verdict == GradVerdict::frozen ? json(nullptr) : json(grad_verdict_name(p.verdict))},
          {"grad_producer", id_or_null(p.producer)},
          {"grad_forward_op", forward ? json(forward->id) : json(nullptr)},
          {"module", forward ? json(forward->module.str()) : json(nullptr)},
          {"source", forward ? json(forward->source.str()) : json(nullptr)},
          {"source_text", forward ? json(forward->source_text.str()) : json(nullptr)},
          {"prior_grad_strides", p.had_grad ? json(p.prior_grad_strides) : json(nullptr)},
          {"accumulate_grad_warns", got ? json(accumulate_grad_warns(p)) : json(nullptr)},
          {"ddp_bucket", got ? ddp_bucket_json(p) : json(nullptr)},
          {"ddp_warning", ddp.empty() ? json(nullptr) : json(ddp)},
          {"suggestion", text_or_null(grad_suggestion(p))}};
}

json summary_json(const Summary& s, const std::vector<std::string>& names) {
  return {{"ops", s.ops},
          {"top_level_ops", s.top_level_ops},
          {"copies", per_class_json(s.copies)},
          {"copy_bytes", per_class_json(s.copy_bytes)},
          {"split_points", s.split_points},
          {"wall_ns", s.wall_ns},
          {"dtlb", dtlb_json(s.dtlb, false)},
          {"tensor_bytes", s.tensor_bytes},
          {"counters", counters_json(s.counters, names)},
          {"gpu",
           {{"traced", s.gpu.traced},
            {"gpu_ns", s.gpu.gpu_ns},
            {"copy_gpu_ns", s.gpu.copy_gpu_ns},
            {"kernels", s.gpu.kernels},
            {"unattributed", s.gpu.unattributed},
            {"unattributed_ns", s.gpu.unattributed_ns},
            {"dropped", s.gpu.dropped}}},
          {"grad_layout", grad_layout_json(s.grad_layout)}};
}


// What makes two tensors of the op list the same table entry: everything but the storage.
struct TensorKey {
  const TensorShape* shape;
  int arg;
  int64_t storage_offset;
  bool operator==(const TensorKey& o) const {
    return shape == o.shape && arg == o.arg && storage_offset == o.storage_offset;
  }
};
struct TensorKeyHash {
  size_t operator()(const TensorKey& k) const {
    return mix_hash(reinterpret_cast<uintptr_t>(k.shape) ^
                    mix_hash(static_cast<uint64_t>(k.storage_offset) * 31 + static_cast<uint64_t>(k.arg)));
  }
};
struct StrHash {
  size_t operator()(Str s) const { return mix_hash(reinterpret_cast<uintptr_t>(s.id())); }
};
using SourceKey = std::pair<Str, Str>;
struct SourceKeyHash {
  size_t operator()(const SourceKey& k) const {
    return mix_hash(reinterpret_cast<uintptr_t>(k.first.id()) * 1000003u ^
                    reinterpret_cast<uintptr_t>(k.second.id()));
  }
};
struct U64Hash {
  size_t operator()(uint64_t v) const { return mix_hash(v); }
};

struct OpTablesOut {
  FlatIndex<Str, StrHash> names, modules, kernels;
  FlatIndex<SourceKey, SourceKeyHash> sources;
  FlatIndex<TensorKey, TensorKeyHash> tensors;
  std::vector<const TensorInfo*> tensor_values;  // the first tensor of each key
  FlatIndex<uint64_t, U64Hash> buffers;          // buffer ids from 1 (0: no storage)

  uint32_t tensor(const TensorInfo& t) {
    uint32_t id = tensors.id({t.shape, t.arg, t.storage_offset});
    if (id == tensor_values.size()) tensor_values.push_back(&t);
    return id;
  }
  uint32_t buffer(uint64_t storage) { return storage == 0 ? 0 : buffers.id(storage) + 1; }
  static SourceKey source_key(const OpEvent& op) { return {op.source, op.source_text}; }
};

// The tensor table's ids of each op's tensors, inputs then outputs, in op order: found once
// while the tables are made, read back in order while the rows are written.
struct TensorIds {
  std::vector<uint32_t> ids;
  size_t next = 0;
};

void put_tensors(TextBuf& row, const TensorList& list, OpTablesOut& t, TensorIds& ids) {
  row += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) row += ',';
    put_int(row, ids.ids[ids.next++]);
    row += ',';
    put_int(row, t.buffer(list[i].storage));  // numbered as the rows are written
  }
  row += ']';
}

// Gives everything a row refers to in a table its index, in order of first appearance.
void intern_op(const OpEvent& op, OpTablesOut& t, TensorIds& ids) {
  t.names.id(op.name);
  t.modules.id(op.module);
  t.sources.id(OpTablesOut::source_key(op));
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const TensorInfo& tensor : *list) ids.ids.push_back(t.tensor(tensor));
  for (Str k : op.kernels) t.kernels.id(k);
}

void write_row(TextBuf& row, const OpEvent& op, OpTablesOut& t, TensorIds& ids) {
  row += '[';
  if (op.parent < 0) row += "null";
  else put_int(row, op.parent);
  for (int64_t v : {int64_t(t.names.id(op.name)), int64_t(t.modules.id(op.module)),
                    int64_t(t.sources.id(OpTablesOut::source_key(op))), op.start_ns,
                    op.duration_ns, int64_t(op.thread), int64_t(op.failed)}) {
    row += ',';
    put_int(row, v);
  }
  row += ',';
  put_tensors(row, op.inputs, t, ids);
  row += ',';
  put_tensors(row, op.outputs, t, ids);
  if (!op.counters.empty() || op.gpu_ns >= 0) {
    row += ",[";
    for (size_t k = 0; k < op.counters.size(); ++k) {
      if (k) row += ',';
      put_int(row, static_cast<int64_t>(op.counters[k].raw));
      row += ',';
      put_double(row, op.counters[k].scaled);
      row += op.counters[k].multiplexed ? ",1" : ",0";
    }
    row += ']';
  }
  if (op.gpu_ns >= 0) {
    row += ",[";
    put_int(row, op.gpu_ns);
    row += ',';
    put_int(row, op.gpu_launches);
    row += ',';
    put_int(row, op.copy_gpu_ns);
    row += ",[";
    for (size_t k = 0; k < op.kernels.size(); ++k) {
      if (k) row += ',';
      put_int(row, t.kernels.id(op.kernels[k]));
    }
    row += "]]";
  }
  row += ']';
}

template <typename List, typename Write>
void write_array(std::ostream& out, const List& list, Write&& write) {
  out << '[';
  bool first = true;
  for (const auto& item : list) {
    out << (first ? "\n" : ",\n");
    first = false;
    write(item);
  }
  out << "\n]";
}

// The op list's tables, in order of first appearance: the rows refer to them.
void write_op_tables(std::ostream& out, const OpTablesOut& tables, TextBuf& row) {
  auto strings = [&out](const std::vector<Str>& list) {
    write_array(out, list, [&out](Str s) { out << dump_compact(s.str()); });
  };
  out << ",\n\"names\": ";
  strings(tables.names.keys());
  out << ",\n\"modules\": ";
  strings(tables.modules.keys());
  out << ",\n\"sources\": ";
  write_array(out, tables.sources.keys(), [&out](const SourceKey& key) {
    out << dump_compact(json::array({key.first.str(), key.second.str()}));
  });
  out << ",\n\"tensors\": ";
  write_array(out, tables.tensor_values, [&out, &row](const TensorInfo* t) {
    row.clear();
    JsonOut o(row);
    write_tensor(o, *t, false);
    row.write_to(out);
  });
  out << ",\n\"kernels\": ";
  strings(tables.kernels.keys());
}

// The rows, made again with the ids the tables gave, then the training step's pairs.
void write_op_rows(std::ostream& out, const Report& r, OpTablesOut& tables, TensorIds& ids, TextBuf& row) {
  out << ",\n\"rows\": [";
  row.clear();
  for (size_t i = 0; i < r.ops.size(); ++i) {
    row += i ? ",\n" : "\n";
    write_row(row, r.ops[i], tables, ids);
    if (row.size() >= (1 << 16)) {  // rows go out in blocks of about 64 KB
      row.write_to(out);
      row.clear();
    }
  }
  row.write_to(out);
  ids = {};  // read back in full: its memory goes before the copies are written
  // Training steps: rows from backward_from on are the backward pass; forward_ops pairs each
  // backward function's row with the forward op row that made its autograd node.
  out << "\n],\n\"backward_from\": ";
  if (r.backward_from < 0) out << "null";
  else out << r.backward_from;
  out << ",\n\"forward_ops\": [";
  row.clear();
  bool first_pair = true;
  for (const OpEvent& op : r.ops) {
    if (op.forward_op < 0) continue;
    row += first_pair ? "" : ",";
    first_pair = false;
    put_int(row, op.id);
    row += ',';
    put_int(row, op.forward_op);
  }
  row.write_to(out);
  out << "]}";
}

// Copies, split points, causes, modules, parameters and sampled addresses, after the op list.
void write_findings(std::ostream& out, const Report& r, const std::vector<std::string>& names, TextBuf& row) {
  out << ",\n\"copies\": ";
  write_array(out, r.copies, [&](const CopyRecord& c) {
    row.clear();
    write_copy(row, c, names);
    row.write_to(out);
  });
  out << ",\n\"split_points\": ";
  write_array(out, r.split_points, [&](const SplitPoint& sp) {
    row.clear();
    write_split(row, sp, r.ops);
    row.write_to(out);
  });
  out << ",\n\"causes\": ";
  write_array(out, r.causes, [&](const LayoutCause& c) {
    json j = cause_json(c);
    if (r.what_if.ran) j["what_if"] = cause_what_if_json(r.what_if, &c - r.causes.data());
    out << dump_compact(j);
  });
  out << ",\n\"hazards\": ";
  write_array(out, r.hazards, [&](const Hazard& h) { out << dump_compact(hazard_json(h)); });
  if (r.compiled.seen) out << ",\n\"compiled\": " << dump_compact(compiled_json(r.compiled));
  if (r.what_if.ran) out << ",\n\"what_if\": " << dump_compact(what_if_json(r.what_if));
  if (!r.backend.state.empty()) out << ",\n\"backend\": " << dump_compact(backend_json(r.backend));
  out << ",\n\"modules\": ";
  write_array(out, r.modules, [&](const ModuleStats& m) { out << dump_compact(module_json(m, names)); });
  out << ",\n\"parameters\": ";
  write_array(out, r.parameters, [&](const ParamGrad& p) { out << dump_compact(parameter_json(p, r)); });
  // Sampled data addresses: [op, slot (inputs, then outputs), counter, samples] per tensor.
  out << ",\n\"tensor_samples\": [";
  for (size_t i = 0; i < r.tensor_samples.size(); ++i) {
    const TensorSamples& t = r.tensor_samples[i];
    out << (i ? "," : "") << '[' << t.op << ',' << t.slot << ',' << t.counter << ',' << t.samples << ']';
  }
  out << "]";
}

}  // namespace

void write_report_json(std::ostream& out, const Report& r) {
  require_whole_report(r);
  const std::vector<std::string> names = measured_names(r.run);
  // Tables first (the rows refer to them), then the rows, made again with the same ids.
  OpTablesOut tables;
  TensorIds ids;
  for (const OpEvent& op : r.ops) intern_op(op, tables, ids);
  TextBuf row;  // one entry's text at a time (rows: about 64 KB of them)
  json figures = figures_json();
  if (r.run.counter_mode == CounterMode::sampled) figures["counters"] = "sampled";
  out << "{\"schema_version\": " << kSchemaVersion << ",\n\"figures\": " << dump_compact(figures)
      << ",\n\"run\": " << dump_compact(run_json(r.run))
      << ",\n\"summary\": " << dump_compact(summary_json(r.summary, names)) << ",\n\"ops\": {\"encoding\": "
      << dump_compact(kOpsEncoding);
  write_op_tables(out, tables, row);
  write_op_rows(out, r, tables, ids, row);
  write_findings(out, r, names, row);
  out << "\n}\n";
}

std::string report_json_text(const Report& r) {
  std::ostringstream out;
  write_report_json(out, r);
  return out.str();
}

json report_to_json(const Report& r) { return json::parse(report_json_text(r)); }

json op_list_json(const Report& r) {
  json ops = json::array();
  const std::vector<std::string> names = measured_names(r.run);
  for (const OpEvent& op : r.ops) {
    ops.push_back(op_json(op, names));
    if (r.backward_from >= 0) {  // training steps: each op's pass, as ops.backward_from gives it
      ops.back()["pass"] = op.id >= r.backward_from ? "backward" : "forward";
      ops.back()["forward_op"] = id_or_null(op.forward_op);
    }
  }
  return ops;
}
std::string dump_json(const json& doc, int indent) {
  return doc.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace layoutprof
