#include "layoutprof/json_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "analysis/flat_index.h"
#include "report/json_out.h"
#include "report/line_feeder.h"
#include "report/sj_value.h"
#include "layoutprof/errors.h"

namespace layoutprof {

using nlohmann::json;

namespace {

template <typename T>
struct is_integer_vector : std::false_type {};
template <typename U>
struct is_integer_vector<std::vector<U>> : std::bool_constant<std::is_integral_v<U>> {};

// A JSON integer as T, or an error: nlohmann's get<int> converts a real or an out-of-range
// integer without a check (a real past int's range is undefined behaviour).
template <typename T>
T integer_of(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) throw std::out_of_range("an integer is out of range");
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
      throw std::out_of_range("an integer is out of range");
    return static_cast<T>(i);
  }
  throw std::invalid_argument(std::string("a value is not an integer where one belongs (") + v.type_name() + ")");
}

// A value of either parser as T: nlohmann's get<T> (integers checked), or SjValue's
// (sj_value.h, which checks them too).
template <typename T, typename J>
T as(const J& v) {
  if constexpr (std::is_same_v<J, json> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return integer_of<T>(v);
  } else if constexpr (std::is_same_v<J, json> && is_integer_vector<T>::value) {
    if (!v.is_array()) throw std::invalid_argument(std::string("a value is not an array where one belongs (") + v.type_name() + ")");
    T out;
    out.reserve(v.size());
    for (const json& e : v) out.push_back(integer_of<typename T::value_type>(e));
    return out;
  } else {
    return v.template get<T>();
  }
}

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

template <typename J>  // nlohmann::json or SjValue (the report readers)
TensorInfo tensor_from(const J& j, bool has_storage = true) {
  TensorInfo t;
  t.arg = as<int>(j.at("arg"));
  TensorShape shape;
  shape.sizes = as<std::vector<int64_t>>(j.at("sizes"));
  shape.strides = as<std::vector<int64_t>>(j.at("strides"));
  t.storage_offset = as<int64_t>(j.at("storage_offset"));
  shape.dtype = as<std::string>(j.at("dtype"));
  shape.device = as<std::string>(j.at("device"));
  shape.elem_size = as<int>(j.at("elem_size"));
  shape.layout.cls = layout_class_from_name(as<std::string>(j.at("class")));
  shape.layout.order = as<std::vector<int>>(j.at("order"));
  t.shape = intern_shape(std::move(shape), true);  // as written; validate() checks the class
  t.storage = has_storage ? as<uint64_t>(j.at("storage")) : 0;
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
    v[i] = as<int64_t>(j.at(copy_class_name(static_cast<CopyClass>(i))));
  return v;
}

std::vector<std::string> measured_names(const RunInfo& r) {
  std::vector<std::string> names;
  for (const CounterStatus* c : r.measured_counters()) names.push_back(c->event);
  return names;
}

template <typename CounterList>  // std::vector or CompactVector
json counters_json(const CounterList& values, const std::vector<std::string>& names) {
  json j = json::object();
  for (size_t k = 0; k < values.size() && k < names.size(); ++k)
    j[names[k]] = {{"raw", values[k].raw}, {"scaled", values[k].scaled},
                   {"multiplexed", values[k].multiplexed}};
  return j;
}

template <typename J>
std::vector<CounterValue> counters_from(const J& j, const std::vector<std::string>& names) {
  std::vector<CounterValue> values;
  if (j.empty()) return values;
  for (const std::string& name : names) {
    const auto& v = j.at(name);  // a reference (nlohmann) or a small value (SjValue)
    CounterValue c;
    c.raw = as<uint64_t>(v.at("raw"));
    c.scaled = as<double>(v.at("scaled"));
    if (!std::isfinite(c.scaled) || c.scaled < 0 || c.scaled > 1e300)
      throw std::out_of_range("counter '" + name + "' has an impossible value");
    c.multiplexed = as<bool>(v.at("multiplexed"));
    values.push_back(c);
  }
  return values;
}

template <typename J>
DtlbEstimate dtlb_from(const J& j) {
  DtlbEstimate d;
  d.accesses = as<int64_t>(j.at("accesses"));
  d.l1_misses = as<int64_t>(j.at("l1_misses"));
  d.walks = as<int64_t>(j.at("walks"));
  d.sampled = as<bool>(j.at("sampled"));
  if (j.contains("fraction")) d.fraction = as<double>(j.at("fraction"));
  return d;
}

