#include "layoutprof/json_report.h"

#include <fstream>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "layoutprof/errors.h"

namespace layoutprof {

using nlohmann::json;

namespace {

json tensor_json(const TensorInfo& t) {
  return json{{"arg", t.arg},
              {"sizes", t.sizes},
              {"strides", t.strides},
              {"storage_offset", t.storage_offset},
              {"dtype", t.dtype},
              {"device", t.device},
              {"elem_size", t.elem_size},
              {"layout", layout_label(t.layout)},
              {"class", layout_class_name(t.layout.cls)},
              {"order", t.layout.order},
              {"storage", t.storage}};
}

TensorInfo tensor_from(const json& j) {
  TensorInfo t;
  t.arg = j.at("arg").get<int>();
  t.sizes = j.at("sizes").get<std::vector<int64_t>>();
  t.strides = j.at("strides").get<std::vector<int64_t>>();
  t.storage_offset = j.at("storage_offset").get<int64_t>();
  t.dtype = j.at("dtype").get<std::string>();
  t.device = j.at("device").get<std::string>();
  t.elem_size = j.at("elem_size").get<int>();
  t.layout.cls = layout_class_from_name(j.at("class").get<std::string>());
  t.layout.order = j.at("order").get<std::vector<int>>();
  t.storage = j.at("storage").get<uint64_t>();
  return t;
}

json per_class_json(const PerCopyClass& v) {
  json j = json::object();
  for (int i = 0; i < kCopyClassCount; ++i) j[copy_class_name(static_cast<CopyClass>(i))] = v[i];
  return j;
}

PerCopyClass per_class_from(const json& j) {
  PerCopyClass v{};
  for (int i = 0; i < kCopyClassCount; ++i)
    v[i] = j.at(copy_class_name(static_cast<CopyClass>(i))).get<int64_t>();
  return v;
}

std::vector<std::string> measured_names(const RunInfo& r) {
  std::vector<std::string> names;
  for (const CounterStatus* c : r.measured_counters()) names.push_back(c->event);
  return names;
}

json counters_json(const std::vector<CounterValue>& values, const std::vector<std::string>& names) {
  json j = json::object();
  for (size_t k = 0; k < values.size() && k < names.size(); ++k)
    j[names[k]] = {{"raw", values[k].raw}, {"scaled", values[k].scaled},
                   {"multiplexed", values[k].multiplexed}};
  return j;
}

std::vector<CounterValue> counters_from(const json& j, const std::vector<std::string>& names) {
  std::vector<CounterValue> values;
  if (j.empty()) return values;
  for (const std::string& name : names) {
    const json& v = j.at(name);
    CounterValue c;
    c.raw = v.at("raw").get<uint64_t>();
    c.scaled = v.at("scaled").get<double>();
    if (!std::isfinite(c.scaled) || c.scaled < 0 || c.scaled > 1e300)
      throw std::out_of_range("counter '" + name + "' has an impossible value");
    c.multiplexed = v.at("multiplexed").get<bool>();
    values.push_back(c);
  }
  return values;
}

json dtlb_json(const DtlbEstimate& d, bool with_fraction) {
  json j = {{"accesses", d.accesses}, {"l1_misses", d.l1_misses}, {"walks", d.walks},
            {"sampled", d.sampled}};
  if (with_fraction) j["fraction"] = d.fraction;
  return j;
}

DtlbEstimate dtlb_from(const json& j) {
  DtlbEstimate d;
  d.accesses = j.at("accesses").get<int64_t>();
  d.l1_misses = j.at("l1_misses").get<int64_t>();
  d.walks = j.at("walks").get<int64_t>();
  d.sampled = j.at("sampled").get<bool>();
  if (j.contains("fraction")) d.fraction = j.at("fraction").get<double>();
  return d;
}

// Optional values: a negative number (no op, no GPU traced) or an empty string is null.
json id_or_null(int64_t id) { return id < 0 ? json(nullptr) : json(id); }
int64_t id_from(const json& j) { return j.is_null() ? -1 : j.get<int64_t>(); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
std::string text_from(const json& j) { return j.is_null() ? "" : j.get<std::string>(); }

json counter_status_json(const std::vector<CounterStatus>& counters) {
  json list = json::array();
  for (const CounterStatus& c : counters)
    list.push_back({{"event", c.event},
                    {"encoding", c.encoding},
                    {"scope", c.scope},
                    {"measured", c.measured},
                    {"reason", c.measured ? json(nullptr) : json(c.reason)},
                    {"note", c.note}});
  return list;
}

json run_json(const RunInfo& r) {
  json inputs = json::array();
  for (const ModelInput& in : r.inputs)
    inputs.push_back({{"spec", in.spec.text},
                      {"sizes", in.spec.sizes},
                      {"dtype", in.spec.dtype},
                      {"format", in.spec.format},
                      {"perm", in.spec.perm},
                      {"tensor", tensor_json(in.tensor)}});
  return json{{"model", r.model},
              {"inputs", inputs},
              {"threads", r.threads},
              {"warmup", r.warmup},
              {"iters", r.iters},
              {"calls_recorded", r.calls_recorded},
              {"calls_identical", r.calls_identical},
              {"device", r.device},
              {"torch_version", r.torch_version},
              {"layoutprof_version", r.layoutprof_version},
              {"status", r.status},
              {"error", text_or_null(r.error)},
              {"counters", counter_status_json(r.counters)},
              {"counter_read", r.counter_read},
              {"bandwidth", r.bandwidth},
              {"bandwidth_note", r.bandwidth_note},
              {"tlb", r.tlb},
              {"gpu", text_or_null(r.gpu)},
              {"measured", r.measured},
              {"not_measured", r.not_measured}};
}

RunInfo run_from(const json& j) {
  RunInfo r;
  r.model = j.at("model").get<std::string>();
  for (const json& in : j.at("inputs")) {
    ModelInput m;
    m.spec.text = in.at("spec").get<std::string>();
    m.spec.sizes = in.at("sizes").get<std::vector<int64_t>>();
    m.spec.dtype = in.at("dtype").get<std::string>();
    m.spec.format = in.at("format").get<std::string>();
    m.spec.perm = in.at("perm").get<std::vector<int>>();
    m.tensor = tensor_from(in.at("tensor"));
    r.inputs.push_back(std::move(m));
  }
  r.threads = j.at("threads").get<int>();
  r.warmup = j.at("warmup").get<int>();
  r.iters = j.at("iters").get<int>();
  r.calls_recorded = j.at("calls_recorded").get<int>();
  r.calls_identical = j.at("calls_identical").get<bool>();
  r.device = j.at("device").get<std::string>();
  r.torch_version = j.at("torch_version").get<std::string>();
  r.layoutprof_version = j.at("layoutprof_version").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.error = text_from(j.at("error"));
  for (const json& c : j.at("counters")) {
    CounterStatus st;
    st.event = c.at("event").get<std::string>();
    st.encoding = c.at("encoding").get<std::string>();
    st.scope = c.at("scope").get<std::string>();
    st.measured = c.at("measured").get<bool>();
    st.reason = text_from(c.at("reason"));
    st.note = c.at("note").get<std::string>();
    r.counters.push_back(st);
  }
  r.counter_read = j.at("counter_read").get<std::string>();
  r.bandwidth = j.at("bandwidth").get<std::string>();
  r.bandwidth_note = j.at("bandwidth_note").get<std::string>();
  r.tlb = j.at("tlb").get<std::string>();
  r.gpu = text_from(j.at("gpu"));
  r.measured = j.at("measured").get<std::vector<std::string>>();
  r.not_measured = j.at("not_measured").get<std::vector<std::string>>();
  return r;
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

OpEvent op_from(const json& j, const std::vector<std::string>& names) {
  OpEvent op;
  op.id = j.at("id").get<int64_t>();
  op.parent = id_from(j.at("parent"));
  op.depth = j.at("depth").get<int>();
  op.name = j.at("name").get<std::string>();
  op.module = j.at("module").get<std::string>();
  op.source = j.at("source").get<std::string>();
  op.source_text = j.at("source_text").get<std::string>();
  op.start_ns = j.at("start_ns").get<int64_t>();
  op.duration_ns = j.at("duration_ns").get<int64_t>();
  op.thread = j.at("thread").get<uint32_t>();
  op.failed = j.at("failed").get<bool>();
  for (const json& t : j.at("inputs")) op.inputs.push_back(tensor_from(t));
  for (const json& t : j.at("outputs")) op.outputs.push_back(tensor_from(t));
  op.counters = counters_from(j.at("counters"), names);
  op.gpu_ns = id_from(j.at("gpu_ns"));
  op.kernels = j.at("kernels").get<std::vector<std::string>>();
  // Added within schema version 1: reports from before them read as "not given".
  if (j.contains("gpu_launches") && !j.at("gpu_launches").is_null()) op.gpu_launches = j.at("gpu_launches").get<int64_t>();
  if (j.contains("copy_gpu_ns")) op.copy_gpu_ns = id_from(j.at("copy_gpu_ns"));
  return op;
}

json copy_json(const CopyRecord& c, const std::vector<std::string>& names) {
  return json{{"op", c.op},
              {"culprit", c.culprit},
              {"origin", id_or_null(c.origin)},
              {"origin_input", id_or_null(c.origin_input)},
              {"class", copy_class_name(c.cls)},
              {"bytes", c.bytes},
              {"src", tensor_json(c.src)},
              {"dst", tensor_json(c.dst)},
              {"dtlb", dtlb_json(c.dtlb, true)},
              {"counters", counters_json(c.counters, names)},
              {"gpu_ns", id_or_null(c.gpu_ns)}};
}

CopyRecord copy_from(const json& j, const std::vector<std::string>& names) {
  CopyRecord c;
  c.op = j.at("op").get<int64_t>();
  c.culprit = j.at("culprit").get<int64_t>();
  c.origin = id_from(j.at("origin"));
  c.origin_input = static_cast<int>(id_from(j.at("origin_input")));
  c.cls = copy_class_from_name(j.at("class").get<std::string>());
  c.bytes = j.at("bytes").get<int64_t>();
  c.src = tensor_from(j.at("src"));
  c.dst = tensor_from(j.at("dst"));
  c.dtlb = dtlb_from(j.at("dtlb"));
  c.counters = counters_from(j.at("counters"), names);
  c.gpu_ns = id_from(j.at("gpu_ns"));
  return c;
}

json split_json(const SplitPoint& sp, const std::vector<OpEvent>& ops) {
  const OpEvent& op = ops.at(sp.op);
  return json{{"op", sp.op},
              {"name", op.name},
              {"module", op.module},
              {"source", op.source},
              {"source_text", op.source_text},
              {"kinds", sp.kinds},
              {"before", sp.before},
              {"after", sp.after},
              {"copies", sp.copies},
              {"copy_bytes", sp.copy_bytes},
              {"copy_ops", sp.copy_ops},
              {"suggestion", sp.suggestion}};
}

SplitPoint split_from(const json& j) {
  SplitPoint sp;
  sp.op = j.at("op").get<int64_t>();
  sp.kinds = j.at("kinds").get<std::vector<std::string>>();
  sp.before = j.at("before").get<std::string>();
  sp.after = j.at("after").get<std::string>();
  sp.copies = j.at("copies").get<int64_t>();
  sp.copy_bytes = j.at("copy_bytes").get<int64_t>();
  sp.copy_ops = j.at("copy_ops").get<std::vector<int64_t>>();
  sp.suggestion = j.at("suggestion").get<std::string>();
  return sp;
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
              {"copy_gpu_ns", m.copy_gpu_ns}};
}

ModuleStats module_from(const json& j, const std::vector<std::string>& names) {
  ModuleStats m;
  m.module = j.at("module").get<std::string>();
  m.ops = j.at("ops").get<int64_t>();
  m.top_level_ops = j.at("top_level_ops").get<int64_t>();
  m.noncontiguous_inputs = j.at("noncontiguous_inputs").get<int64_t>();
  m.copies = per_class_from(j.at("copies"));
  m.copy_bytes = per_class_from(j.at("copy_bytes"));
  m.time_ns = j.at("time_ns").get<int64_t>();
  m.split_points = j.at("split_points").get<int64_t>();
  m.transitions = j.at("transitions").get<std::vector<std::string>>();
  m.dtlb_walks = j.at("dtlb_walks").get<int64_t>();
  m.tensor_bytes = j.at("tensor_bytes").get<int64_t>();
  m.counters = counters_from(j.at("counters"), names);
  m.gpu_ns = j.at("gpu_ns").get<int64_t>();
  m.copy_gpu_ns = j.at("copy_gpu_ns").get<int64_t>();
  return m;
}

// Ids in a report index its op list; a report that breaks this is refused, not rendered.
void check_ids(const Report& r) {
  auto n = static_cast<int64_t>(r.ops.size());
  auto valid = [n](int64_t id) { return id >= -1 && id < n; };
  for (size_t i = 0; i < r.ops.size(); ++i)
    if (r.ops[i].id != static_cast<int64_t>(i) || !valid(r.ops[i].parent) ||
        r.ops[i].parent >= static_cast<int64_t>(i))
      throw std::out_of_range("ops[" + std::to_string(i) + "] has a bad id or parent");
  for (const CopyRecord& c : r.copies)
    if (c.op < 0 || !valid(c.op) || c.culprit < 0 || !valid(c.culprit) || !valid(c.origin))
      throw std::out_of_range("a copy names an op that is not in the report");
  for (const SplitPoint& sp : r.split_points) {
    if (sp.op < 0 || !valid(sp.op)) throw std::out_of_range("a split point names a missing op");
    for (int64_t id : sp.copy_ops)
      if (id < 0 || !valid(id)) throw std::out_of_range("a split point names a missing copy");
  }
  for (const CopyRecord& c : r.copies)
    if (c.origin_input < -1 || c.origin_input >= static_cast<int>(r.run.inputs.size()))
      throw std::out_of_range("a copy names a model input that is not in the report");
  // Tensors: strides and order describe the sizes, and the class is what they say.
  auto check_tensor = [](const TensorInfo& t) {
    if (t.sizes.size() > 64 || (!t.strides.empty() && t.strides.size() != t.sizes.size()) ||
        (!t.layout.order.empty() && t.layout.order.size() != t.sizes.size()) || t.elem_size < 0)
      throw std::out_of_range("a tensor's sizes, strides and order do not match");
    for (int64_t s : t.sizes)
      if (s < 0) throw std::out_of_range("a tensor has a negative size");
    if (!t.strides.empty() && classify_layout(t.sizes, t.strides).cls != t.layout.cls)
      throw std::out_of_range("a tensor's layout class does not match its strides");
  };
  for (const OpEvent& op : r.ops) {
    if (op.module.size() > 4096) throw std::out_of_range("a module path is too long");
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const TensorInfo& t : *list) check_tensor(t);
  }
  for (const CopyRecord& c : r.copies) {
    check_tensor(c.src);
    check_tensor(c.dst);
  }
}

}  // namespace

json report_to_json(const Report& r) {
  json ops = json::array(), copies = json::array(), splits = json::array(),
       modules = json::array();
  const std::vector<std::string> names = measured_names(r.run);
  for (const OpEvent& op : r.ops) ops.push_back(op_json(op, names));
  for (const CopyRecord& c : r.copies) copies.push_back(copy_json(c, names));
  for (const SplitPoint& sp : r.split_points) splits.push_back(split_json(sp, r.ops));
  for (const ModuleStats& m : r.modules) modules.push_back(module_json(m, names));
  const Summary& s = r.summary;
  return json{
      {"schema_version", kSchemaVersion},
      {"figures",
       {{"start_ns", "measured"},
        {"duration_ns", "measured"},
        {"time_ns", "measured"},
        {"wall_ns", "measured"},
        {"copies", "derived"},
        {"copy_bytes", "derived"},
        {"split_points", "derived"},
        {"noncontiguous_inputs", "derived"},
        {"tensor_bytes", "derived"},
        {"dtlb", "modelled"},
        {"counters", "measured"},
        {"gpu_ns", "measured"}}},
      {"run", run_json(r.run)},
      {"summary",
       {{"ops", s.ops},
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
          {"dropped", s.gpu.dropped}}}}},
      {"ops", ops},
      {"copies", copies},
      {"split_points", splits},
      {"modules", modules}};
}

