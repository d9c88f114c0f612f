#include "pt2/graph_reader.h"

#include <array>
#include <cstring>

#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

// schema.py's Argument fields, in ArgKind's order.
constexpr std::array<const char*, kArgKinds> kFields = {
    "as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats", "as_string",
    "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type", "as_memory_format", "as_layout",
    "as_device", "as_bool", "as_bools", "as_sym_bool", "as_sym_bools", "as_graph", "as_optional_tensors",
    "as_custom_obj", "as_operator", "as_sym_float", "as_sym_floats", "as_optional_tensor", "as_complex",
    "as_nested_tensors", "as_int_lists", "as_string_to_argument", "as_float_lists"};

std::string tensor_name(const Json& j, const std::string& at) { return string_at(member(j, "name", at), dot(at, "name")); }

// An element of Tensor?[]: a tensor's name, or "" for None.
std::string optional_tensor(const Json& j, const std::string& at) {
  const UnionField f = union_at(j, at);
  if (f.key == "as_none") return "";
  if (f.key == "as_tensor") return tensor_name(f.value, dot(at, "as_tensor"));
  bad(at, "unknown optional tensor field '" + bounded(std::string(f.key)) + "'");
}

// SymIntArgument, SymBoolArgument, SymFloatArgument: a value's name, or a constant.
void sym_element(Argument& a, const Json& j, const std::string& at, const char* constant) {
  const UnionField f = union_at(j, at);
  const std::string where = dot(at, f.key);
  const bool named = f.key == "as_name";
  if (!named && f.key != constant) bad(at, "unknown field '" + bounded(std::string(f.key)) + "' (as_name or " + constant + ")");
  a.names.push_back(named ? string_at(f.value, where) : "");
  if (a.kind == ArgKind::SymFloat || a.kind == ArgKind::SymFloats)
    a.floats.push_back(named ? 0.0 : float_at(f.value, where));
  else if (a.kind == ArgKind::SymBool || a.kind == ArgKind::SymBools)
    a.ints.push_back(named ? 0 : bool_at(f.value, where));
  else
    a.ints.push_back(named ? 0 : int_at(f.value, where));
}

template <class Each>
void each(const Json& j, const std::string& at, Each&& f) {
  size_t i = 0;
  for (const Json x : array_at(j, at)) f(x, index(at, i++));
}

void read_device(Argument& a, const Json& j, const std::string& at) {
  a.strings.push_back(string_at(member(j, "type", at), dot(at, "type")));
  const std::optional<Json> i = optional_member(j, "index", at);
  a.ints.push_back(i ? int_at(*i, dot(at, "index")) : -1);
}

// Kinds the executor refuses: checked as far as their shape, kept as element counts.
void read_counted(Argument& a, const Json& v, const std::string& at) {
  if (a.kind == ArgKind::StringToArgument) {
    const JsonObject fields = object_at(v, at);
    for (const auto field : fields) (void)read_argument(field.value, dot(at, field.key));
    a.ints.push_back(static_cast<int64_t>(fields.size()));
    return;
  }
  each(v, at, [&](const Json& inner, const std::string& where) {
    each(inner, where, [&](const Json& x, const std::string& w) {
      if (a.kind == ArgKind::NestedTensors) (void)tensor_name(x, w);
      else if (a.kind == ArgKind::IntLists) (void)int_at(x, w);
      else (void)float_at(x, w);
    });
    a.ints.push_back(static_cast<int64_t>(array_at(inner, where).size()));
  });
}

