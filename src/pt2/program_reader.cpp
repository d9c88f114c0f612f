#include "pt2/program_reader.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "pt2/graph_reader.h"
#include "pt2/program_checks.h"
#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

// A large model's program (models/<name>.json) is tens of MB; the configs are far smaller.
constexpr uint64_t kMaxModelJson = uint64_t{512} << 20;
constexpr uint64_t kMaxConfigJson = uint64_t{64} << 20;

// The top of a JSON entry, as errors name it: "t.pt2: t/models/model.json: " (json_input.h).
std::string place(const Archive& archive, const std::string& entry) {
  return bounded(archive.name(), 200) + ": " + bounded(entry, 200) + ": ";
}

JsonDocument read_json(const Archive& archive, const std::string& entry, uint64_t most) {
  return parse_json(archive.read_text(entry, most), place(archive, entry));
}

Argument tensor_placeholder(const Json& spec, const std::string& at) {
  Argument a;
  a.kind = ArgKind::Tensor;
  const Json& arg = member(spec, "arg", at);
  a.names.push_back(string_at(member(arg, "name", dot(at, "arg")), dot(at, "arg.name")));
  return a;
}

std::string string_member(const Json& j, const char* key, const std::string& at) { return string_at(member(j, key, at), dot(at, key)); }

// ConstantValue: as_none, as_int, as_float, as_string, as_bool, each an Argument field too.
Argument constant_value(const Json& j, const std::string& at) {
  const UnionField f = union_at(j, at);
  for (const char* field : {"as_none", "as_int", "as_float", "as_string", "as_bool"})
    if (f.key == field) return read_argument(j, at);
  bad(at, "unknown constant field '" + bounded(std::string(f.key)) + "'");
}

// A constant input's placeholder name goes in `target`, its value in `arg`.
InputSpec read_input_spec(const Json& j, const std::string& at) {
  const UnionField f = union_at(j, at);
  const std::string kind(f.key);
  const Json& v = f.value;
  const std::string w = dot(at, kind);
  InputSpec s;
  if (kind == "user_input") s = {InputKind::UserInput, read_argument(member(v, "arg", w), dot(w, "arg")), "", true};
  else if (kind == "parameter") s = {InputKind::Parameter, tensor_placeholder(v, w), string_member(v, "parameter_name", w), true};
  else if (kind == "buffer")
    s = {InputKind::Buffer, tensor_placeholder(v, w), string_member(v, "buffer_name", w),
         bool_at(member(v, "persistent", w), dot(w, "persistent"))};
  else if (kind == "tensor_constant")
    s = {InputKind::TensorConstant, tensor_placeholder(v, w), string_member(v, "tensor_constant_name", w), true};
  else if (kind == "custom_obj") {
    s = {InputKind::CustomObj, read_argument_of(ArgKind::CustomObj, member(v, "arg", w), dot(w, "arg")),
         string_member(v, "custom_obj_name", w), true};
  } else if (kind == "token") s = {InputKind::Token, tensor_placeholder(v, w), "", true};
  else if (kind == "constant_input")
    s = {InputKind::ConstantInput, constant_value(member(v, "value", w), dot(w, "value")), string_member(v, "name", w), true};
  else bad(at, "unknown input spec '" + bounded(kind) + "'");
  return s;
}

OutputSpec read_output_spec(const Json& j, const std::string& at) {
  static const std::pair<const char*, std::pair<OutputKind, const char*>> kinds[] = {
      {"user_output", {OutputKind::UserOutput, nullptr}}, {"loss_output", {OutputKind::LossOutput, nullptr}},
      {"buffer_mutation", {OutputKind::BufferMutation, "buffer_name"}},
      {"gradient_to_parameter", {OutputKind::GradientToParameter, "parameter_name"}},
      {"gradient_to_user_input", {OutputKind::GradientToUserInput, "user_input_name"}},
      {"user_input_mutation", {OutputKind::UserInputMutation, "user_input_name"}},
      {"token", {OutputKind::Token, nullptr}}, {"parameter_mutation", {OutputKind::ParameterMutation, "parameter_name"}}};
  const UnionField f = union_at(j, at);
  const std::string w = dot(at, f.key);
  for (const auto& [name, kind] : kinds) {
    if (f.key != name) continue;
    OutputSpec s;
    s.kind = kind.first;
    // A user output is any Argument; the others name a tensor (or token) directly.
    s.arg = s.kind == OutputKind::UserOutput ? read_argument(member(f.value, "arg", w), dot(w, "arg"))
                                             : tensor_placeholder(f.value, w);
    if (kind.second) s.target = string_member(f.value, kind.second, w);
    return s;
  }
  bad(at, "unknown output spec '" + bounded(std::string(f.key)) + "'");
}

// A bound that is not an integer (null, "int_oo", a number past int64) is no bound.
std::optional<int64_t> bound(const std::optional<Json>& v) {
  int64_t i = 0;
  if (!v || v->get(i)) return std::nullopt;
  return i;
}

void read_schema_version(Program& p, const Json& model, const std::string& at) {
  const Json v = member(model, "schema_version", at);
  p.schema_major = static_cast<int>(std::clamp<int64_t>(int_at(member(v, "major", at), dot(at, "schema_version.major")), -1, 1 << 20));
  p.schema_minor = static_cast<int>(std::clamp<int64_t>(int_at(member(v, "minor", at), dot(at, "schema_version.minor")), -1, 1 << 20));
  if (const std::optional<Json> t = optional_member(model, "torch_version", at)) p.torch_version = string_at(*t, dot(at, "torch_version"));
  if (p.schema_major != kSchemaMajor)
    bad(at, "schema version " + std::to_string(p.schema_major) + "." + std::to_string(p.schema_minor) + " (torch " +
                bounded(p.torch_version.empty() ? "?" : p.torch_version, 40) + "); layoutprof reads " +
                std::to_string(kSchemaMajor) + ".x");
}

