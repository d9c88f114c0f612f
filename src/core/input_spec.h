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

// The spec as --input takes it, written from its fields: DIMxDIM...[:dtype][:format][:grad]
// (f32 and contiguous, the defaults, left out).
std::string input_spec_text(const InputSpec& spec);

// The input of a compare-formats variant (ProfileConfig::convert_to): "channels_last" makes
// 4-D inputs channels_last and 5-D ones channels_last_3d and keeps the others as given;
// "contiguous" makes every input contiguous; "" keeps it as given. A spec whose format
// changes gets its text rewritten (input_spec_text), so that the report names what ran.
InputSpec convert_input_spec(const InputSpec& spec, const std::string& to);

}  // namespace layoutprof
