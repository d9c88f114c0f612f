#include "pt2/program_checks.h"

#include <limits>
#include <set>
#include <string>
#include <utility>

#include "pt2/program_reader.h"
#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

[[noreturn]] void refuse(const std::string& at, const std::string& problem) { throw ModelLoadError(at + ": " + problem); }

// The names an argument refers to (values of the graph), "" for a None or a constant skipped.
bool names_values(ArgKind k) {
  switch (k) {
    case ArgKind::Tensor: case ArgKind::Tensors: case ArgKind::OptionalTensor: case ArgKind::OptionalTensors:
    case ArgKind::SymInt: case ArgKind::SymInts: case ArgKind::SymBool: case ArgKind::SymBools:
    case ArgKind::SymFloat: case ArgKind::SymFloats: case ArgKind::CustomObj:
      return true;
    default:
      return false;
  }
}

class Definitions {
 public:
  explicit Definitions(std::string at) : at_(std::move(at)) {}

  void define(const Argument& a, const std::string& where) {
    if (!names_values(a.kind)) return;
    for (const std::string& n : a.names)
      if (!n.empty() && !defined_.insert(n).second) refuse(at_, where + " defines '" + bounded(n) + "' a second time");
  }
  void use(const Argument& a, const std::string& where) {
    if (a.graph) check_definitions(*a.graph, at_ + " " + where + " (subgraph)");
    if (!names_values(a.kind)) return;
    for (const std::string& n : a.names)
      if (!n.empty() && !defined_.count(n)) refuse(at_, where + " uses '" + bounded(n) + "' before it is defined");
  }

 private:
  std::string at_;
  std::set<std::string> defined_;
};

bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool checked_add(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_add_overflow(a, b, &out); }

uint64_t constant(const SymIntValue& v, const std::string& at, const char* what) {
  if (!v.value) refuse(at, std::string("a stored tensor's ") + what + " is symbolic (" + bounded(v.expr, 40) + ")");
  if (*v.value < 0) refuse(at, std::string("a negative ") + what + " (" + std::to_string(*v.value) + ")");
  return static_cast<uint64_t>(*v.value);
}

}  // namespace

void check_definitions(const Graph& graph, const std::string& at) {
  Definitions d(at);
  for (size_t i = 0; i < graph.inputs.size(); ++i) d.define(graph.inputs[i], "input " + std::to_string(i));
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const std::string where = "node " + std::to_string(i) + " (" + bounded(n.target, 60) + ")";
    for (const NamedArgument& in : n.inputs) d.use(in.arg, where);
    for (const Argument& out : n.outputs) d.define(out, where);
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) d.use(graph.outputs[i], "output " + std::to_string(i));
}

// (offset + sum((size_i - 1) * stride_i) + 1) * element size, or 0 where a size is 0: the
// extent a strided view reaches, every step checked for overflow.
uint64_t storage_bytes(const TensorMeta& meta, const std::string& at) {
  const int element = dtype_element_size(meta.dtype);
  if (element == 0) refuse(at, "unknown dtype code " + std::to_string(meta.dtype));
  if (meta.layout != 7) refuse(at, "layout code " + std::to_string(meta.layout) + ": layoutprof reads strided tensors only");
  if (meta.sizes.size() != meta.strides.size()) refuse(at, "sizes and strides differ in length");
  uint64_t last = constant(meta.storage_offset, at, "storage offset");
  const std::string absurd = "sizes, strides and offset past 2^63 bytes";
  bool empty = false;
  for (size_t i = 0; i < meta.sizes.size(); ++i) {
    const uint64_t size = constant(meta.sizes[i], at, "size");
    const uint64_t stride = constant(meta.strides[i], at, "stride");
    uint64_t reach = 0;
    if (size == 0) empty = true;
    else if (!checked_mul(size - 1, stride, reach) || !checked_add(last, reach, last)) refuse(at, absurd);
  }
  if (empty) return 0;
  uint64_t bytes = 0;
  if (!checked_add(last, 1, last) || !checked_mul(last, static_cast<uint64_t>(element), bytes) ||
      bytes > uint64_t(std::numeric_limits<int64_t>::max()))
    refuse(at, absurd);
  return bytes;
}

}  // namespace layoutprof::pt2
