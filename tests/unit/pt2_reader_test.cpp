// The .pt2 reader (src/pt2): real archives torch 2.14 wrote, every Argument kind of schema 8.20,
// and hostile archives, each refused with one line.
#include <gtest/gtest.h>
#include <zip.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pt2/program_reader.h"
#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

using nlohmann::json;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A zip of these entries, written by libzip to a temporary file and read back.
std::string make_zip(const std::map<std::string, std::string>& entries) {
  char path[] = "/tmp/pt2_reader_testXXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  int error = 0;
  zip_t* z = zip_open(path, ZIP_TRUNCATE, &error);
  EXPECT_NE(z, nullptr);
  for (const auto& [name, data] : entries) {
    zip_source_t* s = zip_source_buffer(z, data.data(), data.size(), 0);
    EXPECT_GE(zip_file_add(z, name.c_str(), s, ZIP_FL_ENC_UTF_8), 0);
  }
  EXPECT_EQ(zip_close(z), 0);
  std::string bytes = file_bytes(path);
  std::remove(path);
  return bytes;
}

std::string floats(std::initializer_list<float> v) {
  std::string b(v.size() * sizeof(float), '\0');
  std::memcpy(b.data(), std::data(v), b.size());
  return b;
}

json sym(int64_t v) { return {{"as_int", v}}; }
json meta(std::vector<int64_t> sizes, std::vector<int64_t> strides, int dtype = 7) {
  json s = json::array(), t = json::array();
  for (int64_t x : sizes) s.push_back(sym(x));
  for (int64_t x : strides) t.push_back(sym(x));
  return {{"dtype", dtype}, {"sizes", s}, {"strides", t}, {"storage_offset", sym(0)}, {"layout", 7},
          {"requires_grad", false}, {"device", {{"type", "cpu"}, {"index", nullptr}}}};
}
json tensor(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }

// out = mul(x, p_w), p_w the parameter "w" stored as 2 floats.
json small_model() {
  json node = {{"target", "torch.ops.aten.mul.Tensor"},
               {"inputs", {{{"name", "self"}, {"arg", tensor("x")}}, {{"name", "other"}, {"arg", tensor("p_w")}}}},
               {"outputs", {tensor("mul")}},
               {"metadata", {{"stack_trace", "File m.py, line 3"}, {"nn_module_stack", "L__self__,,M"}}}};
  json graph = {{"inputs", {tensor("p_w"), tensor("x")}}, {"outputs", {tensor("mul")}}, {"nodes", {node}},
                {"tensor_values", {{"p_w", meta({2}, {1})}, {"x", meta({2}, {1})}, {"mul", meta({2}, {1})}}},
                {"sym_int_values", json::object()}};
  json sig = {{"input_specs", {{{"parameter", {{"arg", {{"name", "p_w"}}}, {"parameter_name", "w"}}}},
                               {{"user_input", {{"arg", tensor("x")}}}}}},
              {"output_specs", {{{"user_output", {{"arg", tensor("mul")}}}}}}};
  return {{"graph_module", {{"graph", graph}, {"signature", sig}, {"module_call_graph", json::array()}}},
          {"schema_version", {{"major", 8}, {"minor", 20}}}, {"torch_version", "2.14.1"},
          {"range_constraints", {{"s0", {{"min_val", 2}, {"max_val", "int_oo"}}}}}};
}
json small_weights() {
  return {{"config", {{"w", {{"path_name", "weight_0"}, {"is_param", true}, {"use_pickle", false}, {"tensor_meta", meta({2}, {1})}}}}}};
}

std::map<std::string, std::string> small_entries(const json& model = small_model(), const json& weights = small_weights()) {
  return {{"m/models/model.json", model.dump()},
          {"m/data/weights/model_weights_config.json", weights.dump()},
          {"m/data/weights/weight_0", floats({1.f, 2.f})},
          {"m/archive_format", "pt2"}};
}

