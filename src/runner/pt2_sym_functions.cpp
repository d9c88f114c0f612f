#include "runner/pt2_sym_functions.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cmath>

#include "pt2/sym_expr.h"

namespace layoutprof {
namespace {

// Python's semantics on ints (floor division and modulo round toward minus infinity).
using pt2::floor_div;

c10::IValue number(double v, bool integral) { return integral ? c10::IValue(static_cast<int64_t>(v)) : c10::IValue(v); }
bool all_ints(const std::vector<c10::IValue>& a) {
  for (const auto& v : a)
    if (!v.isInt() && !v.isBool()) return false;
  return true;
}
int64_t as_int(const c10::IValue& v) { return v.isBool() ? v.toBool() : v.toInt(); }
double as_double(const c10::IValue& v) { return v.isDouble() ? v.toDouble() : static_cast<double>(as_int(v)); }
int64_t python_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

SymFn arithmetic(double (*f)(double, double), int64_t (*i)(int64_t, int64_t)) {
  return [f, i](const std::vector<c10::IValue>& a) {
    return all_ints(a) ? c10::IValue(i(as_int(a.at(0)), as_int(a.at(1))))
                       : c10::IValue(f(as_double(a.at(0)), as_double(a.at(1))));
  };
}

SymFn comparison(bool (*f)(double, double)) {
  return [f](const std::vector<c10::IValue>& a) { return c10::IValue(f(as_double(a.at(0)), as_double(a.at(1)))); };
}

}  // namespace

const std::map<std::string, SymFn>& sym_functions() {
  static const std::map<std::string, SymFn> fns = {
      {"_operator.add", arithmetic([](double a, double b) { return a + b; }, [](int64_t a, int64_t b) { return a + b; })},
      {"_operator.sub", arithmetic([](double a, double b) { return a - b; }, [](int64_t a, int64_t b) { return a - b; })},
      {"_operator.mul", arithmetic([](double a, double b) { return a * b; }, [](int64_t a, int64_t b) { return a * b; })},
      {"_operator.floordiv", arithmetic([](double a, double b) { return std::floor(a / b); }, floor_div)},
      {"_operator.mod", arithmetic([](double a, double b) { return a - std::floor(a / b) * b; }, python_mod)},
      {"_operator.truediv", [](const std::vector<c10::IValue>& a) { return c10::IValue(as_double(a.at(0)) / as_double(a.at(1))); }},
      {"_operator.pow", arithmetic([](double a, double b) { return std::pow(a, b); },
                                   [](int64_t a, int64_t b) { return static_cast<int64_t>(std::pow(a, b)); })},
      {"_operator.neg", [](const std::vector<c10::IValue>& a) { return a.at(0).isDouble() ? c10::IValue(-a[0].toDouble()) : c10::IValue(-as_int(a[0])); }},
      {"_operator.eq", comparison([](double a, double b) { return a == b; })},
      {"_operator.ne", comparison([](double a, double b) { return a != b; })},
      {"_operator.lt", comparison([](double a, double b) { return a < b; })},
      {"_operator.le", comparison([](double a, double b) { return a <= b; })},
      {"_operator.gt", comparison([](double a, double b) { return a > b; })},
      {"_operator.ge", comparison([](double a, double b) { return a >= b; })},
      {"_operator.and_", [](const std::vector<c10::IValue>& a) { return c10::IValue(as_int(a.at(0)) && as_int(a.at(1))); }},
      {"_operator.or_", [](const std::vector<c10::IValue>& a) { return c10::IValue(as_int(a.at(0)) || as_int(a.at(1))); }},
      {"_operator.not_", [](const std::vector<c10::IValue>& a) { return c10::IValue(!as_int(a.at(0))); }},
      {"torch.sym_not", [](const std::vector<c10::IValue>& a) { return c10::IValue(!as_int(a.at(0))); }},
      {"torch.sym_max", [](const std::vector<c10::IValue>& a) { return number(std::max(as_double(a.at(0)), as_double(a.at(1))), all_ints(a)); }},
      {"torch.sym_min", [](const std::vector<c10::IValue>& a) { return number(std::min(as_double(a.at(0)), as_double(a.at(1))), all_ints(a)); }},
      {"torch.sym_float", [](const std::vector<c10::IValue>& a) { return c10::IValue(as_double(a.at(0))); }},
      {"torch.sym_int", [](const std::vector<c10::IValue>& a) { return c10::IValue(static_cast<int64_t>(as_double(a.at(0)))); }},
      {"torch.sym_sqrt", [](const std::vector<c10::IValue>& a) { return c10::IValue(std::sqrt(as_double(a.at(0)))); }},
      {"torch._sym_sqrt", [](const std::vector<c10::IValue>& a) { return c10::IValue(std::sqrt(as_double(a.at(0)))); }},
      {"_operator.abs", [](const std::vector<c10::IValue>& a) { return a.at(0).isDouble() ? c10::IValue(std::fabs(a[0].toDouble())) : c10::IValue(std::abs(as_int(a[0]))); }},
      {"_operator.pos", [](const std::vector<c10::IValue>& a) { return a.at(0); }},
      {"torch.sym_ite", [](const std::vector<c10::IValue>& a) { return as_int(a.at(0)) ? a.at(1) : a.at(2); }},
      {"torch.sym_sum", [](const std::vector<c10::IValue>& a) {
         bool ints = true;
         double sum = 0;
         for (const c10::IValue& v : a.at(0).toListRef()) {
           ints = ints && !v.isDouble();
           sum += as_double(v);
         }
         return number(sum, ints);
       }},
      // An element of a list a node made (a list output the serializer kept whole).
      {"_operator.getitem", [](const std::vector<c10::IValue>& a) {
         const auto& list = a.at(0).isTuple() ? a[0].toTupleRef().elements().vec() : a.at(0).toListRef().vec();
         int64_t i = a.at(1).toInt();
         if (i < 0) i += static_cast<int64_t>(list.size());
         return list.at(static_cast<size_t>(i));
       }},
      {"math.ceil", [](const std::vector<c10::IValue>& a) { return c10::IValue(static_cast<int64_t>(std::ceil(as_double(a.at(0))))); }},
      {"math.floor", [](const std::vector<c10::IValue>& a) { return c10::IValue(static_cast<int64_t>(std::floor(as_double(a.at(0))))); }},
      {"math.trunc", [](const std::vector<c10::IValue>& a) { return c10::IValue(static_cast<int64_t>(std::trunc(as_double(a.at(0))))); }},
      // A tensor's size, stride, numel or storage offset: attribute reads in eager PyTorch.
      {"torch.ops.aten.sym_size.int", [](const std::vector<c10::IValue>& a) { return c10::IValue(a.at(0).toTensor().size(a.at(1).toInt())); }},
      {"torch.ops.aten.sym_stride.int", [](const std::vector<c10::IValue>& a) { return c10::IValue(a.at(0).toTensor().stride(a.at(1).toInt())); }},
      {"torch.ops.aten.sym_numel.default", [](const std::vector<c10::IValue>& a) { return c10::IValue(a.at(0).toTensor().numel()); }},
      {"torch.ops.aten.sym_storage_offset.default", [](const std::vector<c10::IValue>& a) { return c10::IValue(a.at(0).toTensor().storage_offset()); }},
  };
  return fns;
}

}  // namespace layoutprof
