// --input DIMxDIMx...[:dtype][:format]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layoutprof {

struct InputSpec {
  std::string text;  // as the user wrote it
  std::vector<int64_t> sizes;
  std::string dtype = "f32";
  std::string format = "contiguous";  // contiguous | channels_last | channels_last_3d | perm
  std::vector<int> perm;              // physical dim order when format == "perm"
  bool requires_grad = false;         // ":grad": a training step (--backward) differentiates it too
};

// Throws UsageError naming the argument and the reason.
InputSpec parse_input_spec(const std::string& text);

constexpr size_t kMaxInputDims = 64;

// Bytes of the input's tensor (its elements times their size); -1 past int64.
int64_t input_bytes(const InputSpec& spec);

// Element size in bytes of a dtype name accepted by --input; 0 for unknown names.
int dtype_size(const std::string& dtype);
bool is_floating_dtype(const std::string& dtype);

}  // namespace layoutprof