Program read(const std::map<std::string, std::string>& entries) {
  return read_program(Archive::from_bytes(make_zip(entries), "test.pt2"));
}

// The one-line message of a refusal, "" (and a failure) where nothing was refused.
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelLoadError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_LT(m.size(), 1000u) << m;
    return m;
  }
  ADD_FAILURE() << "not refused";
  return "";
}
std::string refusal(const std::map<std::string, std::string>& entries) { return refusal([&] { read(entries); }); }

TEST(Pt2Reader, ReadsARealExportWithABufferAndADynamicBatch) {
  const std::string path = std::string(DATA_DIR) + "/dynamic_linear.pt2";
  EXPECT_TRUE(is_pt2_archive(path));
  Archive archive(path);
  EXPECT_EQ(archive.prefix(), "t/");
  const Program p = read_program(archive);
  EXPECT_EQ(p.schema_major, 8);
  EXPECT_EQ(p.schema_minor, 20);
  EXPECT_EQ(p.torch_version.rfind("2.14", 0), 0u);
  ASSERT_EQ(p.graph.nodes.size(), 6u);
  ASSERT_EQ(p.input_specs.size(), 4u);
  EXPECT_EQ(p.input_specs[0].kind, InputKind::Parameter);
  EXPECT_EQ(p.input_specs[0].target, "l.weight");
  EXPECT_EQ(p.input_specs[0].arg.names.at(0), "p_l_weight");
  EXPECT_EQ(p.input_specs[2].kind, InputKind::Buffer);
  EXPECT_EQ(p.input_specs[3].kind, InputKind::UserInput);
  const Node& reshape = p.graph.nodes[3];
  EXPECT_EQ(reshape.target, "torch.ops.aten.reshape.default");
  EXPECT_EQ(reshape.inputs[1].arg.kind, ArgKind::SymInts);
  EXPECT_EQ(reshape.inputs[1].arg.names, (std::vector<std::string>{"sym_size_int_1", "", ""}));
  EXPECT_EQ(reshape.inputs[1].arg.ints, (std::vector<int64_t>{0, -1, 6}));
  EXPECT_NE(reshape.stack_trace.find("reshape"), std::string::npos);
  EXPECT_NE(p.graph.tensor_values.at("x").sizes[0].expr.find("s77"), std::string::npos);
  EXPECT_EQ(p.graph.tensor_values.at("x").strides[0].value, 18);
  EXPECT_NE(p.graph.sym_int_values.at("sym_size_int_1").find("s77"), std::string::npos);
  EXPECT_EQ(p.range_constraints.at("s77").min, 0);
  EXPECT_EQ(p.range_constraints.at("s77").max, 64);
  ASSERT_EQ(p.weights.size(), 3u);
  const StoredTensor& w = p.weights.at("l.weight");
  EXPECT_TRUE(w.is_param);
  EXPECT_FALSE(p.weights.at("cnt").is_param);
  std::vector<float> storage(24);
  archive.read_into(w.entry, storage.data(), storage.size() * sizeof(float));
  EXPECT_EQ(p.sample_inputs_entry, "t/data/sample_inputs/model.pt");
}

TEST(Pt2Reader, ReadsATensorConstantAndAnUnboundedDimension) {
  const Program p = read_program(Archive(std::string(DATA_DIR) + "/tensor_constant.pt2"));
  ASSERT_EQ(p.constants.size(), 1u);
  EXPECT_EQ(p.constants.at("k").entry, "c/data/constants/tensor_0");
  EXPECT_EQ(p.input_specs.at(0).kind, InputKind::TensorConstant);
  EXPECT_EQ(p.input_specs.at(0).target, "k");
  EXPECT_EQ(p.range_constraints.at("s77").max, std::nullopt);  // written as null
  EXPECT_TRUE(p.weights.empty());
}