void read_value(Argument& a, const Json& v, const std::string& at) {
  auto push_int = [&](const Json& x, const std::string& w) { a.ints.push_back(int_at(x, w)); };
  auto push_bool = [&](const Json& x, const std::string& w) { a.ints.push_back(bool_at(x, w)); };
  auto push_float = [&](const Json& x, const std::string& w) { a.floats.push_back(float_at(x, w)); };
  auto push_string = [&](const Json& x, const std::string& w) { a.strings.push_back(string_at(x, w)); };
  auto push_tensor = [&](const Json& x, const std::string& w) { a.names.push_back(tensor_name(x, w)); };
  auto push_optional = [&](const Json& x, const std::string& w) { a.names.push_back(optional_tensor(x, w)); };
  switch (a.kind) {
    case ArgKind::None: (void)v; return;  // as_none's value (true) says nothing more
    case ArgKind::Tensor: return push_tensor(v, at);
    case ArgKind::Tensors: return each(v, at, push_tensor);
    case ArgKind::Int: case ArgKind::ScalarType: case ArgKind::MemoryFormat: case ArgKind::Layout:
      return push_int(v, at);
    case ArgKind::Ints: return each(v, at, push_int);
    case ArgKind::Bool: return push_bool(v, at);
    case ArgKind::Bools: return each(v, at, push_bool);
    case ArgKind::Float: return push_float(v, at);
    case ArgKind::Floats: return each(v, at, push_float);
    case ArgKind::String: case ArgKind::Operator: return push_string(v, at);
    case ArgKind::Strings: return each(v, at, push_string);
    case ArgKind::SymInt: return sym_element(a, v, at, "as_int");
    case ArgKind::SymInts: return each(v, at, [&](const Json& x, const std::string& w) { sym_element(a, x, w, "as_int"); });
    case ArgKind::SymBool: return sym_element(a, v, at, "as_bool");
    case ArgKind::SymBools: return each(v, at, [&](const Json& x, const std::string& w) { sym_element(a, x, w, "as_bool"); });
    case ArgKind::SymFloat: return sym_element(a, v, at, "as_float");
    case ArgKind::SymFloats: return each(v, at, [&](const Json& x, const std::string& w) { sym_element(a, x, w, "as_float"); });
    case ArgKind::Device: return read_device(a, v, at);
    case ArgKind::OptionalTensor: return push_optional(v, at);
    case ArgKind::OptionalTensors: return each(v, at, push_optional);
    case ArgKind::CustomObj:
      a.names.push_back(string_at(member(v, "name", at), dot(at, "name")));
      return a.strings.push_back(string_at(member(v, "class_fqn", at), dot(at, "class_fqn")));
    case ArgKind::Graph:
      a.names.push_back(string_at(member(v, "name", at), dot(at, "name")));
      a.graph = std::make_shared<const Graph>(read_graph(member(v, "graph", at), dot(at, "graph")));
      return;
    case ArgKind::Complex:
      push_float(member(v, "real", at), dot(at, "real"));
      return push_float(member(v, "imag", at), dot(at, "imag"));
    case ArgKind::NestedTensors: case ArgKind::IntLists: case ArgKind::StringToArgument: case ArgKind::FloatLists:
      return read_counted(a, v, at);
  }
}

// A schema enum's code (dtype, layout): small and not negative; which codes mean something is
// the executor's question.
int enum_code(const Json& j, const std::string& at) {
  const int64_t code = int_at(j, at);
  if (code < 0 || code > 1000) bad(at, "no such code " + std::to_string(code));
  return static_cast<int>(code);
}

Node read_node(const Json& j, const std::string& at) {
  Node n;
  n.target = string_at(member(j, "target", at), dot(at, "target"));
  each(member(j, "inputs", at), dot(at, "inputs"), [&](const Json& x, const std::string& w) {
    n.inputs.push_back({string_at(member(x, "name", w), dot(w, "name")), read_argument(member(x, "arg", w), dot(w, "arg"))});
  });
  each(member(j, "outputs", at), dot(at, "outputs"),
       [&](const Json& x, const std::string& w) { n.outputs.push_back(read_argument(x, w)); });
  if (const std::optional<Json> meta = optional_member(j, "metadata", at)) {
    const std::string where = dot(at, "metadata");
    if (const std::optional<Json> s = optional_member(*meta, "stack_trace", where)) n.stack_trace = string_at(*s, dot(where, "stack_trace"));
    if (const std::optional<Json> s = optional_member(*meta, "nn_module_stack", where))
      n.nn_module_stack = string_at(*s, dot(where, "nn_module_stack"));
  }
  return n;
}

}  // namespace