Report report_from_json(const json& doc) {
  if (!doc.is_object()) throw UsageError("not a layoutprof report: the document is not an object");
  if (!doc.contains("schema_version"))
    throw UsageError("not a layoutprof report: no schema_version");
  if (!doc["schema_version"].is_number_integer() || doc["schema_version"].get<int64_t>() != kSchemaVersion)
    throw UsageError("report schema_version " + doc["schema_version"].dump() +
                     " is not supported (this layoutprof reads " + std::to_string(kSchemaVersion) + ")");
  try {
    Report r;
    r.run = run_from(doc.at("run"));
    const json& s = doc.at("summary");
    r.summary.ops = s.at("ops").get<int64_t>();
    r.summary.top_level_ops = s.at("top_level_ops").get<int64_t>();
    r.summary.copies = per_class_from(s.at("copies"));
    r.summary.copy_bytes = per_class_from(s.at("copy_bytes"));
    r.summary.split_points = s.at("split_points").get<int64_t>();
    r.summary.wall_ns = s.at("wall_ns").get<int64_t>();
    r.summary.dtlb = dtlb_from(s.at("dtlb"));
    r.summary.tensor_bytes = s.at("tensor_bytes").get<int64_t>();
    const std::vector<std::string> names = measured_names(r.run);
    r.summary.counters = counters_from(s.at("counters"), names);
    const json& g = s.at("gpu");
    r.summary.gpu.traced = g.at("traced").get<bool>();
    r.summary.gpu.gpu_ns = g.at("gpu_ns").get<int64_t>();
    r.summary.gpu.copy_gpu_ns = g.at("copy_gpu_ns").get<int64_t>();
    r.summary.gpu.kernels = g.at("kernels").get<int64_t>();
    r.summary.gpu.unattributed = g.at("unattributed").get<int64_t>();
    r.summary.gpu.unattributed_ns = g.at("unattributed_ns").get<int64_t>();
    r.summary.gpu.dropped = g.at("dropped").get<uint64_t>();
    for (const json& j : doc.at("ops")) r.ops.push_back(op_from(j, names));
    for (const json& j : doc.at("copies")) r.copies.push_back(copy_from(j, names));
    for (const json& j : doc.at("split_points")) r.split_points.push_back(split_from(j));
    for (const json& j : doc.at("modules")) r.modules.push_back(module_from(j, names));
    check_ids(r);
    return r;
  } catch (const json::exception& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  } catch (const std::logic_error& e) {  // invalid_argument, out_of_range
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  }
}

std::string dump_json(const json& doc, int indent) {
  return doc.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

Report load_report_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open report '" + path + "': " + std::strerror(errno));
  // Reports of real models are megabytes; a file far beyond that is not one of ours.
  constexpr std::streamoff kMaxBytes = std::streamoff(1) << 30;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > kMaxBytes)
    throw UsageError("report '" + path + "' is " + std::to_string(size >> 20) +
                     " MiB, more than a layoutprof report can be (1 GiB)");
  if (size < 0) throw UsageError("cannot read report '" + path + "': not a regular file");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw UsageError("report '" + path + "' is not valid JSON: " + first_line(e.what()));
  }
  try {
    return report_from_json(doc);
  } catch (const UsageError& e) {
    throw UsageError("report '" + path + "': " + e.what());
  }
}

}  // namespace layoutprof