TEST(Pt2Reader, ReadsAnArchiveFromMemoryAndStreamsAWeight) {
  const Archive archive = Archive::from_bytes(make_zip(small_entries()));
  const Program p = read_program(archive);
  EXPECT_EQ(p.graph.nodes.at(0).nn_module_stack, "L__self__,,M");
  EXPECT_EQ(p.range_constraints.at("s0").min, 2);
  EXPECT_EQ(p.range_constraints.at("s0").max, std::nullopt);  // "int_oo": unbounded
  float w[2] = {};
  archive.read_into(p.weights.at("w").entry, w, sizeof w);
  EXPECT_EQ(w[1], 2.f);
  EXPECT_EQ(p.sample_inputs_entry, "");
  EXPECT_EQ(dtype_element_size(7), 4);
  EXPECT_EQ(dtype_element_size(11), 16);
  EXPECT_EQ(dtype_element_size(99), 0);
}

// schema.py's class Argument, schema 8.20 (torch 2.14.1), field by field in its order.
const char* const kSchemaArgumentFields[] = {
    "as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats", "as_string", "as_strings",
    "as_sym_int", "as_sym_ints", "as_scalar_type", "as_memory_format", "as_layout", "as_device", "as_bool",
    "as_bools", "as_sym_bool", "as_sym_bools", "as_graph", "as_optional_tensors", "as_custom_obj", "as_operator",
    "as_sym_float", "as_sym_floats", "as_optional_tensor", "as_complex", "as_nested_tensors", "as_int_lists",
    "as_string_to_argument", "as_float_lists"};

json sample_argument(const std::string& field) {
  static const json samples = json::parse(R"({
    "as_none": true, "as_tensor": {"name": "x"}, "as_tensors": [{"name": "x"}, {"name": "x"}], "as_int": 3,
    "as_ints": [1, 2], "as_float": 1.5, "as_floats": [1.5, "Infinity"], "as_string": "s", "as_strings": ["a", "b"],
    "as_sym_int": {"as_name": "n"}, "as_sym_ints": [{"as_name": "n"}, {"as_int": 4}], "as_scalar_type": 7,
    "as_memory_format": 2, "as_layout": 7, "as_device": {"type": "cuda", "index": 1}, "as_bool": true,
    "as_bools": [true, false], "as_sym_bool": {"as_bool": true}, "as_sym_bools": [{"as_bool": false}],
    "as_graph": {"name": "g", "graph": {"inputs": [{"as_tensor": {"name": "a"}}], "outputs": [{"as_tensor": {"name": "a"}}],
                 "nodes": [], "tensor_values": {}, "sym_int_values": {}}},
    "as_optional_tensors": [{"as_tensor": {"name": "x"}}, {"as_none": true}],
    "as_custom_obj": {"name": "obj", "class_fqn": "__torch__.C"}, "as_operator": "torch.ops.aten.add.Tensor",
    "as_sym_float": {"as_float": 2.5}, "as_sym_floats": [{"as_name": "n"}, {"as_float": 1.0}],
    "as_optional_tensor": {"as_none": true}, "as_complex": {"real": 1, "imag": 2},
    "as_nested_tensors": [[{"name": "x"}]], "as_int_lists": [[1, 2], [3]],
    "as_string_to_argument": {"k": {"as_int": 1}}, "as_float_lists": [[1.0]]})");
  return {{field, samples.at(field)}};
}