const char* arg_kind_field(ArgKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < kFields.size() ? kFields[i] : "?";
}

Argument read_argument(const Json& j, const std::string& at) {
  const UnionField f = union_at(j, at);
  size_t k = 0;
  while (k < kFields.size() && f.key != kFields[k]) ++k;
  if (k == kFields.size()) bad(at, "unknown argument field '" + bounded(std::string(f.key)) + "'");
  return read_argument_of(static_cast<ArgKind>(k), f.value, dot(at, f.key));
}

Argument read_argument_of(ArgKind kind, const Json& value, const std::string& at) {
  Argument a;
  a.kind = kind;
  read_value(a, value, at);
  return a;
}

SymIntValue read_sym_int(const Json& j, const std::string& at) {
  const UnionField f = union_at(j, at);
  SymIntValue v;
  if (f.key == "as_int") v.value = int_at(f.value, dot(at, "as_int"));
  else if (f.key == "as_expr") v.expr = string_at(member(f.value, "expr_str", dot(at, "as_expr")), dot(at, "as_expr.expr_str"));
  else bad(at, "unknown SymInt field '" + bounded(std::string(f.key)) + "' (as_int or as_expr)");
  return v;
}

TensorMeta read_tensor_meta(const Json& j, const std::string& at) {
  TensorMeta m;
  m.dtype = enum_code(member(j, "dtype", at), dot(at, "dtype"));
  m.layout = enum_code(member(j, "layout", at), dot(at, "layout"));
  each(member(j, "sizes", at), dot(at, "sizes"), [&](const Json& x, const std::string& w) { m.sizes.push_back(read_sym_int(x, w)); });
  each(member(j, "strides", at), dot(at, "strides"), [&](const Json& x, const std::string& w) { m.strides.push_back(read_sym_int(x, w)); });
  if (m.sizes.size() != m.strides.size()) bad(at, std::to_string(m.sizes.size()) + " sizes but " + std::to_string(m.strides.size()) + " strides");
  m.storage_offset = read_sym_int(member(j, "storage_offset", at), dot(at, "storage_offset"));
  m.requires_grad = bool_at(member(j, "requires_grad", at), dot(at, "requires_grad"));
  Argument device;
  read_device(device, member(j, "device", at), dot(at, "device"));
  m.device = device.strings[0] + (device.ints[0] >= 0 ? ":" + std::to_string(device.ints[0]) : "");
  return m;
}

Graph read_graph(const Json& j, const std::string& at) {
  Graph g;
  each(member(j, "inputs", at), dot(at, "inputs"), [&](const Json& x, const std::string& w) { g.inputs.push_back(read_argument(x, w)); });
  each(member(j, "outputs", at), dot(at, "outputs"), [&](const Json& x, const std::string& w) { g.outputs.push_back(read_argument(x, w)); });
  each(member(j, "nodes", at), dot(at, "nodes"), [&](const Json& x, const std::string& w) { g.nodes.push_back(read_node(x, w)); });
  const std::string tv = dot(at, "tensor_values");
  for (const auto field : object_at(member(j, "tensor_values", at), tv))
    g.tensor_values[std::string(field.key)] = read_tensor_meta(field.value, dot(tv, field.key));
  const std::string sv = dot(at, "sym_int_values");
  if (const std::optional<Json> syms = optional_member(j, "sym_int_values", at))
    for (const auto field : object_at(*syms, sv)) {
      const SymIntValue s = read_sym_int(field.value, dot(sv, field.key));
      g.sym_int_values[std::string(field.key)] = s.value ? std::to_string(*s.value) : s.expr;
    }
  return g;
}

}  // namespace layoutprof::pt2