// The signature says what each graph input and output is: one spec for each.
void read_signature(Program& p, const Json& sig, const std::string& s) {
  for (const Json in : array_at(member(sig, "input_specs", s), dot(s, "input_specs")))
    p.input_specs.push_back(read_input_spec(in, index(dot(s, "input_specs"), p.input_specs.size())));
  for (const Json out : array_at(member(sig, "output_specs", s), dot(s, "output_specs")))
    p.output_specs.push_back(read_output_spec(out, index(dot(s, "output_specs"), p.output_specs.size())));
  if (p.input_specs.size() != p.graph.inputs.size() || p.output_specs.size() != p.graph.outputs.size())
    bad(s, std::to_string(p.input_specs.size()) + " input and " + std::to_string(p.output_specs.size()) +
               " output specs for a graph of " + std::to_string(p.graph.inputs.size()) + " inputs and " +
               std::to_string(p.graph.outputs.size()) + " outputs");
}

void read_range_constraints(Program& p, const Json& model, const std::string& at) {
  const std::optional<Json> ranges = optional_member(model, "range_constraints", at);
  if (!ranges) return;
  for (const auto field : object_at(*ranges, dot(at, "range_constraints"))) {
    const std::string w = dot(dot(at, "range_constraints"), field.key);
    p.range_constraints[std::string(field.key)] = {bound(optional_member(field.value, "min_val", w)),
                                                   bound(optional_member(field.value, "max_val", w))};
  }
}

void read_model(Program& p, const Archive& archive) {
  const std::string entry = archive.prefix() + "models/" + archive.program() + ".json";
  const std::string at = place(archive, entry);
  const JsonDocument doc = read_json(archive, entry, kMaxModelJson);
  const Json& model = doc.root;
  read_schema_version(p, model, at);
  const Json gm = member(model, "graph_module", at);
  const std::string g = dot(at, "graph_module");
  p.graph = read_graph(member(gm, "graph", g), dot(g, "graph"));
  check_definitions(p.graph, dot(g, "graph"));
  read_signature(p, member(gm, "signature", g), dot(g, "signature"));
  read_range_constraints(p, model, at);
}

// data/weights/<program>_weights_config.json or data/constants/<program>_constants_config.json:
// each stored tensor's entry, checked to hold what its metadata needs.
std::map<std::string, StoredTensor> read_payloads(const Archive& archive, const std::string& folder, const std::string& kind) {
  std::map<std::string, StoredTensor> stored;
  const std::string entry = archive.prefix() + folder + archive.program() + "_" + kind + "_config.json";
  if (!archive.has(entry)) return stored;  // an archive with nothing stored there may leave it out
  const std::string at = place(archive, entry);
  const JsonDocument doc = read_json(archive, entry, kMaxConfigJson);
  for (const auto field : object_at(member(doc.root, "config", at), dot(at, "config"))) {
    const std::string fqn(field.key);
    const Json& meta = field.value;
    const std::string w = dot(dot(at, "config"), fqn);
    if (bool_at(member(meta, "use_pickle", w), dot(w, "use_pickle")))
      bad(w, "a pickled tensor (a tensor subclass or custom object): layoutprof reads plain tensors only");
    const std::string path = string_member(meta, "path_name", w);
    if (path.empty() || path.find_first_of(std::string("/\0", 2)) != std::string::npos || path == "." || path == "..")
      bad(w, "path_name '" + bounded(path) + "' is not a file name");
    const std::optional<Json> tm = optional_member(meta, "tensor_meta", w);
    if (!tm) bad(w, "no tensor_meta");
    StoredTensor t{archive.prefix() + folder + path, read_tensor_meta(*tm, dot(w, "tensor_meta")),
                   bool_at(member(meta, "is_param", w), dot(w, "is_param"))};
    const uint64_t needs = storage_bytes(t.meta, w);
    if (!archive.has(t.entry)) bad(w, "its entry " + bounded(t.entry, 200) + " is missing from the archive");
    const uint64_t has = archive.size(t.entry);
    if (has < needs)
      bad(w, "needs " + std::to_string(needs) + " bytes but its entry " + bounded(t.entry, 200) + " has " + std::to_string(has));
    stored[fqn] = std::move(t);
  }
  return stored;
}

}  // namespace

Program read_program(const Archive& archive) {
  Program p;
  read_model(p, archive);
  p.name = archive.program();
  p.weights = read_payloads(archive, "data/weights/", "weights");
  p.constants = read_payloads(archive, "data/constants/", "constants");
  const std::string samples = archive.prefix() + "data/sample_inputs/" + archive.program() + ".pt";
  if (archive.has(samples)) p.sample_inputs_entry = samples;
  p.aotinductor_models = archive.aotinductor_models();
  return p;
}

int dtype_element_size(int schema_dtype) {
  switch (schema_dtype) {
    case 1: case 2: case 12: case 29: case 30: case 31: case 32: case 33: return 1;  // byte, char, bool, float8s
    case 3: case 6: case 13: case 28: return 2;  // short, half, bfloat16, uint16
    case 4: case 9: case 34: return 4;           // int, complex half, uint32
    case 5: case 8: case 10: case 35: return 8;  // long, double, complex float, uint64
    case 7: return 4;                            // float
    case 11: return 16;                          // complex double
    default: return 0;
  }
}

}  // namespace layoutprof::pt2