TEST(Pt2Reader, ArgumentKindsAreExactlySchemaArgumentsFieldsAndEachParses) {
  std::set<std::string> ours, schema(std::begin(kSchemaArgumentFields), std::end(kSchemaArgumentFields));
  for (int k = 0; k < kArgKinds; ++k) ours.insert(arg_kind_field(static_cast<ArgKind>(k)));
  EXPECT_EQ(ours, schema);
  ASSERT_EQ(std::size(kSchemaArgumentFields), size_t(kArgKinds));
  // One node taking every kind; x, n and obj are graph inputs.
  json model = small_model();
  json& graph = model["graph_module"]["graph"];
  graph["inputs"].push_back({{"as_sym_int", {{"as_name", "n"}}}});
  graph["inputs"].push_back({{"as_custom_obj", {{"name", "obj"}, {"class_fqn", "__torch__.C"}}}});
  json& specs = model["graph_module"]["signature"]["input_specs"];
  specs.push_back({{"user_input", {{"arg", {{"as_sym_int", {{"as_name", "n"}}}}}}}});
  specs.push_back({{"custom_obj", {{"arg", {{"name", "obj"}, {"class_fqn", "__torch__.C"}}}, {"custom_obj_name", "c"}}}});
  json node = {{"target", "test.every_kind"}, {"inputs", json::array()}, {"outputs", json::array()}, {"metadata", json::object()}};
  for (const char* field : kSchemaArgumentFields) node["inputs"].push_back({{"name", field}, {"arg", sample_argument(field)}});
  graph["nodes"].push_back(node);
  const Program p = read(small_entries(model));
  const Node& n = p.graph.nodes.at(1);
  ASSERT_EQ(n.inputs.size(), size_t(kArgKinds));
  for (int k = 0; k < kArgKinds; ++k) EXPECT_EQ(n.inputs[k].arg.kind, static_cast<ArgKind>(k)) << kSchemaArgumentFields[k];
  auto arg = [&](ArgKind k) { return n.inputs[static_cast<int>(k)].arg; };
  EXPECT_EQ(arg(ArgKind::Device).strings.at(0), "cuda");
  EXPECT_EQ(arg(ArgKind::Device).ints.at(0), 1);
  EXPECT_EQ(arg(ArgKind::SymInts).names, (std::vector<std::string>{"n", ""}));
  EXPECT_EQ(arg(ArgKind::SymInts).ints, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(arg(ArgKind::SymFloats).floats, (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(arg(ArgKind::OptionalTensors).names, (std::vector<std::string>{"x", ""}));
  ASSERT_NE(arg(ArgKind::Graph).graph, nullptr);
  EXPECT_EQ(arg(ArgKind::Graph).graph->inputs.size(), 1u);
  EXPECT_EQ(arg(ArgKind::Complex).floats, (std::vector<double>{1, 2}));
  EXPECT_EQ(arg(ArgKind::IntLists).ints, (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(std::isinf(arg(ArgKind::Floats).floats.at(1)));
  EXPECT_EQ(arg(ArgKind::CustomObj).strings.at(0), "__torch__.C");
  EXPECT_EQ(p.input_specs.at(3).kind, InputKind::CustomObj);
}

TEST(Pt2Reader, RefusesWhatIsNotAZipOrNotAProgram) {
  const std::string real = file_bytes(std::string(DATA_DIR) + "/dynamic_linear.pt2");
  EXPECT_NE(refusal([&] { Archive::from_bytes(real.substr(0, real.size() / 2)); }).find("not a readable zip"), std::string::npos);
  EXPECT_NE(refusal([] { Archive::from_bytes("hello, not a zip"); }).find("not a readable zip"), std::string::npos);
  EXPECT_NE(refusal([] { Archive("/nonexistent/model.pt2"); }).find("not a readable zip"), std::string::npos);
  EXPECT_NE(refusal({{"m/archive_format", "pt2"}}).find("models/<name>.json: missing"), std::string::npos);
  EXPECT_NE(refusal({{"a/models/model.json", "{}"}, {"b/models/model.json", "{}"}}).find("two folders"), std::string::npos);
  EXPECT_FALSE(is_pt2_archive("/nonexistent/model.pt2"));
}

bool written_is_pt2(const std::map<std::string, std::string>& entries) {
  char path[] = "/tmp/pt2_layoutXXXXXX";
  const int fd = mkstemp(path);
  const std::string bytes = make_zip(entries);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  close(fd);
  const bool pt2 = is_pt2_archive(path);
  std::remove(path);
  return pt2;
}

// Told apart from a TorchScript zip by its layout alone, as `run` must before loading either.
TEST(Pt2Reader, KnowsAPt2ArchiveByItsLayout) {
  const auto written = written_is_pt2;
  EXPECT_TRUE(written({{"x/archive_format", "pt2"}}));
  EXPECT_TRUE(written({{"x/models/model.json", "{}"}}));
  EXPECT_TRUE(written({{"x/models/encoder.json", "{}"}}));
  EXPECT_FALSE(written({{"x/models/a/model.json", "{}"}}));
  EXPECT_FALSE(written({{"x/archive_format", "pt3"}}));
  EXPECT_FALSE(written({{"model/data.pkl", ""}, {"model/version", "3"}}));  // TorchScript's layout
  EXPECT_FALSE(written({{"a/b/models/model.json", "{}"}}));
}

// The entries package_pt2(f, exported_programs={name: ep}) writes for one program: its JSON,
// configs and sample inputs named after it (torch 2.14.1's pt2_archive_constants).
std::map<std::string, std::string> program_entries(const std::string& name, const std::string& weight = "weight_0") {
  json weights = small_weights();
  weights["config"]["w"]["path_name"] = weight;
  return {{"m/models/" + name + ".json", small_model().dump()},
          {"m/data/weights/" + name + "_weights_config.json", weights.dump()},
          {"m/data/constants/" + name + "_constants_config.json", R"({"config": {}})"},
          {"m/data/sample_inputs/" + name + ".pt", "stored inputs"},
          {"m/data/weights/" + weight, floats({1.f, 2.f})}};
}

// What aoti_compile_and_package(ep) wrote on the CPU under torch 2.14.1: compiled code and its
// metadata for "model", no program (entry names as listed from a real package).
std::map<std::string, std::string> aotinductor_entries(const std::string& folder) {
  const std::string code = folder + "data/aotinductor/model/";
  return {{code + "c5xab7rgssjtujklbpcipog2ktp7s732r2msrzacm2xxptbmqqws.wrapper.cpp", "// wrapper"},
          {code + "clp5lyue7x7dvu7plx7og5ewp2d7rhwxzhxug7xj73o4v5ifcyv7.kernel.cpp", "// kernel"},
          {code + "c5xab7rgssjtujklbpcipog2ktp7s732r2msrzacm2xxptbmqqws.wrapper_metadata.json", "{}"},
          {code + "clp5lyue7x7dvu7plx7og5ewp2d7rhwxzhxug7xj73o4v5ifcyv7.kernel_metadata.json", "{}"},
          {code + "c5xab7rgssjtujklbpcipog2ktp7s732r2msrzacm2xxptbmqqws.wrapper.so", "\x7f" "ELF"},
          {folder + "archive_format", "pt2"}, {folder + "archive_version", "0"}, {folder + ".data/version", "6"},
          {folder + "byteorder", "little"}, {folder + ".data/serialization_id", "0123456789"}};
}

TEST(Pt2Reader, ReadsAProgramNamedOtherThanModelWithItsOwnConfigs) {
  auto entries = program_entries("encoder");
  entries["m/data/weights/model_weights_config.json"] = R"({"config": {"other": 1}})";  // not this program's
  const Archive archive = Archive::from_bytes(make_zip(entries));
  EXPECT_EQ(archive.program(), "encoder");
  EXPECT_TRUE(archive.aotinductor_models().empty());
  const Program p = read_program(archive);
  EXPECT_EQ(p.name, "encoder");
  ASSERT_EQ(p.weights.size(), 1u);
  EXPECT_EQ(p.weights.at("w").entry, "m/data/weights/weight_0");
  EXPECT_TRUE(p.constants.empty());
  EXPECT_EQ(p.sample_inputs_entry, "m/data/sample_inputs/encoder.pt");
  EXPECT_TRUE(p.aotinductor_models.empty());
  // Its configs are read: one naming a missing entry is refused.
  entries["m/data/weights/encoder_weights_config.json"] = program_entries("encoder", "weight_9").at(
      "m/data/weights/encoder_weights_config.json");
  EXPECT_NE(refusal(entries).find("m/data/weights/encoder_weights_config.json: config.w: its entry m/data/weights/weight_9 "
                                  "is missing"), std::string::npos);
}

TEST(Pt2Reader, RefusesSeveralProgramsNamingThem) {
  auto entries = program_entries("foo");
  const auto bar = program_entries("bar", "weight_1");
  entries.insert(bar.begin(), bar.end());
  EXPECT_TRUE(written_is_pt2(entries));
  EXPECT_EQ(refusal(entries), "test.pt2: 2 exported programs (models/bar.json, models/foo.json): layoutprof profiles "
                              "one program per archive: save the one to profile with torch.export.save(ep, 'model.pt2')");
  for (const char* name : {"a", "b", "c", "d"}) entries["m/models/" + std::string(name) + ".json"] = "{}";
  EXPECT_NE(refusal(entries).find("6 exported programs (models/a.json, models/b.json, models/bar.json, models/c.json and 2 "
                                  "more)"), std::string::npos);
  EXPECT_NE(refusal({{"a/models/x.json", "{}"}, {"b/models/y.json", "{}"}}).find("found in two folders, a/ and b/"),
            std::string::npos);
}

TEST(Pt2Reader, RefusesAnAOTInductorPackageSayingWhatToProfileInstead) {
  const auto entries = aotinductor_entries("aoti/");
  EXPECT_TRUE(written_is_pt2(entries));  // archive_format "pt2": the load is reached, and says what it is
  EXPECT_EQ(refusal([&] { Archive::from_bytes(make_zip(entries), "aoti.pt2"); }),
            "aoti.pt2: an AOTInductor package (compiled code for model, no exported program): layoutprof profiles "
            "the exported program it was compiled from: save it with torch.export.save(ep, 'model.pt2') and profile that");
  auto two = entries;
  two["aoti/data/aotinductor/decoder/d.wrapper.so"] = "";
  EXPECT_NE(refusal([&] { Archive::from_bytes(make_zip(two)); }).find("(compiled code for decoder, model, no exported"),
            std::string::npos);
}

// package_pt2(f, exported_programs=ep, aoti_files=...): the program is read, and the code's
// models are named for the run's notes.
TEST(Pt2Reader, ReadsTheProgramOfAPackageHoldingAOTInductorCodeToo) {
  auto entries = program_entries("model");
  const auto code = aotinductor_entries("m/");
  entries.insert(code.begin(), code.end());
  entries["m/data/aotinductor/model/weights_config.json"] = "{}";
  const Program p = read(entries);
  EXPECT_EQ(p.name, "model");
  EXPECT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(p.weights.size(), 1u);
  EXPECT_EQ(p.aotinductor_models, std::vector<std::string>{"model"});
  // Code in another folder is not this program's.
  entries = small_entries();
  const auto elsewhere = aotinductor_entries("other/");
  entries.insert(elsewhere.begin(), elsewhere.end());
  EXPECT_TRUE(read(entries).aotinductor_models.empty());
}

TEST(Pt2Reader, RefusesBrokenJson) {
  auto with_model = [](const std::string& text) {
    auto e = small_entries();
    e["m/models/model.json"] = text;
    return refusal(e);
  };
  EXPECT_NE(with_model("{\"graph_module\": ").find("invalid JSON"), std::string::npos);
  EXPECT_NE(with_model(std::string(100000, '[') + std::string(100000, ']')).find("nested deeper than 200"), std::string::npos);
  EXPECT_NE(with_model(std::string(201, '[') + std::string(201, ']')).find("nested deeper than 200"), std::string::npos);
  EXPECT_NE(with_model(std::string(100000, '[')).find("invalid JSON"), std::string::npos);  // never closed
  json model = small_model();
  model["schema_version"]["major"] = 9;
  EXPECT_NE(with_model(model.dump()).find("schema version 9.20 (torch 2.14.1); layoutprof reads 8.x"), std::string::npos);
  model = small_model();
  model["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"] = {{"as_foo", 1}};
  EXPECT_NE(with_model(model.dump()).find("unknown argument field 'as_foo'"), std::string::npos);
}

TEST(Pt2Reader, RefusesNamesUsedBeforeTheyAreDefinedOrDefinedTwice) {
  json model = small_model();
  model["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"] = tensor("y");
  EXPECT_NE(refusal(small_entries(model)).find("uses 'y' before it is defined"), std::string::npos);
  model = small_model();
  model["graph_module"]["graph"]["nodes"][0]["outputs"][0] = tensor("x");
  EXPECT_NE(refusal(small_entries(model)).find("defines 'x' a second time"), std::string::npos);
  model = small_model();
  model["graph_module"]["signature"]["output_specs"] = json::array();
  EXPECT_NE(refusal(small_entries(model)).find("2 input and 0 output specs for a graph of 2 inputs and 1 outputs"),
            std::string::npos);
}

TEST(Pt2Reader, RefusesStoredTensorsTheArchiveCannotFill) {
  auto entries = small_entries();
  entries["m/data/weights/weight_0"] = floats({1.f});
  EXPECT_NE(refusal(entries).find("needs 8 bytes but its entry m/data/weights/weight_0 has 4"), std::string::npos);
  entries.erase("m/data/weights/weight_0");
  EXPECT_NE(refusal(entries).find("is missing from the archive"), std::string::npos);
  json weights = small_weights();
  weights["config"]["w"]["tensor_meta"] = meta({int64_t{1} << 62}, {1});
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("past 2^63 bytes"), std::string::npos);
  weights["config"]["w"]["tensor_meta"] = meta({-2}, {1});
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("a negative size"), std::string::npos);
  weights["config"]["w"]["tensor_meta"]["sizes"][0] = {{"as_expr", {{"expr_str", "s0"}}}};
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("symbolic (s0)"), std::string::npos);
  weights = small_weights();
  weights["config"]["w"]["use_pickle"] = true;
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("config.w: a pickled tensor"), std::string::npos);
  weights = small_weights();
  weights["config"]["w"]["path_name"] = "../weight_0";
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("is not a file name"), std::string::npos);
  weights["config"]["w"]["path_name"] = std::string("weight_0\0x", 10);  // a C string would stop at weight_0
  EXPECT_NE(refusal(small_entries(small_model(), weights)).find("is not a file name"), std::string::npos);
}

