// Schema 8's graph as program.h's structs: arguments (the 31 kinds), tensor metadata and
// symbolic integers, nodes and graphs (nested ones too, through as_graph). Private to src/pt2.
#pragma once

#include <string>

#include "pt2/json_input.h"
#include "pt2/program.h"

namespace layoutprof::pt2 {

Argument read_argument(const Json& j, const std::string& at);
// The value of an argument field whose kind the caller knows (a signature's custom object).
Argument read_argument_of(ArgKind kind, const Json& value, const std::string& at);
SymIntValue read_sym_int(const Json& j, const std::string& at);
TensorMeta read_tensor_meta(const Json& j, const std::string& at);
Graph read_graph(const Json& j, const std::string& at);

}  // namespace layoutprof::pt2