// Optional values: a negative number (no op, no GPU traced) or an empty string is null.
json id_or_null(int64_t id) { return id < 0 ? json(nullptr) : json(id); }
template <typename J>
int64_t id_from(const J& j) { return j.is_null() ? -1 : as<int64_t>(j); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
std::string text_from(const json& j) { return j.is_null() ? "" : j.get<std::string>(); }

json counter_status_json(const std::vector<CounterStatus>& counters) {
  json list = json::array();
  for (const CounterStatus& c : counters) {
    json item = {{"event", c.event},
                 {"encoding", c.encoding},
                 {"scope", c.scope},
                 {"measured", c.measured},
                 {"reason", c.measured ? json(nullptr) : json(c.reason)},
                 {"note", c.note},
                 {"mode", c.mode}};
    if (c.mode == "interval" && c.measured) item["period"] = c.period;
    if (c.sampled() && c.measured) {
      item["period"] = c.period;
      item["data_address"] = text_or_null(c.data_address);
      item["samples"] = c.samples;
      item["attributed"] = c.attributed;
      item["lost"] = c.lost;
    }
    list.push_back(std::move(item));
  }
  return list;
}

// The run as a plain run's report has it.
json plain_run_json(const RunInfo& r) {
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
              {"max_ops", r.max_ops},
              {"ops_not_recorded", r.ops_not_recorded},
              {"device", r.device},
              {"torch_version", r.torch_version},
              {"layoutprof_version", r.layoutprof_version},
              {"status", r.status},
              {"error", text_or_null(r.error)},
              {"backward", r.backward},
              {"loss", text_or_null(r.loss)},
              {"counters", counter_status_json(r.counters)},
              {"counter_mode", text_or_null(r.counter_mode)},
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
  return j;
}

RunInfo run_from(const json& j) {
  RunInfo r;
  r.model = j.at("model").get<std::string>();
  for (const json& in : j.at("inputs")) {
    ModelInput m;
    m.spec.text = in.at("spec").get<std::string>();
    m.spec.sizes = as<std::vector<int64_t>>(in.at("sizes"));
    m.spec.dtype = in.at("dtype").get<std::string>();
    m.spec.format = in.at("format").get<std::string>();
    m.spec.perm = as<std::vector<int>>(in.at("perm"));
    m.tensor = tensor_from(in.at("tensor"));
    r.inputs.push_back(std::move(m));
  }
  r.threads = as<int>(j.at("threads"));
  r.warmup = as<int>(j.at("warmup"));
  r.iters = as<int>(j.at("iters"));
  r.calls_recorded = as<int>(j.at("calls_recorded"));
  r.calls_identical = j.at("calls_identical").get<bool>();
  // Added with schema 2's writers; earlier reports recorded every op event.
  r.max_ops = j.value("max_ops", int64_t{0});
  r.ops_not_recorded = j.value("ops_not_recorded", int64_t{0});
  if (r.max_ops < 0 || r.ops_not_recorded < 0) throw std::out_of_range("run.max_ops or ops_not_recorded is negative");
  r.device = j.at("device").get<std::string>();
  r.torch_version = j.at("torch_version").get<std::string>();
  r.layoutprof_version = j.at("layoutprof_version").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.error = text_from(j.at("error"));
  // Added with --backward: reports from before read as forward-only runs.
  r.backward = j.value("backward", false);
  r.loss = j.contains("loss") ? text_from(j.at("loss")) : "";
  for (const json& c : j.at("counters")) {
    CounterStatus st;
    st.event = c.at("event").get<std::string>();
    st.encoding = c.at("encoding").get<std::string>();
    st.scope = c.at("scope").get<std::string>();
    st.measured = c.at("measured").get<bool>();
    st.reason = text_from(c.at("reason"));
    st.note = c.at("note").get<std::string>();
    // Added with sampled counters: earlier reports counted.
    st.mode = c.value("mode", std::string("counted"));
    if (st.mode != "counted" && st.mode != "sampled" && st.mode != "interval")
      throw std::out_of_range("a counter's mode is not counted, sampled or interval");
    if (st.mode == "interval" && st.measured) st.period = as<uint64_t>(c.at("period"));
    if (st.sampled() && st.measured) {
      st.period = as<uint64_t>(c.at("period"));
      if (st.period == 0) throw std::out_of_range("a sampled counter's period is 0");
      st.data_address = text_from(c.at("data_address"));
      st.samples = as<int64_t>(c.at("samples"));
      st.attributed = as<int64_t>(c.at("attributed"));
      st.lost = as<int64_t>(c.at("lost"));
      if (st.samples < 0 || st.attributed < 0 || st.lost < 0 || st.attributed > st.samples)
        throw std::out_of_range("a sampled counter's sample counts are impossible");
    }
    r.counters.push_back(st);
  }
  r.counter_mode = j.contains("counter_mode") ? text_from(j.at("counter_mode")) : (r.counters.empty() ? "" : "counted");
  r.counter_read = j.at("counter_read").get<std::string>();
  r.bandwidth = j.at("bandwidth").get<std::string>();
  r.bandwidth_note = j.at("bandwidth_note").get<std::string>();
  r.tlb = j.at("tlb").get<std::string>();
  r.gpu = text_from(j.at("gpu"));
  r.measured = j.at("measured").get<std::vector<std::string>>();
  r.not_measured = j.at("not_measured").get<std::vector<std::string>>();
  // Added with compare-formats: absent from a plain run's report.
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

// An op event's id or parent as read: OpEvent holds 32 bits.
int32_t op_index(int64_t v) {
  if (v < -1 || v > std::numeric_limits<int32_t>::max()) throw std::out_of_range("an op id is out of range");
  return static_cast<int32_t>(v);
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

template <typename J>
CopyRecord copy_from(const J& j, const std::vector<std::string>& names) {
  CopyRecord c;
  c.op = as<int64_t>(j.at("op"));
  c.culprit = as<int64_t>(j.at("culprit"));
  c.origin = id_from(j.at("origin"));
  c.origin_input = static_cast<int>(id_from(j.at("origin_input")));
  c.cls = copy_class_from_name(as<std::string>(j.at("class")));
  c.bytes = as<int64_t>(j.at("bytes"));
  c.src = tensor_from(j.at("src"));
  c.dst = tensor_from(j.at("dst"));
  c.dtlb = dtlb_from(j.at("dtlb"));
  c.counters = counters_from(j.at("counters"), names);
  c.gpu_ns = id_from(j.at("gpu_ns"));
  if (j.contains("address_samples")) {
    const auto& a = j.at("address_samples");
    for (const std::string& name : names) {
      if (!a.contains(name.c_str())) continue;
      if (c.src_samples.empty()) {
        c.src_samples.assign(names.size(), 0);
        c.dst_samples.assign(names.size(), 0);
      }
      const size_t k = static_cast<size_t>(&name - names.data());
      c.src_samples[k] = as<uint64_t>(a.at(name.c_str()).at("source"));
      c.dst_samples[k] = as<uint64_t>(a.at(name.c_str()).at("destination"));
    }
  }
  return c;
}

template <typename J>
SplitPoint split_from(const J& j) {
  SplitPoint sp;
  sp.op = as<int64_t>(j.at("op"));
  sp.kinds = as<std::vector<Str>>(j.at("kinds"));
  sp.before = as<std::string>(j.at("before"));
  sp.after = as<std::string>(j.at("after"));
  sp.copies = as<int64_t>(j.at("copies"));
  sp.copy_bytes = as<int64_t>(j.at("copy_bytes"));
  sp.copy_ops = as<std::vector<int64_t>>(j.at("copy_ops"));
  sp.suggestion = as<std::string>(j.at("suggestion"));
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
  return m;
}

// Where the reader's op events go as they are converted: all into the op list, or
// (OpDetail::top_level) the top-level ones only. Either way every event's id and parent are
// checked here, and its top-level ancestor kept (4 bytes an event) for check_ids().
class OpSink {
 public:
  OpSink(OpList& ops, OpDetail detail) : ops_(ops), top_level_only_(detail == OpDetail::top_level) {}
  OpDetail detail() const { return top_level_only_ ? OpDetail::top_level : OpDetail::full; }
  // Op events converted so far: the next one's id.
  int64_t size() const { return static_cast<int64_t>(top_.size()); }
  // A converted event's depth (a nested event's depth is not kept for the gate).
  int32_t depth(int32_t id) const { return top_level_only_ ? 0 : ops_[static_cast<size_t>(id)].depth; }
  void reserve(size_t events, size_t top_level) {
    top_.reserve(events);
    ops_.reserve(top_level_only_ ? top_level : events);
  }
  void add(OpEvent&& op) {
    const int64_t id = size();
    if (op.id != id || op.parent >= id || op.parent < -1)
      throw std::out_of_range("ops[" + std::to_string(id) + "] has a bad id or parent");
    if (op.module.size() > 4096) throw std::out_of_range("a module path is too long");
    top_.push_back(op.parent < 0 ? op.id : top_[static_cast<size_t>(op.parent)]);
    if (!top_level_only_) {
      ops_.push_back(std::move(op));
    } else if (op.parent < 0) {
      op.inputs = {};
      op.outputs = {};
      ops_.push_back(std::move(op));
    }
  }
  // Each op event's top-level ancestor (itself when top-level), by id.
  const std::vector<int32_t>& top() const { return top_; }

 private:
  OpList& ops_;
  bool top_level_only_;
  std::vector<int32_t> top_;
};

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

}  // namespace

namespace {

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
          {"ddp_warning", ddp.empty() ? json(nullptr) : json(ddp)},
          {"suggestion", text_or_null(grad_suggestion(p))}};
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
  p.verdict = j.at("grad_verdict").is_null() ? GradVerdict::frozen
                                             : grad_verdict_from_name(j.at("grad_verdict").get<std::string>());
  p.producer = id_from(j.at("grad_producer"));
  return p;
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
  if (r.run.counter_mode == "sampled") figures["counters"] = "sampled";
  out << "{\"schema_version\": " << kSchemaVersion << ",\n\"figures\": " << dump_compact(figures)
      << ",\n\"run\": " << dump_compact(run_json(r.run))
      << ",\n\"summary\": " << dump_compact(summary_json(r.summary, names)) << ",\n\"ops\": {\"encoding\": "
      << dump_compact(kOpsEncoding) << ",\n\"names\": ";
  auto strings = [&out](const std::vector<Str>& list) {
    write_array(out, list, [&out](Str s) { out << dump_compact(s.str()); });
  };
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
  ids = {};
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
  out << "]},\n\"copies\": ";
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
  out << "]\n}\n";
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

namespace {

// The op list's tables (schema 2): what its rows refer to.
constexpr std::array<const char*, 5> kOpTables = {"names", "modules", "sources", "tensors", "kernels"};

// The op list's tables, as read.
struct OpTablesIn {
  std::vector<Str> names, modules, kernels;
  std::vector<std::pair<Str, Str>> sources;
  std::vector<TensorInfo> tensors;
  std::vector<std::string> counter_names;
  bool read = false;
  // OpDetail::top_level: op rows' tensors are checked against the table, not kept.
  bool keep_op_tensors = true;
};

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
  if (!v.is_number_integer() || (as<int64_t>(v) != kSchemaVersion && as<int64_t>(v) != 1))
    throw UsageError("report schema_version " + v.dump() + " is not supported (this layoutprof reads " +
                     std::to_string(kSchemaVersion) + ", and 1)");
}

// What the file reader converted as it parsed, leaving the document.
struct Streamed {
  explicit Streamed(OpDetail d) : sink(report.ops, d) {}
  bool ops = false, copies = false, split_points = false;
  Report report;  // ops, tensors, copies and split points so far
  OpSink sink;    // into report.ops
  const std::vector<TensorInfo>* tensor_table = nullptr;  // the op list's, always streamed
};

// Everything but the op list comes from `doc`; the op list, copies and split points from
// `streamed` where it has them (the file reader converts them entry by entry as it parses),
// else from doc.
Report report_from_doc(const json& doc, Streamed* streamed) {
  const OpDetail detail = streamed ? streamed->sink.detail() : OpDetail::full;
  if (!doc.is_object()) throw UsageError("not a layoutprof report: the document is not an object");
  if (!doc.contains("schema_version"))
    throw UsageError("not a layoutprof report: no schema_version");
  check_version(doc["schema_version"]);
  const bool v1 = as<int64_t>(doc["schema_version"]) == 1;
  try {
    Report r;
    r.run = run_from(doc.at("run"));
    const json& s = doc.at("summary");
    r.summary.ops = as<int64_t>(s.at("ops"));
    r.summary.top_level_ops = as<int64_t>(s.at("top_level_ops"));
    r.summary.copies = per_class_from(s.at("copies"));
    r.summary.copy_bytes = per_class_from(s.at("copy_bytes"));
    r.summary.split_points = as<int64_t>(s.at("split_points"));
    r.summary.wall_ns = as<int64_t>(s.at("wall_ns"));
    r.summary.dtlb = dtlb_from(s.at("dtlb"));
    r.summary.tensor_bytes = as<int64_t>(s.at("tensor_bytes"));
    const std::vector<std::string> names = measured_names(r.run);
    r.summary.counters = counters_from(s.at("counters"), names);
    const json& g = s.at("gpu");
    r.summary.gpu.traced = g.at("traced").get<bool>();
    r.summary.gpu.gpu_ns = as<int64_t>(g.at("gpu_ns"));
    r.summary.gpu.copy_gpu_ns = as<int64_t>(g.at("copy_gpu_ns"));
    r.summary.gpu.kernels = as<int64_t>(g.at("kernels"));
    r.summary.gpu.unattributed = as<int64_t>(g.at("unattributed"));
    r.summary.gpu.unattributed_ns = as<int64_t>(g.at("unattributed_ns"));
    r.summary.gpu.dropped = as<uint64_t>(g.at("dropped"));
    if (s.contains("grad_layout"))
      for (int v = 0; v < 4; ++v)
        r.summary.grad_layout[v] = as<int64_t>(s.at("grad_layout").at(grad_verdict_name(static_cast<GradVerdict>(v))));
    OpSink doc_sink(r.ops, detail);
    const OpSink* sink = &doc_sink;
    if (streamed && streamed->ops) {
      r.ops = std::move(streamed->report.ops);
      r.tensors = streamed->report.tensors;
      sink = &streamed->sink;
    } else if (v1) {
      for (const json& j : doc.at("ops")) doc_sink.add(op_from(j, names, *r.tensors));
    } else {
      const json& ops = doc.at("ops");
      OpTablesIn t;
      t.keep_op_tensors = detail == OpDetail::full;
      for (const char* key : kOpTables) read_table(t, key, ops.at(key));
      if (streamed && streamed->tensor_table) t.tensors = *streamed->tensor_table;
      t.counter_names = names;
      for (const json& row : ops.at("rows")) doc_sink.add(op_from_row(row, t, doc_sink, *r.tensors));
    }
    if (streamed && streamed->copies) r.copies = std::move(streamed->report.copies);
    else
      for (const json& j : doc.at("copies")) r.copies.push_back(copy_from(j, names));
    if (streamed && streamed->split_points) r.split_points = std::move(streamed->report.split_points);
    else
      for (const json& j : doc.at("split_points")) r.split_points.push_back(split_from(j));
    for (const json& j : doc.at("modules")) r.modules.push_back(module_from(j, names));
    // Added with --backward: reports from before have neither.
    if (!v1 && doc.at("ops").contains("backward_from")) {
      const json& ops = doc.at("ops");
      r.backward_from = id_from(ops.at("backward_from"));
      const json& pairs = ops.at("forward_ops");
      if (!pairs.is_array() || pairs.size() % 2) throw std::out_of_range("ops.forward_ops is malformed");
      for (size_t i = 0; i < pairs.size(); i += 2) {
        const int64_t op = as<int64_t>(pairs[i]), fwd = as<int64_t>(pairs[i + 1]);
        if (op < 0 || op >= sink->size() || fwd < 0 || fwd >= op)
          throw std::out_of_range("ops.forward_ops names an op out of range");
        if (detail == OpDetail::full) r.ops[op].forward_op = static_cast<int32_t>(fwd);
      }
    }
    if (r.backward_from < -1 || r.backward_from > sink->size())
      throw std::out_of_range("ops.backward_from is out of range");
    if (doc.contains("parameters"))
      for (const json& j : doc.at("parameters")) {
        r.parameters.push_back(parameter_from(j));
        if (r.parameters.back().producer >= sink->size())
          throw std::out_of_range("a parameter's grad_producer is out of range");
      }
    if (doc.contains("tensor_samples"))
      for (const json& t : doc.at("tensor_samples")) {
        if (!t.is_array() || t.size() != 4) throw std::out_of_range("a tensor_samples entry is not [op, slot, counter, samples]");
        TensorSamples ts;
        ts.op = as<int32_t>(t[0]);
        ts.slot = as<int32_t>(t[1]);
        ts.counter = as<uint32_t>(t[2]);
        ts.samples = as<uint64_t>(t[3]);
        if (ts.op < 0 || ts.op >= sink->size() || ts.slot < 0 || ts.counter >= names.size())
          throw std::out_of_range("a tensor_samples entry names an op, tensor or counter out of range");
        if (detail == OpDetail::full) {
          const OpEvent& op = r.ops[ts.op];
          if (static_cast<size_t>(ts.slot) >= op.inputs.size() + op.outputs.size())
            throw std::out_of_range("a tensor_samples entry names a tensor its op does not have");
          r.tensor_samples.push_back(ts);
        }
      }
    check_ids(r, sink->top());
    if (detail == OpDetail::top_level) {
      r.top_level_only = true;
      r.tensors = std::make_shared<TensorStore>();  // schema 1 kept them as it read
    }
    return r;
  } catch (const json::exception& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  } catch (const std::logic_error& e) {  // invalid_argument, out_of_range
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  }
}

// An index into one of the op list's tables, as both row readers take it.
size_t row_index(int64_t v) {
  if (v < 0) throw std::out_of_range("an op row has a negative index");
  return static_cast<size_t>(v);
}

// One op row (schema 2) as the SAX parser saw it: scalars and brackets, with no JSON tree.
struct RowToken {
  enum Kind : uint8_t { integer, real, open, close } kind;
  int64_t i = 0;
  double d = 0;
};

// Reads op rows from their tokens, checking what op_from_row() checks.
class RowReader {
 public:
  explicit RowReader(const std::vector<RowToken>& t) : t_(t) {}
  bool at_close() const { return at_ < t_.size() && t_[at_].kind == RowToken::close; }
  bool done() const { return at_ >= t_.size(); }
  int64_t integer() {
    if (at_ >= t_.size() || t_[at_].kind != RowToken::integer)
      throw std::out_of_range("an op row holds something other than an integer where one belongs");
    return t_[at_++].i;
  }
  double number() {
    if (at_ < t_.size() && t_[at_].kind == RowToken::real) return t_[at_++].d;
    return static_cast<double>(integer());
  }
  size_t index() { return row_index(integer()); }
  void open() {
    if (at_ >= t_.size() || t_[at_].kind != RowToken::open) throw std::out_of_range("an op row is malformed");
    ++at_;
  }
  void close() {
    if (!at_close()) throw std::out_of_range("an op row is malformed");
    ++at_;
  }

 private:
  const std::vector<RowToken>& t_;
  size_t at_ = 0;
};

// The same reading off simdjson's tape (a row the file reader parsed alone), without tokens.
class DomRowReader {
 public:
  explicit DomRowReader(simdjson::dom::element row) {
    simdjson::dom::array items;
    if (row.get(items)) throw std::out_of_range("an op row is not a list");
    stack_.push_back({items.begin(), items.end()});
  }
  bool at_close() const { return stack_.size() > 1 && stack_.back().at == stack_.back().end; }
  bool done() const { return stack_.size() == 1 && stack_.back().at == stack_.back().end; }
  int64_t integer() {
    Level& l = stack_.back();
    if (l.at == l.end) throw std::out_of_range("an op row holds something other than an integer where one belongs");
    const simdjson::dom::element v = *l.at;
    int64_t i = -1;  // null: an absent parent, as the SAX layer writes it
    if (!v.is_null() && v.get(i))
      throw std::out_of_range(v.is_uint64() ? "an op row holds an integer past int64"
                                            : "an op row holds something other than an integer where one belongs");
    ++l.at;
    return i;
  }
  double number() {
    Level& l = stack_.back();
    if (l.at != l.end && (*l.at).is_double()) {
      const double d = double(*l.at);
      ++l.at;
      return d;
    }
    return static_cast<double>(integer());
  }
  size_t index() { return row_index(integer()); }
  void open() {
    Level& l = stack_.back();
    simdjson::dom::array inner;
    if (l.at == l.end || (*l.at).get(inner)) throw std::out_of_range("an op row is malformed");
    ++l.at;
    stack_.push_back({inner.begin(), inner.end()});
  }
  void close() {
    if (!at_close()) throw std::out_of_range("an op row is malformed");
    stack_.pop_back();
  }

 private:
  struct Level {
    simdjson::dom::array::iterator at, end;
  };
  std::vector<Level> stack_;
};

// The same conversion as op_from_row(), from tokens (RowReader) or off simdjson's tape
// (DomRowReader). `null` parents are -1; a row is [ ... ] without its own outer brackets.
template <typename Reader>
OpEvent op_from_reader(Reader r, const OpTablesIn& t, const OpSink& ops, TensorStore& store) {
  OpEvent op;
  op.id = op_index(ops.size());
  const int64_t parent = r.integer();
  if (parent >= op.id || parent < -1)
    throw std::out_of_range("ops[" + std::to_string(op.id) + "] has a bad id or parent");
  op.parent = static_cast<int32_t>(parent);
  op.depth = op.parent >= 0 ? ops.depth(op.parent) + 1 : 0;
  op.name = t.names.at(r.index());
  op.module = t.modules.at(r.index());
  const auto& source = t.sources.at(r.index());
  op.source = source.first;
  op.source_text = source.second;
  op.start_ns = r.integer();
  op.duration_ns = r.integer();
  const int64_t thread = r.integer();
  if (thread < 0 || thread > std::numeric_limits<uint32_t>::max()) throw std::out_of_range("an op's thread is out of range");
  op.thread = static_cast<uint32_t>(thread);
  op.failed = r.integer() != 0;
  thread_local std::vector<TensorInfo> list;
  for (TensorList* out : {&op.inputs, &op.outputs}) {
    list.clear();
    r.open();
    while (!r.at_close()) {
      const TensorInfo& entry = t.tensors.at(r.index());
      const auto storage = static_cast<uint64_t>(r.integer());
      if (!t.keep_op_tensors) continue;
      list.push_back(entry);
      list.back().storage = storage;
    }
    r.close();
    if (!list.empty()) *out = store.add(list);
  }
  if (!r.done()) {
    r.open();
    while (!r.at_close()) {
      if (op.counters.size() >= t.counter_names.size())
        throw std::out_of_range("an op's counters do not match run.counters");
      CounterValue v;
      v.raw = static_cast<uint64_t>(r.integer());
      v.scaled = r.number();
      if (!std::isfinite(v.scaled) || v.scaled < 0 || v.scaled > 1e300)
        throw std::out_of_range("counter '" + t.counter_names[op.counters.size()] + "' has an impossible value");
      v.multiplexed = r.integer() != 0;
      op.counters.push_back(v);
    }
    r.close();
    if (!op.counters.empty() && op.counters.size() != t.counter_names.size())
      throw std::out_of_range("an op's counters do not match run.counters");
  }
  if (!r.done()) {
    r.open();
    op.gpu_ns = r.integer();
    op.gpu_launches = r.integer();
    op.copy_gpu_ns = r.integer();
    r.open();
    while (!r.at_close()) op.kernels.push_back(t.kernels.at(r.index()));
    r.close();
    r.close();
  }
  if (!r.done()) throw std::out_of_range("an op row has the wrong length");
  return op;
}

OpEvent op_from_tokens(const std::vector<RowToken>& tokens, const OpTablesIn& t, const OpSink& ops,
                       TensorStore& store) {
  return op_from_reader(RowReader(tokens), t, ops, store);
}

// nlohmann's SAX interface over the DOM parser with the reader's callback (which converts the
// tables, copies and split points as they close): the op rows go past the DOM, as tokens into
// a reused buffer, once what they refer to has been read. A row then costs no allocation of
// its own. json_sax_dom_callback_parser is what json::parse(in, callback) runs itself.
class ReportSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_callback_parser<json>;
  using Row = std::function<void(const std::vector<RowToken>&)>;
  // The arrays of entries that the file reader may take past the parser (line_feeder.h).
  enum class Entries { rows, tensors, copies, split_points };
  using Arm = std::function<void(Entries)>;
  ReportSax(json& doc, const json::parser_callback_t& callback, std::function<bool()> rows_ready, Row row,
            Arm arm)
      : dom_(doc, callback, true), rows_ready_(std::move(rows_ready)), row_(std::move(row)), arm_(std::move(arm)) {}

  bool null() { return in_row() ? token({RowToken::integer, -1}) : dom_.null(); }
  bool boolean(bool v) { return in_row() ? malformed() : dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return in_row() ? token({RowToken::integer, v}) : dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) {
    if (!in_row()) return dom_.number_unsigned(v);
    // Row values are indexes, ids and nanoseconds: past int64 is malformed.
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return malformed();
    return token({RowToken::integer, static_cast<int64_t>(v)});
  }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (!in_row()) return dom_.number_float(v, s);
    RowToken t{RowToken::real};
    t.d = v;
    return token(t);
  }
  bool string(json::string_t& v) { return in_row() ? malformed() : dom_.string(v); }
  bool binary(json::binary_t& v) { return in_row() ? malformed() : dom_.binary(v); }
  bool start_object(std::size_t n) {
    if (in_row()) return malformed();
    ++depth_;
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 2) ops_key_ = k;
    return dom_.key(k);
  }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (rows_ >= 0) {  // inside the rows array: a row, or a list within one
      if (rows_ > 0) tokens_.push_back({RowToken::open});
      ++rows_;
      return true;
    }
    if (depth_ == 2 && top_key_ == "ops" && ops_key_ == "rows" && rows_ready_()) {
      rows_ = 0;
      arm_(Entries::rows);
    }
    if (depth_ == 2 && top_key_ == "ops" && ops_key_ == "tensors") arm_(Entries::tensors);
    if (depth_ == 1 && top_key_ == "copies") arm_(Entries::copies);
    if (depth_ == 1 && top_key_ == "split_points") arm_(Entries::split_points);
    ++depth_;
    return dom_.start_array(n);
  }
  bool end_array() {
    if (rows_ > 0) {
      if (--rows_ > 0) {
        tokens_.push_back({RowToken::close});
      } else {
        row_(tokens_);
        tokens_.clear();
      }
      return true;
    }
    rows_ = -1;  // the rows array (or any other) closes
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
    // The DOM parser would throw `ex` as the base class; keep its type for the caller.
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&ex)) throw *pe;
    return dom_.parse_error(position, last_token, ex);
  }

 private:
  bool in_row() const { return rows_ > 0; }
  bool token(const RowToken& t) {
    tokens_.push_back(t);
    return true;
  }
  [[noreturn]] bool malformed() { throw std::out_of_range("an op row holds a string, object or boolean"); }

  Dom dom_;
  std::function<bool()> rows_ready_;
  Row row_;
  Arm arm_;
  int depth_ = 0;
  int rows_ = -1;  // -1: not in the rows array; 0: in it, between rows; 1: in a row; 2+: nested
  std::string top_key_, ops_key_;
  std::vector<RowToken> tokens_;
};

