// A torch.export program (.pt2) as read from its archive, before anything runs: the serialized
// graph (torch/_export/serde/schema.py, schema 8), its signature and the weights' metadata, as
// plain structs. Torch-free: the reader (program_reader.h) fills it from the archive's JSON, the
// runner's executor runs it through the dispatcher. Enum codes (dtype, layout, memory format)
// are the schema's own, not c10's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace layoutprof::pt2 {

// schema.py's Argument: a union of 31 kinds, in the schema's order.
enum class ArgKind {
  None, Tensor, Tensors, Int, Ints, Float, Floats, String, Strings, SymInt, SymInts, ScalarType,
  MemoryFormat, Layout, Device, Bool, Bools, SymBool, SymBools, Graph, OptionalTensors, CustomObj,
  Operator, SymFloat, SymFloats, OptionalTensor, Complex, NestedTensors, IntLists,
  StringToArgument, FloatLists,
};
// The schema's field name of a kind ("as_tensor").
const char* arg_kind_field(ArgKind kind);
constexpr int kArgKinds = 31;

struct Graph;

// One argument or output. Which members hold it depends on the kind:
//  Tensor, Tensors, OptionalTensor(s), CustomObj: names ("" for a None in an optional list;
//    a CustomObj's class_fqn in strings[0]);
//  Int(s), Bool(s), ScalarType, MemoryFormat, Layout: ints;
//  SymInt(s), SymBool(s), SymFloat(s): per element, names[i] a value's name, or "" and the
//    constant in ints[i] (floats[i] for SymFloat); ints[i] (floats[i]) is 0 where named;
//  Float(s), Complex (real, imag): floats;  String(s), Operator: strings;
//  Device: strings[0] the type, ints[0] the index (-1 none);  Graph: graph, names[0] its name;
//  NestedTensors, IntLists, FloatLists, StringToArgument: refused by the executor, so kept as
//    their element counts only (ints).
struct Argument {
  ArgKind kind = ArgKind::None;
  std::vector<std::string> names;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::shared_ptr<const Graph> graph;
};

struct NamedArgument {
  std::string name;  // the operator schema's argument name
  Argument arg;
};

struct Node {
  std::string target;  // "torch.ops.aten.conv2d.default", "_operator.mul", "torch.ops.higher_order.cond"
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
  std::string stack_trace;      // metadata["stack_trace"]
  std::string nn_module_stack;  // metadata["nn_module_stack"]
};

// A tensor's metadata as the schema writes it: sizes and strides may be symbolic (an
// expression string) where the export made a dimension dynamic.
struct SymIntValue {
  std::optional<int64_t> value;  // a constant
  std::string expr;              // else sympy's text: "s77", "2*s77", "Symbol('s77', ...)"
};
struct TensorMeta {
  int dtype = 0;   // schema ScalarType
  int layout = 7;  // schema Layout (7: strided)
  std::vector<SymIntValue> sizes, strides;
  SymIntValue storage_offset;
  bool requires_grad = false;
  std::string device = "cpu";
};

struct Graph {
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::map<std::string, std::string> sym_int_values;  // name -> sympy expression (or constant)
};

// The signature: what each graph input is, and where outputs go.
enum class InputKind { UserInput, Parameter, Buffer, TensorConstant, CustomObj, Token, ConstantInput };
struct InputSpec {
  InputKind kind = InputKind::UserInput;
  Argument arg;        // the placeholder (as_tensor for parameters, buffers, constants, tokens);
                       // a ConstantInput's value (None, Int, Float, String or Bool)
  std::string target;  // the parameter's, buffer's, constant's, custom object's fully qualified
                       // name; a ConstantInput's placeholder name
  bool persistent = true;
};
enum class OutputKind { UserOutput, LossOutput, BufferMutation, GradientToParameter, GradientToUserInput,
                        UserInputMutation, Token, ParameterMutation };
struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  Argument arg;
  std::string target;  // the buffer, parameter or user input it writes back to
};

// A stored tensor: an entry of data/weights/ or data/constants/, raw bytes of the storage.
struct StoredTensor {
  std::string entry;  // the archive entry holding its storage
  TensorMeta meta;
  bool is_param = false;
};

struct RangeConstraint {
  std::optional<int64_t> min, max;  // none: unbounded ("int_oo")
};

struct Program {
  std::string name;  // <name> of models/<name>.json: "model" from torch.export.save
  int schema_major = 0, schema_minor = 0;
  std::string torch_version;
  Graph graph;
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;
  std::map<std::string, RangeConstraint> range_constraints;  // symbol -> its range
  std::map<std::string, StoredTensor> weights;    // by fully qualified name
  std::map<std::string, StoredTensor> constants;  // by fully qualified name
  std::string sample_inputs_entry;  // "" where the archive stores none
  // The models of the AOTInductor code packaged beside the program (data/aotinductor/<model>/),
  // which layoutprof does not run; none for torch.export.save's archives.
  std::vector<std::string> aotinductor_models;
};

}  // namespace layoutprof::pt2
