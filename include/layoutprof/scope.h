// layoutprof::Scope: names the ops a C++ program runs outside TorchScript, as a module path
// names a model's. While a Scope lives, the ops its thread runs are charged to its name (nested
// scopes join: "encoder.attention"), and carry the scope's source line: the report's heatmap
// rows, causes and split points say "encoder" and "encoder.cpp:42" where they would say
// "(outside the model)". A TorchScript module run inside a scope has its own paths under it
// ("encoder.layer1.0").
//
//   void encode(const at::Tensor& x) {
//     layoutprof::Scope scope("encoder");
//     ...
//   }
//
// Costs a few hundred nanoseconds; does nothing visible outside a Session.
#pragma once

#include "layoutprof/export.h"

namespace layoutprof {

class LAYOUTPROF_API Scope {
 public:
  // `file` and `line` default to the place the Scope is constructed (GCC and clang).
  explicit Scope(const char* name, const char* file = __builtin_FILE(), int line = __builtin_LINE());
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

}  // namespace layoutprof
