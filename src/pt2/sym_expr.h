// The value of a size expression of a torch.export program for given values of its symbols.
// Export writes compound sizes as sympy's srepr: "Mul(Integer(2), Symbol('s77', positive=True,
// integer=True))", "Add(Symbol('s94', ...), Integer(1))". Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace layoutprof::pt2 {

// The integer value of `expr`, or none where it names a symbol `symbols` lacks, uses a
// function not known here (Integer, Rational, Symbol, Add, Mul, Pow, FloorDiv, Mod, Max, Min
// and sympy's named constants are), is not an integer, overflows, or is not well formed.
std::optional<int64_t> evaluate_size(const std::string& expr, const std::map<std::string, int64_t>& symbols);

// Python's a // b on ints (rounding toward minus infinity), as sizes are computed; throws
// std::domain_error when b is 0.
int64_t floor_div(int64_t a, int64_t b);

}  // namespace layoutprof::pt2