TEST(Pt2Reader, ArchiveRefusesReadsPastAnEntryOrOverALimit) {
  const Archive a = Archive::from_bytes(make_zip(small_entries()));
  float w[4];
  EXPECT_NE(refusal([&] { a.read_into("m/data/weights/weight_0", w, sizeof w); }).find("8 bytes, shorter than the 16"),
            std::string::npos);
  EXPECT_NE(refusal([&] { a.read_text("m/archive_format", 2); }).find("over the 2"), std::string::npos);
  EXPECT_NE(refusal([&] { a.size("m/nothing"); }).find("m/nothing: missing"), std::string::npos);
  EXPECT_EQ(a.read_text("m/archive_format", 3), "pt2");
}

// A central directory that says an entry inflates to 4 GiB from a few bytes: refused before any
// caller could size a buffer by it.
TEST(Pt2Reader, ArchiveRefusesADirectoryThatLiesAboutAnEntrysSize) {
  std::string zip = make_zip(small_entries());
  const std::string name = "m/data/weights/weight_0";
  const size_t at = zip.rfind(name);  // its central directory record: the name follows 46 bytes
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(zip.compare(at - 46, 4, "PK\x01\x02"), 0);
  zip.replace(at - 46 + 24, 4, "\xf0\xff\xff\xff");  // uncompressed size
  const Archive a = Archive::from_bytes(zip);
  EXPECT_NE(refusal([&] { a.size(name); }).find("its directory is wrong"), std::string::npos);
}

}  // namespace
}  // namespace layoutprof::pt2
