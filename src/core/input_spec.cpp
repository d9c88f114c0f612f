#include "core/input_spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

#include "support/errors.h"
#include "support/setting_error.h"

namespace layoutprof {

std::string first_line(const std::string& message) {
  auto end = message.find('\n');
  std::string line = message.substr(0, end);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return bounded(line, 400);
}

std::string bounded(const std::string& text, size_t most) {
  size_t cut = std::min(most, text.size());
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;  // not inside a UTF-8 sequence
  std::string out = text.substr(0, cut);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // one line, nothing a terminal obeys
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

namespace {

const std::map<std::string, int>& dtype_sizes() {
  static const std::map<std::string, int> sizes = {
      {"f32", 4}, {"f64", 8}, {"f16", 2}, {"bf16", 2}, {"i64", 8},
      {"i32", 4}, {"i8", 1},  {"u8", 1},  {"bool", 1},
  };
  return sizes;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string item;
  std::stringstream stream(text);
  while (std::getline(stream, item, sep)) parts.push_back(item);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

[[noreturn]] void fail(const std::string& text, const std::string& why) {
  throw SettingError(Setting::input, " '" + bounded(text) + "': " + why);
}

int64_t parse_positive(const std::string& text, const std::string& item, const char* what) {
  if (item.empty() || !std::all_of(item.begin(), item.end(), ::isdigit))
    fail(text, "'" + bounded(item) + "' is not a " + what);
  errno = 0;
  long long v = std::strtoll(item.c_str(), nullptr, 10);
  if (errno == ERANGE || v > (1LL << 40)) fail(text, "'" + bounded(item) + "' is too large");
  return v;
}

std::vector<int> parse_perm(const std::string& text, const std::string& list, size_t rank) {
  std::vector<int> perm;
  for (const auto& item : split(list, ','))
    perm.push_back(static_cast<int>(parse_positive(text, item, "dim index")));
  if (perm.size() != rank)
    fail(text, "perm= lists " + std::to_string(perm.size()) + " dims for a " +
                   std::to_string(rank) + "-D shape");
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int>(i))
      fail(text, "perm= must list each dim 0.." + std::to_string(rank - 1) + " once");
  return perm;
}

}  // namespace

int64_t input_bytes(const InputSpec& spec) {
  int64_t bytes = dtype_size(spec.dtype);
  for (int64_t d : spec.sizes)
    if (__builtin_mul_overflow(bytes, d, &bytes)) return -1;
  return bytes;
}

int dtype_size(const std::string& dtype) {
  auto it = dtype_sizes().find(dtype);
  return it == dtype_sizes().end() ? 0 : it->second;
}

bool is_floating_dtype(const std::string& dtype) {
  return dtype == "f32" || dtype == "f64" || dtype == "f16" || dtype == "bf16";
}

InputSpec parse_input_spec(const std::string& text) {
  InputSpec spec;
  spec.text = text;
  auto fields = split(text, ':');
  if (fields.empty() || fields[0].empty()) fail(text, "expected DIMxDIM...[:dtype][:format][:grad]");
  // A trailing ":grad": the input requires grad (training steps, --backward).
  if (fields.size() > 1 && fields.back() == "grad") {
    spec.requires_grad = true;
    fields.pop_back();
  }
  if (fields.size() > 3) fail(text, "too many ':' fields (expected shape[:dtype][:format][:grad])");

  for (const auto& item : split(fields[0], 'x')) {
    spec.sizes.push_back(parse_positive(text, item, "dimension"));
    if (spec.sizes.size() > kMaxInputDims) fail(text, "more than " + std::to_string(kMaxInputDims) + " dimensions");
  }

  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (dtype_size(f) > 0 && i == 1) {
      spec.dtype = f;
    } else if (f == "contiguous" || f == "channels_last" || f == "channels_last_3d") {
      spec.format = f;
    } else if (f.rfind("perm=", 0) == 0) {
      spec.format = "perm";
      spec.perm = parse_perm(text, f.substr(5), spec.sizes.size());
    } else if (i == 1) {
      fail(text, "unknown dtype or format '" + bounded(f) +
                     "' (dtypes: f32 f64 f16 bf16 i64 i32 i8 u8 bool; formats: contiguous "
                     "channels_last channels_last_3d perm=...)");
    } else {
      fail(text, "unknown format '" + bounded(f) + "' (contiguous, channels_last, channels_last_3d, perm=...)");
    }
  }
  if (spec.format == "channels_last" && spec.sizes.size() != 4)
    fail(text, "channels_last needs a 4-D shape");
  if (spec.format == "channels_last_3d" && spec.sizes.size() != 5)
    fail(text, "channels_last_3d needs a 5-D shape");
  if (spec.requires_grad && !is_floating_dtype(spec.dtype))
    fail(text, ":grad needs a floating-point dtype (f32, f64, f16, bf16), not " + spec.dtype);
  if (input_bytes(spec) < 0) fail(text, "its tensor would take more than 2^63 bytes");
  return spec;
}

std::string input_spec_text(const InputSpec& spec) {
  std::string text;
  // Appended piece by piece: GCC 12's -Wrestrict misreads `"x" + std::to_string(...)` at -O2.
  for (size_t d = 0; d < spec.sizes.size(); ++d) {
    if (d) text += 'x';
    text += std::to_string(spec.sizes[d]);
  }
  if (spec.dtype != "f32") text += ":" + spec.dtype;
  if (spec.format == "perm") {
    text += ":perm=";
    for (size_t d = 0; d < spec.perm.size(); ++d) {
      if (d) text += ',';
      text += std::to_string(spec.perm[d]);
    }
  } else if (spec.format != "contiguous") {
    text += ":" + spec.format;
  }
  if (spec.requires_grad) text += ":grad";
  return text;
}

InputSpec convert_input_spec(const InputSpec& spec, const std::string& to) {
  if (to.empty()) return spec;
  if (to != "channels_last" && to != "contiguous")
    throw std::invalid_argument("convert_input_spec: no memory format '" + to + "'");
  std::string format = "contiguous";
  if (to == "channels_last")
    format = spec.sizes.size() == 4 ? "channels_last" : spec.sizes.size() == 5 ? "channels_last_3d" : spec.format;
  if (format == spec.format) return spec;
  InputSpec out = spec;
  out.format = format;
  out.perm.clear();
  out.text = input_spec_text(out);
  return out;
}

}  // namespace layoutprof
