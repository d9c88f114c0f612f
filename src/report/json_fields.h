// What the JSON report's writer and its two readers share: the measured counters' names,
// integer-checked conversions, the readers of the entries that both parsers hand over (tensors,
// counters, copies, split points), and the state a read carries from the parser to the
// conversion of the whole document.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "report/json_report.h"
#include "report_model/report.h"

namespace layoutprof::report_json {

using nlohmann::json;

// The deepest nesting of arrays and objects a report may have, counting the document itself.
// layoutprof writes at most 6 (an op row's kernel list, a tensor's sizes); a document nested
// deeper is refused before anything recursive (nlohmann's dump, copies of a tree) could run
// out of stack on it.
constexpr size_t kMaxReportDepth = 1000;

// Throws UsageError, one line, naming the limit.
[[noreturn]] void refuse_too_deep();

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

inline std::vector<std::string> measured_names(const RunInfo& r) {
  std::vector<std::string> names;
  for (const CounterStatus* c : r.measured_counters()) names.push_back(c->event);
  return names;
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
template <typename J>
int64_t id_from(const J& j) { return j.is_null() ? -1 : as<int64_t>(j); }

// An op event's id or parent as read: OpEvent holds 32 bits.
inline int32_t op_index(int64_t v) {
  if (v < -1 || v > std::numeric_limits<int32_t>::max()) throw std::out_of_range("an op id is out of range");
  return static_cast<int32_t>(v);
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

// What the file reader converted as it parsed, leaving the document.
struct Streamed {
  explicit Streamed(OpDetail d) : sink(report.ops, d) {}
  bool ops = false, copies = false, split_points = false;
  Report report;  // ops, tensors, copies and split points so far
  OpSink sink;    // into report.ops
  const std::vector<TensorInfo>* tensor_table = nullptr;  // the op list's, always streamed
};

RunInfo run_from(const json& j);
// A schema 1 op event.
OpEvent op_from(const json& j, const std::vector<std::string>& names, TensorStore& store);
// One of the op list's tables (kOpTables), whole.
void read_table(OpTablesIn& t, const std::string& key, const json& list);
// One row of the op list (schema 2) from a tree; `ops` holds the rows before it.
OpEvent op_from_row(const json& row, const OpTablesIn& t, const OpSink& ops, TensorStore& store);
// Throws UsageError unless `v` is a schema version this reader reads.
void check_version(const json& v);
// Everything but the op list comes from `doc`; the op list, copies and split points from
// `streamed` where it has them (the file reader converts them entry by entry as it parses),
// else from doc. `doc` is bounded in depth (the caller checked).
Report report_from_doc(const json& doc, Streamed* streamed);

}  // namespace layoutprof::report_json
