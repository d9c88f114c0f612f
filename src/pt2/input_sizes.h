// The sizes a program accepts for its user inputs: each dimension of a user input's
// placeholder is a constant (static: the input must have exactly it) or a symbol of the
// export's dynamic shapes (bound from the first input that has it, equal wherever else it
// appears, within its range_constraints). Torch-free: the runner hands the inputs' sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pt2/program.h"

namespace layoutprof::pt2 {

// The symbol a size expression names where it is one symbol alone, as export writes it
// ("s77", "Symbol('s77', positive=True, integer=True)"); "" for a compound expression.
std::string single_symbol(const std::string& expr);

// Throws SettingError (the input setting: exit 2) in one line naming the input, the dimension,
// its size and what the program was exported for. `sizes[i]` are user input i's sizes (an
// input that is no tensor: empty and `tensor[i]` false).
void check_input_sizes(const Program& program, const std::vector<std::vector<int64_t>>& sizes,
                       const std::vector<bool>& tensor);

}  // namespace layoutprof::pt2
