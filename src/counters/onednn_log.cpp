#include "counters/onednn_log.h"

#include <cmath>
#include <cstdlib>

namespace layoutprof {

namespace {

constexpr std::string_view kMarkers[] = {"onednn_verbose,", "dnnl_verbose,"};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(sep, from);
    parts.push_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// oneDNN's data type names (dnnl_dt2str).
bool is_dtype(std::string_view s) {
  static constexpr std::string_view kTypes[] = {"f32", "f16", "bf16", "f64", "s32", "s8", "u8", "s4", "u4",
                                                "f8_e5m2", "f8_e4m3", "e8m0", "f4_e2m1", "f4_e3m0", "boolean",
                                                "undef"};
  for (std::string_view t : kTypes)
    if (s == t) return true;
  return false;
}

// The time field: a plain decimal number of milliseconds.
double parse_ms(std::string_view s) {
  if (s.empty()) return -1;
  const std::string text(s);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(v) && v >= 0 ? v : -1;
}

}  // namespace

size_t onednn_marker_at(std::string_view line) {
  for (std::string_view marker : kMarkers) {
    const size_t at = line.find(marker);
    if (at != std::string_view::npos) return at;
  }
  return std::string_view::npos;
}

std::optional<BackendArg> parse_onednn_arg(std::string_view token) {
  const std::vector<std::string_view> parts = split(token, ':');
  if (parts.size() < 4) return std::nullopt;
  BackendArg a;
  size_t next = 1;
  if (is_dtype(parts[1]) && !parts[0].empty()) {  // 3.x: src:f32:<flags>:blocked:abcd:<strides>:f0
    a.arg = std::string(parts[0]);
    a.dtype = std::string(parts[1]);
    next = 2;
  } else {  // 2.x: src_f32:<flags>:blocked:abcd:f0
    const size_t us = parts[0].rfind('_');
    if (us == std::string_view::npos || !is_dtype(parts[0].substr(us + 1))) return std::nullopt;
    a.arg = std::string(parts[0].substr(0, us));
    a.dtype = std::string(parts[0].substr(us + 1));
  }
  // Past the padding flags: the format kind (blocked, any, undef, ...) and, for blocked, its tag.
  for (size_t i = next; i + 1 < parts.size(); ++i) {
    if (parts[i] == "blocked" || parts[i] == "any" || parts[i] == "undef" || parts[i] == "sparse" ||
        parts[i] == "opaque" || parts[i] == "wino" || parts[i] == "rnn_packed") {
      a.format = parts[i] == "blocked" ? std::string(parts[i + 1]) : std::string(parts[i]);
      return a;
    }
  }
  return std::nullopt;
}

std::optional<BackendPrimitive> parse_onednn_exec(std::string_view line, bool* understood) {
  if (understood) *understood = false;
  line = trimmed(line);
  const size_t at = onednn_marker_at(line);
  if (at != 0) return std::nullopt;
  const std::vector<std::string_view> f = split(line, ',');
  size_t e = 1;
  while (e < f.size() && e < 6 && f[e] != "exec") ++e;
  if (e >= f.size() || f[e] != "exec") {
    if (understood) *understood = true;  // info, create, a header: not an execution
    return std::nullopt;
  }
  // exec, engine, primitive, implementation, propagation, memory descriptors, ..., problem, time
  if (f.size() < e + 8) return std::nullopt;
  BackendPrimitive p;
  p.kind = std::string(f[e + 2]);
  p.impl = std::string(f[e + 3]);
  p.prop = std::string(f[e + 4]);
  for (std::string_view token : split(f[e + 5], ' ')) {
    if (token.empty()) continue;
    std::optional<BackendArg> arg = parse_onednn_arg(token);
    if (!arg) return std::nullopt;
    p.args.push_back(std::move(*arg));
  }
  p.problem = std::string(f[f.size() - 2]);
  p.ms = parse_ms(f.back());
  if (p.kind.empty() || p.args.empty()) return std::nullopt;
  if (understood) *understood = true;
  return p;
}

std::string onednn_version(std::string_view line) {
  line = trimmed(line);
  if (onednn_marker_at(line) != 0) return "";
  for (std::string_view name : {std::string_view("oneDNN v"), std::string_view("DNNL v")}) {
    const size_t at = line.find(name);
    if (at != std::string_view::npos && line.find(",info,") != std::string_view::npos) return std::string(line.substr(at));
  }
  return "";
}

void LogSplitter::feed(std::string_view bytes, std::vector<std::string>& lines) {
  pending_.append(bytes.data(), bytes.size());
  size_t from = 0;
  while (true) {
    const size_t nl = pending_.find('\n', from);
    if (nl == std::string::npos) break;
    const std::string_view line(pending_.data() + from, nl + 1 - from);
    const size_t at = onednn_marker_at(line);
    if (at == std::string_view::npos) {
      user_.append(line);
    } else {
      user_.append(line.substr(0, at));
      lines.emplace_back(line.substr(at, line.size() - at - 1));
    }
    from = nl + 1;
  }
  pending_.erase(0, from);
}

void LogSplitter::finish() {
  user_ += pending_;
  pending_.clear();
}

}  // namespace layoutprof