// Parses a report with the op list converted as it streams by: each row (or, in schema 1,
// each op object) becomes an OpEvent and leaves the document, so memory holds the Report
// and never the op list's JSON tree.

Report parse_report_streaming(int fd, std::streamoff size, OpDetail detail) {
  Streamed streamed(detail);
  OpSink& ops = streamed.sink;
  TensorStore& store = *streamed.report.tensors;
  OpTablesIn tables;
  tables.keep_op_tensors = detail == OpDetail::full;
  streamed.tensor_table = &tables.tensors;
  std::string top_key, ops_key;
  bool ops_is_list = false;  // schema 1: "ops" is a list of objects
  bool run_read = false;
  std::set<std::string> tables_read;
  // Rows convert as they come once what they refer to has been read: the run's counters and
  // (schema 2) the tables. A document whose keys were reordered (sorted by a JSON tool) keeps
  // its rows in the tree instead, converted at the end.
  // The top-level key being read, compared as a number at every event.
  enum class Top { other, schema_version, run, summary, ops, copies, split_points } top = Top::other;
  auto convert = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (event == E::key) {
      if (depth == 1) {
        top_key = parsed.get<std::string>();
        top = top_key == "schema_version" ? Top::schema_version
              : top_key == "run"          ? Top::run
              : top_key == "summary"      ? Top::summary
              : top_key == "ops"          ? Top::ops
              : top_key == "copies"       ? Top::copies
              : top_key == "split_points" ? Top::split_points
                                          : Top::other;
      }
      if (depth == 2) ops_key = parsed.get<std::string>();
      return true;
    }
    if (depth == 1 && top == Top::schema_version && event == E::value) check_version(parsed);
    if (depth == 1 && top == Top::ops && event == E::array_start) ops_is_list = true;
    if (depth == 1 && top == Top::summary && event == E::object_end && parsed.contains("ops") &&
        parsed["ops"].is_number_unsigned() && parsed.contains("top_level_ops") &&
        parsed["top_level_ops"].is_number_unsigned()) {
      // The op list is sized once (growing it by doubling would hold up to twice its size):
      // to the summary's counts, bounded by what the file can hold (a row is over 20 bytes).
      const auto most = static_cast<uint64_t>(size / 20);
      ops.reserve(std::min<uint64_t>(as<uint64_t>(parsed["ops"]), most),
                  std::min<uint64_t>(as<uint64_t>(parsed["top_level_ops"]), most));
    }
    if (depth == 1 && top == Top::run && event == E::object_end) {
      tables.counter_names = measured_names(run_from(parsed));
      run_read = true;
    }
    // Copies and split points, one entry at a time: the document keeps only placeholders.
    if (depth == 2 && event == E::object_end && run_read && top == Top::copies) {
      streamed.report.copies.push_back(copy_from(parsed, tables.counter_names));
      streamed.copies = true;
      return false;
    }
    if (depth == 2 && event == E::object_end && top == Top::split_points) {
      streamed.report.split_points.push_back(split_from(parsed));
      streamed.split_points = true;
      return false;
    }
    if (top != Top::ops) return true;
    if (ops_is_list && depth == 2 && event == E::object_end && run_read) {
      ops.add(op_from(parsed, tables.counter_names, store));
      streamed.ops = true;
      return false;
    }
    // The tensor table, one entry at a time too (nlohmann's callback parser scans the parent
    // array at every object it closes: a table kept whole would cost its size squared).
    if (!ops_is_list && depth == 3 && event == E::object_end && ops_key == "tensors") {
      tables.tensors.push_back(tensor_from(parsed, false));
      return false;
    }
    if (!ops_is_list && depth == 2 && event == E::array_end && ops_key != "rows") {
      read_table(tables, ops_key, parsed);
      if (std::find(kOpTables.begin(), kOpTables.end(), ops_key) != kOpTables.end()) tables_read.insert(ops_key);
    }
    if (!ops_is_list && depth == 3 && event == E::array_end && ops_key == "rows" && run_read &&
        tables_read.size() == kOpTables.size()) {
      ops.add(op_from_row(parsed, tables, ops, store));
      streamed.ops = true;
      return false;
    }
    return true;
  };
  json doc;
  LineFeeder feeder(fd);
  auto arm = [&](ReportSax::Entries entries) {
    using E = ReportSax::Entries;
    if (entries == E::rows)
      feeder.arm([&](simdjson::dom::element row) {
        ops.add(op_from_reader(DomRowReader(row), tables, ops, store));
        streamed.ops = true;
      });
    if (entries == E::tensors && !ops_is_list)
      feeder.arm([&](simdjson::dom::element t) { tables.tensors.push_back(tensor_from(SjValue(t), false)); });
    if (entries == E::copies && run_read)
      feeder.arm([&](simdjson::dom::element c) {
        streamed.report.copies.push_back(copy_from(SjValue(c), tables.counter_names));
        streamed.copies = true;
      });
    if (entries == E::split_points)
      feeder.arm([&](simdjson::dom::element sp) {
        streamed.report.split_points.push_back(split_from(SjValue(sp)));
        streamed.split_points = true;
      });
  };
  ReportSax sax(
      doc, convert, [&] { return run_read && tables_read.size() == kOpTables.size(); },
      [&](const std::vector<RowToken>& row) {
        ops.add(op_from_tokens(row, tables, ops, store));
        streamed.ops = true;
      },
      arm);
  try {
    json::sax_parse(feeder.begin(), feeder.end(), &sax);
  } catch (const json::parse_error& e) {
    throw UsageError("is not valid JSON: " + first_line(e.what()));
  } catch (const JsonSyntaxError& e) {
    throw UsageError(std::string("is not valid JSON: ") + e.what());
  } catch (const std::system_error& e) {
    throw UsageError(std::string("cannot be read: ") + e.what());
  } catch (const UsageError&) {
    throw;
  } catch (const json::exception& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  } catch (const std::logic_error& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  }
  return report_from_doc(doc, &streamed);
}

}  // namespace

Report report_from_json(const json& doc) { return report_from_doc(doc, nullptr); }

std::string dump_json(const json& doc, int indent) {
  return doc.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

Report load_report_file(const std::string& path, OpDetail detail) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError("cannot open report '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  return read_report_fd(fd, path, detail);
}

Report read_report_fd(int fd, const std::string& path, OpDetail detail) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError("cannot read report '" + path + "': not a regular file");
  try {
    return parse_report_streaming(fd, static_cast<std::streamoff>(st.st_size), detail);
  } catch (const UsageError& e) {
    const std::string why = e.what();
    throw UsageError("report '" + path + "'" + (why.rfind("is not", 0) == 0 ? " " : ": ") + why);
  }
}

}  // namespace layoutprof
