#include "pt2/input_sizes.h"

#include <cctype>
#include <map>

#include "pt2/sym_expr.h"
#include "support/errors.h"
#include "support/setting_error.h"

namespace layoutprof::pt2 {

namespace {

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

struct Bound {
  int64_t value;
  std::string where;  // "input 0 (x) dimension 0"
};

// A dimension whose size is an expression of symbols ("2*s77"), checked once every dimension
// that is one symbol alone has bound its symbol.
struct Compound {
  std::string expr;
  int64_t got;
  std::string where;
};

struct Bindings {
  std::map<std::string, Bound> bound;
  std::vector<Compound> compound;
};

std::string range_text(const RangeConstraint& r) {
  return (r.min ? std::to_string(*r.min) : std::string("-inf")) + " to " +
         (r.max ? std::to_string(*r.max) : std::string("inf"));
}

[[noreturn]] void refuse(const std::string& what) { throw SettingError(Setting::input, ": " + what); }

// One dimension of one input against its placeholder's size.
void check_dimension(const Program& program, const SymIntValue& want, int64_t got, const std::string& where,
                     Bindings& bindings) {
  if (want.value) {
    if (*want.value != got)
      refuse(where + " is " + std::to_string(got) + "; the program was exported for " + std::to_string(*want.value) +
             " (a static dimension)");
    return;
  }
  const std::string symbol = single_symbol(want.expr);
  if (symbol.empty()) {
    bindings.compound.push_back({want.expr, got, where});
    return;
  }
  auto range = program.range_constraints.find(symbol);
  if (range != program.range_constraints.end() &&
      ((range->second.min && got < *range->second.min) || (range->second.max && got > *range->second.max)))
    refuse(where + " is " + std::to_string(got) + "; the program was exported for " + range_text(range->second) +
           " (dynamic dimension " + bounded(symbol) + ")");
  auto [first, fresh] = bindings.bound.emplace(symbol, Bound{got, where});
  if (!fresh && first->second.value != got)
    refuse(where + " is " + std::to_string(got) + " but " + first->second.where + " is " +
           std::to_string(first->second.value) + "; the program has them equal (" + bounded(symbol) + ")");
}

// A compound size whose symbols are all bound must have its value; one with a symbol no
// dimension binds alone is left to the ops, which check what they need.
void check_compound(const Compound& c, const std::map<std::string, Bound>& bound) {
  std::map<std::string, int64_t> values;
  for (const auto& [symbol, b] : bound) values[symbol] = b.value;
  const std::optional<int64_t> want = evaluate_size(c.expr, values);
  if (want && *want != c.got)
    refuse(c.where + " is " + std::to_string(c.got) + "; the program has it " + std::to_string(*want) +
           " (a size derived from dynamic dimensions the other inputs give)");
}

}  // namespace

std::string single_symbol(const std::string& expr) {
  const std::string prefix = "Symbol('";
  if (expr.rfind(prefix, 0) == 0) {
    auto end = expr.find('\'', prefix.size());
    if (end == std::string::npos || expr.back() != ')') return "";
    const std::string name = expr.substr(prefix.size(), end - prefix.size());
    return identifier(name) ? name : "";
  }
  return identifier(expr) ? expr : "";
}

void check_input_sizes(const Program& program, const std::vector<std::vector<int64_t>>& sizes,
                       const std::vector<bool>& tensor) {
  Bindings bindings;
  size_t user = 0;
  for (const InputSpec& spec : program.input_specs) {
    if (spec.kind != InputKind::UserInput) continue;
    const size_t i = user++;
    if (i >= sizes.size() || spec.arg.kind != ArgKind::Tensor || spec.arg.names.empty()) continue;
    const std::string name = spec.arg.names[0];
    const std::string where = "input " + std::to_string(i) + " (" + bounded(name) + ")";
    if (!tensor[i]) refuse(where + " is not a tensor; the program takes one");
    auto meta = program.graph.tensor_values.find(name);
    if (meta == program.graph.tensor_values.end()) continue;
    const std::vector<SymIntValue>& want = meta->second.sizes;
    if (want.size() != sizes[i].size())
      refuse(where + " has " + std::to_string(sizes[i].size()) + " dimensions; the program was exported for " +
             std::to_string(want.size()));
    for (size_t d = 0; d < want.size(); ++d)
      check_dimension(program, want[d], sizes[i][d], where + " dimension " + std::to_string(d), bindings);
  }
  for (const Compound& c : bindings.compound) check_compound(c, bindings.bound);
}

}  // namespace layoutprof::pt2
